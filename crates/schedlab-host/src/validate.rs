//! `validate`: a recording (the real kernel) against N simulated runs of
//! the same workload (seeds 1..N), metric by metric, with one fidelity
//! score.
//!
//! Both sides are **directories** (this module never simulates): the
//! recording made by [`record()`](crate::record()) (`host.json`,
//! `trace.txt`, `summary.json`, the rt-app logs, `cgroup/`), and the
//! output directories of `schedlab run` for each seed (`summary.json`, the
//! rt-app logs, and `trace.txt` when run with `--trace`).
//!
//! ## Metrics
//!
//! A task's **class** is its name without the trailing `-<index>` and its
//! policy (`p-0`, `p-1` SCHED_NORMAL → `p SCHED_NORMAL`).
//!
//! | family | metric | real side | simulated side (per seed) | distance |
//! |---|---|---|---|---|
//! | `wakeup_latency` | `wu_lat` p50, p90, p99, max per class | log rows with a timer (`c_period` > 0), pooled over the class's threads | same | relative error of the median across seeds |
//! | `wakeup_latency` | `wu_lat` distribution per class | the samples | all seeds' samples pooled | two-sample KS statistic |
//! | `missed_periods` | share of timer rows with negative slack, per class | logs | logs | relative error |
//! | `run_period` | mean `run` and mean `period` per thread | its log | its log | relative error |
//! | `switching` | context switches/s, migrations/s (workload threads) | trace.txt over the run's window: switch-ins (traced and inferred from the context column) and `sched_migrate_task` lines | its trace.txt if it has one, else summary.json's `switches` and `migrations` | relative error |
//! | `cpu_util` | the CPUs' utilisation by the workload's threads, ranked busiest first (`rank0`, `rank1`, ...: which CPU the kernel picks for a thread is arbitrary on a symmetric machine, how busy the busiest CPU is is not) | trace.txt: time they ran / time covered | trace.txt likewise, else `busy_ns / (busy_ns + idle_ns + sched_overhead_ns)` | relative error |
//! | `cpu_stat` | each group's `usage_usec`, `nr_throttled`, `throttled_usec` | summary.json (the change over the run) | summary.json | relative error |
//! | `workload_time` | hackbench time (`workload_time_s`) | summary.json | summary.json | relative error |
//!
//! A metric is computed when the real side has it (and at least one seed
//! does). Percentiles are nearest-rank: the p-th percentile of n sorted
//! samples is the `ceil(p/100 · n)`-th one ([`percentile`]).
//!
//! **Relative error** of a scalar: `|median(sim) − real| / max(|real|,
//! floor)`, the floor (per metric, [`TOLERANCES`]) keeping near-zero real
//! values from turning µs of difference into huge errors.
//!
//! **KS statistic** ([`ks_statistic`]): `sup_x |F_real(x) − F_sim(x)|` over
//! the two empirical CDFs, in [0, 1].
//!
//! ## Verdict and score
//!
//! A metric **agrees** when its distance ≤ its tolerance ([`TOLERANCES`]).
//! Each metric scores linearly in its distance, 1 when equal, 0.5 at its
//! tolerance, 0 at twice its tolerance or beyond:
//!
//! ```text
//! s_m      = max(0, 1 − d_m / (2 · tol_m))      ∈ [0, 1]; agrees ⇔ d_m ≤ tol_m ⇔ s_m ≥ 0.5
//! family   = mean of s_m over the family's metrics
//! score    = mean of the family scores over the families present   ∈ [0, 1]
//! ```
//!
//! Families weigh equally so that shapes with many threads (one run and
//! period metric each) do not drown the latency tails; a metric that just
//! agrees scores 0.5, one at twice its tolerance or worse scores 0.
//! Identical runs score 1.0 ([`score`]). The same contract, with the
//! tolerance table, is `docs/fidelity-score.md` (a test keeps the two equal).

use crate::tracestat::{trace_stats, InputError, TraceStats};
use schedlab_core::stats::LogRow;
use schedlab_output::rtapp_log::parse_rtapp_log;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One tolerance: which metric, how far it may be off, the floor of its
/// relative error, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Family.
    pub family: &'static str,
    /// Metric key (`p50`, `ks`, `run_mean`, ...).
    pub metric: &'static str,
    /// Largest distance that still agrees.
    pub tol: f64,
    /// Floor of the relative error's denominator (metric's unit); 0 for KS.
    pub floor: f64,
    /// Unit of the values.
    pub unit: &'static str,
    /// Why this tolerance.
    pub reason: &'static str,
}

