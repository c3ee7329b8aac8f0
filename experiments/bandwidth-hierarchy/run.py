#!/usr/bin/env python3
"""CFS bandwidth throttling in a 3-level cgroup hierarchy (K Prateek Nayak,
"sched/fair: Allow account_cfs_rq_runtime() to throttle current
hierarchy", v2, 2026-06-02): hackbench inside a 3-level-deep hierarchy
with quotas on a 2 x 128C/256T EPYC (epyc-2s-256c-smt, 512 CPUs),
tip (THROTTLE=per-task, 6.18+) against tip + series (THROTTLE=unified),
as an mmtests comparison of hackbench's time.

The posting does not give the hierarchy or the quotas ("setup from the
Testing section of an earlier series", not retrieved), so this experiment
fixes one and says so (README.md):

    /hb                cpu.max 480000 20000   (24 CPUs)
    /hb/l2             cpu.max 320000 20000   (16 CPUs)
    /hb/l2/g<k>        cpu.max  30000 20000   (1.5 CPUs), one per hackbench group

(a 20 ms period, so that a scaled-down run still spans many periods; the
quotas are in CPUs of bandwidth, which is what binds).

hackbench: 16 groups of 20 senders + 20 receivers (640 processes),
pipes; each hackbench group in its own leaf. The published runs take
~208 s; here the default is --loops 2000 per run (times are printed as
simulated, and the comparison is of shapes: the relative change of the
means and the spread). --loops 20000 --runs 10 is the full command.

Usage: run.py [--smoke] [--loops N] [--runs N] [--legacy] [--bin PATH]
Exit status 1 if a run fails or a side never throttles.
Standard library only.
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MACHINE = "epyc-2s-256c-smt"
GROUPS = 16

# The cover letter's table (seconds), tip vs tip + series.
PUBLISHED = {
    "Min": (207.33, 202.20),
    "Max": (210.20, 222.47),
    "Median": (207.83, 218.33),
    "AMean": (208.29, 215.36),
    "GMean": (208.29, 215.25),
    "HMean": (208.29, 215.13),
    "Stddev": (1.02, 7.37),
    "CoefVar": (0.49, 3.42),
}
ROWS = list(PUBLISHED)


PERIOD_US = 20000
# (path, CPUs of bandwidth)
LEVELS = [("/hb", 24.0), ("/hb/l2", 16.0)] + [("/hb/l2/g%d" % g, 1.5) for g in range(GROUPS)]


def cgroup_args():
    a = []
    for path, cpus in LEVELS:
        a += ["--cgroup", "%s:cpu.max=%d,%d" % (path, int(cpus * PERIOD_US), PERIOD_US)]
    return a


def compare(binary, loops, runs, base, new):
    spec = "hackbench:groups=%d,loops=%d,mode=process,ipc=pipe,cgroup=/hb/l2/g%%g" % (GROUPS, loops)
    with tempfile.TemporaryDirectory() as tmp:
        js = os.path.join(tmp, "cmp.json")
        cmd = [binary, "compare", spec, "--machine", MACHINE, "--runs", str(runs),
               "--base", "THROTTLE=" + base, "--new", "THROTTLE=" + new, "--json", js] + cgroup_args()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(js))


def metric(doc, name):
    for m in doc["metrics"]:
        if m["name"] == name:
            return m
    raise KeyError(name)


def stat(m, side, row):
    return m["variants"][side]["stats"][row.lower()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="200 loops, 2 runs per side (CI)")
    ap.add_argument("--loops", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--legacy", action="store_true", help="also compare legacy against per-task")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "schedlab"))
    a = ap.parse_args()
    if a.smoke:
        a.loops, a.runs = 200, 2
    if not os.path.exists(a.bin):
        print("run.py: %s not found; build with cargo build --release" % a.bin, file=sys.stderr)
        return 2
    doc = compare(a.bin, a.loops, a.runs, "per-task", "unified")
    t = metric(doc, "time_s")
    print("hackbench %d groups process pipes, %d loops, 3-level hierarchy with quotas, %s, %d runs per side"
          % (GROUPS, a.loops, MACHINE, a.runs))
    print("%-8s | %12s %12s %8s | %12s %12s %8s" % ("", "tip", "tip+series", "", "per-task", "unified", ""))
    print("%-8s | %12s %12s %8s | %12s %12s %8s" % ("", "published s", "published s", "change", "model s", "model s", "change"))
    for row in ROWS:
        p0, p1 = PUBLISHED[row]
        m0, m1 = stat(t, 0, row), stat(t, 1, row)
        pc = 100.0 * (p1 - p0) / p0 if p0 else 0.0
        mc = 100.0 * (m1 - m0) / m0 if m0 else 0.0
        print("%-8s | %12.2f %12.2f %+7.2f%% | %12.4f %12.4f %+7.2f%%" % (row, p0, p1, pc, m0, m1, mc))
    ok = True
    for name in ("throttled_ms", "nr_throttled", "switches", "migrations"):
        m = metric(doc, name)
        v0, v1 = stat(m, 0, "AMean"), stat(m, 1, "AMean")
        print("%-14s AMean  per-task %12.1f  unified %12.1f" % (name, v0, v1))
        if name == "nr_throttled" and (v0 <= 0 or v1 <= 0):
            ok = False
    if a.legacy:
        d = compare(a.bin, a.loops, a.runs, "legacy", "per-task")
        t = metric(d, "time_s")
        print("legacy vs per-task (time_s): " + "  ".join(
            "%s %.4f/%.4f" % (row, stat(t, 0, row), stat(t, 1, row)) for row in ("AMean", "Stddev", "CoefVar")))
        for name in ("throttled_ms", "switches"):
            m = metric(d, name)
            print("%-14s AMean  legacy %12.1f  per-task %12.1f" % (name, stat(m, 0, "AMean"), stat(m, 1, "AMean")))
    if not ok:
        print("FAIL: a side never throttled (the hierarchy does not bind)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
