//! Task groups (the cgroup cpu controller's `task_group`): the hierarchy's
//! shape, group weights and the group load sums they are computed from.
//!
//! Kernel reference: fair.c `calc_group_shares`, `update_cfs_group`,
//! `update_tg_load_avg`, core.c `sched_group_set_shares` /
//! `sched_group_set_idle` (kernel-model.md §1.2, §13).
//!
//! Every group but the root has, per CPU, a cfs_rq and a group entity
//! queued on the parent group's cfs_rq of the same CPU; the root group's
//! queue is the CPU's `rq->cfs`. The simulator-side walks over the
//! hierarchy live in `sched/group.rs`; this module holds the data and the
//! arithmetic.
//!
//! Deviations (weights at user resolution, 1024 = nice 0):
//! * `MIN_SHARES` is 2 at user resolution; the kernel's scaled `MIN_SHARES`
//!   is 2 in 2^20 units, which `scale_load_down` turns into 2 as well.
//! * A group entity's PELT signal is tracked as an entity of its own weight
//!   (queued = runnable while its queue has runnable tasks), not rebuilt
//!   from the child queue by `propagate_entity_load_avg`.

use super::bandwidth::CfsBandwidth;
use crate::ids::{CfsRqId, EntityId, GroupId};
use crate::time::Nanos;

/// `MIN_SHARES`.
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES` (user-visible units).
pub const MAX_SHARES: u64 = 1 << 18;
/// Group load is published at most this often per cfs_rq
/// (`update_tg_load_avg`'s 1 ms rate limit).
pub const TG_LOAD_UPDATE_NS: Nanos = 1_000_000;

/// A task group.
#[derive(Clone, Debug)]
pub struct TaskGroup {
    /// cgroup path (`/` for the root).
    pub path: String,
    /// Parent group (None for the root).
    pub parent: Option<GroupId>,
    /// Depth of the group's entities (0 = queued on `rq->cfs`); the root
    /// group has no entities and depth 0.
    pub depth: u32,
    /// `tg->shares` (user units).
    pub shares: u64,
    /// `cpu.idle`.
    pub idle: bool,
    /// Per-CPU queue of the group (`tg->cfs_rq[cpu]`).
    pub cfs_rq: Vec<CfsRqId>,
    /// Per-CPU group entity (`tg->se[cpu]`); empty for the root.
    pub se: Vec<EntityId>,
    /// `tg->load_avg`: Σ of the per-CPU published contributions.
    pub load_avg: u64,
    /// Bandwidth control (`cpu.max`), if the group has a quota.
    pub bw: Option<CfsBandwidth>,
    /// CPU time of the group's tasks, descendants included (`usage_usec`).
    pub usage_ns: u64,
    /// The part of `usage_ns` spent in the kernel (`system_usec`): channel
    /// syscalls' CPU time.
    pub system_ns: u64,
    /// The groups below it (for throttle walks), in creation order.
    pub children: Vec<GroupId>,
}

impl TaskGroup {
    /// The weight its entities start from: `shares`, or an idle group's
    /// `WEIGHT_IDLEPRIO`.
    pub fn effective_shares(&self) -> u64 {
        if self.idle {
            super::weight::WEIGHT_IDLEPRIO
        } else {
            self.shares
        }
    }
}

/// `calc_group_shares`: the weight of a group entity on one CPU.
///
/// ```text
/// load      = max(grq.load.weight, grq.avg.load_avg)
/// tg_weight = tg.load_avg − grq.tg_load_avg_contrib + load
/// shares    = clamp(tg.shares × load / tg_weight, MIN_SHARES, tg.shares)
/// ```
pub fn calc_group_shares(
    tg_shares: u64,
    grq_load_weight: u64,
    grq_load_avg: u64,
    tg_load_avg: u64,
    grq_contrib: u64,
) -> u64 {
    let load = grq_load_weight.max(grq_load_avg);
    let tg_weight = tg_load_avg.saturating_sub(grq_contrib) + load;
    let mut shares = tg_shares as u128 * load as u128;
    if tg_weight > 0 {
        shares /= tg_weight as u128;
    }
    (shares as u64).clamp(MIN_SHARES.min(tg_shares), tg_shares)
}

/// `update_tg_load_avg`'s filter: publish a cfs_rq's load when it moved by
/// more than 1/64 of its last contribution and the last publish is at
/// least 1 ms old. Returns the delta to add to `tg.load_avg`, if any.
pub fn tg_load_delta(load_avg: u64, contrib: u64, now: Nanos, last: Nanos) -> Option<i64> {
    if now.saturating_sub(last) < TG_LOAD_UPDATE_NS && last != 0 {
        return None;
    }
    let delta = load_avg as i64 - contrib as i64;
    if delta.unsigned_abs() > contrib / 64 {
        Some(delta)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_busy_cpu_gets_the_full_shares() {
        // The group runs on one CPU only: its queue's load is all of tg's.
        assert_eq!(calc_group_shares(1024, 1024, 1024, 1024, 1024), 1024);
        // A fresh queue whose load is not published yet counts its own load
        // once (tg.load_avg − contrib + load).
        assert_eq!(calc_group_shares(1024, 1024, 0, 0, 0), 1024);
    }

    #[test]
    fn evenly_spread_group_gets_shares_over_n() {
        // Four CPUs, each with load 1024 published: 1024 × 1024 / 4096.
        assert_eq!(calc_group_shares(1024, 1024, 1024, 4096, 1024), 256);
        // Weight 300 (cpu.weight 300 → shares 3072) over two CPUs.
        assert_eq!(calc_group_shares(3072, 1024, 1024, 2048, 1024), 1536);
    }

    #[test]
    fn clamped_to_min_shares_and_tg_shares() {
        assert_eq!(calc_group_shares(1024, 1, 1, 1_000_000, 1), MIN_SHARES);
        // A queue heavier than the published total cannot exceed tg.shares.
        assert_eq!(calc_group_shares(1024, 4096, 0, 0, 0), 1024);
        // An idle group's WEIGHT_IDLEPRIO stays 3 even though MIN_SHARES is 2.
        assert_eq!(calc_group_shares(3, 1024, 1024, 4096, 1024), 2);
    }

    #[test]
    fn tg_load_filter() {
        // First publish is always allowed when it moved.
        assert_eq!(tg_load_delta(1024, 0, 5, 0), Some(1024));
        // Under 1/64 of the contribution: not published.
        assert_eq!(tg_load_delta(1030, 1024, 10_000_000, 1), None);
        // Over 1/64 but within 1 ms of the last publish: not yet.
        assert_eq!(tg_load_delta(2048, 1024, 1_500_000, 1_000_000), None);
        assert_eq!(tg_load_delta(2048, 1024, 2_000_000, 1_000_000), Some(1024));
        assert_eq!(tg_load_delta(0, 1024, 2_000_000, 1_000_000), Some(-1024));
    }
}
