//! Hand-worked CFS cases (one CPU, so tunable scaling factor 1: latency
//! 6 ms, min_granularity 0.75 ms, wakeup_granularity 1 ms, nr_latency 8).

use super::*;
use crate::fair::weight::calc_delta_fair;
use crate::ids::CfsRqId;

const MS: Nanos = 1_000_000;

fn params() -> CfsParams {
    CfsParams {
        active: true,
        latency_ns: 6 * MS,
        min_granularity_ns: 750_000,
        wakeup_granularity_ns: MS,
        nr_latency: 8,
        gentle_fair_sleepers: true,
        start_debit: true,
        next_buddy: false,
        last_buddy: true,
        alt_period: false,
        base_slice: false,
    }
}

fn ent(w: u64, v: i64) -> SchedEntity {
    SchedEntity {
        weight: w,
        vruntime: v,
        cfs_rq: CfsRqId(0),
        ..Default::default()
    }
}

/// A queue holding `ents` (all enqueued as migrations, so unplaced), the
/// first one running.
fn queue(ents: &mut [SchedEntity], now: Nanos) -> CfsRq {
    let mut q = CfsRq::default();
    let p = params();
    for i in 0..ents.len() {
        enqueue_entity(
            &mut q,
            ents,
            EntityId(i as u32),
            EnqueueKind::Migrate,
            now,
            0,
            &p,
        );
    }
    set_next_entity(&mut q, ents, EntityId(0), now);
    q
}

#[test]
fn period_and_ideal_runtime() {
    let p = params();
    assert_eq!(sched_period(2, &p), 6 * MS);
    assert_eq!(sched_period(8, &p), 6 * MS);
    assert_eq!(sched_period(9, &p), 9 * 750_000); // past nr_latency
    let mut e = vec![ent(1024, 0), ent(1024, 0)];
    let q = queue(&mut e, 0);
    // Two nice-0 entities share the 6 ms period: 3 ms each.
    assert_eq!(sched_slice(&[q.clone()], &e, EntityId(0), 2, &p), 3 * MS);
    // A nice-0 and a nice-5 (weight 335): 6 ms × 1024 / 1359.
    let mut e2 = vec![ent(1024, 0), ent(335, 0)];
    let q2 = queue(&mut e2, 0);
    assert_eq!(
        sched_slice(&[q2.clone()], &e2, EntityId(0), 2, &p),
        4_520_971
    ); // 4 520 971.3
    assert_eq!(sched_slice(&[q2], &e2, EntityId(1), 2, &p), 1_479_028);
}

#[test]
fn ideal_runtime_is_hierarchical() {
    // Root queue 0: task A (entity 0) and group entity G (entity 1) of
    // weight 1024 owning queue 1 with tasks B, C (entities 2, 3).
    let p = params();
    let mut e = vec![ent(1024, 0), ent(1024, 0), ent(1024, 0), ent(1024, 0)];
    e[1].my_q = Some(CfsRqId(1));
    for i in [2, 3] {
        e[i].cfs_rq = CfsRqId(1);
        e[i].parent = Some(EntityId(1));
        e[i].depth = 1;
    }
    let mut root = CfsRq::default();
    let mut child = CfsRq::default();
    for i in [0, 1] {
        enqueue_entity(
            &mut root,
            &mut e,
            EntityId(i),
            EnqueueKind::Migrate,
            0,
            0,
            &p,
        );
    }
    for i in [2, 3] {
        enqueue_entity(
            &mut child,
            &mut e,
            EntityId(i),
            EnqueueKind::Migrate,
            0,
            0,
            &p,
        );
    }
    let qs = [root, child];
    // period(2 on B's queue) = 6 ms; × 1/2 in the group; × 1/2 at the root.
    assert_eq!(sched_slice(&qs, &e, EntityId(2), 3, &p), 1_500_000);
    assert_eq!(sched_slice(&qs, &e, EntityId(0), 3, &p), 3 * MS);
    // ALT_PERIOD counts the CPU's 3 tasks (still ≤ nr_latency: 6 ms);
    // BASE_SLICE keeps a slice at least min_granularity.
    let alt = CfsParams {
        alt_period: true,
        base_slice: true,
        min_granularity_ns: 2 * MS,
        ..p
    };
    assert_eq!(sched_slice(&qs, &e, EntityId(2), 3, &alt), 2 * MS);
}

