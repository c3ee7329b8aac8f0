//! Hand-worked EEVDF cases (kernel-model.md §2). Arithmetic in comments.

use super::*;
use crate::ids::{CfsRqId, EntityId};

const P: EevdfParams = EevdfParams {
    base_slice_ns: 3_000_000,
    base_slice_normalized_ns: 700_000,
    tick_ns: 4_000_000,
    place_lag: true,
    place_deadline_initial: true,
    run_to_parity: true,
    preempt_short: true,
    delay_dequeue: false,
    delay_zero: true,
    curr_resched: CurrResched::Unprotected,
    protect: ProtectRule::MinSlice,
};

fn ent(w: u64, v: i64, d: i64) -> SchedEntity {
    SchedEntity {
        weight: w,
        vruntime: v,
        deadline: d,
        slice: 3_000_000,
        cfs_rq: CfsRqId(0),
        ..Default::default()
    }
}

/// Queue every entity (none is curr).
fn queue(ents: &mut [SchedEntity]) -> CfsRq {
    let mut cfs = CfsRq::default();
    for i in 0..ents.len() {
        let id = EntityId(i as u32);
        ents[i].on_rq = true;
        cfs.load_weight += ents[i].weight;
        cfs.nr_queued += 1;
        enqueue_tree(&mut cfs, ents, id);
    }
    cfs
}

#[test]
fn avg_vruntime_is_the_weighted_mean() {
    // V = (1024·0 + 2048·300) / 3072 = 614400 / 3072 = 200.
    let mut e = vec![ent(1024, 0, 10), ent(2048, 300, 20)];
    let cfs = queue(&mut e);
    assert_eq!(avg_vruntime(&cfs, &e), 200);
    // Re-centring keeps V: zero_vruntime moved to 200 and the sum to 0.
    assert_eq!(cfs.zero_vruntime, 200);
    assert_eq!(
        recompute_sums(&cfs, &e),
        (cfs.sum_w_vruntime, cfs.sum_weight)
    );
}

#[test]
fn avg_vruntime_rounds_toward_minus_infinity() {
    // V = (1024·0 + 1024·1 + 1024·1) / 3072 = 2/3 → 0, and −2/3 → −1.
    let mut e = vec![ent(1024, 0, 1), ent(1024, 1, 2), ent(1024, 1, 3)];
    let cfs = queue(&mut e);
    assert_eq!(avg_vruntime(&cfs, &e), 0);
    let mut e = vec![ent(1024, 0, 1), ent(1024, -1, 2), ent(1024, -1, 3)];
    let cfs = queue(&mut e);
    assert_eq!(avg_vruntime(&cfs, &e), -1);
}

#[test]
fn eligibility_is_lag_non_negative() {
    // V = 200: v=200 has lag 0 (eligible), v=201 lag −1 (not).
    let mut e = vec![ent(1024, 0, 10), ent(2048, 300, 20)];
    let cfs = queue(&mut e);
    assert!(vruntime_eligible(&cfs, &e, 200));
    assert!(!vruntime_eligible(&cfs, &e, 201));
    assert!(entity_eligible(&cfs, &e, EntityId(0)));
    assert!(!entity_eligible(&cfs, &e, EntityId(1)));
}

#[test]
fn pick_takes_earliest_deadline_among_eligible() {
    // Three nice-0 entities, V = (0 + 100 + 500)/3 = 200.
    //   A v=0   d=900  eligible
    //   B v=100 d=800  eligible   <- earliest eligible deadline
    //   C v=500 d=300  ineligible (earliest deadline overall)
    let mut e = vec![ent(1024, 0, 900), ent(1024, 100, 800), ent(1024, 500, 300)];
    let cfs = queue(&mut e);
    assert_eq!(pick_eevdf(&cfs, &e, true), Some(EntityId(1)));
}

