//! Checks made before anything is simulated (everything that can fail is
//! checked before simulating): the `--out` directory, the
//! limits on tasks and duration, and the memory the run will need.
//!
//! ## The memory estimate
//!
//! ```text
//! bytes = BASE
//!       + tasks × PER_TASK
//!       + 2 × Σ over threads of task_bytes
//!       + cpus × PER_CPU
//!       + rows × PER_ROW_STREAMED
//! rows  = Σ over logging threads of min(duration / shortest iteration,
//!                                       loops × Σ phase loops)
//! ```
//!
//! A row is one phase iteration of one thread (its rt-app log line).
//! With rt-app's `log_size` set to N MiB, each logging thread writes (and
//! holds in memory until the end) at most its ring of N MiB; `"disable"`
//! logs nothing.
//! `run` streams rows to disk as they complete, `compare` drops them as
//! they complete (none of its figures comes from them); both keep only
//! the threads' latency moments, a constant size (`PER_ROW_STREAMED` is
//! 0; a row held until the end would take 184 B). A thread's shortest
//! iteration is
//! the least, over its phases, of the time the phase's ops take at the
//! least: the larger of the sum of its `run` work, `runtime` and `sleep`
//! (they follow one another) and the sum of its timers' periods (each waits
//! for the next period), with a floor of [`MIN_ITERATION_NS`] for
//! iterations made only of events that take no simulated time. `duration` is `--duration` or the file's; a run
//! without one ends when its threads finish, so only the loop counts
//! bound it. The constants were measured with `/usr/bin/time -v` on the
//! release binary; the estimate is meant to be
//! within a factor of two, enough to refuse runs that cannot fit.
//!
//! The sched-domain builder keeps one group list per distinct domain
//! (`machine::domains::Groups`), so its memory grows with CPUs x domain
//! levels and fits in `PER_CPU` (a flat single-LLC sysfs tree measured
//! 5.6 MB at 1024 CPUs, 9.6 MB at 2048, 22 MB at 4096; the per-CPU-pair
//! group tables it replaced took 392 MB, 2.61 GB and aborted).
//!
//! `task_bytes` (`schedlab_workload::limits::task_bytes`) is what a
//! thread's spec takes as built: its names and its program's phases and
//! ops, by capacity, at glibc malloc's chunk sizes. The reader's workload
//! and the simulator's copy of each spec both live for the whole run,
//! hence twice. It matters for threads with long programs: an `oltp:`
//! backend holds 32 transactions of 26 ops, ~34 KB (~68 KB in a run),
//! where `PER_TASK` is 4 KiB. A generator whose threads would take more
//! than [`build_budget`] (counted twice) is refused before it builds
//! them (`limits::check_build_bytes`, called by the `oltp:` generator).
//!
//! A run whose estimate exceeds the memory it can have is refused with the
//! estimate and its parts: `MemAvailable` of /proc/meminfo, or less if the
//! address-space limit (`ulimit -v`) is lower.

use schedlab_core::machine::Machine;
use schedlab_core::program::{Op, TaskSpec, Workload};
use schedlab_core::SimConfig;
use schedlab_output::outdir::StagedOutDir;
use std::path::Path;

/// A check that refused the run: its one-line message (flag or file,
/// problem, what to do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PreflightError(pub String);

/// What the checks return.
pub type Result<T> = std::result::Result<T, PreflightError>;

fn user(msg: impl Into<String>) -> PreflightError {
    PreflightError(msg.into())
}

/// Fixed cost of a run (binary, allocator, buffers), bytes.
const BASE: u64 = 16 << 20;
/// Per thread: task state, run queues' entities, statistics, its log
/// vector and name.
const PER_TASK: u64 = 4 << 10;
/// Per CPU: run queue, per-CPU statistics, schedstat.
const PER_CPU: u64 = 64 << 10;
/// Per log row of a run that streams its rows to disk (`run`) or drops
/// them (`compare`): nothing. A thread keeps its wakeup-latency samples
/// as exact moments (`stats::LatencySamples`, constant size).
const PER_ROW_STREAMED: u64 = 0;

