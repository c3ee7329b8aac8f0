#!/bin/sh
# hackbench's under-loaded regime on this host: one sender and one receiver
# (hackbench -g 1 -f 1), per message: wall time, CPU, context switches,
# sleeps (switches out of a task that is not runnable), wake-ups, wake-ups
# of a polling idle CPU without an IPI, IPIs sent, migrations. Each run is
# wrapped in perf stat (per task, inherited: the counts are hackbench's own
# tasks', not the other sessions'), and c2c (scripts/host/c2c.c) measures the
# vCPU placement right before it (the host moves the two vCPUs between
# placements about 27 ns and about 122 ns apart).
#
#   scripts/investigate/hb-underload.sh [--reps N] [--loops L] [--out FILE.tsv]
#
# Configurations: rt-tests hackbench (-p pipe or socket, processes or -T
# threads), unpinned; scripts/investigate/hb1x1.c, the same traffic, unpinned and with
# the receiver on CPU 1 and the sender on CPU 0 ("split": each its own
# CPU, the regime of the icx 1-2 group rows). Each run is its own session
# with autogroup nice -20 (as scripts/host/validate-host.sh records), so other
# sessions' compiles take little of the CPUs. Needs root, perf, hackbench
# (Debian rt-tests) and a C compiler; about 4 s a run.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
reps=5
loops=200000
out=/tmp/hb-underload.tsv
while [ $# -gt 0 ]; do
    case $1 in
        --reps) reps=$2; shift 2 ;;
        --loops) loops=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "hb-underload.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
for t in perf hackbench cc; do
    command -v $t >/dev/null || { echo "hb-underload.sh: $t: not found" >&2; exit 2; }
done
bin=$(mktemp -d /tmp/hb-underload.XXXXXX)
cc -O2 -pthread -o "$bin/c2c" "$here/scripts/host/c2c.c"
cc -O2 -pthread -o "$bin/hb1x1" "$here/scripts/investigate/hb1x1.c"
ev=task-clock,context-switches,cpu-migrations,sched:sched_wakeup,sched:sched_wake_idle_without_ipi,ipi:ipi_send_cpu
# name | command (LOOPS is replaced)
configs="hackbench-pipe-proc|hackbench -p -g 1 -f 1 -l LOOPS
hackbench-socket-proc|hackbench -g 1 -f 1 -l LOOPS
hackbench-pipe-thread|hackbench -p -T -g 1 -f 1 -l LOOPS
hackbench-socket-thread|hackbench -T -g 1 -f 1 -l LOOPS
hb1x1-pipe-proc|BIN/hb1x1 -p -l LOOPS
hb1x1-pipe-proc-split|BIN/hb1x1 -p -l LOOPS -c 1,0
hb1x1-socket-proc-split|BIN/hb1x1 -l LOOPS -c 1,0
hb1x1-pipe-thread-split|BIN/hb1x1 -p -T -l LOOPS -c 1,0
hb1x1-socket-thread-split|BIN/hb1x1 -T -l LOOPS -c 1,0"
printf 'config\trep\tload1\tc2c_ns\tmsgs\ttime_s\ttask_clock_ms\tswitches\tsleeps\twakeups\twake_idle_no_ipi\tipis\tmigrations\tsteal_ms\n' > "$out"
steal() { awk '/^cpu /{print $9}' /proc/stat; }
r=0
while [ $r -lt "$reps" ]; do
    echo "$configs" | while IFS='|' read -r name cmd; do
        cmd=$(echo "$cmd" | sed "s|LOOPS|$loops|; s|BIN|$bin|")
        load=$(cut -d' ' -f1 /proc/loadavg)
        c2c=$(setsid -w sh -c 'echo -20 > /proc/self/autogroup; exec "$@"' sh "$bin/c2c" \
            | sed -n 's/^c2c 0-1: median \([0-9.]*\) ns.*/\1/p')
        s0=$(steal)
        # The sleeps: sched_switch with a prev_state other than running.
        setsid -w sh -c 'echo -20 > /proc/self/autogroup; exec "$@"' sh \
            perf stat -x, -o "$bin/stat" -e "$ev" -e sched:sched_switch --filter 'prev_state != 0' \
            $cmd > "$bin/run" 2>/dev/null
        s1=$(steal)
        t=$(sed -n 's/^Time: //p' "$bin/run")
        v() { grep ",$1," "$bin/stat" | head -1 | cut -d, -f1; }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "$load" "$c2c" "$loops" \
            "$t" "$(v task-clock)" "$(v context-switches)" "$(v sched:sched_switch)" "$(v sched:sched_wakeup)" \
            "$(v sched:sched_wake_idle_without_ipi)" "$(v ipi:ipi_send_cpu)" "$(v cpu-migrations)" \
            "$(( (s1 - s0) * 1000 / $(getconf CLK_TCK) ))" >> "$out"
        echo "$name rep $r: time $t s, c2c $c2c ns, load $load" >&2
    done
    r=$((r + 1))
done
rm -rf "$bin"
python3 - "$out" <<'PY'
import csv, sys, statistics as st
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["config"], []).append(r)
def f(x):
    return float(x) if x not in ("", None) else float("nan")
print("per message, median [min-max] over the runs; c2c = vCPU placement (ns)")
print(f"{'config':28} {'n':>2} {'time us':>18} {'cpu us':>18} {'msgs/sleep':>20} {'wake/msg':>8} {'noIPI/wake':>10} {'IPI/wake':>8} {'c2c ns':>12}")
for name, rs in by.items():
    m = [f(r["msgs"]) for r in rs]
    def col(fn):
        xs = sorted(fn(r, mm) for r, mm in zip(rs, m))
        return xs
    def fmt(xs, p=2):
        return f"{st.median(xs):.{p}f} [{xs[0]:.{p}f}-{xs[-1]:.{p}f}]"
    t = col(lambda r, mm: f(r["time_s"]) * 1e6 / mm)
    c = col(lambda r, mm: f(r["task_clock_ms"]) * 1e3 / mm)
    s = col(lambda r, mm: mm / max(f(r["sleeps"]), 1))
    w = col(lambda r, mm: f(r["wakeups"]) / mm)
    ni = col(lambda r, mm: f(r["wake_idle_no_ipi"]) / max(f(r["wakeups"]), 1))
    ip = col(lambda r, mm: f(r["ipis"]) / max(f(r["wakeups"]), 1))
    cc = sorted(f(r["c2c_ns"]) for r in rs)
    print(f"{name:28} {len(rs):>2} {fmt(t):>18} {fmt(c):>18} {fmt(s,0):>20} {st.median(w):>8.4f} {st.median(ni):>10.2f} {st.median(ip):>8.2f} {cc[0]:.0f}-{cc[-1]:.0f}")
PY
