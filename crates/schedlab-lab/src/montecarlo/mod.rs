//! Monte-Carlo screening of a scheduler change before anyone books
//! hardware: N seeded random scenarios per machine
//! (`schedlab_workload::scenario`), both sides (the base and the new
//! feature sets) over several seeds each, run as a sweep (same directory
//! layout, resume and dataset as [`crate::sweep`]; the Python package runs
//! the same points on Ray), then every scenario and metric where the sides
//! differ beyond seed-to-seed noise: the difference of the means must pass
//! an absolute threshold (the metric's, [`METRICS`]), a relative one and
//! Welch's two-sided t-test. Each metric has a direction, so a finding
//! reads `better` or `worse`.

mod welch;

pub use welch::welch;

use crate::machine::MachineError;
use crate::progress::{default_jobs, Progress};
use crate::sweep::{self, Better, LocalRun, Point, Runner, SweepError, METRICS};
use schedlab_output::table::fmt_g;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use welch::mean_var;

/// Why a screening failed. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum MonteCarloError {
    /// The significance level is not in (0, 1).
    #[error("--alpha: a probability between 0 and 1")]
    Alpha,
    /// The relative threshold is negative (or not a number).
    #[error("--rel: a fraction >= 0")]
    Rel,
    /// No scenario, or fewer than two seeds per side.
    #[error("montecarlo: --scenarios must be at least 1 and --seeds at least 2 (the t-test needs two runs per side)")]
    TooFewRuns,
    /// No machine.
    #[error("montecarlo: --machines: at least one machine")]
    NoMachines,
    /// A machine that cannot be resolved.
    #[error(transparent)]
    Machine(#[from] MachineError),
    /// The plan is too large, or the sweep directory cannot be written.
    #[error(transparent)]
    Sweep(#[from] SweepError),
    /// `findings.json` cannot be written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The screening's settings, shared with the Python package.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Baseline features.
    pub base: String,
    /// New features.
    pub new: String,
    /// Scenarios per machine.
    pub scenarios: u64,
    /// Machines.
    pub machines: Vec<String>,
    /// Seeds per side.
    pub seeds: u64,
    /// Master seed.
    pub seed: u64,
    /// Run length.
    pub duration: String,
    /// Most runs the plan may make (machines x scenarios x 2 sides x seeds).
    pub max_points: u64,
}
/// The points of a screening: machine × scenario × side × seed, each
/// scenario's rt-app text carried inline (so a remote worker needs no file).
pub fn points(p: &Plan) -> Result<Vec<Point>, MonteCarloError> {
    if p.scenarios == 0 || p.seeds < 2 {
        return Err(MonteCarloError::TooFewRuns);
    }
    if p.machines.is_empty() {
        return Err(MonteCarloError::NoMachines);
    }
    sweep::check_points(
        "montecarlo",
        &[
            ("machines", p.machines.len() as u64),
            ("scenarios", p.scenarios),
            ("sides", 2),
            ("seeds", p.seeds),
        ],
        p.max_points,
    )?;
    let mut out = Vec::new();
    for machine in &p.machines {
        let nr_cpus = crate::machine::resolve(machine)?.nr_cpus();
        for i in 0..p.scenarios {
            let (text, _) = schedlab_workload::scenario::scenario(p.seed, machine, nr_cpus, i);
            for (side, features) in [("base", &p.base), ("new", &p.new)] {
                for s in 0..p.seeds {
                    let mut pt = Point {
                        index: out.len(),
                        id: String::new(),
                        machine: machine.clone(),
                        kernel: "default".into(),
                        features: features.clone(),
                        sysctl: String::new(),
                        workload: format!("scenario:{i}"),
                        workload_text: Some(text.clone()),
                        seed: p.seed + s,
                        duration: Some(p.duration.clone()),
                        tags: vec![
                            ("scenario".into(), i.to_string()),
                            ("side".into(), side.into()),
                        ],
                    };
                    pt.make_id();
                    out.push(pt);
                }
            }
        }
    }
    Ok(out)
}

/// Partition columns of a screening's dataset.
pub fn partition_by() -> Vec<String> {
    vec!["machine".into(), "side".into()]
}

/// Screening thresholds.
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    /// Welch's significance level.
    pub alpha: f64,
    /// Relative difference of the means.
    pub rel: f64,
}

