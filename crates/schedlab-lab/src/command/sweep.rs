//! `schedlab sweep SPEC`: the arguments, then the engine's sweep
//! ([`crate::sweep`]) with each point made by the runner given (the
//! in-process command line, [`super::run_argv`]), then the counts.

use crate::bars::RunsBar;
use crate::sweep::{self, Runner, SweepOptions, DEFAULT_MAX_POINTS};
use crate::user_error::user;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab sweep` arguments.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep spec: a TOML (or JSON) file with the lists `machines`,
    /// `kernels`, `features`, `sysctls`, `workloads`, `seeds`, and
    /// `duration`, `out`, `partition_by` (docs/python.md). Workload files
    /// are relative to the spec's directory; `out` to the current one.
    pub spec: PathBuf,
    /// The sweep directory (default: the spec's `out`, else SPEC's file
    /// name with `.sweep`, in the current directory). Finished points in
    /// it are skipped.
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

/// `schedlab sweep`, each point's `schedlab run` command line made by
/// `runner`.
pub fn run(a: &SweepArgs, runner: Runner) -> Result<ExitCode> {
    let bar = RunsBar::on_terminal(a.quiet);
    let r = sweep::sweep(&SweepOptions {
        spec: a.spec.clone(),
        out: a.out.clone(),
        jobs: a.jobs,
        max_points: a.max_points,
        runner,
        progress: &bar,
    })
    .map_err(|e| user(e.to_string()))?;
    if !a.quiet {
        let c = r.counts;
        println!(
            "sweep: {} points: {} finished before, {} run now, {} failed (status \"error\" in the dataset)",
            c.total, c.skipped, c.ran, c.failed
        );
        println!(
            "dataset: {} (runs: {})",
            r.dataset.display(),
            r.root.join("runs").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
