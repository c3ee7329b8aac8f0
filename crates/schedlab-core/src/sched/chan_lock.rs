//! A channel's lock: `pipe->mutex` (`fs/pipe.c`, taken by `pipe_write` and
//! `pipe_read` for the copy into or out of the ring) and the receiving
//! socket's `unix_state_lock` / `sk_receive_queue.lock` (taken by
//! `unix_stream_sendmsg` to queue the skb on the peer and by the reader to
//! take it off). Every writer and the reader of one channel serialise on it.
//!
//! ```text
//!   call on CPU a:  [entry ... | hold ............. | ... exit]
//!   call on CPU b:  [entry ... | wait ....|handoff| hold ...... | ... exit]
//!                                         ^ a's hold ends (free_at)
//! ```
//!
//! Modelled as a FIFO resource decided at issue time, as the contended
//! cache line of `atomics.rs` (hold interval instead of transfer): a call
//! that starts at `start` on a CPU finds the lock free (`free_at <=
//! start`: no wait) or held; then it waits until `free_at` plus the
//! handoff (the lock word and the queue's lines moving from the previous
//! holder's CPU, the spinner's acquire), and holds it after that. Calls
//! are served in the order the simulator decides them (their start times:
//! the lock's next holder is the longest waiter, as the mutex's optimistic
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
//! Deviations: the mutex's sleep path (the owner preempted or sleeping
//! while holding it) is not modelled: under `preempt=none` / `voluntary`
//! a pipe call is not preempted inside the section, and the model's holds
//! are intervals of time decided at the start of the call. A writer that
//! sleeps on a full channel and is woken retakes the lock in the kernel;
//! the model charges its call once (its retry is free, `sched/exec.rs`).

use crate::ids::CpuId;
use crate::time::Nanos;

/// The lock of one channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChanLock {
    /// When the last decided hold ends.
    pub free_at: Nanos,
    /// The CPU of the last decided hold (whose cache holds the lock).
    pub owner: Option<CpuId>,
}

impl ChanLock {
    /// The wait of a call starting at `start`: nothing if the lock is free
    /// then, else until the current hold ends plus `handoff`.
    #[inline]
    pub fn wait(&self, start: Nanos, handoff: Nanos) -> Nanos {
        if self.free_at > start {
            self.free_at - start + handoff
        } else {
            0
        }
    }

    /// Records the hold of a call by `cpu` that started at `start` and
    /// waited `wait`.
    #[inline]
    pub fn take(&mut self, cpu: CpuId, start: Nanos, wait: Nanos, hold: Nanos) {
        self.free_at = start + wait + hold;
        self.owner = Some(cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_caller_waits_the_first_ones_remaining_hold_and_the_handoff() {
        let mut l = ChanLock::default();
        // A at 1000 holds 300: free at 1300.
        assert_eq!(l.wait(1000, 50), 0);
        l.take(CpuId(0), 1000, 0, 300);
        // B at 1100: 200 left of A's hold, + 50 handoff.
        let w = l.wait(1100, 50);
        assert_eq!(w, 250);
        l.take(CpuId(1), 1100, w, 300);
        assert_eq!(l.free_at, 1650);
        // C at 2000: free, no wait.
        assert_eq!(l.wait(2000, 50), 0);
        assert_eq!(l.wait(1650, 50), 0);
    }
}
