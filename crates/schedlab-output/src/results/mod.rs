//! Run results: one call turns a finished simulation into everything it
//! leaves behind, for `schedlab run`, `compare`, `bench` and the Python
//! package alike.
//!
//! ```text
//!  Sim::new(machine, workload, cfg, sink) ── simulate() ──► (Sim, RunResult)
//!        │
//!        ├─ check_outcome(&sim, &res) ─► Ok | RunError::{Deadlock, Violation}
//!        ├─ RunResults::collect(&sim, &res, &workload)
//!        │     summary            summary.json          (Summary)
//!        │     schedstat          schedstat             (/proc/schedstat v17)
//!        │     cgroup_cpu_stat    cgroup/<path>/cpu.stat
//!        │     logs               <log_basename>-<thread>.log (threads with rows)
//!        │     wakeup_latency     the latency table `run` prints
//!        │     headline           the figures `compare` tabulates
//!        ├─ Headline::of(&sim, &res)        (just the headline figures)
//!        └─ sim.into_sink() ─► TraceOutput::write_trace (crate::tee)
//!  write_run(stage, &results, sink): all files above + the traces, then
//!  the staged directory is committed (all or nothing).
//! ```
//!
//! What it owns: [`RunResults`] and its [`collect`](RunResults::collect)
//! (the only place that reads a finished `Sim`, in `collect.rs`), the
//! out-directory layout ([`RunResults::write_dir`], [`write_run`]), the
//! `profile` file and the text `schedlab run` prints (`text.rs`), and the
//! typed errors [`RunError`] and [`OutputError`]. It never prints and
//! reads no environment variable.
//!
//! # summary.json, field by field
//!
//! Times are simulated time. `_ns` nanoseconds, `_us`/`_usec`
//! microseconds (truncated, not rounded), `_s` seconds; counts are plain
//! integers. Fields marked *optional* are absent when they do not apply;
//! every other field is always present. Objects print their fields in the
//! order below (contract fields first, then added ones); a reader must
//! ignore fields it does not know.
//!
//! ## Top level
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `schedlab_version` | — | version of schedlab that wrote the file |
//! | `machine.name` | — | machine preset name, or the `sysfs:` machine's name |
//! | `machine.cpus` | count | logical CPUs |
//! | `features` | — | the resolved feature set, every switch: name → `true`/`false`, or a string for enum-valued ones (`THROTTLE`, `LB_SERIALIZE`) |
//! | `seed` | — | master seed; runs differ only by it |
//! | `hz` | Hz | CONFIG_HZ (tick rate) |
//! | `duration_ns` | ns | simulated time from rt-app's `t_start` (just before the threads are created) to the end of the run |
//! | `tasks` | — | one entry per workload thread that existed, in creation order (below) |
//! | `cpus` | — | one entry per CPU, in CPU order (below) |
//! | `groups` | — | one entry per task group except the root (below) |
//! | `profile.task_ns` | ns | Σ over CPUs of time running tasks (= Σ `cpus[].busy_ns`) |
//! | `profile.idle_ns` | ns | Σ over CPUs of idle time (= Σ `cpus[].idle_ns`) |
//! | `profile.paths_ns.context_switch` | ns | simulated CPU cost of context switches, all CPUs |
//! | `profile.paths_ns.wakeup` | ns | … of wakeups |
//! | `profile.paths_ns.balance` | ns | … of periodic load balancing |
//! | `profile.paths_ns.balance_atomic` | ns | … of accesses to the `sched_balance_running` flag |
//! | `profile.paths_ns.newidle` | ns | … of newidle balancing |
//! | `profile.paths_ns.steal` | ns | … of STEAL (idle CPUs stealing from overloaded LLC peers) |
//! | `profile.paths_ns.throttle` | ns | … of CFS bandwidth: throttle/unthrottle walks, limbo re-enqueues, period/slack timer distribution |
//! | `profile.paths_ns.available_idle_cpu` | ns | … of wakeup placement reading other CPUs' runqueues (`available_idle_cpu` in `select_idle_sibling` and its scan: one cache-line transfer per CPU read; not in `wakeup`) |
//! | `profile.paths_ns.sched_idle_cpu` | ns | … of its `sched_idle_cpu` reads (SCHED_IDLE_AS_IDLE: a second line per busy CPU read) |
//! | `preempt` | — | preemption model: `none`, `voluntary`, `full`, `lazy` |
//! | `events` | count | simulator events handled (the run's cost; `schedlab bench` reports it per wall second) |
//! | `workload_time_s` | s | *optional*: hackbench's own time, start barrier release → last thread's exit, truncated to ms (hackbench prints 3 decimals); only when the workload has a start barrier and every thread exited |
//! | `schbench` | | *optional*, `schbench:` runs only: schbench's percentile tables, RPS and sched delay (`results/schbench.rs`, docs/summary-json.md) |
//! | `throughput_per_s` | 1/s | *optional* (`duration_ns` > 0): completed iterations per simulated second, Σ `loops` of all threads except OLTP's `client-*` threads (rt-app log rows; transactions for the OLTP generator) ÷ `duration_ns`; for the `specjbb:` generator, its jOPS (the injectors' completed transactions per simulated second, `specjbb.jops`) |
//! | `helpers` | — | the simulator's helper tasks (rt-app's main thread): `{name, pid, runtime_ns, switches}`; their CPU time is part of the CPUs' `busy_ns` |
//! | `wasted_idle_ns` | ns | wasted idle time, all CPUs: time a CPU sat idle while a task it could run (affinity allowing) waited on another CPU; sampled every 250 µs, so a resolution of one sample per idle interval |
//! | `wasted_idle_by_level_ns` | ns | the same split by the lowest sched-domain level whose span held a waiting task: keys `domain<level>:<name>` (level 0 = smallest domain; names are CPU 0's domains, e.g. `domain0:SMT`, `domain1:MC`) |
//! | `load_balance.lb_count` | count | `[not idle, idle, newly idle]`: load-balance passes of the whole run by idle type (`__CPU_NOT_IDLE`, `CPU_IDLE`, `CPU_NEWLY_IDLE`), summed over all CPUs and domains (the schedstat `lb_count` columns) |
//! | `load_balance.lb_balanced` | count | same layout: passes that found the domain balanced |
//! | `load_balance.lb_failed` | count | same layout: passes that wanted to move tasks and moved none |
//! | `sched_balance_running.attempts` | count | attempts to take the global `sched_balance_running` flag (`LB_SERIALIZE`) |
//! | `sched_balance_running.acquired` | count | attempts that took it |
//! | `sched_balance_running.cpu_ns` | ns | CPU time of those accesses to the flag's cache line, all CPUs |
//!
//! ## `tasks[]`
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `name` | — | thread name (`cfs_thread-0`: rt-app task name, `-`, instance) |
//! | `pid` | — | simulated pid |
//! | `policy` | — | `SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`, `SCHED_FIFO`, `SCHED_RR`, `SCHED_DEADLINE` |
//! | `nice` | — | nice value of fair-class tasks; 0 for RT and deadline tasks |
//! | `group` | — | cgroup path (`/` for the root) |
//! | `runtime_ns` | ns | CPU time the thread received: its `sum_exec_runtime`, the scheduler work charged to it (`sched_work_ns`) included |
//! | `wait_ns` | ns | time runnable but not running (on a runqueue) |
//! | `switches` | count | times switched in |
//! | `migrations` | count | migrations between CPUs |
//! | `wakeups` | count | wakeups of this thread |
//! | `loops` | count | phase iterations completed (= rows of its rt-app log) |
//! | `wakeup_latency_us` | µs | `{n, min, max, sum, mean, stddev}` of the `wu_lat` column of its rt-app log rows that waited on a timer (`n` samples; `mean` and population `stddev` as floats, 0 when `n` = 0) |
//! | `uclamp` | — | *optional*: requested utilisation clamps `{util_min, util_max}` (each optional, 0..=1024) and `phases: {phase name: {util_min, util_max}}` for phases setting their own |
//! | `deadlines` | — | *optional* (threads with timer rows): `periods` (timer rows), `missed` (rows whose work ended after the timer's expiry: negative slack), `slack_us: {min, mean, max}` (µs; `mean` truncated toward zero) |
//! | `rt_priority` | — | *optional* (`SCHED_FIFO`/`SCHED_RR`): the RT priority |
//! | `sched_deadline` | — | *optional* (`SCHED_DEADLINE`): `runtime_us`, `deadline_us`, `period_us` (the parameters, µs), `replenishments` (runtime replenishments), `late_replenishments` (replenishments that found the deadline already past: missed deadlines) |
//!
//! ## `cpus[]`
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `cpu` | — | CPU number |
//! | `busy_ns` | ns | time running task work (helpers included) |
//! | `idle_ns` | ns | time idle, including idle-state exit latency |
//! | `sched_overhead_ns` | ns | time in scheduler paths (their simulated costs) charged to this CPU |
//! | `wasted_idle_ns` | ns | this CPU's part of `wasted_idle_ns` |
//! | `sched_count` | count | `schedule()` calls (schedstat `sched_count`) |
//! | `sched_goidle` | count | `schedule()` calls that picked idle (`sched_goidle`) |
//! | `ttwu_count` | count | wakeups done on this CPU (`ttwu_count`) |
//! | `steal` | count | tasks this CPU stole (STEAL) |
//! | `rt_throttled` | count | *optional* (> 0 only): times the CPU's RT queue ran out of RT runtime |
//! | `rt_push`, `rt_pull` | count | *optional* (> 0 only): RT tasks pushed away from / pulled to this CPU |
//! | `dl_push`, `dl_pull` | count | *optional* (> 0 only): deadline tasks pushed away / pulled |
//! | `pi_setprio` | count | *optional* (> 0 only): priority-inheritance priority changes of tasks on this CPU |
//!
//! ## `groups[]`
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `path` | — | cgroup path (`/tg1`, `/a/b`) |
//! | `cpu_stat.usage_usec` | µs | CPU time of the group's tasks, descendants included (cgroup v2 `cpu.stat`) |
//! | `cpu_stat.nr_periods` | count | bandwidth periods that elapsed while the group's period timer ran (0 without a quota) |
//! | `cpu_stat.nr_throttled` | count | periods in which the group was throttled |
//! | `cpu_stat.throttled_usec` | µs | time the group spent throttled |
//! | `cpu_stat.user_usec` | µs | `usage_usec` minus `system_usec` |
//! | `cpu_stat.system_usec` | µs | the part spent in the kernel (channel syscalls' CPU time) |
//! | `cpu_stat.nr_bursts` | count | periods in which the group used more than its quota (burst) |
//! | `cpu_stat.burst_usec` | µs | runtime used beyond the quota, all periods |
//! | `cpu.max` | — | `"<quota_us> <period_us>"`, or `"max <period_us>"` without a quota (as the cgroup file reads) |
//! | `cpu.max.burst` | µs | burst allowance (0 without a quota) |
//! | `shares` | — | the group's weight in cgroup v1 `cpu.shares` units (1024 = `cpu.weight` 100 = nice 0) |
//! | `cpu.idle` | 0/1 | `cpu.idle`: the group's entities count as SCHED_IDLE |
//!
//! The same `cpu_stat` figures are written to `cgroup/<path>/cpu.stat`
//! (see [`crate::cgroup`]); `schedstat` is described in
//! [`crate::schedstat`], the logs in [`crate::rtapp_log`].