/// What a run does with its log rows. Every command hands them on as
/// they complete (a row held until the end would take 184 B), so there is
/// one case; the parameter stays for the callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Streamed to the log files (`run --out`) or dropped (`run`,
    /// `compare`) as they complete.
    Streamed,
}
/// Bytes of one rt-app log line (fixed-width columns: 124 B measured in
/// the golden runs' logs, more once times pass 10^8 µs).
const LOG_LINE_BYTES: u64 = 130;
/// Wall time per log row, ns: measured with `/usr/bin/time -v` on the
/// release binary, one task `run 1000, timer period 10000` on vm-2cpu,
/// `--duration 10000s --out`: 1e6 rows in 10.9 s (the iteration's events,
/// the ticks between, and writing the row).
const WALL_NS_PER_ROW: u64 = 10_000;
/// Events simulated per wall second for the ticks, the low end of a bare
/// event loop's rate (9-19 M events/s, BENCHMARKS.md).
const EVENTS_PER_WALL_S: u64 = 9_000_000;
/// Above this estimated wall time or memory a run prints its estimate
/// before it starts (stderr, not with --quiet).
const SHOW_ESTIMATE_WALL_S: u64 = 10;
const SHOW_ESTIMATE_BYTES: u64 = 1 << 30;
/// Shortest iteration assumed for a phase whose ops take no simulated time.
pub const MIN_ITERATION_NS: u64 = 10_000;

/// `--duration`: parsed, more than zero, and within the limit in force
/// (`--max-duration`, default one day, never past 365 days), the error
/// naming the limit and the flag that raises it.
pub fn duration_flag(text: &str) -> Result<u64> {
    use schedlab_core::time::parse_duration;
    use schedlab_workload::limits::{duration_limit_text, max_duration_ns, MAX_DURATION_S};
    let max = max_duration_ns();
    let too_large = || {
        user(format!(
            "--duration: {text} is too large: more than the {MAX_DURATION_S} s (365 days) the simulator accepts"
        ))
    };
    if text.trim_start().starts_with('-') {
        return Err(user(format!(
            "--duration: {text} is negative: give a duration greater than zero"
        )));
    }
    let ns = parse_duration(text).map_err(|e| {
        if e.ends_with("is too large") {
            too_large()
        } else {
            user(format!("--duration: {e}"))
        }
    })?;
    if ns == 0 {
        return Err(user("--duration: must be greater than zero"));
    }
    if ns > MAX_DURATION_S * 1_000_000_000 {
        return Err(too_large());
    }
    if ns > max {
        return Err(user(format!(
            "--duration: {text} is more than the {} limit: --max-duration raises it, up to {MAX_DURATION_S} s (365 days)",
            duration_limit_text(max)
        )));
    }
    Ok(ns)
}

/// `--max-duration`: a duration up to 365 days, made the limit for the
/// file's `global.duration` and `--duration`.
pub fn max_duration_flag(text: &str) -> Result<()> {
    use schedlab_workload::limits::{set_max_duration_ns, MAX_DURATION_NS, MAX_DURATION_S};
    let ns = schedlab_core::time::parse_duration(text)
        .map_err(|e| user(format!("--max-duration: {e}")))?;
    if ns == 0 {
        return Err(user("--max-duration: must be greater than zero"));
    }
    if ns > MAX_DURATION_NS {
        return Err(user(format!(
            "--max-duration: {text} is more than the {MAX_DURATION_S} s (365 days) the simulator accepts"
        )));
    }
    set_max_duration_ns(ns);
    Ok(())
}

/// `--max-cpus`: a machine with more CPUs is refused before anything is
/// built for it (the sysfs reader's own ceiling is `machine::MAX_CPUS`).
pub fn check_cpus(what: &str, m: &Machine, max: usize) -> Result<()> {
    use schedlab_core::machine::MAX_CPUS;
    if max > MAX_CPUS {
        return Err(user(format!(
            "--max-cpus: {max} is more than the {MAX_CPUS} CPUs the simulator supports"
        )));
    }
    if m.nr_cpus() > max {
        // A `layout:` machine is named by its own string: said once.
        let who = if m.name == what {
            String::new()
        } else {
            format!("{} ", m.name)
        };
        return Err(user(format!(
            "{what}: {who}has {} CPUs, more than the limit of {max}: --max-cpus raises it (up to {MAX_CPUS})",
            m.nr_cpus()
        )));
    }
    Ok(())
}

