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
    said=""
    while read -r kind what old; do
        case $kind in
        governor) echo "$old" >"$what" 2>/dev/null && said="$said ${what#/sys/devices/system/cpu/}=$old" ;;
        wifi) ip link set "$what" up 2>/dev/null && said="$said $what up" ;;
        rfkill) rfkill unblock wifi 2>/dev/null && said="$said wifi unblocked" ;;
        esac
    done <"$undo"
    rm -f "$undo"
    echo "changed: put back:${said:- (nothing could be put back)}" ;;
firewall) # ADDRESS...
    c=0
    if command -v ufw >/dev/null && ufw status 2>/dev/null | grep -q '^Status: active'; then
        for a in "$@"; do
            ufw status | grep -q "ALLOW.*$a\( \|$\)" || { ufw allow from "$a" >/dev/null; c=$((c + 1)); }
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
    else
        echo "no firewall active: nothing to open"
    fi ;;
*) echo "node.sh: unknown step '$step'" >&2; exit 2 ;;
esac
