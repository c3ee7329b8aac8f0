//! EEVDF on one cfs_rq: virtual time, lag, eligibility, deadlines, the pick,
//! placement, and the queue operations that keep the sums right.
//!
//! Kernel reference: fair.c `avg_vruntime`, `vruntime_eligible`,
//! `update_entity_lag`, `place_entity`, `update_deadline`, `update_curr`,
//! `__pick_eevdf`, `set_next_entity`, `put_prev_entity`,
//! `set_protect_slice`/`update_protect_slice` (kernel-model.md §2, §3.3),
//! ≈v6.15–6.18 plus tip-2026's `zero_vruntime` re-centring.
//!
//! ```text
//!   V = v0 + Σ w_i (v_i − v0) / Σ w_i         (queued entities, curr included)
//!   lag_i = V − v_i        eligible ⇔ lag_i ≥ 0
//!   d_i = v_i + slice_i · 1024 / w_i           (virtual deadline)
//!   pick: the eligible entity with the earliest deadline
//! ```
//!
//! Deviations:
//! * Reduced weights `w'` are the user-resolution weights (6.6–6.18), so the
//!   tip-2026 eligibility quirk (§2.2) is not modelled.
//! * The timeline is an AVL tree, not a red-black tree (fair/timeline): the
//!   same order (deadline, then entity id where the kernel keeps insertion
//!   order), the same augmented minima and the same heap search for the
//!   pick, so the same results.
//! * No buddies (NEXT_BUDDY / PICK_BUDDY), no custom group slices yet.

use super::weight::calc_delta_fair;
use crate::ids::EntityId;
use crate::rq::{CfsRq, SchedEntity};
use crate::time::Nanos;

/// The knobs EEVDF reads (features and tunables of the run).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EevdfParams {
    /// `sysctl_sched_base_slice` (scaled).
    pub base_slice_ns: Nanos,
    /// Normalised base slice (0.70 ms) for protection without RUN_TO_PARITY.
    pub base_slice_normalized_ns: Nanos,
    /// `TICK_NSEC` (lag clamp).
    pub tick_ns: Nanos,
    /// PLACE_LAG.
    pub place_lag: bool,
    /// PLACE_DEADLINE_INITIAL.
    pub place_deadline_initial: bool,
    /// RUN_TO_PARITY.
    pub run_to_parity: bool,
    /// PREEMPT_SHORT (read by `update_curr` under [`CurrResched::PreemptShort`]).
    pub preempt_short: bool,
    /// DELAY_DEQUEUE.
    pub delay_dequeue: bool,
    /// DELAY_ZERO.
    pub delay_zero: bool,
    /// When `update_curr` asks to reschedule besides a consumed request.
    pub curr_resched: CurrResched,
    /// How curr's protected window is set, and whether the pick honours
    /// it without RUN_TO_PARITY.
    pub protect: ProtectRule,
}

impl EevdfParams {
    /// Whether `pick_eevdf` keeps a curr inside its protected window: under
    /// [`ProtectRule::UntilDeadline`] only with RUN_TO_PARITY; under
    /// [`ProtectRule::MinSlice`] always (without RUN_TO_PARITY the window
    /// is the normalised base slice).
    pub fn pick_protects(&self) -> bool {
        self.protect.pick_protects(self.run_to_parity)
    }
}

/// curr's protected window (`vprot`) by release.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum ProtectRule {
    /// 6.6-6.16: `set_next_entity` marks curr (its deadline stored as the
    /// marker, `vlag == deadline`) and the pick keeps it, only under
    /// RUN_TO_PARITY, while it is eligible and its deadline has not changed
    /// since the pick: the window is the whole request. Without
    /// RUN_TO_PARITY nothing protects curr. 6.12-6.16 cancel the mark on a
    /// PREEMPT_SHORT preemption; nothing shrinks it.
    UntilDeadline,
    /// 6.17 on (Vincent Guittot's "sched/fair: Limit run to parity to the
    /// min slice of enqueued entities" and "sched/fair: Fix NO_RUN_TO_PARITY
    /// case"): the window is the queue's shortest slice with RUN_TO_PARITY,
    /// the normalised base slice without it, and a wakeup can shrink it
    /// (`update_protect_slice`).
    #[default]
    MinSlice,
}

impl ProtectRule {
    /// The rule of a `--kernel` release.
    pub fn for_kernel(kernel: &str) -> Self {
        crate::kernels::by_release(kernel, &[((6, 17), Self::MinSlice)], Self::UntilDeadline)
    }

