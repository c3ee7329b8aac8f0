//! CFS bandwidth control arithmetic (`cpu.max`): the group's runtime pool,
//! the slices per-CPU queues take from it, the period refill with burst,
//! slack return and the distribution order.
//!
//! Kernel reference: fair.c `__assign_cfs_rq_runtime`,
//! `__refill_cfs_bandwidth_runtime`, `do_sched_cfs_period_timer`,
//! `__return_cfs_rq_runtime`, `do_sched_cfs_slack_timer`,
//! `distribute_cfs_runtime` (kernel-model.md §12.1–12.2). The simulator
//! side (timers as events, throttling in the three generations) is in
//! `sched/bandwidth.rs`; this module is pure arithmetic so it
//! can be checked by hand.

use crate::ids::CfsRqId;
use crate::time::Nanos;

/// `sysctl_sched_cfs_bandwidth_slice` default (5 ms); the run's value is
/// the tunable `kernel.sched_cfs_bandwidth_slice_us`.
pub const BANDWIDTH_SLICE_NS: Nanos = 5_000_000;
/// `min_cfs_rq_runtime`: a queue keeps this much when it returns slack.
pub const MIN_CFS_RQ_RUNTIME_NS: Nanos = 1_000_000;
/// `min_bandwidth_expiration`: no slack distribution this close to refresh.
pub const MIN_BANDWIDTH_EXPIRATION_NS: Nanos = 2_000_000;
/// `cfs_bandwidth_slack_period`.
pub const SLACK_PERIOD_NS: Nanos = 5_000_000;

/// A group's bandwidth pool (`struct cfs_bandwidth`).
#[derive(Clone, Debug, Default)]
pub struct CfsBandwidth {
    /// `quota` per period.
    pub quota: Nanos,
    /// `period`.
    pub period: Nanos,
    /// `burst`.
    pub burst: Nanos,
    /// `runtime`: what is left in the pool this period.
    pub runtime: Nanos,
    /// `runtime_snap`: the pool right after the last refill.
    pub runtime_snap: Nanos,
    /// The period timer is armed (`period_active`).
    pub period_active: bool,
    /// A period went by with nothing throttled (`idle`).
    pub idle: bool,
    /// Expiry of the armed period timer.
    pub next_refresh: Nanos,
    /// Generation of the period timer event.
    pub period_gen: u32,
    /// The CPU whose queue started the period timer (its hrtimer fires
    /// there).
    pub timer_cpu: crate::ids::CpuId,
    /// The slack timer is armed.
    pub slack_armed: bool,
    /// Generation of the slack timer event.
    pub slack_gen: u32,
    /// `throttled_cfs_rq`, in throttle order.
    pub throttled: Vec<CfsRqId>,
    /// `cpu.stat` counters.
    pub stats: BandwidthStats,
    /// Runtime handed out from the pool since the last refill, net of slack
    /// returned (the `--check` invariant: never above quota + burst).
    pub handed_out: Nanos,
}

/// The bandwidth counters of `cpu.stat`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct BandwidthStats {
    /// `nr_periods`.
    pub nr_periods: u64,
    /// `nr_throttled`.
    pub nr_throttled: u64,
    /// `throttled_usec`, in ns.
    pub throttled_ns: u64,
    /// `nr_bursts`.
    pub nr_bursts: u64,
    /// `burst_usec`, in ns.
    pub burst_ns: u64,
}

impl CfsBandwidth {
    /// A pool for `quota` per `period` with `burst`, full at the start.
    pub fn new(quota: Nanos, period: Nanos, burst: Nanos) -> CfsBandwidth {
        CfsBandwidth {
            quota,
            period,
            burst,
            runtime: quota,
            runtime_snap: quota,
            ..Default::default()
        }
    }

    /// Most the pool can hold.
    pub fn cap(&self) -> Nanos {
        self.quota + self.burst
    }