#[test]
fn curr_keeps_cpu_inside_protection_and_loses_after() {
    let mut e = vec![ent(1024, 0, 3_000_000), ent(1024, 0, 1_000_000)];
    let mut cfs = CfsRq::default();
    // Entity 0 runs (curr), entity 1 waits with an earlier deadline.
    for x in e.iter_mut() {
        x.on_rq = true;
        cfs.load_weight += 1024;
        cfs.nr_queued += 1;
    }
    enqueue_tree(&mut cfs, &e, EntityId(1));
    cfs.curr = Some(EntityId(0));
    e[0].vprot = 2_000_000;
    // Protected: curr (v=0 < vprot) is returned although 1 has the earlier deadline.
    assert_eq!(pick_eevdf(&cfs, &e, true), Some(EntityId(0)));
    // Without protection the earlier deadline wins.
    assert_eq!(pick_eevdf(&cfs, &e, false), Some(EntityId(1)));
}

#[test]
fn place_entity_inflates_lag_so_it_survives_insertion() {
    // One queued nice-0 entity at v=1000 (V=1000). A waking nice-0 entity
    // with vlag=+300: lag' = 300·(1024+1024)/1024 = 600, v = 1000−600 = 400.
    // After insertion V = (1000+400)/2 = 700, so its lag is 700−400 = 300.
    let mut e = vec![ent(1024, 1000, 5000), ent(1024, 0, 0)];
    let mut cfs = CfsRq::default();
    e[0].on_rq = true;
    cfs.load_weight = 1024;
    cfs.nr_queued = 1;
    enqueue_tree(&mut cfs, &e, EntityId(0));
    e[1].vlag = 300;
    enqueue_entity(&mut cfs, &mut e, EntityId(1), EnqueueKind::Wakeup, 0, &P);
    assert_eq!(e[1].vruntime, 400);
    assert_eq!(avg_vruntime(&cfs, &e), 700);
    // Deadline: v + slice (3 ms at nice 0).
    assert_eq!(e[1].deadline, 400 + 3_000_000);
}

#[test]
fn initial_placement_gets_half_a_slice() {
    let mut e = vec![ent(1024, 0, 0)];
    let mut cfs = CfsRq::default();
    enqueue_entity(&mut cfs, &mut e, EntityId(0), EnqueueKind::Initial, 0, &P);
    assert_eq!(e[0].vruntime, 0);
    assert_eq!(e[0].deadline, 1_500_000);
}

#[test]
fn lag_is_clamped_on_dequeue() {
    // nice 0, slice 3 ms, tick 4 ms: limit = max(6 ms, 4 ms) = 6 ms.
    let mut e = vec![ent(1024, 0, 1), ent(1024, 20_000_000, 2)];
    let mut cfs = queue(&mut e);
    // V = 10 ms; entity 1 has lag −10 ms → clamped to −6 ms.
    dequeue_entity(&mut cfs, &mut e, EntityId(1), true, 0, &P);
    assert_eq!(e[1].vlag, -6_000_000);
    assert!(!e[1].on_rq);
    assert_eq!(cfs.nr_queued, 1);
}

#[test]
fn lag_is_preserved_across_sleep() {
    // Two nice-0 entities at v=0 and v=1000 (V=500). Entity 0 (lag +500)
    // sleeps and wakes onto the same queue: it comes back with lag +500.
    let mut e = vec![ent(1024, 0, 10), ent(1024, 1000, 20)];
    let mut cfs = queue(&mut e);
    dequeue_entity(&mut cfs, &mut e, EntityId(0), true, 0, &P);
    assert_eq!(e[0].vlag, 500);
    enqueue_entity(&mut cfs, &mut e, EntityId(0), EnqueueKind::Wakeup, 0, &P);
    let v = avg_vruntime(&cfs, &e);
    assert_eq!(v - e[0].vruntime, 500);
}

/// A nice-5 curr (w 335, deadline 9_170_148 = calc_delta_fair(3 ms))
/// and one nice-0 entity waiting, both at vruntime 0.
fn nice5_curr_beside_one() -> (CfsRq, Vec<SchedEntity>) {
    let mut e = vec![ent(335, 0, 9_170_148), ent(1024, 0, 3_000_000)];
    let mut cfs = CfsRq::default();
    for x in e.iter_mut() {
        x.on_rq = true;
        cfs.load_weight += x.weight;
        cfs.nr_queued += 1;
    }
    enqueue_tree(&mut cfs, &e, EntityId(1));
    cfs.curr = Some(EntityId(0));
    e[0].vprot = e[0].deadline;
    (cfs, e)
}

