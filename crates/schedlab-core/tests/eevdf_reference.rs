//! Reference-model test of the EEVDF queue (DSLab's fast-path-against-a-
//! plain-model habit): random sequences of the queue operations the fair
//! class uses (enqueue as wakeup, fork or migration; dequeue for sleep or
//! migration, with and without DELAY_DEQUEUE; set_next / put_prev; running
//! time; reweight; yield; a delayed entity's wakeup) drive one real
//! `cfs_rq`, and after every operation a plain scan over a `Vec` of every
//! entity recomputes what the queue keeps incrementally:
//!
//! * the timeline holds exactly the queued entities other than curr, keyed
//!   by their current deadline;
//! * `load_weight` / `nr_queued` count the queued entities, curr included;
//! * the running sums `Σ w·(v − v0)` and `Σ w` match a recount, and
//!   `avg_vruntime` is `⌊Σ w·v / Σ w⌋` computed directly (exact i128);
//! * `entity_eligible` is `Σ w·v ≥ v_i · Σ w` (lag ≥ 0), exactly;
//! * `pick_eevdf` is the specification read as a scan: a lone entity; curr
//!   inside its protected window; otherwise the eligible entity with the
//!   earliest (deadline, id), curr preferred only when strictly earlier
//!   than the best tree entity; the leftmost when rounding leaves none.

use proptest::prelude::*;
use schedlab_core::fair::eevdf::*;
use schedlab_core::ids::{CfsRqId, EntityId};
use schedlab_core::rq::{CfsRq, SchedEntity};

const N: usize = 6;

fn params(delay_dequeue: bool, run_to_parity: bool) -> EevdfParams {
    params_of(delay_dequeue, run_to_parity, ProtectRule::MinSlice)
}

fn params_of(delay_dequeue: bool, run_to_parity: bool, protect: ProtectRule) -> EevdfParams {
    EevdfParams {
        base_slice_ns: 3_000_000,
        base_slice_normalized_ns: 700_000,
        tick_ns: 4_000_000,
        place_lag: true,
        place_deadline_initial: true,
        run_to_parity,
        preempt_short: true,
        delay_dequeue,
        delay_zero: true,
        curr_resched: CurrResched::Unprotected,
        protect,
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Enqueue entity i (if not queued): 0 wakeup, 1 initial, 2 migrate.
    Enqueue(usize, u8),
    /// Dequeue entity i (if queued): sleep or not.
    Dequeue(usize, bool),
    /// put_prev of curr, then set_next of the pick (what schedule() does).
    Switch,
    /// Time passes by this many µs (curr is charged).
    Run(u64),
    /// Reweight entity i to a nice level's weight.
    Reweight(usize, usize),
    /// Curr yields.
    Yield,
    /// Wakeup of a delayed entity i (requeue_delayed_entity).
    WakeDelayed(usize),
}

const WEIGHTS: [u64; 8] = [15, 110, 335, 820, 1024, 1586, 3121, 88761];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..N, 0u8..3).prop_map(|(i, k)| Op::Enqueue(i, k)),
        3 => (0..N, any::<bool>()).prop_map(|(i, s)| Op::Dequeue(i, s)),
        3 => Just(Op::Switch),
        4 => (1u64..8000).prop_map(Op::Run),
        1 => (0..N, 0..WEIGHTS.len()).prop_map(|(i, w)| Op::Reweight(i, w)),
        1 => Just(Op::Yield),
        1 => (0..N).prop_map(Op::WakeDelayed),
    ]
}

/// The queued entities, by a plain scan of every entity.
fn queued(ents: &[SchedEntity]) -> Vec<usize> {
    (0..ents.len()).filter(|&i| ents[i].on_rq).collect()
}

/// Floor division for i128 (toward −∞).
fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

/// Checks every incrementally kept quantity against a recount.
fn check(cfs: &CfsRq, ents: &[SchedEntity], protect: bool) -> Result<(), TestCaseError> {
    let q = queued(ents);
    let curr = cfs.curr.map(|c| c.idx());
    // Timeline = queued minus curr, keyed by deadline.
    let mut want: Vec<(i64, EntityId)> = q
        .iter()
        .filter(|&&i| Some(i) != curr)
        .map(|&i| (ents[i].deadline, EntityId(i as u32)))
        .collect();
    want.sort();
    let got: Vec<(i64, EntityId)> = cfs.timeline.iter().collect();
    prop_assert_eq!(&got, &want, "timeline");
    prop_assert_eq!(cfs.nr_queued as usize, q.len(), "nr_queued");
    let load: u64 = q.iter().map(|&i| ents[i].weight).sum();
    prop_assert_eq!(cfs.load_weight, load, "load_weight");
    // Running sums over the tree (curr excluded), relative to v0.
    let tree: Vec<usize> = want.iter().map(|&(_, id)| id.idx()).collect();
    let sw: u64 = tree.iter().map(|&i| ents[i].weight).sum();
    let swv: i128 = tree
        .iter()
        .map(|&i| (ents[i].vruntime - cfs.zero_vruntime) as i128 * ents[i].weight as i128)
        .sum();
    prop_assert_eq!(cfs.sum_weight, sw, "sum_weight");
    prop_assert_eq!(cfs.sum_w_vruntime, swv, "sum_w_vruntime");
    // V directly, curr included while queued: exact, absolute vruntimes.
    let w_all: i128 = q.iter().map(|&i| ents[i].weight as i128).sum();
    let wv_all: i128 = q
        .iter()
        .map(|&i| ents[i].vruntime as i128 * ents[i].weight as i128)
        .sum();
    if w_all > 0 {
        let v = floor_div(wv_all, w_all) as i64;
        prop_assert_eq!(avg_vruntime(cfs, ents), v, "avg_vruntime");
    }
    let eligible = |i: usize| wv_all >= ents[i].vruntime as i128 * w_all;
    for &i in &q {
        prop_assert_eq!(
            entity_eligible(cfs, ents, EntityId(i as u32)),
            eligible(i),
            "eligibility of {}",
            i
        );
    }
    // The pick, as a scan.
    let want_pick = if q.is_empty() {
        None
    } else if q.len() == 1 {
        Some(q[0])
    } else {
        let curr_q = curr.filter(|&c| ents[c].on_rq);
        let curr_el = curr_q.filter(|&c| eligible(c));
        match curr_el {
            Some(c) if protect && ents[c].vruntime < ents[c].vprot => Some(c),
            _ => {
                let best = tree
                    .iter()
                    .copied()
                    .filter(|&i| eligible(i))
                    .min_by_key(|&i| (ents[i].deadline, i));
                match (curr_el, best) {
                    (Some(c), Some(b)) if ents[c].deadline < ents[b].deadline => Some(c),
                    (Some(c), None) => Some(c),
                    (_, Some(b)) => Some(b),
                    (None, None) => curr_q.or(tree.first().copied()),
                }
            }
        }
    };
    let got_pick = pick_eevdf(cfs, ents, protect).map(|e| e.idx());
    prop_assert_eq!(got_pick, want_pick, "pick (protect {})", protect);
    Ok(())
}