/// `--max-output SIZE`: bytes, with an optional binary suffix (K, M, G, T;
/// `KiB`.. and `B` accepted too).
pub fn size_flag(flag: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        user(format!(
            "{flag}: '{text}' is not a size (such as 4G, 500M, 1048576)"
        ))
    };
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(bad());
    }
    let n: u64 = t[..digits].parse().map_err(|_| bad())?;
    let shift = match t[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// Checks `--out` before anything is read or simulated: parent exists and
/// is writable, not a file, not a non-empty directory without --force
/// (see [`StagedOutDir::stage_with`]). The stage is created (and removed
/// on any later error), so a run that passes can write.
pub fn out_dir(out: Option<&Path>, force: bool) -> Result<Option<StagedOutDir>> {
    let Some(dir) = out else {
        return Ok(None);
    };
    let stage = StagedOutDir::stage_with(dir, force).map_err(|e| user(format!("--out: {e}")))?;
    Ok(Some(stage))
}

/// Checks a single output file's path (`compare --json`) before the runs:
/// its directory exists and it is not a directory itself.
pub fn out_file(flag: &str, path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(user(format!(
            "{flag}: {}: no such directory (for {})",
            parent.display(),
            path.display()
        )));
    }
    if path.is_dir() {
        return Err(user(format!("{flag}: {}: is a directory", path.display())));
    }
    Ok(())
}

/// The shortest simulated time one iteration of `ops` takes.
fn iteration_floor(ops: &[Op]) -> u64 {
    let (mut busy, mut timers) = (0u64, 0u64);
    for op in ops {
        match op {
            Op::Run { work_ns, .. } => busy = busy.saturating_add(*work_ns),
            Op::Runtime { wall_ns, .. } => busy = busy.saturating_add(*wall_ns),
            Op::Sleep { ns } => busy = busy.saturating_add(*ns),
            Op::Timer { period_ns, .. } => timers = timers.saturating_add(*period_ns),
            _ => {}
        }
    }
    busy.max(timers).max(MIN_ITERATION_NS)
}

/// The least simulated time one iteration of `ops` takes, with no floor
/// for ops that take no time: its `run` work (at capacity 1024, the
/// fastest a CPU runs), `runtime` and `sleep` follow one another, and each
/// timer it waits on `k` times takes `k` periods (its expiries are a
/// period apart; different timers may expire together, so only the
/// longest counts).
fn iteration_least(ops: &[Op]) -> u64 {
    let mut busy = 0u64;
    let mut timers: Vec<(schedlab_core::program::TimerRef, u64)> = Vec::new();
    for op in ops {
        match op {
            Op::Run { work_ns, .. } => busy = busy.saturating_add(*work_ns),
            Op::Runtime { wall_ns, .. } => busy = busy.saturating_add(*wall_ns),
            Op::Sleep { ns } => busy = busy.saturating_add(*ns),
            Op::Timer { timer, period_ns } => match timers.iter_mut().find(|(t, _)| t == timer) {
                Some((_, sum)) => *sum = sum.saturating_add(*period_ns),
                None => timers.push((*timer, *period_ns)),
            },
            _ => {}
        }
    }
    timers.iter().map(|&(_, p)| p).fold(busy, u64::max)
}

/// `Σ over phases of phase loops × f(phase's ops)`, times the program's
/// passes (None: it loops for ever).
fn program_sum(t: &TaskSpec, f: impl Fn(&[Op]) -> u64) -> Option<u64> {
    let loops = t.program.loops?;
    let pass = t
        .program
        .phases
        .iter()
        .map(|ph| ph.loops.saturating_mul(f(&ph.ops)))
        .fold(0u64, u64::saturating_add);
    Some(loops.saturating_mul(pass))
}

