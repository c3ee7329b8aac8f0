//! `schedlab compare`: N runs of each side (base and new feature sets)
//! differing only by seed, then the mmtests-style table of the headline
//! metrics (formats-spec.md §7, architecture.md §2). The figures come from the
//! library (`results::Headline`, `compare::headline_metrics`); this file
//! resolves the arguments, runs the sides and prints.

use crate::resolve::{self, SimArgs};
use crate::user;
use anyhow::Result;
use clap::Args;
use schedlab_core::observe::NullSink;
use schedlab_output::compare::{
    headline_metrics, render_json, render_posting_table, task_figures, task_metrics, TaskFigures,
};
use schedlab_output::results::{simulate, Headline, RunResults};
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab compare` arguments: a run's (`schedlab run`'s, with `--seed`
/// the first seed) plus the two feature sets and the number of runs.
#[derive(Args, Debug, Clone)]
#[command(mut_arg("seed", |a| a.help("First seed (the runs of a side use seeds SEED .. SEED + RUNS − 1)")))]
#[command(mut_arg("workload", |a| a.help("Workload of every run: an rt-app JSON file, or a generator spec such as `hackbench:groups=4,loops=100` or `oltp:workers=64` (generators: oltp, hackbench)")))]
pub struct CompareArgs {
    /// The runs.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Feature switches of the baseline side, column `base` (NAME, NO_NAME,
    /// NAME=value, comma-separated; empty: the defaults).
    #[arg(long, default_value = "")]
    pub base: String,
    /// Feature switches of the new side, column `new`.
    #[arg(long)]
    pub new: String,
    /// Per-thread rows instead of per-task-name rows.
    #[arg(long)]
    pub per_task: bool,
    /// Also print the rows whose value is the same on every side.
    #[arg(long)]
    pub all_rows: bool,
    /// Runs per side.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Also write the numbers as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Most task names (or threads) with their own rows.
const MAX_NAMES: usize = 16;

/// One run of one side: its headline figures and its per-name figures.
fn one_run(a: &CompareArgs, features: &str, seed: u64) -> Result<(Headline, Vec<TaskFigures>)> {
    let sa = SimArgs {
        seed,
        ..a.sim.clone()
    };
    let m = resolve::machine(&sa.machine)?;
    crate::preflight::check_cpus("--machine", &m, sa.max_cpus)?;
    let (w, _) = resolve::run_workload(&sa, m.nr_cpus())?;
    let cfg = resolve::config(&sa, features, false, &w)?;
    crate::preflight::check_memory(&sa.workload, &m, &w, &cfg)?;
    let (sim, res) =
        simulate(m, &w, cfg, NullSink).map_err(|e| user(format!("{}: {e}", sa.workload)))?;
    let results = RunResults::collect(&sim, &res, &w);
    let tasks = task_figures(&results, a.per_task);
    Ok((results.headline, tasks))
}

/// `schedlab compare`.
pub fn run(a: &CompareArgs) -> Result<ExitCode> {
    if a.runs == 0 || a.runs > 1000 {
        return Err(user(format!("--runs: {} is outside 1..=1000", a.runs)));
    }
    for (flag, list) in [("--base", &a.base), ("--new", &a.new)] {
        resolve::parse_features(flag, list)?;
    }
    if let Some(path) = &a.json {
        crate::preflight::out_file("--json", path)?;
    }
    let sides = [("base", a.base.as_str()), ("new", a.new.as_str())];
    let mut figures: Vec<Vec<Headline>> = Vec::new();
    let mut tasks: Vec<Vec<Vec<TaskFigures>>> = Vec::new();
    for (_, features) in sides {
        let (mut h, mut t) = (Vec::new(), Vec::new());
        for i in 0..a.runs as u64 {
            let (head, per_name) = one_run(a, features, a.sim.seed + i)?;
            h.push(head);
            t.push(per_name);
        }
        figures.push(h);
        tasks.push(t);
    }
    let name_refs: Vec<&str> = sides.iter().map(|(n, _)| *n).collect();
    let mut metrics = headline_metrics(&figures);
    let (per_name, left_out) = task_metrics(&tasks, MAX_NAMES);
    metrics.extend(per_name);
    let title = format!(
        "{} on {} ({} runs per side)",
        a.sim.workload, a.sim.machine, a.runs
    );
    let legend: Vec<String> = sides
        .iter()
        .map(|(n, f)| {
            let f = if f.is_empty() { "default features" } else { f };
            format!("{n:<4} = {f}")
        })
        .collect();
    print!(
        "{}",
        render_posting_table(&title, &legend, &name_refs, &metrics, a.all_rows)
    );
    if left_out > 0 {
        println!(
            "({left_out} more {} without rows of their own: at most {MAX_NAMES} are shown)",
            if a.per_task { "threads" } else { "task names" }
        );
    }
    if let Some(path) = &a.json {
        let mut v = render_json(&title, &name_refs, &metrics);
        // The columns are `base` and `new`; their features travel along.
        v["features"] = serde_json::json!({ "base": a.base, "new": a.new });
        let text = serde_json::to_string_pretty(&v)? + "\n";
        schedlab_output::outdir::write_file_atomic(path, text.as_bytes())
            .map_err(|e| user(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(ExitCode::SUCCESS)
}
