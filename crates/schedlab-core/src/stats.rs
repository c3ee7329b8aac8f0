//! Counters and per-iteration measurements the run produces.

use crate::time::{Nanos, NSEC_PER_USEC};

/// One rt-app log row (formats-spec.md 2.3), all times in µs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LogRow {
    /// Global thread index.
    pub idx: u32,
    /// Thousands of calibrated loops done by the iteration's run events.
    pub perf: u64,
    /// Wall time spent inside run/runtime events.
    pub run: u64,
    /// Wall time of the whole iteration.
    pub period: u64,
    /// CLOCK_MONOTONIC at the iteration's start.
    pub start: u64,
    /// CLOCK_MONOTONIC at the iteration's end.
    pub end: u64,
    /// `start` minus the use case's `t_start`.
    pub rel_st: u64,
    /// Slack at the iteration's last timer event (signed).
    pub slack: i64,
    /// Configured run time of the iteration.
    pub c_duration: u64,
    /// Configured periods of the iteration's timers.
    pub c_period: u64,
    /// Wake-up latency (reset by an overrun).
    pub wu_lat: u64,
}

/// Per-task figures for summary.json.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskStats {
    /// CPU time the task got: the kernel's `sum_exec_runtime` (what
    /// `/proc/<pid>/schedstat`'s first field shows), i.e. its program's
    /// time plus `sched_work_ns`.
    pub runtime_ns: Nanos,
    /// The part of `runtime_ns` that was scheduler work done in the task's
    /// own context (the switch to it, its wake-ups and their IPIs:
    /// `Sim::charge_task_ctx`). The CPUs count that time in
    /// `sched_overhead_ns`, not `busy_ns`, so `runtime_ns − sched_work_ns`
    /// summed over the tasks is the CPUs' busy time.
    pub sched_work_ns: Nanos,
    /// Time spent runnable but not running.
    pub wait_ns: Nanos,
    /// Times the task was switched in.
    pub switches: u64,
    /// Involuntary switches out (preemptions).
    pub preempted: u64,
    /// Migrations between CPUs.
    pub migrations: u64,
    /// Wakeups of this task.
    pub wakeups: u64,
    /// Phase iterations completed (log rows).
    pub loops: u64,
}

impl TaskStats {
    /// The program's own CPU time: `runtime_ns` less the scheduler work
    /// charged to the task (`sched_work_ns`).
    pub fn program_ns(&self) -> Nanos {
        self.runtime_ns - self.sched_work_ns
    }
}

/// Per-CPU figures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Time running task work.
    pub busy_ns: Nanos,
    /// Time idle (including idle-state exit).
    pub idle_ns: Nanos,
    /// Time in scheduler paths (costs charged to this CPU).
    pub sched_overhead_ns: Nanos,
    /// `schedule()` calls (schedstat sched_count).
    pub sched_count: u64,
    /// `schedule()` calls that picked idle (sched_goidle).
    pub sched_goidle: u64,
    /// Wakeups done on this CPU (ttwu_count).
    pub ttwu_count: u64,
    /// Wakeups of tasks that were last on this CPU (ttwu_local).
    pub ttwu_local: u64,
    /// Time tasks waited on this runqueue (run_delay).
    pub run_delay_ns: Nanos,
    /// Time tasks ran on this CPU (rq_cpu_time).
    pub rq_cpu_time_ns: Nanos,
    /// Timeslices run (pcount).
    pub pcount: u64,
    /// Tasks stolen by this CPU (STEAL).
    pub steal: u64,
    /// Overloaded CPUs seen with nothing migratable (STEAL's steal_fail).
    pub steal_fail: u64,
    /// Times this CPU's RT queue ran out of RT runtime.
    pub rt_throttled: u64,
    /// RT tasks pushed away from this CPU.
    pub rt_push: u64,
    /// RT tasks pulled to this CPU.
    pub rt_pull: u64,
    /// Deadline tasks pushed away from this CPU.
    pub dl_push: u64,
    /// Deadline tasks pulled to this CPU.
    pub dl_pull: u64,
    /// Priority-inheritance priority changes of tasks on this CPU.
    pub pi_setprio: u64,
}