#[test]
fn update_curr_charges_weighted_time_and_renews_the_request() {
    // nice 5 (w=335): 1 ms of wall time = 1e6·1024/335 = 3_056_716 ns virtual.
    let (mut cfs, mut e) = nice5_curr_beside_one();
    let u = update_curr(&mut cfs, &mut e, 1_000_000, &P);
    assert_eq!(u.delta_exec, 1_000_000);
    assert_eq!(e[0].vruntime, 3_056_716);
    assert!(!u.resched);
    // Two more ms add calc_delta_fair(2 ms) = 6_113_432: v = 9_170_148 ≥ d,
    // so a new request: d = v + calc_delta_fair(3 ms) = v + 9_170_149.
    let u = update_curr(&mut cfs, &mut e, 3_000_000, &P);
    assert!(u.resched);
    assert_eq!(e[0].vruntime, 9_170_148);
    assert_eq!(e[0].deadline, e[0].vruntime + 9_170_149);
}

/// `update_curr`'s second reschedule test by release, on a curr whose
/// protection ended (vprot 1 ms virtual) before its request (9.17 ms) is
/// used up: 1 ms of wall time moves the nice-5 curr to v = 3_056_716.
#[test]
fn update_curr_reschedules_an_unprotected_curr_by_release() {
    let run = |other_v: i64, rule: CurrResched, preempt_short: bool| {
        let (mut cfs, mut e) = nice5_curr_beside_one();
        dequeue_tree(&mut cfs, &e, EntityId(1));
        e[1].vruntime = other_v;
        enqueue_tree(&mut cfs, &e, EntityId(1));
        e[0].vprot = 1_000_000;
        let p = EevdfParams {
            curr_resched: rule,
            preempt_short,
            ..P
        };
        let u = update_curr(&mut cfs, &mut e, 1_000_000, &p);
        assert!(e[0].vruntime < e[0].deadline, "the request is not used up");
        u.resched
    };
    // The other entity at v = 0: V = 335·3_056_716 / 1359 = 753_487 < v,
    // so curr is no longer eligible.
    assert!(!run(0, CurrResched::Consumed, true));
    assert!(run(0, CurrResched::PreemptShort, true));
    assert!(!run(0, CurrResched::PreemptShort, false));
    assert!(run(0, CurrResched::Unprotected, false));
    // The other at v = 10 ms: V = (335·3_056_716 + 1024·10^7) / 1359
    // = 8_288_578 > v: curr is still eligible, and only 6.17's rule
    // reschedules it.
    assert!(!run(10_000_000, CurrResched::PreemptShort, true));
    assert!(run(10_000_000, CurrResched::Unprotected, true));
    assert!(!run(10_000_000, CurrResched::Consumed, true));
}

#[test]
fn curr_resched_rule_by_release() {
    assert_eq!(CurrResched::for_kernel("6.6"), CurrResched::Consumed);
    assert_eq!(CurrResched::for_kernel("6.12"), CurrResched::PreemptShort);
    assert_eq!(CurrResched::for_kernel("6.15"), CurrResched::PreemptShort);
    assert_eq!(CurrResched::for_kernel("6.18"), CurrResched::Unprotected);
    assert_eq!(CurrResched::for_kernel("tip"), CurrResched::Unprotected);
}

#[test]
fn protect_rule_by_release() {
    assert_eq!(ProtectRule::for_kernel("6.6"), ProtectRule::UntilDeadline);
    assert_eq!(ProtectRule::for_kernel("6.15"), ProtectRule::UntilDeadline);
    assert_eq!(ProtectRule::for_kernel("6.18"), ProtectRule::MinSlice);
    assert_eq!(ProtectRule::for_kernel("tip"), ProtectRule::MinSlice);
    let old = EevdfParams {
        protect: ProtectRule::UntilDeadline,
        ..P
    };
    let off = |p: EevdfParams| EevdfParams {
        run_to_parity: false,
        ..p
    };
    assert!(old.pick_protects() && !off(old).pick_protects());
    assert!(P.pick_protects() && off(P).pick_protects());
}

