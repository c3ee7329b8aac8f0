//! CFS on one cfs_rq (the fair class's pick and preemption up to 6.5,
//! `FAIR_CLASS=cfs`): min_vruntime, the scheduling period and ideal
//! runtime, tick preemption, placement with sleeper credit and START_DEBIT,
//! the pick with its next / last / skip buddies.
//!
//! Kernel reference (documented behaviour of fair.c ≤6.5, as described in
//! Documentation/scheduler/sched-design-CFS.rst and the functions named):
//!
//! ```text
//!   update_curr:      v_curr += delta · 1024 / w;  min_vruntime follows
//!   update_min_vruntime: min_vruntime = max(min_vruntime,
//!                          min(v_curr if queued, v_leftmost))
//!   __sched_period(n) = n > nr_latency ? n · min_granularity : latency
//!   sched_slice(se)   = period(n) · Π over levels w_se / W_level
//!                       (W + w_se when se is not queued yet); n = the
//!                       queue's nr_running (+1 if se not queued), or with
//!                       ALT_PERIOD (5.13+) the CPU's h_nr_running;
//!                       BASE_SLICE (5.13+): at least min_granularity
//!   check_preempt_tick: resched if curr ran > ideal (sched_slice) since
//!                       picked; else, once it ran ≥ min_granularity, if
//!                       v_curr − v_leftmost > ideal
//!   wakeup_preempt_entity(curr, se): −1 if v_curr ≤ v_se,
//!                       1 if v_curr − v_se > wakeup_gran · 1024 / w_se, else 0
//!   place_entity:     wakeup: v = max(v, min_vruntime − latency (/2 with
//!                       GENTLE_FAIR_SLEEPERS)); new task: v = max(v,
//!                       min_vruntime + sched_vslice) with START_DEBIT
//!   pick_next_entity: leftmost of {tree, curr}; the skip buddy is passed
//!                       over for the second if that is not unfair (≤ 0 by
//!                       wakeup_preempt_entity); then the next buddy, else
//!                       the last buddy, if not unfair against the leftmost
//! ```
//!
//! Representation: the timeline is shared with EEVDF (`CfsRq::timeline`,
//! keyed by `SchedEntity::deadline`); under CFS every queued entity keeps
//! `deadline == vruntime` while it is in the tree, so the tree is ordered
//! by vruntime (ties by id, the kernel by insertion order) and the EEVDF
//! sums stay consistent (they are not read). Absolute vruntimes are kept
//! across sleeps; a task that changes queue while not queued is moved by
//! the difference of the two queues' min_vruntime (`set_task_rq` in
//! sched/group.rs), which is the kernel's renormalisation
//! (`migrate_task_rq_fair` subtracts the old, `enqueue_entity` adds the new).
//!
//! Deviations:
//! * A new task's vruntime starts from min_vruntime, not from its parent's
//!   (`task_fork_fair` takes the max of the parent's and the placement;
//!   rt-app's threads are created by a main thread that barely runs).
//! * No `entity_is_long_sleeper` (6.3+: a sleeper of over 60 s placed at
//!   min_vruntime − credit whatever its vruntime).
//! * SCHED_IDLE entities get the same least slice as others
//!   (`sysctl_sched_idle_min_granularity`, 5.15+, is the same 0.75 ms).

use super::eevdf::{charge_owed, dequeue_tree, enqueue_tree, vdelta, CurrUpdate, EnqueueKind};
use crate::ids::{CfsRqId, EntityId};
use crate::rq::{CfsRq, SchedEntity};
use crate::time::Nanos;

/// The knobs CFS reads (tunables in effect and feature switches).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct CfsParams {
    /// `FAIR_CLASS=cfs`: the run uses these rules.
    pub active: bool,
    /// `sysctl_sched_latency` (scaled).
    pub latency_ns: Nanos,
    /// `sysctl_sched_min_granularity` (scaled).
    pub min_granularity_ns: Nanos,
    /// `sysctl_sched_wakeup_granularity` (scaled).
    pub wakeup_granularity_ns: Nanos,
    /// `sched_nr_latency`.
    pub nr_latency: u64,
    /// GENTLE_FAIR_SLEEPERS.
    pub gentle_fair_sleepers: bool,
    /// START_DEBIT.
    pub start_debit: bool,
    /// NEXT_BUDDY.
    pub next_buddy: bool,
    /// LAST_BUDDY.
    pub last_buddy: bool,
    /// ALT_PERIOD.
    pub alt_period: bool,
    /// BASE_SLICE.
    pub base_slice: bool,
}