/// The tolerance table (also printed by `schedlab validate --json` and in
/// the docs).
pub const TOLERANCES: &[Tolerance] = &[
    Tolerance { family: "wakeup_latency", metric: "p50", tol: 0.5, floor: 20.0, unit: "us",
        reason: "the typical wake-up: timer expiry, IPI/idle exit and switch cost tens of us; the model must get the median within half" },
    Tolerance { family: "wakeup_latency", metric: "p90", tol: 0.5, floor: 20.0, unit: "us",
        reason: "still the body of the distribution: same bar as the median" },
    Tolerance { family: "wakeup_latency", metric: "p99", tol: 1.0, floor: 50.0, unit: "us",
        reason: "tail: a few samples per second of run, host noise (interrupts, kthreads, VM exits) matters; within a factor 2" },
    Tolerance { family: "wakeup_latency", metric: "max", tol: 2.0, floor: 100.0, unit: "us",
        reason: "one sample, dominated by rare events; within a factor 3" },
    Tolerance { family: "wakeup_latency", metric: "ks", tol: 0.3, floor: 0.0, unit: "",
        reason: "shape of the whole distribution; KS ≤ 0.3 is a visible but moderate shift of the CDF" },
    Tolerance { family: "missed_periods", metric: "missed_share", tol: 0.5, floor: 0.05, unit: "",
        reason: "share of periods with negative slack; floor 5% so that 0 vs 1 missed of 200 agrees" },
    Tolerance { family: "run_period", metric: "run_mean", tol: 0.15, floor: 10.0, unit: "us",
        reason: "calibrated busy work: preemption and frequency/cache effects stretch it on the host; 15%" },
    Tolerance { family: "run_period", metric: "period_mean", tol: 0.1, floor: 10.0, unit: "us",
        reason: "the timer grid fixes the period unless the thread overruns; 10%" },
    Tolerance { family: "switching", metric: "switches_per_s", tol: 0.25, floor: 10.0, unit: "1/s",
        reason: "one per wake-up plus preemptions; the model should find the same preemptions within 25%" },
    Tolerance { family: "switching", metric: "migrations_per_s", tol: 0.5, floor: 5.0, unit: "1/s",
        reason: "wake-up placement and balancing; sensitive to other load on the host, so 50% (floor 5/s)" },
    Tolerance { family: "cpu_util", metric: "util", tol: 0.15, floor: 0.05, unit: "",
        reason: "share of the CPU the workload's threads used, per CPU; placement decides it; 15% (floor 0.05)" },
    Tolerance { family: "cpu_stat", metric: "usage_usec", tol: 0.1, floor: 1000.0, unit: "us",
        reason: "a group's CPU time follows from the work given; 10%" },
    Tolerance { family: "cpu_stat", metric: "nr_throttled", tol: 0.25, floor: 2.0, unit: "",
        reason: "throttled periods: the quota's arithmetic, plus timer slack; 25% (floor 2)" },
    Tolerance { family: "cpu_stat", metric: "throttled_usec", tol: 0.5, floor: 2000.0, unit: "us",
        reason: "throttled time depends on when the period timer and unthrottle run; 50% (floor 2 ms)" },
    Tolerance { family: "workload_time", metric: "workload_time_s", tol: 0.25, floor: 0.01, unit: "s",
        reason: "hackbench's Time: the end-to-end throughput of pipes/sockets and wake-ups; 25%" },
];

/// The tolerance of a metric key.
pub fn tolerance(metric: &str) -> &'static Tolerance {
    TOLERANCES
        .iter()
        .find(|t| t.metric == metric)
        .unwrap_or_else(|| panic!("no tolerance for {metric}"))
}

/// Nearest-rank percentile of sorted samples: the `ceil(p/100 · n)`-th
/// smallest (the minimum for p = 0). None for no samples.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, n) - 1])
}

/// The two-sample Kolmogorov-Smirnov statistic: the largest vertical
/// distance between the empirical CDFs of `a` and `b` (0 when either is
/// empty).
pub fn ks_statistic(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(|x, y| x.total_cmp(y));
    b.sort_by(|x, y| x.total_cmp(y));
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (mut i, mut j, mut d) = (0usize, 0usize, 0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] <= x {
            i += 1;
        }
        while j < b.len() && b[j] <= x {
            j += 1;
        }
        d = d.max((i as f64 / na - j as f64 / nb).abs());
    }
    d
}

