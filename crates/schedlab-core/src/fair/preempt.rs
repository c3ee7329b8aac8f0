//! Wakeup preemption: should a waking task take the CPU from curr?
//!
//! Kernel reference: fair.c `wakeup_preempt_fair` (tip-2026; formerly
//! `check_preempt_wakeup_fair`), kernel-model.md §2.9, steps numbered as
//! there. The caller has already handled step 1 (wakee not fair / is curr /
//! resched pending / WAKEUP_PREEMPTION off), matched the hierarchies
//! (step 2; flat queues for now) and run `update_curr` (step 5).
//!
//! Deviations: NEXT_BUDDY (step 9) is not modelled yet, so a WF_SYNC wakeup
//! never sets a buddy.
//!
//! Releases: step 8 and the unconditional RUN_TO_PARITY shrink of step 10
//! came with Mel Gorman's "sched/fair: Reimplement NEXT_BUDDY to align with
//! EEVDF goals" (posted 2025-10/11 against 6.18-rc1, merged for 6.19). A
//! 6.17/6.18 kernel's `check_preempt_wakeup_fair` has neither: after the
//! idle and policy rules it goes straight to the pick test, and shrinks
//! curr's protection only when PREEMPT_SHORT applied (`rework_6_19` off).
//! 6.6-6.16 never shrink it, and their pick honours it only under
//! RUN_TO_PARITY (`ProtectRule::UntilDeadline`).
//!
//! CFS (`FAIR_CLASS=cfs`, ≤6.5): [`wakeup_preempt_cfs`] is the decision of
//! `check_preempt_wakeup` after `find_matching_se`: the idle-entity rule
//! (5.15+), then `wakeup_preempt_entity(se, pse) == 1`, i.e. curr's
//! vruntime is ahead of the wakee's by more than `wakeup_granularity`
//! scaled to the wakee's weight. The steps before the match (the early
//! NEXT_BUDDY mark, resched pending, SCHED_IDLE curr, wakee policy) and the
//! buddies are applied by `sched/fair.rs`.

use super::cfs::{wakeup_preempt_entity, CfsParams};
use super::eevdf::{entity_eligible, pick_eevdf, ProtectRule};
use crate::ids::EntityId;
use crate::program::Policy;
use crate::rq::{CfsRq, SchedEntity};

/// What the wakeup does to curr.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PreemptDecision {
    /// Leave curr running.
    None,
    /// Reschedule (`resched_curr_lazy`); `cancel_protect` also ends curr's
    /// protected window (PREEMPT_SHORT and SCHED_IDLE cases).
    Preempt {
        /// Cancel curr's slice protection.
        cancel_protect: bool,
    },
    /// No preemption, but shrink curr's protection to the queue's shortest
    /// slice (RUN_TO_PARITY's `update_protect_slice`).
    ShrinkProtect,
}

/// Inputs of the decision besides the queue.
#[derive(Copy, Clone, Debug)]
pub struct WakeupCtx {
    /// The wakee's policy.
    pub wakee_policy: Policy,
    /// `WF_FORK` (first wakeup of a new task).
    pub fork: bool,
    /// The wakeup runs in task context (`in_task()`), not in an interrupt.
    pub in_task: bool,
    /// PREEMPT_SHORT.
    pub preempt_short: bool,
    /// RUN_TO_PARITY.
    pub run_to_parity: bool,
    /// The release's protection rule: whether the pick honours curr's
    /// window without RUN_TO_PARITY, and whether a wakeup may shrink it.
    pub protect: ProtectRule,
    /// The 6.19 rework (module docs): an ineligible waker in task context
    /// is rescheduled (step 8), and RUN_TO_PARITY shrinks curr's
    /// protection after every wakeup that did not preempt; without it
    /// (6.17/6.18) only a PREEMPT_SHORT wakeup shrinks it.
    pub rework_6_19: bool,
}

