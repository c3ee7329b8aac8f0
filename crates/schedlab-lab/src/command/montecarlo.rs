//! `schedlab montecarlo`: the arguments, then the engine's screening
//! ([`crate::montecarlo`]) with each run made by the runner given (the
//! in-process command line, [`super::run_argv`]), then the findings'
//! table.

use crate::bars::RunsBar;
use crate::montecarlo::{self, findings_json, Plan, ScreeningOptions, Thresholds};
use crate::sweep::{Runner, DEFAULT_MAX_POINTS};
use crate::user_error::user;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
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
    #[arg(long, default_value_t = DEFAULT_MAX_POINTS)]
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

/// `schedlab montecarlo`, each run's `schedlab run` command line made by
/// `runner`.
pub fn run(a: &MonteCarloArgs, runner: Runner) -> Result<ExitCode> {
    let plan = Plan {
        base: a.base.clone(),
        new: a.new.clone(),
        scenarios: a.scenarios,
        machines: a.machines.clone(),
        seeds: a.seeds,
        seed: a.seed,
        duration: a.duration.clone(),
        max_points: a.max_points,
    };
    let thresholds = Thresholds {
        alpha: a.alpha,
        rel: a.rel,
    };
    let bar = RunsBar::on_terminal(a.quiet);
    let s = montecarlo::screen(&ScreeningOptions {
        plan: plan.clone(),
        thresholds,
        out: a.out.clone(),
        jobs: a.jobs,
        runner,
        progress: &bar,
    })
    .map_err(|e| user(e.to_string()))?;
    if let Some(j) = &a.json {
        std::fs::write(j, findings_json(&s.findings))
            .map_err(|e| user(format!("{}: {e}", j.display())))?;
    }
    print!("{}", montecarlo::render(&s.findings, &plan, thresholds));
    Ok(ExitCode::SUCCESS)
}
