//! The event queue: a 4-ary min-heap ordered by (time, sequence number),
//! so that events at equal times pop in insertion order (NeXosim's epoch
//! idea). Until issue 17 it was std's binary heap on the same order; the
//! order is total, so both pop the same sequence.

use super::Event;
use crate::time::Nanos;

/// One pending event. `key` is `time << 64 | seq`: one unsigned compare
/// orders by time, then by insertion (keys are unique, so the pop order is
/// the same whatever the heap's shape).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

/// Children per node. A 4-ary heap is half as deep as a binary one, and a
/// node's four children (32 bytes each) share two cache lines; issue 17's
/// profile had the binary heap's pop at a fifth of a hackbench run.
const ARITY: usize = 4; // `pop` unrolls a family of four

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: Event) {
        self.seq += 1;
        let e = Entry {
            key: (u128::from(time) << 64) | u128::from(self.seq),
            event,
        };
        // Sift up with a hole: parents move down until `e` fits.
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let p = (i - 1) / ARITY;
            if self.heap[p].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[p];
            i = p;
        }
        self.heap[i] = e;
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(((last.key >> 64) as Nanos, last.event));
        }
        let top = self.heap[0];
        // Sift `last` down from the root with a hole: the smallest child
        // moves up until `last` fits. Full families (all but the last) are
        // compared unrolled on one slice, without per-child bounds checks.
        let heap = &mut self.heap[..];
        let mut i = 0;
        loop {
            let c = i * ARITY + 1;
            let (m, mk) = if c + ARITY <= n {
                let ch = &heap[c..c + ARITY];
                let (mut m, mut mk) = (0, ch[0].key);
                if ch[1].key < mk {
                    m = 1;
                    mk = ch[1].key;
                }
                if ch[2].key < mk {
                    m = 2;
                    mk = ch[2].key;
                }
                if ch[3].key < mk {
                    m = 3;
                    mk = ch[3].key;
                }
                (c + m, mk)
            } else if c < n {
                let mut m = c;
                let mut mk = heap[c].key;
                for (j, e) in heap.iter().enumerate().take(n).skip(c + 1) {
                    if e.key < mk {
                        m = j;
                        mk = e.key;
                    }
                }
                (m, mk)
            } else {
                break;
            };
            if last.key <= mk {
                break;
            }
            heap[i] = heap[m];
            i = m;
        }
        heap[i] = last;
        Some(((top.key >> 64) as Nanos, top.event))
    }
    /// Time of the earliest pending event (stale ones included), if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|e| (e.key >> 64) as Nanos)
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CpuId;
    use std::collections::BTreeMap;

    /// Random pushes and pops against a BTreeMap<(time, seq)> shadow.
    #[test]
    fn matches_a_btreemap_shadow() {
        let mut q = EventQueue::new();
        let mut shadow = BTreeMap::new();
        let mut x: u64 = 12345;
        let mut seq = 0u64;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if !(x >> 33).is_multiple_of(3) {
                let t = (x >> 40) % 1000;
                seq += 1;
                let ev = Event::Resched {
                    cpu: CpuId(seq as u32),
                };
                q.push(t, ev);
                shadow.insert((t, seq), ev);
            } else {
                let a = q.pop();
                let b = shadow.pop_first().map(|((t, _), e)| (t, e));
                assert_eq!(a, b);
            }
        }
    }

    /// Many events at few distinct times (ties broken by insertion), in
    /// bursts of pushes and pops, against the same shadow.
    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        let mut shadow = BTreeMap::new();
        let mut x: u64 = 99;
        let mut seq = 0u64;
        let mut now = 0u64;
        for round in 0..2000 {
            for _ in 0..(round % 37) {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let t = now + (x >> 61); // 0..7 ahead: many ties
                seq += 1;
                let ev = Event::Resched {
                    cpu: CpuId(seq as u32),
                };
                q.push(t, ev);
                shadow.insert((t, seq), ev);
            }
            for _ in 0..(round % 29) {
                let a = q.pop();
                let b = shadow.pop_first().map(|((t, _), e)| (t, e));
                assert_eq!(a, b);
                if let Some((t, _)) = a {
                    now = t;
                }
                assert_eq!(q.peek_time(), shadow.keys().next().map(|k| k.0));
                assert_eq!(q.len(), shadow.len());
            }
        }
        while let Some(a) = q.pop() {
            assert_eq!(Some(a), shadow.pop_first().map(|((t, _), e)| (t, e)));
        }
        assert!(shadow.is_empty() && q.is_empty());
    }
}