    /// Whether the pick keeps curr inside its window, with RUN_TO_PARITY
    /// as given.
    pub fn pick_protects(self, run_to_parity: bool) -> bool {
        run_to_parity || self == Self::MinSlice
    }

    /// Whether a wakeup that did not preempt may shrink curr's window.
    pub fn shrinks(self) -> bool {
        self == Self::MinSlice
    }
}

/// When `update_curr` reschedules the running entity although its request
/// is not used up, by release. The rule is the kernel's, not a feature
/// flag's: the commit that added PREEMPT_SHORT also added the second test
/// to `update_curr`, and the series that reworked slice protection for
/// 6.17 made it unconditional.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum CurrResched {
    /// 6.6-6.11: never; only `update_deadline` (a consumed request)
    /// reschedules from `update_curr`.
    Consumed,
    /// 6.12-6.16 (85e511df3cec "sched/eevdf: Allow shorter slices to
    /// wakeup-preempt"): `did_preempt_short`: with PREEMPT_SHORT on, a curr
    /// whose protection is over (its deadline renewed since the pick, or
    /// cancelled by a shorter wakee) and that is no longer eligible.
    PreemptShort,
    /// 6.17 on ("sched/fair: Fix NO_RUN_TO_PARITY case" and the final
    /// `protect_slice` form): any curr past its protected window
    /// (`v >= vprot`), eligible or not, whatever PREEMPT_SHORT says.
    #[default]
    Unprotected,
}

impl CurrResched {
    /// The rule of a `--kernel` release.
    pub fn for_kernel(kernel: &str) -> Self {
        let rows = [((6, 17), Self::Unprotected), ((6, 12), Self::PreemptShort)];
        crate::kernels::by_release(kernel, &rows, Self::Consumed)
    }
}

#[inline]
pub(crate) fn vdelta(delta: Nanos, w: u64) -> i64 {
    calc_delta_fair(delta, w) as i64
}

/// `update_curr_se` and the vruntime step of `update_curr`, shared by both
/// fair-class variants: charges the running entity `se` up to `now` and
/// returns the time charged (`None` if none has passed).
#[inline(always)] // per burst end and level: kept in its callers' loops
pub(crate) fn charge_curr(se: &mut SchedEntity, now: Nanos) -> Option<Nanos> {
    if now <= se.exec_start {
        return None;
    }
    let delta = now - se.exec_start;
    se.exec_start = now;
    se.sum_exec_runtime += delta;
    se.vruntime += vdelta(delta, se.weight);
    Some(delta)
}

/// `charge_curr` for update_curr: `None` only when no time has passed
/// since the last charge *and* no quiet charge (`SchedEntity::update_owed`)
/// is waiting for update_curr's decisions; clears the debt.
pub(crate) fn charge_owed(se: &mut SchedEntity, now: Nanos) -> Option<Nanos> {
    let owed = std::mem::take(&mut se.update_owed);
    match charge_curr(se, now) {
        None if owed => Some(0),
        d => d,
    }
}

/// `Σ w'(v − v0)` and `Σ w'` over the queued entities, curr included
/// while it is queued (the tree sums hold everything but curr).
fn sums_with_curr(cfs: &CfsRq, ents: &[SchedEntity]) -> (i128, i128) {
    let mut avg = cfs.sum_w_vruntime;
    let mut load = cfs.sum_weight as i128;
    if let Some(c) = cfs.curr {
        let se = &ents[c.idx()];
        if se.on_rq {
            let w = se.weight as i128;
            avg += (se.vruntime - cfs.zero_vruntime) as i128 * w;
            load += w;
        }
    }
    (avg, load)
}

/// `a / b` (truncated) for a positive `b`: a 64-bit division when `a` and
/// `b` fit 64 bits (the same quotient), else the 128-bit one. The sums
/// are kept in 128 bits against overflow, but their values are small
/// (`update_zero_vruntime` keeps them near 0); a profile of the
/// periodic cases had the 128-bit division routine at 2-3 %.
#[inline]
fn div_pos(a: i128, b: i128) -> i128 {
    debug_assert!(b > 0);
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a), Ok(b)) => (a / b) as i128,
        _ => div_wide(a, b),
    }
}

/// `a / b` in 128 bits, out of line (kept out of the callers' inlining
/// budget).
#[cold]
#[inline(never)]
fn div_wide(a: i128, b: i128) -> i128 {
    a / b
}