/// `update_min_vruntime`.
pub fn update_min_vruntime(cfs: &mut CfsRq, ents: &[SchedEntity]) {
    let curr = cfs
        .curr
        .filter(|c| ents[c.idx()].on_rq)
        .map(|c| ents[c.idx()].vruntime);
    let left = cfs.timeline.first().map(|(_, id)| ents[id.idx()].vruntime);
    let v = match (curr, left) {
        (Some(c), Some(l)) => c.min(l),
        (Some(c), None) => c,
        (None, Some(l)) => l,
        (None, None) => return,
    };
    cfs.min_vruntime = cfs.min_vruntime.max(v);
}

/// `update_curr` (CFS): charge curr up to `now`. CFS never asks for a
/// reschedule here (that is the tick's and the wakeup's decision).
pub fn update_curr(cfs: &mut CfsRq, ents: &mut [SchedEntity], now: Nanos) -> CurrUpdate {
    let Some(c) = cfs.curr else {
        return CurrUpdate::default();
    };
    let Some(delta) = charge_owed(&mut ents[c.idx()], now) else {
        return CurrUpdate::default();
    };
    update_min_vruntime(cfs, ents);
    CurrUpdate {
        delta_exec: delta,
        resched: false,
    }
}

/// `__sched_period(nr_running)`.
pub fn sched_period(nr_running: u64, p: &CfsParams) -> Nanos {
    if nr_running > p.nr_latency {
        nr_running * p.min_granularity_ns
    } else {
        p.latency_ns
    }
}

/// `sched_slice`: the wall-clock share of the period of entity `se`,
/// through every level of its hierarchy (`cfs` is the queue arena;
/// `cpu_h_nr` the CPU's `rq->cfs.h_nr_running`, read with ALT_PERIOD).
pub fn sched_slice(
    cfs: &[CfsRq],
    ents: &[SchedEntity],
    se: EntityId,
    cpu_h_nr: u32,
    p: &CfsParams,
) -> Nanos {
    let first = &ents[se.idx()];
    let own_q = &cfs[first.cfs_rq.idx()];
    let nr = if p.alt_period {
        cpu_h_nr as u64
    } else {
        own_q.nr_queued as u64
    } + (!first.on_rq) as u64;
    let mut slice = sched_period(nr, p) as u128;
    let mut e = Some(se);
    while let Some(x) = e {
        let s = &ents[x.idx()];
        let mut load = cfs[s.cfs_rq.idx()].load_weight;
        if !s.on_rq {
            load += s.weight;
        }
        if load > 0 {
            slice = slice * s.weight as u128 / load as u128;
        }
        e = s.parent;
    }
    let mut slice = slice as Nanos;
    if p.base_slice {
        slice = slice.max(p.min_granularity_ns);
    }
    slice
}

/// `sched_vslice`: [`sched_slice`] in the entity's virtual time.
pub fn sched_vslice(
    cfs: &[CfsRq],
    ents: &[SchedEntity],
    se: EntityId,
    cpu_h_nr: u32,
    p: &CfsParams,
) -> i64 {
    vdelta(
        sched_slice(cfs, ents, se, cpu_h_nr, p),
        ents[se.idx()].weight,
    )
}

/// `place_entity` (CFS). `vslice` is [`sched_vslice`] of the entity (read
/// for a new task with START_DEBIT).
pub fn place_entity(
    cfs: &CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    initial: bool,
    vslice: i64,
    p: &CfsParams,
) {
    let mut v = cfs.min_vruntime;
    if initial && p.start_debit {
        v += vslice;
    }
    if !initial {
        let mut thresh = p.latency_ns as i64;
        if p.gentle_fair_sleepers {
            thresh >>= 1;
        }
        v -= thresh;
    }
    let se = &mut ents[id.idx()];
    se.vruntime = se.vruntime.max(v);
}