/// The window a pick opens, by release: curr (slice 3 ms, nice 0) beside
/// an entity with a 1 ms slice. 6.17's RUN_TO_PARITY window is the
/// shortest queued slice, 1 ms of virtual time; its NO_RUN_TO_PARITY
/// window the normalised base slice, 0.7 ms; 6.6-6.16 mark the whole
/// request, up to the deadline, whatever the feature says (the pick reads
/// the mark only under RUN_TO_PARITY).
#[test]
fn set_next_entity_opens_the_release_s_window() {
    let window = |p: EevdfParams| {
        let mut e = vec![ent(1024, 0, 3_000_000), ent(1024, 0, 1_000_000)];
        e[1].slice = 1_000_000;
        let mut cfs = queue(&mut e);
        set_next_entity(&mut cfs, &mut e, EntityId(0), 0, &p);
        e[0].vprot
    };
    assert_eq!(window(P), 1_000_000);
    assert_eq!(
        window(EevdfParams {
            run_to_parity: false,
            ..P
        }),
        700_000
    );
    let old = EevdfParams {
        protect: ProtectRule::UntilDeadline,
        ..P
    };
    assert_eq!(window(old), 3_000_000);
    assert_eq!(
        window(EevdfParams {
            run_to_parity: false,
            ..old
        }),
        3_000_000
    );
}

#[test]
fn update_curr_makes_the_decisions_a_quiet_charge_owes() {
    // The same nice-5 curr charged its 3 ms quietly (outside update_curr,
    // `Sim::charge_curr_quiet`), in one step: calc_delta_fair(3 ms) =
    // 9_170_149 ≥ d = 9_170_148, but no new request yet.
    // An update_curr at that same instant has no time left to charge, and
    // still makes the decisions the kernel's one update_curr over the whole
    // 3 ms makes: a new request and a reschedule. Without the debt it is a
    // no-op, as before.
    let fresh = || {
        let (cfs, mut e) = nice5_curr_beside_one();
        assert_eq!(charge_curr(&mut e[0], 3_000_000), Some(3_000_000));
        assert_eq!(e[0].vruntime, 9_170_149);
        (cfs, e)
    };
    let (mut cfs, mut e) = fresh();
    e[0].update_owed = true;
    let u = update_curr(&mut cfs, &mut e, 3_000_000, &P);
    assert_eq!(u.delta_exec, 0);
    assert!(u.resched);
    assert_eq!(e[0].deadline, 9_170_149 + 9_170_149);
    assert!(!e[0].update_owed);
    let (mut cfs, mut e) = fresh();
    let u = update_curr(&mut cfs, &mut e, 3_000_000, &P);
    assert_eq!(u, CurrUpdate::default());
    assert_eq!(e[0].deadline, 9_170_148);
}

#[test]
fn reweight_keeps_lag_in_wall_time() {
    // V = 500 (two nice-0 at 0 and 1000). Entity 1 (lag −500) becomes nice 5
    // (w 335): its virtual lag scales by 1024/335 → −1528.
    let mut e = vec![ent(1024, 0, 10), ent(1024, 1000, 20)];
    let mut cfs = queue(&mut e);
    reweight_entity(&mut cfs, &mut e, EntityId(1), 335, 0, &P);
    assert_eq!(e[1].weight, 335);
    assert_eq!(cfs.load_weight, 1024 + 335);
    assert_eq!(
        recompute_sums(&cfs, &e),
        (cfs.sum_w_vruntime, cfs.sum_weight)
    );
}

