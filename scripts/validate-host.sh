#!/bin/sh
# Records each shape below on this host and validates the model against it
# (schedlab record + schedlab validate), then prints a scoreboard: one line
# per shape and metric (real, simulated median, distance/tolerance, agrees)
# and each shape's fidelity score. Needs root, Linux and tracefs.
#
#   scripts/validate-host.sh [OUTDIR] [SEEDS]
#
# OUTDIR (default target/validate-host) keeps every recording, its sim-seedN
# runs, validate.txt and validate.json. The host should be quiet: every
# report notes how much of each CPU other tasks took during the recording.
set -eu
out=${1:-target/validate-host}
seeds=${2:-3}
bin=${SCHEDLAB:-target/release/schedlab}
[ -x "$bin" ] || cargo build --release -p schedlab-cli
mkdir -p "$out"

cat > "$out/periodic.json" <<'JSON'
{ "tasks": { "p": { "instance": 2, "run": 2000, "timer": { "ref": "unique", "period": 10000 } } },
  "global": { "duration": 3, "calibration": "CPU0" } }
JSON
cat > "$out/periodic-idlehog.json" <<'JSON'
{ "tasks": {
    "p": { "instance": 2, "run": 2000, "timer": { "ref": "unique", "period": 10000 } },
    "hog": { "policy": "SCHED_IDLE", "run": 20000 } },
  "global": { "duration": 3, "calibration": "CPU0" } }
JSON

# name  workload
shapes="periodic $out/periodic.json
periodic-idlehog $out/periodic-idlehog.json
hackbench-pipe-2g hackbench:groups=2,loops=100,ipc=pipe"

echo "$shapes" | while read -r name wl; do
    dir="$out/$name"
    rm -rf "$dir"
    echo "== $name: $wl (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$bin" record "$wl" --out "$dir" --quiet
    "$bin" validate "$dir" --seeds "$seeds" --json "$dir/validate.json" > "$dir/validate.txt"
done

echo "| shape | family | metric | subject | real | sim (median of $seeds) | distance / tolerance | agrees |"
echo "|---|---|---|---|---|---|---|---|"
echo "$shapes" | while read -r name wl; do
    python3 - "$out/$name/validate.json" "$name" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); name = sys.argv[2]
f = lambda x: "-" if x is None else ("%.4g" % x)
for m in v["metrics"]:
    real, sim = (f"n={m['real']:.0f}", f"n={m['sim']:.0f}") if m["metric"] == "ks" else (f(m["real"]), f(m["sim"]))
    print(f"| {name} | {m['family']} | {m['metric']} | {m['subject']} | {real} | {sim} | {f(m['distance'])} / {m['tolerance']:g} | {'yes' if m['agrees'] else '**no**'} |")
print(f"| {name} | **score** | | | | | {v['score']:.3f} ({v['agree']}/{v['metric_count']} agree) | |")
for n in v.get("notes", []):
    print(f"| {name} | note | {n} | | | | | |")
PY
done
