#!/usr/bin/env bash
# Runs every test of the project on a fresh machine (Debian or Ubuntu):
# installs what it needs (a Rust toolchain through rustup when cargo is
# missing, a C linker, Python 3, trace-cmd, Chromium and the perfetto Python
# package), builds in release mode (the simulator's tests run simulated
# seconds), runs the unit, integration and property tests of the whole
# workspace, a few seconds of fuzzing of every reader (cargo-fuzz, nightly
# toolchain), the README's main command and the smoke forms of the
# experiments, then checks that no crate's module import graph has a
# circle and that the docs of schedlab-core, -workload, -output, -host, -lab and -cli
# build without warnings.
#
# LISA (scripts/test/test-lisa.sh) is pip-installed once into
# ~/.cache/schedlab/lisa-*; without network that test is skipped, loudly.
# The Python package (python/, crates/schedlab-py) is built as a wheel with
# maturin and installed into a fresh virtual environment
# (target/pytest-venv, made anew every time) whose only other packages come
# from a cached environment of its dependencies (target/pyenv-deps: pandas,
# pyarrow, Ray, pytest, matplotlib), rebuilt whenever
# python/requirements-test.txt or the Python version changes; then pytest
# runs python/tests (run, compare, sweep on a real local Ray, montecarlo).
#
# Nothing outside the repository is needed. Tests that need what a fresh
# clone or a user account lacks are #[ignore]d, so cargo reports them as
# ignored, with the reason; this script runs them (-- --ignored) where
# what they need is there, and lists the ones it leaves out, and why:
# the tests over rt-app's own example files need ../shared/fixtures beside
# the repository (CI has it); the host tests (schedlab-host and
# schedlab-cli's `host` binaries: real threads, policies, cgroups and
# tracefs recordings) need root on Linux with a usable tracefs.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
apt_updated=""
apt_install() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing: $* (no apt-get here: install them yourself)" >&2
    exit 1
  fi
  echo "== installing (apt):$(printf ' %s' "$@")"
  if [ -z "$apt_updated" ]; then
    $SUDO apt-get update -qq >/dev/null
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# Rust: the toolchain's own installer when cargo is missing (the
# distribution's cargo may be older than the workspace's rust-version).
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  . "$HOME/.cargo/env"
fi
need_apt=()
command -v cc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
if ! command -v cargo >/dev/null 2>&1; then
  command -v curl >/dev/null 2>&1 || need_apt+=(curl ca-certificates)
fi
# Tools the tests check our files with: trace-cmd (trace.dat), the official
# perfetto Python package (trace.pftrace), headless Chromium (report.html);
# Python 3 also runs the experiments and scripts/test/modgraph.py.
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
python3 -c "import ensurepip, venv" >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v trace-cmd >/dev/null 2>&1 || need_apt+=(trace-cmd)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ "${#need_apt[@]}" -gt 0 ]; then
  apt_install "${need_apt[@]}"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "== installing: Rust (rustup, minimal profile)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal >/dev/null
  . "$HOME/.cargo/env"
fi
if ! python3 -c "import perfetto" >/dev/null 2>&1; then
  echo "== installing: perfetto (pip)"
  # Debian 12+ marks the system Python as externally managed (PEP 668).
  python3 -m pip install --quiet --disable-pip-version-check perfetto 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages perfetto
fi

echo "== cargo test (workspace, release)"
cargo test --workspace --release --no-fail-fast 2>&1

# The ignored tests, by what they need. The test binaries named here
# (`it` of schedlab-cli and schedlab-output, `rtapp_fixtures`, `host` of
# schedlab-cli and schedlab-host) hold no ignored test but those, so
# `-- --ignored` runs exactly them. --workspace, as above: the same
# features, so nothing is built again.
run_or_list_ignored() { # WHY_NOT (empty: run) LABEL CARGO_TEST_ARGS...
  local why="$1" label="$2"
  shift 2
  if [ -z "$why" ]; then
    echo "== ignored tests that need $label: running them"
    cargo test --workspace --release --no-fail-fast "$@" -- --ignored 2>&1
  else
    echo "== ignored tests that need $label: skipped ($why):"
    cargo test --workspace --release -q "$@" -- --list --ignored 2>/dev/null \
      | sed -n 's/^\(.*\): test$/   skipped: \1/p'
  fi
}
fixtures_why=""
[ -d ../shared/fixtures/rt-app-examples ] \
  || fixtures_why="../shared/fixtures/rt-app-examples not found beside the repository"
