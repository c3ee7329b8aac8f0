//! The event queue: a 4-ary min-heap of (time, tie key) in one `u128`,
//! so that one unsigned compare orders by time, then by the tie rule of
//! [`super::order`] (which does not depend on push order). The key is
//! injective, so the entry is the event: the heap holds 16-byte entries
//! and decodes the event on pop (a push-order tie would need a sequence
//! number in the key's low half and the event beside it: 32-byte
//! entries).

use super::order::{from_tie_key, tie_key};
use super::Event;
use crate::time::Nanos;

/// One pending event: `time << 64 | tie_key(event)`. Two equal entries
/// are the same event at the same time, so the pop order is the same
/// whatever the heap's shape or the order of the pushes.
type Entry = u128;

/// Children per node. A 4-ary heap is half as deep as a binary one, and a
/// node's four children (16 bytes each) share one cache line; a binary
/// heap's pop is a fifth of a hackbench run's profile.
const ARITY: usize = 4; // `pop` unrolls a family of four

/// Pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
}

/// The (time, event) of an entry.
#[inline(always)]
pub fn decode(e: Entry) -> (Nanos, Event) {
    ((e >> 64) as Nanos, from_tie_key(e as u64))
}

impl EventQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedules `event` at `time`.
    #[inline]
    pub fn push(&mut self, time: Nanos, event: Event) {
        let e: Entry = (u128::from(time) << 64) | u128::from(tie_key(&event));
        // Sift up with a hole: parents move down until `e` fits.
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let p = (i - 1) / ARITY;
            if self.heap[p] <= e {
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
        self.pop_entry().map(decode)
    }
    /// Removes the earliest entry and returns it whole:
    /// `time << 64 | tie_key(event)`, which orders it against the others.
    #[inline]
    pub fn pop_entry(&mut self) -> Option<u128> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last);
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
                // The least of four as a tournament of pairs: two
                // independent compares, then one (a chain of two
                // conditional moves instead of three). Equal entries are
                // the same event, so which of two equal ones wins does
                // not change what pops.
                let ch = &heap[c..c + ARITY];
                let (a, ka) = if ch[1] < ch[0] {
                    (1, ch[1])
                } else {
                    (0, ch[0])
                };
                let (b, kb) = if ch[3] < ch[2] {
                    (3, ch[3])
                } else {
                    (2, ch[2])
                };
                let (m, mk) = if kb < ka { (b, kb) } else { (a, ka) };
                (c + m, mk)
            } else if c < n {
                let mut m = c;
                let mut mk = heap[c];
                for (j, &e) in heap.iter().enumerate().take(n).skip(c + 1) {
                    if e < mk {
                        m = j;
                        mk = e;
                    }
                }
                (m, mk)
            } else {
                break;
            };
            if last <= mk {
                break;
            }
            heap[i] = heap[m];
            i = m;
        }
        heap[i] = last;
        Some(top)
    }
    /// Time of the earliest pending event (stale ones included), if any.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.first().map(|&e| (e >> 64) as Nanos)
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
    use crate::event::order::tests::any_event;
    use crate::ids::{CpuId, TaskId};
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A multiset of (time, tie key) entries: the queue's specification.
    #[derive(Default)]
    struct Shadow(BTreeMap<(Nanos, u64), usize>);
    impl Shadow {
        fn push(&mut self, t: Nanos, ev: Event) {
            *self.0.entry((t, tie_key(&ev))).or_default() += 1;
        }
        fn pop(&mut self) -> Option<(Nanos, Event)> {
            let mut e = self.0.first_entry()?;
            let (t, k) = *e.key();
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
            Some((t, from_tie_key(k)))
        }
        fn peek_time(&self) -> Option<Nanos> {
            self.0.keys().next().map(|k| k.0)
        }
        fn len(&self) -> usize {
            self.0.values().sum()
        }
    }

    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x >> 33
    }

    /// An event drawn from a few CPUs, tasks and generations, so that
    /// equal times meet every class and equal events recur.
    fn small_event(x: &mut u64) -> Event {
        let c = CpuId((lcg(x) % 3) as u32);
        let t = TaskId((lcg(x) % 3) as u32);
        let g = (lcg(x) % 2) as u32;
        match lcg(x) % 8 {
            0 => Event::Tick { cpu: c, gen: g },
            1 => Event::BurstEnd { cpu: c, gen: g },
            2 => Event::Resched { cpu: c },
            3 => Event::RemoteWakeup { cpu: c, task: t },
            4 => Event::TaskTimer {
                task: t,
                gen: g,
                handler: g == 1,
            },
            5 => Event::TaskWork { cpu: c, task: t },
            6 => Event::WasteSample,
            _ => Event::Noise {
                cpu: c,
                steal: g == 0,
            },
        }
    }

    /// Random pushes and pops against the shadow.
    #[test]
    fn matches_a_sorted_shadow() {
        let mut q = EventQueue::new();
        let mut shadow = Shadow::default();
        let mut x: u64 = 12345;
        for _ in 0..100_000 {
            if !lcg(&mut x).is_multiple_of(3) {
                let t = lcg(&mut x) % 1000;
                let ev = small_event(&mut x);
                q.push(t, ev);
                shadow.push(t, ev);
            } else {
                assert_eq!(q.pop(), shadow.pop());
            }
        }
    }

    /// Many events at few distinct times (ties broken by the tie key), in
    /// bursts of pushes and pops, against the same shadow.
    #[test]
    fn ties_pop_in_tie_key_order() {
        let mut q = EventQueue::new();
        let mut shadow = Shadow::default();
        let mut x: u64 = 99;
        let mut now = 0u64;
        for round in 0..2000 {
            for _ in 0..(round % 37) {
                let t = now + lcg(&mut x) % 8; // 0..7 ahead: many ties
                let ev = small_event(&mut x);
                q.push(t, ev);
                shadow.push(t, ev);
            }
            for _ in 0..(round % 29) {
                let a = q.pop();
                assert_eq!(a, shadow.pop());
                if let Some((t, _)) = a {
                    now = t;
                }
                assert_eq!(q.peek_time(), shadow.peek_time());
                assert_eq!(q.len(), shadow.len());
            }
        }
        while let Some(a) = q.pop() {
            assert_eq!(Some(a), shadow.pop());
        }
        assert!(shadow.len() == 0 && q.is_empty());
    }

    /// Pushes `items` in the order `perm`, popping `pops[i]` events after
    /// the i-th push; returns everything popped, the rest drained at the end.
    fn run_order(items: &[(Nanos, Event)], perm: &[usize], pops: &[u8]) -> Vec<(Nanos, Event)> {
        let mut q = EventQueue::new();
        let mut out = Vec::new();
        for (i, &j) in perm.iter().enumerate() {
            q.push(items[j].0, items[j].1);
            for _ in 0..pops[i] {
                out.extend(q.pop());
            }
        }
        while let Some(e) = q.pop() {
            out.push(e);
        }
        out
    }

    proptest! {
        /// The same set of events (duplicates included), pushed in two
        /// shuffled orders, pops the same sequence: the order of same-time
        /// events does not depend on push order.
        #[test]
        fn shuffled_pushes_pop_the_same_sequence(
            mut items in prop::collection::vec((0u64..4, any_event()), 1..60),
            dups in prop::collection::vec(any::<prop::sample::Index>(), 0..10),
            seed_a in any::<u64>(),
            seed_b in any::<u64>(),
        ) {
            for d in &dups {
                let e = items[d.index(items.len())];
                items.push(e);
            }
            let shuffle = |mut seed: u64| {
                let mut p: Vec<usize> = (0..items.len()).collect();
                for i in (1..p.len()).rev() {
                    let j = (lcg(&mut seed) % (i as u64 + 1)) as usize;
                    p.swap(i, j);
                }
                p
            };
            let none = vec![0u8; items.len()];
            let (pa, pb) = (shuffle(seed_a), shuffle(seed_b));
            let a = run_order(&items, &pa, &none);
            prop_assert_eq!(&a, &run_order(&items, &pb, &none));
            let mut sorted = items.clone();
            sorted.sort_by_key(|&(t, e)| (t, tie_key(&e)));
            prop_assert_eq!(&a, &sorted);
        }

        /// As above with the pops interleaved: the pushes of each batch
        /// (events due no earlier than anything popped, as in the
        /// simulator) are shuffled within the batch.
        #[test]
        fn shuffled_batches_pop_the_same_sequence(
            batches in prop::collection::vec(
                (prop::collection::vec((0u64..3, any_event()), 1..12), 0u8..8, any::<u64>(), any::<u64>()),
                1..12,
            ),
        ) {
            let mut qa = EventQueue::new();
            let mut qb = EventQueue::new();
            let mut now = 0;
            for (batch, npop, sa, sb) in &batches {
                let items: Vec<(Nanos, Event)> = batch.iter().map(|&(d, e)| (now + d, e)).collect();
                for (q, mut seed) in [(&mut qa, *sa), (&mut qb, *sb)] {
                    let mut p: Vec<usize> = (0..items.len()).collect();
                    for i in (1..p.len()).rev() {
                        let j = (lcg(&mut seed) % (i as u64 + 1)) as usize;
                        p.swap(i, j);
                    }
                    for j in p {
                        q.push(items[j].0, items[j].1);
                    }
                }
                for _ in 0..*npop {
                    let a = qa.pop();
                    prop_assert_eq!(a, qb.pop());
                    if let Some((t, _)) = a {
                        now = t;
                    }
                }
            }
            while let Some(a) = qa.pop() {
                prop_assert_eq!(Some(a), qb.pop());
            }
            prop_assert!(qb.is_empty());
        }
    }
}
