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

# Tools the output tests check our files with: trace-cmd (trace.dat), the
# official perfetto Python package (trace.pftrace), headless Chromium
# (report.html). Installed only when missing.
need_apt=""
command -v trace-cmd >/dev/null 2>&1 || need_apt="$need_apt trace-cmd"
command -v chromium >/dev/null 2>&1 || need_apt="$need_apt chromium"
if [ -n "$need_apt" ]; then
  echo "== installing:$need_apt"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $need_apt >/dev/null
fi
if ! python3 -c "import perfetto" >/dev/null 2>&1; then
  echo "== installing: perfetto (pip)"
  python3 -m pip install --quiet --disable-pip-version-check perfetto
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