/// Runs two nice-0 hogs on one CPU with a 1 ms tick and returns the times
/// at which the CPU switched.
fn hog_switches(until: Nanos) -> (Vec<Nanos>, Vec<Nanos>) {
    let p = params();
    let mut e = vec![ent(1024, 0), ent(1024, 0)];
    let mut q = queue(&mut e, 0);
    let mut switches = vec![];
    let mut t = 0;
    while t < until {
        t += MS;
        update_curr(&mut q, &mut e, t);
        let curr = q.curr.unwrap();
        let ideal = sched_slice(&[q.clone()], &e, curr, 2, &p);
        if check_preempt_tick(&q, &e, ideal, &p) {
            put_prev_entity(&mut q, &mut e, t);
            let next = pick_next_entity(&q, &e, &p).unwrap();
            set_next_entity(&mut q, &mut e, next, t);
            switches.push(t);
        }
    }
    (
        switches,
        e.iter().map(|s| s.sum_exec_runtime).collect::<Vec<_>>(),
    )
}

#[test]
fn two_hogs_switch_at_the_first_tick_past_their_share() {
    // Share 3 ms; the tick sees 3 ms (not more) at t = 3 ms, so the switch
    // comes at 4 ms, then every 4 ms; each hog gets half the CPU.
    let (sw, run) = hog_switches(24 * MS);
    assert_eq!(sw, vec![4 * MS, 8 * MS, 12 * MS, 16 * MS, 20 * MS, 24 * MS]);
    assert_eq!(run, vec![12 * MS, 12 * MS]);
}

#[test]
fn tick_preempts_on_the_vruntime_lead_only_past_min_granularity() {
    let p = params();
    // curr 10 ms ahead in vruntime of the waiting entity, ideal 3 ms.
    let mut e = vec![ent(1024, 10 * MS as i64), ent(1024, 0)];
    let mut q = queue(&mut e, 0);
    update_curr(&mut q, &mut e, 500_000);
    assert!(!check_preempt_tick(&q, &e, 3 * MS, &p)); // ran 0.5 < 0.75 ms
    update_curr(&mut q, &mut e, 800_000);
    assert!(check_preempt_tick(&q, &e, 3 * MS, &p)); // lead 10.8 ms > 3 ms
}

#[test]
fn waking_task_preempts_only_past_wakeup_granularity() {
    let p = params();
    let e = vec![ent(1024, 10 * MS as i64), ent(1024, 9 * MS as i64)];
    // Lead exactly 1 ms = the granularity: not more, no preemption.
    assert_eq!(wakeup_preempt_entity(&e, EntityId(0), EntityId(1), &p), 0);
    let e = vec![ent(1024, 10 * MS as i64 + 1), ent(1024, 9 * MS as i64)];
    assert_eq!(wakeup_preempt_entity(&e, EntityId(0), EntityId(1), &p), 1);
    // curr behind the wakee: −1.
    let e = vec![ent(1024, 8 * MS as i64), ent(1024, 9 * MS as i64)];
    assert_eq!(wakeup_preempt_entity(&e, EntityId(0), EntityId(1), &p), -1);
    // The granularity is in the wakee's virtual time: a nice-5 wakee
    // (weight 335) needs 1 ms × 1024 / 335 = 3.056 ms of lead.
    let gran = calc_delta_fair(MS, 335) as i64;
    assert_eq!(gran, 3_056_716);
    let e = vec![ent(1024, 3 * MS as i64), ent(335, 0)];
    assert_eq!(wakeup_preempt_entity(&e, EntityId(0), EntityId(1), &p), 0);
    let e = vec![ent(1024, gran + 1), ent(335, 0)];
    assert_eq!(wakeup_preempt_entity(&e, EntityId(0), EntityId(1), &p), 1);
}

#[test]
fn sleeper_is_placed_at_min_vruntime_minus_the_credit() {
    let mut p = params();
    let q = CfsRq {
        min_vruntime: 100 * MS as i64,
        ..Default::default()
    };
    // Long sleeper: GENTLE_FAIR_SLEEPERS gives half of sched_latency.
    let mut e = vec![ent(1024, 50 * MS as i64)];
    place_entity(&q, &mut e, EntityId(0), false, 0, &p);
    assert_eq!(e[0].vruntime, 97 * MS as i64);
    // Without it, the whole 6 ms.
    p.gentle_fair_sleepers = false;
    let mut e = vec![ent(1024, 50 * MS as i64)];
    place_entity(&q, &mut e, EntityId(0), false, 0, &p);
    assert_eq!(e[0].vruntime, 94 * MS as i64);
    // A short sleeper keeps its own vruntime (never moved backwards).
    let mut e = vec![ent(1024, 99 * MS as i64)];
    place_entity(&q, &mut e, EntityId(0), false, 0, &p);
    assert_eq!(e[0].vruntime, 99 * MS as i64);
}

