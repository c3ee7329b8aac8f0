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
//! the model charges its call once (its retry is free, `sched/exec.rs`).

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

/// Decided holds of one CPU that repeat at a fixed step: `n` calls
/// starting at `first + j * step` (j < n), each holding until `span`
/// after its start (its wait plus its hold). A read fold decides its
/// calls this way (one read every `cost`), hundreds at once; a single
/// hold is a run of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: Nanos,
    step: Nanos,
    n: u64,
    span: Nanos,
    owner: CpuId,
}

impl Run {
    /// The start of call `j`.
    #[inline]
    fn arrival(&self, j: u64) -> Nanos {
        self.first + j * self.step
    }

    /// The last of its calls that started no later than `t`, if any.
    #[inline]
    fn last_by(&self, t: Nanos) -> Option<u64> {
        let d = t.checked_sub(self.first)?;
        Some(if self.step == 0 {
            0
        } else {
            (d / self.step).min(self.n - 1)
        })
    }

    /// Which of its calls started at exactly `t`, if any.
    #[inline]
    fn index_of(&self, t: Nanos) -> Option<u64> {
        let j = self.last_by(t)?;
        (self.arrival(j) == t).then_some(j)
    }

    /// When its last hold ends.
    #[inline]
    fn last_end(&self) -> Nanos {
        self.arrival(self.n - 1) + self.span
    }
}

/// The lock of one channel: the decided holds that can still make a call
/// wait, as runs (`Run`) in the order they were decided. A query looks at
/// each run's last call started by the query's time: within a run a later
/// call starts and ends later, so it is the one `ahead` would pick of the
/// run, and the runs are few (the calls in flight on the channel) where
/// the holds of a read fold are hundreds.
///
/// Runs whose holds are all over by the time of a decision are dropped.
/// A run partly over is kept whole: no call starts before the time it is
/// decided, so a finished hold can neither be ahead of a call (its end is
/// not after the call's start) nor be the next arrival after one.
///
/// Dropping looks at every run, and most takes find none over (the runs
/// of the senders' write folds are mostly in the future): the lock keeps
/// a lower bound of its runs' last ends (`min_end`), and a take before
/// it drops nothing without looking. The bound is a cache: the runs
/// alone are the lock's state (equality compares them only).
#[derive(Clone, Debug, Default)]
pub struct ChanLock {
    runs: Vec<Run>,
    /// No run's last hold ends before this (0 when not known).
    min_end: Nanos,
}

impl PartialEq for ChanLock {
    fn eq(&self, other: &Self) -> bool {
        self.runs == other.runs
    }
}

impl Eq for ChanLock {}

impl ChanLock {
    /// The hold a call starting at `start` queues behind, if any: of the
    /// holds whose calls started no later than it, the one ending last,
    /// when that is after `start` (of two ending together, the later
    /// arrival, then the higher CPU: an order that does not depend on
    /// when the holds were decided, so that a fold deciding its calls
    /// early prices them as message by message does).
    #[inline]
    pub fn ahead(&self, start: Nanos) -> Option<Hold> {
        self.runs
            .iter()
            .filter_map(|r| {
                let arrival = r.arrival(r.last_by(start)?);
                let end = arrival + r.span;
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
        self.runs
            .iter()
            .filter_map(|r| {
                let j = r.last_by(t).map_or(0, |j| j + 1);
                (j < r.n).then(|| r.arrival(j))
            })
            .min()
            .unwrap_or(Nanos::MAX)
    }

    /// Records the hold of a call by `cpu` that started at `start` and
    /// waited `wait`, decided at `now` (holds over by then are dropped).
    /// A hold that continues the last decided run at its step (or makes a
    /// second call of a run of one) joins it.
    #[inline]
    pub fn take(&mut self, now: Nanos, cpu: CpuId, start: Nanos, wait: Nanos, hold: Nanos) {
        if now >= self.min_end {
            self.drop_over(now);
        }
        let span = wait + hold;
        if let Some(r) = self.runs.last_mut() {
            // (A run that grows ends later: the bound still holds.)
            if r.owner == cpu && r.span == span {
                let next = r.arrival(r.n);
                if r.n == 1 && start > r.first {
                    r.step = start - r.first;
                    r.n = 2;
                    return;
                }
                if r.n > 1 && start == next {
                    r.n += 1;
                    return;
                }
            }
        }
        self.runs.push(Run {
            first: start,
            step: 0,
            n: 1,
            span,
            owner: cpu,
        });
        self.min_end = self.min_end.min(start + span);
    }

    /// Drops the runs whose holds are all over at `now`, and makes the
    /// bound of the last ends exact for those kept.
    #[inline(never)]
    fn drop_over(&mut self, now: Nanos) {
        let mut min_end = Nanos::MAX;
        self.runs.retain(|r| {
            let end = r.last_end();
            let keep = end > now;
            if keep {
                min_end = min_end.min(end);
            }
            keep
        });
        self.min_end = min_end;
    }

    /// Gives back the hold of `cpu`'s call that started at `start` (a
    /// fold's call that had not started when the fold was split,
    /// `sched/fold.rs`): the latest decided such hold.
    pub fn give_back(&mut self, cpu: CpuId, start: Nanos) {
        let Some((i, j)) = self
            .runs
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, r)| {
                // Most runs are other CPUs' calls: the owner first.
                if r.owner != cpu || start < r.first {
                    return None;
                }
                Some((i, r.index_of(start)?))
            })
        else {
            return;
        };
        let r = self.runs[i];
        if r.n == 1 {
            self.runs.remove(i);
        } else if j == 0 {
            self.runs[i].first += r.step;
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
                let rest = Run {
                    first: r.arrival(j + 1),
                    n: r.n - j - 1,
                    ..r
                };
                self.runs.insert(i + 1, rest);
            }
            self.min_end = self.min_end.min(self.runs[i].last_end());
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
                (0u64..30, 0u64..60, 0u32..4, 0u64..40, 0u64..40, 0u8..6, 0u64..80),
                1..120,
            ),
        ) {
            let (mut fast, mut slow) = (ChanLock::default(), Reference::default());
            // The same lock dropping its finished runs at every take, as
            // before the bound of the last ends: its runs must be the
            // fast lock's, run for run.
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
                } else {
                    fast.take(now, cpu, start, wait, hold + 1);
                    eager_take(&mut eager, now, cpu, start, wait, hold + 1);
                    slow.take(now, cpu, start, wait, hold + 1);
                }
                prop_assert_eq!(&fast.runs, &eager.runs);
                let min_end = fast.runs.iter().map(Run::last_end).min();
                prop_assert!(min_end.is_none_or(|e| fast.min_end <= e));
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