pub mod by_name;
mod collect;
pub mod header;
pub mod schbench;
pub mod specjbb;
mod text;

pub use collect::{check_outcome, deadlines_json, schedstat, summary};
pub use text::{profile_text, TextOptions};

use schedlab_core::machine::Machine;
use schedlab_core::observe::Sink;
use schedlab_core::program::Workload;
use schedlab_core::stats::{LogRow, SampleStats};
use schedlab_core::SimError;
use schedlab_core::{RunResult, Sim, SimConfig};
use std::io;

use crate::cgroup::write_cpu_stat;
use crate::outdir::StagedOutDir;
use crate::rtapp_log::write_log;
use crate::schedstat::{write_schedstat, CpuSchedstat};
use crate::summary::{GroupCpuStat, Summary};
use crate::tee::{TraceError, TraceOutput};

/// Everything a finished run leaves behind (see the [module docs](self)).
#[derive(Clone, Debug, PartialEq)]
pub struct RunResults {
    /// summary.json's content.
    pub summary: Summary,
    /// Jiffies since boot on schedstat's `timestamp` line (end of the run ÷
    /// tick length).
    pub schedstat_jiffies: u64,
    /// /proc/schedstat, per CPU.
    pub schedstat: Vec<CpuSchedstat>,
    /// `(file name, figures)` per task group but the root; the file name
    /// is relative to the output directory (`cgroup/<path>/cpu.stat`).
    pub cgroup_cpu_stat: Vec<(String, GroupCpuStat)>,
    /// Each thread's rt-app log, in thread order.
    pub logs: Vec<ThreadLog>,
    /// Wakeup latency per rt-app task (threads of one task merged), for
    /// the table `schedlab run` prints.
    pub wakeup_latency: Vec<LatencyGroup>,
    /// The headline figures (`schedlab compare`).
    pub headline: Headline,
    /// The counters sampled every `--counters-every` (counters.csv; none
    /// without it).
    pub counters: Vec<schedlab_core::stats::CountersAt>,
}

