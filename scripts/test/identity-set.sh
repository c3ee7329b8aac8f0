#!/bin/sh
# The fixed set of traced runs a behaviour-neutral change must leave byte
# for byte unchanged: hackbench pipe and socket at 1, 2
# and 8 groups on icx-2s-80c-ht and vm-2cpu, each with the fold on and
# message by message, periodic-160's shape and OLTP on gnr-2s-snc3, all
# with --trace.
#
#   scripts/test/identity-set.sh BINARY OUTDIR      # runs the set into OUTDIR
#   diff -r OUTDIR_BEFORE OUTDIR_AFTER          # must print nothing
#
# Two runs at a time (the machine has two CPUs).
set -eu
bin=$1
out=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
hashes=$here/crates/schedlab-cli/tests/golden/hashes
mkdir -p "$out"
cases() {
    for m in icx-2s-80c-ht vm-2cpu; do
        for ipc in pipe socket; do
            for g in 1 2 8; do
                echo "hb-$m-$ipc-$g hackbench:groups=$g,loops=100,mode=process,ipc=$ipc --machine $m --seed 1"
                echo "hb-$m-$ipc-$g-mbm hackbench:groups=$g,loops=100,mode=process,ipc=$ipc --machine $m --seed 1 --message-by-message"
            done
        done
    done
    echo "hb-icx-socket-8-long hackbench:groups=8,loops=400,mode=process,ipc=socket --machine icx-2s-80c-ht --seed 2"
    echo "hb-icx-pipe-8-long hackbench:groups=8,loops=400,mode=thread,ipc=pipe --machine icx-2s-80c-ht --seed 2"
    echo "periodic-160 $hashes/periodic160.json --machine icx-2s-80c-ht --duration 300ms --seed 1"
    echo "oltp-gnr oltp: --machine gnr-2s-snc3 --duration 40ms --seed 1"
}
cases | while read -r name args; do
    # shellcheck disable=SC2086
    echo "$bin run $args --trace --quiet --out $out/$name"
done | xargs -P 2 -I{} sh -c '{} >/dev/null'
echo "$(ls "$out" | wc -l) runs in $out"
