//! `schedlab sweep SPEC`: the cross product of machines, kernels, feature
//! sets, sysctl sets, workloads and seeds, each point one `schedlab run`
//! (through the same argument parsing as the command line, `run_argv`), on
//! local cores with a progress bar. The Python package runs the same points
//! on Ray (`schedlab.sweep(spec, backend="ray")`) through the functions
//! here: `plan`, `run_point`, `save_row`, `write_dataset`.
//!
//! A sweep directory holds
//! - `points.json`: the plan, every point with its id;
//! - `runs/<id>/`: each run's output directory (`schedlab run --out`);
//! - `runs/<id>.row.json`: its row, written atomically once the run is
//!   over, successful or not (`status`, `error`): a point with a row is
//!   finished and is skipped when the sweep runs again, so an interrupted
//!   sweep resumes where it stopped;
//! - `dataset/`: one Hive-partitioned Parquet dataset
//!   (`machine=M/kernel=K/part-0.parquet` by default), one row per finished
//!   point, rewritten whole (and atomically) at the end of every invocation.
//!
//! The row's metrics are figures of summary.json summed or averaged over
//! tasks and CPUs ([`METRICS`], `docs/python.md` lists them); each has the
//! direction Monte-Carlo screening judges it by.

use crate::user;
use anyhow::{Context, Result};
use clap::Args;
use schedlab_output::parquet::{self, Column};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `schedlab sweep` arguments.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep spec: a TOML (or JSON) file with the lists `machines`,
    /// `kernels`, `features`, `sysctls`, `workloads`, `seeds`, and
    /// `duration`, `out`, `partition_by` (docs/python.md). Workload files
    /// and `out` are relative to the spec's directory.
    pub spec: PathBuf,
    /// The sweep directory (default: the spec's `out`, else SPEC's name
    /// with `.sweep`). Finished points in it are skipped.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simultaneous runs (default: one per CPU).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Print nothing on success and draw no progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Most points the spec may make (its lists' cross product); more is
    /// refused before any point is built.
    #[arg(long, default_value_t = DEFAULT_MAX_POINTS)]
    pub max_points: u64,
}

/// The default of [`max_points`]: 100 000 points. What a sweep keeps
/// itself grows ~9 KB a point (measured, docs/limits.md), so ~1 GB; the
/// runs take at least milliseconds each.
pub const DEFAULT_MAX_POINTS: u64 = 100_000;

static MAX_POINTS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_MAX_POINTS);

/// Most points a sweep or a screening may have: [`DEFAULT_MAX_POINTS`]
/// unless `--max-points` changed it ([`set_max_points`]).
pub fn max_points() -> u64 {
    MAX_POINTS.load(Ordering::Relaxed)
}

/// Sets [`max_points`] for the process.
pub fn set_max_points(n: u64) {
    MAX_POINTS.store(n, Ordering::Relaxed);
}

/// Refuses a plan of `parts` (name, count) whose product is past
/// [`max_points`], before any point is built.
pub fn check_points(what: &str, parts: &[(&str, u64)]) -> Result<()> {
    let n = parts
        .iter()
        .try_fold(1u64, |acc, (_, k)| acc.checked_mul(*k));
    let max = max_points();
    if n.is_some_and(|n| n <= max) {
        return Ok(());
    }
    let product = parts
        .iter()
        .map(|(name, k)| format!("{k} {name}"))
        .collect::<Vec<_>>()
        .join(" x ");
    let n = n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string());
    Err(user(format!(
        "{what}: {n} points ({product}), more than the limit of {max}: --max-points raises it"
    )))
}

/// Which way a metric is better, for screening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Smaller is better (latency, waiting, misses).
    Lower,
    /// Larger is better (throughput).
    Higher,
    /// Neither: descriptive only.
    Neither,
}

/// A row metric: name, integer or not, direction, the smallest absolute
/// difference that matters for screening (in the metric's unit).
pub struct Metric {
    /// Column name.
    pub name: &'static str,
    /// INT64 column (else DOUBLE).
    pub int: bool,
    /// Direction.
    pub better: Better,
    /// Absolute threshold for `schedlab montecarlo`.
    pub min_abs: f64,
}

const fn m(name: &'static str, int: bool, better: Better, min_abs: f64) -> Metric {
    Metric {
        name,
        int,
        better,
        min_abs,
    }
}

