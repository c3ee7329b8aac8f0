#!/usr/bin/env python3
"""The published A/B scoreboard: every case of cases/*.toml run in the model
on both sides over several seeds, compared with the published change, and
written to docs/published.md.

    python3 experiments/published/run.py [-j N] [--seeds N] [--max-seeds M]
                                         [--cases ID,...] [--out FILE]
                                         [--bin PATH] [--smoke]

Runs are independent and go in parallel (-j, default: every core). Each
run's figures are cached under target/published-cache/, keyed by the
schedlab binary's contents and the run's command line, so an interrupted
campaign resumes where it stopped and an unchanged model re-renders at
once. `--smoke` runs two cases with two seeds a side into a temporary
file and checks the page's structure (CI).

A model change is the difference of the two sides' means; Welch's t over
the seeds decides whether it is larger than its noise. A change whose 95 %
interval contains zero is "no change" and is compared as such: its sign
agrees only with a published no-change. A case whose first --seeds seeds
leave its change inside an interval wider than the published change
("noise") runs seeds up to --max-seeds and is judged on all of them; the
same inputs give the same page. Standard library only.
"""
import argparse
import concurrent.futures as cf
import glob
import hashlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# Metrics a case may publish. `rate` metrics are per second of the run.
METRICS = {
    "throughput", "time_s", "cs_per_s", "migrations_per_s", "vol_cs_per_s",
    "invol_cs_per_s", "idle_pct", "wakeup_p50_us", "wakeup_p99_us",
    "request_p50_us", "request_p99_us", "rps", "wu_lat_mean_us",
    "messages_per_s",
}
# Bumped whenever figures() changes, so cached runs are read anew.
FIGURES_VERSION = "4"
# The period of the counters each run samples (counters_window).
COUNTERS_EVERY = "1ms"
# perf-profile rows the model has a cost path for: the path's share of the
# CPUs' non-idle time, in percent (perf's cycles do not tick in idle states).
PERF_PATHS = {
    "perf:sched_balance_domains": "balance_atomic",  # the sched_balance_running cmpxchg
    # available_idle_cpu is its own symbol (kernel/sched/core.c); the
    # model's figure is its runqueue reads in wakeup placement.
    "perf:available_idle_cpu": "available_idle_cpu",
}
SIDES = ("base", "new")

# Two-sided 95 % critical values of Student's t by degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


class CaseError(Exception):
    """A case file that cannot be run: one line naming the file and key."""


def t_crit(df):
    if df >= len(T975):
        return 1.96 + 2.4 / df  # within 0.3 % of the exact value past 30
    lo = max(1, int(math.floor(df)))
    hi = min(len(T975), lo + 1)
    f = df - lo
    return T975[lo - 1] * (1 - f) + T975[hi - 1] * f


def welch(a, b):
    """(t, df) of Welch's test of mean(b) - mean(a); t is 0 when both
    samples have no spread and equal means."""
    na, nb = len(a), len(b)
    va = statistics.variance(a) if na > 1 else 0.0
    vb = statistics.variance(b) if nb > 1 else 0.0
    se2 = va / na + vb / nb
    d = statistics.fmean(b) - statistics.fmean(a)
    if se2 == 0:
        return (0.0 if d == 0 else math.copysign(math.inf, d)), max(na + nb - 2, 1)
    num = se2 * se2
    den = (va / na) ** 2 / max(na - 1, 1) + (vb / nb) ** 2 / max(nb - 1, 1)
    return d / math.sqrt(se2), (num / den if den > 0 else na + nb - 2)


# ---------------------------------------------------------------- cases

