#!/usr/bin/env bash
# Fuzzes every reader of schedlab with cargo-fuzz (libFuzzer).
#
#   scripts/test/fuzz.sh [SECONDS] [TARGET...]
#
# Builds every target once (nightly toolchain, no sanitizer, debug
# assertions and overflow checks on), then runs each TARGET (default: all)
# for SECONDS (default 5) on a copy of its committed seed corpus
# (fuzz/corpus/TARGET), so the committed corpus stays as it is. A crash
# stops the script with libFuzzer's report and the input under
# fuzz/artifacts/TARGET/ (turn it into a regression test, see
# docs/limits.md "Fuzzing"). Prints one line per target with its
# executions. Installs the nightly toolchain (rustup) and cargo-fuzz
# (crates.io) when missing.
set -euo pipefail
cd "$(dirname "$0")/../../fuzz"
secs="${1:-5}"
shift || true
if ! command -v cargo >/dev/null 2>&1 && [ -f "$HOME/.cargo/env" ]; then
  . "$HOME/.cargo/env"
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "== installing: Rust nightly (rustup, minimal profile)"
  rustup toolchain install nightly --profile minimal >/dev/null
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing: cargo-fuzz (crates.io)"
  cargo install cargo-fuzz --locked --quiet
fi
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
flags=(-s none --debug-assertions)
echo "== fuzz: building ${#targets[@]} targets"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if ! cargo +nightly fuzz build "${flags[@]}" >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"
  echo "fuzz: the targets do not build" >&2
  exit 1
fi
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  cp -r "corpus/$t/." "$work/$t/" 2>/dev/null || true
  log="$work/$t.log"
  if ! cargo +nightly fuzz run "${flags[@]}" "$t" "$work/$t" -- \
      -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: $t: FAILED (input in fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  runs="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')"
  echo "fuzz: $t: ${secs} s, $runs executions, no crash"
done
