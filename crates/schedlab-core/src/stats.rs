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
    /// CPU time the task got.
    pub runtime_ns: Nanos,
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
        let v: Vec<u64> = xs.into_iter().collect();
        SampleStats::of_replay(|| v.iter().copied())
    }

    /// Statistics of the sequence `xs()` yields, read twice (the mean
    /// first, then the squared deviations in the same order) without
    /// holding it: the same arithmetic in the same order as
    /// [`of`](SampleStats::of), so the same bits.
    pub fn of_replay<I: Iterator<Item = u64>>(xs: impl Fn() -> I) -> SampleStats {
        let (mut n, mut sum, mut min, mut max) = (0u64, 0u64, u64::MAX, 0u64);
        for x in xs() {
            n += 1;
            sum += x;
            min = min.min(x);
            max = max.max(x);
        }
        if n == 0 {
            return SampleStats::default();
        }
        let mean = sum as f64 / n as f64;
        let var = xs().map(|x| (x as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        SampleStats {
            n,
            min,
            max,
            sum,
            mean,
            stddev: var.sqrt(),
        }
    }
}

/// A thread's wakeup-latency samples (the `wu_lat` of its log rows that
/// waited on a timer), in order, run-length encoded: a thread whose
/// latency stays the same costs one run however long it runs, and the
/// statistics are computed from the sequence itself
/// ([`SampleStats::of_replay`]), so they do not depend on whether the rows
/// were kept. Memory: 16 bytes per change of value between consecutive
/// samples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencySamples {
    /// `(value, count)` runs in order.
    runs: Vec<(u64, u64)>,
}

impl LatencySamples {
    /// Appends one sample.
    pub fn push(&mut self, x: u64) {
        match self.runs.last_mut() {
            Some((v, c)) if *v == x => *c += 1,
            _ => self.runs.push((x, 1)),
        }
    }

    /// The samples in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.runs
            .iter()
            .flat_map(|&(v, c)| std::iter::repeat_n(v, c as usize))
    }

    /// Runs held (the memory this costs: 16 bytes each).
    pub fn runs(&self) -> usize {
        self.runs.len()
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
}

#[cfg(test)]
mod sample_tests {
    use super::*;

    /// The run-length samples give back the sequence, and the two-pass
    /// statistics over them are bit for bit those of the collected list.
    #[test]
    fn latency_runs_replay_the_sequence_and_its_statistics() {
        let mut x = 12345u64;
        let mut seq = Vec::new();
        let mut l = LatencySamples::default();
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Long runs of equal values with occasional changes.
            let v = if (x >> 33) % 7 == 0 {
                (x >> 40) % 900
            } else {
                seq.last().copied().unwrap_or(85)
            };
            seq.push(v);
            l.push(v);
        }
        assert_eq!(l.iter().collect::<Vec<_>>(), seq);
        assert!(l.runs() < seq.len() / 2, "{} runs", l.runs());
        let a = SampleStats::of(seq.iter().copied());
        let b = SampleStats::of_replay(|| l.iter());
        assert_eq!(a, b);
        assert_eq!(a.stddev.to_bits(), b.stddev.to_bits());
        assert_eq!(
            SampleStats::of_replay(|| std::iter::empty()),
            SampleStats::default()
        );
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