/// Weighted average vruntime `V` of the queue (curr included while queued).
pub fn avg_vruntime(cfs: &CfsRq, ents: &[SchedEntity]) -> i64 {
    let (mut avg, load) = sums_with_curr(cfs, ents);
    if load > 0 {
        // Round toward −∞ so an entity exactly at V tests eligible.
        if avg < 0 {
            avg -= load - 1;
        }
        avg = div_pos(avg, load);
    }
    cfs.zero_vruntime + avg as i64
}

/// `vruntime_eligible` as a test on a vruntime, the sums read once: true
/// for `v` means an entity at `v` would have non-negative lag. True for a
/// `v`, it is true for every smaller one (the load is positive while
/// anything is queued), which the timeline's heap search relies on.
#[inline]
fn eligibility(cfs: &CfsRq, ents: &[SchedEntity]) -> impl Fn(i64) -> bool {
    let (avg, load) = sums_with_curr(cfs, ents);
    let v0 = cfs.zero_vruntime;
    move |v: i64| avg >= (v - v0) as i128 * load
}

/// `vruntime_eligible`: would an entity at `v` have non-negative lag?
pub fn vruntime_eligible(cfs: &CfsRq, ents: &[SchedEntity], v: i64) -> bool {
    eligibility(cfs, ents)(v)
}

/// `entity_eligible`.
#[inline]
pub fn entity_eligible(cfs: &CfsRq, ents: &[SchedEntity], se: EntityId) -> bool {
    vruntime_eligible(cfs, ents, ents[se.idx()].vruntime)
}

/// Moves the reference point `v0` to the current `V` (tip-2026
/// `update_zero_vruntime`), keeping the products small.
fn update_zero_vruntime(cfs: &mut CfsRq, ents: &[SchedEntity]) {
    let v = avg_vruntime(cfs, ents);
    let d = v - cfs.zero_vruntime;
    cfs.sum_w_vruntime -= d as i128 * cfs.sum_weight as i128;
    cfs.zero_vruntime = v;
}

/// `__enqueue_entity`: into the timeline and the sums.
pub fn enqueue_tree(cfs: &mut CfsRq, ents: &[SchedEntity], id: EntityId) {
    let se = &ents[id.idx()];
    cfs.sum_w_vruntime += (se.vruntime - cfs.zero_vruntime) as i128 * se.weight as i128;
    cfs.sum_weight += se.weight;
    let fresh = cfs
        .timeline
        .insert((se.deadline, id), se.vruntime, se.slice);
    debug_assert!(fresh, "entity {id} already in the timeline");
    update_zero_vruntime(cfs, ents);
}

/// `__dequeue_entity`: out of the timeline and the sums.
pub fn dequeue_tree(cfs: &mut CfsRq, ents: &[SchedEntity], id: EntityId) {
    let se = &ents[id.idx()];
    let was = cfs.timeline.remove(&(se.deadline, id));
    debug_assert!(was, "entity {id} not in the timeline");
    cfs.sum_w_vruntime -= (se.vruntime - cfs.zero_vruntime) as i128 * se.weight as i128;
    cfs.sum_weight -= se.weight;
    update_zero_vruntime(cfs, ents);
}

/// `update_deadline`: once the request is used up, issue a new one.
/// Returns true when a new deadline was set (request consumed → resched).
pub fn update_deadline(se: &mut SchedEntity, p: &EevdfParams) -> bool {
    if se.vruntime < se.deadline {
        return false;
    }
    if !se.custom_slice {
        se.slice = p.base_slice_ns;
    }
    se.deadline = se.vruntime + vdelta(se.slice, se.weight);
    true
}

/// What `update_curr` did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CurrUpdate {
    /// Wall time charged.
    pub delta_exec: Nanos,
    /// A reschedule is due (request consumed or protection ended with
    /// others queued).
    pub resched: bool,
}

/// `update_curr` for the queue's running entity, charging it up to `now`.
pub fn update_curr(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    now: Nanos,
    p: &EevdfParams,
) -> CurrUpdate {
    let Some(c) = cfs.curr else {
        return CurrUpdate::default();
    };
    let se = &mut ents[c.idx()];
    let Some(delta) = charge_owed(se, now) else {
        return CurrUpdate::default();
    };
    let consumed = update_deadline(se, p);
    let protected_over = se.vruntime >= se.vprot;
    let resched = cfs.nr_queued > 1
        && (consumed
            || match p.curr_resched {
                CurrResched::Consumed => false,
                CurrResched::PreemptShort => {
                    p.preempt_short && protected_over && !entity_eligible(cfs, ents, c)
                }
                CurrResched::Unprotected => protected_over,
            });
    CurrUpdate {
        delta_exec: delta,
        resched,
    }
}