/// Where CPU time went, by path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Context switches.
    pub context_switch_ns: Nanos,
    /// Wakeups.
    pub wakeup_ns: Nanos,
    /// Periodic balancing.
    pub balance_ns: Nanos,
    /// Newidle balancing.
    pub newidle_ns: Nanos,
    /// The `sched_balance_running` atomic.
    pub balance_atomic_ns: Nanos,
    /// STEAL.
    pub steal_ns: Nanos,
    /// CFS bandwidth: throttle/unthrottle walks, limbo re-enqueues and
    /// the period/slack timers' distribution.
    pub throttle_ns: Nanos,
    /// Wakeup placement's `available_idle_cpu` reads of other CPUs'
    /// runqueues (`fair::select`'s probes; not in `wakeup_ns`).
    pub available_idle_ns: Nanos,
    /// Wakeup placement's `sched_idle_cpu` reads (not in `wakeup_ns`).
    pub sched_idle_ns: Nanos,
}

/// Summary statistics of a list of samples (µs for wakeup latency).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleStats {
    /// Number of samples.
    pub n: u64,
    /// Minimum.
    pub min: u64,
    /// Maximum.
    pub max: u64,
    /// Sum.
    pub sum: u64,
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub stddev: f64,
}

impl SampleStats {
    /// Statistics of `xs` (population stddev, as rt-app users compute it).
    pub fn of(xs: impl IntoIterator<Item = u64>) -> SampleStats {
        let mut m = LatencySamples::default();
        for x in xs {
            m.push(x);
        }
        m.stats()
    }
}

/// A thread's wakeup-latency samples (the `wu_lat` of its log rows that
/// waited on a timer), kept as exact moments: count, sum, sum of squares
/// (u128), min and max. Memory is constant in the run's length (the
/// samples held run-length encoded would take 16 bytes per change of
/// value: ~1 MB per simulated second on 160 busy CPUs). The variance comes
/// from the exact integer `n·Σx² − (Σx)²`, rounded once to f64, so
/// samples merged from several threads ([`LatencySamples::merge`]) give the
/// same bits as the concatenated sequence, in any order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencySamples {
    n: u64,
    sum: u128,
    sumsq: u128,
    min: u64,
    max: u64,
}

impl LatencySamples {
    /// Appends one sample.
    pub fn push(&mut self, x: u64) {
        let x128 = u128::from(x);
        // x² < 2^128; the sums saturate only past 2^128 (µs samples of
        // 365-day runs stay far below).
        self.merge(&LatencySamples {
            n: 1,
            sum: x128,
            sumsq: x128 * x128,
            min: x,
            max: x,
        });
    }

    /// Adds `o`'s samples (the statistics of the concatenation).
    pub fn merge(&mut self, o: &LatencySamples) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            self.min = o.min;
            self.max = o.max;
        }
        self.n += o.n;
        self.sum += o.sum;
        self.sumsq = self.sumsq.saturating_add(o.sumsq);
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// No samples.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Their statistics (population stddev).
    pub fn stats(&self) -> SampleStats {
        let n = self.n;
        if n == 0 {
            return SampleStats::default();
        }
        let mean = self.sum as f64 / n as f64;
        let n128 = u128::from(n);
        // n·Σx² − (Σx)² ≥ 0 exactly; when a product overflows u128 (only
        // for absurd samples), the moments in f64 instead.
        let var = match (n128.checked_mul(self.sumsq), self.sum.checked_mul(self.sum)) {
            (Some(a), Some(b)) if self.sumsq < u128::MAX => {
                a.saturating_sub(b) as f64 / (n as f64 * n as f64)
            }
            _ => (self.sumsq as f64 / n as f64 - mean * mean).max(0.0),
        };
        SampleStats {
            n,
            min: self.min,
            max: self.max,
            sum: u64::try_from(self.sum).unwrap_or(u64::MAX),
            mean,
            stddev: var.sqrt(),
        }
    }
}

/// Slack of a thread's log rows that waited on a timer, kept as the rows
/// complete (the `deadlines` object of summary.json).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SlackStats {
    /// Timer rows.
    pub periods: u64,
    /// Timer rows with negative slack (the work ended after the expiry).
    pub missed: u64,
    /// Σ slack (µs).
    pub sum: i64,
    /// Smallest slack (µs); meaningless while `periods` is 0.
    pub min: i64,
    /// Largest slack (µs); meaningless while `periods` is 0.
    pub max: i64,
}

