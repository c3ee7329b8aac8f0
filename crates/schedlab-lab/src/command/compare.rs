//! `schedlab compare`: N runs of each side (base and new feature sets)
//! differing only by seed, then the mmtests-style table of the headline
//! metrics (formats-spec.md §7, architecture.md §2). This file checks the
//! arguments and resolves each run; the engine runs the sides
//! ([`crate::compare`]), `schedlab_output::compare` renders, and the
//! table is printed here.

use crate::bars::RunsBar;
use crate::compare::{self, Header, RunSetup, RunnerOptions, SideHeader};
use crate::resolve::{self, SimArgs};
use crate::user_error::user;
use anyhow::Result;
use clap::{Args, ValueEnum};
use schedlab_output::compare::{render_posting_table, PerTask, RunFigures};
use std::path::PathBuf;
use std::process::ExitCode;

/// `schedlab compare` arguments: a run's (`schedlab run`'s, with `--seed`
/// the first seed) plus the two feature sets and the number of runs.
#[derive(Args, Debug, Clone)]
#[command(mut_arg("seed", |a| a.help("First seed (the runs of a side use seeds SEED .. SEED + RUNS − 1)")))]
#[command(mut_arg("workload", |a| a.help("Workload of every run: an rt-app JSON file, or a generator spec such as `hackbench:groups=4,loops=100` or `oltp:workers=64` (generators: oltp, hackbench, schbench, specjbb)")))]
pub struct CompareArgs {
    /// The runs.
    #[command(flatten)]
    pub sim: SimArgs,
    /// Feature switches of the baseline side, column `base` (NAME, NO_NAME,
    /// NAME=value, comma-separated; empty: the defaults).
    #[arg(long, default_value = "")]
    pub base: String,
    /// Feature switches of the new side, column `new` (may be left out
    /// when --new-kernel is given).
    #[arg(long, required_unless_present = "new_kernel")]
    pub new: Option<String>,
    /// Kernel release of the baseline side (default: --kernel).
    #[arg(long, value_name = "VERSION")]
    pub base_kernel: Option<String>,
    /// Kernel release of the new side (default: --kernel): with
    /// --base-kernel, the upgrade what-if.
    #[arg(long, value_name = "VERSION")]
    pub new_kernel: Option<String>,
    /// Also rows per task name (`names`, the value when none is given:
    /// rt-app's threads of one task together, hackbench's `hb-r0` ..
    /// `hb-s3`), or per thread (`--per-task=threads`); at most 16 names or
    /// threads. Without it, the run-wide rows only.
    #[arg(
        long,
        value_enum,
        value_name = "BY",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "names"
    )]
    pub per_task: Option<PerTaskArg>,
    /// Also print the rows whose value is the same on every side, of the
    /// metrics shown (the per-name ones come with --per-task).
    #[arg(long)]
    pub all_rows: bool,
    /// Runs per side.
    #[arg(long, default_value_t = 5)]
    pub runs: u32,
    /// Also write the numbers as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Simultaneous runs (default: one per CPU). Each holds one
    /// simulation in memory; the table is the same whatever the number.
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Print nothing (no table, no progress bar); `--json` is still written.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--per-task`'s value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PerTaskArg {
    /// One set of rows per task name.
    Names,
    /// One set of rows per thread.
    Threads,
}

impl CompareArgs {
    /// The breakdown below the totals.
    fn breakdown(&self) -> PerTask {
        match self.per_task {
            None => PerTask::Off,
            Some(PerTaskArg::Names) => PerTask::Names,
            Some(PerTaskArg::Threads) => PerTask::Threads,
        }
    }
}

/// One side of the comparison: its feature list (and the flag that gave
/// it) and its kernel release.
struct Side<'a> {
    flag: &'static str,
    features: &'a str,
    kernel: Option<&'a str>,
}

/// Most task names (or threads) with their own rows.
const MAX_NAMES: usize = 16;

/// One run of one side: its figures.
fn one_run(a: &CompareArgs, side: &Side, seed: u64) -> Result<RunFigures> {
    let sa = SimArgs {
        seed,
        ..a.sim.clone()
    };
    let m = resolve::machine(&sa.machine)?;
    crate::preflight::check_cpus(&resolve::machine_what(&sa.machine), &m, sa.max_cpus)?;
    resolve::check_noise(&sa, &m)?;
    let (w, _) = resolve::run_workload(&sa, &m)?;
    let cfg = resolve::config_for(&sa, side.kernel, side.flag, side.features, false, &w)?;
    crate::preflight::check_length(&sa.workload, &m, &w, &cfg)?;
    crate::preflight::check_memory(&sa.workload, &m, &w, &cfg, crate::preflight::Rows::Streamed)?;
    compare::figures(RunSetup {
        what: &sa.workload,
        machine: m,
        workload: &w,
        config: cfg,
        generator: schedlab_workload::generators::generator_name(&sa.workload),
        breakdown: a.breakdown(),
    })
    .map_err(|e| user(e.to_string()))
}

/// `schedlab compare`.
pub fn run(a: &CompareArgs) -> Result<ExitCode> {
    if a.runs == 0 || a.runs > 1000 {
        return Err(user(format!("--runs: {} is outside 1..=1000", a.runs)));
    }
    let new = a.new.as_deref().unwrap_or("");
    for (flag, list) in [("--base", a.base.as_str()), ("--new", new)] {
        resolve::parse_features(flag, list)?;
    }
    let default_kernel = a.sim.kernel.as_deref();
    let side_defs = [
        Side {
            flag: "--base",
            features: &a.base,
            kernel: a.base_kernel.as_deref().or(default_kernel),
        },
        Side {
            flag: "--new",
            features: new,
            kernel: a.new_kernel.as_deref().or(default_kernel),
        },
    ];
    for s in &side_defs {
        if let Some(k) = s.kernel {
            if schedlab_core::kernels::canonical(k).is_none() {
                return Err(user(
                    schedlab_core::kernels::OptionError::Kernel(
                        k.to_string(),
                        schedlab_core::kernels::KERNELS.join(", "),
                    )
                    .to_string(),
                ));
            }
        }
    }
    // The seeds SEED .. SEED + RUNS - 1 must not wrap past u64.
    if a.sim
        .seed
        .checked_add((a.runs as u64).saturating_sub(1))
        .is_none()
    {
        return Err(user(format!(
            "--seed: {} with --runs {} goes past the largest seed, {}: give a smaller --seed",
            a.sim.seed,
            a.runs,
            u64::MAX
        )));
    }
    if let Some(path) = &a.json {
        crate::preflight::out_file("--json", path)?;
    }
    let jobs = a.jobs.unwrap_or_else(crate::progress::default_jobs);
    if jobs == 0 {
        return Err(user("--jobs: at least 1"));
    }
    // On stderr while the runs go, when it is a terminal.
    let bar = RunsBar::on_terminal(a.quiet);
    let figures = compare::run_sides(
        &RunnerOptions {
            sides: side_defs.len(),
            runs: a.runs,
            first_seed: a.sim.seed,
            jobs,
            progress: &bar,
        },
        |side, seed| one_run(a, &side_defs[side], seed),
    )?;
    // What ran: the machine (and whether it is the default), the release
    // when both sides share it, HZ, the length and the seeds.
    let sides: Vec<SideHeader> = ["base", "new"]
        .iter()
        .zip(&side_defs)
        .map(|(name, s)| SideHeader {
            name,
            features: s.features,
            kernel: s.kernel,
        })
        .collect();
    let header = Header {
        workload: &a.sim.workload,
        machine: &a.sim.machine,
        cpus: resolve::machine(&a.sim.machine).map_or(0, |m| m.nr_cpus()),
        default_machine: a.sim.machine == resolve::DEFAULT_MACHINE,
        hz: a.sim.hz,
        duration: a.sim.duration.as_deref(),
        first_seed: a.sim.seed,
        runs: a.runs,
        sides: &sides,
        side_kernels: a.base_kernel.is_some() || a.new_kernel.is_some(),
        any_kernel: a.base_kernel.is_some() || a.new_kernel.is_some() || a.sim.kernel.is_some(),
    };
    let r = compare::report(&header, &figures, MAX_NAMES);
    if !a.quiet {
        print!(
            "{}",
            render_posting_table(&r.title, &r.legend, &r.name_refs(), &r.metrics, a.all_rows)
        );
    }
    if r.left_out > 0 && !a.quiet {
        println!(
            "({} more {} without rows of their own: at most {MAX_NAMES} are shown)",
            r.left_out,
            if a.breakdown() == PerTask::Threads {
                "threads"
            } else {
                "task names"
            }
        );
    }
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&r.json())? + "\n";
        schedlab_output::outdir::write_file_atomic(path, text.as_bytes())
            .map_err(|e| user(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(ExitCode::SUCCESS)
}