fn run_ops(
    ops: &[Op],
    delay_dequeue: bool,
    run_to_parity: bool,
    protect: ProtectRule,
) -> Result<(), TestCaseError> {
    let p = params_of(delay_dequeue, run_to_parity, protect);
    let mut ents: Vec<SchedEntity> = (0..N)
        .map(|i| SchedEntity {
            weight: WEIGHTS[(i * 3) % WEIGHTS.len()],
            slice: p.base_slice_ns,
            cfs_rq: CfsRqId(0),
            ..Default::default()
        })
        .collect();
    let mut cfs = CfsRq::default();
    let mut now: u64 = 1_000_000;
    for op in ops {
        match *op {
            Op::Enqueue(i, k) => {
                if !ents[i].on_rq {
                    let kind = match k {
                        0 => EnqueueKind::Wakeup,
                        1 => EnqueueKind::Initial,
                        _ => EnqueueKind::Migrate,
                    };
                    enqueue_entity(&mut cfs, &mut ents, EntityId(i as u32), kind, now, &p);
                }
            }
            Op::Dequeue(i, sleep) => {
                if ents[i].on_rq && !ents[i].sched_delayed {
                    let id = EntityId(i as u32);
                    let (_, d) = dequeue_entity(&mut cfs, &mut ents, id, sleep, now, &p);
                    if d == Dequeued::Gone && cfs.curr == Some(id) {
                        // The core puts a dequeued curr away at once.
                        put_prev_entity(&mut cfs, &mut ents, now, &p);
                    }
                }
            }
            Op::Switch => {
                put_prev_entity(&mut cfs, &mut ents, now, &p);
                if let Some(next) = pick_eevdf(&cfs, &ents, false) {
                    if ents[next.idx()].sched_delayed {
                        // A picked delayed entity finishes its dequeue.
                        dequeue_entity(&mut cfs, &mut ents, next, true, now, &p);
                    } else {
                        set_next_entity(&mut cfs, &mut ents, next, now, &p);
                    }
                }
            }
            Op::Run(us) => {
                now += us * 1000;
                update_curr(&mut cfs, &mut ents, now, &p);
            }
            Op::Reweight(i, w) => {
                reweight_entity(&mut cfs, &mut ents, EntityId(i as u32), WEIGHTS[w], now, &p);
            }
            Op::Yield => {
                if cfs.curr.is_some() {
                    yield_entity(&mut cfs, &mut ents, now, &p);
                }
            }
            Op::WakeDelayed(i) => {
                if ents[i].on_rq && ents[i].sched_delayed {
                    requeue_delayed_entity(&mut cfs, &mut ents, EntityId(i as u32), now, &p);
                }
            }
        }
        check(&cfs, &ents, false)?;
        check(&cfs, &ents, true)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn eevdf_queue_matches_a_plain_scan(
        ops in proptest::collection::vec(op(), 1..120),
        delay_dequeue in any::<bool>(),
        run_to_parity in any::<bool>(),
        until_deadline in any::<bool>(),
    ) {
        let rule = if until_deadline { ProtectRule::UntilDeadline } else { ProtectRule::MinSlice };
        run_ops(&ops, delay_dequeue, run_to_parity, rule)?;
    }
}

/// The checker itself must be able to fail: a corrupted running sum and a
/// timeline key left stale are both caught.
#[test]
fn the_reference_check_catches_corruption() {
    let p = params(false, true);
    let mut ents: Vec<SchedEntity> = (0..3)
        .map(|i| SchedEntity {
            weight: 1024 * (i + 1),
            slice: p.base_slice_ns,
            ..Default::default()
        })
        .collect();
    let mut cfs = CfsRq::default();
    for i in 0..3 {
        enqueue_entity(&mut cfs, &mut ents, EntityId(i), EnqueueKind::Wakeup, 0, &p);
    }
    assert!(check(&cfs, &ents, false).is_ok());
    let mut bad = cfs.clone();
    bad.sum_w_vruntime += 1;
    assert!(check(&bad, &ents, false).is_err());
    let mut stale = ents.clone();
    stale[1].deadline += 5;
    assert!(check(&cfs, &stale, false).is_err());
}
