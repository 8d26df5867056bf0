#!/bin/sh
# unpack.sh, run by site.yml with WB_REPO, WB_BIN and WB_MODE: jobs/setup's
# bundle (copy: the binary and jobs/; build: the sources and jobs/; WB_SUM its
# sha1), copied by Ansible to the node, unpacked into WB_REPO when it differs from the one
# unpacked last (or the binary is gone), then, with build, the binary made;
# with nfs, the binary looked for on the share. Prints one line ('changed:'
# first when it changed something); exit 1 with the fix when it cannot.
set -eu
repo=$WB_REPO bin=$WB_BIN mode=$WB_MODE
if [ "$mode" = nfs ]; then
    [ -x "$bin" ] || { echo "no $bin here: is the NFS share of $repo mounted at $repo? (mount HEAD:$repo $repo)"; exit 1; }
    echo "$bin found on the NFS share"
    exit 0
fi
b=/var/lib/wulfbench-setup-bundle.tar
mark=/var/lib/wulfbench/setup-bundle.sha1
sum=$(sha1sum "$b" 2>/dev/null | cut -d' ' -f1)
# Not this bundle here yet: site.yml copies it and runs this again.
[ "$sum" = "$WB_SUM" ] || { echo "no bundle $WB_SUM here yet"; exit 0; }
new=0
if [ "$(cat "$mark" 2>/dev/null)" != "$sum" ] || { [ "$mode" = copy ] && [ ! -x "$bin" ]; }; then
    mkdir -p "$repo" "${mark%/*}"
    tar -xmf "$b" -C "$repo"
    echo "$sum" >"$mark"
    new=1
fi
if [ "$mode" = build ]; then
    out=$(make -C "$repo" "${bin#"$repo"/}" 2>&1) || {
        echo "make failed on $(uname -m): $(echo "$out" | tail -1); run 'make -C $repo' there to see why"
        exit 1
    }
    case $out in
    *"is up to date"*) [ $new = 1 ] && echo "changed: new sources and jobs/; $bin already built here" || echo "already built $bin here from the head's sources" ;;
    *) echo "changed: built $bin here ($(uname -m)) from the head's sources" ;;
    esac
elif [ $new = 1 ]; then
    echo "changed: copied the head's $bin and jobs/ (same architecture)"
else
    echo "already has the head's $bin and jobs/ (same architecture)"
fi