#[test]
fn start_debit_places_a_new_task_one_vslice_late() {
    let mut p = params();
    // One nice-0 task running at min_vruntime 20 ms; the new task would
    // make two: vslice = 6 ms / 2 = 3 ms.
    let mut e = vec![ent(1024, 20 * MS as i64), ent(1024, 0)];
    let mut q = CfsRq::default();
    enqueue_entity(&mut q, &mut e, EntityId(0), EnqueueKind::Migrate, 0, 0, &p);
    set_next_entity(&mut q, &mut e, EntityId(0), 0);
    update_min_vruntime(&mut q, &e);
    assert_eq!(q.min_vruntime, 20 * MS as i64);
    let vs = sched_vslice(&[q.clone()], &e, EntityId(1), 1, &p);
    assert_eq!(vs, 3 * MS as i64);
    let mut q2 = q.clone();
    let mut e2 = e.clone();
    enqueue_entity(&mut q, &mut e, EntityId(1), EnqueueKind::Initial, 0, vs, &p);
    assert_eq!(e[1].vruntime, 23 * MS as i64);
    p.start_debit = false;
    enqueue_entity(
        &mut q2,
        &mut e2,
        EntityId(1),
        EnqueueKind::Initial,
        0,
        vs,
        &p,
    );
    assert_eq!(e2[1].vruntime, 20 * MS as i64);
}

#[test]
fn min_vruntime_never_goes_back() {
    let mut e = vec![ent(1024, 10 * MS as i64), ent(1024, 12 * MS as i64)];
    let mut q = queue(&mut e, 0);
    update_min_vruntime(&mut q, &e);
    assert_eq!(q.min_vruntime, 10 * MS as i64);
    // A far-behind entity joining (unplaced) does not pull it back.
    e.push(ent(1024, 0));
    enqueue_entity(
        &mut q,
        &mut e,
        EntityId(2),
        EnqueueKind::Migrate,
        0,
        0,
        &params(),
    );
    update_min_vruntime(&mut q, &e);
    assert_eq!(q.min_vruntime, 10 * MS as i64);
}

#[test]
fn buddies_are_preferred_only_when_not_unfair() {
    let p = params();
    // Queue (tree): A at 0 (leftmost), B at 0.5 ms, C at 2 ms; nothing running.
    let mk = || {
        let mut e = vec![ent(1024, 0), ent(1024, 500_000), ent(1024, 2 * MS as i64)];
        let mut q = CfsRq::default();
        for i in 0..3 {
            enqueue_entity(&mut q, &mut e, EntityId(i), EnqueueKind::Migrate, 0, 0, &p);
        }
        (q, e)
    };
    let (mut q, e) = mk();
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(0)));
    // next buddy B: 0.5 ms behind the leftmost, within the 1 ms granularity.
    q.next = Some(EntityId(1));
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(1)));
    // next buddy C: 2 ms behind, unfair: the leftmost wins.
    q.next = Some(EntityId(2));
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(0)));
    // last buddy B, no next: B.
    q.next = None;
    q.last = Some(EntityId(1));
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(1)));
    // next beats last when both are fair.
    q.next = Some(EntityId(1));
    q.last = Some(EntityId(0));
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(1)));
    // skip buddy on the leftmost: the second (B) if not unfair ...
    let (mut q, e) = mk();
    q.skip = Some(EntityId(0));
    assert_eq!(pick_next_entity(&q, &e, &p), Some(EntityId(1)));
    // ... but not when the second is more than a granularity behind.
    let mut e2 = e.clone();
    let mut q2 = CfsRq::default();
    e2[1].vruntime = 3 * MS as i64;
    for i in 0..3 {
        e2[i].on_rq = false;
        enqueue_entity(
            &mut q2,
            &mut e2,
            EntityId(i as u32),
            EnqueueKind::Migrate,
            0,
            0,
            &p,
        );
    }
    q2.skip = Some(EntityId(0));
    assert_eq!(pick_next_entity(&q2, &e2, &p), Some(EntityId(0)));
    // Dequeue and set_next clear the buddies that point at the entity.
    let (mut q, mut e) = mk();
    q.next = Some(EntityId(1));
    q.last = Some(EntityId(1));
    dequeue_entity(&mut q, &mut e, EntityId(1), 0);
    assert_eq!((q.next, q.last), (None, None));
    q.skip = Some(EntityId(2));
    set_next_entity(&mut q, &mut e, EntityId(2), 0);
    assert_eq!(q.skip, None);
}
