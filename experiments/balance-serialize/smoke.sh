#!/usr/bin/env bash
# CI form: 1 seed x 0.2 s per order and machine; checks it runs end to end.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 experiments/balance-serialize/run.py --smoke
