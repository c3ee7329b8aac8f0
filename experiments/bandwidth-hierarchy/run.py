#!/usr/bin/env python3
"""CFS bandwidth throttling in a 3-level cgroup hierarchy (K Prateek Nayak,
"sched/fair: Allow account_cfs_rq_runtime() to throttle current
hierarchy", v2, 2026-06-02): tip (THROTTLE=per-task, 6.18+) against
tip + series (THROTTLE=unified), hackbench's time, mmtests statistics.

The set-up is the posting's (POSTING-SETUP.md: the "Testing" section of
the author's Feb 2025 throttle RFC, which the 2026 cover letter points
to), --setup posting, the default:

    /CG0                       cpu.max 3200000 100000   (32 CPUs)
    /CG0/CG00, /CG0/CG01       cpu.max 1600000 100000   (16 CPUs each)
    /CG0/CG0x/CG000, CG001     cpu.max  800000 100000   (8 CPUs each, 4 leaves)

and four hackbench instances started together, one per leaf, each
`hackbench -p -l LOOPS -g G -T` (pipes, threads, 20 senders + 20
receivers per group, 100-byte messages), timed until the last one ends:

    hackbench:instances=4,groups=G,loops=LOOPS,mode=thread,ipc=pipe,
              cgroup=/CG0/CG00/CG000;/CG0/CG00/CG001;/CG0/CG01/CG000;/CG0/CG01/CG001

Machine: epyc-2s-256c-smt (2 x 128C/256T Zen 4c), the closest preset to
the postings' EPYC machines (2025: a 64-vCPU VM and a 2 x 64C/128T
3rd-generation EPYC; 2026: not in the part of the mail we could read).
The whole tree is capped at 32 CPUs, so bandwidth, not the CPU count,
binds.

The posting runs 5 000 000 loops (~208 s); that is out of reach, so LOOPS
is scaled down (the default gives ~1 s of simulated time, ten 100 ms
periods) and the number is printed beside the results.

--setup ours is a guessed set-up (POSTING-SETUP.md, "The other set-up"):
one 16-group process-mode hackbench, one group per leaf under /hb/l2,
20 ms periods.

Runs differ only by seed (the simulator's boot-to-boot variation); each
(side, seed) is one `schedlab run`, --jobs of them at a time.

Usage: run.py [--smoke] [--setup posting|ours] [--groups G] [--loops N]
              [--runs N] [--first-seed S] [--jobs N] [--legacy] [--bin PATH]
Exit status 1 if a run fails or a side never throttles.
Standard library only.
"""
import argparse, json, math, os, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MACHINE = "epyc-2s-256c-smt"

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

# The posting's tree (POSTING-SETUP.md): (path, cpu.max quota us, period us).
POSTING_PERIOD = 100000
POSTING_LEAVES = ["/CG0/CG00/CG000", "/CG0/CG00/CG001", "/CG0/CG01/CG000", "/CG0/CG01/CG001"]
POSTING_TREE = [("/CG0", 3200000), ("/CG0/CG00", 1600000), ("/CG0/CG01", 1600000)] + [
    (leaf, 800000) for leaf in POSTING_LEAVES]

# Our earlier guess: 24 / 16 / 1.5 x 16 CPUs, 20 ms period.
OURS_PERIOD = 20000
OURS_GROUPS = 16
OURS_TREE = [("/hb", 480000), ("/hb/l2", 320000)] + [
    ("/hb/l2/g%d" % g, 30000) for g in range(OURS_GROUPS)]


def setup(kind, groups, loops):
    """(workload spec, --cgroup arguments) of a set-up."""
    if kind == "posting":
        spec = ("hackbench:instances=4,groups=%d,loops=%d,mode=thread,ipc=pipe,cgroup=%s"
                % (groups, loops, ";".join(POSTING_LEAVES)))
        tree, period = POSTING_TREE, POSTING_PERIOD
    else:
        spec = ("hackbench:groups=%d,loops=%d,mode=process,ipc=pipe,cgroup=/hb/l2/g%%g"
                % (OURS_GROUPS, loops))
        tree, period = OURS_TREE, OURS_PERIOD
    args = []
    for path, quota in tree:
        args += ["--cgroup", "%s:cpu.max=%d,%d" % (path, quota, period)]
    return spec, args


def one_run(binary, spec, cgargs, throttle, seed, tmp):
    """One simulated run; its figures from summary.json."""
    out = os.path.join(tmp, "%s-%d" % (throttle, seed))
    cmd = [binary, "run", spec, "--machine", MACHINE, "--seed", str(seed),
           "--features", "THROTTLE=" + throttle, "--out", out, "-q"] + cgargs
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - t0
    d = json.load(open(os.path.join(out, "summary.json")))
    if "workload_time_s" not in d:
        raise RuntimeError("%s seed %d: hackbench did not finish" % (throttle, seed))
    groups = d.get("groups", [])
    return {
        "time_s": d["workload_time_s"],
        "throttled_ms": sum(g["cpu_stat"]["throttled_usec"] for g in groups) / 1000.0,
        "nr_throttled": sum(g["cpu_stat"]["nr_throttled"] for g in groups),
        "switches": sum(t["switches"] for t in d["tasks"]),
        "migrations": sum(t["migrations"] for t in d["tasks"]),
        "events": d["events"],
        "wall_s": wall,
    }


