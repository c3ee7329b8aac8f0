//! `schedlab montecarlo`: screening a scheduler change before anyone books
//! hardware. N seeded random scenarios per machine
//! (`schedlab_workload::scenario`), both sides (`--base` and `--new`
//! feature sets) over several seeds each, run as a sweep (same directory
//! layout, resume and dataset as `schedlab sweep`; Python can run the same
//! points on Ray), then every scenario and metric where the sides differ
//! beyond seed-to-seed noise: the difference of the means must pass an
//! absolute threshold (the metric's, `sweep::METRICS`), a relative one
//! (`--rel`) and Welch's two-sided t-test (`--alpha`). Each metric has a
//! direction, so a finding reads `better` or `worse`.

use crate::sweep::{self, Better, Point, METRICS};
use crate::user;
use anyhow::Result;
use clap::Args;
use schedlab_output::table::fmt_g;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `schedlab montecarlo` arguments.
#[derive(Args, Debug, Clone)]
pub struct MonteCarloArgs {
    /// Feature switches of the baseline side (NAME, NO_NAME, NAME=value,
    /// comma-separated; empty: the defaults).
    #[arg(long, default_value = "")]
    pub base: String,
    /// Feature switches of the new side.
    #[arg(long)]
    pub new: String,
    /// Most runs the screening may make (machines x scenarios x 2 sides x
    /// seeds); more is refused before any is built.
    #[arg(long, default_value_t = sweep::DEFAULT_MAX_POINTS)]
    pub max_points: u64,
    /// Random scenarios per machine.
    #[arg(long, default_value_t = 10)]
    pub scenarios: u64,
    /// Machines, comma-separated presets (or `sysfs:DIR`).
    #[arg(long, default_value = "vm-2cpu", value_delimiter = ',')]
    pub machines: Vec<String>,
    /// Runs per side and scenario (seeds SEED .. SEED + SEEDS − 1).
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    /// Master seed: the scenarios and the first run seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulated time of each run.
    #[arg(long, default_value = "1s")]
    pub duration: String,
    /// Significance level of Welch's t-test.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Smallest relative difference of the means reported (0.05 = 5 %).
    #[arg(long, default_value_t = 0.05)]
    pub rel: f64,
    /// Sweep directory (finished runs in it are skipped).
    #[arg(long, default_value = "montecarlo.out")]
    pub out: PathBuf,
    /// Simultaneous runs (default: one per CPU).
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Also write the findings as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
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
}

/// The points of a screening: machine × scenario × side × seed, each
/// scenario's rt-app text carried inline (so a remote worker needs no file).
pub fn points(p: &Plan) -> Result<Vec<Point>> {
    if p.scenarios == 0 || p.seeds < 2 {
        return Err(user(
            "montecarlo: --scenarios must be at least 1 and --seeds at least 2 (the t-test needs two runs per side)",
        ));
    }
    if p.machines.is_empty() {
        return Err(user("montecarlo: --machines: at least one machine"));
    }
    sweep::check_points(
        "montecarlo",
        &[
            ("machines", p.machines.len() as u64),
            ("scenarios", p.scenarios),
            ("sides", 2),
            ("seeds", p.seeds),
        ],
    )?;
    let mut out = Vec::new();
    for machine in &p.machines {
        let nr_cpus = crate::resolve::machine(machine)?.nr_cpus();
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

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 coefficients).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz), with the symmetry relation for convergence.
fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - inc_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        // Even step.
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        d = if d.abs() < tiny { 1.0 / tiny } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < tiny {
            c = tiny;
        }
        f *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < tiny { 1.0 / tiny } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < tiny {
            c = tiny;
        }
        let delta = d * c;
        f *= delta;
        if (delta - 1.0).abs() < 1e-14 {
            break;
        }
    }
    front * f / a
}

/// Welch's two-sided t-test: (t, degrees of freedom, p). Two constant
/// samples give p = 0 when their means differ and 1 when they do not.
pub fn welch(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return if ma == mb {
            (0.0, na + nb - 2.0, 1.0)
        } else {
            (f64::INFINITY.copysign(mb - ma), na + nb - 2.0, 0.0)
        };
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let p = inc_beta(df / (df + t * t), df / 2.0, 0.5);
    (t, df, p.clamp(0.0, 1.0))
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
    let mut groups: Vec<((String, String), Vec<Value>, Vec<Value>)> = Vec::new();
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

/// `schedlab montecarlo`.
pub fn run(a: &MonteCarloArgs) -> Result<ExitCode> {
    if !(0.0..1.0).contains(&a.alpha) || a.alpha == 0.0 {
        return Err(user("--alpha: a probability between 0 and 1"));
    }
    if !(a.rel >= 0.0) {
        return Err(user("--rel: a fraction >= 0"));
    }
    let plan = Plan {
        base: a.base.clone(),
        new: a.new.clone(),
        scenarios: a.scenarios,
        machines: a.machines.clone(),
        seeds: a.seeds,
        seed: a.seed,
        duration: a.duration.clone(),
    };
    sweep::set_max_points(a.max_points);
    let pts = points(&plan)?;
    let jobs = a.jobs.unwrap_or_else(sweep::default_jobs).max(1);
    use std::io::IsTerminal;
    let progress = !a.quiet && std::io::stderr().is_terminal();
    sweep::run_local(&a.out, &pts, &partition_by(), jobs, progress)?;
    let th = Thresholds {
        alpha: a.alpha,
        rel: a.rel,
    };
    let f = findings(&a.out, &pts, th);
    let text = serde_json::to_string_pretty(&f)?;
    std::fs::write(a.out.join("findings.json"), &text)?;
    if let Some(j) = &a.json {
        std::fs::write(j, &text).map_err(|e| user(format!("{}: {e}", j.display())))?;
    }
    print!("{}", render(&f, &plan, th));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_known_values() {
        // Direct check of the p-value routine against the t distribution:
        // P(|T| > 2.306) = 0.05 at df = 8.
        let p = inc_beta(8.0 / (8.0 + 2.306 * 2.306), 4.0, 0.5);
        assert!((p - 0.05).abs() < 5e-4, "{p}");
        // P(|T| > 12.706) = 0.05 at df = 1.
        let p = inc_beta(1.0 / (1.0 + 12.706 * 12.706), 0.5, 0.5);
        assert!((p - 0.05).abs() < 5e-4, "{p}");
        let (_, _, p) = welch(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]);
        assert!((p - 1.0).abs() < 1e-9);
        let (_, _, p) = welch(&[1.0, 1.0], &[2.0, 2.0]);
        assert_eq!(p, 0.0);
        let (t, df, p) = welch(&[10.0, 11.0, 12.0, 10.5], &[20.0, 21.0, 19.0, 20.5]);
        assert!(t > 10.0 && df > 5.0 && p < 1e-4, "{t} {df} {p}");
    }

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
