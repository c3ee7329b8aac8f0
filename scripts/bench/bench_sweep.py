#!/usr/bin/env python3
"""Wall time of a 64-point sweep, local against Ray, on this machine
(BENCHMARKS.md, "Sweeps, local against Ray"). Needs the schedlab wheel, Ray and pandas.

    python scripts/bench/bench_sweep.py [--jobs 2] [--repeat 1] [--duration 1s]

Spec: 2 machines x 2 feature sets x 2 workloads x 8 seeds = 64 runs of
--duration simulated time each. Each measurement starts from an empty sweep directory.
Prints the local time (the CLI's engine, --jobs threads), Ray's start-up
time (ray.init of a local instance with --jobs CPUs) and the Ray sweep's
time after it, and checks that both datasets are byte-identical.
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import schedlab

REPO = Path(__file__).resolve().parents[2]
SPEC = {
    "machines": ["vm-2cpu", "a7-octa"],
    "features": ["", "STEAL"],
    "workloads": ["hackbench:groups=2,loops=100", str(REPO / "examples" / "sched-idle-a7.json")],
    "seeds": 8,
    "duration": "1s",
}


def files(d: Path) -> dict:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*.parquet"))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--duration", default="1s", help="simulated time of each run (default 1s)")
    a = ap.parse_args()
    SPEC["duration"] = a.duration
    import ray

    tmp = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    print(f"64 points of {a.duration}, {a.jobs} workers, loadavg before: {os.getloadavg()}")
    for i in range(a.repeat):
        for d in ("local", "ray"):
            shutil.rmtree(tmp / d, ignore_errors=True)
        t0 = time.perf_counter()
        loc = schedlab.sweep(SPEC, out=tmp / "local", jobs=a.jobs)
        t_local = time.perf_counter() - t0
        t0 = time.perf_counter()
        ray.init(num_cpus=a.jobs, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
        t_init = time.perf_counter() - t0
        t0 = time.perf_counter()
        rr = schedlab.sweep(SPEC, backend="ray", out=tmp / "ray")
        t_ray = time.perf_counter() - t0
        ray.shutdown()
        assert loc.counts["ran"] == rr.counts["ran"] == 64
        same = files(tmp / "local" / "dataset") == files(tmp / "ray" / "dataset")
        print(f"run {i + 1}: local {t_local:.1f} s; ray.init {t_init:.1f} s + ray sweep {t_ray:.1f} s = {t_init + t_ray:.1f} s; datasets identical: {same}; loadavg {os.getloadavg()}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