def load_case(path):
    name = os.path.relpath(path, ROOT)
    try:
        with open(path, "rb") as f:
            c = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise CaseError("%s: %s" % (name, e))

    def need(tbl, key, where):
        if key not in tbl:
            raise CaseError("%s: missing key %s" % (name, where + key))
        return tbl[key]

    for sect in ("source", "machine", "change", "workload"):
        if not isinstance(c.get(sect), dict):
            raise CaseError("%s: missing table [%s]" % (name, sect))
    need(c, "id", "")
    need(c["machine"], "name", "machine.")
    need(c["workload"], "spec", "workload.")
    for side in SIDES:
        s = need(c["change"], side, "change.")
        if not isinstance(s, dict):
            raise CaseError("%s: change.%s must be a table" % (name, side))
        for k in s:
            if k not in ("kernel", "features", "sysctl"):
                raise CaseError("%s: change.%s.%s is not a known key" % (name, side, k))
    figs = c.get("figure", [])
    if not figs:
        raise CaseError("%s: no [[figure]]" % name)
    for i, f in enumerate(figs):
        m = need(f, "metric", "figure[%d]." % i)
        if m not in METRICS and not m.startswith("perf:"):
            raise CaseError("%s: figure[%d].metric %r is not a metric of the README's table" % (name, i, m))
        if "change_pct" not in f and not ("base" in f and "new" in f):
            if not ("base" in f or "new" in f):
                raise CaseError("%s: figure[%d] (%s) has no value" % (name, i, m))
    if sum(1 for f in figs if f.get("headline")) != 1:
        raise CaseError("%s: exactly one [[figure]] must have headline = true" % name)
    c["_file"] = name
    return c


def machine_arg(name):
    path = os.path.join(HERE, "machines", name + ".toml")
    return path if os.path.exists(path) else name


def side_args(case, side):
    s = case["change"][side]
    m = case["machine"]
    args = ["--machine", machine_arg(m["name"])]
    if s.get("kernel"):
        args += ["--kernel", str(s["kernel"])]
    if s.get("features"):
        args += ["--features", s["features"]]
    for kv in s.get("sysctl", []):
        args += ["--sysctl", kv]
    if m.get("hz"):
        args += ["--hz", str(m["hz"])]
    if m.get("preempt"):
        args += ["--preempt", m["preempt"]]
    for kv in case["workload"].get("cgroup", []):
        args += ["--cgroup", kv]
    if case["workload"].get("duration"):
        args += ["--duration", case["workload"]["duration"]]
    return args


def longer(spec, duration):
    """The same workload at twice its length: loops doubled, or the run's
    duration doubled, or schbench's runtime doubled."""
    if duration:
        v = duration.rstrip("s").rstrip("m")
        unit = duration[len(v):]
        return spec, "%g%s" % (float(v) * 2, unit)
    kind, _, params = spec.partition(":")
    out = []
    done = False
    for p in params.split(","):
        k, _, v = p.partition("=")
        if k in ("loops", "runtime", "transactions") and v.isdigit() and not done:
            p = "%s=%d" % (k, int(v) * 2)
            done = True
        out.append(p)
    return (kind + ":" + ",".join(out), duration) if done else (None, None)


# ---------------------------------------------------------------- runs

def spec_params(spec):
    """`KEY=VALUE` parameters of a generator spec."""
    _, _, params = spec.partition(":")
    return dict(p.partition("=")[::2] for p in params.split(",") if "=" in p)


def figures(summary, spec, counters=None):
    """The model's figures of one run, named as the README's metrics;
    `counters`: the rows of its counters.csv, if sampled."""
    s = summary
    dur = s["duration_ns"] / 1e9
    tasks = s.get("tasks", [])
    cpus = s.get("cpus", [])
    sw = sum(t["switches"] for t in tasks) + sum(h.get("switches", 0) for h in s.get("helpers", []))
    inv = sum(t.get("involuntary_switches", 0) for t in tasks)
    goidle = sum(c["sched_goidle"] for c in cpus)
    busy = sum(c["busy_ns"] + c["sched_overhead_ns"] for c in cpus)
    idle = sum(c["idle_ns"] for c in cpus)
    mig = sum(t["migrations"] for t in tasks)
    f = {
        "raw": {"dur": dur, "cs": sw + goidle, "inv": inv, "sw": sw, "mig": mig,
                "busy": busy, "idle": idle},
        "duration_s": dur,
        "cs_per_s": (sw + goidle) / dur,
        "migrations_per_s": mig / dur,
        "invol_cs_per_s": inv / dur,
        "vol_cs_per_s": (sw - inv) / dur,
        "idle_pct": 100.0 * idle / (busy + idle) if busy + idle else 0.0,
        "events": s.get("events", 0),
    }
    prof = s.get("profile", {})
    paths = prof.get("paths_ns", {})
    nonidle = prof.get("task_ns", 0) + sum(paths.values())
    f["raw"]["nonidle"] = nonidle
    for name, path in PERF_PATHS.items():
        if nonidle and path in paths:
            f[name] = 100.0 * paths[path] / nonidle
            f["raw"][name] = paths[path]
    # rt-app's wu_lat: the mean over every SCHED_OTHER thread's samples.
    lat = [(t["wakeup_latency_us"]["n"], t["wakeup_latency_us"]["mean"]) for t in tasks
           if t.get("policy") == "SCHED_NORMAL" and t.get("wakeup_latency_us", {}).get("n")]
    if lat:
        f["wu_lat_mean_us"] = sum(n * m for n, m in lat) / sum(n for n, _ in lat)
    wt = s.get("workload_time_us")
    loops = sum(t["loops"] for t in tasks if not t["name"].startswith("client-"))
    f["raw"]["loops"] = loops
    f["raw"]["wt"] = wt / 1e6 if wt else None
    if wt:
        f["time_s"] = wt / 1e6
        f["throughput"] = loops / (wt / 1e6)
        if spec.startswith("hackbench:"):
            # A sender's loop writes one message to each of the group's
            # fds receivers.
            fds = int(spec_params(spec).get("fds", 20))
            sent = sum(t["loops"] for t in tasks if t["name"].startswith("hb-s"))
            f["messages_per_s"] = sent * fds / (wt / 1e6)
            f["raw"]["msgs"] = sent * fds
    elif s.get("throughput_per_s") is not None:
        f["throughput"] = s["throughput_per_s"]
    win = counters_window(counters, s, wt)
    if win:
        f["raw"]["window"] = win
    sb = s.get("schbench")
    if sb:
        for key, name in (("wakeup_latency_us", "wakeup"), ("request_latency_us", "request")):
            for p in sb[key]["percentiles"]:
                if p["pct"] in (50.0, 99.0):
                    f["%s_p%d_us" % (name, int(p["pct"]))] = p["value"]
        f["rps"] = sb["average_rps"]
        f["throughput"] = sb["average_rps"]
    if s.get("specjbb"):
        f["throughput"] = s["specjbb"]["jops"]
    return f


