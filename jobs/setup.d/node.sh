#!/bin/sh
# The steps of jobs/setup that are shell on the node (Ansible's script module
# runs it there as root): node.sh STEP ARGS. Prints one line; a line starting
# 'changed:' tells the playbook it changed something; exit 1 with a line
# that names the fix when the step cannot be done.
# What --governor and --no-wifi change is recorded in $undo for --undo.
set -eu
undo=/var/lib/wulfbench/setup.undo
step=$1
shift

# in_net ADDRESS NET[/LEN]: whether the IPv4 ADDRESS lies in NET ('Anywhere' and 0.0.0.0/0 hold every one).
in_net() {
    [ "$2" = Anywhere ] && return 0
    awk -v a="$1" -v n="$2" 'function quad(x, p) { return split(x, p, ".") == 4 && x ~ /^[0-9.]+$/ }
        function v(x, p) { split(x, p, "."); return ((p[1] * 256 + p[2]) * 256 + p[3]) * 256 + p[4] }
        BEGIN { len = 32; k = index(n, "/"); if (k) { len = substr(n, k + 1) + 0; n = substr(n, 1, k - 1) }
                if (!quad(a) || !quad(n) || len < 0 || len > 32) exit 1
                m = 2 ^ (32 - len); exit !(int(v(a) / m) == int(v(n) / m)) }'
}

# ufw_allows ADDRESS: an active ufw rule lets ADDRESS reach every port (a rule for one port does not:
# Open MPI picks its ports at random), from the address itself or a subnet holding it.
ufw_allows() {
    for from in $(ufw status 2>/dev/null | awk '/^Anywhere +ALLOW( IN)? +/ && !/\(v6\)/ { print $NF }'); do
        in_net "$1" "$from" && return 0
    done
    return 1
}

# iptables_dropping: the iptables (legacy or nft back end) whose INPUT chain drops what no rule accepts.
iptables_dropping() {
    for t in iptables-legacy iptables-nft iptables; do
        command -v "$t" >/dev/null || continue
        "$t" -S INPUT 2>/dev/null | grep -qE '^-P INPUT DROP|^-A INPUT -j (DROP|REJECT)' && { echo "$t"; return 0; }
    done
    return 1
}

# ipt_accepts IPTABLES ADDRESS: an ACCEPT rule for ADDRESS (or its subnet), on any port, before a catch-all drop.
ipt_accepts() {
    for net in $("$1" -S INPUT 2>/dev/null | awk '/^-A INPUT -j (DROP|REJECT)/ { exit }
        /^-A INPUT -s [0-9.\/]+ -j ACCEPT$/ { print $4 }'); do
        in_net "$2" "$net" && return 0
    done
    return 1
}

case $step in
hosts) # NAME=ADDRESS... (=ADDRESS: a node whose name is not known now; its line in the block stays)
    # The nodes in a block of their own; other lines that give a node's name
    # another address (Debian's '127.0.1.1 NAME' among them) go. Written in
    # place (/etc/hosts may be a bind mount), and only when it differs.
    begin="# BEGIN wulfbench nodes (jobs/setup)" end="# END wulfbench nodes (jobs/setup)"
    gonef=$(mktemp)
    new=$(awk -v begin="$begin" -v end="$end" -v nodes="$*" '
        BEGIN {
            n = split(nodes, kv, " ")
            for (i = 1; i <= n; i++) {
                split(kv[i], p, "=")
                order[i] = p[1] == "" ? "@" p[2] : p[1]
                if (p[1] == "") keep[p[2]] = 1; else addr[p[1]] = p[2]
            }
        }
        $0 == begin { skip = 1; next }
        $0 == end { skip = 0; next }
        skip { if ($1 in keep) kept["@" $1] = $0; next }
        /^[ \t]*#/ || NF < 2 { print; next }
        { for (f = 2; f <= NF; f++) if (($f in addr) && addr[$f] != $1) { gone++; next } print }
        END {
            print begin
            for (i = 1; i <= n; i++)
                if (order[i] in addr) print addr[order[i]] " " order[i]
                else if (order[i] in kept) print kept[order[i]]
            print end
            print gone + 0 > "/dev/stderr"
        }' /etc/hosts 2>"$gonef")
    gone=$(cat "$gonef")
    rm -f "$gonef"
    if [ "$new" = "$(cat /etc/hosts)" ]; then
        echo "already lists the nodes ($(grep -A"$#" -xF "$begin" /etc/hosts | awk 'NR > 1 && $0 !~ /^#/ {printf "%s%s", s, $2; s = ", "}'))"
    else
        printf '%s\n' "$new" >/etc/hosts
        echo "changed: wrote the nodes ($(printf '%s\n' "$new" | grep -A"$#" -xF "$begin" | awk 'NR > 1 && $0 !~ /^#/ {printf "%s%s", s, $2; s = ", "}'))$([ "$gone" = 0 ] || echo "; removed $gone line(s) that gave a node another address")"
    fi ;;
deps) # REPO
    out=$(bash "$1/jobs/install-deps.sh" build 2>&1) || { echo "$out" | tail -1; exit 1; }
    if echo "$out" | grep -q 'installing'; then
        echo "changed: $(echo "$out" | grep -m1 'installing')"
    else
        echo "install-deps: every package of its build group already installed"
    fi
    echo "mpi-version: $(ompi_info --version 2>/dev/null | sed -n 's/^Open MPI v//p' | grep . || echo none)" ;;