/// Steps 3–10 of `wakeup_preempt_fair` for curr `se` and wakee `pse`, both
/// queued on `cfs`.
pub fn wakeup_preempt_fair(
    cfs: &CfsRq,
    ents: &[SchedEntity],
    se: EntityId,
    pse: EntityId,
    ctx: &WakeupCtx,
) -> PreemptDecision {
    let (cse_idle, pse_idle) = (ents[se.idx()].idle, ents[pse.idx()].idle);
    // 3. SCHED_IDLE: a non-idle wakee preempts an idle curr at once; an idle
    //    wakee never preempts a non-idle curr.
    if cse_idle && !pse_idle {
        return PreemptDecision::Preempt {
            cancel_protect: true,
        };
    }
    if cse_idle != pse_idle {
        return PreemptDecision::None;
    }
    // 4. Only SCHED_NORMAL wakees preempt.
    if ctx.wakee_policy != Policy::Normal {
        return PreemptDecision::None;
    }
    // 6. PREEMPT_SHORT: a shorter request may override protection.
    let short = ctx.preempt_short && ents[pse.idx()].slice < ents[se.idx()].slice;
    if !short {
        // 7. Never on fork.
        if ctx.fork {
            return PreemptDecision::None;
        }
        // 8. A waker running in task context that is no longer eligible.
        if ctx.rework_6_19 && ctx.in_task && !entity_eligible(cfs, ents, se) {
            return PreemptDecision::Preempt {
                cancel_protect: false,
            };
        }
    }
    // 10. Preempt iff the wakee is what the pick would choose now.
    if pick_eevdf(
        cfs,
        ents,
        !short && ctx.protect.pick_protects(ctx.run_to_parity),
    ) == Some(pse)
    {
        return PreemptDecision::Preempt {
            cancel_protect: short,
        };
    }
    if ctx.protect.shrinks() && ctx.run_to_parity && (ctx.rework_6_19 || short) {
        PreemptDecision::ShrinkProtect
    } else {
        PreemptDecision::None
    }
}

/// What a CFS wakeup does to curr.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CfsWakeup {
    /// Leave curr running.
    None,
    /// Reschedule (the idle-entity rule).
    Preempt,
    /// Reschedule, and make the wakee the next buddy (unless the early
    /// NEXT_BUDDY mark already did).
    PreemptWithBuddy,
}