/// `update_entity_lag`: save `V − v`, clamped to
/// `±calc_delta_fair(max(2·slice, TICK_NSEC))`.
pub fn update_entity_lag(cfs: &CfsRq, ents: &mut [SchedEntity], id: EntityId, p: &EevdfParams) {
    let v = avg_vruntime(cfs, ents);
    let se = &mut ents[id.idx()];
    let limit = vdelta((2 * se.slice).max(p.tick_ns), se.weight);
    se.vlag = (v - se.vruntime).clamp(-limit, limit);
}

/// `place_entity`: give an entity joining the queue its vruntime and
/// deadline, preserving its lag (§2.7).
pub fn place_entity(
    cfs: &CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    initial: bool,
    p: &EevdfParams,
) {
    let v_avg = avg_vruntime(cfs, ents);
    let mut load = cfs.sum_weight as i128;
    if let Some(c) = cfs.curr {
        if ents[c.idx()].on_rq {
            load += ents[c.idx()].weight as i128;
        }
    }
    let se = &mut ents[id.idx()];
    if !se.custom_slice {
        se.slice = p.base_slice_ns;
    }
    let mut vslice = vdelta(se.slice, se.weight);
    let mut lag: i64 = 0;
    if p.place_lag && cfs.nr_queued > 0 && se.vlag != 0 {
        // Adding an entity with lag vl moves V by −w·vl/(W+w); inflate the
        // lag so that after the move it is still vl.
        let l = se.vlag as i128 * (load + se.weight as i128);
        let load = if load == 0 { 1 } else { load };
        lag = div_pos(l, load) as i64;
    }
    se.vruntime = v_avg - lag;
    if initial && p.place_deadline_initial {
        vslice /= 2;
    }
    se.deadline = se.vruntime + vslice;
}

/// Flags of an enqueue.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EnqueueKind {
    /// A wakeup (`ENQUEUE_WAKEUP`): placed with its saved lag.
    Wakeup,
    /// A new task (`ENQUEUE_INITIAL`).
    Initial,
    /// A migration or other non-sleep requeue: placed with its saved lag.
    Migrate,
}

/// `enqueue_entity` on one queue (curr accounting first, then placement).
pub fn enqueue_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    kind: EnqueueKind,
    now: Nanos,
    p: &EevdfParams,
) -> CurrUpdate {
    let u = update_curr(cfs, ents, now, p);
    place_entity(cfs, ents, id, kind == EnqueueKind::Initial, p);
    cfs.load_weight += ents[id.idx()].weight;
    cfs.nr_queued += 1;
    if cfs.curr != Some(id) {
        enqueue_tree(cfs, ents, id);
    }
    ents[id.idx()].on_rq = true;
    u
}

/// What a dequeue did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Dequeued {
    /// The entity left the queue.
    Gone,
    /// DELAY_DEQUEUE: it slept while ineligible and stays queued, marked
    /// `sched_delayed`, until it is picked or wakes up.
    Delayed,
}

/// `dequeue_entity` on one queue: save the lag, leave the timeline — or,
/// for a `sleep` of an ineligible entity under DELAY_DEQUEUE, stay.
pub fn dequeue_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    sleep: bool,
    now: Nanos,
    p: &EevdfParams,
) -> (CurrUpdate, Dequeued) {
    let u = update_curr(cfs, ents, now, p);
    if sleep && p.delay_dequeue && !entity_eligible(cfs, ents, id) {
        ents[id.idx()].sched_delayed = true;
        return (u, Dequeued::Delayed);
    }
    update_entity_lag(cfs, ents, id, p);
    if cfs.curr != Some(id) {
        dequeue_tree(cfs, ents, id);
    }
    cfs.load_weight -= ents[id.idx()].weight;
    cfs.nr_queued -= 1;
    let se = &mut ents[id.idx()];
    se.on_rq = false;
    if se.sched_delayed {
        // finish_delayed_dequeue_entity: the entity was picked (so eligible);
        // DELAY_ZERO drops the positive lag it earned while delayed.
        se.sched_delayed = false;
        if p.delay_zero && se.vlag > 0 {
            se.vlag = 0;
        }
    }
    (u, Dequeued::Gone)
}