run_or_list_ignored "$fixtures_why" "../shared/fixtures" --test it --test rtapp_fixtures
host_why=""
if [ "$(uname -s)" != Linux ]; then
  host_why="not Linux"
elif [ "$(id -u)" != 0 ]; then
  host_why="not root"
else
  tracefs="$(awk '$3 == "tracefs" { print $2; exit }' /proc/self/mounts)"
  if [ -n "$tracefs" ]; then
    [ -w "$tracefs/instances" ] || host_why="tracefs at $tracefs is not writable"
  elif [ ! -d /sys/kernel/tracing ]; then
    host_why="no tracefs (kernel without CONFIG_TRACING?)"
  fi
fi
run_or_list_ignored "$host_why" "root and tracefs" --test host

# Every reader under libFuzzer for a few seconds each: installs
# the nightly toolchain and cargo-fuzz when missing; one build for all
# targets. Longer runs: scripts/test/fuzz.sh SECONDS (docs/limits.md, Fuzzing).
echo "== fuzz: every reader, 3 s each (scripts/test/fuzz.sh)"
bash scripts/test/fuzz.sh 3

echo "== smoke: the README's main command"
cargo run --release -q -p schedlab-cli -- run examples/sched-idle-a7.json --machine a7-octa --duration 1s --check >/dev/null

if [ -d experiments ]; then
  for smoke in experiments/*/smoke.sh; do
    [ -f "$smoke" ] || continue
    echo "== smoke: $smoke"
    bash "$smoke"
  done
fi
echo "== LISA's analyses on a schedlab trace.dat (scripts/test/test-lisa.sh)"
# Installs lisa-linux 3.1.0 (pinned, scripts/test/lisa/requirements.txt) once
# into a cached virtual environment; skips loudly without network.
bash scripts/test/test-lisa.sh target/release/schedlab
echo "== python: the wheel in a fresh virtual environment, pytest"
deps=target/pyenv-deps
stamp="$( (cat python/requirements-test.txt; python3 --version) | sha256sum | cut -c1-16)"
if [ "$(cat "$deps/.stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "== installing (pip, cached in $deps): $(grep -v '^#' python/requirements-test.txt | tr '\n' ' ')"
  rm -rf "$deps"
  python3 -m venv "$deps"
  "$deps/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-test.txt
  echo "$stamp" >"$deps/.stamp"
fi
rm -rf target/pytest-venv target/wheels
(cd python && "../$deps/bin/maturin" build --release --quiet --out ../target/wheels)
python3 -m venv target/pytest-venv
# The fresh environment sees the cached dependencies through a .pth file.
"$deps/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
  >"$(target/pytest-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/schedlab-test-deps.pth"
target/pytest-venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-index target/wheels/schedlab-*.whl
(cd target && RAY_USAGE_STATS_ENABLED=0 pytest-venv/bin/python -m pytest -q -rs -p no:cacheprovider ../python/tests)

echo "== every crate's import graph has no circle (scripts/test/modgraph.py)"
for src in crates/*/src; do
    python3 scripts/test/modgraph.py --src "$src" --quiet
done

# Doc comments of the library crates: no link to a private item, no
# unresolved link, no stray HTML (warnings are errors).
echo "== cargo doc: core, workload, output, host, lab, cli (RUSTDOCFLAGS=-D warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -q -p schedlab-core -p schedlab-workload -p schedlab-output -p schedlab-host -p schedlab-lab -p schedlab-cli 2>&1

echo "== docs/trust.md's tables match the scoreboards (scripts/docs/trust-tables.py --check)"
python3 scripts/docs/trust-tables.py --check

echo "== all tests passed"