/// Into the tree, keyed by vruntime.
fn tree_insert(cfs: &mut CfsRq, ents: &mut [SchedEntity], id: EntityId) {
    ents[id.idx()].deadline = ents[id.idx()].vruntime;
    enqueue_tree(cfs, ents, id);
}

/// `enqueue_entity` (CFS) on one queue: charge curr, place a waking or new
/// entity, account it, into the tree unless it is curr.
pub fn enqueue_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    kind: EnqueueKind,
    now: Nanos,
    vslice: i64,
    p: &CfsParams,
) -> CurrUpdate {
    let u = update_curr(cfs, ents, now);
    match kind {
        EnqueueKind::Wakeup => place_entity(cfs, ents, id, false, vslice, p),
        EnqueueKind::Initial => place_entity(cfs, ents, id, true, vslice, p),
        EnqueueKind::Migrate => {}
    }
    cfs.load_weight += ents[id.idx()].weight;
    cfs.nr_queued += 1;
    if cfs.curr != Some(id) {
        tree_insert(cfs, ents, id);
    }
    ents[id.idx()].on_rq = true;
    u
}

/// Clears this queue's buddies that point at `id` (one level of
/// `clear_buddies`; the caller walks the hierarchy).
pub fn clear_buddies(cfs: &mut CfsRq, id: EntityId) -> bool {
    let mut any = false;
    for b in [&mut cfs.next, &mut cfs.last, &mut cfs.skip] {
        if *b == Some(id) {
            *b = None;
            any = true;
        }
    }
    any
}

/// `dequeue_entity` (CFS) on one queue. The vruntime stays absolute.
pub fn dequeue_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    now: Nanos,
) -> CurrUpdate {
    let u = update_curr(cfs, ents, now);
    clear_buddies(cfs, id);
    if cfs.curr != Some(id) {
        dequeue_tree(cfs, ents, id);
    }
    cfs.load_weight -= ents[id.idx()].weight;
    cfs.nr_queued -= 1;
    ents[id.idx()].on_rq = false;
    update_min_vruntime(cfs, ents);
    u
}