/// Median (mean of the two middle values for an even count); None when empty.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(|x, y| x.total_cmp(y));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// `|sim − real| / max(|real|, floor)`.
pub fn rel_error(real: f64, sim: f64, floor: f64) -> f64 {
    let den = real.abs().max(floor);
    if den == 0.0 {
        if sim == real {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (sim - real).abs() / den
    }
}

/// A metric's score: `max(0, 1 − d / (2·tol))`.
pub fn metric_score(distance: f64, tol: f64) -> f64 {
    if !distance.is_finite() {
        return 0.0;
    }
    (1.0 - distance / (2.0 * tol)).max(0.0)
}

/// One compared metric.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricResult {
    /// Family.
    pub family: &'static str,
    /// Metric key (tolerance table).
    pub metric: &'static str,
    /// What it is about (class, thread, CPU, group; empty for run-wide).
    pub subject: String,
    /// Real value (for a distribution: its sample count).
    pub real: f64,
    /// Simulated value: median across seeds (for a distribution: pooled sample count).
    pub sim: f64,
    /// Per seed values (scalars) in seed order; None where a seed lacks it.
    pub sim_seeds: Vec<Option<f64>>,
    /// Distance (relative error or KS).
    pub distance: f64,
    /// Tolerance.
    pub tol: f64,
    /// distance ≤ tol.
    pub agrees: bool,
    /// `max(0, 1 − d/(2 tol))`.
    pub score: f64,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The recording.
    pub recording: PathBuf,
    /// The simulated runs, seed order.
    pub sims: Vec<PathBuf>,
    /// Every metric.
    pub metrics: Vec<MetricResult>,
    /// Family → score, in family order.
    pub families: Vec<(&'static str, f64)>,
    /// Overall fidelity score in [0, 1].
    pub score: f64,
    /// Facts that help read the figures (not scored): how much of each
    /// CPU other tasks of the host took during the recording.
    pub notes: Vec<String>,
}

/// The score of a set of metrics: mean over families of the mean metric
/// score. Returns the family scores too. 0 with no metric.
pub fn score(metrics: &[MetricResult]) -> (Vec<(&'static str, f64)>, f64) {
    let mut fam: Vec<(&'static str, f64, usize)> = Vec::new();
    for m in metrics {
        match fam.iter_mut().find(|f| f.0 == m.family) {
            Some(f) => {
                f.1 += m.score;
                f.2 += 1;
            }
            None => fam.push((m.family, m.score, 1)),
        }
    }
    let fams: Vec<(&'static str, f64)> = fam.iter().map(|f| (f.0, f.1 / f.2 as f64)).collect();
    let total = if fams.is_empty() {
        0.0
    } else {
        fams.iter().map(|f| f.1).sum::<f64>() / fams.len() as f64
    };
    (fams, total)
}

/// One side's run, as read from its directory.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The directory.
    pub dir: PathBuf,
    /// summary.json.
    pub summary: Value,
    /// (name, pid, policy) of every task.
    pub tasks: Vec<(String, u32, String)>,
    /// Log rows per task name (tasks with a log file).
    pub logs: BTreeMap<String, Vec<LogRow>>,
    /// Trace figures for the tasks' pids (None without trace.txt).
    pub trace: Option<TraceStats>,
    /// Run length (ns).
    pub duration_ns: u64,
}

fn read(p: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(p).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            InputError::file(p, "missing")
        } else {
            InputError::file(p, format!("cannot read: {e}"))
        }
    })
}

fn json_file(p: &Path) -> Result<Value, InputError> {
    let t = read(p)?;
    serde_json::from_str(&t)
        .map_err(|e| InputError::at(p, e.line(), format!("not valid JSON: {e}")))
}

/// The class of a task: name without a trailing `-<digits>`, and policy.
pub fn class_of(name: &str, policy: &str) -> String {
    let base = match name.rsplit_once('-') {
        Some((a, b)) if !a.is_empty() && !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
            a
        }
        _ => name,
    };
    format!("{base} {policy}")
}

/// Reads one run directory. `window`: the trace window (ns), None for the
/// whole trace.
fn load_run(
    dir: &Path,
    window: Option<(u64, u64)>,
    need_trace: bool,
) -> Result<RunData, InputError> {
    if !dir.is_dir() {
        return Err(InputError::file(dir, "not a directory"));
    }
    let sp = dir.join("summary.json");
    let summary = json_file(&sp)?;
    let tasks_v = summary
        .get("tasks")
        .and_then(Value::as_array)
        .ok_or_else(|| InputError::file(&sp, "no \"tasks\" array: not a run's summary.json"))?;
    let mut tasks = Vec::new();
    for t in tasks_v {
        let name = t.get("name").and_then(Value::as_str);
        let pid = t.get("pid").and_then(Value::as_u64);
        let pol = t.get("policy").and_then(Value::as_str);
        match (name, pid, pol) {
            (Some(n), Some(p), Some(pol)) => tasks.push((n.to_string(), p as u32, pol.to_string())),
            _ => return Err(InputError::file(&sp, "a task lacks name, pid or policy")),
        }
    }
    let duration_ns = summary
        .get("duration_ns")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    // Logs: <base>-<name>.log, the longest task name that fits.
    let mut logs = BTreeMap::new();
    let names: BTreeSet<&str> = tasks.iter().map(|t| t.0.as_str()).collect();
    let rd =
        std::fs::read_dir(dir).map_err(|e| InputError::file(dir, format!("cannot list: {e}")))?;
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files {
        let Some(fname) = f.file_name().and_then(|s| s.to_str()) else {
            continue;
        };
        let Some(stem) = fname.strip_suffix(".log") else {
            continue;
        };
        let best = names
            .iter()
            .filter(|n| {
                stem.len() > n.len()
                    && stem.ends_with(*n)
                    && stem.as_bytes()[stem.len() - n.len() - 1] == b'-'
            })
            .max_by_key(|n| n.len());
        if let Some(n) = best {
            let text = read(&f)?;
            let rows = parse_rtapp_log(&text).map_err(|e| InputError::at(&f, e.line, e.message))?;
            logs.insert(n.to_string(), rows);
        }
    }
    let tp = dir.join("trace.txt");
    let trace = if tp.exists() {
        let pids: BTreeSet<u32> = tasks.iter().map(|t| t.1).collect();
        Some(trace_stats(&tp, &pids, window)?)
    } else if need_trace {
        return Err(InputError::file(
            &tp,
            "missing: a recording has the trace of its run",
        ));
    } else {
        None
    };
    Ok(RunData {
        dir: dir.to_path_buf(),
        summary,
        tasks,
        logs,
        trace,
        duration_ns,
    })
}

