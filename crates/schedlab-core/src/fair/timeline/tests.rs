//! The arena tree against the `BTreeSet` timeline it replaced
//! (`reference`) and against walks of a plain ordered map.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Insert(i64, u32, i64, Nanos),
    Remove(usize),
    /// The leftmost entry with vruntime ≤ the bound.
    Pick(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        // Few keys and ids so duplicates and ties happen; vruntimes from
        // a small range so the eligibility bound splits the queue; slices
        // from a small set (the usual case) and from a wide range.
        3 => (
            -20i64..20,
            0u32..30,
            -50i64..50,
            prop_oneof![Just(3_000_000u64), Just(700_000u64), 100_000u64..10_000_000]
        )
            .prop_map(|(k, id, v, s)| Op::Insert(k, id, v, s)),
        2 => (0usize..64).prop_map(Op::Remove),
        2 => (-60i64..60).prop_map(Op::Pick),
    ]
}

/// The slow model: key -> (vruntime, slice), walked.
type Walk = BTreeMap<TimelineKey, (i64, Nanos)>;

proptest! {
    /// Random insert / remove / pick sequences on the arena tree, on the
    /// `BTreeSet` timeline it replaced, and on a plain ordered map: every
    /// answer the same (insert's and remove's result, order, first,
    /// length, shortest slice, the leftmost entry passing a vruntime
    /// bound), and the tree sound after every step.
    #[test]
    fn arena_tree_matches_the_btreeset_and_the_walk(ops in proptest::collection::vec(op(), 1..300)) {
        let mut t = Timeline::default();
        let mut old = reference::Timeline::default();
        let mut walk = Walk::new();
        for o in ops {
            match o {
                Op::Insert(k, id, v, s) => {
                    let key = (k, EntityId(id));
                    let fresh = !walk.contains_key(&key);
                    if fresh {
                        walk.insert(key, (v, s));
                    }
                    prop_assert_eq!(t.insert(key, v, s), fresh);
                    prop_assert_eq!(old.insert(key, s), fresh);
                }
                Op::Remove(i) => {
                    // An entry that exists (by position) or one that
                    // does not.
                    let key = walk.keys().nth(i).copied().unwrap_or((-99, EntityId(0)));
                    let was = walk.remove(&key);
                    prop_assert_eq!(t.remove(&key), was.is_some());
                    prop_assert_eq!(old.remove(&key, was.map_or(1, |(_, s)| s)), was.is_some());
                }
                Op::Pick(bound) => {
                    let want = walk.iter().find(|(_, &(v, _))| v <= bound).map(|(k, _)| k.1);
                    prop_assert_eq!(t.first_eligible(|v| v <= bound), want);
                }
            }
            prop_assert_eq!(t.validate(), Ok(()));
            prop_assert_eq!(t.len(), walk.len());
            prop_assert_eq!(t.len(), old.len());
            prop_assert_eq!(t.is_empty(), old.is_empty());
            prop_assert_eq!(t.first(), old.first().copied());
            prop_assert_eq!(t.min_slice(), old.min_slice());
            prop_assert_eq!(t.min_slice(), walk.values().map(|&(_, s)| s).min());
            prop_assert!(t.iter().eq(old.iter().copied()));
            prop_assert!(t.entries().eq(walk.iter().map(|(&k, &(v, s))| (k, v, s))));
        }
    }
}

/// A run becomes a tree at its `RUN_MAX + 1`th entry and a tree a run
/// again when a removal leaves `RUN_AGAIN`; order, first, minima and
/// the pick are the same throughout.
#[test]
fn run_and_tree_switch_at_their_sizes() {
    let n = RUN_MAX as i64;
    let id = |k: i64| EntityId((k + 10) as u32);
    let mut t = Timeline::default();
    // key k: vruntime n - k (later keys have smaller vruntimes), slice
    // 100 + k.
    for k in (0..n).rev() {
        assert!(t.insert((k, id(k)), n - k, 100 + k as u64));
        assert!(!t.tree);
        assert_eq!(t.validate(), Ok(()));
    }
    assert_eq!(t.first(), Some((0, id(0))));
    assert_eq!(t.min_slice(), Some(100));
    assert_eq!(t.first_eligible(|v| v <= 5), Some(id(n - 5)));
    assert!(t.insert((-1, id(-1)), 2 * n, 1_000));
    assert!(t.tree);
    assert_eq!(t.validate(), Ok(()));
    assert_eq!(t.first(), Some((-1, id(-1))));
    assert_eq!(t.first_eligible(|v| v <= 5), Some(id(n - 5)));
    let mut k = -1;
    while t.len() > RUN_AGAIN {
        assert!(t.tree);
        assert!(t.remove(&(k, id(k))));
        assert_eq!(t.validate(), Ok(()));
        k += 1;
    }
    assert!(!t.tree);
    let keys: Vec<i64> = t.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, (k..n).collect::<Vec<_>>());
    assert_eq!(t.min_slice(), Some(100 + k as u64));
    assert_eq!(t.first_eligible(|v| v <= 5), Some(id(n - 5)));
    assert!(t
        .entries()
        .eq((k..n).map(|k| ((k, id(k)), n - k, 100 + k as u64))));
}