impl SlackStats {
    /// Adds one row (rows without a timer, `c_period` 0, do not count).
    pub fn push(&mut self, r: &LogRow) {
        if r.c_period == 0 {
            return;
        }
        if self.periods == 0 {
            self.min = r.slack;
            self.max = r.slack;
        }
        self.periods += 1;
        self.missed += (r.slack < 0) as u64;
        self.sum += r.slack;
        self.min = self.min.min(r.slack);
        self.max = self.max.max(r.slack);
    }

    /// The figures of `rows`.
    pub fn of(rows: &[LogRow]) -> SlackStats {
        let mut s = SlackStats::default();
        for r in rows {
            s.push(r);
        }
        s
    }
}

/// A scheduler path that costs CPU time (the profile's rows).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Path {
    /// `__schedule` + context switch.
    ContextSwitch,
    /// `try_to_wake_up`.
    Wakeup,
    /// Periodic balancing (`sched_balance_rq` from the softirq).
    Balance,
    /// Newidle balancing.
    Newidle,
    /// The `sched_balance_running` cmpxchg and its release.
    BalanceAtomic,
    /// STEAL's search and move.
    Steal,
    /// CFS bandwidth control's walks and timers.
    Throttle,
    /// Wakeup placement's `available_idle_cpu` reads of other CPUs'
    /// runqueues (part of `try_to_wake_up`, outside [`Path::Wakeup`]).
    AvailableIdle,
    /// Wakeup placement's `sched_idle_cpu` reads (SCHED_IDLE_AS_IDLE).
    SchedIdle,
}

/// Sampling period of the wasted-CPU metric.
pub const WASTE_SAMPLE_NS: Nanos = 250 * NSEC_PER_USEC;

/// Wasted idle time, per CPU and per domain level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Waste {
    /// Per CPU.
    pub per_cpu: Vec<Nanos>,
    /// Per domain index (0 = lowest level of each CPU).
    pub per_level: Vec<Nanos>,
    /// Wasted time of idle CPUs that could help only outside all their
    /// domains (not possible on a connected machine; kept for honesty).
    pub beyond_domains: Nanos,
}

impl Waste {
    /// Total wasted idle time.
    pub fn total(&self) -> Nanos {
        self.per_cpu.iter().sum()
    }
}

/// Accounting of a run: per-CPU counters, the profile of scheduler
/// paths, the wasted-CPU metric, and CPU time of scheduler work not yet
/// charged (it is charged after the context switch, or where charging
/// would not recurse).
#[derive(Clone, Debug, Default)]
pub struct Accounting {
    /// CPU time of the newidle passes of the schedule() in progress.
    pub(crate) newidle_cost: Nanos,
    /// Atomic cost of the newidle passes of the schedule() in progress.
    pub(crate) newidle_atomic_cost: Nanos,
    /// CPU time of the steal attempts of the schedule() in progress.
    pub(crate) steal_cost: Nanos,
    /// Bandwidth-control work per CPU not yet charged (it arises inside
    /// accounting, where charging would recurse; see `sched/bandwidth.rs`).
    pub(crate) throttle_cost: Vec<Nanos>,
    /// Per-CPU counters.
    pub cpu_stats: Vec<CpuStats>,
    /// Scheduler path costs.
    pub profile: Profile,
    /// The wasted-CPU metric.
    pub waste: Waste,
    /// The waste sampler's table of the domains' spans (`waste/spans.rs`).
    pub(crate) waste_spans: crate::waste::spans::WasteSpans,
    /// The run's counters sampled at a fixed period (`--counters-every`).
    pub counters: CounterSamples,
}

/// The run's cumulative counters sampled every `every` ns of simulated
/// time from 0 (none when `every` is 0), for rates over any window of the
/// run: the output's counters.csv.
#[derive(Clone, Debug)]
pub struct CounterSamples {
    /// The period; 0: no sampling.
    pub every: Nanos,
    /// The next sample's time (`Nanos::MAX` when not sampling).
    pub(crate) next: Nanos,
    /// The samples, in time order.
    pub rows: Vec<CountersAt>,
}

impl Default for CounterSamples {
    fn default() -> Self {
        CounterSamples::new(0)
    }
}