/// The metric columns of a sweep row, in order. The absolute thresholds are
/// screening conventions (a difference below them is not worth a report:
/// 1 µs of mean latency, 1 ms of waiting or idle time, one event), not
/// kernel figures.
pub const METRICS: &[Metric] = &[
    m("duration_ns", true, Better::Neither, 0.0),
    m("events", true, Better::Neither, 0.0),
    m("throughput_per_s", false, Better::Higher, 1.0),
    m("loops", true, Better::Higher, 1.0),
    m("runtime_ns", true, Better::Neither, 0.0),
    m("wait_ns", true, Better::Lower, 1e6),
    m("switches", true, Better::Neither, 0.0),
    m("migrations", true, Better::Lower, 1.0),
    m("wakeups", true, Better::Neither, 0.0),
    m("wakeup_latency_n", true, Better::Neither, 0.0),
    m("wakeup_latency_mean_us", false, Better::Lower, 1.0),
    m("wakeup_latency_max_us", true, Better::Lower, 10.0),
    m("deadline_periods", true, Better::Neither, 0.0),
    m("deadline_missed", true, Better::Lower, 1.0),
    m("busy_ns", true, Better::Neither, 0.0),
    m("idle_ns", true, Better::Neither, 0.0),
    m("utilisation", false, Better::Neither, 0.0),
    m("sched_overhead_ns", true, Better::Lower, 1e5),
    m("steal", true, Better::Neither, 0.0),
    m("wasted_idle_ns", true, Better::Lower, 1e6),
    m("throttled_usec", true, Better::Lower, 1000.0),
    m("nr_throttled", true, Better::Lower, 1.0),
    m("workload_time_s", false, Better::Lower, 0.001),
];

/// The metrics of one summary.json, in [`METRICS`] order (`None` where the
/// run has no such figure: no timer rows, no quota, no completion time).
pub fn metrics(s: &Value) -> Vec<Option<f64>> {
    let arr = |k: &str| s[k].as_array().cloned().unwrap_or_default();
    let tasks = arr("tasks");
    let cpus = arr("cpus");
    let groups = arr("groups");
    let sum = |items: &[Value], f: &dyn Fn(&Value) -> Option<f64>| -> f64 {
        items.iter().filter_map(f).sum()
    };
    let num = |v: &Value| v.as_f64();
    let duration = s["duration_ns"].as_f64();
    let lat_n = sum(&tasks, &|t| num(&t["wakeup_latency_us"]["n"]));
    let lat_sum = sum(&tasks, &|t| num(&t["wakeup_latency_us"]["sum"]));
    let lat_max = tasks
        .iter()
        .filter(|t| t["wakeup_latency_us"]["n"].as_f64().unwrap_or(0.0) > 0.0)
        .filter_map(|t| num(&t["wakeup_latency_us"]["max"]))
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
    let has_deadlines = tasks.iter().any(|t| t.get("deadlines").is_some());
    let quota_groups: Vec<Value> = groups
        .iter()
        .filter(|g| g["cpu_stat"]["nr_periods"].as_f64().unwrap_or(0.0) > 0.0)
        .cloned()
        .collect();
    let busy = sum(&cpus, &|c| num(&c["busy_ns"]));
    let mut out = Vec::with_capacity(METRICS.len());
    for metric in METRICS {
        let v = match metric.name {
            "duration_ns" => duration,
            "events" => num(&s["events"]),
            "throughput_per_s" => num(&s["throughput_per_s"]),
            "loops" | "runtime_ns" | "wait_ns" | "switches" | "migrations" | "wakeups" => {
                Some(sum(&tasks, &|t| num(&t[metric.name])))
            }
            "wakeup_latency_n" => Some(lat_n),
            "wakeup_latency_mean_us" => (lat_n > 0.0).then(|| lat_sum / lat_n),
            "wakeup_latency_max_us" => lat_max,
            "deadline_periods" => {
                has_deadlines.then(|| sum(&tasks, &|t| num(&t["deadlines"]["periods"])))
            }
            "deadline_missed" => {
                has_deadlines.then(|| sum(&tasks, &|t| num(&t["deadlines"]["missed"])))
            }
            "busy_ns" => Some(busy),
            "idle_ns" => Some(sum(&cpus, &|c| num(&c["idle_ns"]))),
            "utilisation" => duration
                .filter(|d| *d > 0.0 && !cpus.is_empty())
                .map(|d| busy / (d * cpus.len() as f64)),
            "sched_overhead_ns" => Some(sum(&cpus, &|c| num(&c["sched_overhead_ns"]))),
            "steal" => Some(sum(&cpus, &|c| num(&c["steal"]))),
            "wasted_idle_ns" => num(&s["wasted_idle_ns"]),
            "throttled_usec" => (!quota_groups.is_empty())
                .then(|| sum(&quota_groups, &|g| num(&g["cpu_stat"]["throttled_usec"]))),
            "nr_throttled" => (!quota_groups.is_empty())
                .then(|| sum(&quota_groups, &|g| num(&g["cpu_stat"]["nr_throttled"]))),
            "workload_time_s" => num(&s["workload_time_s"]),
            _ => None,
        };
        out.push(v);
    }
    out
}

