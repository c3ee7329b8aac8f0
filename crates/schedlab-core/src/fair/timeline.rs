//! The timeline of one cfs_rq (the kernel's `tasks_timeline` rb-tree):
//! the entities waiting to run, ordered by (key, id), together with the
//! shortest slice among them.
//!
//! Kernel reference: fair.c `__enqueue_entity` / `__dequeue_entity` and the
//! augmented callbacks of the rb-tree (`min_vruntime_cb`,
//! `min_vruntime_update`): every node caches the minimum vruntime and the
//! minimum slice of its subtree, so `cfs_rq_min_slice` reads the root in
//! O(1) and insertion, removal and rotation keep the caches in O(log n).
//!
//! Representation: the ordered set is a `BTreeSet` of (key, id) (the key
//! is the virtual deadline under EEVDF, the vruntime under CFS, see
//! fair/cfs); the slice minimum is kept beside it as a count of the
//! waiting entities per distinct slice value, sorted by slice. The minimum
//! is then the first entry, O(1), and an insertion or removal updates one
//! count (binary search, O(log d) for d distinct slices on the queue; a
//! new or vanishing value also shifts the d-entry vector). With the base
//! slice for everyone (every bench case) d is 1. The result is the same
//! as the kernel's augmented root and as a walk over the queue (the
//! reference of the tests). The caller names the entity's slice at
//! insertion and at removal, and it must be the same: the model changes a
//! slice only on curr, which is never in the timeline (fair/eevdf), and
//! `--check` compares the kept minimum with the entities' slices
//! (check.rs). Keeping the slice out of the tree keeps its nodes as small
//! as a plain ordered set's (a map with the slice as value made every
//! enqueue + dequeue ~15 ns slower in `eevdf/enqueue_dequeue`).
//!
//! The minimum vruntime the kernel also caches serves its O(log n) heap
//! search in `pick_eevdf`; the model's pick walks in deadline order
//! instead (fair/eevdf's deviations), so it is not kept here.

use crate::ids::EntityId;
use crate::time::Nanos;
use std::collections::btree_set::Iter;
use std::collections::BTreeSet;

/// One entry of the timeline: (key, entity).
pub type TimelineKey = (i64, EntityId);

/// The entities waiting on one cfs_rq, in (key, id) order, with the
/// shortest slice among them (`cfs_rq_min_slice` without curr).
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// The waiting entities by (key, id).
    tree: BTreeSet<TimelineKey>,
    /// (slice, number of entities in `tree` with it), increasing slice,
    /// no zero counts.
    slices: Vec<(Nanos, u32)>,
}

impl Timeline {
    /// Inserts `key` for an entity of slice `slice`; false (and no change)
    /// if it was already there.
    pub fn insert(&mut self, key: TimelineKey, slice: Nanos) -> bool {
        if !self.tree.insert(key) {
            return false;
        }
        match self.slices.binary_search_by_key(&slice, |&(s, _)| s) {
            Ok(i) => self.slices[i].1 += 1,
            Err(i) => self.slices.insert(i, (slice, 1)),
        }
        true
    }

    /// Removes `key`, inserted with slice `slice`; false if it was not
    /// there.
    pub fn remove(&mut self, key: &TimelineKey, slice: Nanos) -> bool {
        if !self.tree.remove(key) {
            return false;
        }
        let Ok(i) = self.slices.binary_search_by_key(&slice, |&(s, _)| s) else {
            panic!(
                "timeline: entity {} removed with slice {slice}, which no entry has",
                key.1
            );
        };
        self.slices[i].1 -= 1;
        if self.slices[i].1 == 0 {
            self.slices.remove(i);
        }
        true
    }

    /// The shortest slice of the waiting entities (None when empty).
    #[inline]
    pub fn min_slice(&self) -> Option<Nanos> {
        self.slices.first().map(|&(s, _)| s)
    }

    /// The leftmost entry (earliest key).
    #[inline]
    pub fn first(&self) -> Option<&TimelineKey> {
        self.tree.first()
    }

    /// Entries in (key, id) order.
    #[inline]
    pub fn iter(&self) -> Iter<'_, TimelineKey> {
        self.tree.iter()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.tree.len()
    }

    /// True when no entity waits.
    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }
}

impl<'a> IntoIterator for &'a Timeline {
    type Item = &'a TimelineKey;
    type IntoIter = Iter<'a, TimelineKey>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Clone, Debug)]
    enum Op {
        Insert(i64, u32, Nanos),
        Remove(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            // Few keys and ids so duplicates and ties happen; slices from
            // a small set (the usual case) and from a wide range.
            (
                0i64..40,
                0u32..30,
                prop_oneof![Just(3_000_000u64), Just(700_000u64), 100_000u64..10_000_000]
            )
                .prop_map(|(k, id, s)| Op::Insert(k, id, s)),
            (0usize..64).prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// Random insert/remove sequences against a plain ordered map of
        /// the same operations (key -> slice): the kept minimum equals the
        /// walk over the map's slices, and order, length and membership
        /// match.
        #[test]
        fn min_slice_matches_the_walk(ops in proptest::collection::vec(op(), 1..200)) {
            let mut t = Timeline::default();
            let mut reference: BTreeMap<TimelineKey, Nanos> = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Insert(k, id, s) => {
                        let key = (k, EntityId(id));
                        let fresh = !reference.contains_key(&key);
                        if fresh {
                            reference.insert(key, s);
                        }
                        prop_assert_eq!(t.insert(key, s), fresh);
                    }
                    Op::Remove(i) => {
                        // An entry that exists (by position) or one that
                        // does not.
                        let key = reference.keys().nth(i).copied().unwrap_or((-1, EntityId(0)));
                        let slice = reference.get(&key).copied();
                        let was = reference.remove(&key).is_some();
                        prop_assert_eq!(t.remove(&key, slice.unwrap_or(1)), was);
                    }
                }
                prop_assert_eq!(t.min_slice(), reference.values().copied().min());
                prop_assert_eq!(t.len(), reference.len());
                prop_assert_eq!(t.first(), reference.keys().next());
                prop_assert!(t.iter().eq(reference.keys()));
                prop_assert!(t.slices.windows(2).all(|w| w[0].0 < w[1].0));
                prop_assert!(t.slices.iter().all(|&(_, n)| n > 0));
            }
        }
    }

    #[test]
    fn min_slice_follows_removal_of_the_shortest() {
        let mut t = Timeline::default();
        assert_eq!(t.min_slice(), None);
        assert!(t.insert((5, EntityId(1)), 3_000_000));
        assert!(t.insert((2, EntityId(2)), 1_000_000));
        assert!(t.insert((9, EntityId(3)), 1_000_000));
        assert!(!t.insert((9, EntityId(3)), 1));
        assert_eq!(t.min_slice(), Some(1_000_000));
        assert!(t.remove(&(2, EntityId(2)), 1_000_000));
        assert_eq!(t.min_slice(), Some(1_000_000));
        assert!(t.remove(&(9, EntityId(3)), 1_000_000));
        assert_eq!(t.min_slice(), Some(3_000_000));
        assert!(!t.remove(&(9, EntityId(3)), 1_000_000));
        assert!(t.remove(&(5, EntityId(1)), 3_000_000));
        assert_eq!(t.min_slice(), None);
        assert!(t.is_empty());
    }
}