/// The least simulated time a run without a duration lasts, and what
/// sets it: the longest thread started at start-up (its delay, then every
/// pass of its program at `iteration_least`), or the `run` work of all
/// of them spread over every CPU, whichever is longer. Forked threads are
/// left out (one never forked never runs). None when a thread loops for
/// ever.
pub fn least_length(w: &Workload, cpus: u64) -> Option<(u64, String)> {
    let mut best = (0u64, String::new());
    let mut work = 0u64;
    for t in w.tasks.iter().filter(|t| !t.forked) {
        let own = t.delay_ns.saturating_add(program_sum(t, iteration_least)?);
        if own > best.0 {
            best = (own, format!("thread '{}'", t.name));
        }
        let run = program_sum(t, |ops| {
            ops.iter()
                .map(|op| match op {
                    Op::Run { work_ns, .. } => *work_ns,
                    _ => 0,
                })
                .fold(0u64, u64::saturating_add)
        })?;
        work = work.saturating_add(run);
    }
    let spread = work / cpus.max(1);
    if spread > best.0 {
        best = (spread, format!("the threads' CPU work over {cpus} CPU(s)"));
    }
    Some(best)
}

/// Refuses a run without a duration (neither `--duration` nor the file's)
/// that cannot end within the duration limit in force (`--max-duration`,
/// default one day) by [`least_length`]: it would run for hours or for
/// ever where a run with a duration that long is refused.
pub fn check_length(what: &str, m: &Machine, w: &Workload, cfg: &SimConfig) -> Result<()> {
    use schedlab_workload::limits::{duration_limit_text, max_duration_ns};
    if cfg.duration_ns.or(w.duration_ns).is_some() {
        return Ok(());
    }
    let Some((least, who)) = least_length(w, m.nr_cpus() as u64) else {
        return Ok(());
    };
    let max = max_duration_ns();
    // At the limit exactly it cannot end within it either: start-up and
    // ticks take CPU time too.
    if least >= max {
        return Err(user(format!(
            "{what}: without a duration the run lasts at least {} of simulated time ({who}) and cannot end within the {} limit: pass --duration, or --max-duration to raise the limit",
            duration_limit_text(least),
            duration_limit_text(max)
        )));
    }
    Ok(())
}

pub use crate::limits::length_cap;

/// After a run: an error when a run without a duration passed
/// [`length_cap`] (`at`: the last time it was seen at, or its end), and
/// was stopped there or ended after it.
pub fn check_passed_limit(what: &str, end: Option<u64>, t_start: u64, at: u64) -> Result<()> {
    crate::limits::check_passed_limit(what, end, t_start, at).map_err(|e| user(e.to_string()))
}

/// The least CPU work (`run`, `runtime`) of any iteration of a thread, or
/// None when some phase needs none.
fn min_cpu_work(t: &TaskSpec) -> Option<u64> {
    t.program
        .phases
        .iter()
        .map(|ph| {
            ph.ops
                .iter()
                .map(|op| match op {
                    Op::Run { work_ns, .. } => *work_ns,
                    Op::Runtime { wall_ns, .. } => *wall_ns,
                    _ => 0,
                })
                .fold(0u64, u64::saturating_add)
        })
        .min()
        .filter(|&w| w > 0)
}

/// Rows one thread may log in `duration_ns` (None: until it ends).
fn rows_of(t: &TaskSpec, duration_ns: Option<u64>) -> u64 {
    if !t.log_rows {
        return 0;
    }
    let p = &t.program;
    let shortest = p
        .phases
        .iter()
        .map(|ph| iteration_floor(&ph.ops))
        .min()
        .unwrap_or(MIN_ITERATION_NS);
    let by_time = duration_ns.map(|d| d / shortest);
    let by_loops = loops_total(t);
    match (by_time, by_loops) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => 0,
    }
}

/// The bytes of rt-app logs `rows` rows make: each row a line, but with
/// rt-app's log_size N at most each logging thread's ring of N MiB.
fn log_bytes_of(w: &Workload, rows: u64) -> u64 {
    let lines = rows.saturating_mul(LOG_LINE_BYTES);
    match w.log_ring_bytes {
        Some(cap) => {
            let logging = w.tasks.iter().filter(|t| t.log_rows).count() as u64;
            lines.min(logging.saturating_mul(cap))
        }
        None => lines,
    }
}

