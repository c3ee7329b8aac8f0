//! The runs of an A/B comparison (`schedlab compare`): every side run over
//! the same seeds, on local threads, the figures of each run gathered in
//! run order, then what the comparison table is made of: its heading, its
//! legend and the metrics (`schedlab_output::compare` renders them as the
//! mmtests-style table or as JSON).
//!
//! Resolving a side's settings into a machine, a workload and a
//! configuration is the caller's (the command line checks its flags and
//! limits there); [`figures`] simulates one resolved run, and
//! [`run_sides`] schedules them: the result does not depend on the number
//! of threads.

use crate::limits::{check_passed_limit, length_cap, PastLimit};
use crate::progress::Progress;
use schedlab_core::machine::Machine;
use schedlab_core::observe::NullSink;
use schedlab_core::program::Workload;
use schedlab_core::{Sim, SimConfig};
use schedlab_output::compare::{
    compare_metrics, render_json, Metric, PerTask, RunFigures, TimerLatencyRows,
};
use schedlab_output::results::RunResults;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Why a run of a comparison failed. Each message is one line.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The simulation could not be built from the workload.
    #[error("{what}: {message}")]
    Build {
        /// The workload as named.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// A run without a duration went past the limit of simulated time.
    #[error(transparent)]
    PastLimit(#[from] PastLimit),
}

/// One resolved run of one side.
pub struct RunSetup<'a> {
    /// The workload as named (in messages).
    pub what: &'a str,
    /// The machine.
    pub machine: Machine,
    /// The workload, lowered for the machine.
    pub workload: &'a Workload,
    /// The side's configuration, with this run's seed.
    pub config: SimConfig,
    /// The generator that made the workload, if any (its figures).
    pub generator: Option<&'a str>,
    /// The rows below the totals.
    pub breakdown: PerTask,
}

/// Simulates one run and returns its figures. The rt-app log rows are
/// dropped as they complete once their wakeup latency is counted (the
/// percentiles; the other statistics are kept by the threads): memory
/// grows with the distinct latency values, not with the run's length.
pub fn figures(r: RunSetup) -> Result<RunFigures, CompareError> {
    let mut sim =
        Sim::new(r.machine, r.workload, r.config, NullSink).map_err(|e| CompareError::Build {
            what: r.what.to_string(),
            message: e.to_string(),
        })?;
    let lat = TimerLatencyRows::default();
    sim.stream_rows(Box::new(lat.clone()));
    let cap = length_cap(sim.end, sim.t_start);
    let mut at = sim.t_start;
    let res = sim.run_while(|t| {
        at = t;
        t <= cap
    });
    check_passed_limit(r.what, sim.end, sim.t_start, at.max(sim.now))?;
    let results = RunResults::collect(&sim, &res, r.workload);
    Ok(RunFigures::of(
        &results,
        r.generator,
        &lat.take(),
        r.breakdown,
    ))
}

/// How the runs of a comparison are scheduled.
pub struct RunnerOptions<'a> {
    /// Sides (columns).
    pub sides: usize,
    /// Runs per side: seeds `first_seed .. first_seed + runs - 1`.
    pub runs: u32,
    /// The first seed.
    pub first_seed: u64,
    /// Simultaneous runs (0 is taken as 1).
    pub jobs: usize,
    /// Told of each finished run.
    pub progress: &'a dyn Progress,
}

/// Runs every (side, seed) with `run` on `jobs` threads, taken in order
/// (side by side, seed by seed), and returns each side's figures in seed
/// order. After a failure no new run starts, and the first error in run
/// order is returned, as a sequential comparison would.
pub fn run_sides<E, F>(o: &RunnerOptions, run: F) -> Result<Vec<Vec<RunFigures>>, E>
where
    E: Send,
    F: Fn(usize, u64) -> Result<RunFigures, E> + Sync,
{
    let work: Vec<(usize, u64)> = (0..o.sides)
        .flat_map(|s| (0..o.runs as u64).map(move |i| (s, o.first_seed + i)))
        .collect();
    let slots: Vec<Mutex<Option<Result<RunFigures, E>>>> =
        work.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    o.progress.start("compare", work.len() as u64);
    std::thread::scope(|s| {
        for _ in 0..o.jobs.max(1).min(work.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(side, seed)) = work.get(i) else {
                    break;
                };
                if failed.load(Ordering::SeqCst) {
                    break;
                }
                let r = run(side, seed);
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                o.progress.advance();
            });
        }
    });
    o.progress.finish();
    let mut figures: Vec<Vec<RunFigures>> = (0..o.sides).map(|_| Vec::new()).collect();
    for (slot, &(side, _)) in slots.into_iter().zip(&work) {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(run)) => figures[side].push(run),
            Some(Err(e)) => return Err(e),
            // Not run: an earlier or a concurrent run failed.
            None => continue,
        }
    }
    Ok(figures)
}