def read_counters(path):
    """counters.csv's rows as dicts of ints (none if the file is absent)."""
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        head = fh.readline().strip().split(",")
        return [dict(zip(head, map(int, line.split(",")))) for line in fh if line.strip()]


def counters_window(rows, summary, wt_us):
    """The counters' differences over the middle half of the run's working
    period (hackbench: its start barrier's release to the last exit; else
    the whole run): past the start-up (fork placement, PELT's ramp) and
    before the tail (groups that finished early leave CPUs idle, and a
    longer run has a longer tail, so two lengths' difference keeps part
    of it)."""
    if not rows or len(rows) < 3:
        return None
    end = rows[-1]["time_ns"]
    span = wt_us * 1000 if wt_us else summary["duration_ns"]
    start = max(0, end - span)
    a_t, b_t = start + span // 4, start + 3 * span // 4

    def at(t):
        return min(rows, key=lambda r: abs(r["time_ns"] - t))
    a, b = at(a_t), at(b_t)
    dt = (b["time_ns"] - a["time_ns"]) / 1e9
    if dt <= 0:
        return None
    d = {k: b[k] - a[k] for k in a}
    return {"dt": dt,
            "cs": d["switches"] + d["helper_switches"] + d["sched_goidle"],
            "sw": d["switches"], "inv": d["involuntary_switches"], "mig": d["migrations"],
            "busy": d["busy_ns"] + d["sched_overhead_ns"], "idle": d["idle_ns"]}


