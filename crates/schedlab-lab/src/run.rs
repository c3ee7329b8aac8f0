//! One `schedlab run`: resolve the arguments, simulate, then hand the
//! finished run to `schedlab_output::results`, which builds and writes
//! every output file. The output directory is staged before the run and
//! appears only when everything is written. Nothing is printed here: the
//! warnings go to the caller's [`RunHooks`] once the run is known to
//! start, the text report comes back in the [`RunOutcome`], and the
//! progress bar is drawn only when the hooks ask for it.

use crate::bars::SimBar;
use crate::preflight;
use crate::resolve::{self, RunArgs};
use crate::user_error::user;
use anyhow::Result;
use schedlab_core::observe::{DiscardRows, NullSink, Sink};
use schedlab_core::program::Workload;
use schedlab_core::SimError;
use schedlab_core::{RunResult, Sim};
use schedlab_output::limit;
use schedlab_output::log_stream::LogStream;
use schedlab_output::outdir::StagedOutDir;
use schedlab_output::results::{check_outcome, write_run, RunError, RunResults, TextOptions};
use schedlab_output::tee::{TraceOutput, TraceSinks};

/// What a run tells its caller while it goes. Every method has a default:
/// no warnings shown, no bar.
pub trait RunHooks {
    /// The run is known to start (every check passed, the simulation is
    /// built): its warnings, one line each. Not called when it is refused,
    /// so that an error is always the only line.
    fn started(&self, warnings: &[String]) {
        let _ = warnings;
    }
    /// Whether to draw the simulated-time bar on stderr
    /// ([`SimBar`]) for a run with an end.
    fn show_bar(&self) -> bool {
        false
    }
}

/// How a run that was made ended.
#[derive(Debug)]
pub enum RunOutcome {
    /// The run finished and its outputs are written (with `--out`);
    /// `report` is its text report (what ran, then the tables), `None`
    /// with `--quiet`. Exit status 0.
    Finished {
        /// The text report, each line ending in a newline.
        report: Option<String>,
    },
    /// A model invariant broke (`--check`): nothing was written; the
    /// message says where. Exit status 1.
    Violation(String),
}

/// `schedlab run`.
pub fn run(a: &RunArgs, hooks: &dyn RunHooks) -> Result<RunOutcome> {
    if a.trace && a.out.is_none() {
        return Err(user("--trace needs --out DIR"));
    }
    if a.counters_every.is_some() && a.out.is_none() {
        return Err(user("--counters-every needs --out DIR"));
    }
    // 0: no sampling.
    let counters_every = match &a.counters_every {
        Some(t) => resolve::counters_every(t)?,
        None => 0,
    };
    // --out first: a run that cannot write is refused before anything is
    // read or simulated (the stage is removed on any later error).
    let stage = preflight::out_dir(a.out.as_deref(), a.force)?;
    let max_output = a.sim.max_output_bytes()?;
    let m = resolve::machine(&a.sim.machine)?;
    preflight::check_cpus(&resolve::machine_what(&a.sim.machine), &m, a.sim.max_cpus)?;
    resolve::check_noise(&a.sim, &m)?;
    let (w, mut warnings) = resolve::run_workload(&a.sim, &m)?;
    let cfg = resolve::config(&a.sim, &a.features, a.check, &w)?;
    preflight::check_length(&a.sim.workload, &m, &w, &cfg)?;
    preflight::check_memory(&a.sim.workload, &m, &w, &cfg, preflight::Rows::Streamed)?;
    let est = preflight::estimate(&m, &w, &cfg, preflight::Rows::Streamed);
    let est = preflight::refine(&m, &w, &cfg, est, a.out.as_ref().map(|_| max_output));
    if a.out.is_some() {
        preflight::check_output(&a.sim.workload, &est, max_output)?;
    }
    // Printed with the warnings, once the run is known to start.
    warnings.extend(preflight::estimate_line(&est, a.out.is_some()));
    // What ran, printed at the top of the text report.
    let header = schedlab_output::results::header::run_header(
        &schedlab_output::results::header::HeaderFacts {
            workload: &a.sim.workload,
            machine: &a.sim.machine,
            cpus: m.nr_cpus(),
            default_machine: a.sim.machine == resolve::DEFAULT_MACHINE,
        },
        &cfg,
    );
    // How the results are printed (taken before the machine and the
    // configuration move into the simulator).
    let opts = TextOptions {
        per_task: a.per_task,
        generator: schedlab_workload::generators::generator_name(&a.sim.workload)
            .map(str::to_string),
        idle_states: m
            .idle_states
            .iter()
            .map(|s| (s.name.clone(), s.exit_latency_ns))
            .collect(),
        timer_slack_ns: cfg.tunables.timer_slack_ns,
        banner: schedlab_workload::generators::hackbench_banner(&a.sim.workload)
            .unwrap_or_default(),
    };
    let texts = Texts {
        warnings,
        header,
        opts,
    };
    if a.trace {
        let tee = TraceSinks::new(m.nr_cpus() as u32)?;
        execute(
            a,
            &w,
            &texts,
            stage,
            counters_every,
            hooks,
            Sim::new(m, &w, cfg, tee),
        )
    } else {
        execute(
            a,
            &w,
            &texts,
            stage,
            counters_every,
            hooks,
            Sim::new(m, &w, cfg, NullSink),
        )
    }
}

