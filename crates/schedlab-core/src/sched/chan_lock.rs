//! A channel's lock: `pipe->mutex` (`fs/pipe.c`, taken by `pipe_write` and
//! `pipe_read` for the copy into or out of the ring) and the receiving
//! socket's `unix_state_lock` / `sk_receive_queue.lock` (taken by
//! `unix_stream_sendmsg` to queue the skb on the peer and by the reader to
//! take it off). Every writer and the reader of one channel serialise on it.
//!
//! ```text
//!   call on CPU a:  [entry ... | hold ............. | ... exit]
//!   call on CPU b:  [entry ... | wait ....|handoff| hold ...... | ... exit]
//!                                         ^ a's hold ends
//! ```
//!
//! Modelled as a FIFO resource decided at issue time, as the contended
//! cache line of `atomics.rs` (hold interval instead of transfer): a call
//! that starts at `start` on a CPU finds no hold ahead of it (no wait) or
//! one (`ChanLock::ahead`); then it waits until that hold ends plus the
//! handoff (the lock word and the queue's lines moving from the holder's
//! CPU, the spinner's acquire), and holds it after that. Calls are served
//! in the order of their start times (below, "Order by arrival": the
//! lock's next holder is the longest waiter, as the mutex's optimistic
//! spinners queue on an MCS lock and the spinlocks are ticket / queued
//! locks). The wait is CPU time of the caller: pipe_write's mutex spins
//! while its owner runs (optimistic spinning, `mutex_optimistic_spin`), the
//! socket's locks are spinlocks.
//!
//! The hold of a call is the part of its own CPU time spent under the lock
//! plus the cache-line transfers it pays (`SyscallCosts::xcpu`, taken
//! inside the section: the ring's head and page, the receive queue's
//! list), so a hold never outlasts the call.
//!
//! **Order by arrival.** A call is priced when it is decided, which can be
//! before it starts: a task whose CPU is still paying scheduler work (a
//! wake-up it did, a switch: `Sim::stall`) decides its next syscall at
//! once, to start when that work ends. Its hold is then in the future, and
//! a call on another CPU that starts earlier, decided after it, must not
//! queue behind it: in the kernel that call reaches the lock first. So the
//! lock keeps the decided holds with their calls' start times, and a call
//! starting at `start` waits only for holds whose calls started no later
//! than it (FIFO by arrival; decision order among equal starts). The hold
//! decided early does not wait for the earlier call decided after it (its
//! price is already fixed): a deviation of at most one hold per such pair,
//! where queueing behind a hold not yet taken made every writer of a
//! 20-sender hackbench group wait a whole wake-up's cost (1.5 µs on
//! icx-2s-80c-ht), a convoy that nothing in the model could dissolve.
//!
//! Deviations: the mutex's sleep path (the owner preempted or sleeping
//! while holding it) is not modelled: under `preempt=none` / `voluntary`
//! a pipe call is not preempted inside the section, and the model's holds
//! are intervals of time decided at the start of the call. A writer that
//! sleeps on a full channel and is woken retakes the lock in the kernel;
//! the model charges its call once (its retry is free, `sched/channel_io.rs`).

use crate::ids::CpuId;
use crate::time::Nanos;

/// One decided hold of a channel's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hold {
    /// When the call that holds it started (its place in the queue).
    pub arrival: Nanos,
    /// When the hold ends.
    pub end: Nanos,
    /// The CPU of the call (whose cache the lock is in afterwards).
    pub owner: CpuId,
}

