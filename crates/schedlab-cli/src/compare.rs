//! `schedlab compare`: N runs of each side (base and new feature sets)
//! differing only by seed, then the mmtests-style table of the headline
//! metrics (formats.md §7, architecture.md §2).

use crate::report::simulate;
use crate::resolve::{self, RunArgs};
use crate::user;
use anyhow::{Context, Result};
use clap::Args;
use schedlab_core::features::Features;
use schedlab_core::observe::NullSink;
use schedlab_core::stats::SampleStats;
use schedlab_core::time::NSEC_PER_SEC;
use schedlab_output::compare::{render_json, render_table, Better, Metric};
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab compare` arguments.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Workload: an rt-app JSON file.
    pub workload: String,
    /// Feature switches of the baseline side.
    #[arg(long, default_value = "")]
    pub base: String,
    /// Feature switches of the new side.
    #[arg(long)]
    pub new: String,
    /// Runs per side (seeds first-seed .. first-seed + runs − 1).
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// First seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Machine: a preset name or `sysfs:DIR`.
    #[arg(long, default_value = "vm-2cpu")]
    pub machine: String,
    /// Run length (overrides the workload's).
    #[arg(long)]
    pub duration: Option<String>,
    /// CONFIG_HZ.
    #[arg(long, default_value_t = 250)]
    pub hz: u32,
    /// Preemption model.
    #[arg(long, default_value = "full")]
    pub preempt: String,
    /// Also write the numbers as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Task-group settings for every run, as `schedlab run --cgroup`.
    #[arg(long = "cgroup", value_name = "PATH:FILE=VALUE")]
    pub cgroup: Vec<String>,
}

/// One run's headline numbers.
struct RunFigures {
    /// hackbench's own time (release → last exit), if the run has one.
    time_s: Option<f64>,
    /// Σ over groups with a quota of throttled time, and of throttled
    /// periods (None when no group has a quota).
    throttled: Option<(f64, f64)>,
    lat_mean: f64,
    lat_max: f64,
    lat_n: f64,
    runtime_ms: f64,
    switches: f64,
    migrations: f64,
    loops_per_s: f64,
}

fn one_run(a: &CompareArgs, features: &str, seed: u64) -> Result<RunFigures> {
    let ra = RunArgs {
        workload: a.workload.clone(),
        machine: a.machine.clone(),
        features: features.to_string(),
        seed,
        duration: a.duration.clone(),
        hz: a.hz,
        preempt: a.preempt.clone(),
        out: None,
        trace: false,
        check: false,
        quiet: true,
        cgroup: a.cgroup.clone(),
    };
    let m = resolve::machine(&a.machine)?;
    let (w, _) = resolve::run_workload(&ra, m.nr_cpus())?;
    let cfg = resolve::config(&ra, &w)?;
    let (sim, res) =
        simulate(m, &w, cfg, NullSink).map_err(|e| user(format!("{}: {e}", a.workload)))?;
    let threads = sim.threads();
    let lat = SampleStats::of(threads.iter().flat_map(|t| t.wakeup_latency_samples()));
    let secs = (res.end_ns - sim.t_start) as f64 / NSEC_PER_SEC as f64;
    let time_s = sim.t_release.and_then(|rel| {
        (sim.live_tasks_left() == 0 && sim.last_exit >= rel)
            .then(|| ((sim.last_exit - rel) / 1000) as f64 / 1e6)
    });
    let bws: Vec<_> = sim.groups.iter().filter_map(|g| g.bw.as_ref()).collect();
    let throttled = (!bws.is_empty()).then(|| {
        (
            bws.iter().map(|b| b.stats.throttled_ns).sum::<u64>() as f64 / 1e6,
            bws.iter().map(|b| b.stats.nr_throttled).sum::<u64>() as f64,
        )
    });
    Ok(RunFigures {
        time_s,
        throttled,
        lat_mean: lat.mean,
        lat_max: lat.max as f64,
        lat_n: lat.n as f64,
        runtime_ms: threads.iter().map(|t| t.stats.runtime_ns).sum::<u64>() as f64 / 1e6,
        switches: threads.iter().map(|t| t.stats.switches).sum::<u64>() as f64,
        migrations: threads.iter().map(|t| t.stats.migrations).sum::<u64>() as f64,
        loops_per_s: threads.iter().map(|t| t.stats.loops).sum::<u64>() as f64 / secs.max(1e-9),
    })
}

/// `schedlab compare`.
pub fn run(a: &CompareArgs) -> Result<ExitCode> {
    if a.runs == 0 || a.runs > 1000 {
        return Err(user(format!("--runs: {} is outside 1..=1000", a.runs)));
    }
    for (flag, list) in [("--base", &a.base), ("--new", &a.new)] {
        Features::parse(list).map_err(|e| user(format!("{flag}: {e}")))?;
    }
    let sides = [("base", a.base.as_str()), ("new", a.new.as_str())];
    let mut figures: Vec<Vec<RunFigures>> = Vec::new();
    for (_, features) in sides {
        let mut v = Vec::new();
        for i in 0..a.runs as u64 {
            v.push(one_run(a, features, a.seed + i)?);
        }
        figures.push(v);
    }
    let names: Vec<String> = sides
        .iter()
        .map(|(n, f)| {
            if f.is_empty() {
                n.to_string()
            } else {
                f.to_string()
            }
        })
        .collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let metric = |name: &str, unit: &str, better: Better, f: &dyn Fn(&RunFigures) -> f64| Metric {
        name: name.into(),
        unit: unit.into(),
        better,
        per_variant: figures
            .iter()
            .map(|runs| runs.iter().map(f).collect())
            .collect(),
    };
    let has_lat = figures.iter().flatten().any(|r| r.lat_n > 0.0);
    let mut metrics = Vec::new();
    // hackbench-like runs: their own completion time first, as mmtests'
    // hackbench tables show it (seconds, lower is better).
    if figures.iter().flatten().all(|r| r.time_s.is_some()) {
        metrics.push(metric("time_s", "s", Better::Lower, &|r| r.time_s.unwrap()));
    }
    if figures.iter().flatten().all(|r| r.throttled.is_some()) {
        metrics.push(metric("throttled_ms", "ms", Better::Lower, &|r| {
            r.throttled.unwrap().0
        }));
        metrics.push(metric("nr_throttled", "n", Better::Lower, &|r| {
            r.throttled.unwrap().1
        }));
    }
    if has_lat {
        metrics.push(metric("wu_lat_mean_us", "us", Better::Lower, &|r| {
            r.lat_mean
        }));
        metrics.push(metric("wu_lat_max_us", "us", Better::Lower, &|r| r.lat_max));
        metrics.push(metric("wu_lat_samples", "n", Better::Higher, &|r| r.lat_n));
    }
    metrics.push(metric("runtime_ms", "ms", Better::Higher, &|r| {
        r.runtime_ms
    }));
    metrics.push(metric("switches", "n", Better::Lower, &|r| r.switches));
    metrics.push(metric("migrations", "n", Better::Lower, &|r| r.migrations));
    metrics.push(metric("loops_per_s", "1/s", Better::Higher, &|r| {
        r.loops_per_s
    }));
    let title = format!("{} on {} ({} runs per side)", a.workload, a.machine, a.runs);
    print!("{}", render_table(&title, &name_refs, &metrics, 2));
    if let Some(path) = &a.json {
        let v = render_json(&title, &name_refs, &metrics);
        let text = serde_json::to_string_pretty(&v)? + "\n";
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
