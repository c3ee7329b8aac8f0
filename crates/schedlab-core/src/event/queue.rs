//! The event queue: a binary heap ordered by (time, sequence number), so
//! that events at equal times pop in insertion order (NeXosim's epoch idea).

use super::Event;
use crate::time::Nanos;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug)]
struct Entry {
    time: Nanos,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap, we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
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
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }
    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    /// Time of the earliest pending event (stale ones included), if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.time)
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
}