/// The findings from the recorded rows of `points`: every (machine,
/// scenario, metric with a direction) whose sides differ beyond noise, and
/// every scenario with a failed run. JSON objects, in plan order.
pub fn findings(root: &Path, points: &[Point], th: Thresholds) -> Vec<Value> {
    let rows = sweep::load_rows(root, points);
    // (machine, scenario) -> (base rows, new rows), in plan order.
    type Group = ((String, String), Vec<Value>, Vec<Value>);
    let mut groups: Vec<Group> = Vec::new();
    for (p, r) in points.iter().zip(rows) {
        let Some(r) = r else { continue };
        let tag = |k: &str| {
            p.tags
                .iter()
                .find(|(t, _)| t == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let key = (p.machine.clone(), tag("scenario"));
        let g = match groups.iter_mut().position(|(k, _, _)| *k == key) {
            Some(i) => &mut groups[i],
            None => {
                groups.push((key, Vec::new(), Vec::new()));
                groups.last_mut().expect("just pushed")
            }
        };
        if tag("side") == "base" {
            g.1.push(r);
        } else {
            g.2.push(r);
        }
    }
    let mut out = Vec::new();
    for ((machine, scenario), base, new) in groups {
        let failed: Vec<&Value> = base
            .iter()
            .chain(&new)
            .filter(|r| r["status"] != "ok")
            .collect();
        if !failed.is_empty() {
            out.push(json!({
                "machine": machine, "scenario": scenario, "metric": "(run failed)",
                "verdict": "error", "error": failed[0]["error"],
            }));
            continue;
        }
        for metric in METRICS.iter().filter(|m| m.better != Better::Neither) {
            let vals = |rows: &[Value]| -> Vec<f64> {
                rows.iter()
                    .filter_map(|r| r[metric.name].as_f64())
                    .collect()
            };
            let (a, b) = (vals(&base), vals(&new));
            if a.len() < 2 || b.len() < 2 {
                continue;
            }
            let (ma, _) = mean_var(&a);
            let (mb, _) = mean_var(&b);
            let diff = mb - ma;
            let rel = if ma != 0.0 {
                diff / ma.abs()
            } else if diff == 0.0 {
                0.0
            } else {
                f64::INFINITY.copysign(diff)
            };
            let (t, df, p) = welch(&a, &b);
            if diff.abs() < metric.min_abs || rel.abs() < th.rel || p >= th.alpha {
                continue;
            }
            let better = match metric.better {
                Better::Lower => diff < 0.0,
                _ => diff > 0.0,
            };
            out.push(json!({
                "machine": machine, "scenario": scenario, "metric": metric.name,
                "base_mean": ma, "new_mean": mb, "diff": diff,
                "rel": if rel.is_finite() { json!(rel) } else { Value::Null },
                "t": if t.is_finite() { json!(t) } else { Value::Null },
                "df": df, "p": p, "n_base": a.len(), "n_new": b.len(),
                "verdict": if better { "better" } else { "worse" },
            }));
        }
    }
    out
}

/// The findings as a text table.
pub fn render(findings: &[Value], plan: &Plan, th: Thresholds) -> String {
    let mut s = format!(
        "montecarlo: {} scenario(s) x {} machine(s), {} seeds per side; base \"{}\" vs new \"{}\"; reported: |diff| >= the metric's threshold, |rel| >= {}, Welch p < {}\n",
        plan.scenarios,
        plan.machines.len(),
        plan.seeds,
        plan.base,
        plan.new,
        th.rel,
        th.alpha
    );
    if findings.is_empty() {
        s += "no scenario differs beyond seed-to-seed noise\n";
        return s;
    }
    s += &format!(
        "{:<14} {:>8} {:<24} {:>14} {:>14} {:>9} {:>9}  {}\n",
        "machine", "scenario", "metric", "base", "new", "rel", "p", "verdict"
    );
    for f in findings {
        if f["verdict"] == "error" {
            s += &format!(
                "{:<14} {:>8} {:<24} {}\n",
                f["machine"].as_str().unwrap_or(""),
                f["scenario"].as_str().unwrap_or(""),
                "(run failed)",
                f["error"].as_str().unwrap_or("")
            );
            continue;
        }
        let g = |k: &str| f[k].as_f64().unwrap_or(f64::NAN);
        s += &format!(
            "{:<14} {:>8} {:<24} {:>14} {:>14} {:>+8.1}% {:>9.2e}  {}\n",
            f["machine"].as_str().unwrap_or(""),
            f["scenario"].as_str().unwrap_or(""),
            f["metric"].as_str().unwrap_or(""),
            fmt_g(g("base_mean"), 6),
            fmt_g(g("new_mean"), 6),
            g("rel") * 100.0,
            g("p"),
            f["verdict"].as_str().unwrap_or("")
        );
    }
    s
}

/// A screening to run in a sweep directory on local threads.
pub struct ScreeningOptions<'a> {
    /// What to run.
    pub plan: Plan,
    /// What counts as a finding.
    pub thresholds: Thresholds,
    /// The sweep directory (finished runs in it are skipped).
    pub out: PathBuf,
    /// Simultaneous runs (default: one per CPU; 0 is taken as 1).
    pub jobs: Option<usize>,
    /// Makes each run.
    pub runner: Runner<'a>,
    /// Told of each finished run.
    pub progress: &'a dyn Progress,
}

/// A finished screening.
#[derive(Debug, Clone)]
pub struct Screening {
    /// The findings ([`findings`]), also in `OUT/findings.json`.
    pub findings: Vec<Value>,
    /// The runs' counts.
    pub counts: sweep::Counts,
    /// The dataset directory.
    pub dataset: PathBuf,
}

/// Runs a screening: the plan's points as a sweep into `out`, then the
/// findings, written to `OUT/findings.json` (pretty JSON) and returned.
pub fn screen(o: &ScreeningOptions) -> Result<Screening, MonteCarloError> {
    let th = o.thresholds;
    if !(0.0..1.0).contains(&th.alpha) || th.alpha == 0.0 {
        return Err(MonteCarloError::Alpha);
    }
    // Negative, or not a number.
    if th.rel.is_nan() || th.rel < 0.0 {
        return Err(MonteCarloError::Rel);
    }
    let pts = points(&o.plan)?;
    let jobs = o.jobs.unwrap_or_else(default_jobs).max(1);
    let f = sweep::run_local(&LocalRun {
        root: &o.out,
        points: &pts,
        partition_by: &partition_by(),
        jobs,
        runner: o.runner,
        progress: o.progress,
    })?;
    let found = findings(&o.out, &pts, th);
    std::fs::write(o.out.join("findings.json"), findings_json(&found))?;
    Ok(Screening {
        findings: found,
        counts: f.counts,
        dataset: f.dataset,
    })
}

/// The findings as `findings.json` holds them (pretty JSON).
pub fn findings_json(findings: &[Value]) -> String {
    serde_json::to_string_pretty(findings).expect("JSON values")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_needs_two_seeds() {
        let p = Plan {
            base: String::new(),
            new: "STEAL".into(),
            scenarios: 2,
            machines: vec!["vm-2cpu".into()],
            seeds: 1,
            seed: 1,
            duration: "1s".into(),
            max_points: sweep::DEFAULT_MAX_POINTS,
        };
        assert!(points(&p)
            .unwrap_err()
            .to_string()
            .contains("--seeds at least 2"));
        let p = Plan { seeds: 2, ..p };
        let pts = points(&p).unwrap();
        assert_eq!(pts.len(), 2 * 2 * 2);
        assert_ne!(pts[0].id, pts[2].id);
        // Past --max-points (and past u64): refused before any is built.
        for (scenarios, seeds, want) in [
            (
                100_000,
                2,
                "400000 points (1 machines x 100000 scenarios x 2 sides x 2 seeds)",
            ),
            (u64::MAX, u64::MAX, "more than 2^64 points"),
        ] {
            let e = points(&Plan {
                scenarios,
                seeds,
                ..p.clone()
            })
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("montecarlo: ") && e.contains(want), "{e}");
            assert!(e.contains("--max-points"), "{e}");
        }
    }
}