#[test]
fn ineligible_sleeper_is_delayed_and_eligible_one_leaves() {
    let p = EevdfParams {
        delay_dequeue: true,
        ..P
    };
    // V = 500: entity 1 (v=1000, lag −500) is ineligible → delayed, stays queued.
    let mut e = vec![ent(1024, 0, 10), ent(1024, 1000, 20)];
    let mut cfs = queue(&mut e);
    let (_, d) = dequeue_entity(&mut cfs, &mut e, EntityId(1), true, 0, &p);
    assert_eq!(d, Dequeued::Delayed);
    assert!(e[1].on_rq && e[1].sched_delayed);
    assert_eq!(cfs.nr_queued, 2);
    // Entity 0 (lag +500) is eligible → really leaves.
    let (_, d) = dequeue_entity(&mut cfs, &mut e, EntityId(0), true, 0, &p);
    assert_eq!(d, Dequeued::Gone);
    assert!(!e[0].on_rq);
    // Finishing the delayed dequeue (it is now alone, so eligible): the
    // lag is 0 and DELAY_ZERO keeps it 0.
    let (_, d) = dequeue_entity(&mut cfs, &mut e, EntityId(1), false, 0, &p);
    assert_eq!(d, Dequeued::Gone);
    assert!(!e[1].sched_delayed && !e[1].on_rq);
    assert_eq!(e[1].vlag, 0);
}

#[test]
fn delayed_wakeup_with_positive_lag_is_replaced_at_zero_lag() {
    let p = EevdfParams {
        delay_dequeue: true,
        ..P
    };
    // Entity 1 delayed at v=1000 (V=500). Entity 0 runs on: make V move past
    // entity 1 by moving entity 0's vruntime forward (as if it ran).
    let mut e = vec![ent(1024, 0, 10), ent(1024, 1000, 20)];
    let mut cfs = queue(&mut e);
    dequeue_entity(&mut cfs, &mut e, EntityId(1), true, 0, &p);
    dequeue_tree(&mut cfs, &e, EntityId(0));
    e[0].vruntime = 3000;
    enqueue_tree(&mut cfs, &e, EntityId(0));
    // V = (3000 + 1000)/2 = 2000: entity 1 has lag +1000 → clipped, re-placed at V.
    requeue_delayed_entity(&mut cfs, &mut e, EntityId(1), 0, &p);
    assert!(!e[1].sched_delayed && e[1].on_rq);
    assert_eq!(e[1].vlag, 0);
    assert_eq!(e[1].vruntime, 3000); // V of the queue without it
    assert_eq!(
        recompute_sums(&cfs, &e),
        (cfs.sum_w_vruntime, cfs.sum_weight)
    );
}

#[test]
fn set_curr_slice_renews_the_request_with_the_new_slice() {
    // curr: nice 5 (w=335) at v=1_000_000, 3 ms base slice; another entity
    // queued with the base slice. sched_setattr(runtime=20 ms): lag kept
    // (v unchanged), d = v + calc_delta_fair(20 ms) = v + 20e6·1024/335
    // = v + 61_134_328. RUN_TO_PARITY protects curr only for the queue's
    // shortest slice: 3 ms (the other entity) → vprot = v + 9_170_149.
    let mut e = vec![ent(335, 1_000_000, 5_000_000), ent(1024, 0, 3_000_000)];
    let mut cfs = CfsRq::default();
    for x in e.iter_mut() {
        x.on_rq = true;
        cfs.load_weight += x.weight;
        cfs.nr_queued += 1;
    }
    enqueue_tree(&mut cfs, &e, EntityId(1));
    cfs.curr = Some(EntityId(0));
    set_curr_slice(&cfs, &mut e, EntityId(0), 20_000_000, true, &P);
    assert_eq!((e[0].slice, e[0].custom_slice), (20_000_000, true));
    assert_eq!(e[0].vruntime, 1_000_000);
    assert_eq!(e[0].deadline, 1_000_000 + 61_134_328);
    assert_eq!(e[0].vprot, 1_000_000 + 9_170_149);
    // Back to the base slice (runtime 0): d = v + calc_delta_fair(3 ms).
    set_curr_slice(&cfs, &mut e, EntityId(0), 3_000_000, false, &P);
    assert_eq!((e[0].slice, e[0].custom_slice), (3_000_000, false));
    assert_eq!(e[0].deadline, 1_000_000 + 9_170_149);
    assert_eq!(e[0].vprot, e[0].deadline);
}