def steady(short, long_):
    """The steady-state figures of a case from its two lengths, same seed.
    Rates (switches, migrations, involuntary switches, idle) are the
    longer run's over the middle half of its working period
    (counters_window), which leaves out the start-up and the tail.
    Throughput, time and profile shares are those of the part of the
    longer run the shorter one does not have (counts and times at twice
    the length less those at the case's length), which cancels the
    start-up; the tail is part of what hackbench's time measures.
    Latency percentiles, which do not subtract, are the longer run's."""
    a, b = short["raw"], long_["raw"]
    f = {k: v for k, v in long_.items() if k.endswith("_us") or k == "rps"}
    dd = b["dur"] - a["dur"]
    if dd <= 0:
        return dict(long_)
    w = b.get("window")
    if w:
        # Rates over the middle of the longer run (counters_window).
        f["cs_per_s"] = w["cs"] / w["dt"]
        f["migrations_per_s"] = w["mig"] / w["dt"]
        f["invol_cs_per_s"] = w["inv"] / w["dt"]
        f["vol_cs_per_s"] = (w["sw"] - w["inv"]) / w["dt"]
        db, di = w["busy"], w["idle"]
    else:
        f["cs_per_s"] = (b["cs"] - a["cs"]) / dd
        f["migrations_per_s"] = (b["mig"] - a["mig"]) / dd
        f["invol_cs_per_s"] = (b["inv"] - a["inv"]) / dd
        f["vol_cs_per_s"] = ((b["sw"] - b["inv"]) - (a["sw"] - a["inv"])) / dd
        db, di = b["busy"] - a["busy"], b["idle"] - a["idle"]
    f["idle_pct"] = 100.0 * di / (db + di) if db + di > 0 else 0.0
    dn = b["nonidle"] - a["nonidle"]
    for name in PERF_PATHS:
        if name in a and name in b and dn > 0:
            f[name] = 100.0 * (b[name] - a[name]) / dn
    dl = b["loops"] - a["loops"]
    if a.get("wt") and b.get("wt") and b["wt"] > a["wt"]:
        dt = b["wt"] - a["wt"]
        f["time_s"] = dt
        f["throughput"] = dl / dt
        if "msgs" in a and "msgs" in b:
            f["messages_per_s"] = (b["msgs"] - a["msgs"]) / dt
    elif "throughput" in long_:
        f["throughput"] = long_["throughput"] if "rps" in long_ else dl / dd
    return f


def run_one(binary, digest, cache, spec, args, seed):
    cmd = [binary, "run", spec] + args + ["--seed", str(seed), "--quiet",
                                          "--counters-every", COUNTERS_EVERY]
    key = hashlib.sha256((FIGURES_VERSION + digest + "\0" + "\0".join(cmd[1:])).encode()).hexdigest()[:24]
    path = os.path.join(cache, key + ".json")
    if os.path.exists(path):
        with open(path) as fh:
            return json.load(fh), 0.0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        t0 = time.monotonic()
        p = subprocess.run(cmd + ["--out", out], capture_output=True, text=True, cwd=ROOT)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip().splitlines()[-1:] or p.returncode))
        with open(os.path.join(out, "summary.json")) as fh:
            fig = figures(json.load(fh), spec, read_counters(os.path.join(out, "counters.csv")))
    fig["wall_s"] = wall
    tmpf = path + ".tmp%d" % os.getpid()
    with open(tmpf, "w") as fh:
        json.dump(fig, fh)
    os.replace(tmpf, path)
    return fig, wall


# ---------------------------------------------------------------- verdicts

def sign(x):
    return (x > 0) - (x < 0)


def published_change(f):
    if "change_pct" in f:
        return float(f["change_pct"])
    return 100.0 * (f["new"] - f["base"]) / f["base"]


MISS_KINDS = {
    "no lever": "both sides give the same figures in every seed: the switch changes nothing the model has for this workload",
    "noise": "the model's change is inside its 95 % interval, and that interval, with the extra seeds too, is wider than the published change: longer runs could decide it",
    "no effect": "the model's change is inside a 95 % interval narrower than the published change: the model has no effect of the published size",
    "opposite": "the model's change is significant and of the other sign",
    "size": "the sign agrees, the size is outside 2x",
}


def miss_kind(v, b, n):
    """Why a case misses (None when sign and size agree): one of MISS_KINDS."""
    if v["sign_ok"] and v["size_ok"]:
        return None
    if b == n:
        return "no lever"
    if not v["significant"]:
        return "noise" if v["ci_pct"] > abs(v["published"]) else "no effect"
    if v["model_sign"] != v["published_sign"]:
        return "opposite"
    return "size"


