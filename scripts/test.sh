#!/usr/bin/env bash
# Runs every test of the project on a fresh machine: installs what it needs
# (only the Rust toolchain's own components so far), builds in release mode
# (the simulator's tests run simulated seconds), runs the unit, integration
# and property tests of the whole workspace, then the smoke forms of the
# experiments.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust (rustup) first" >&2
  exit 1
fi

echo "== cargo test (workspace, release)"
cargo test --workspace --release --no-fail-fast 2>&1

echo "== smoke: the README's main command"
cargo run --release -q -p schedlab-cli -- run examples/sched-idle-a7.json --machine a7-octa --duration 1s --check >/dev/null

if [ -d experiments ]; then
  for smoke in experiments/*/smoke.sh; do
    [ -f "$smoke" ] || continue
    echo "== smoke: $smoke"
    bash "$smoke"
  done
fi
echo "== all tests passed"