/// One run of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Position in the plan.
    pub index: usize,
    /// Stable id: a hash of everything that defines the run.
    pub id: String,
    /// Machine preset or `sysfs:DIR`.
    pub machine: String,
    /// Kernel variant (`default`: the CLI's default, no `--kernel`).
    pub kernel: String,
    /// `--features` value.
    pub features: String,
    /// sysctl settings, `NAME=VALUE` comma-separated, each one `--sysctl`.
    pub sysctl: String,
    /// The workload as the spec names it (a path, a generator spec, or
    /// `inline:<hash>` for an rt-app object given inline).
    pub workload: String,
    /// The rt-app text of an inline workload (written beside the run).
    pub workload_text: Option<String>,
    /// `--seed`.
    pub seed: u64,
    /// `--duration`, if any.
    pub duration: Option<String>,
    /// Extra labels (Monte-Carlo: `scenario`, `side`), string columns.
    pub tags: Vec<(String, String)>,
}

/// FNV-1a, 64 bits: stable ids across releases and platforms.
pub fn fnv64(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Point {
    /// The id of these settings.
    pub fn make_id(&mut self) {
        let mut key = format!(
            "{}\0{}\0{}\0{}\0{}\0{}\0{}\0{}",
            self.machine,
            self.kernel,
            self.features,
            self.sysctl,
            self.workload,
            self.workload_text.as_deref().unwrap_or(""),
            self.seed,
            self.duration.as_deref().unwrap_or("")
        );
        for (k, v) in &self.tags {
            key += &format!("\0{k}={v}");
        }
        self.id = format!("{:016x}", fnv64(&key));
    }

    /// The point as JSON (the plan file, the Python package).
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("index".into(), json!(self.index));
        o.insert("id".into(), json!(self.id));
        o.insert("machine".into(), json!(self.machine));
        o.insert("kernel".into(), json!(self.kernel));
        o.insert("features".into(), json!(self.features));
        o.insert("sysctl".into(), json!(self.sysctl));
        o.insert("workload".into(), json!(self.workload));
        o.insert("workload_text".into(), json!(self.workload_text));
        o.insert("seed".into(), json!(self.seed));
        o.insert("duration".into(), json!(self.duration));
        let tags: Map<String, Value> = self
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        o.insert("tags".into(), Value::Object(tags));
        Value::Object(o)
    }

    /// The point from its JSON.
    pub fn from_json(v: &Value) -> Result<Point> {
        let s = |k: &str| -> Result<String> {
            v[k].as_str()
                .map(str::to_string)
                .with_context(|| format!("point: \"{k}\" is not a string"))
        };
        let opt = |k: &str| v[k].as_str().map(str::to_string);
        let mut p = Point {
            index: v["index"].as_u64().context("point: no \"index\"")? as usize,
            id: String::new(),
            machine: s("machine")?,
            kernel: s("kernel")?,
            features: s("features")?,
            sysctl: s("sysctl")?,
            workload: s("workload")?,
            workload_text: opt("workload_text"),
            seed: v["seed"].as_u64().context("point: no \"seed\"")?,
            duration: opt("duration"),
            tags: v["tags"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        };
        p.make_id();
        Ok(p)
    }

    /// `schedlab run` arguments of this point, writing to `out`.
    pub fn argv(&self, workload_path: &str, out: &Path) -> Vec<String> {
        let mut a: Vec<String> = vec!["schedlab".into(), "run".into(), workload_path.into()];
        let mut flag = |f: &str, v: &str| {
            a.push(f.into());
            a.push(v.into());
        };
        flag("--machine", &self.machine);
        flag("--seed", &self.seed.to_string());
        if !self.features.is_empty() {
            flag("--features", &self.features);
        }
        if let Some(d) = &self.duration {
            flag("--duration", d);
        }
        // Only when asked for, so that a sweep without kernels or sysctls
        // runs on a CLI that has no such flags.
        if self.kernel != "default" {
            flag("--kernel", &self.kernel);
        }
        for s in self
            .sysctl
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            flag("--sysctl", s);
        }
        flag("--out", &out.to_string_lossy());
        a.push("--force".into());
        a.push("--quiet".into());
        a
    }
}

