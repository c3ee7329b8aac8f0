#!/usr/bin/env python3
"""SCHED_IDLE-aware wakeup placement (Viresh Kumar, 2019): reproduce the
rt-app wakeup-latency result on the octa-core preset.

Runs examples/sched-idle-a7.json (8 SCHED_OTHER threads: run 5333 us,
unique 7777 us timer; 5 SCHED_IDLE threads: run 3000 us; 5 s) with
NO_SCHED_IDLE_AS_IDLE and with SCHED_IDLE_AS_IDLE, for several seeds, and
prints the model's wakeup-latency statistics (rt-app wu_lat, all cfs
threads pooled) beside the published ones.

Three kernel configurations are run:
  * "5.4"  --kernel 5.4: the talk's kernel, CFS pick and preemption
    (sched_latency period, wakeup granularity, sleeper credit, buddies),
    SIS_PROP, every newidle pass. The published numbers come from it;
    the acceptance criteria are checked here.
  * "2019-era on EEVDF"  NO_SIS_UTIL,NO_NI_RANDOM: the LLC scan of select_idle_cpu
    is not bounded by utilisation (SIS_UTIL arrived in 5.19; the 2019
    kernel's SIS_PROP never scanned fewer than 4 CPUs, i.e. a whole 4-CPU
    cluster) and every newidle pass runs (NI_RANDOM is 6.19): the 2019
    kernel's placement on the EEVDF pick.
  * "tip-2026"  default features, SIS_UTIL on.

Each (configuration, side, seed) is one `schedlab run`, -j of them at a
time (default: every core); the output does not depend on -j.

Usage: run.py [--smoke] [--seeds N] [--duration S] [-j N] [--bin PATH]
Standard library only. Exit status 1 if the acceptance criteria are not
met on 5.4 (mean -70 %, stddev -50 %, N up), 2 on usage errors.
"""
import argparse, json, math, os, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
WORKLOAD = os.path.join(ROOT, "examples", "sched-idle-a7.json")

# Published (cover letter of "[PATCH V3 0/2] sched/fair: Fallback to
# sched-idle CPU in absence of idle CPUs", 2019), wu_lat in us.
PUBLISHED = {
    "without": {"N": 4710, "min": 0, "max": 67664, "sum": 5.25956e6, "mean": 1116.68, "stddev": 2315.09},
    "with": {"N": 5095, "min": 0, "max": 7773, "sum": 523170, "mean": 102.683, "stddev": 475.482},
}

# (label, --kernel, --features)
CONFIGS = [
    ("5.4 (--kernel 5.4: CFS, SIS_PROP)", "5.4", ""),
    ("2019-era on EEVDF (NO_SIS_UTIL,NO_NI_RANDOM)", None, "NO_SIS_UTIL,NO_NI_RANDOM"),
    ("tip-2026 (SIS_UTIL)", None, ""),
]


def stats(xs):
    n = len(xs)
    if n == 0:
        return {"N": 0, "min": 0, "max": 0, "sum": 0, "mean": 0.0, "stddev": 0.0}
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / n
    return {"N": n, "min": min(xs), "max": max(xs), "sum": sum(xs), "mean": mean, "stddev": math.sqrt(var)}


def run_one(binary, kernel, features, seed, duration):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        cmd = [binary, "run", WORKLOAD, "--machine", "a7-octa", "--seed", str(seed), "--out", out, "--quiet"]
        if kernel:
            cmd += ["--kernel", kernel]
        if features:
            cmd += ["--features", features]
        if duration:
            cmd += ["--duration", duration]
        subprocess.run(cmd, check=True)
        samples = []
        for name in sorted(os.listdir(out)):
            if name.startswith("rt-app-cfs_thread-") and name.endswith(".log"):
                for line in open(os.path.join(out, name)):
                    if line.startswith("#") or not line.strip():
                        continue
                    samples.append(int(line.split()[10]))
        return stats(samples)


def fmt(s):
    return "N %5d  min %4d  max %6d  sum %-11.6g  mean %8.2f  stddev %8.2f" % (
        s["N"], s["min"], s["max"], s["sum"], s["mean"], s["stddev"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true", help="2 seeds, 1 s (CI)")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--duration", default=None, help="override the workload's 5 s")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="simulations at a time (default: every core)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "schedlab"))
    a = ap.parse_args()
    if a.smoke:
        a.seeds, a.duration = 2, "1s"
    if not os.path.exists(a.bin):
        print("run.py: %s not found; build with cargo build --release" % a.bin, file=sys.stderr)
        return 2
    if a.jobs < 1:
        print("run.py: -j must be >= 1", file=sys.stderr)
        return 2
    ok = True
    report = {}
    seeds = range(1, a.seeds + 1)
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {}
        for label, kernel, base in CONFIGS:
            for side, feat in (("without", "NO_SCHED_IDLE_AS_IDLE"), ("with", "SCHED_IDLE_AS_IDLE")):
                features = ",".join(f for f in (base, feat) if f)
                for seed in seeds:
                    futs[(label, side, seed)] = ex.submit(run_one, a.bin, kernel, features, seed, a.duration)
        # Results are read in the sequential order, so the output is the
        # same for any -j.
        runs = {label: {side: [futs[(label, side, seed)].result() for seed in seeds]
                        for side in ("without", "with")}
                for label, _, _ in CONFIGS}
    for label, _, _ in CONFIGS:
        sides = runs[label]
        report[label] = sides
        print("== %s, %d seeds%s" % (label, a.seeds, ", " + a.duration if a.duration else ", 5 s"))
        for side in ("without", "with"):
            print("  published %-8s %s" % (side, fmt(PUBLISHED[side])))
            print("  model     %-8s %s   (seed 1)" % (side, fmt(sides[side][0])))
            avg = {k: sum(r[k] for r in sides[side]) / len(sides[side]) for k in ("N", "mean", "stddev", "max")}
            print("  model     %-8s N %7.1f  mean over seeds %8.2f  stddev %8.2f  max %8.1f" % (
                side, avg["N"], avg["mean"], avg["stddev"], avg["max"]))
        w = {k: sum(r[k] for r in sides["without"]) / a.seeds for k in ("N", "mean", "stddev")}
        n = {k: sum(r[k] for r in sides["with"]) / a.seeds for k in ("N", "mean", "stddev")}
        dmean = 100 * (1 - n["mean"] / w["mean"]) if w["mean"] else 0
        dstd = 100 * (1 - n["stddev"] / w["stddev"]) if w["stddev"] else 0
        pub_mean = 100 * (1 - PUBLISHED["with"]["mean"] / PUBLISHED["without"]["mean"])
        pub_std = 100 * (1 - PUBLISHED["with"]["stddev"] / PUBLISHED["without"]["stddev"])
        print("  mean   -%.1f %% (published -%.1f %%)   stddev -%.1f %% (published -%.1f %%)   N %+.1f (published %+d)" % (
            dmean, pub_mean, dstd, pub_std, n["N"] - w["N"], PUBLISHED["with"]["N"] - PUBLISHED["without"]["N"]))
        if label.startswith("5.4"):
            crit = dmean >= 70 and dstd >= 50 and n["N"] > w["N"]
            print("  criteria (mean -70 %%, stddev -50 %%, N up): %s" % ("met" if crit else "NOT met"))
            ok = ok and crit
        print()
    with open(os.path.join(tempfile.gettempdir(), "schedlab-sched-idle.json"), "w") as f:
        json.dump(report, f, indent=1)
    return 0 if ok or a.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