/// What a run says besides its files: its warnings, the header of its
/// text report and how the report is made.
struct Texts {
    warnings: Vec<String>,
    header: Vec<String>,
    opts: TextOptions,
}

fn execute<S: TraceOutput>(
    a: &RunArgs,
    w: &Workload,
    texts: &Texts,
    stage: Option<StagedOutDir>,
    counters_every: u64,
    hooks: &dyn RunHooks,
    sim: Result<Sim<S>, SimError>,
) -> Result<RunOutcome> {
    // Set-up errors name the workload file.
    let mut sim = sim.map_err(|e| user(format!("{}: {e}", a.sim.workload)))?;
    // Warnings only once the run is known to start, so that an error is
    // always the only line.
    hooks.started(&texts.warnings);
    sim.sample_counters_every(counters_every);
    // Log rows go to the staged log files as the iterations complete (or
    // nowhere without --out): memory stays flat however long the run.
    sim.stream_rows(match &stage {
        Some(st) => Box::new(LogStream::new(st.appender(), w)),
        None => Box::new(DiscardRows),
    });
    // The bytes really written (logs, trace spools) against --max-output,
    // counted as the run goes; the run stops at the limit.
    let _limit = limit::Scope::enter(a.sim.max_output_bytes()?);
    let stopped_at = std::cell::Cell::new(sim.t_start);
    let res = run_with_bar(&mut sim, hooks.show_bar(), &stopped_at);
    preflight::check_passed_limit(
        &a.sim.workload,
        sim.end,
        sim.t_start,
        stopped_at.get().max(sim.now),
    )?;
    if let Some(max) = limit::exceeded() {
        // The stage (and the spools) are dropped: nothing is written.
        return Err(user(format!(
            "{}: the run reached the --max-output limit of {} of output at {} simulated and was stopped; nothing was written (--max-output raises the limit)",
            a.sim.workload,
            preflight::size(max),
            format!(
                "{:.3} s",
                stopped_at.get().saturating_sub(sim.t_start) as f64 / 1e9
            ),
        )));
    }
    if let Some(mut rows) = sim.take_row_sink() {
        rows.finish()?;
    }
    match check_outcome(&sim, &res) {
        Ok(()) => {}
        Err(e @ RunError::Deadlock { .. }) => {
            return Err(user(format!("{}: {e}", a.sim.workload)));
        }
        Err(e @ RunError::Violation(_)) => {
            // A broken invariant is a bug in the model: say where, write
            // nothing (the stage is dropped).
            return Ok(RunOutcome::Violation(e.to_string()));
        }
    }
    let results = RunResults::collect(&sim, &res, w);
    if let Some(stage) = stage {
        write_run(stage, &results, sim.into_sink())?;
    }
    let report = (!a.quiet).then(|| {
        let mut text = String::new();
        for line in &texts.header {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&results.text_report_with(&texts.opts));
        text
    });
    Ok(RunOutcome::Finished { report })
}

/// Runs the simulation, with a progress bar when `bar` is true and the
/// run has an end ([`SimBar`]), until its end or the output limit
/// ([`limit::exceeded`]); `now` is where it was last seen.
fn run_with_bar<S: Sink>(sim: &mut Sim<S>, bar: bool, now: &std::cell::Cell<u64>) -> RunResult {
    // A run without a duration stops once it passes the duration limit
    // (preflight::check_passed_limit reports it).
    let cap = preflight::length_cap(sim.end, sim.t_start);
    let (Some(end), true) = (sim.end, bar) else {
        return sim.run_while(|t| {
            now.set(t);
            limit::exceeded().is_none() && t <= cap
        });
    };
    let start = sim.t_start;
    let bar = SimBar::new((end - start) / 1_000_000);
    let res = sim.run_while(|t| {
        now.set(t);
        bar.at(t.saturating_sub(start) / 1_000_000);
        limit::exceeded().is_none()
    });
    bar.finish();
    res
}