impl CounterSamples {
    /// Sampling every `every` ns (0: none), the first sample at time 0.
    pub fn new(every: Nanos) -> Self {
        CounterSamples {
            every,
            next: if every == 0 { Nanos::MAX } else { 0 },
            rows: Vec::new(),
        }
    }
}

/// The run's cumulative counters at one moment, summed over the workload's
/// threads (switches, involuntary switches, migrations), the simulator's
/// helper tasks (switches) and the CPUs (switches to idle, and the CPUs'
/// task, idle and scheduler time up to that moment, the intervals in
/// progress included). Summed the way summary.json's `tasks`, `helpers`
/// and `cpus` are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountersAt {
    /// Simulated time.
    pub at_ns: Nanos,
    /// The threads' switches out.
    pub switches: u64,
    /// The threads' switches out while still runnable.
    pub involuntary_switches: u64,
    /// The threads' migrations.
    pub migrations: u64,
    /// The helper tasks' switches out.
    pub helper_switches: u64,
    /// The CPUs' switches to idle (`sched_goidle`).
    pub sched_goidle: u64,
    /// The CPUs' task time (`busy_ns`).
    pub busy_ns: Nanos,
    /// The CPUs' idle time.
    pub idle_ns: Nanos,
    /// The CPUs' scheduler time (`sched_overhead_ns`).
    pub sched_overhead_ns: Nanos,
}

#[cfg(test)]
mod sample_tests {
    use super::*;

    /// The moments give the statistics of the sequence: against a
    /// two-pass f64 reference on hand-worked and random samples, and a
    /// merge of parts is bit for bit the whole, in any order.
    #[test]
    fn latency_moments_give_the_statistics_of_the_sequence() {
        // Hand-worked: 63 57 58 60 -> sum 238, mean 59.5, deviations
        // 3.5 -2.5 -1.5 0.5, squares 12.25+6.25+2.25+0.25 = 21, var 5.25.
        let s = SampleStats::of([63, 57, 58, 60]);
        assert_eq!((s.n, s.min, s.max, s.sum), (4, 57, 63, 238));
        assert_eq!(s.mean, 59.5);
        assert_eq!(s.stddev, 5.25f64.sqrt());
        assert_eq!(SampleStats::of(std::iter::empty()), SampleStats::default());
        let one = SampleStats::of([7]);
        assert_eq!((one.n, one.mean, one.stddev), (1, 7.0, 0.0));
        let mut x = 12345u64;
        let mut seq = Vec::new();
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seq.push((x >> 40) % 90_000);
        }
        let s = SampleStats::of(seq.iter().copied());
        let mean = seq.iter().sum::<u64>() as f64 / seq.len() as f64;
        let var = seq.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / seq.len() as f64;
        assert_eq!(s.mean, mean);
        assert!((s.stddev - var.sqrt()).abs() <= 1e-9 * var.sqrt());
        let (mut ab, mut ba) = (LatencySamples::default(), LatencySamples::default());
        let (mut p, mut q) = (LatencySamples::default(), LatencySamples::default());
        for &v in &seq[..1234] {
            p.push(v);
        }
        for &v in &seq[1234..] {
            q.push(v);
        }
        ab.merge(&p);
        ab.merge(&q);
        ba.merge(&q);
        ba.merge(&p);
        assert_eq!(ab.stats(), s);
        assert_eq!(ba.stats().stddev.to_bits(), s.stddev.to_bits());
        // Absurd samples (u64::MAX) fall back to f64 moments, no panic.
        let big = SampleStats::of([u64::MAX, u64::MAX, 0]);
        assert_eq!((big.n, big.min, big.max), (3, 0, u64::MAX));
        assert!(big.stddev.is_finite());
    }

    #[test]
    fn slack_of_timer_rows_only() {
        let r = |c_period, slack| LogRow {
            c_period,
            slack,
            ..Default::default()
        };
        let s = SlackStats::of(&[r(0, -50), r(10, 5), r(10, -3), r(10, 7)]);
        assert_eq!((s.periods, s.missed, s.sum, s.min, s.max), (3, 1, 9, -3, 7));
        assert_eq!(SlackStats::of(&[r(0, 1)]).periods, 0);
    }
}