/// One thread's rt-app log.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadLog {
    /// `<log_basename>-<thread>.log`.
    pub file_name: String,
    /// Its rows.
    pub rows: Vec<LogRow>,
}

/// Wakeup latency of one rt-app task (µs).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyGroup {
    /// The task's name (thread names without their `-<n>` suffix).
    pub name: String,
    /// Statistics of the `wu_lat` samples of all its threads.
    pub stats: SampleStats,
}

/// A run's headline figures, the raw totals `schedlab compare` builds its
/// metrics from ([`crate::compare::headline_metrics`]). Sums are over the
/// workload's threads (helpers excluded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Headline {
    /// Simulated time from `t_start` to the end (as `duration_ns`).
    pub duration_ns: u64,
    /// hackbench's own time (start barrier release → last exit), µs;
    /// `None` without a start barrier or while threads are left.
    pub workload_time_us: Option<u64>,
    /// Σ throttled time of the groups with a quota; `None` when no group
    /// has one.
    pub throttled_ns: Option<u64>,
    /// Σ throttled periods of the groups with a quota; `None` when no
    /// group has one.
    pub nr_throttled: Option<u64>,
    /// Wakeup latency (µs) over all threads' timer rows.
    pub wakeup_latency: SampleStats,
    /// Σ timer rows (periods) of the threads (summary.json's
    /// `deadlines.periods`).
    pub periods: u64,
    /// Σ of those whose work ended after the timer's expiry (negative
    /// slack; `deadlines.missed`).
    pub missed_periods: u64,
    /// Σ CPU time received.
    pub runtime_ns: u64,
    /// Σ switches in.
    pub switches: u64,
    /// Σ migrations.
    pub migrations: u64,
    /// Σ completed iterations.
    pub loops: u64,
}