/// `requeue_delayed_entity`: a delayed entity wakes up before being picked.
/// With DELAY_ZERO a positive lag is clipped to 0 and the entity re-placed.
pub fn requeue_delayed_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    now: Nanos,
    p: &EevdfParams,
) -> CurrUpdate {
    let u = update_curr(cfs, ents, now, p);
    if p.delay_zero {
        update_entity_lag(cfs, ents, id, p);
        if ents[id.idx()].vlag > 0 {
            let in_tree = cfs.curr != Some(id);
            if in_tree {
                dequeue_tree(cfs, ents, id);
            }
            // Placement with zero lag: v = V (of the queue without it).
            cfs.nr_queued -= 1;
            cfs.load_weight -= ents[id.idx()].weight;
            let on_rq = std::mem::replace(&mut ents[id.idx()].on_rq, false);
            ents[id.idx()].vlag = 0;
            place_entity(cfs, ents, id, false, p);
            ents[id.idx()].on_rq = on_rq;
            cfs.nr_queued += 1;
            cfs.load_weight += ents[id.idx()].weight;
            if in_tree {
                enqueue_tree(cfs, ents, id);
            }
        }
    }
    ents[id.idx()].sched_delayed = false;
    u
}

/// Shortest slice among the queued entities (curr included): the
/// timeline keeps its own minimum (fair/timeline, the kernel's augmented
/// `cfs_rq_min_slice`), so this is O(1).
pub fn min_slice(cfs: &CfsRq, ents: &[SchedEntity]) -> Option<Nanos> {
    let curr = cfs
        .curr
        .filter(|c| ents[c.idx()].on_rq)
        .map(|c| ents[c.idx()].slice);
    match (curr, cfs.timeline.min_slice()) {
        (Some(c), Some(t)) => Some(c.min(t)),
        (c, t) => c.or(t),
    }
}

/// A new slice for the running entity `id` (`sched_setattr` with a fair
/// policy: dequeue, change, enqueue, set_next_task). Its lag is kept; its
/// deadline becomes one new slice ahead of its vruntime and its protected
/// window is recomputed. The caller has brought curr's accounting up to
/// date.
pub fn set_curr_slice(
    cfs: &CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    slice: Nanos,
    custom: bool,
    p: &EevdfParams,
) {
    debug_assert_eq!(cfs.curr, Some(id));
    let se = &mut ents[id.idx()];
    se.slice = slice;
    se.custom_slice = custom;
    se.deadline = se.vruntime + vdelta(slice, se.weight);
    set_protect_slice(cfs, ents, id, p);
}

/// `set_protect_slice`: the window in which curr is not preempted by pick.
fn set_protect_slice(cfs: &CfsRq, ents: &mut [SchedEntity], id: EntityId, p: &EevdfParams) {
    if p.protect == ProtectRule::UntilDeadline {
        let se = &mut ents[id.idx()];
        se.vprot = se.deadline;
        return;
    }
    let own = ents[id.idx()].slice;
    let s = if p.run_to_parity {
        min_slice(cfs, ents).unwrap_or(own).min(own)
    } else {
        p.base_slice_normalized_ns.min(own)
    };
    let se = &mut ents[id.idx()];
    se.vprot = if s == se.slice {
        se.deadline
    } else {
        se.deadline.min(se.vruntime + vdelta(s, se.weight))
    };
}

/// `update_protect_slice`: shrink curr's protection to the queue's
/// shortest slice (a wakeup that did not preempt).
pub fn update_protect_slice(cfs: &CfsRq, ents: &mut [SchedEntity], id: EntityId) {
    let s = min_slice(cfs, ents).unwrap_or(ents[id.idx()].slice);
    let se = &mut ents[id.idx()];
    se.vprot = se.vprot.min(se.vruntime + vdelta(s, se.weight));
}

/// `cancel_protect_slice`.
pub fn cancel_protect_slice(ents: &mut [SchedEntity], id: EntityId) {
    let se = &mut ents[id.idx()];
    se.vprot = se.vruntime;
}

/// `set_next_entity`: `id` becomes the queue's curr and leaves the timeline.
pub fn set_next_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    exec_start: Nanos,
    p: &EevdfParams,
) {
    if ents[id.idx()].on_rq {
        dequeue_tree(cfs, ents, id);
    }
    set_protect_slice(cfs, ents, id, p);
    cfs.curr = Some(id);
    let se = &mut ents[id.idx()];
    se.exec_start = exec_start;
    se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

/// `put_prev_entity`: curr stops running; back into the timeline if queued.
pub fn put_prev_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    now: Nanos,
    p: &EevdfParams,
) -> CurrUpdate {
    let Some(c) = cfs.curr else {
        return CurrUpdate::default();
    };
    let u = if ents[c.idx()].on_rq {
        update_curr(cfs, ents, now, p)
    } else {
        CurrUpdate::default()
    };
    cfs.curr = None;
    if ents[c.idx()].on_rq {
        enqueue_tree(cfs, ents, c);
    }
    u
}