    /// `__assign_cfs_rq_runtime` from the pool's side: a queue with
    /// `remaining` wants to reach `target`. Returns the amount granted
    /// (the caller adds it to the queue's `runtime_remaining`).
    pub fn take(&mut self, remaining: i64, target: Nanos) -> Nanos {
        let want = (target as i64 - remaining).max(0) as Nanos;
        let got = want.min(self.runtime);
        if got > 0 {
            self.runtime -= got;
            self.handed_out += got;
            self.idle = false;
        }
        got
    }

    /// `__refill_cfs_bandwidth_runtime`: the period's refill with burst
    /// accounting (`runtime = min(runtime + quota, quota + burst)`).
    pub fn refill(&mut self) {
        if self.burst > 0 {
            // The period now ending used `snap − runtime`; what it used
            // beyond quota came out of the accumulated burst.
            let used = self.runtime_snap.saturating_sub(self.runtime);
            if used > self.quota {
                self.stats.nr_bursts += 1;
                self.stats.burst_ns += used - self.quota;
            }
        }
        self.runtime = (self.runtime + self.quota).min(self.cap());
        self.runtime_snap = self.runtime;
        self.handed_out = 0;
    }

    /// `__return_cfs_rq_runtime`: a queue that went empty with `remaining`
    /// gives back all but `min_cfs_rq_runtime`. Returns the amount returned.
    pub fn give_back(&mut self, remaining: i64) -> Nanos {
        let slack = remaining - MIN_CFS_RQ_RUNTIME_NS as i64;
        if slack <= 0 {
            return 0;
        }
        let slack = slack as Nanos;
        self.runtime = (self.runtime + slack).min(self.cap());
        self.handed_out = self.handed_out.saturating_sub(slack);
        slack
    }

    /// Should a slack return arm the slack timer? (the pool now holds more
    /// than a slice, something is throttled, the timer is not armed and the
    /// period refresh is not within slack period + min expiration.)
    pub fn wants_slack_timer(&self, now: Nanos, slice: Nanos) -> bool {
        let refresh_near = self.period_active
            && self.next_refresh.saturating_sub(now)
                < SLACK_PERIOD_NS + MIN_BANDWIDTH_EXPIRATION_NS;
        !self.slack_armed && self.runtime > slice && !self.throttled.is_empty() && !refresh_near
    }

    /// `do_sched_cfs_slack_timer`'s gate: distribute only far enough from
    /// the refresh and with more than a slice in the pool.
    pub fn slack_may_distribute(&self, now: Nanos, slice: Nanos) -> bool {
        let near = self.period_active
            && self.next_refresh.saturating_sub(now) < MIN_BANDWIDTH_EXPIRATION_NS;
        !near && self.runtime > slice
    }
}