/// A run that ended badly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// Every remaining thread waits for something no thread will do.
    #[error(
        "every remaining thread waits for something no thread will do (deadlock at {at_ns} ns)"
    )]
    Deadlock {
        /// When the run stopped.
        at_ns: u64,
    },
    /// A model invariant broke (a bug in the simulator; `--check`).
    #[error("check failed: {0}")]
    Violation(String),
}

/// Writing a run's output directory failed.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// One file could not be written.
    #[error("{file}: cannot write: {source}")]
    Write {
        /// The file, relative to the output directory.
        file: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A trace file could not be written.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// Moving the staged files into place failed.
    #[error("cannot commit the output directory: {0}")]
    Commit(#[source] io::Error),
}

fn write_err(file: &str) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Write {
        file: file.to_string(),
        source,
    }
}

impl RunResults {
    /// Stages every result file (not the traces) into `stage`: summary.json,
    /// `profile`, `schedstat`, `cgroup/<path>/cpu.stat`, counters.csv (when
    /// sampled), the rt-app logs.
    pub fn write_dir(&self, stage: &StagedOutDir) -> Result<(), OutputError> {
        let s = &self.summary;
        stage
            .write("summary.json", s.to_json_string().as_bytes())
            .map_err(write_err("summary.json"))?;
        stage
            .write("profile", profile_text(s).as_bytes())
            .map_err(write_err("profile"))?;
        let mut text = Vec::new();
        write_schedstat(
            &mut text,
            self.schedstat_jiffies,
            s.machine.cpus as usize,
            &self.schedstat,
        )
        .map_err(write_err("schedstat"))?;
        stage
            .write("schedstat", &text)
            .map_err(write_err("schedstat"))?;
        for (name, st) in &self.cgroup_cpu_stat {
            stage
                .write(name, write_cpu_stat(st).as_bytes())
                .map_err(write_err(name))?;
        }
        if !self.counters.is_empty() {
            stage
                .write("counters.csv", counters_csv(&self.counters).as_bytes())
                .map_err(write_err("counters.csv"))?;
        }
        // Only threads with rows get a log file (hackbench's threads, or a
        // thread that never completed a loop, would leave header-only files).
        for log in self.logs.iter().filter(|l| !l.rows.is_empty()) {
            stage
                .write_with(&log.file_name, |f| write_log(f, &log.rows))
                .map_err(write_err(&log.file_name))?;
        }
        Ok(())
    }
}

