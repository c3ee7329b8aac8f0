#!/bin/sh
# The recorder's hackbench against rt-tests' on this host: the host side
# of the validation scoreboard runs
# hackbench shapes through `schedlab record` (the host runner's threads,
# under a tracefs capture of 7 sched events); this runs the same traffic
# through rt-tests `hackbench` (processes, no capture) alternately, so the
# two can be compared at the same minutes and vCPU placement.
#
#   apt-get install rt-tests            # /usr/bin/hackbench
#   scripts/investigate/hb-vs-record.sh [--bin PATH] [--reps N] [--loops L] [--groups G]
#
# Prints, per repetition and channel kind, the recorder's workload time
# (its summary.json) and hackbench's "Time:", each run in its own session
# with autogroup nice -20 (as validate-host.sh records), and the vCPU
# placement (scripts/host/c2c.c) before and after. Root, Linux, tracefs.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=$here/target/release/schedlab
reps=3
loops=3000
groups=1
while [ $# -gt 0 ]; do
    case $1 in
        --bin) bin=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --loops) loops=$2; shift 2 ;;
        --groups) groups=$2; shift 2 ;;
        *) echo "hb-vs-record.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
command -v hackbench >/dev/null || { echo "hb-vs-record.sh: no hackbench (apt-get install rt-tests)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/c2c" "$here/scripts/host/c2c.c"
nice20() { setsid -w sh -c 'echo -20 > /proc/self/autogroup; exec "$@"' sh "$@"; }
echo "placement before: $("$tmp/c2c" | tail -2 | head -1)"
i=1
while [ "$i" -le "$reps" ]; do
    for ipc in pipe socket; do
        flag=; [ $ipc = pipe ] && flag=-p
        rm -rf "$tmp/rec"
        nice20 "$bin" record "hackbench:groups=$groups,loops=$loops,ipc=$ipc" --out "$tmp/rec" -q
        r=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['workload_time_s'])" "$tmp/rec/summary.json")
        h=$(nice20 hackbench $flag -P -g "$groups" -l "$loops" | sed -n 's/^Time: //p')
        echo "rep $i $ipc: record $r s, hackbench $h s"
    done
    i=$((i + 1))
done
echo "placement after: $("$tmp/c2c" | tail -2 | head -1)"
