#!/usr/bin/env bash
# CI form: the posting's set-up (4 hackbench instances, one per leaf of the
# 1->2->4 tree) at 16 groups x 20 loops, 2 runs per side, per-task vs
# unified and legacy; fails if a side never throttles.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/bandwidth-hierarchy/run.py --smoke --legacy