/// `div_pos` gives the 128-bit truncated quotient whether or not its
/// operands fit 64 bits (negative dividends round toward zero, as `/`).
#[test]
fn div_pos_matches_128_bit_division() {
    let big = i64::MAX as i128;
    for a in [
        0,
        1,
        -1,
        7,
        -7,
        1023,
        -1025,
        big,
        big + 1,
        -big - 1,
        -big - 2,
        i128::MAX,
        i128::MIN + 1,
    ] {
        for b in [1, 2, 3, 1024, 88761, big, big + 1, i128::MAX] {
            assert_eq!(div_pos(a, b), a / b, "{a} / {b}");
        }
    }
}

// ------------------------------------------------ fast pick vs the old walk

use proptest::prelude::*;

/// The pick as it was with the `BTreeSet` timeline: the walk in deadline
/// order to the first entity `entity_eligible` accepts (reading the
/// entity's own vruntime, not the tree's copy), over the reference model
/// the arena tree shadows in test builds.
fn reference_pick_eevdf(cfs: &CfsRq, ents: &[SchedEntity], protect: bool) -> Option<EntityId> {
    let old = cfs.timeline.reference();
    let curr_q = cfs.curr.filter(|c| ents[c.idx()].on_rq);
    if cfs.nr_queued == 1 {
        return curr_q.or_else(|| old.first().map(|&(_, id)| id));
    }
    let curr = curr_q.filter(|&c| entity_eligible(cfs, ents, c));
    if protect {
        if let Some(c) = curr {
            if ents[c.idx()].vruntime < ents[c.idx()].vprot {
                return Some(c);
            }
        }
    }
    let best = old
        .iter()
        .map(|&(_, id)| id)
        .find(|&id| entity_eligible(cfs, ents, id));
    match (curr, best) {
        (Some(c), Some(b)) if ents[c.idx()].deadline < ents[b.idx()].deadline => Some(c),
        (Some(c), None) => Some(c),
        (_, Some(b)) => Some(b),
        (None, None) => curr_q.or_else(|| old.first().map(|&(_, id)| id)),
    }
}

/// What the random driver does to the queue (the sequences the simulator
/// makes: wakeups, sleeps, ticks, switches, reweights, yields, new slices).
#[derive(Clone, Debug)]
enum QOp {
    /// Wake entity i (or requeue it if delayed) with this kind.
    Wake(usize, u8),
    /// Entity i sleeps (a delayed dequeue if ineligible under DELAY_DEQUEUE).
    Sleep(usize),
    /// Time passes and curr is charged.
    Tick(u64),
    /// pick (with or without protection), then put_prev and set_next.
    Schedule(bool),
    /// A new weight for entity i.
    Reweight(usize, u64),
    /// curr yields.
    Yield,
    /// curr gets a new (custom) slice.
    Slice(u64),
}

const NQ: usize = 24;
const WEIGHTS: [u64; 6] = [3, 15, 335, 1024, 1991, 88761];

fn qop() -> impl Strategy<Value = QOp> {
    prop_oneof![
        4 => (0..NQ, 0u8..3).prop_map(|(i, k)| QOp::Wake(i, k)),
        3 => (0..NQ).prop_map(QOp::Sleep),
        3 => (1u64..8_000_000).prop_map(QOp::Tick),
        3 => any::<bool>().prop_map(QOp::Schedule),
        1 => (0..NQ, 0..WEIGHTS.len()).prop_map(|(i, w)| QOp::Reweight(i, WEIGHTS[w])),
        1 => Just(QOp::Yield),
        1 => prop_oneof![Just(3_000_000u64), Just(700_000u64), 100_000u64..20_000_000]
            .prop_map(QOp::Slice),
    ]
}