/// A thread's iterations when its loops bound them (None: it loops until
/// the run ends).
fn loops_total(t: &TaskSpec) -> Option<u64> {
    let p = &t.program;
    p.loops.map(|l| {
        l.saturating_mul(
            p.phases
                .iter()
                .map(|ph| ph.loops)
                .fold(0u64, u64::saturating_add),
        )
    })
}

/// The estimate and its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Estimate {
    /// Threads.
    pub tasks: u64,
    /// CPUs.
    pub cpus: u64,
    /// Log rows held in memory.
    pub rows: u64,
    /// Bytes in all.
    pub bytes: u64,
    /// Bytes of the rt-app logs the run writes.
    pub log_bytes: u64,
    /// Wall seconds to simulate (rough: rows × `WALL_NS_PER_ROW` + ticks
    /// / `EVENTS_PER_WALL_S`).
    pub wall_s: u64,
}

/// Estimates the memory of a run (module docs).
pub fn estimate(m: &Machine, w: &Workload, cfg: &SimConfig, held: Rows) -> Estimate {
    let duration = cfg.duration_ns.or(w.duration_ns);
    let tasks = w.tasks.len() as u64;
    let cpus = m.nr_cpus() as u64;
    // Threads whose every iteration needs CPU work share the CPUs: together
    // they log at most CPUs x duration / the least work of an iteration.
    let (mut busy_rows, mut free_rows, mut least_work) = (0u64, 0u64, u64::MAX);
    for t in &w.tasks {
        let r = rows_of(t, duration);
        match min_cpu_work(t) {
            Some(work) => {
                busy_rows = busy_rows.saturating_add(r);
                least_work = least_work.min(work);
            }
            None => free_rows = free_rows.saturating_add(r),
        }
    }
    if let Some(d) = duration {
        if least_work != u64::MAX {
            busy_rows = busy_rows.min(cpus.saturating_mul(d) / least_work);
        }
    }
    let rows = busy_rows.saturating_add(free_rows);
    // rt-app's log_size N: the rings are held in memory until the run ends.
    let log_bytes = log_bytes_of(w, rows);
    let rings = if w.log_ring_bytes.is_some() {
        log_bytes
    } else {
        0
    };
    let specs = w
        .tasks
        .iter()
        .map(schedlab_workload::limits::task_bytes)
        .fold(0u64, u64::saturating_add);
    let bytes = [
        BASE,
        tasks.saturating_mul(PER_TASK),
        specs.saturating_mul(2),
        cpus.saturating_mul(PER_CPU),
        rows.saturating_mul(match held {
            Rows::Streamed => PER_ROW_STREAMED,
        }),
        rings,
    ]
    .into_iter()
    .fold(0u64, u64::saturating_add);
    // Ticks: every CPU at HZ for the run (an upper bound: idle CPUs stop
    // their tick).
    let ticks = duration.map_or(0, |d| cpus.saturating_mul(d / cfg.tick_ns().max(1)));
    let wall_s = rows.saturating_mul(WALL_NS_PER_ROW) / 1_000_000_000 + ticks / EVENTS_PER_WALL_S;
    Estimate {
        tasks,
        cpus,
        rows,
        bytes,
        log_bytes,
        wall_s,
    }
}

/// The memory a run can have, bytes: `MemAvailable` (else `MemTotal`) of
/// /proc/meminfo, capped by `RLIMIT_AS`.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    let mem = field("MemAvailable:").or_else(|| field("MemTotal:"))?;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `lim`, which lives for the call.
    let as_limit = if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0
        && lim.rlim_cur != libc::RLIM_INFINITY
    {
        lim.rlim_cur
    } else {
        u64::MAX
    };
    Some(mem.min(as_limit))
}

