#!/usr/bin/env bash
# CI form: 200 loops, 2 runs per side, per-task vs unified and legacy.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/bandwidth-hierarchy/run.py --smoke --legacy