/// One side as the heading and the legend name it.
pub struct SideHeader<'a> {
    /// Column name (`base`, `new`).
    pub name: &'a str,
    /// Its feature list (empty: the defaults).
    pub features: &'a str,
    /// Its kernel release, if one was given for it or for both.
    pub kernel: Option<&'a str>,
}

/// What ran, for the table's heading and legend.
pub struct Header<'a> {
    /// The workload as named.
    pub workload: &'a str,
    /// The machine as named.
    pub machine: &'a str,
    /// Its CPUs.
    pub cpus: usize,
    /// True when the machine is the default one (the heading says so).
    pub default_machine: bool,
    /// CONFIG_HZ.
    pub hz: u32,
    /// The length asked for (`None`: until the workload ends).
    pub duration: Option<&'a str>,
    /// The first seed.
    pub first_seed: u64,
    /// Runs per side.
    pub runs: u32,
    /// The sides, in column order.
    pub sides: &'a [SideHeader<'a>],
    /// True when the sides were given kernels of their own (the legend
    /// names them).
    pub side_kernels: bool,
    /// True when any kernel was given (the JSON names the sides' kernels).
    pub any_kernel: bool,
}

/// What the comparison table is made of.
pub struct Report {
    /// The heading: what ran.
    pub title: String,
    /// One line per side: its name and settings.
    pub legend: Vec<String>,
    /// Column names.
    pub names: Vec<String>,
    /// The metrics, in table order.
    pub metrics: Vec<Metric>,
    /// Task names (or threads) past `max_names`, left without rows.
    pub left_out: usize,
    /// Each side's features and kernel, for [`Report::json`].
    sides: Vec<(String, String, Option<String>)>,
    any_kernel: bool,
}

/// The report of the figures of each side (in `h.sides`' order): at most
/// `max_names` task names (or threads) have rows of their own.
pub fn report(h: &Header, figures: &[Vec<RunFigures>], max_names: usize) -> Report {
    let (metrics, left_out) = compare_metrics(figures, max_names);
    let default_note = if h.default_machine {
        "; the default machine, --machine picks another"
    } else {
        ""
    };
    let kernel = match h.sides {
        [b, n] if b.kernel == n.kernel => format!(
            ", kernel {}",
            b.kernel
                .and_then(schedlab_core::kernels::canonical)
                .unwrap_or(schedlab_core::kernels::DEFAULT_KERNEL)
        ),
        _ => String::new(),
    };
    let length = h.duration.unwrap_or("until the workload ends");
    let title = format!(
        "{} on {} ({} CPUs{default_note}){kernel}, HZ {}, {length}, seeds {}..{} ({} runs per side)",
        h.workload,
        h.machine,
        h.cpus,
        h.hz,
        h.first_seed,
        h.first_seed + (h.runs as u64 - 1),
        h.runs
    );
    let legend = h
        .sides
        .iter()
        .map(|s| {
            let f = if s.features.is_empty() {
                "default features"
            } else {
                s.features
            };
            match s.kernel {
                Some(k) if h.side_kernels => format!("{:<4} = --kernel {k}, {f}", s.name),
                _ => format!("{:<4} = {f}", s.name),
            }
        })
        .collect();
    Report {
        title,
        legend,
        names: h.sides.iter().map(|s| s.name.to_string()).collect(),
        metrics,
        left_out,
        sides: h
            .sides
            .iter()
            .map(|s| {
                (
                    s.name.to_string(),
                    s.features.to_string(),
                    s.kernel.map(str::to_string),
                )
            })
            .collect(),
        any_kernel: h.any_kernel,
    }
}

impl Report {
    /// The column names as `&str`.
    pub fn name_refs(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }

    /// The numbers as JSON (`schedlab compare --json`): the metrics, each
    /// side's features and, when a kernel was given, each side's release.
    pub fn json(&self) -> Value {
        let mut v = render_json(&self.title, &self.name_refs(), &self.metrics);
        let features: serde_json::Map<String, Value> = self
            .sides
            .iter()
            .map(|(n, f, _)| (n.clone(), json!(f)))
            .collect();
        v["features"] = Value::Object(features);
        if self.any_kernel {
            let kernels: serde_json::Map<String, Value> = self
                .sides
                .iter()
                .map(|(n, _, k)| {
                    let k = k
                        .as_deref()
                        .unwrap_or(schedlab_core::kernels::DEFAULT_KERNEL);
                    (n.clone(), json!(k))
                })
                .collect();
            v["kernels"] = Value::Object(kernels);
        }
        v
    }
}
