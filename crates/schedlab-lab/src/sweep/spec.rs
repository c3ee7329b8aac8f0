//! Sweep specs and their points: the cross product of the lists of a spec
//! (TOML, JSON or a Python dict), each point with a stable id and the
//! `schedlab run` command line that makes it.

use super::error::SweepError;
use serde_json::{json, Map, Value};
use std::path::Path;

/// The default most points a sweep or a screening may have: 100 000. What
/// a sweep keeps itself grows ~9 KB a point (measured, docs/limits.md), so
/// ~1 GB; the runs take at least milliseconds each.
pub const DEFAULT_MAX_POINTS: u64 = 100_000;

/// Refuses a plan of `parts` (name, count) whose product is past `max`,
/// before any point is built; `what` names the plan in the message.
pub fn check_points(what: &str, parts: &[(&str, u64)], max: u64) -> Result<(), SweepError> {
    let n = parts
        .iter()
        .try_fold(1u64, |acc, (_, k)| acc.checked_mul(*k));
    if n.is_some_and(|n| n <= max) {
        return Ok(());
    }
    let product = parts
        .iter()
        .map(|(name, k)| format!("{k} {name}"))
        .collect::<Vec<_>>()
        .join(" x ");
    Err(SweepError::TooManyPoints {
        what: what.to_string(),
        points: n.map_or_else(|| "more than 2^64".to_string(), |n| n.to_string()),
        product,
        max,
    })
}

fn spec_err(msg: impl Into<String>) -> SweepError {
    SweepError::Spec(msg.into())
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
    pub fn from_json(v: &Value) -> Result<Point, SweepError> {
        let s = |k: &str| -> Result<String, SweepError> {
            v[k].as_str()
                .map(str::to_string)
                .ok_or_else(|| SweepError::Point(format!("\"{k}\" is not a string")))
        };
        let opt = |k: &str| v[k].as_str().map(str::to_string);
        let mut p = Point {
            index: v["index"]
                .as_u64()
                .ok_or_else(|| SweepError::Point("no \"index\"".into()))?
                as usize,
            id: String::new(),
            machine: s("machine")?,
            kernel: s("kernel")?,
            features: s("features")?,
            sysctl: s("sysctl")?,
            workload: s("workload")?,
            workload_text: opt("workload_text"),
            seed: v["seed"]
                .as_u64()
                .ok_or_else(|| SweepError::Point("no \"seed\"".into()))?,
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

/// Reads a spec file (TOML, or JSON when it ends in `.json`); a spec of
/// more than `max_points` points is refused before any point is built.
pub fn read_spec(path: &Path, max_points: u64) -> Result<Spec, SweepError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| spec_err(format!("{file}: {e}")))?;
    let v: Value = if file.ends_with(".json") {
        serde_json::from_str(&text)
            .map_err(|e| spec_err(format!("{file}:{}:{}: {e}", e.line(), e.column())))?
    } else {
        toml::from_str(&text).map_err(|e| {
            let msg = e.message().replace('\n', " ");
            match e.span() {
                Some(sp) => {
                    let line = text[..sp.start].matches('\n').count() + 1;
                    spec_err(format!("{file}:{line}: {msg}"))
                }
                None => spec_err(format!("{file}: {msg}")),
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
    parse_spec(&v, &file, max_points)
}

/// A spec from its JSON value (a TOML file or a Python dict); errors name
/// `file` and the key. More than `max_points` points are refused.
pub fn parse_spec(v: &Value, file: &str, max_points: u64) -> Result<Spec, SweepError> {
    let o = v
        .as_object()
        .ok_or_else(|| spec_err(format!("{file}: a sweep spec is a table (object) of lists")))?;
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
            return Err(spec_err(format!(
                "{file}: key \"{k}\": unknown (keys: {})",
                KEYS.join(", ")
            )));
        }
    }
    let strings = |k: &str, default: &[&str]| -> Result<Vec<String>, SweepError> {
        match o.get(k) {
            None => Ok(default.iter().map(|s| s.to_string()).collect()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|x| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        spec_err(format!("{file}: key \"{k}\": every entry must be a string"))
                    })
                })
                .collect(),
            Some(_) => Err(spec_err(format!(
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
        None => return Err(spec_err(format!("{file}: key \"workloads\": missing"))),
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|w| match w {
                Value::String(s) => Ok((s.clone(), None)),
                Value::Object(_) => {
                    let text = serde_json::to_string_pretty(w).expect("JSON value");
                    Ok((format!("inline:{:08x}", fnv64(&text) as u32), Some(text)))
                }
                _ => Err(spec_err(format!(
                    "{file}: key \"workloads\": every entry must be a path, a generator spec or an rt-app object"
                ))),
            })
            .collect::<Result<_, SweepError>>()?,
        Some(Value::String(s)) => vec![(s.clone(), None)],
        Some(_) => {
            return Err(spec_err(format!(
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
                    spec_err(format!(
                        "{file}: key \"seeds\": a count 1..=1000000 or a list of seeds"
                    ))
                })?;
            (1..=n).collect()
        }
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|x| {
                x.as_u64().ok_or_else(|| {
                    spec_err(format!(
                        "{file}: key \"seeds\": every seed is an integer >= 0"
                    ))
                })
            })
            .collect::<Result<_, SweepError>>()?,
        Some(_) => {
            return Err(spec_err(format!(
                "{file}: key \"seeds\": a count or a non-empty list of integers"
            )))
        }
    };
    let duration = match o.get("duration") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(_) => {
            return Err(spec_err(format!(
                "{file}: key \"duration\": a string such as \"1s\""
            )))
        }
    };
    let out = match o.get("out") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(spec_err(format!("{file}: key \"out\": a directory path"))),
    };
    let partition_by = strings("partition_by", &["machine", "kernel"])?;
    for k in &partition_by {
        if !PARTITION_KEYS.contains(&k.as_str()) {
            return Err(spec_err(format!(
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
        max_points,
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
