#!/usr/bin/env bash
# CI form of the published scoreboard: the two cases marked `smoke = true`
# (an rt-app case on a preset, a hackbench case on a machine file), two
# seeds a side, into a temporary page whose structure is checked (~20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/published/run.py --smoke -j 2
(cd experiments/published && python3 -m unittest -q test_run)