def stats(xs):
    """mmtests' rows (CoefVar in %; Stddev the sample one, n - 1)."""
    n = len(xs)
    s = sorted(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    pos = all(x > 0 for x in xs)
    return {
        "Min": s[0], "Max": s[-1], "Median": med, "AMean": mean,
        "GMean": math.exp(sum(math.log(x) for x in xs) / n) if pos else 0.0,
        "HMean": n / sum(1.0 / x for x in xs) if pos else 0.0,
        "Stddev": sd, "CoefVar": 100.0 * sd / mean if mean else 0.0,
    }


def run_sides(binary, spec, cgargs, sides, seeds, jobs):
    """{side: [run figures, by seed]}."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {(s, seed): ex.submit(one_run, binary, spec, cgargs, s, seed, tmp)
                for s in sides for seed in seeds}
        return {s: [futs[(s, seed)].result() for seed in seeds] for s in sides}


def table(res, base, new, published):
    t0 = stats([r["time_s"] for r in res[base]])
    t1 = stats([r["time_s"] for r in res[new]])
    if published:
        print("%-8s | %12s %12s %8s | %12s %12s %8s" % ("", "tip", "tip+series", "", base, new, ""))
        print("%-8s | %12s %12s %8s | %12s %12s %8s" % ("", "published s", "published s", "change", "model s", "model s", "change"))
    else:
        print("%-8s | %12s %12s %8s" % ("", base, new, "change"))
    for row in ROWS:
        m0, m1 = t0[row], t1[row]
        mc = 100.0 * (m1 - m0) / m0 if m0 else 0.0
        if published:
            p0, p1 = PUBLISHED[row]
            pc = 100.0 * (p1 - p0) / p0 if p0 else 0.0
            print("%-8s | %12.2f %12.2f %+7.2f%% | %12.4f %12.4f %+7.2f%%" % (row, p0, p1, pc, m0, m1, mc))
        else:
            print("%-8s | %12.4f %12.4f %+7.2f%%" % (row, m0, m1, mc))
    for name in ("throttled_ms", "nr_throttled", "switches", "migrations", "events", "wall_s"):
        v0 = stats([r[name] for r in res[base]])["AMean"]
        v1 = stats([r[name] for r in res[new]])["AMean"]
        print("%-14s AMean  %s %14.1f  %s %14.1f" % (name, base, v0, new, v1))
    print("time_s by seed (from --first-seed): " + "  ".join(
        "%s %s" % (s, " ".join("%.3f" % r["time_s"] for r in res[s])) for s in (base, new)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true",
                    help="CI form: 16 groups per instance, 20 loops, 2 runs per side")
    ap.add_argument("--setup", choices=["posting", "ours"], default="posting")
    ap.add_argument("--groups", type=int, default=16,
                    help="hackbench groups per instance (posting set-up; the 2026 mail does not say)")
    ap.add_argument("--loops", type=int, default=None,
                    help="loops per sender (posting: 5000000; default 2000, ~1 s simulated at 16 groups)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1, help="seeds FIRST .. FIRST + RUNS - 1")
    ap.add_argument("--jobs", type=int, default=2, help="simulations at a time")
    ap.add_argument("--legacy", action="store_true", help="also run THROTTLE=legacy")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "schedlab"))
    a = ap.parse_args()
    if a.loops is None:
        a.loops = 2000 if a.setup == "posting" else 20000
    if a.smoke:
        a.groups, a.loops, a.runs = 16, 20, 2
    if not os.path.exists(a.bin):
        print("run.py: %s not found; build with cargo build --release" % a.bin, file=sys.stderr)
        return 2
    spec, cgargs = setup(a.setup, a.groups, a.loops)
    sides = ["per-task", "unified"] + (["legacy"] if a.legacy else [])
    seeds = list(range(a.first_seed, a.first_seed + a.runs))
    res = run_sides(a.bin, spec, cgargs, sides, seeds, a.jobs)
    if a.setup == "posting":
        print("posting set-up: 4 hackbench instances x %d groups, threads, pipes, %d loops "
              "(posting: 5000000), 1->2->4 tree of 32/16/8 CPUs, 100 ms periods, %s, %d runs per side"
              % (a.groups, a.loops, MACHINE, a.runs))
    else:
        print("our earlier set-up: hackbench %d groups, processes, pipes, %d loops, /hb/l2/g<k>, "
              "20 ms periods, %s, %d runs per side" % (OURS_GROUPS, a.loops, MACHINE, a.runs))
    print("spec: " + spec)
    table(res, "per-task", "unified", True)
    if a.legacy:
        print("legacy against per-task:")
        table(res, "legacy", "per-task", False)
    ok = True
    for s in sides:
        if all(r["nr_throttled"] == 0 and r["throttled_ms"] == 0 for r in res[s]):
            print("FAIL: THROTTLE=%s never throttled (the hierarchy does not bind)" % s, file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