/// Reads a recording: host.json (its run window), summary.json, logs and
/// trace.txt, all required.
pub fn load_recording(dir: &Path) -> Result<RunData, InputError> {
    if !dir.is_dir() {
        return Err(InputError::file(dir, "not a directory"));
    }
    let hp = dir.join("host.json");
    if !hp.exists() {
        return Err(InputError::file(
            &hp,
            "missing: not a recording (make one with `schedlab record WORKLOAD --out DIR`)",
        ));
    }
    let host = json_file(&hp)?;
    if !host.is_object() {
        return Err(InputError::at(&hp, 1, "not a JSON object"));
    }
    let clock = host.get("clock");
    let g = |k: &str| {
        clock
            .and_then(|c| c.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let (ts, end, last) = (g("t_start_ns"), g("end_ns"), g("last_exit_ns"));
    let e = if end > 0 { end } else { last };
    let window = (ts > 0 && e > ts).then_some((ts, e));
    load_run(dir, window, true)
}

/// Reads a simulated run directory (`schedlab run --out`).
pub fn load_sim(dir: &Path) -> Result<RunData, InputError> {
    load_run(dir, None, false)
}

/// Per side, the figures the metrics need.
#[derive(Default, Debug)]
struct Figures {
    lat: BTreeMap<String, Vec<u64>>,
    missed: BTreeMap<String, f64>,
    run_mean: BTreeMap<String, f64>,
    period_mean: BTreeMap<String, f64>,
    switches_per_s: Option<f64>,
    migrations_per_s: Option<f64>,
    util: BTreeMap<u32, f64>,
    cpu_stat: BTreeMap<(String, &'static str), f64>,
    workload_time_s: Option<f64>,
}

fn figures(r: &RunData) -> Figures {
    let mut f = Figures::default();
    let mut periods: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (name, _pid, pol) in &r.tasks {
        let Some(rows) = r.logs.get(name) else {
            continue;
        };
        let class = class_of(name, pol);
        let timed: Vec<&LogRow> = rows.iter().filter(|x| x.c_period > 0).collect();
        if !timed.is_empty() {
            f.lat
                .entry(class.clone())
                .or_default()
                .extend(timed.iter().map(|x| x.wu_lat));
            let e = periods.entry(class.clone()).or_default();
            e.0 += timed.len() as u64;
            e.1 += timed.iter().filter(|x| x.slack < 0).count() as u64;
        }
        if !rows.is_empty() {
            let n = rows.len() as f64;
            f.run_mean.insert(
                name.clone(),
                rows.iter().map(|x| x.run as f64).sum::<f64>() / n,
            );
            f.period_mean.insert(
                name.clone(),
                rows.iter().map(|x| x.period as f64).sum::<f64>() / n,
            );
        }
    }
    for v in f.lat.values_mut() {
        v.sort_unstable();
    }
    for (c, (n, m)) in periods {
        f.missed.insert(c, m as f64 / n as f64);
    }
    let secs = r.duration_ns as f64 / 1e9;
    let tasks = r
        .summary
        .get("tasks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(ts) = &r.trace {
        let win = (ts.window.1.saturating_sub(ts.window.0)) as f64 / 1e9;
        let secs = if r.duration_ns > 0 { secs } else { win };
        if secs > 0.0 {
            f.switches_per_s =
                Some(ts.pids.values().map(|c| c.switch_ins).sum::<u64>() as f64 / secs);
            f.migrations_per_s =
                Some(ts.pids.values().map(|c| c.migrations).sum::<u64>() as f64 / secs);
        }
        for c in &ts.cpus {
            if c.covered_ns > 0 {
                f.util
                    .insert(c.cpu, c.watched_ns as f64 / c.covered_ns as f64);
            }
        }
    } else {
        let sum = |k: &str| {
            tasks
                .iter()
                .filter_map(|t| t.get(k).and_then(Value::as_u64))
                .sum::<u64>() as f64
        };
        if secs > 0.0 {
            f.switches_per_s = Some(sum("switches") / secs);
            f.migrations_per_s = Some(sum("migrations") / secs);
        }
        for c in r
            .summary
            .get("cpus")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let g = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0) as f64;
            let tot = g("busy_ns") + g("idle_ns") + g("sched_overhead_ns");
            if let (Some(cpu), true) = (c.get("cpu").and_then(Value::as_u64), tot > 0.0) {
                let busy = c
                    .get("workload_ns")
                    .and_then(Value::as_u64)
                    .map_or(g("busy_ns"), |x| x as f64);
                f.util.insert(cpu as u32, busy / tot);
            }
        }
    }
    for g in r
        .summary
        .get("groups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(path) = g.get("path").and_then(Value::as_str) else {
            continue;
        };
        for k in ["usage_usec", "nr_throttled", "throttled_usec"] {
            if let Some(v) = g
                .get("cpu_stat")
                .and_then(|c| c.get(k))
                .and_then(Value::as_u64)
            {
                f.cpu_stat.insert((path.to_string(), k), v as f64);
            }
        }
    }
    f.workload_time_s = r.summary.get("workload_time_s").and_then(Value::as_f64);
    f
}