/// counters.csv: one row per sample of the run's cumulative counters
/// ([`schedlab_core::stats::CountersAt`]), `time_ns` on the trace's clock.
pub fn counters_csv(rows: &[schedlab_core::stats::CountersAt]) -> String {
    use std::fmt::Write;
    let mut out = String::from(
        "time_ns,switches,involuntary_switches,migrations,helper_switches,sched_goidle,busy_ns,idle_ns,sched_overhead_ns\n",
    );
    for k in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{}",
            k.at_ns,
            k.switches,
            k.involuntary_switches,
            k.migrations,
            k.helper_switches,
            k.sched_goidle,
            k.busy_ns,
            k.idle_ns,
            k.sched_overhead_ns
        );
    }
    out
}

/// Writes a run's whole output directory: the result files, the trace
/// files of `trace` (none for a `NullSink`), then commits `stage` (all or
/// nothing: on error the stage is dropped and nothing appears).
pub fn write_run<T: TraceOutput>(
    stage: StagedOutDir,
    results: &RunResults,
    trace: T,
) -> Result<(), OutputError> {
    results.write_dir(&stage)?;
    trace.write_trace(results.summary.machine.cpus, &stage)?;
    stage.commit().map_err(OutputError::Commit)?;
    Ok(())
}

/// Builds the simulation and runs it to its end.
pub fn simulate<S: Sink>(
    machine: Machine,
    workload: &Workload,
    cfg: SimConfig,
    sink: S,
) -> Result<(Sim<S>, RunResult), SimError> {
    let mut sim = Sim::new(machine, workload, cfg, sink)?;
    let res = sim.run();
    Ok((sim, res))
}

#[cfg(test)]
mod tests;
