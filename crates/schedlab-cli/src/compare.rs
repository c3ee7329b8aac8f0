//! `schedlab compare`: N runs of each side (base and new feature sets)
//! differing only by seed, then the mmtests-style table of the headline
//! metrics (formats.md §7, architecture.md §2). The figures come from the
//! library (`results::Headline`, `compare::headline_metrics`); this file
//! resolves the arguments, runs the sides and prints.

use crate::resolve::{self, SimArgs};
use crate::user;
use anyhow::{Context, Result};
use clap::Args;
use schedlab_core::features::Features;
use schedlab_core::observe::NullSink;
use schedlab_output::compare::{headline_metrics, render_json, render_table};
use schedlab_output::results::{simulate, Headline};
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab compare` arguments: a run's (`schedlab run`'s, with `--seed`
/// the first seed) plus the two feature sets and the number of runs.
#[derive(Args, Debug, Clone)]
#[command(mut_arg("seed", |a| a.help("First seed (the runs of a side use seeds SEED .. SEED + RUNS − 1)")))]
pub struct CompareArgs {
    /// The runs.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Feature switches of the baseline side.
    #[arg(long, default_value = "")]
    pub base: String,
    /// Feature switches of the new side.
    #[arg(long)]
    pub new: String,
    /// Runs per side.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Also write the numbers as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// One run of one side: its headline figures.
fn one_run(a: &CompareArgs, features: &str, seed: u64) -> Result<Headline> {
    let sa = SimArgs {
        seed,
        ..a.sim.clone()
    };
    let m = resolve::machine(&sa.machine)?;
    let (w, _) = resolve::run_workload(&sa, m.nr_cpus())?;
    let cfg = resolve::config(&sa, features, false, &w)?;
    let (sim, res) =
        simulate(m, &w, cfg, NullSink).map_err(|e| user(format!("{}: {e}", sa.workload)))?;
    Ok(Headline::of(&sim, &res))
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
    let mut figures: Vec<Vec<Headline>> = Vec::new();
    for (_, features) in sides {
        let mut v = Vec::new();
        for i in 0..a.runs as u64 {
            v.push(one_run(a, features, a.sim.seed + i)?);
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
    let metrics = headline_metrics(&figures);
    let title = format!(
        "{} on {} ({} runs per side)",
        a.sim.workload, a.sim.machine, a.runs
    );
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