/// CFS `check_preempt_wakeup` for curr `se` and wakee `pse` on one queue.
pub fn wakeup_preempt_cfs(
    ents: &[SchedEntity],
    se: EntityId,
    pse: EntityId,
    p: &CfsParams,
) -> CfsWakeup {
    let (cse_idle, pse_idle) = (ents[se.idx()].idle, ents[pse.idx()].idle);
    if cse_idle && !pse_idle {
        return CfsWakeup::Preempt;
    }
    if cse_idle != pse_idle {
        return CfsWakeup::None;
    }
    if wakeup_preempt_entity(ents, se, pse, p) == 1 {
        CfsWakeup::PreemptWithBuddy
    } else {
        CfsWakeup::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fair::eevdf::enqueue_tree;
    use crate::ids::CfsRqId;

    fn setup(
        curr_idle: bool,
        wakee_idle: bool,
        wakee_v: i64,
        wakee_d: i64,
    ) -> (CfsRq, Vec<SchedEntity>) {
        let mk = |w: u64, v: i64, d: i64, idle: bool| SchedEntity {
            weight: w,
            vruntime: v,
            deadline: d,
            vprot: d,
            slice: 2_800_000,
            on_rq: true,
            idle,
            cfs_rq: CfsRqId(0),
            ..Default::default()
        };
        let cw = if curr_idle { 3 } else { 1024 };
        let ww = if wakee_idle { 3 } else { 1024 };
        let ents = vec![
            mk(cw, 0, 2_800_000, curr_idle),
            mk(ww, wakee_v, wakee_d, wakee_idle),
        ];
        let mut cfs = CfsRq {
            curr: Some(EntityId(0)),
            nr_queued: 2,
            load_weight: cw + ww,
            ..Default::default()
        };
        enqueue_tree(&mut cfs, &ents, EntityId(1));
        (cfs, ents)
    }

    fn ctx() -> WakeupCtx {
        WakeupCtx {
            wakee_policy: Policy::Normal,
            fork: false,
            in_task: false,
            preempt_short: true,
            run_to_parity: true,
            protect: ProtectRule::MinSlice,
            rework_6_19: true,
        }
    }

    #[test]
    fn normal_wakee_preempts_sched_idle_curr_at_once() {
        // Even with a later deadline and curr protected.
        let (cfs, e) = setup(true, false, 10_000_000, 20_000_000);
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &ctx()),
            PreemptDecision::Preempt {
                cancel_protect: true
            }
        );
    }

    #[test]
    fn idle_wakee_never_preempts_normal_curr() {
        let (cfs, e) = setup(false, true, -10_000_000, 1);
        let c = WakeupCtx {
            wakee_policy: Policy::Idle,
            ..ctx()
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &c),
            PreemptDecision::None
        );
    }

    #[test]
    fn protected_curr_is_not_preempted_by_equal_slice_wakee() {
        // Both at v=0 (eligible); the wakee's deadline (1 ms) is earlier but
        // curr is inside vprot: the pick keeps curr; protection shrinks.
        let (cfs, e) = setup(false, false, 0, 1_000_000);
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &ctx()),
            PreemptDecision::ShrinkProtect
        );
    }

    #[test]
    fn shorter_slice_wakee_overrides_protection() {
        let (cfs, mut e) = setup(false, false, 0, 1_000_000);
        e[1].slice = 1_000_000;
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &ctx()),
            PreemptDecision::Preempt {
                cancel_protect: true
            }
        );
    }

    #[test]
    fn batch_wakee_does_not_preempt() {
        let (cfs, e) = setup(false, false, -1_000_000, 1);
        let c = WakeupCtx {
            wakee_policy: Policy::Batch,
            ..ctx()
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &c),
            PreemptDecision::None
        );
    }

    #[test]
    fn an_ineligible_waker_is_rescheduled_only_from_6_19() {
        // curr at v=2 ms, the wakee at v=0: V = 1 ms, curr is not eligible.
        // The wakee's deadline (3 ms) is later than curr's (2.8 ms), so the
        // pick (protection ignored: curr is ineligible) chooses by deadline
        // among the eligible: only the wakee is eligible -> both releases
        // preempt, 6.19 already at step 8.
        let (cfs, mut e) = setup(false, false, 0, 3_000_000);
        e[0].vruntime = 2_000_000;
        let c = WakeupCtx {
            in_task: true,
            ..ctx()
        };
        let pre = PreemptDecision::Preempt {
            cancel_protect: false,
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &c),
            pre
        );
        let old = WakeupCtx {
            rework_6_19: false,
            ..c
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &old),
            pre
        );
    }

    #[test]
    fn a_positive_lag_wakee_drags_v_below_a_just_picked_curr_6_15() {
        // hackbench's same-CPU pipe ping-pong (6.15 rules): curr (a writer)
        // was just picked at v = 0 = V with a full slice ahead (deadline =
        // vprot = 2.8 ms) and is alone on the queue. It wakes a reader whose
        // saved lag is +100 us. place_entity (PLACE_LAG) inflates the lag by
        // (load + w) / load = (1024 + 1024) / 1024: lag 200 us, so the reader
        // goes in at v = -200 us, deadline -200 us + 2.8 ms = 2.6 ms. V
        // becomes (0 - 200 us) / 2 = -100 us: curr's lag is now -100 us, it
        // is not eligible, and pick_eevdf drops it before the RUN_TO_PARITY
        // test ("run a task until it either becomes non-eligible or until
        // it gets a new slice"); the reader is the only eligible entity and
        // is picked: the wakeup preempts, though curr has used none of its
        // slice.
        let (cfs, e) = setup(false, false, -200_000, 2_600_000);
        assert!(!entity_eligible(&cfs, &e, EntityId(0)));
        let c615 = WakeupCtx {
            in_task: true,
            rework_6_19: false,
            ..ctx()
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &c615),
            PreemptDecision::Preempt {
                cancel_protect: false
            }
        );
        // With no lag (v = V = 0, deadline 2.8 ms) curr stays eligible and
        // protected: no preemption.
        let (cfs, e) = setup(false, false, 0, 2_800_000);
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &c615),
            PreemptDecision::None
        );
    }

    #[test]
    fn before_6_19_an_equal_slice_wakeup_leaves_protection_alone() {
        let (cfs, e) = setup(false, false, 0, 1_000_000);
        let old = WakeupCtx {
            rework_6_19: false,
            ..ctx()
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &old),
            PreemptDecision::None
        );
    }

    #[test]
    fn before_6_17_only_run_to_parity_protects_and_nothing_shrinks() {
        // 6.6-6.16 (ProtectRule::UntilDeadline): both at v = 0 (eligible),
        // the wakee's deadline (1 ms) earlier than curr's (3 ms). With
        // RUN_TO_PARITY curr keeps the CPU inside its window and the window
        // stays as it is; without it nothing protects curr and the pick
        // takes the earlier deadline: the wakee preempts.
        let (cfs, e) = setup(false, false, 0, 1_000_000);
        let rtp = WakeupCtx {
            preempt_short: false,
            protect: ProtectRule::UntilDeadline,
            rework_6_19: false,
            ..ctx()
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &rtp),
            PreemptDecision::None
        );
        let no_rtp = WakeupCtx {
            run_to_parity: false,
            ..rtp
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &no_rtp),
            PreemptDecision::Preempt {
                cancel_protect: false
            }
        );
        // 6.17 on, NO_RUN_TO_PARITY still protects (a base-slice window).
        let no_rtp_617 = WakeupCtx {
            protect: ProtectRule::MinSlice,
            ..no_rtp
        };
        assert_eq!(
            wakeup_preempt_fair(&cfs, &e, EntityId(0), EntityId(1), &no_rtp_617),
            PreemptDecision::None
        );
    }
}