/// The memory a generator's threads may take, counted twice (the
/// workload as built and the simulator's copy): what the machine has
/// available (`machine_memory`), unlimited when that is unknown.
pub fn build_budget() -> u64 {
    machine_memory().unwrap_or(u64::MAX)
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

pub fn size(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => gib(b),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn wall(s: u64) -> String {
    match s {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{:.1} h", s as f64 / 3600.0),
    }
}

/// Most events a pilot run ([`refine`]) simulates: about a quarter of a
/// second of wall time at the bench cases' rates (a cost choice).
const PILOT_EVENTS: u64 = 2 << 20;
/// The share of the run's duration a pilot run covers at most.
const PILOT_SHARE: u64 = 20;

/// Counts the log rows of a pilot run.
struct CountRows(std::rc::Rc<std::cell::Cell<u64>>);

impl schedlab_core::observe::RowSink for CountRows {
    fn row(&mut self, _: schedlab_core::ids::TaskId, _: &str, _: &schedlab_core::stats::LogRow) {
        self.0.set(self.0.get() + 1);
    }
}

/// What a pilot run saw.
struct Pilot {
    /// The run's start and the last time the pilot saw.
    start: u64,
    reached: u64,
    /// The run ended before the pilot's limits.
    ended: bool,
    /// Log rows and loops done, and the wall time taken.
    rows: u64,
    loops: u64,
    wall_ns: u64,
}

/// Simulates `w` without outputs for at most [`PILOT_EVENTS`] events and
/// at most `span` ns of simulated time. None: the run cannot be built (the
/// real run reports why).
fn pilot(m: &Machine, w: &Workload, cfg: &SimConfig, span: Option<u64>) -> Option<Pilot> {
    let mut sim =
        schedlab_core::Sim::new(m.clone(), w, cfg.clone(), schedlab_core::observe::NullSink)
            .ok()?;
    let rows = std::rc::Rc::new(std::cell::Cell::new(0u64));
    sim.stream_rows(Box::new(CountRows(rows.clone())));
    let start = sim.t_start;
    let stop = span.map_or(u64::MAX, |d| start.saturating_add(d));
    let t0 = std::time::Instant::now();
    // The callback comes every 65 536 events.
    let mut calls = 0u64;
    let mut reached = start;
    sim.run_while(|t| {
        calls += 1;
        reached = t;
        calls.saturating_mul(1 << 16) < PILOT_EVENTS && t < stop
    });
    Some(Pilot {
        start,
        reached,
        ended: reached < stop && calls.saturating_mul(1 << 16) < PILOT_EVENTS,
        rows: rows.get(),
        loops: sim.sched.tasks.iter().map(|t| t.stats.loops).sum(),
        wall_ns: t0.elapsed().as_nanos() as u64,
    })
}

/// Replaces the static estimate's rows, logs and wall time by a pilot
/// run's: the run simulated (without outputs) for at most
/// `PILOT_EVENTS` events or 1/`PILOT_SHARE` of its duration, its rows
/// and wall time scaled to the whole duration. Only for a run with a
/// duration whose static estimate would be printed or would refuse it
/// (`max_output`, with `--out`): the static bound assumes every thread
/// iterates as fast as its own ops allow, which a thread that waits on
/// another (an OLTP client on its backend) does not. The pilot's rows,
/// hence a refusal, are the same on every machine; its wall time is
/// this machine's. The run itself is not affected.
pub fn refine(
    m: &Machine,
    w: &Workload,
    cfg: &SimConfig,
    est: Estimate,
    max_output: Option<u64>,
) -> Estimate {
    let Some(duration) = cfg.duration_ns.or(w.duration_ns).filter(|&d| d > 0) else {
        return refine_by_loops(m, w, cfg, est);
    };
    let shown = est.wall_s >= SHOW_ESTIMATE_WALL_S;
    if !shown && max_output.is_none_or(|max| est.log_bytes <= max) {
        return est;
    }
    let Some(p) = pilot(m, w, cfg, Some(duration / PILOT_SHARE)) else {
        return est;
    };
    // A run that ended inside the pilot covered its whole duration.
    let covered = if p.ended {
        duration
    } else {
        p.reached.saturating_sub(p.start).clamp(1, duration)
    };
    let scale = |x: u64| ((x as u128 * duration as u128) / covered as u128) as u64;
    let rows_all = scale(p.rows);
    let log_bytes = log_bytes_of(w, rows_all);
    Estimate {
        rows: rows_all.min(est.rows.max(p.rows)),
        log_bytes: log_bytes.min(est.log_bytes),
        wall_s: scale(p.wall_ns) / 1_000_000_000,
        ..est
    }
}

/// [`refine`] for a run without a duration, which ends when its threads
/// have done their loops (hackbench): a pilot of up to [`PILOT_EVENTS`]
/// events, its wall time scaled by the share of all the threads' loops it
/// did. Only when the loops are many enough that the run cannot end inside
/// the pilot (at least one event per loop); the rows need no pilot (a
/// thread logs its loops).
fn refine_by_loops(m: &Machine, w: &Workload, cfg: &SimConfig, est: Estimate) -> Estimate {
    let mut total = 0u64;
    for t in &w.tasks {
        let Some(n) = loops_total(t) else {
            return est;
        };
        total = total.saturating_add(n);
    }
    if total < PILOT_EVENTS {
        return est;
    }
    let Some(p) = pilot(m, w, cfg, None) else {
        return est;
    };
    if p.loops == 0 {
        return est;
    }
    Estimate {
        wall_s: ((p.wall_ns as u128 * total as u128 / p.loops as u128) / 1_000_000_000) as u64,
        ..est
    }
}

/// Refuses a run whose rt-app logs would pass `--max-output` (with
/// `--out`; trace files are not estimated).
pub fn check_output(what: &str, e: &Estimate, max: u64) -> Result<()> {
    if e.log_bytes > max {
        return Err(user(format!(
            "{what}: the run would write about {} of rt-app logs ({} rows), more than the --max-output limit of {}: --max-output raises it",
            size(e.log_bytes),
            e.rows,
            size(max)
        )));
    }
    Ok(())
}

/// The estimate line printed before a long or large run (None: the run
/// is short and small).
/// `writes_logs`: the run writes its rt-app logs (`--out`); without it the
/// rows are counted but no log size is given.
pub fn estimate_line(e: &Estimate, writes_logs: bool) -> Option<String> {
    if e.wall_s < SHOW_ESTIMATE_WALL_S && e.bytes < SHOW_ESTIMATE_BYTES {
        return None;
    }
    let logs = if writes_logs {
        format!(", {} of logs", size(e.log_bytes))
    } else {
        String::new()
    };
    Some(format!(
        "estimate: about {} of memory and {} of wall time ({} threads, {} CPUs, {} log rows{logs})",
        size(e.bytes),
        wall(e.wall_s),
        e.tasks,
        e.cpus,
        e.rows,
    ))
}

/// Refuses a run estimated to need more than the machine's memory.
pub fn check_memory(
    what: &str,
    m: &Machine,
    w: &Workload,
    cfg: &SimConfig,
    held: Rows,
) -> Result<()> {
    let e = estimate(m, w, cfg, held);
    let rows = match held {
        Rows::Streamed => "log rows, streamed, their latency samples kept",
    };
    let Some(total) = machine_memory() else {
        return Ok(());
    };
    if e.bytes > total {
        return Err(user(format!(
            "{what}: the run would need about {} of memory ({} threads, {} CPUs, {} {rows}), more than the {} this machine has available: shorten --duration, the workload or the machine",
            gib(e.bytes),
            e.tasks,
            e.cpus,
            e.rows,
            gib(total)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::program::Policy;

    #[test]
    fn rows_follow_duration_and_loops() {
        let ops = vec![
            Op::Run {
                work_ns: 1_000_000,
                config_us: 1000,
                perf: 1,
            },
            Op::Sleep { ns: 9_000_000 },
        ];
        let t = TaskSpec::looping("a", 0, Policy::Normal, ops);
        // 10 ms a row: 100 rows a second.
        assert_eq!(rows_of(&t, Some(1_000_000_000_000_000)), 100_000_000);
        let mut t2 = t.clone();
        t2.program.loops = Some(5);
        assert_eq!(rows_of(&t2, Some(1_000_000_000_000_000)), 5);
        assert_eq!(rows_of(&t2, None), 5);
        let free = TaskSpec::looping("b", 0, Policy::Normal, vec![Op::Yield]);
        assert_eq!(rows_of(&free, Some(1_000_000_000)), 100_000);
    }

    /// A pilot run replaces the static row bound of threads that wait on
    /// others: 8 OLTP backends and their clients on a7-octa for 10 s log
    /// 27 048 rows (counted in the logs of `schedlab run ... --out`); the
    /// static bound is several times that, the pilot's within 2x.
    #[test]
    fn a_pilot_run_brings_the_rows_within_twice_the_run_s() {
        let w = schedlab_workload::generators::oltp(
            "oltp:workers=8,cpu_us=80,io_us=120",
            "workers=8,cpu_us=80,io_us=120",
            8,
        )
        .unwrap()
        .workload;
        let m = schedlab_core::machine::presets::preset("a7-octa").unwrap();
        let cfg = SimConfig {
            duration_ns: Some(10_000_000_000),
            ..SimConfig::default()
        };
        let est = estimate(&m, &w, &cfg, Rows::Streamed);
        let real = 27_048u64;
        assert!(est.rows > 3 * real, "static {}", est.rows);
        // Refined when its logs would pass the limit.
        let pilot = refine(&m, &w, &cfg, est, Some(est.log_bytes / 2));
        assert!(
            pilot.rows >= real / 2 && pilot.rows <= 2 * real,
            "pilot {}",
            pilot.rows
        );
        assert_eq!(pilot.log_bytes, pilot.rows * LOG_LINE_BYTES);
        // Not refined when nothing depends on it: a short run within its
        // output limit.
        let short = SimConfig {
            duration_ns: Some(100_000_000),
            ..SimConfig::default()
        };
        let e = estimate(&m, &w, &short, Rows::Streamed);
        assert!(e.wall_s < SHOW_ESTIMATE_WALL_S);
        assert_eq!(refine(&m, &w, &short, e, Some(e.log_bytes)), e);
    }

    /// A run without a duration (hackbench's loops) has no static wall
    /// estimate; a long one gets it from a pilot's share of the loops, a
    /// short one (fewer loops than the pilot's events) is left alone.
    #[test]
    fn a_loop_bound_run_gets_its_wall_time_from_a_pilot() {
        let m = schedlab_core::machine::presets::preset("vm-2cpu").unwrap();
        let cfg = SimConfig::default();
        let hb = |loops: u64| {
            let rest = format!("groups=4,loops={loops}");
            schedlab_workload::generators::hackbench(&format!("hackbench:{rest}"), &rest)
                .unwrap()
                .workload
        };
        let long = hb(200_000);
        let est = estimate(&m, &long, &cfg, Rows::Streamed);
        assert_eq!(est.wall_s, 0, "no static figure without a duration");
        // 4 x 20 x 20 x 200 000 = 320 M messages: minutes of wall time.
        assert!(refine(&m, &long, &cfg, est, None).wall_s >= 10);
        let short = hb(10);
        let e = estimate(&m, &short, &cfg, Rows::Streamed);
        assert_eq!(refine(&m, &short, &cfg, e, None), e);
    }

    /// log_size N: the logs are at most N MiB per logging thread, and the
    /// rings are memory; "disable" (no logging thread) writes nothing.
    #[test]
    fn a_log_ring_bounds_the_logs_and_counts_as_memory() {
        let ops = vec![
            Op::Run {
                work_ns: 10_000,
                config_us: 10,
                perf: 1,
            },
            Op::Sleep { ns: 90_000 },
        ];
        let mut w = Workload {
            tasks: (0..4)
                .map(|i| TaskSpec::looping("t", i, Policy::Normal, ops.clone()))
                .collect(),
            duration_ns: Some(30_000_000_000),
            ..Default::default()
        };
        let m = schedlab_core::machine::presets::preset("vm-2cpu").unwrap();
        let cfg = SimConfig::default();
        let file = estimate(&m, &w, &cfg, Rows::Streamed);
        // 4 threads x 10 000 rows a second x 30 s.
        assert_eq!(file.rows, 1_200_000);
        assert_eq!(file.log_bytes, 1_200_000 * LOG_LINE_BYTES);
        w.log_ring_bytes = Some(2 << 20);
        let ring = estimate(&m, &w, &cfg, Rows::Streamed);
        assert_eq!(ring.log_bytes, 4 * (2 << 20));
        assert_eq!(ring.bytes, file.bytes + 4 * (2 << 20));
        for t in &mut w.tasks {
            t.log_rows = false;
        }
        assert_eq!(estimate(&m, &w, &cfg, Rows::Streamed).log_bytes, 0);
    }
}
