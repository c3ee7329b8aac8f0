#!/usr/bin/env python3
"""Per-message figures of a hackbench recording and its simulations.

    scripts/investigate/hb-permsg.py RECORDING_DIR [RECORDING_DIR...]

For the recording (its trace.txt and summary.json) and each sim-seedN/ of
it (after `schedlab validate`): per message, the sleeps (sched_switch out of
an hb-* task whose prev_state is not R), wake-ups of hb-* tasks
(sched_wakeup), the hb-* tasks' CPU (summary.json runtime_ns) and the wall
time (summary.json workload_time_s), and where each sleep's wake-up came
from: the waker's CPU against the wakee's target CPU. Messages are
groups x fds x fds x loops from workload.spec (a hackbench: generator spec).
Also the recording's vCPU placement (c2c.json) when there is one.
"""
import json
import os
import re
import sys

SWITCH = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\].*?sched_switch: prev_comm=(\S+) prev_pid=\d+ "
                    r"prev_prio=\d+ prev_state=(\S+) ==> next_comm=(\S+)")
WAKEUP = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\].*?sched_wakeup: comm=(\S+) pid=\d+ prio=\d+ "
                    r"target_cpu=(\d+)")


def messages(rec):
    spec = open(os.path.join(rec, "workload.spec")).read().strip()
    if not spec.startswith("hackbench:"):
        sys.exit(f"hb-permsg.py: {rec}/workload.spec: not a hackbench: spec")
    kv = dict(p.split("=", 1) for p in spec.split(":", 1)[1].split(",") if "=" in p)
    g, f, l, n = (int(kv.get(k, d)) for k, d in
                  (("groups", 10), ("fds", 20), ("loops", 100), ("instances", 1)))
    return n * g * f * f * l


def figures(d, msgs):
    s = json.load(open(os.path.join(d, "summary.json")))
    hb = [t for t in s["tasks"] if t["name"].startswith("hb-")]
    cpu = sum(t["runtime_ns"] for t in hb)
    sleeps = wakes = remote = 0
    for line in open(os.path.join(d, "trace.txt")):
        m = SWITCH.match(line)
        if m:
            if m[4].startswith("hb-") and not m[5].startswith("R"):
                sleeps += 1
            continue
        m = WAKEUP.match(line)
        if m and m[4].startswith("hb-"):
            wakes += 1
            if int(m[3]) != int(m[5]):
                remote += 1
    t = s.get("workload_time_s")
    return {
        "msgs/sleep": msgs / sleeps if sleeps else float("inf"),
        "msgs/wake": msgs / wakes if wakes else float("inf"),
        "remote wake %": 100.0 * remote / wakes if wakes else 0.0,
        "cpu ns/msg": cpu / msgs,
        "time ns/msg": t * 1e9 / msgs if t else float("nan"),
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for rec in sys.argv[1:]:
        msgs = messages(rec)
        place = ""
        p = os.path.join(rec, "c2c.json")
        if os.path.exists(p):
            c = json.load(open(p))
            place = f", vCPU placement {c['before_ns']}/{c['after_ns']} ns (c2c before/after)"
        print(f"{rec}: {msgs} messages{place}")
        rows = [("host", figures(rec, msgs))]
        for e in sorted(os.listdir(rec)):
            if e.startswith("sim-seed"):
                rows.append((e, figures(os.path.join(rec, e), msgs)))
        keys = list(rows[0][1])
        print("  " + f"{'':10}" + "".join(f"{k:>15}" for k in keys))
        for name, f in rows:
            print("  " + f"{name:10}" + "".join(f"{f[k]:>15.1f}" for k in keys))


if __name__ == "__main__":
    main()