fn scalar(
    out: &mut Vec<MetricResult>,
    metric: &'static str,
    subject: String,
    real: Option<f64>,
    seeds: Vec<Option<f64>>,
) {
    let Some(real) = real else { return };
    let have: Vec<f64> = seeds.iter().flatten().copied().collect();
    let Some(sim) = median(&have) else { return };
    let t = tolerance(metric);
    let d = rel_error(real, sim, t.floor);
    out.push(MetricResult {
        family: t.family,
        metric,
        subject,
        real,
        sim,
        sim_seeds: seeds,
        distance: d,
        tol: t.tol,
        agrees: d <= t.tol,
        score: metric_score(d, t.tol),
    });
}

/// Compares already loaded runs.
pub fn compare(real: &RunData, sims: &[RunData]) -> Report {
    let rf = figures(real);
    let sf: Vec<Figures> = sims.iter().map(figures).collect();
    let mut m = Vec::new();
    for (class, samples) in &rf.lat {
        for (key, p) in [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("max", 100.0)] {
            let seeds = sf
                .iter()
                .map(|s| {
                    s.lat
                        .get(class)
                        .and_then(|v| percentile(v, p))
                        .map(|x| x as f64)
                })
                .collect();
            scalar(
                &mut m,
                key,
                class.clone(),
                percentile(samples, p).map(|x| x as f64),
                seeds,
            );
        }
        let pooled: Vec<f64> = sf
            .iter()
            .flat_map(|s| s.lat.get(class).into_iter().flatten().map(|&x| x as f64))
            .collect();
        if !pooled.is_empty() {
            let a: Vec<f64> = samples.iter().map(|&x| x as f64).collect();
            let d = ks_statistic(&a, &pooled);
            let t = tolerance("ks");
            m.push(MetricResult {
                family: t.family,
                metric: "ks",
                subject: class.clone(),
                real: a.len() as f64,
                sim: pooled.len() as f64,
                sim_seeds: sf
                    .iter()
                    .map(|s| s.lat.get(class).map(|v| v.len() as f64))
                    .collect(),
                distance: d,
                tol: t.tol,
                agrees: d <= t.tol,
                score: metric_score(d, t.tol),
            });
        }
    }
    for (class, v) in &rf.missed {
        scalar(
            &mut m,
            "missed_share",
            class.clone(),
            Some(*v),
            sf.iter().map(|s| s.missed.get(class).copied()).collect(),
        );
    }
    for (name, v) in &rf.run_mean {
        scalar(
            &mut m,
            "run_mean",
            name.clone(),
            Some(*v),
            sf.iter().map(|s| s.run_mean.get(name).copied()).collect(),
        );
        scalar(
            &mut m,
            "period_mean",
            name.clone(),
            rf.period_mean.get(name).copied(),
            sf.iter()
                .map(|s| s.period_mean.get(name).copied())
                .collect(),
        );
    }
    scalar(
        &mut m,
        "switches_per_s",
        String::new(),
        rf.switches_per_s,
        sf.iter().map(|s| s.switches_per_s).collect(),
    );
    scalar(
        &mut m,
        "migrations_per_s",
        String::new(),
        rf.migrations_per_s,
        sf.iter().map(|s| s.migrations_per_s).collect(),
    );
    // CPUs ranked by utilisation (busiest first) on each side.
    let ranked = |u: &BTreeMap<u32, f64>| {
        let mut v: Vec<f64> = u.values().copied().collect();
        v.sort_by(|a, b| b.total_cmp(a));
        v
    };
    let sr: Vec<Vec<f64>> = sf.iter().map(|s| ranked(&s.util)).collect();
    for (i, v) in ranked(&rf.util).iter().enumerate() {
        scalar(
            &mut m,
            "util",
            format!("rank{i}"),
            Some(*v),
            sr.iter().map(|s| s.get(i).copied()).collect(),
        );
    }
    for ((path, k), v) in &rf.cpu_stat {
        let metric = tolerance(k).metric;
        scalar(
            &mut m,
            metric,
            path.clone(),
            Some(*v),
            sf.iter()
                .map(|s| s.cpu_stat.get(&(path.clone(), *k)).copied())
                .collect(),
        );
    }
    scalar(
        &mut m,
        "workload_time_s",
        String::new(),
        rf.workload_time_s,
        sf.iter().map(|s| s.workload_time_s).collect(),
    );
    // Family order as in the tolerance table.
    let order = |f: &str| {
        TOLERANCES
            .iter()
            .position(|t| t.family == f)
            .unwrap_or(usize::MAX)
    };
    m.sort_by_key(|x| order(x.family));
    let (families, total) = score(&m);
    let mut notes = Vec::new();
    if let Some(ts) = &real.trace {
        let other: Vec<String> = ts
            .cpus
            .iter()
            .filter(|c| c.covered_ns > 0)
            .map(|c| {
                format!(
                    "cpu{} {:.0}%",
                    c.cpu,
                    100.0 * c.other_ns as f64 / c.covered_ns as f64
                )
            })
            .collect();
        notes.push(format!(
            "real run: other tasks of the host ran {} of the time (the model runs the workload alone)",
            other.join(", ")
        ));
    }
    Report {
        notes,
        recording: real.dir.clone(),
        sims: sims.iter().map(|s| s.dir.clone()).collect(),
        metrics: m,
        families,
        score: total,
    }
}