def verdict(case, runs):
    """Per case: the headline comparison and the behaviour ratios."""
    head = next(f for f in case["figure"] if f.get("headline"))
    m = head["metric"]
    b = [r[m] for r in runs["base"] if m in r]
    n = [r[m] for r in runs["new"] if m in r]
    v = {"metric": m, "published": published_change(head)}
    v["published_sign"] = 0 if head.get("significant", True) is False else sign(v["published"])
    if len(b) < 2 or len(n) < 2:
        v["error"] = "the model gives no %s for this workload" % m
        return v
    mb, mn = statistics.fmean(b), statistics.fmean(n)
    t, df = welch(b, n)
    v["model"] = 100.0 * (mn - mb) / mb if mb else 0.0
    v["t"] = t
    v["significant"] = abs(t) > t_crit(df)
    v["model_sign"] = sign(v["model"]) if v["significant"] else 0
    v["sign_ok"] = v["model_sign"] == v["published_sign"]
    if v["published_sign"] == 0:
        v["size_ok"] = v["model_sign"] == 0
        v["size_ratio"] = None
    else:
        r = v["model"] / v["published"] if v["model_sign"] else 0.0
        v["size_ratio"] = r
        v["size_ok"] = v["sign_ok"] and 0.5 <= r <= 2.0
    # Half-width of the change's 95 % interval, in percent of the base mean.
    se = math.sqrt(statistics.variance(b) / len(b) + statistics.variance(n) / len(n))
    v["ci_pct"] = 100.0 * t_crit(df) * se / abs(mb) if mb else math.inf
    v["miss"] = miss_kind(v, b, n)
    # Behaviour: each published value against the model's mean on its side.
    beh = []
    for f in case["figure"]:
        fm = f["metric"]
        if fm.startswith("perf:") and fm not in PERF_PATHS:
            beh.append({"metric": fm, "note": "no model figure"})
            continue
        row = {"metric": fm}
        # Absolute values of extensive figures (a scaled run's time, the
        # headline's own unit) are not comparable; their change is.
        for side in (() if f is head or fm == "time_s" else SIDES):
            if side in f:
                vals = [r[fm] for r in runs[side] if fm in r]
                if vals:
                    mv = statistics.fmean(vals)
                    row[side] = (float(f[side]), mv, mv / float(f[side]) if f[side] and mv > 0 else None)
        if f is not head and ("change_pct" in f or ("base" in f and "new" in f)):
            vb = [r[fm] for r in runs["base"] if fm in r]
            vn = [r[fm] for r in runs["new"] if fm in r]
            if vb and vn and statistics.fmean(vb):
                row["change"] = (published_change(f), 100.0 * (statistics.fmean(vn) / statistics.fmean(vb) - 1))
        if len(row) > 1:
            beh.append(row)
    lkp = lkp_messages(case)
    if lkp:
        row = {"metric": "messages_per_s (from hackbench.throughput)"}
        for side in SIDES:
            vals = [r["messages_per_s"] for r in runs[side] if "messages_per_s" in r]
            if vals and side in lkp:
                mv = statistics.fmean(vals)
                row[side] = (lkp[side], mv, mv / lkp[side])
        if len(row) > 1:
            beh.insert(0, row)
    v["behaviour"] = beh
    return v


def lkp_messages(case):
    """Messages per second of a robot hackbench case, from its published
    hackbench.throughput: lkp-tests' parse reports tasks x loops x
    datasize / 1024 per second of hackbench's Time, and every sender writes
    one message per receiver of its group each loop, so messages/s =
    throughput x 1024 / datasize x fds / 2."""
    spec = case["workload"]["spec"]
    if case["source"].get("kind") != "lkp" or not spec.startswith("hackbench:"):
        return None
    head = next(f for f in case["figure"] if f.get("headline"))
    if head["metric"] != "throughput":
        return None
    p = spec_params(spec)
    fds, size = int(p.get("fds", 20)), int(p.get("datasize", 100))
    return {side: float(head[side]) * 1024 / size * fds / 2 for side in SIDES if side in head}


# ---------------------------------------------------------------- page

def fmt_pct(x):
    return "%+.1f %%" % x


def fmt_num(x):
    if x is None:
        return "-"
    a = abs(x)
    if a >= 1e6:
        return "%.3g M" % (x / 1e6)
    if a >= 1e4:
        return "%.0f k" % (x / 1e3)
    if a >= 100:
        return "%.0f" % x
    return "%.3g" % x