/// `distribute_cfs_runtime`'s arithmetic: in list order, each throttled
/// queue gets `−remaining + 1` (bounded by the pool). Returns, per queue,
/// the runtime given (0 once the pool is dry); the queues that end with
/// positive runtime are the ones to unthrottle.
pub fn distribute(pool: &mut Nanos, remaining: &[i64]) -> Vec<Nanos> {
    remaining
        .iter()
        .map(|&r| {
            let want = (1 - r).max(0) as Nanos;
            let got = want.min(*pool);
            *pool -= got;
            got
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn slice_handout_takes_what_reaches_the_target() {
        // cpu.max 20000 100000: 20 ms in the pool.
        let mut b = CfsBandwidth::new(20 * MS, 100 * MS, 0);
        // A queue at 0 asks for a 5 ms slice.
        assert_eq!(b.take(0, BANDWIDTH_SLICE_NS), 5 * MS);
        assert_eq!(b.runtime, 15 * MS);
        // A queue 0.3 ms in debt asks for slice − remaining = 5.3 ms.
        assert_eq!(b.take(-300_000, BANDWIDTH_SLICE_NS), 5_300_000);
        assert_eq!(b.runtime, 9_700_000);
        // The pool gives what it has left.
        assert_eq!(b.take(0, BANDWIDTH_SLICE_NS), 5 * MS);
        assert_eq!(b.take(0, BANDWIDTH_SLICE_NS), 4_700_000);
        assert_eq!(b.take(0, BANDWIDTH_SLICE_NS), 0);
        assert_eq!(b.handed_out, 20 * MS);
        // The 1 ns probe of throttle_cfs_rq fails on a dry pool.
        assert_eq!(b.take(0, 1), 0);
    }

    #[test]
    fn refill_caps_at_quota_plus_burst_and_counts_bursts() {
        let mut b = CfsBandwidth::new(20 * MS, 100 * MS, 10 * MS);
        // Nothing used: the pool grows to quota + burst and stays there.
        b.refill();
        assert_eq!(b.runtime, 30 * MS);
        b.refill();
        assert_eq!(b.runtime, 30 * MS);
        assert_eq!(b.stats.nr_bursts, 0);
        // The next period uses 26 ms: 6 ms more than quota came from burst.
        b.take(0, 26 * MS);
        b.refill();
        assert_eq!(b.stats.nr_bursts, 1);
        assert_eq!(b.stats.burst_ns, 6 * MS);
        assert_eq!(b.runtime, 24 * MS);
        // Without burst the pool never exceeds quota.
        let mut nb = CfsBandwidth::new(20 * MS, 100 * MS, 0);
        nb.refill();
        assert_eq!(nb.runtime, 20 * MS);
    }

    #[test]
    fn slack_return_keeps_one_ms() {
        let mut b = CfsBandwidth::new(20 * MS, 100 * MS, 0);
        b.take(0, BANDWIDTH_SLICE_NS);
        // The queue used 1.5 ms of its 5 ms slice and went empty.
        assert_eq!(b.give_back(3_500_000), 2_500_000);
        assert_eq!(b.runtime, 17_500_000);
        // Less than 1 ms left: nothing to return.
        assert_eq!(b.give_back(900_000), 0);
        assert_eq!(b.give_back(-5), 0);
        assert_eq!(b.handed_out, 2_500_000);
    }

    #[test]
    fn slack_timer_gates() {
        let mut b = CfsBandwidth::new(20 * MS, 100 * MS, 0);
        b.period_active = true;
        b.next_refresh = 100 * MS;
        b.runtime = 6 * MS;
        // Nothing throttled: no timer.
        assert!(!b.wants_slack_timer(0, BANDWIDTH_SLICE_NS));
        b.throttled.push(CfsRqId(3));
        assert!(b.wants_slack_timer(0, BANDWIDTH_SLICE_NS));
        // Refresh within 7 ms: the period timer will do it.
        assert!(!b.wants_slack_timer(94 * MS, BANDWIDTH_SLICE_NS));
        // A slice or less in the pool: nothing worth distributing.
        b.runtime = BANDWIDTH_SLICE_NS;
        assert!(!b.wants_slack_timer(0, BANDWIDTH_SLICE_NS));
        // The timer itself: not within 2 ms of the refresh.
        b.runtime = 6 * MS;
        assert!(b.slack_may_distribute(97 * MS, BANDWIDTH_SLICE_NS));
        assert!(!b.slack_may_distribute(98_500_000, BANDWIDTH_SLICE_NS));
    }

    #[test]
    fn distribution_in_list_order_until_dry() {
        // Three throttled queues, 1 ms, 3 ms and 2 ms in debt; 3.5 ms left.
        let mut pool = 3_500_000;
        let got = distribute(&mut pool, &[-(MS as i64), -3 * MS as i64, -2 * MS as i64]);
        // The first gets its debt + 1 ns, the second the rest, the third
        // nothing: only the first is unthrottled (its remaining is 1 ns).
        assert_eq!(got, vec![MS + 1, 2_499_999, 0]);
        assert_eq!(pool, 0);
    }
}