/// Reads the recording `real` and the simulated runs `sims` (seed order)
/// and compares them. Errors: `FILE:LINE: problem` of the first bad input.
pub fn validate(real: &Path, sims: &[PathBuf]) -> Result<Report, InputError> {
    let r = load_recording(real)?;
    if sims.is_empty() {
        return Err(InputError::file(real, "no simulated runs to compare with"));
    }
    let s = sims
        .iter()
        .map(|d| load_sim(d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(compare(&r, &s))
}

fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    let a = x.abs();
    if a == 0.0 || (0.01..1e7).contains(&a) {
        let s = format!("{x:.3}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{x:.3e}")
    }
}

impl Report {
    /// Metrics that agree.
    pub fn agreeing(&self) -> usize {
        self.metrics.iter().filter(|m| m.agrees).count()
    }

    /// The text table.
    pub fn to_text(&self) -> String {
        let mut rows: Vec<[String; 8]> = vec![[
            "family".into(),
            "metric".into(),
            "subject".into(),
            "real".into(),
            "sim(median)".into(),
            "sim seeds".into(),
            "dist/tol".into(),
            "agrees".into(),
        ]];
        for m in &self.metrics {
            let seeds: Vec<String> = m
                .sim_seeds
                .iter()
                .map(|s| s.map_or("-".into(), fmt_num))
                .collect();
            let (real, sim) = if m.metric == "ks" {
                (format!("n={}", m.real), format!("n={}", m.sim))
            } else {
                (fmt_num(m.real), fmt_num(m.sim))
            };
            rows.push([
                m.family.into(),
                m.metric.into(),
                m.subject.clone(),
                real,
                sim,
                if m.metric == "ks" {
                    String::new()
                } else {
                    seeds.join(",")
                },
                format!("{}/{}", fmt_num(m.distance), fmt_num(m.tol)),
                if m.agrees { "yes".into() } else { "NO".into() },
            ]);
        }
        let mut w = [0usize; 8];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = format!(
            "recording {} vs {} simulated run(s)\n",
            self.recording.display(),
            self.sims.len()
        );
        for r in &rows {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                if (3..=6).contains(&i) {
                    line.push_str(&format!("{:>w$}  ", c, w = w[i]));
                } else {
                    line.push_str(&format!("{:<w$}  ", c, w = w[i]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out.push('\n');
        for (f, s) in &self.families {
            out.push_str(&format!("family {f:<16} {:.3}\n", s));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out.push_str(&format!(
            "agree: {}/{} metrics; fidelity score {:.3}\n",
            self.agreeing(),
            self.metrics.len(),
            self.score
        ));
        out
    }

    /// The JSON form.
    pub fn to_json(&self) -> Value {
        let num = |x: f64| if x.is_finite() { json!(x) } else { Value::Null };
        json!({
            "recording": self.recording.display().to_string(),
            "sims": self.sims.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "score": self.score,
            "agree": self.agreeing(),
            "metric_count": self.metrics.len(),
            "notes": self.notes,
            "families": self.families.iter().map(|(f, s)| json!({"family": f, "score": s})).collect::<Vec<_>>(),
            "metrics": self.metrics.iter().map(|m| json!({
                "family": m.family, "metric": m.metric, "subject": m.subject,
                "real": num(m.real), "sim": num(m.sim),
                "sim_seeds": m.sim_seeds.iter().map(|s| s.map_or(Value::Null, num)).collect::<Vec<_>>(),
                "distance": num(m.distance), "tolerance": m.tol, "agrees": m.agrees, "score": m.score,
            })).collect::<Vec<_>>(),
            "tolerances": TOLERANCES.iter().map(|t| json!({
                "family": t.family, "metric": t.metric, "tolerance": t.tol, "floor": t.floor,
                "unit": t.unit, "reason": t.reason,
            })).collect::<Vec<_>>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_hand_worked() {
        // F_a - F_b at 1: .25-0, 2: .5-0, 3: .75-.25, 4: 1-.5, 5: 1-.75, 6: 0.
        assert_eq!(
            ks_statistic(&[1.0, 2.0, 3.0, 4.0], &[3.0, 4.0, 5.0, 6.0]),
            0.5
        );
        assert_eq!(ks_statistic(&[1.0, 2.0], &[2.0, 1.0]), 0.0);
        assert_eq!(ks_statistic(&[1.0], &[2.0]), 1.0);
        // Ties across samples: at 1: 2/3 vs 1/3; at 2: 1 vs 1.
        let d = ks_statistic(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]);
        assert!((d - 1.0 / 3.0).abs() < 1e-12, "{d}");
        // Different sizes: a = {0, 10}, b = {5}: at 0: .5 vs 0; at 5: .5 vs 1; at 10: 1 vs 1.
        assert_eq!(ks_statistic(&[10.0, 0.0], &[5.0]), 0.5);
        assert_eq!(ks_statistic(&[], &[1.0]), 0.0);
    }

    #[test]
    fn percentiles_nearest_rank() {
        let v: Vec<u64> = (1..=10).map(|x| x * 10).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 90.0), Some(90));
        assert_eq!(percentile(&v, 99.0), Some(100));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&v, 0.0), Some(10));
        assert_eq!(percentile(&[1, 2, 3], 50.0), Some(2));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }

    #[test]
    fn relative_error_and_score_formula() {
        assert_eq!(rel_error(100.0, 150.0, 20.0), 0.5);
        assert_eq!(rel_error(5.0, 15.0, 20.0), 0.5); // floor
        assert_eq!(rel_error(0.0, 0.0, 0.0), 0.0);
        assert_eq!(metric_score(0.0, 0.5), 1.0);
        assert_eq!(metric_score(0.5, 0.5), 0.5);
        assert_eq!(metric_score(1.0, 0.5), 0.0);
        assert_eq!(metric_score(9.0, 0.5), 0.0);
        assert_eq!(metric_score(f64::INFINITY, 0.5), 0.0);
        let mk = |family, s| MetricResult {
            family,
            metric: "p50",
            subject: String::new(),
            real: 0.0,
            sim: 0.0,
            sim_seeds: vec![],
            distance: 0.0,
            tol: 1.0,
            agrees: true,
            score: s,
        };
        // Family a: (1 + 0) / 2 = 0.5; family b: 1; overall 0.75.
        let (f, s) = score(&[mk("a", 1.0), mk("b", 1.0), mk("a", 0.0)]);
        assert_eq!(f, vec![("a", 0.5), ("b", 1.0)]);
        assert_eq!(s, 0.75);
        assert_eq!(score(&[]).1, 0.0);
        for t in TOLERANCES {
            assert!(t.tol > 0.0 && !t.reason.is_empty(), "{t:?}");
        }
    }

    #[test]
    fn the_docs_table_is_this_table() {
        let doc = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fidelity-score.md"),
        )
        .unwrap();
        for t in TOLERANCES {
            let row = format!("| `{}` | `{}` | {} |", t.family, t.metric, t.tol);
            assert!(doc.contains(&row), "docs/fidelity-score.md lacks {row}");
        }
    }

    #[test]
    fn classes() {
        assert_eq!(class_of("p-12", "SCHED_NORMAL"), "p SCHED_NORMAL");
        assert_eq!(class_of("hb-s0-3", "SCHED_NORMAL"), "hb-s0 SCHED_NORMAL");
        assert_eq!(class_of("hog", "SCHED_IDLE"), "hog SCHED_IDLE");
        assert_eq!(class_of("a-b", "SCHED_BATCH"), "a-b SCHED_BATCH");
    }

    fn golden(case: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../schedlab-cli/tests/golden/baseline/out")
            .join(case)
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                copy_dir(&p, &to.join(e.file_name()));
            } else {
                std::fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    }

    /// A simulated run relabelled as a recording (a host.json added).
    fn fake_recording(case: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        copy_dir(&golden(case), d.path());
        std::fs::write(d.path().join("host.json"), "{\"version\": 1}\n").unwrap();
        d
    }

    #[test]
    fn a_run_against_itself_scores_one_and_agrees_everywhere() {
        for case in ["periodic-mix", "quota-legacy", "hackbench-cgroup"] {
            let real = fake_recording(case);
            let sims = vec![golden(case), real.path().to_path_buf()];
            let r = validate(real.path(), &sims).unwrap();
            assert!(!r.metrics.is_empty());
            for m in &r.metrics {
                assert!(m.agrees && m.distance == 0.0, "{case}: {m:?}");
            }
            assert_eq!(r.score, 1.0, "{case}");
            let text = r.to_text();
            assert!(text.contains("fidelity score 1.000"), "{text}");
            let j = r.to_json();
            assert_eq!(j["score"], 1.0);
            assert_eq!(j["tolerances"].as_array().unwrap().len(), TOLERANCES.len());
            let fams: Vec<&str> = r.families.iter().map(|f| f.0).collect();
            match case {
                "periodic-mix" => {
                    for f in [
                        "wakeup_latency",
                        "missed_periods",
                        "run_period",
                        "switching",
                        "cpu_util",
                    ] {
                        assert!(fams.contains(&f), "{case}: {fams:?}");
                    }
                }
                "quota-legacy" => assert!(fams.contains(&"cpu_stat"), "{fams:?}"),
                _ => assert!(fams.contains(&"workload_time"), "{fams:?}"),
            }
        }
    }

    #[test]
    fn a_different_run_scores_below_one() {
        let real = fake_recording("periodic-mix");
        let r = validate(real.path(), &[golden("periodic-mix-a7")]).unwrap();
        assert!(r.score < 1.0 && r.score >= 0.0, "{}", r.to_text());
    }

    #[test]
    fn bad_recordings_give_one_line_with_the_place() {
        let one_line = |e: &InputError| {
            let s = e.to_string();
            assert!(!s.contains('\n'), "{s}");
            s
        };
        // Not a recording: no host.json.
        let d = tempfile::tempdir().unwrap();
        copy_dir(&golden("periodic-mix"), d.path());
        let e = validate(d.path(), &[golden("periodic-mix")]).unwrap_err();
        let s = one_line(&e);
        assert!(
            s.contains("host.json: missing") && s.contains("schedlab record"),
            "{s}"
        );
        // Not a directory.
        let e = validate(&d.path().join("nope"), &[golden("periodic-mix")]).unwrap_err();
        assert!(one_line(&e).contains("not a directory"));
        // Broken host.json: the line.
        std::fs::write(d.path().join("host.json"), "{\n\"version\": 1,\n}\n").unwrap();
        let e = validate(d.path(), &[golden("periodic-mix")]).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        // A broken trace line: its number.
        std::fs::write(d.path().join("host.json"), "{}\n").unwrap();
        let tp = d.path().join("trace.txt");
        let mut t = std::fs::read_to_string(&tp).unwrap();
        let n = t.lines().count();
        t.push_str("          p-1001  [000] d..2.   bad: sched_switch: x\n");
        std::fs::write(&tp, t).unwrap();
        let e = validate(d.path(), &[golden("periodic-mix")]).unwrap_err();
        let s = one_line(&e);
        assert!(
            s.starts_with(&format!("{}:{}: ", tp.display(), n + 1)),
            "{s}"
        );
        // Missing trace.
        std::fs::remove_file(&tp).unwrap();
        let e = validate(d.path(), &[golden("periodic-mix")]).unwrap_err();
        assert!(one_line(&e).contains("trace.txt: missing"));
        // A broken log row in a simulated run.
        let real = fake_recording("periodic-mix");
        let sim = fake_recording("periodic-mix");
        let lp = sim.path().join("rt-app-periodic-0.log");
        let mut l = std::fs::read_to_string(&lp).unwrap();
        l.push_str("1 2 3\n");
        std::fs::write(&lp, &l).unwrap();
        let e = validate(real.path(), &[sim.path().to_path_buf()]).unwrap_err();
        assert_eq!(e.line, Some(l.lines().count()), "{e}");
        assert!(one_line(&e).contains("rt-app-periodic-0.log"));
        // A summary without tasks.
        std::fs::write(sim.path().join("summary.json"), "{}").unwrap();
        let e = validate(real.path(), &[sim.path().to_path_buf()]).unwrap_err();
        assert!(one_line(&e).contains("summary.json"), "{e}");
    }
}
