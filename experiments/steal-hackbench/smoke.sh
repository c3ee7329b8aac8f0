#!/usr/bin/env bash
# CI form: groups 1 and 8 at 1000 loops, baseline and STEAL (~15 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/steal-hackbench/run.py --smoke