/// Decided holds of one CPU, in the order they were decided, each call
/// starting later and its hold ending no earlier than the one before:
/// within a run, the last call started by a time is the one of the run a
/// call starting then queues behind (none if it is over).
///
/// A regular run repeats at a fixed step: `n` calls starting at
/// `first + j * step` (j < n), each holding until `span` after its start
/// (its wait plus its hold). A fold of equal calls decides them this way
/// (one read every `cost`), hundreds at once; a single hold is a run of
/// one. A chain (`at` not `REGULAR`) holds its calls' starts and ends in
/// the lock's list (`ChanLock::chain`, from `at`): a fold of reads that
/// each pay for their own message (a read's cost differs with the
/// writer's CPU) is regular for a stretch and then off its step, and as
/// regular runs it left one run per stretch (a socket reader's fold of
/// a hackbench-160 group: a run of 11 or 20 reads, then the next).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: Nanos,
    step: Nanos,
    n: u64,
    span: Nanos,
    owner: CpuId,
    /// Where a chain's holds are in `ChanLock::chain` (`REGULAR`: none).
    at: u32,
}

/// `Run::at` of a regular run.
const REGULAR: u32 = u32::MAX;

impl Run {
    /// The start and end of call `j`.
    #[inline]
    fn hold(&self, j: u64, chain: &[(Nanos, Nanos)]) -> (Nanos, Nanos) {
        if self.at == REGULAR {
            let a = self.first + j * self.step;
            (a, a + self.span)
        } else {
            chain[self.at as usize + j as usize]
        }
    }

    /// A chain's holds.
    #[inline]
    fn links<'a>(&self, chain: &'a [(Nanos, Nanos)]) -> &'a [(Nanos, Nanos)] {
        &chain[self.at as usize..self.at as usize + self.n as usize]
    }

    /// The last of its calls that started no later than `t`, if any.
    #[inline]
    fn last_by(&self, t: Nanos, chain: &[(Nanos, Nanos)]) -> Option<u64> {
        if self.at == REGULAR {
            let d = t.checked_sub(self.first)?;
            Some(if self.step == 0 {
                0
            } else {
                (d / self.step).min(self.n - 1)
            })
        } else {
            // Before it, after its last start, or (a fold's calls given
            // back in order) at its first: no search.
            let links = self.links(chain);
            if t < links[0].0 {
                None
            } else if t >= links[links.len() - 1].0 {
                Some(self.n - 1)
            } else if t == links[0].0 {
                Some(0)
            } else {
                Some(links.partition_point(|&(a, _)| a <= t) as u64 - 1)
            }
        }
    }

    /// Which of its calls started at exactly `t`, if any.
    #[inline]
    fn index_of(&self, t: Nanos, chain: &[(Nanos, Nanos)]) -> Option<u64> {
        let j = self.last_by(t, chain)?;
        (self.hold(j, chain).0 == t).then_some(j)
    }

    /// When its last hold ends.
    #[inline]
    fn last_end(&self, chain: &[(Nanos, Nanos)]) -> Nanos {
        self.hold(self.n - 1, chain).1
    }
}

/// The lock of one channel: the decided holds that can still make a call
/// wait, as runs (`Run`) in the order they were decided. A query looks at
/// each run's last call started by the query's time: within a run a later
/// call starts later and ends no earlier, so it is the one `ahead` would
/// pick of the run, and the runs are few (the calls in flight on the
/// channel) where the holds of a read fold are hundreds.
///
/// Runs whose holds are all over by the time of a decision are dropped.
/// A run partly over is kept whole: no call starts before the time it is
/// decided, so a finished hold can neither be ahead of a call (its end is
/// not after the call's start) nor be the next arrival after one.
///
/// Dropping looks at every run, and most takes find none over (the runs
/// of the senders' write folds are mostly in the future): the lock keeps
/// a lower bound of its runs' last ends (`min_end`), and a take before
/// it drops nothing without looking. The bound and where the chains'
/// holds are stored are not the lock's state: equality compares the
/// holds, in the order they were decided.
#[derive(Clone, Debug, Default)]
pub struct ChanLock {
    runs: Vec<Run>,
    /// The chains' holds (start, end), in the order of the runs; a
    /// hold given back leaves a gap until the next drop compacts it.
    chain: Vec<(Nanos, Nanos)>,
    /// No run's last hold ends before this (0 when not known).
    min_end: Nanos,
}

