//! The timeline as it was before the arena tree (fair/timeline): a
//! `BTreeSet` of (key, id) and, beside it, a count of the waiting
//! entities per distinct slice, sorted by slice, whose first entry is the
//! shortest slice. Test builds only: it is the slow reference model the
//! arena tree is checked against (the tree shadows every insert and
//! removal into one of these, and the proptests of fair/timeline and
//! fair/eevdf compare every answer).
//!
//! The caller names the entity's slice at insertion and at removal, and it
//! must be the same (the arena tree passes the slice it stored).

use crate::time::Nanos;
use std::collections::btree_set::Iter;
use std::collections::BTreeSet;

use super::TimelineKey;

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