#[test]
fn min_slice_follows_removal_of_the_shortest() {
    let mut t = Timeline::default();
    assert_eq!(t.min_slice(), None);
    assert!(t.insert((5, EntityId(1)), 0, 3_000_000));
    assert!(t.insert((2, EntityId(2)), 0, 1_000_000));
    assert!(t.insert((9, EntityId(3)), 0, 1_000_000));
    assert!(!t.insert((9, EntityId(3)), 0, 1));
    assert_eq!(t.min_slice(), Some(1_000_000));
    assert!(t.remove(&(2, EntityId(2))));
    assert_eq!(t.min_slice(), Some(1_000_000));
    assert!(t.remove(&(9, EntityId(3))));
    assert_eq!(t.min_slice(), Some(3_000_000));
    assert!(!t.remove(&(9, EntityId(3))));
    assert!(t.remove(&(5, EntityId(1))));
    assert_eq!(t.min_slice(), None);
    assert!(t.is_empty());
    assert_eq!(t.validate(), Ok(()));
}

/// The packed key orders as the (key, id) pair, negative keys and the
/// extremes included, and unpacks to it.
#[test]
fn packed_keys_keep_the_order() {
    let keys: Vec<TimelineKey> = [
        i64::MIN,
        i64::MIN + 1,
        -1 << 40,
        -1,
        0,
        1,
        1 << 40,
        i64::MAX,
    ]
    .into_iter()
    .flat_map(|k| [0u32, 1, u32::MAX - 1].map(|id| (k, EntityId(id))))
    .collect();
    for a in &keys {
        assert_eq!(unpack(pack(*a)), *a);
        for b in &keys {
            assert_eq!(pack(*a).cmp(&pack(*b)), a.cmp(b), "{a:?} vs {b:?}");
        }
    }
}

/// Ties on the key go by entity id, as in the `BTreeSet`.
#[test]
fn equal_keys_order_by_id() {
    let mut t = Timeline::default();
    for id in [7u32, 3, 5, 1] {
        assert!(t.insert((10, EntityId(id)), 0, 1));
    }
    assert!(t.insert((9, EntityId(9)), 0, 1));
    let order: Vec<u32> = t.iter().map(|(_, id)| id.0).collect();
    assert_eq!(order, vec![9, 1, 3, 5, 7]);
    assert_eq!(t.first(), Some((9, EntityId(9))));
}

/// The heap search takes the leftmost entry that passes, not the one of
/// least vruntime, and descends into a left subtree only when its
/// minimum passes; the same as a run and as a tree.
#[test]
fn first_eligible_is_the_leftmost_that_passes() {
    first_eligible_cases(&[]);
    let extra: Vec<i64> = (100..110).collect();
    first_eligible_cases(&extra);
}

fn first_eligible_cases(later: &[i64]) {
    let mut t = Timeline::default();
    // key (deadline) -> vruntime: the earliest deadlines are ineligible.
    for (d, v) in [
        (1, 50),
        (2, 40),
        (3, 5),
        (4, -10),
        (5, 30),
        (6, -20),
        (7, 60),
    ] {
        assert!(t.insert((d, EntityId(d as u32)), v, 1));
    }
    // Later deadlines, never eligible below: a run, or with them a tree.
    for &d in later {
        assert!(t.insert((d, EntityId(d as u32)), 1000, 1));
    }
    assert_eq!(t.tree, !later.is_empty());
    assert_eq!(t.first_eligible(|v| v <= 10), Some(EntityId(3)));
    assert_eq!(t.first_eligible(|v| v <= -15), Some(EntityId(6)));
    assert_eq!(t.first_eligible(|v| v <= 45), Some(EntityId(2)));
    assert_eq!(t.first_eligible(|v| v <= -30), None);
    assert!(t.remove(&(3, EntityId(3))));
    assert_eq!(t.first_eligible(|v| v <= 10), Some(EntityId(4)));
}

/// Long ascending, descending and alternating runs (every rotation
/// case), then removal from the middle, the ends and the root; sound
/// after every step, and slots are reused instead of growing the arena.
#[test]
fn stays_balanced_and_reuses_slots() {
    let mut t = Timeline::default();
    let keys: Vec<i64> = (0..300)
        .chain((1000..1300).rev())
        .chain((0..300).map(|i| if i % 2 == 0 { 500 + i } else { 900 - i }))
        .collect();
    for (i, &k) in keys.iter().enumerate() {
        assert!(t.insert((k, EntityId(i as u32)), -k, 1 + (k as u64 % 7)));
        assert_eq!(t.validate(), Ok(()), "after inserting {k}");
    }
    // AVL: height ≤ 1.44 log2(n + 2).
    let h = t.nodes[t.root as usize].height as f64;
    assert!(h <= 1.4405 * ((t.len() + 2) as f64).log2(), "height {h}");
    let slots = t.nodes.len();
    let order: Vec<TimelineKey> = t.iter().collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]));
    // Remove every third, then re-insert them: no new slot.
    let gone: Vec<TimelineKey> = order.iter().copied().step_by(3).collect();
    for k in &gone {
        assert!(t.remove(k));
        assert_eq!(t.validate(), Ok(()), "after removing {k:?}");
    }
    for k in &gone {
        assert!(t.insert(*k, -k.0, 2));
    }
    assert_eq!(t.nodes.len(), slots);
    assert_eq!(t.validate(), Ok(()));
    // Then empty it, root first while a tree, then the run.
    while let Some(root) = (t.root != NIL).then(|| unpack(t.nodes[t.root as usize].key)) {
        assert!(t.tree);
        assert!(t.remove(&root));
        assert_eq!(t.validate(), Ok(()));
    }
    assert!(!t.tree);
    assert_eq!(t.len(), RUN_AGAIN);
    while let Some(k) = t.first() {
        assert!(t.remove(&k));
        assert_eq!(t.validate(), Ok(()));
    }
    assert!(t.is_empty());
    assert_eq!(t.first(), None);
    assert_eq!(t.first_eligible(|_| true), None);
}
