#!/usr/bin/env bash
# An ARM Debian 12 (bookworm) root built from Debian's archive, run through qemu-user and binfmt_misc.
# Usage: tests/arm/root.sh ARCH        ARCH: arm64 or armhf; prints the root's folder on stdout.
#        tests/arm/root.sh --binfmt    only make sure binfmt_misc runs ARM programs (both ARCHs)
# The root lives in WB_ARM_CACHE (default /var/cache/wulfbench/arm) in a folder named after the
# architecture and a hash of packages.txt, so a machine that built it once reuses it; a half-built
# root is never used (it is renamed into place only when complete). Needs root, qemu-user-static,
# binfmt-support and mmdebstrap (jobs/install-deps.sh arm). Any failure is one line on stderr, exit 1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=tests/arm/root.sh
die() { echo "$name: $*" >&2; exit 1; }
suite=bookworm

binfmt() {
    local f=/proc/sys/fs/binfmt_misc
    if [ ! -e $f/register ]; then
        mount -t binfmt_misc binfmt_misc $f 2>/dev/null ||
            die "binfmt_misc is not mounted at $f and mounting it failed (a container without the privilege?); ARM programs cannot run here"
    fi
    local a q
    for a in aarch64 arm; do
        q=/usr/libexec/qemu-binfmt/$a-binfmt-P
        [ -e $f/qemu-$a ] && continue
        command -v update-binfmts >/dev/null && update-binfmts --enable qemu-$a >/dev/null 2>&1 || true
        [ -e $f/qemu-$a ] && continue
        die "binfmt_misc has no qemu-$a entry and update-binfmts could not add one; install qemu-user-static and binfmt-support (jobs/install-deps.sh arm)"
    done
    grep -q '^enabled' $f/status || die "binfmt_misc is disabled ($f/status); echo 1 > $f/status"
}

[ "$(id -u)" -eq 0 ] || die "needs root (chroot, mounts, binfmt_misc); run it with sudo"
case ${1:-} in
    --binfmt) binfmt; exit 0 ;;
    arm64 | armhf) arch=$1 ;;
    *) echo "usage: $name arm64|armhf|--binfmt" >&2; exit 2 ;;
esac
binfmt
for t in mmdebstrap qemu-aarch64-static qemu-arm-static; do
    command -v $t >/dev/null || die "$t is missing; run: bash jobs/install-deps.sh arm"
done

cache=${WB_ARM_CACHE:-/var/cache/wulfbench/arm}
# Lines for every root, and those marked "$arch:" without the mark.
pkgs=$(sed -e 's/#.*//' "$here/packages.txt" | sed -n -e "s/^$arch://p" -e '/^[a-z0-9]*:/d' -e 'p' |
       tr -s ' \n' '\n' | sed '/^$/d' | sort -u)
key=$(printf '%s\n%s\n%s\n' "$suite" "$arch" "$pkgs" | sha256sum | cut -c1-12)
root=$cache/$suite-$arch-$key
if [ -f "$root/.wb-root-complete" ]; then echo "$root"; exit 0; fi

mkdir -p "$cache"
# The host's own Debian sources when it is bookworm (its mirror, proxy and snapshot), else the archive.
srcs=()
if [ -f /etc/apt/sources.list.d/debian.sources ] && grep -q "Suites:.*\b$suite\b" /etc/apt/sources.list.d/debian.sources; then
    srcs=(/etc/apt/sources.list.d/debian.sources)
else
    srcs=("deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian $suite-updates main"
          "deb http://deb.debian.org/debian-security $suite-security main")
fi
# drop_pocket SUITE: the sources (srcs) without SUITE. A deb822 file is rewritten beside the root:
# SUITE leaves each Suites: line and a stanza left with none goes; one-line entries of SUITE go.
drop_pocket() {
    # apt reads a deb822 file only by its name (NAME.sources), so it has a folder of its own.
    local drop=$1 out=$cache/.sources-$arch-$key.$$/$suite.sources src kept=()
    mkdir -p "${out%/*}"
    for src in "${srcs[@]}"; do
        if [ -f "$src" ]; then
            awk -v drop="$drop" 'BEGIN { RS = ""; ORS = "" } {
                n = split($0, l, "\n"); out = ""; keep = 1
                for (i = 1; i <= n; i++) {
                    if (l[i] ~ /^Suites:/) {
                        m = split(substr(l[i], 8), w, " "); s = ""
                        for (j = 1; j <= m; j++) if (w[j] != drop) s = s " " w[j]
                        if (s == "") keep = 0
                        l[i] = "Suites:" s
                    }
                    out = out l[i] "\n"
                }
                if (keep) print out "\n" }' "$src" >"$out.new"
            mv "$out.new" "$out"
            kept+=("$out")
        else
            read -r -a w <<<"$src"
            [ "${w[2]:-}" = "$drop" ] || kept+=("$src")
        fi
    done
    srcs=("${kept[@]}")
}
tmp=$cache/.building-$arch-$key.$$
log=$cache/$suite-$arch-$key.log
rm -rf "$cache"/.building-"$arch"-"$key".* "$cache"/.sources-"$arch"-"$key".*
trap 'rm -rf "$cache"/.sources-"$arch"-"$key".$$' EXIT
# A failure to reach the archive (a timeout, a mirror mid-sync) is tried again, up to 3 times a minute
# apart; apt itself retries each download 5 times. Any other failure ends at once.
net='could not resolve|failed to fetch|temporary failure|unable to connect|connection (refused|timed out|failed)|hash sum mismatch|mirror sync in progress|503 +service unavailable'
attempt=1
while :; do
    echo "$name: building the $arch root in $root (about 4 minutes; log: $log)" >&2
    if mmdebstrap --mode=root --variant=apt --architectures="$arch" --include="$(echo $pkgs | tr ' ' ,)" \
            --aptopt='APT::Install-Recommends "false"' --aptopt='Acquire::Retries "5"' --dpkgopt=force-unsafe-io \
            --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
            --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
            "$suite" "$tmp" "${srcs[@]}" </dev/null >"$log" 2>&1; then
        break
    fi
    rm -rf "$tmp"
    # An index of a pocket (updates, security) that does not match its Release file will not match on
    # the next try either (a stale mirror or proxy: seen for bookworm-security's armhf index): the
    # root is built without that pocket. Its base suite is never dropped.
    bad=$(grep -iE "^E: Failed to fetch .*(unexpected size|hash sum mismatch)" "$log" |
          sed -n 's|.*/dists/\([^/]*\)/.*|\1|p' | sort -u | grep -vx "$suite" || true)
    if [ -n "$bad" ]; then
        for p in $bad; do
            echo "$name: $p's $arch index on this mirror does not match its Release file (stale or mid-sync); building the root without $p" >&2
            drop_pocket "$p"
        done
    elif ! grep -qiE "$net" "$log"; then
        die "mmdebstrap failed to build the $arch root: $(grep -E '^(E|W):|error' "$log" | tail -1) (see $log)"
    elif [ $attempt -ge 3 ]; then
        die "Debian's archive could not be reached to build the $arch root after 3 attempts: $(grep -iE "$net" "$log" | tail -1) (see $log)"
    else
        echo "$name: the archive failed in attempt $attempt ($(grep -iE "$net" "$log" | tail -1 | cut -c1-160)); again in 60 s" >&2
        sleep 60
    fi
    cp "$log" "$log.$attempt"
    attempt=$((attempt + 1))
done
printf '%s\n' "$pkgs" >"$tmp/.wb-root-packages"
touch "$tmp/.wb-root-complete"
rm -rf "$root"
mv "$tmp" "$root"
echo "$root"