def render(cases, verdicts, steadiness, seeds, wall, cmdline, excluded):
    lines = []
    w = lines.append
    n = len(cases)
    ok = [v for v in verdicts.values() if "error" not in v]
    signs = sum(v["sign_ok"] for v in ok)
    sizes = sum(v["size_ok"] for v in ok)
    logs = []
    for v in ok:
        for row in v["behaviour"]:
            for side in SIDES:
                if side in row and row[side][2] and row[side][2] > 0:
                    logs.append(abs(math.log2(row[side][2])))
    med = statistics.median(logs) if logs else float("nan")
    w("# Published A/B results: model against the real kernels")
    w("")
    runs_n, runs_s, jobs, digest = wall
    first, most, seeds_of = seeds
    more = sum(1 for c in cases if seeds_of[c["id"]] > first)
    w("Generated by `%s` (%d seeds a side; %d where the first %d left the change"
      " inside an interval wider than the published one: %d cases; %d simulations"
      " whose own wall times add up to %.0f s: about %.0f min on %d cores with `-j %d`)."
      " Binary sha256 %s. The cases, their sources and the inclusion rule are in"
      " `experiments/published/` (README.md there)." % (
          cmdline, first, most, first, more, runs_n, runs_s, runs_s / 60 / jobs, jobs, jobs, digest[:12]))
    w("")
    w("**Summary: %d of %d signs agree, %d of %d sizes within 2x; median |log2(model / published)|"
      " of the behaviour figures %.2f (%d figures).**" % (signs, n, sizes, n, med, len(logs)))
    w("")
    kinds = {}
    for v in ok:
        if v.get("miss"):
            kinds[v["miss"]] = kinds.get(v["miss"], 0) + 1
    if kinds:
        w("Why the %d misses miss (the `miss` column; the mechanisms behind them are under"
          " \"Mechanisms the cases bear on\" below):" % sum(kinds.values()))
        w("")
        for k in MISS_KINDS:
            if k in kinds:
                w("* **%s** (%d): %s." % (k, kinds[k], MISS_KINDS[k]))
        w("")
    w("| case | machine | change | metric | published | model (95 % CI by Welch's t, seeds a side) | sign | size | miss |")
    w("|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        v = verdicts[c["id"]]
        ch = c["change"]
        desc = " vs ".join(
            " ".join(x for x in (
                ("--kernel %s" % ch[s]["kernel"]) if ch[s].get("kernel") else "",
                ch[s].get("features", ""),
                " ".join(ch[s].get("sysctl", []))) if x) or "default"
            for s in SIDES)
        pub = fmt_pct(v["published"]) + ("" if v["published_sign"] else " (no change)")
        if "error" in v:
            w("| %s | %s | %s | %s | %s | %s | - | - | - |" % (c["id"], c["machine"]["name"], desc, v["metric"], pub, v["error"]))
            continue
        ci = (" ±%.1f" % v["ci_pct"]) if math.isfinite(v["ci_pct"]) else ""
        mod = fmt_pct(v["model"]) + ci + (" (t %.1f, %d)" % (v["t"], v["seeds"]) if math.isfinite(v["t"]) else " (%d)" % v["seeds"]) + ("" if v["significant"] else ", no change")
        size = "%.2fx" % v["size_ratio"] if v["size_ratio"] else ""
        w("| %s | %s | %s | %s | %s | %s | %s | %s %s | %s |" % (
            c["id"], c["machine"]["name"], desc, v["metric"], pub, mod,
            "yes" if v["sign_ok"] else "**no**", "yes" if v["size_ok"] else "**no**", size,
            v["miss"] or ""))
    w("")
    w("## Behaviour at scale")
    w("")
    w("Each published behaviour figure against the model's mean on the same side"
      " (model / published). The model's rates are per second of the steady"
      " state (see below); the robot's `perf-stat.ps.*` and `vmstat` rates are"
      " per second of the whole machine.")
    w("")
    w("| case | figure | base: published / model (ratio) | new: published / model (ratio) | change: published / model |")
    w("|---|---|---|---|---|")
    for c in cases:
        v = verdicts[c["id"]]
        for row in v.get("behaviour", []):
            if "note" in row:
                w("| %s | %s | %s | | |" % (c["id"], row["metric"], row["note"]))
                continue
            cells = []
            for side in SIDES:
                if side in row:
                    p, mv, r = row[side]
                    cells.append("%s / %s (%s)" % (fmt_num(p), fmt_num(mv), "%.2f" % r if r else "-"))
                else:
                    cells.append("")
            chg = ""
            if "change" in row:
                chg = "%s / %s" % (fmt_pct(row["change"][0]), fmt_pct(row["change"][1]))
            w("| %s | %s | %s | %s | %s |" % (c["id"], row["metric"], cells[0], cells[1], chg))
    w("")
    w("## Steady state: what the scaled runs measure")
    w("")
    w("Published runs last seconds to minutes; a run scaled down to a"
      " simulable length is dominated by its start (forking the tasks, PELT's"
      " ramp) and its tail (the last groups finishing). Every case whose"
      " length can be doubled is therefore run at its length L and at 2L with"
      " the same seed, and compared on the difference (2L - L): counts,"
      " times and busy time of the second half only. The table gives, on the"
      " base side, the steady figure over the whole run's at length L: far"
      " from 1, the whole run would not have measured the steady state.")
    w("")
    w("| case | L | 2L | throughput: steady / whole | cs/s: steady / whole | migrations/s: steady / whole |")
    w("|---|---|---|---|---|---|")
    for c in cases:
        s = steadiness.get(c["id"])
        if not s:
            w("| %s | `%s` | (no length parameter to double: whole runs) | | | |" % (c["id"], c["workload"]["spec"]))
            continue
        f3 = lambda x: "%.3f" % x if x else "-"
        w("| %s | `%s` | `%s` | %s | %s | %s |" % (c["id"], s["short"], s["long"], f3(s["thr"]), f3(s["cs"]), f3(s["mig"])))
    w("")
    findings = os.path.join(HERE, "findings.md")
    if os.path.exists(findings):
        with open(findings) as fh:
            w(fh.read().rstrip("\n"))
        w("")
    w("## Cases")
    w("")
    for c in cases:
        src = c["source"]
        w("### %s" % c["id"])
        w("")
        w("%s. Source: %s, %s%s (%s). Machine `%s`: %s. Workload `%s`%s." % (
            c.get("title", ""), src.get("kind", ""), src.get("message_id", ""),
            (" " + src["url"]) if src.get("url") else "", src.get("date", ""),
            c["machine"]["name"], c["machine"].get("described_as", ""),
            c["workload"]["spec"],
            ("; " + c["workload"]["scaling"]) if c["workload"].get("scaling") else ""))
        if c["change"].get("what"):
            w("")
            w("The change: %s" % c["change"]["what"])
        w("")
    if excluded:
        w("## Found and left out")
        w("")
        w("| source | change | reason |")
        w("|---|---|---|")
        for e in excluded:
            w("| %s | %s | %s |" % (e.get("source", ""), e.get("change", e.get("commit", "")),
                                   e.get("reason", "").replace("\n", " ")))
        w("")
    return "\n".join(lines)


# ---------------------------------------------------------------- main

def run_jobs(a, digest, cases, seeds, results):
    """Runs (or reads from the cache) every run of `cases` for the seeds
    `seeds[case id]`, at the case's length and twice it, into `results`;
    False (errors printed) when a run failed."""
    jobs = {}
    for c in cases:
        spec2, dur2 = (None, None) if a.whole_run else longer(c["workload"]["spec"], c["workload"].get("duration"))
        for side in SIDES:
            args = side_args(c, side)
            for seed in seeds[c["id"]]:
                jobs[(c["id"], side, seed, "L")] = (c["workload"]["spec"], args, seed)
                if spec2:
                    args2 = list(args)
                    if dur2:
                        i = args2.index("--duration")
                        args2[i + 1] = dur2
                    jobs[(c["id"], side, seed, "2L")] = (spec2, args2, seed)
    failed = []
    done = 0
    with cf.ThreadPoolExecutor(max_workers=a.j) as ex:
        futs = {ex.submit(run_one, a.bin, digest, a.cache, *job): k for k, job in jobs.items()}
        for fut in cf.as_completed(futs):
            k = futs[fut]
            done += 1
            try:
                results[k], _ = fut.result()
            except RuntimeError as e:
                failed.append(str(e))
            if sys.stderr.isatty():
                print("\r%d/%d runs" % (done, len(jobs)), end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print("", file=sys.stderr)
    for f in failed:
        print("run.py: error: %s" % f, file=sys.stderr)
    return not failed


def judge(cases, results, seeds_of):
    """Each case's verdict over its seeds, and the steady-state table's
    ratios (the base side's steady figures over its whole runs)."""
    verdicts, steadiness = {}, {}
    for c in cases:
        cid = c["id"]
        seeds = range(1, seeds_of[cid] + 1)
        doubled = (cid, "base", 1, "2L") in results
        runs = {side: [steady(results[(cid, side, seed, "L")], results[(cid, side, seed, "2L")])
                       if doubled else results[(cid, side, seed, "L")]
                       for seed in seeds] for side in SIDES}
        verdicts[cid] = verdict(c, runs)
        verdicts[cid]["seeds"] = seeds_of[cid]
        if doubled:
            whole = [results[(cid, "base", seed, "L")] for seed in seeds]

            def ratio(m):
                x = [r[m] for r in whole if m in r]
                y = [r[m] for r in runs["base"] if m in r]
                return statistics.fmean(y) / statistics.fmean(x) if x and y and statistics.fmean(x) else None
            spec2, dur2 = longer(c["workload"]["spec"], c["workload"].get("duration"))
            steadiness[cid] = {
                "short": c["workload"]["spec"] + ((" --duration " + c["workload"]["duration"]) if c["workload"].get("duration") else ""),
                "long": spec2 + ((" --duration " + dur2) if dur2 else ""),
                "thr": ratio("throughput"), "cs": ratio("cs_per_s"), "mig": ratio("migrations_per_s")}
    return verdicts, steadiness


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--max-seeds", type=int, default=10,
                    help="seeds a side for a case the first --seeds leave as noise (default 10)")
    ap.add_argument("--cases", default="", help="comma-separated ids (default: every case)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "published.md"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "schedlab"))
    ap.add_argument("--cache", default=os.path.join(ROOT, "target", "published-cache"))
    ap.add_argument("--smoke", action="store_true",
                    help="two cases, two seeds a side, into a temporary file; checks the page")
    ap.add_argument("--whole-run", action="store_true",
                    help="compare whole runs at the case's length (no doubled-length runs, no differences)")
    a = ap.parse_args()
    if a.j < 1 or a.seeds < 2 or a.max_seeds < a.seeds:
        print("run.py: error: -j must be >= 1, --seeds >= 2 and --max-seeds >= --seeds", file=sys.stderr)
        return 2
    paths = sorted(glob.glob(os.path.join(HERE, "cases", "*.toml")))
    try:
        cases = [load_case(p) for p in paths]
    except CaseError as e:
        print("run.py: error: %s" % e, file=sys.stderr)
        return 2
    excluded = []
    for p in sorted(glob.glob(os.path.join(HERE, "excluded*.toml"))):
        with open(p, "rb") as f:
            excluded += tomllib.load(f).get("excluded", [])
    if a.cases:
        want = a.cases.split(",")
        unknown = [x for x in want if x not in {c["id"] for c in cases}]
        if unknown:
            print("run.py: error: no case %s" % ", ".join(unknown), file=sys.stderr)
            return 2
        cases = [c for c in cases if c["id"] in want]
    if a.smoke:
        smoke = [c for c in cases if c.get("smoke")] or cases[:2]
        cases, a.seeds, a.max_seeds, a.out = smoke[:2], 2, 2, os.path.join(tempfile.mkdtemp(), "published.md")
    if not os.path.exists(a.bin):
        print("run.py: error: %s not built (cargo build --release -p schedlab-cli)" % a.bin, file=sys.stderr)
        return 2
    with open(a.bin, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(a.cache, exist_ok=True)

    t0 = time.monotonic()
    results = {}
    seeds_of = {c["id"]: a.seeds for c in cases}
    todo = {c["id"]: range(1, a.seeds + 1) for c in cases}
    while todo:
        if not run_jobs(a, digest, [c for c in cases if c["id"] in todo], todo, results):
            return 1
        verdicts, steadiness = judge(cases, results, seeds_of)
        # Second round: the cases their seeds left inside the noise.
        todo = {cid: range(seeds_of[cid] + 1, a.max_seeds + 1) for cid, v in verdicts.items()
                if v.get("miss") == "noise" and seeds_of[cid] < a.max_seeds}
        for cid in todo:
            seeds_of[cid] = a.max_seeds
    wall = time.monotonic() - t0
    cmdline = "python3 experiments/published/run.py" + ("" if a.seeds == 5 else " --seeds %d" % a.seeds) + ("" if a.max_seeds == 10 else " --max-seeds %d" % a.max_seeds) + (" --whole-run" if a.whole_run else "")
    spent = sum(r.get("wall_s", 0.0) for r in results.values())
    page = render(cases, verdicts, steadiness, (a.seeds, a.max_seeds, seeds_of), (len(results), spent, a.j, digest), cmdline, excluded)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(page + "\n")
    os.replace(tmp, a.out)
    if os.path.realpath(a.out) == os.path.realpath(os.path.join(ROOT, "docs", "published.md")):
        # docs/trust.md's published summary follows the page.
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "docs", "trust-tables.py")], check=True)
    print(page.splitlines()[4])
    print("wrote %s (%d cases, %d runs, %.0f s)" % (a.out, len(cases), len(results), wall))
    if a.smoke:
        ok = all("error" not in v for v in verdicts.values()) and "| case | machine |" in page
        if not ok:
            print("run.py: smoke: the page is incomplete", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