build) # REPO BIN VERSION REV: the binary made here from the sources unpacked (jobs/setup --build),
    # with the head's version and git revision (no .git here), so that 'wulfbench check' finds one build
    out=$(make -C "$1" VERSION="$3" GIT_REV="$4" "${2#"$1"/}" 2>&1) || {
        echo "make failed on $(uname -m): $(echo "$out" | tail -1); run 'make -C $1' there to see why"
        exit 1
    }
    case $out in
    *"is up to date"*) echo "already built $2 here ($(uname -m)) from the head's sources" ;;
    *) echo "changed: built $2 here ($(uname -m)) from the head's sources" ;;
    esac ;;
governor) # GOV
    gov=$1 n=0 c=0
    for g in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do
        [ -f "$g" ] || continue
        n=$((n + 1))
        cur=$(cat "$g")
        [ "$cur" != "$gov" ] || continue
        grep -qs "^governor $g " "$undo" || { mkdir -p "${undo%/*}"; echo "governor $g $cur" >>"$undo"; }
        echo "$gov" >"$g" 2>/dev/null || { echo "cannot set $g to $gov (available: $(cat "${g%/*}/scaling_available_governors" 2>/dev/null))"; exit 1; }
        c=$((c + 1))
    done
    if [ $n = 0 ]; then echo "no cpufreq here: no governor to set"
    elif [ $c = 0 ]; then echo "already $gov on $n CPU(s)"
    else echo "changed: $gov on $c of $n CPU(s); the old one recorded for --undo (until the next reboot)"; fi ;;
wifi)
    c=0 n=0
    for w in /sys/class/net/*/wireless; do
        [ -d "$w" ] || continue
        i=${w%/wireless}
        i=${i##*/}
        n=$((n + 1))
        if ip -o link show "$i" | grep -q '[<,]UP[,>]'; then
            grep -qs "^wifi $i " "$undo" || { mkdir -p "${undo%/*}"; echo "wifi $i up" >>"$undo"; }
            ip link set "$i" down
            c=$((c + 1))
        fi
    done
    if command -v rfkill >/dev/null && rfkill list wifi 2>/dev/null | grep -q 'Soft blocked: no'; then
        grep -qs '^rfkill wifi ' "$undo" || { mkdir -p "${undo%/*}"; echo "rfkill wifi unblocked" >>"$undo"; }
        rfkill block wifi
        c=$((c + 1))
    fi
    if [ $n = 0 ] && [ $c = 0 ]; then echo "no Wi-Fi interface here"
    elif [ $c = 0 ]; then echo "Wi-Fi already down"
    else echo "changed: Wi-Fi down and blocked; recorded for --undo"; fi ;;
undo)
    [ -s "$undo" ] || { echo "nothing recorded: nothing to undo"; exit 0; }
    # A change that cannot be put back stays in the record, named, so that a second --undo can finish.
    said="" failed="" left=$(mktemp)
    while read -r kind what old; do
        case $kind in
        governor) { echo "$old" >"$what"; } 2>/dev/null && ok=1 || ok=0; item="${what#/sys/devices/system/cpu/}=$old" ;;
        wifi) ip link set "$what" up 2>/dev/null && ok=1 || ok=0; item="$what up" ;;
        rfkill) rfkill unblock wifi 2>/dev/null && ok=1 || ok=0; item="wifi unblocked" ;;
        *) ok=0; item="an unknown record '$kind $what $old'" ;;
        esac
        if [ $ok = 1 ]; then said="$said $item"; else failed="$failed $item"; echo "$kind $what $old" >>"$left"; fi
    done <"$undo"
    if [ -n "$failed" ]; then
        cat "$left" >"$undo"
        rm -f "$left"
        echo "could not put back:$failed (kept in $undo; run --undo again once that can be written)${said:+; put back:$said}"
        exit 1
    fi
    rm -f "$undo" "$left"
    echo "changed: put back:$said" ;;
firewall) # ADDRESS...
    c=0 missing=""
    if command -v ufw >/dev/null && ufw status 2>/dev/null | grep -q '^Status: active'; then
        if ufw status verbose 2>/dev/null | grep -q 'Default: allow (incoming)'; then
            echo "ufw active, incoming allowed by default: nothing to open"; exit 0
        fi
        for a in "$@"; do
            ufw_allows "$a" || { ufw allow from "$a" >/dev/null; c=$((c + 1)); }
        done
        [ $c = 0 ] && echo "ufw active: every node already allowed" || echo "changed: ufw: allowed $c node address(es)"
    elif command -v firewall-cmd >/dev/null && firewall-cmd --state >/dev/null 2>&1; then
        for a in "$@"; do
            firewall-cmd --zone=trusted --query-source="$a" >/dev/null 2>&1 || {
                firewall-cmd -q --permanent --zone=trusted --add-source="$a"
                firewall-cmd -q --zone=trusted --add-source="$a"
                c=$((c + 1))
            }
        done
        [ $c = 0 ] && echo "firewalld active: every node already trusted" || echo "changed: firewalld: $c node address(es) in the trusted zone"
    elif command -v nft >/dev/null && nft list ruleset 2>/dev/null | grep -q 'hook input.*policy drop'; then
        echo "an nftables input chain drops by default; allow the nodes, e.g.: nft insert rule inet filter input ip saddr { $(echo "$@" | sed 's/ /, /g') } accept"
        exit 1
    elif ipt=$(iptables_dropping); then
        for a in "$@"; do ipt_accepts "$ipt" "$a" || missing="$missing $a"; done
        [ -z "$missing" ] && { echo "$ipt: the INPUT chain drops by default and accepts every node already"; exit 0; }
        echo "$ipt: the INPUT chain drops by default; allow the nodes, e.g.:$(for a in $missing; do printf ' %s -I INPUT -s %s -j ACCEPT;' "$ipt" "$a"; done) (and save them where this system restores its rules)"
        exit 1
    else
        echo "no firewall active: nothing to open"
    fi ;;
*) echo "node.sh: unknown step '$step'" >&2; exit 2 ;;
esac