impl PartialEq for ChanLock {
    fn eq(&self, other: &Self) -> bool {
        self.holds().eq(other.holds())
    }
}

impl Eq for ChanLock {}

impl ChanLock {
    /// Every hold kept, in the order decided.
    fn holds(&self) -> impl Iterator<Item = Hold> + '_ {
        self.runs.iter().flat_map(move |r| {
            (0..r.n).map(move |j| {
                let (arrival, end) = r.hold(j, &self.chain);
                Hold {
                    arrival,
                    end,
                    owner: r.owner,
                }
            })
        })
    }

    /// The hold a call starting at `start` queues behind, if any: of the
    /// holds whose calls started no later than it, the one ending last,
    /// when that is after `start` (of two ending together, the later
    /// arrival, then the higher CPU: an order that does not depend on
    /// when the holds were decided, so that a fold deciding its calls
    /// early prices them as message by message does).
    #[inline]
    pub fn ahead(&self, start: Nanos) -> Option<Hold> {
        let chain = &self.chain[..];
        self.runs
            .iter()
            .filter_map(|r| {
                let (arrival, end) = r.hold(r.last_by(start, chain)?, chain);
                (end > start).then_some(Hold {
                    arrival,
                    end,
                    owner: r.owner,
                })
            })
            .max_by_key(|h| (h.end, h.arrival, h.owner.0))
    }

    /// The wait of a call starting at `start`: nothing if no hold is
    /// ahead of it, else until that hold ends plus the handoff from its
    /// owner (`handoff(owner)`).
    #[inline]
    pub fn wait(&self, start: Nanos, handoff: impl Fn(CpuId) -> Nanos) -> Nanos {
        self.ahead(start)
            .map_or(0, |h| h.end - start + handoff(h.owner))
    }

    /// The earliest start, after `t`, of a decided call holding the lock
    /// (a call decided before it starts): calls starting from then on may
    /// queue behind it.
    #[inline]
    pub fn next_arrival_after(&self, t: Nanos) -> Nanos {
        let chain = &self.chain[..];
        self.runs
            .iter()
            .filter_map(|r| {
                let j = r.last_by(t, chain).map_or(0, |j| j + 1);
                (j < r.n).then(|| r.hold(j, chain).0)
            })
            .min()
            .unwrap_or(Nanos::MAX)
    }

    /// Records the hold of a call by `cpu` that started at `start` and
    /// waited `wait`, decided at `now` (holds over by then are dropped).
    /// A hold that continues the last decided run at its step (or makes a
    /// second call of a run of one) joins it; else one that starts after
    /// the last decided hold, of the same CPU, and ends no earlier joins
    /// it as a chain.
    #[inline(always)]
    pub fn take(&mut self, now: Nanos, cpu: CpuId, start: Nanos, wait: Nanos, hold: Nanos) {
        if now >= self.min_end {
            self.drop_over(now);
        }
        let span = wait + hold;
        let end = start + span;
        // (A run that grows ends no earlier: the bound still holds.)
        if let Some(r) = self.runs.last_mut() {
            if r.owner == cpu {
                if r.at == REGULAR {
                    if r.span == span {
                        if r.n == 1 && start > r.first {
                            r.step = start - r.first;
                            r.n = 2;
                            return;
                        }
                        if r.n > 1 && start == r.first + r.n * r.step {
                            r.n += 1;
                            return;
                        }
                    }
                    // Off the step or of another span: the run becomes
                    // a chain, if the hold starts after its last and ends
                    // no earlier.
                    let last = r.first + (r.n - 1) * r.step;
                    if start > last && end >= last + r.span {
                        Self::to_chain(r, &mut self.chain, start, end);
                        return;
                    }
                } else if r.at as usize + r.n as usize == self.chain.len() {
                    let (a, e) = self.chain[self.chain.len() - 1];
                    if start > a && end >= e {
                        self.chain.push((start, end));
                        r.n += 1;
                        return;
                    }
                }
            }
        }
        self.runs.push(Run {
            first: start,
            step: 0,
            n: 1,
            span,
            owner: cpu,
            at: REGULAR,
        });
        self.min_end = self.min_end.min(end);
    }

    /// Makes regular run `r` (the last) a chain at the end of `chain`,
    /// with a hold from `start` to `end` after its own.
    #[cold]
    #[inline(never)]
    fn to_chain(r: &mut Run, chain: &mut Vec<(Nanos, Nanos)>, start: Nanos, end: Nanos) {
        r.at = chain.len() as u32;
        chain.extend((0..r.n).map(|j| {
            let a = r.first + j * r.step;
            (a, a + r.span)
        }));
        chain.push((start, end));
        r.n += 1;
    }

    /// Drops the runs whose holds are all over at `now`, makes the bound
    /// of the last ends exact for those kept, and closes the chains' gaps.
    #[inline(never)]
    fn drop_over(&mut self, now: Nanos) {
        let mut min_end = Nanos::MAX;
        let chain = &mut self.chain;
        let mut w = 0;
        self.runs.retain_mut(|r| {
            let end = r.last_end(chain);
            let keep = end > now;
            if keep {
                min_end = min_end.min(end);
                if r.at != REGULAR {
                    // The chains' holds are in the order of the runs:
                    // each moves down to the end of those kept before it.
                    let at = r.at as usize;
                    chain.copy_within(at..at + r.n as usize, w);
                    r.at = w as u32;
                    w += r.n as usize;
                }
            }
            keep
        });
        chain.truncate(w);
        self.min_end = min_end;
    }

    /// Gives back the hold of `cpu`'s call that started at `start` (a
    /// fold's call that had not started when the fold was split,
    /// `sched/fold.rs`): the latest decided such hold.
    pub fn give_back(&mut self, cpu: CpuId, start: Nanos) {
        let chain = &self.chain[..];
        let Some((i, j)) = self.runs.iter().enumerate().rev().find_map(|(i, r)| {
            if r.owner != cpu {
                return None;
            }
            Some((i, r.index_of(start, chain)?))
        }) else {
            return;
        };
        let r = self.runs[i];
        if r.n == 1 {
            self.runs.remove(i);
        } else if j == 0 {
            if r.at == REGULAR {
                self.runs[i].first += r.step;
            } else {
                self.runs[i].at += 1;
            }
            self.runs[i].n -= 1;
        } else {
            // The run's last hold ends earlier now: so may the bound.
            if j == r.n - 1 {
                self.runs[i].n -= 1;
            } else {
                // A call in the middle: the run splits around it, the
                // later part decided with it (next in the order of
                // decision).
                self.runs[i].n = j;
                let rest = if r.at == REGULAR {
                    Run {
                        first: r.first + (j + 1) * r.step,
                        n: r.n - j - 1,
                        ..r
                    }
                } else {
                    Run {
                        at: r.at + j as u32 + 1,
                        n: r.n - j - 1,
                        ..r
                    }
                };
                self.runs.insert(i + 1, rest);
            }
            let e = self.runs[i].last_end(&self.chain);
            self.min_end = self.min_end.min(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const H: Nanos = 50;
    fn ho(_: CpuId) -> Nanos {
        H
    }

    #[test]
    fn a_second_caller_waits_the_first_ones_remaining_hold_and_the_handoff() {
        let mut l = ChanLock::default();
        // A at 1000 holds 300: free at 1300.
        assert_eq!(l.wait(1000, ho), 0);
        l.take(1000, CpuId(0), 1000, 0, 300);
        // B at 1100: 200 left of A's hold, + 50 handoff.
        let w = l.wait(1100, ho);
        assert_eq!(w, 250);
        l.take(1100, CpuId(1), 1100, w, 300);
        // B holds from 1350 to 1650.
        assert_eq!(
            l.ahead(1600).map(|h| (h.end, h.owner)),
            Some((1650, CpuId(1)))
        );
        // C at 2000: free, no wait.
        assert_eq!(l.wait(2000, ho), 0);
        assert_eq!(l.wait(1650, ho), 0);
    }

    /// A hold decided before its call starts (the caller's CPU still
    /// paying scheduler work) does not make a call that starts earlier
    /// wait; calls starting after it queue behind it as before.
    #[test]
    fn a_hold_decided_ahead_of_its_start_is_behind_earlier_arrivals() {
        let mut l = ChanLock::default();
        // A, decided at 1000, starts at 2500 (1500 of wake-up work first),
        // holds 2500-2584.
        l.take(1000, CpuId(0), 2500, 0, 84);
        // B starts at 1100, before A: no wait (the old lock made it wait
        // until 2584 + 50).
        assert_eq!(l.wait(1100, ho), 0);
        l.take(1100, CpuId(1), 1100, 0, 84);
        // C at 1150 queues behind B (ends 1184): 34 + 50.
        assert_eq!(l.wait(1150, ho), 84);
        // D at 2550 queues behind A (ends 2584): 34 + 50.
        assert_eq!(l.wait(2550, ho), 84);
        // A fold's call given back is gone; the others stay.
        l.give_back(CpuId(0), 2500);
        assert_eq!(l.wait(2550, ho), 0);
        assert_eq!(l.wait(1150, ho), 84);
        // Holds over by the time of a decision are dropped.
        l.take(5000, CpuId(2), 5000, 0, 10);
        assert_eq!(l.runs.len(), 1);
    }

    /// The slow reference: every decided hold in decision order, all
    /// scanned on every query, those over at a decision dropped.
    #[derive(Default)]
    struct Reference {
        holds: Vec<Hold>,
    }

    impl Reference {
        fn ahead(&self, start: Nanos) -> Option<Hold> {
            self.holds
                .iter()
                .filter(|h| h.arrival <= start && h.end > start)
                .max_by_key(|h| (h.end, h.arrival, h.owner.0))
                .copied()
        }
        fn next_arrival_after(&self, t: Nanos) -> Nanos {
            let after = self.holds.iter().filter(|h| h.arrival > t);
            after.map(|h| h.arrival).min().unwrap_or(Nanos::MAX)
        }
        fn take(&mut self, now: Nanos, cpu: CpuId, start: Nanos, wait: Nanos, hold: Nanos) {
            self.holds.retain(|h| h.end > now);
            let end = start + wait + hold;
            self.holds.push(Hold {
                arrival: start,
                end,
                owner: cpu,
            });
        }
        fn give_back(&mut self, cpu: CpuId, start: Nanos) {
            let i = self
                .holds
                .iter()
                .rposition(|h| h.owner == cpu && h.arrival == start);
            if let Some(i) = i {
                self.holds.remove(i);
            }
        }
    }

    proptest! {
        /// The lock of runs answers every query as the reference does,
        /// over random decisions (time never goes back; calls start at or
        /// after their decision, some far ahead; small numbers so that
        /// ties of start, end and CPU are common), fold-like runs of calls
        /// at a fixed step, and give-backs of calls not yet started.
        #[test]
        fn runs_answer_as_a_scan_of_every_hold(
            steps in prop::collection::vec(
                (0u64..30, 0u64..60, 0u32..4, 0u64..40, 0u64..40, 0u8..7, 0u64..80),
                1..120,
            ),
        ) {
            let (mut fast, mut slow) = (ChanLock::default(), Reference::default());
            // The same lock dropping its finished runs at every take (as
            // before the bound of the last ends), which closes the chains'
            // gaps at every take too: it may keep other finished holds
            // and join other runs, never other holds not over.
            let mut eager = ChanLock::default();
            let eager_take = |l: &mut ChanLock, now, cpu, start, wait, hold| {
                l.drop_over(now);
                l.take(now, cpu, start, wait, hold);
            };
            let mut now = 0;
            for (adv, ahead_by, cpu, wait, hold, op, q) in steps {
                now += adv;
                let (cpu, start) = (CpuId(cpu), now + ahead_by);
                if op == 0 {
                    // Give back a decided call that has not started.
                    let open: Vec<Hold> =
                        slow.holds.iter().filter(|h| h.arrival > now).copied().collect();
                    if let Some(h) = open.get(q as usize % open.len().max(1)) {
                        fast.give_back(h.owner, h.arrival);
                        eager.give_back(h.owner, h.arrival);
                        slow.give_back(h.owner, h.arrival);
                    }
                } else if op == 5 {
                    // A read fold's calls: one every `step`, wait 0, the
                    // same hold (shorter or longer than the step).
                    let step = wait % 20 + 1;
                    for j in 0..q % 9 + 2 {
                        fast.take(now, cpu, start + j * step, 0, hold);
                        eager_take(&mut eager, now, cpu, start + j * step, 0, hold);
                        slow.take(now, cpu, start + j * step, 0, hold);
                    }
                } else if op == 6 {
                    // Reads that each pay for their own message, or a
                    // woken call's second pass and the calls after it:
                    // steps and holds that differ call to call (a hold
                    // that ends earlier than the one before now and
                    // then, which a chain does not take).
                    // Or (q odd) stretches at one step and one span
                    // (0 at times, as a socket reader's) broken by a
                    // call off the step.
                    let mut a = start;
                    let (step, span) = (wait % 20 + 1, hold % 3 * 4);
                    for j in 0..q % 17 + 2 {
                        let (w, h) = if q % 2 == 0 {
                            let x = (j * 7 + wait + hold) % 11;
                            (x % 3, hold / 2 + x)
                        } else {
                            (0, span)
                        };
                        fast.take(now, cpu, a, w, h);
                        eager_take(&mut eager, now, cpu, a, w, h);
                        slow.take(now, cpu, a, w, h);
                        a += if q % 2 == 0 {
                            1 + (j * 5 + wait) % 13
                        } else if j % (hold % 5 + 2) == 1 {
                            step / 2 + 1
                        } else {
                            step
                        };
                    }
                } else {
                    fast.take(now, cpu, start, wait, hold + 1);
                    eager_take(&mut eager, now, cpu, start, wait, hold + 1);
                    slow.take(now, cpu, start, wait, hold + 1);
                }
                // The same holds as the reference's (those not over) in
                // the same order, and as the eager lock's.
                let live = |h: &Hold| h.end > now;
                prop_assert!(fast.holds().filter(live).eq(slow.holds.iter().copied().filter(live)));
                prop_assert!(fast.holds().filter(live).eq(eager.holds().filter(live)));
                let min_end = fast.runs.iter().map(|r| r.last_end(&fast.chain)).min();
                prop_assert!(min_end.is_none_or(|e| fast.min_end <= e));
                // Every chain's holds start later and end no earlier, one
                // after the other, and lie in the list in the runs' order.
                let mut next = 0;
                for r in fast.runs.iter().filter(|r| r.at != REGULAR) {
                    prop_assert!(r.at as usize >= next);
                    next = r.at as usize + r.n as usize;
                    let links = r.links(&fast.chain);
                    prop_assert!(links.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 >= w[0].1));
                }
                for t in [now, now + q, start, start + q / 2] {
                    prop_assert_eq!(fast.ahead(t), slow.ahead(t));
                    prop_assert_eq!(fast.next_arrival_after(t), slow.next_arrival_after(t));
                    let ho = |o: CpuId| 7 * o.0 as Nanos + 1;
                    prop_assert_eq!(fast.wait(t, ho), slow.ahead(t).map_or(0, |h| h.end - t + ho(h.owner)));
                }
            }
        }
    }
}
