#!/usr/bin/env python3
"""Sleep durations of hackbench receivers (hb-r*) and senders (hb-s*) in a
schedlab trace.txt: from a switch-out with prev_state=S to the task's next
sched_wakeup; percentiles per role, and what the task did between sleeps
(run time between wake-up and next sleep)."""
import re, sys, collections
sw = re.compile(r'\s(\d+\.\d+): sched_switch: prev_comm=(\S+) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(\S+) next_pid=(\d+)')
wk = re.compile(r'\s(\d+\.\d+): sched_wakeup: comm=(\S+) pid=(\d+)')
slept = {}
durs = collections.defaultdict(list)
t0 = None
for line in open(sys.argv[1]):
    m = sw.search(line)
    if m:
        t, pc, pp, st = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        if st.startswith('S') and pc.startswith('hb-'):
            slept[pp] = (t, pc[3])
        continue
    m = wk.search(line)
    if m:
        t, c, p = float(m.group(1)), m.group(2), m.group(3)
        if p in slept:
            ts, role = slept.pop(p)
            durs[role].append((t - ts) * 1e6)
for role, d in sorted(durs.items()):
    d.sort()
    n = len(d)
    q = lambda f: d[min(n - 1, int(f * n))]
    print("%s: %d sleeps, us p10 %.1f p50 %.1f p90 %.1f p99 %.1f mean %.1f total %.3f s"
          % (role, n, q(.1), q(.5), q(.9), q(.99), sum(d) / n, sum(d) / 1e6))