/// `__pick_eevdf(cfs_rq, protect)`: the eligible entity with the earliest
/// virtual deadline, honouring curr's protected window when `protect`.
pub fn pick_eevdf(cfs: &CfsRq, ents: &[SchedEntity], protect: bool) -> Option<EntityId> {
    let curr_q = cfs.curr.filter(|c| ents[c.idx()].on_rq);
    // 1. A single queued entity.
    if cfs.nr_queued == 1 {
        return curr_q.or_else(|| cfs.timeline.first().map(|(_, id)| id));
    }
    // 3. Curr competes only while eligible.
    let eligible = eligibility(cfs, ents);
    let curr = curr_q.filter(|&c| eligible(ents[c.idx()].vruntime));
    // 4. Inside its protected window curr keeps the CPU.
    if protect {
        if let Some(c) = curr {
            if ents[c.idx()].vruntime < ents[c.idx()].vprot {
                return Some(c);
            }
        }
    }
    // 5./6. Earliest deadline among eligible tree entities (the heap
    // search over the timeline's subtree minima).
    let best = cfs.timeline.first_eligible(eligible);
    // 7. Curr wins if its deadline is earlier.
    match (curr, best) {
        (Some(c), Some(b)) if ents[c.idx()].deadline < ents[b.idx()].deadline => Some(c),
        (Some(c), None) => Some(c),
        (_, Some(b)) => Some(b),
        (None, None) => {
            // Rounding can leave no entity exactly eligible; the kernel then
            // returns the leftmost entry.
            curr_q.or_else(|| cfs.timeline.first().map(|(_, id)| id))
        }
    }
}

/// `reweight_entity`: change an entity's weight keeping its lag and
/// relative deadline in wall-time terms (§2.7 note).
pub fn reweight_entity(
    cfs: &mut CfsRq,
    ents: &mut [SchedEntity],
    id: EntityId,
    new_w: u64,
    now: Nanos,
    p: &EevdfParams,
) {
    let old_w = ents[id.idx()].weight;
    if old_w == new_w {
        return;
    }
    let is_curr = cfs.curr == Some(id);
    let on_rq = ents[id.idx()].on_rq;
    if on_rq {
        if is_curr {
            update_curr(cfs, ents, now, p);
        } else {
            dequeue_tree(cfs, ents, id);
        }
        let v_avg = avg_vruntime(cfs, ents);
        let se = &mut ents[id.idx()];
        let lag = v_avg - se.vruntime;
        let rel_d = se.deadline - se.vruntime;
        se.vruntime = v_avg - div_pos(lag as i128 * old_w as i128, new_w as i128) as i64;
        se.deadline = se.vruntime + div_pos(rel_d as i128 * old_w as i128, new_w as i128) as i64;
        se.weight = new_w;
        cfs.load_weight = cfs.load_weight - old_w + new_w;
        if !is_curr {
            enqueue_tree(cfs, ents, id);
        }
    } else {
        let se = &mut ents[id.idx()];
        se.vlag = div_pos(se.vlag as i128 * old_w as i128, new_w as i128) as i64;
        se.weight = new_w;
    }
}

/// `yield_task_fair` (EEVDF): push curr's deadline one request further.
pub fn yield_entity(cfs: &mut CfsRq, ents: &mut [SchedEntity], now: Nanos, p: &EevdfParams) {
    update_curr(cfs, ents, now, p);
    if let Some(c) = cfs.curr {
        let se = &mut ents[c.idx()];
        se.deadline += vdelta(se.slice, se.weight);
    }
}

/// Recomputes the sums from scratch (for `--check`).
pub fn recompute_sums(cfs: &CfsRq, ents: &[SchedEntity]) -> (i128, u64) {
    let mut s = 0i128;
    let mut w = 0u64;
    for (_, id) in &cfs.timeline {
        let se = &ents[id.idx()];
        s += (se.vruntime - cfs.zero_vruntime) as i128 * se.weight as i128;
        w += se.weight;
    }
    (s, w)
}

#[cfg(test)]
mod tests;