/// A parsed sweep spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Points of the cross product, in order.
    pub points: Vec<Point>,
    /// The spec's `out`, if any.
    pub out: Option<String>,
    /// Partition columns of the dataset.
    pub partition_by: Vec<String>,
}

/// Columns the dataset may be partitioned by.
pub const PARTITION_KEYS: [&str; 6] = [
    "machine", "kernel", "features", "sysctl", "workload", "seed",
];

/// Reads a spec file (TOML, or JSON when it ends in `.json`).
pub fn read_spec(path: &Path) -> Result<Spec> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| user(format!("{file}: {e}")))?;
    let v: Value = if file.ends_with(".json") {
        serde_json::from_str(&text)
            .map_err(|e| user(format!("{file}:{}:{}: {e}", e.line(), e.column())))?
    } else {
        toml::from_str(&text).map_err(|e| {
            let msg = e.message().replace('\n', " ");
            match e.span() {
                Some(sp) => {
                    let line = text[..sp.start].matches('\n').count() + 1;
                    user(format!("{file}:{line}: {msg}"))
                }
                None => user(format!("{file}: {msg}")),
            }
        })?
    };
    let mut v = v;
    // A workload file named relative to the spec's directory is read from
    // there, by its absolute path (also what the Python package does).
    let base = path.parent().unwrap_or(Path::new("."));
    if let Some(Value::Array(ws)) = v.get_mut("workloads") {
        for w in ws.iter_mut() {
            if let Value::String(s) = w {
                let p = base.join(&*s);
                if Path::new(s.as_str()).is_relative() && p.is_file() {
                    if let Ok(abs) = p.canonicalize() {
                        *s = abs.to_string_lossy().into_owned();
                    }
                }
            }
        }
    }
    parse_spec(&v, &file)
}

