#!/usr/bin/env bash
# Opens a schedlab trace.dat in KernelShark under a virtual X server and
# saves a screenshot of its CPU timeline to docs/kernelshark.png.
#
#   scripts/docs/kernelshark-screenshot.sh [OUT.png]
#
# Installs (Debian) kernelshark, xvfb and imagemagick if they are missing.
# The trace is the SCHED_IDLE example on the octa-core preset, 300 ms.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-docs/kernelshark.png}
need=""
command -v kernelshark >/dev/null 2>&1 || need="$need kernelshark"
command -v Xvfb >/dev/null 2>&1 || need="$need xvfb"
command -v import >/dev/null 2>&1 || need="$need imagemagick"
command -v xdotool >/dev/null 2>&1 || need="$need xdotool"
if [ -n "$need" ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi
cargo build --release -q
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
./target/release/schedlab run examples/sched-idle-a7.json --machine a7-octa --duration 300ms \
  --trace --out "$tmp/run" --quiet
display=:97
Xvfb $display -screen 0 1600x900x24 >/dev/null 2>&1 &
sleep 2
export DISPLAY=$display XDG_RUNTIME_DIR="$tmp" QT_QPA_PLATFORM=xcb LIBGL_ALWAYS_SOFTWARE=1
kernelshark "$tmp/run/trace.dat" >"$tmp/ks.log" 2>&1 &
sleep 6
# As root KernelShark first shows a warning dialog: dismiss it, then make
# the main window fill the screen.
xdotool key Return || true
sleep 2
for w in $(xdotool search --name "KernelShark" 2>/dev/null); do
  xdotool windowmove "$w" 0 0 windowsize "$w" 1600 900 2>/dev/null || true
done
sleep 4
mkdir -p "$(dirname "$out")"
win=$(xdotool search --onlyvisible --name "KernelShark" 2>/dev/null | tail -n 1 || true)
import -window "${win:-root}" "$out"
# Drop the empty (black) part of the virtual screen around the window.
convert "$out" -trim +repage "$out" || true
echo "saved $out"
