#!/usr/bin/env bash
# CI form of the experiment: 2 seeds x 1 s; checks that it runs end to end.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/sched-idle/run.py --smoke