/// A spec from its JSON value (a TOML file or a Python dict); errors name
/// `file` and the key.
pub fn parse_spec(v: &Value, file: &str) -> Result<Spec> {
    let o = v
        .as_object()
        .ok_or_else(|| user(format!("{file}: a sweep spec is a table (object) of lists")))?;
    const KEYS: [&str; 10] = [
        "machines",
        "kernels",
        "features",
        "sysctls",
        "workloads",
        "seeds",
        "duration",
        "out",
        "partition_by",
        "name",
    ];
    for k in o.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(user(format!(
                "{file}: key \"{k}\": unknown (keys: {})",
                KEYS.join(", ")
            )));
        }
    }
    let strings = |k: &str, default: &[&str]| -> Result<Vec<String>> {
        match o.get(k) {
            None => Ok(default.iter().map(|s| s.to_string()).collect()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|x| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        user(format!("{file}: key \"{k}\": every entry must be a string"))
                    })
                })
                .collect(),
            Some(_) => Err(user(format!(
                "{file}: key \"{k}\": a non-empty list of strings"
            ))),
        }
    };
    let machines = strings("machines", &["vm-2cpu"])?;
    let kernels = strings("kernels", &["default"])?;
    let features = strings("features", &[""])?;
    let sysctls = strings("sysctls", &[""])?;
    // Workloads: strings (paths, generator specs) or inline rt-app objects.
    let workloads: Vec<(String, Option<String>)> = match o.get("workloads") {
        None => return Err(user(format!("{file}: key \"workloads\": missing"))),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|w| match w {
                Value::String(s) => Ok((s.clone(), None)),
                Value::Object(_) => {
                    let text = serde_json::to_string_pretty(w).expect("JSON value");
                    Ok((format!("inline:{:08x}", fnv64(&text) as u32), Some(text)))
                }
                _ => Err(user(format!(
                    "{file}: key \"workloads\": every entry must be a path, a generator spec or an rt-app object"
                ))),
            })
            .collect::<Result<_>>()?,
        Some(Value::String(s)) => vec![(s.clone(), None)],
        Some(_) => {
            return Err(user(format!(
                "{file}: key \"workloads\": a non-empty list"
            )))
        }
    };
    let seeds: Vec<u64> = match o.get("seeds") {
        None => vec![1],
        Some(Value::Number(n)) => {
            let n = n
                .as_u64()
                .filter(|n| (1..=1_000_000).contains(n))
                .ok_or_else(|| {
                    user(format!(
                        "{file}: key \"seeds\": a count 1..=1000000 or a list of seeds"
                    ))
                })?;
            (1..=n).collect()
        }
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|x| {
                x.as_u64().ok_or_else(|| {
                    user(format!(
                        "{file}: key \"seeds\": every seed is an integer >= 0"
                    ))
                })
            })
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(user(format!(
                "{file}: key \"seeds\": a count or a non-empty list of integers"
            )))
        }
    };
    let duration = match o.get("duration") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => {
            return Err(user(format!(
                "{file}: key \"duration\": a string such as \"1s\""
            )))
        }
    };
    let out = match o.get("out") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(user(format!("{file}: key \"out\": a directory path"))),
    };
    let partition_by = strings("partition_by", &["machine", "kernel"])?;
    for k in &partition_by {
        if !PARTITION_KEYS.contains(&k.as_str()) {
            return Err(user(format!(
                "{file}: key \"partition_by\": \"{k}\" is not one of {}",
                PARTITION_KEYS.join(", ")
            )));
        }
    }
    check_points(
        file,
        &[
            ("machines", machines.len() as u64),
            ("kernels", kernels.len() as u64),
            ("features", features.len() as u64),
            ("sysctls", sysctls.len() as u64),
            ("workloads", workloads.len() as u64),
            ("seeds", seeds.len() as u64),
        ],
    )?;
    let mut points = Vec::new();
    for machine in &machines {
        for kernel in &kernels {
            for f in &features {
                for sysctl in &sysctls {
                    for (w, text) in &workloads {
                        for seed in &seeds {
                            let mut p = Point {
                                index: points.len(),
                                id: String::new(),
                                machine: machine.clone(),
                                kernel: kernel.clone(),
                                features: f.clone(),
                                sysctl: sysctl.clone(),
                                workload: w.clone(),
                                workload_text: text.clone(),
                                seed: *seed,
                                duration: duration.clone(),
                                tags: Vec::new(),
                            };
                            p.make_id();
                            points.push(p);
                        }
                    }
                }
            }
        }
    }
    Ok(Spec {
        points,
        out,
        partition_by,
    })
}

/// Where a point's run directory and row live.
pub fn run_dir(root: &Path, p: &Point) -> PathBuf {
    root.join("runs").join(&p.id)
}
fn row_path(root: &Path, id: &str) -> PathBuf {
    root.join("runs").join(format!("{id}.row.json"))
}

/// Runs one point (its run directory is replaced whole) and returns its
/// row; a failed run is a row with `status` "error" and the CLI's message.
pub fn run_point(p: &Point, root: &Path) -> Value {
    let dir = run_dir(root, p);
    let result = (|| -> std::result::Result<Value, String> {
        std::fs::create_dir_all(root.join("runs"))
            .map_err(|e| format!("{}: {e}", root.display()))?;
        let workload = match &p.workload_text {
            Some(text) => {
                let f = root.join("runs").join(format!("{}.workload.json", p.id));
                std::fs::write(&f, text).map_err(|e| format!("{}: {e}", f.display()))?;
                f.to_string_lossy().into_owned()
            }
            None => p.workload.clone(),
        };
        match crate::run_argv(&p.argv(&workload, &dir))? {
            true => {}
            false => return Err("check failed: a model invariant broke (see stderr)".into()),
        }
        let f = dir.join("summary.json");
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", f.display()))
    })();
    let mut row = Map::new();
    row.insert("point_id".into(), json!(p.id));
    row.insert("index".into(), json!(p.index));
    for (k, v) in [
        ("machine", &p.machine),
        ("kernel", &p.kernel),
        ("features", &p.features),
        ("sysctl", &p.sysctl),
        ("workload", &p.workload),
    ] {
        row.insert(k.into(), json!(v));
    }
    row.insert("seed".into(), json!(p.seed));
    row.insert("duration".into(), json!(p.duration));
    for (k, v) in &p.tags {
        row.insert(k.clone(), json!(v));
    }
    let (status, error, values) = match result {
        Ok(summary) => ("ok", None, metrics(&summary)),
        // Paths inside the sweep directory relative to it, so that a
        // dataset does not depend on where the directory is.
        Err(e) => (
            "error",
            Some(e.replace(&format!("{}/", root.display()), "")),
            vec![None; METRICS.len()],
        ),
    };
    row.insert("status".into(), json!(status));
    row.insert("error".into(), json!(error));
    row.insert("out_dir".into(), json!(format!("runs/{}", p.id)));
    for (metric, v) in METRICS.iter().zip(values) {
        let v = match v {
            Some(x) if metric.int => json!(x.round() as i64),
            Some(x) => json!(x),
            None => Value::Null,
        };
        row.insert(metric.name.into(), v);
    }
    Value::Object(row)
}

