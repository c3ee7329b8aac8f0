#!/usr/bin/env python3
"""Prints `schedlab bench --json` (read from stdin) as the markdown table
at the top of BENCHMARKS.md.

    ./target/release/schedlab bench --seconds 0.1 --json | python3 scripts/bench/bench_table.py

Standard library only.
"""
import json
import sys


def group(n):
    return f"{n:,}".replace(",", " ")


def main():
    d = json.load(sys.stdin)
    print("| case | machine | CPUs | tasks | sim s | events | wall s | CPU s "
          "| M events/s | ns/event | sim s / wall s | peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in d["cases"]:
        rss = c.get("peak_rss_bytes")
        rss = "-" if rss is None else f"{rss / 2**20:.1f}"
        print(f"| {c['name']} | {c['machine']} | {c['cpus']} | {group(c['tasks'])} "
              f"| {c['sim_s']:g} | {group(c['events'])} | {c['wall_s']:.4f} "
              f"| {c['cpu_s']:.4f} | {c['events_per_s'] / 1e6:.2f} "
              f"| {c['ns_per_event']:.0f} | {c['sim_s_per_wall_s']:.3g} | {rss} |")


if __name__ == "__main__":
    main()
