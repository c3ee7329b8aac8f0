#!/usr/bin/env python3
"""A small sweep and a figure of it.

Runs hackbench (2 groups, 100 loops) on two machines with and without the
STEAL feature, 6 seeds each (24 runs), then saves a bar chart of
hackbench's time per machine and feature set, with the seed-to-seed spread
as error bars.

    pip install ./python matplotlib        # once
    python examples/sweep_plot.py --out sweep-demo         # local cores
    python examples/sweep_plot.py --out sweep-demo --backend ray   # on Ray

Running it again reuses the finished runs in --out.
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402

import schedlab  # noqa: E402

SPEC = {
    "machines": ["vm-2cpu", "a7-octa"],
    "features": ["", "STEAL"],
    "workloads": ["hackbench:groups=2,loops=100"],
    "seeds": 6,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="sweep-demo", help="sweep directory (default: sweep-demo)")
    ap.add_argument("--backend", default="local", choices=["local", "ray"])
    ap.add_argument("--figure", default=None, help="PNG to write (default: OUT/sweep.png)")
    a = ap.parse_args()

    res = schedlab.sweep(SPEC, backend=a.backend, out=a.out)
    df = res.df[res.df["status"] == "ok"].copy()
    df["features"] = df["features"].replace("", "defaults")
    stats = df.groupby(["machine", "features"])["workload_time_s"].agg(["mean", "std"]).reset_index()

    fig, ax = plt.subplots(figsize=(6, 3.5))
    machines = list(dict.fromkeys(stats["machine"]))
    feats = list(dict.fromkeys(stats["features"]))
    width = 0.8 / len(feats)
    for i, f in enumerate(feats):
        s = stats[stats["features"] == f].set_index("machine").reindex(machines)
        xs = [m + i * width for m in range(len(machines))]
        ax.bar(xs, s["mean"] * 1e3, width, yerr=s["std"] * 1e3, capsize=3, label=f)
    ax.set_xticks([m + width * (len(feats) - 1) / 2 for m in range(len(machines))], machines)
    ax.set_ylabel("hackbench time (ms)")
    ax.set_title(f"hackbench:groups=2,loops=100, {SPEC['seeds']} seeds")
    ax.legend(title="features")
    fig.tight_layout()
    out = Path(a.figure) if a.figure else Path(a.out) / "sweep.png"
    fig.savefig(out, dpi=120)
    print(f"{len(df)} runs ({res.counts['ran']} now, {res.counts['skipped']} reused); figure: {out}")


if __name__ == "__main__":
    main()