/// Writes `path` atomically (a temporary file renamed over it).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    schedlab_output::outdir::write_file_atomic(path, bytes)
        .with_context(|| path.display().to_string())
}

/// Records a finished point's row (atomically: a row file is whole or absent).
pub fn save_row(root: &Path, row: &Value) -> Result<()> {
    let id = row["point_id"].as_str().context("row without point_id")?;
    std::fs::create_dir_all(root.join("runs"))?;
    write_atomic(&row_path(root, id), serde_json::to_string(row)?.as_bytes())
}

/// The rows already recorded for `points` (in plan order, `None` when the
/// point has not finished).
pub fn load_rows(root: &Path, points: &[Point]) -> Vec<Option<Value>> {
    points
        .iter()
        .map(|p| {
            std::fs::read_to_string(row_path(root, &p.id))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
        })
        .collect()
}

/// Writes the plan (`points.json`) into the sweep directory.
pub fn save_plan(root: &Path, points: &[Point], partition_by: &[String]) -> Result<()> {
    std::fs::create_dir_all(root).map_err(|e| user(format!("{}: {e}", root.display())))?;
    let v = json!({
        "partition_by": partition_by,
        "points": points.iter().map(Point::to_json).collect::<Vec<_>>(),
    });
    write_atomic(
        &root.join("points.json"),
        serde_json::to_string_pretty(&v)?.as_bytes(),
    )
}

/// Counts of an invocation.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counts {
    /// Points in the plan.
    pub total: usize,
    /// Finished before this invocation (skipped).
    pub skipped: usize,
    /// Run now.
    pub ran: usize,
    /// Rows with status "error" (all invocations).
    pub failed: usize,
}