/// Everything the arena tree answers equals the reference's answer.
fn same_as_reference(cfs: &CfsRq, ents: &[SchedEntity]) -> Result<(), String> {
    let (t, old) = (&cfs.timeline, cfs.timeline.reference());
    t.validate()?;
    if !t.iter().eq(old.iter().copied())
        || t.first() != old.first().copied()
        || t.len() != old.len()
    {
        return Err(format!(
            "order: {:?} vs {:?}",
            t.iter().collect::<Vec<_>>(),
            old.iter().collect::<Vec<_>>()
        ));
    }
    if t.min_slice() != old.min_slice() {
        return Err(format!(
            "min_slice {:?} vs {:?}",
            t.min_slice(),
            old.min_slice()
        ));
    }
    for ((d, id), v, s) in t.entries() {
        let se = &ents[id.idx()];
        if (se.deadline, se.vruntime, se.slice) != (d, v, s) {
            return Err(format!("entity {id} stored stale: ({d}, {v}, {s})"));
        }
    }
    for protect in [false, true] {
        let (fast, slow) = (
            pick_eevdf(cfs, ents, protect),
            reference_pick_eevdf(cfs, ents, protect),
        );
        if fast != slow {
            return Err(format!("pick (protect {protect}): {fast:?} vs {slow:?}"));
        }
    }
    if recompute_sums(cfs, ents) != (cfs.sum_w_vruntime, cfs.sum_weight) {
        return Err("sums".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Random wake / sleep / tick / schedule / reweight / yield / slice
    /// sequences on one queue: after every step the arena tree agrees
    /// with the `BTreeSet` timeline it replaced (order, first, shortest
    /// slice), holds each entity's real vruntime and slice, and the pick
    /// (heap search) is the old walk's pick, with and without protection.
    #[test]
    fn pick_and_timeline_match_the_btreeset_reference(
        ops in proptest::collection::vec(qop(), 1..250),
        delay in any::<bool>(),
        weights in proptest::collection::vec(0..WEIGHTS.len(), NQ),
    ) {
        let p = EevdfParams { delay_dequeue: delay, ..P };
        let mut ents: Vec<SchedEntity> =
            weights.iter().map(|&w| ent(WEIGHTS[w], 0, 0)).collect();
        let mut cfs = CfsRq::default();
        let mut now: Nanos = 1_000_000;
        for o in ops {
            match o {
                QOp::Wake(i, k) => {
                    let id = EntityId(i as u32);
                    if ents[i].sched_delayed {
                        requeue_delayed_entity(&mut cfs, &mut ents, id, now, &p);
                    } else if !ents[i].on_rq {
                        let kind = [EnqueueKind::Wakeup, EnqueueKind::Initial, EnqueueKind::Migrate]
                            [k as usize];
                        enqueue_entity(&mut cfs, &mut ents, id, kind, now, &p);
                    }
                }
                QOp::Sleep(i) => {
                    let id = EntityId(i as u32);
                    if ents[i].on_rq && !ents[i].sched_delayed {
                        let (_, d) = dequeue_entity(&mut cfs, &mut ents, id, true, now, &p);
                        if d == Dequeued::Gone && cfs.curr == Some(id) {
                            put_prev_entity(&mut cfs, &mut ents, now, &p);
                        }
                    }
                }
                QOp::Tick(dt) => {
                    now += dt;
                    update_curr(&mut cfs, &mut ents, now, &p);
                }
                QOp::Schedule(protect) => {
                    let picked = pick_eevdf(&cfs, &ents, protect);
                    prop_assert_eq!(picked, reference_pick_eevdf(&cfs, &ents, protect));
                    put_prev_entity(&mut cfs, &mut ents, now, &p);
                    if let Some(n) = picked {
                        if ents[n.idx()].sched_delayed {
                            // pick_next_entity finishes a delayed dequeue.
                            dequeue_entity(&mut cfs, &mut ents, n, false, now, &p);
                        } else {
                            set_next_entity(&mut cfs, &mut ents, n, now, &p);
                        }
                    }
                }
                QOp::Reweight(i, w) => {
                    reweight_entity(&mut cfs, &mut ents, EntityId(i as u32), w, now, &p);
                }
                QOp::Yield => yield_entity(&mut cfs, &mut ents, now, &p),
                QOp::Slice(s) => {
                    if let Some(c) = cfs.curr.filter(|c| ents[c.idx()].on_rq) {
                        update_curr(&mut cfs, &mut ents, now, &p);
                        set_curr_slice(&cfs, &mut ents, c, s, s != P.base_slice_ns, &p);
                    }
                }
            }
            if let Err(e) = same_as_reference(&cfs, &ents) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}
