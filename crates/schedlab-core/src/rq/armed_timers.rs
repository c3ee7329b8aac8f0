//! A CPU's armed task hrtimers, as the idle governor asks about them: the
//! set of `(hard expiry, task)` with its earliest member.
//!
//! The kernel keeps hrtimers in a per-CPU timerqueue (an rbtree with its
//! leftmost node cached); the simulator only needs insert, remove and the
//! earliest, on a handful of entries per CPU (one per sleeping task whose
//! timer is armed there: ~12 on the periodic cases). A `BTreeSet` did it
//! with a node search and rebalance on each operation (~100 M
//! instructions of periodic-8-dense's 2.6 G, 7.7 % of periodic-4096's
//! cycles). This is a sorted ring: a periodic timer is usually armed
//! later than every other (pushed at the back) and the earliest fires
//! first (popped at the front), both O(1); anything else is a binary
//! search and a shift of the shorter side. Same contents and answers as
//! the set: the reference `BTreeSet` is compared with it in the tests.

use crate::ids::TaskId;
use crate::time::Nanos;
use std::collections::VecDeque;

/// The armed timers of one CPU, in increasing `(expiry, task)` order,
/// without duplicates (a set).
#[derive(Clone, Debug, Default)]
pub struct ArmedTimers {
    q: VecDeque<(Nanos, TaskId)>,
}

impl ArmedTimers {
    /// Adds `k`; returns false (and changes nothing) when it is already
    /// there, as `BTreeSet::insert`.
    #[inline]
    pub fn insert(&mut self, k: (Nanos, TaskId)) -> bool {
        match self.q.back() {
            None => {
                self.q.push_back(k);
                return true;
            }
            Some(&last) if last < k => {
                self.q.push_back(k);
                return true;
            }
            _ => {}
        }
        match self.q.binary_search(&k) {
            Ok(_) => false,
            Err(i) => {
                self.q.insert(i, k);
                true
            }
        }
    }

    /// Removes `k`; returns whether it was there, as `BTreeSet::remove`.
    #[inline]
    pub fn remove(&mut self, k: &(Nanos, TaskId)) -> bool {
        if self.q.front() == Some(k) {
            self.q.pop_front();
            return true;
        }
        match self.q.binary_search(k) {
            Ok(i) => {
                self.q.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The earliest timer.
    #[inline]
    pub fn first(&self) -> Option<&(Nanos, TaskId)> {
        self.q.front()
    }

    /// Number of armed timers.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True when no timer is armed.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// The timers in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = &(Nanos, TaskId)> {
        self.q.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn by_hand() {
        let mut a = ArmedTimers::default();
        assert_eq!(a.first(), None);
        assert!(a.insert((30, TaskId(1))));
        assert!(a.insert((10, TaskId(2))));
        assert!(a.insert((20, TaskId(3))));
        assert!(a.insert((20, TaskId(0))));
        assert!(!a.insert((10, TaskId(2))));
        assert_eq!(a.first(), Some(&(10, TaskId(2))));
        assert!(a.remove(&(10, TaskId(2))));
        assert!(!a.remove(&(10, TaskId(2))));
        assert_eq!(a.first(), Some(&(20, TaskId(0))));
        assert!(a.remove(&(20, TaskId(3))));
        let v: Vec<_> = a.iter().copied().collect();
        assert_eq!(v, vec![(20, TaskId(0)), (30, TaskId(1))]);
        assert_eq!(a.len(), 2);
    }

    proptest! {
        /// Any sequence of inserts and removes (mostly of keys near each
        /// other, so duplicates and misses happen) gives the set's
        /// answers, contents and earliest member.
        #[test]
        fn behaves_as_the_btreeset(ops in prop::collection::vec(
            (any::<bool>(), 0u64..40, 0u32..6), 0..300)) {
            let mut a = ArmedTimers::default();
            let mut r: BTreeSet<(Nanos, TaskId)> = BTreeSet::new();
            for (ins, t, task) in ops {
                let k = (t, TaskId(task));
                if ins {
                    prop_assert_eq!(a.insert(k), r.insert(k));
                } else {
                    prop_assert_eq!(a.remove(&k), r.remove(&k));
                }
                prop_assert_eq!(a.first(), r.first());
                prop_assert_eq!(a.len(), r.len());
            }
            prop_assert!(a.iter().eq(r.iter()));
        }
    }
}
