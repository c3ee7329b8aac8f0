//! `schedlab compare`: N runs of each side (base and new feature sets)
//! differing only by seed, then the mmtests-style table of the headline
//! metrics (formats-spec.md §7, architecture.md §2). The figures come from the
//! library (`compare::RunFigures`, `compare::compare_metrics`); this file
//! resolves the arguments, runs the sides and prints.

use crate::resolve::{self, SimArgs};
use crate::user;
use anyhow::Result;
use clap::{Args, ValueEnum};
use schedlab_core::observe::NullSink;
use schedlab_core::Sim;
use schedlab_output::compare::{
    compare_metrics, render_json, render_posting_table, PerTask, RunFigures, TimerLatencyRows,
};
use schedlab_output::results::RunResults;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

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
    let mut sim =
        Sim::new(m, &w, cfg, NullSink).map_err(|e| user(format!("{}: {e}", sa.workload)))?;
    // The rt-app log rows are dropped as they complete, as `run` without
    // --out does, once their wakeup latency is counted (the percentiles;
    // the other statistics are kept by the threads): memory grows with
    // the distinct latency values, not with the run's length.
    let lat = TimerLatencyRows::default();
    sim.stream_rows(Box::new(lat.clone()));
    let cap = crate::preflight::length_cap(sim.end, sim.t_start);
    let mut at = sim.t_start;
    let res = sim.run_while(|t| {
        at = t;
        t <= cap
    });
    crate::preflight::check_passed_limit(&sa.workload, sim.end, sim.t_start, at.max(sim.now))?;
    let results = RunResults::collect(&sim, &res, &w);
    let generator = schedlab_workload::generators::generator_name(&sa.workload);
    Ok(RunFigures::of(
        &results,
        generator,
        &lat.take(),
        a.breakdown(),
    ))
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
    let sides = [("base", &side_defs[0]), ("new", &side_defs[1])];
    let jobs = a.jobs.unwrap_or_else(schedlab_lab::default_jobs);
    if jobs == 0 {
        return Err(user("--jobs: at least 1"));
    }
    // Every (side, seed) run is independent: `jobs` threads take them in
    // order, and the results are put back in that order, so the table does
    // not depend on the number of jobs.
    let work: Vec<(usize, u64)> = (0..sides.len())
        .flat_map(|s| (0..a.runs as u64).map(move |i| (s, a.sim.seed + i)))
        .collect();
    type Outcome = Result<RunFigures>;
    let slots: Vec<Mutex<Option<Outcome>>> = work.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // On stderr while the runs go, when it is a terminal.
    let bar = crate::progress::RunsBar::on_terminal(a.quiet);
    schedlab_lab::Progress::start(&bar, "compare", work.len() as u64);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(work.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                // After a failure no new run starts: the first error (in
                // run order) is reported, as a sequential compare would.
                let Some(&(side, seed)) = work.get(i) else {
                    break;
                };
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let r = one_run(a, sides[side].1, seed);
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                schedlab_lab::Progress::advance(&bar);
            });
        }
    });
    schedlab_lab::Progress::finish(&bar);
    let mut figures: Vec<Vec<RunFigures>> = vec![Vec::new(); sides.len()];
    for (slot, &(side, _)) in slots.into_iter().zip(&work) {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(run)) => figures[side].push(run),
            Some(Err(e)) => return Err(e),
            // Not run: an earlier or a concurrent run failed.
            None => continue,
        }
    }
    let name_refs: Vec<&str> = sides.iter().map(|(n, _)| *n).collect();
    let (metrics, left_out) = compare_metrics(&figures, MAX_NAMES);
    // What ran: the machine (and whether it is the default), the release
    // when both sides share it, HZ, the length and the seeds.
    let cpus = resolve::machine(&a.sim.machine).map_or(0, |m| m.nr_cpus());
    let default_note = if a.sim.machine == resolve::DEFAULT_MACHINE {
        "; the default machine, --machine picks another"
    } else {
        ""
    };
    let kernel = match (side_defs[0].kernel, side_defs[1].kernel) {
        (b, n) if b == n => format!(
            ", kernel {}",
            b.and_then(schedlab_core::kernels::canonical)
                .unwrap_or(schedlab_core::kernels::DEFAULT_KERNEL)
        ),
        _ => String::new(),
    };
    let length = a
        .sim
        .duration
        .as_deref()
        .unwrap_or("until the workload ends");
    let title = format!(
        "{} on {} ({cpus} CPUs{default_note}){kernel}, HZ {}, {length}, seeds {}..{} ({} runs per side)",
        a.sim.workload,
        a.sim.machine,
        a.sim.hz,
        a.sim.seed,
        a.sim.seed + (a.runs as u64 - 1),
        a.runs
    );
    let legend: Vec<String> = sides
        .iter()
        .map(|(n, s)| {
            let f = if s.features.is_empty() {
                "default features"
            } else {
                s.features
            };
            match s.kernel {
                Some(k) if a.base_kernel.is_some() || a.new_kernel.is_some() => {
                    format!("{n:<4} = --kernel {k}, {f}")
                }
                _ => format!("{n:<4} = {f}"),
            }
        })
        .collect();
    if !a.quiet {
        print!(
            "{}",
            render_posting_table(&title, &legend, &name_refs, &metrics, a.all_rows)
        );
    }
    if left_out > 0 && !a.quiet {
        println!(
            "({left_out} more {} without rows of their own: at most {MAX_NAMES} are shown)",
            if a.breakdown() == PerTask::Threads {
                "threads"
            } else {
                "task names"
            }
        );
    }
    if let Some(path) = &a.json {
        let mut v = render_json(&title, &name_refs, &metrics);
        // The columns are `base` and `new`; their features travel along.
        v["features"] = serde_json::json!({ "base": a.base, "new": new });
        if a.base_kernel.is_some() || a.new_kernel.is_some() || a.sim.kernel.is_some() {
            v["kernels"] = serde_json::json!({
                "base": side_defs[0].kernel.unwrap_or(schedlab_core::kernels::DEFAULT_KERNEL),
                "new": side_defs[1].kernel.unwrap_or(schedlab_core::kernels::DEFAULT_KERNEL),
            });
        }
        let text = serde_json::to_string_pretty(&v)? + "\n";
        schedlab_output::outdir::write_file_atomic(path, text.as_bytes())
            .map_err(|e| user(format!("{}: cannot write: {e}", path.display())))?;
    }
    Ok(ExitCode::SUCCESS)
}