/// Runs the unfinished points on `jobs` threads, recording each row as it
/// finishes, then writes the dataset.
pub fn run_local(
    root: &Path,
    points: &[Point],
    partition_by: &[String],
    jobs: usize,
    progress: bool,
) -> Result<(Counts, PathBuf)> {
    save_plan(root, points, partition_by)?;
    let done = load_rows(root, points);
    let todo: Vec<&Point> = points
        .iter()
        .zip(&done)
        .filter(|(_, r)| r.is_none())
        .map(|(p, _)| p)
        .collect();
    let bar = runs_bar("sweep", todo.len() as u64, progress);
    let next = AtomicUsize::new(0);
    let first_err: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(todo.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = todo.get(i) else { break };
                let row = run_point(p, root);
                if let Err(e) = save_row(root, &row) {
                    first_err.lock().unwrap().get_or_insert(e);
                    break;
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = first_err.into_inner().unwrap() {
        return Err(e);
    }
    let dataset = write_dataset(root, points, partition_by)?;
    let rows = load_rows(root, points);
    let failed = rows
        .iter()
        .flatten()
        .filter(|r| r["status"] != "ok")
        .count();
    Ok((
        Counts {
            total: points.len(),
            skipped: points.len() - todo.len(),
            ran: todo.len(),
            failed,
        },
        dataset,
    ))
}

/// A Hive partition value: bytes other than `[A-Za-z0-9._-]` percent-encoded
/// (pyarrow decodes them), the empty string as Hive's null.
fn hive_value(s: &str) -> String {
    if s.is_empty() {
        return "__HIVE_DEFAULT_PARTITION__".into();
    }
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Writes `root/dataset` from the recorded rows of `points`: one Parquet
/// file per partition, columns in a fixed order, rows in plan order. The
/// old dataset is replaced whole. Returns the dataset's path.
pub fn write_dataset(root: &Path, points: &[Point], partition_by: &[String]) -> Result<PathBuf> {
    let rows: Vec<Value> = load_rows(root, points).into_iter().flatten().collect();
    let mut tag_keys: Vec<String> = Vec::new();
    for p in points {
        for (k, _) in &p.tags {
            if !tag_keys.contains(k) {
                tag_keys.push(k.clone());
            }
        }
    }
    // (name, kind): 0 string, 1 int, 2 float.
    let mut cols: Vec<(String, u8)> = vec![("point_id".into(), 0), ("index".into(), 1)];
    for k in ["machine", "kernel", "features", "sysctl", "workload"] {
        cols.push((k.into(), 0));
    }
    cols.push(("seed".into(), 1));
    cols.push(("duration".into(), 0));
    for k in &tag_keys {
        cols.push((k.clone(), 0));
    }
    for k in ["status", "error", "out_dir"] {
        cols.push((k.into(), 0));
    }
    for metric in METRICS {
        cols.push((metric.name.into(), if metric.int { 1 } else { 2 }));
    }
    let cols: Vec<(String, u8)> = cols
        .into_iter()
        .filter(|(n, _)| !partition_by.contains(n))
        .collect();
    // Partitions in first-seen (plan) order.
    let mut parts: Vec<(Vec<String>, Vec<&Value>)> = Vec::new();
    for r in &rows {
        let key: Vec<String> = partition_by
            .iter()
            .map(|k| match &r[k.as_str()] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                v => v.to_string(),
            })
            .collect();
        match parts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => parts.push((key, vec![r])),
        }
    }
    let final_dir = root.join("dataset");
    let tmp = root.join(format!("dataset.tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    // Removed if a signal stops the sweep before it is in place.
    let unfinished = schedlab_output::outdir::unfinished(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| tmp.display().to_string())?;
    for (key, rows) in &parts {
        let mut dir = tmp.clone();
        for (k, v) in partition_by.iter().zip(key) {
            dir.push(format!("{k}={}", hive_value(v)));
        }
        std::fs::create_dir_all(&dir)?;
        let columns: Vec<(String, Column)> = cols
            .iter()
            .map(|(name, kind)| {
                let vals = rows.iter().map(|r| &r[name.as_str()]);
                let col = match kind {
                    0 => Column::Str(
                        vals.map(|v| match v {
                            Value::Null => None,
                            Value::String(s) => Some(s.clone()),
                            v => Some(v.to_string()),
                        })
                        .collect(),
                    ),
                    1 => Column::I64(vals.map(Value::as_i64).collect()),
                    _ => Column::F64(vals.map(Value::as_f64).collect()),
                };
                (name.clone(), col)
            })
            .collect();
        parquet::write_file(&dir.join("part-0.parquet"), &columns)?;
    }
    // Replace the old dataset: move it aside, move the new one in, drop it.
    let old = root.join(format!("dataset.old{}", std::process::id()));
    unfinished.finish(|| -> Result<()> {
        if final_dir.exists() {
            std::fs::rename(&final_dir, &old)?;
        }
        std::fs::rename(&tmp, &final_dir)?;
        Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(final_dir)
}

/// The sweep directory: `--out`, else the spec's `out` (relative to the
/// spec's directory), else SPEC's name with `.sweep`.
fn sweep_root(a: &SweepArgs, spec: &Spec) -> PathBuf {
    if let Some(o) = &a.out {
        return o.clone();
    }
    if let Some(o) = &spec.out {
        let base = a.spec.parent().unwrap_or(Path::new("."));
        return base.join(o);
    }
    a.spec.with_extension("sweep")
}

/// The bar of `len` independent runs (`WHAT pos/len runs [...]`), or a
/// hidden one when `show` is false.
pub(crate) fn runs_bar(what: &str, len: u64, show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} runs [{{bar:40}}] {{elapsed_precise}} (eta {{eta}}) {{msg}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar
}

/// The default number of simultaneous runs: one per CPU.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `schedlab sweep`.
pub fn run(a: &SweepArgs) -> Result<ExitCode> {
    set_max_points(a.max_points);
    let spec = read_spec(&a.spec)?;
    let root = sweep_root(a, &spec);
    let jobs = a.jobs.unwrap_or_else(default_jobs);
    if jobs == 0 {
        return Err(user("--jobs: at least 1"));
    }
    use std::io::IsTerminal;
    let progress = !a.quiet && std::io::stderr().is_terminal();
    // What killed sweeps left in runs/ (stages of processes now gone).
    schedlab_output::outdir::clean_all_dead_stages(&root.join("runs"));
    let (c, dataset) = run_local(&root, &spec.points, &spec.partition_by, jobs, progress)?;
    if c.total > 0 && c.failed == c.total {
        // Nothing ran: an error, even with -q (the rows keep each reason).
        let rows = load_rows(&root, &spec.points);
        let first = rows
            .iter()
            .flatten()
            .find_map(|r| {
                Some(format!(
                    "{}: {}",
                    r["point_id"].as_str()?,
                    r["error"].as_str()?
                ))
            })
            .unwrap_or_default();
        let none = match c.total {
            1 => "its one point could not run: ".to_string(),
            n => format!("none of its {n} points could run (the first: "),
        };
        let close = if c.total == 1 { "" } else { ")" };
        return Err(user(format!(
            "{}: {none}{first}{close}; each point's error is in {}",
            a.spec.display(),
            dataset.display()
        )));
    }
    if !a.quiet {
        println!(
            "sweep: {} points: {} finished before, {} run now, {} failed (status \"error\" in the dataset)",
            c.total, c.skipped, c.ran, c.failed
        );
        println!(
            "dataset: {} (runs: {})",
            dataset.display(),
            root.join("runs").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_is_a_cross_product_with_stable_ids() {
        let v = json!({"machines": ["vm-2cpu", "a7-octa"], "features": ["", "STEAL"],
                       "workloads": ["hackbench:groups=1,loops=5"], "seeds": 3});
        let s = parse_spec(&v, "s.toml").unwrap();
        assert_eq!(s.points.len(), 12);
        let ids: std::collections::BTreeSet<_> = s.points.iter().map(|p| &p.id).collect();
        assert_eq!(ids.len(), 12);
        assert_eq!(
            s.points[0].id,
            parse_spec(&v, "s.toml").unwrap().points[0].id
        );
        let back = Point::from_json(&s.points[5].to_json()).unwrap();
        assert_eq!(back, s.points[5]);
    }

    #[test]
    fn bad_specs_are_one_line_errors_naming_the_key() {
        for (v, want) in [
            (
                json!({"workloads": ["x"], "machine": ["a"]}),
                "key \"machine\": unknown",
            ),
            (json!({"machines": ["a"]}), "key \"workloads\": missing"),
            (
                json!({"workloads": []}),
                "key \"workloads\": a non-empty list",
            ),
            (json!({"workloads": ["x"], "seeds": "3"}), "key \"seeds\""),
            (json!({"workloads": ["x"], "seeds": [-1]}), "key \"seeds\""),
            (
                json!({"workloads": ["x"], "partition_by": ["colour"]}),
                "\"colour\" is not one of",
            ),
            (json!({"workloads": [3]}), "key \"workloads\": every entry"),
            (json!([1]), "a sweep spec is a table"),
            (
                // 20 x 1e6 points: refused before any is built (it used to
                // allocate until malloc aborted).
                json!({"workloads": ["x"], "seeds": 1_000_000,
                       "features": ["", "A", "B", "C", "D", "E", "F", "G", "H", "I",
                                    "J", "K", "L", "M", "N", "O", "P", "Q", "R", "S"]}),
                "20000000 points (1 machines x 1 kernels x 20 features x 1 sysctls x 1 workloads x 1000000 seeds), more than the limit of 100000: --max-points raises it",
            ),
        ] {
            let e = parse_spec(&v, "s.toml").unwrap_err().to_string();
            assert!(e.starts_with("s.toml: ") && e.contains(want), "{e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn hive_values_are_percent_encoded() {
        assert_eq!(hive_value("vm-2cpu"), "vm-2cpu");
        assert_eq!(hive_value("sysfs:/a b"), "sysfs%3A%2Fa%20b");
        assert_eq!(hive_value(""), "__HIVE_DEFAULT_PARTITION__");
    }

    #[test]
    fn argv_passes_kernel_and_sysctl_only_when_set() {
        let v = json!({"workloads": ["w.json"], "kernels": ["default", "cfs"],
                       "sysctls": ["", "a=1,b=2"]});
        let s = parse_spec(&v, "s.toml").unwrap();
        let a0 = s.points[0].argv("w.json", Path::new("o")).join(" ");
        assert!(!a0.contains("--kernel") && !a0.contains("--sysctl"), "{a0}");
        let a3 = s.points[3].argv("w.json", Path::new("o")).join(" ");
        assert!(
            a3.contains("--kernel cfs --sysctl a=1 --sysctl b=2"),
            "{a3}"
        );
    }
}