/// `set_next_entity` (CFS): `id` becomes curr, out of the tree; the
/// buddies that chose it are spent.
pub fn set_next_entity(cfs: &mut CfsRq, ents: &mut [SchedEntity], id: EntityId, exec_start: Nanos) {
    clear_buddies(cfs, id);
    if ents[id.idx()].on_rq {
        dequeue_tree(cfs, ents, id);
    }
    cfs.curr = Some(id);
    let se = &mut ents[id.idx()];
    se.exec_start = exec_start;
    se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

/// `put_prev_entity` (CFS): curr stops running; back into the tree if queued.
pub fn put_prev_entity(cfs: &mut CfsRq, ents: &mut [SchedEntity], now: Nanos) -> CurrUpdate {
    let Some(c) = cfs.curr else {
        return CurrUpdate::default();
    };
    let u = if ents[c.idx()].on_rq {
        update_curr(cfs, ents, now)
    } else {
        CurrUpdate::default()
    };
    cfs.curr = None;
    if ents[c.idx()].on_rq {
        tree_insert(cfs, ents, c);
    }
    u
}

/// `wakeup_gran(se)`: the wakeup granularity in `se`'s virtual time.
pub fn wakeup_gran(ents: &[SchedEntity], se: EntityId, p: &CfsParams) -> i64 {
    vdelta(p.wakeup_granularity_ns, ents[se.idx()].weight)
}

/// `wakeup_preempt_entity(curr, se)`: −1 if `curr` is not ahead of `se`
/// in vruntime, 1 if it is ahead by more than `se`'s wakeup granularity,
/// 0 in between.
pub fn wakeup_preempt_entity(
    ents: &[SchedEntity],
    curr: EntityId,
    se: EntityId,
    p: &CfsParams,
) -> i32 {
    let vdiff = ents[curr.idx()].vruntime - ents[se.idx()].vruntime;
    if vdiff <= 0 {
        return -1;
    }
    if vdiff > wakeup_gran(ents, se, p) {
        return 1;
    }
    0
}

/// `entity_before(a, b)`.
#[inline]
fn before(ents: &[SchedEntity], a: EntityId, b: EntityId) -> bool {
    ents[a.idx()].vruntime < ents[b.idx()].vruntime
}

/// `pick_next_entity` (CFS): the leftmost of the tree and curr (while
/// queued), with the skip, next and last buddies applied.
pub fn pick_next_entity(cfs: &CfsRq, ents: &[SchedEntity], p: &CfsParams) -> Option<EntityId> {
    let curr = cfs.curr.filter(|c| ents[c.idx()].on_rq);
    let first = cfs.timeline.first().map(|(_, id)| id);
    let left = match (first, curr) {
        (Some(l), Some(c)) if before(ents, c, l) => c,
        (Some(l), _) => l,
        (None, Some(c)) => c,
        (None, None) => return None,
    };
    let mut se = left;
    // Avoid running the skip buddy, if running something else is not unfair.
    if cfs.skip == Some(se) {
        let second = if Some(se) == curr {
            first
        } else {
            let next = cfs.timeline.iter().map(|(_, id)| id).find(|&id| id != se);
            match (next, curr) {
                (Some(n), Some(c)) if before(ents, c, n) => Some(c),
                (None, Some(c)) => Some(c),
                (n, _) => n,
            }
        };
        if let Some(s) = second {
            if wakeup_preempt_entity(ents, s, left, p) < 1 {
                se = s;
            }
        }
    }
    // Someone really wants this to run (next); else return the CPU to a
    // preempted task (last); either only if it is not unfair.
    if let Some(n) = cfs.next.filter(|&n| ents[n.idx()].on_rq) {
        if wakeup_preempt_entity(ents, n, left, p) < 1 {
            return Some(n);
        }
    }
    if let Some(l) = cfs.last.filter(|&l| ents[l.idx()].on_rq) {
        if wakeup_preempt_entity(ents, l, left, p) < 1 {
            return Some(l);
        }
    }
    Some(se)
}

/// `check_preempt_tick` for curr of `cfs` with ideal runtime `ideal`
/// ([`sched_slice`]): should the tick reschedule?
pub fn check_preempt_tick(cfs: &CfsRq, ents: &[SchedEntity], ideal: Nanos, p: &CfsParams) -> bool {
    let Some(c) = cfs.curr else {
        return false;
    };
    let se = &ents[c.idx()];
    let ran = se.sum_exec_runtime - se.prev_sum_exec_runtime;
    if ran > ideal {
        return true;
    }
    if ran < p.min_granularity_ns {
        return false;
    }
    let Some((_, left)) = cfs.timeline.first() else {
        return false;
    };
    let delta = se.vruntime - ents[left.idx()].vruntime;
    delta > 0 && delta as u64 > ideal
}

/// `reweight_entity` (CFS): the vruntime stays; the load changes.
pub fn reweight_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    new_w: u64,
    now: Nanos,
) {
    let old_w = ents[id.idx()].weight;
    if old_w == new_w {
        return;
    }
    let is_curr = cfs.curr == Some(id);
    if ents[id.idx()].on_rq {
        if is_curr {
            update_curr(cfs, ents, now);
        } else {
            dequeue_tree(cfs, ents, id);
        }
        ents[id.idx()].weight = new_w;
        cfs.load_weight = cfs.load_weight - old_w + new_w;
        if !is_curr {
            enqueue_tree(cfs, ents, id);
        }
    } else {
        ents[id.idx()].weight = new_w;
    }
}

/// The renormalisation of a not-queued entity moving from queue `from` to
/// queue `to` (`migrate_task_rq_fair` / `enqueue_entity`'s
/// `vruntime −= old min_vruntime; += new min_vruntime`).
pub fn renormalize(cfs: &[CfsRq], se: &mut SchedEntity, from: CfsRqId, to: CfsRqId) {
    if from != to {
        se.vruntime = se.vruntime - cfs[from.idx()].min_vruntime + cfs[to.idx()].min_vruntime;
    }
}

#[cfg(test)]
mod tests;
