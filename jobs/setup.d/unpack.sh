#!/bin/sh
# unpack.sh, run by site.yml with WB_REPO, WB_BIN, WB_MODE and WB_SUM:
# jobs/setup's bundle (copy: the binary and jobs/; build: the sources and
# jobs/), copied by Ansible to the node, unpacked into WB_REPO when it
# differs from the one unpacked last (or the binary is gone); with nfs, the
# binary looked for on the share. Prints one line ('changed:' first when it
# changed something); exit 1 with the fix when it cannot.
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
    # Built after the deps step (node.sh build), which installs the compiler.
    [ $new = 1 ] && echo "changed: unpacked the head's sources and jobs/" || echo "already has the head's sources and jobs/"
elif [ $new = 1 ]; then
    echo "changed: copied the head's $bin and jobs/ (same architecture)"
else
    echo "already has the head's $bin and jobs/ (same architecture)"
fi
