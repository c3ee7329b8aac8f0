//! CPU time of the syscalls (and libc fast paths) a behaviour program's
//! ops stand for: pipe and AF_UNIX stream reads and writes, futex calls,
//! and the uncontended pthread mutex / condition variable / semaphore
//! paths rt-app's events take.
//!
//! Source: an independent measurement on the host this model was built on
//! (`scripts/syscost.c`: minimum over 40 batches of the mean per call,
//! one pinned thread; Intel Xeon VM at 2.3 GHz, Linux 6.18, 2026-11-23;
//! see `docs/syscall-costs.md`). These times exclude the scheduler's own
//! work, which the model charges separately (`wakeup_ns` per wakeup,
//! `context_switch_ns` per switch).
//!
//! Scaling rule: a preset's costs are the host figures times the preset's
//! `context_switch_ns` over 2 µs, the context switch of the x86 server
//! presets (icx-2s-80c-ht, the default costs), whose 2.3 GHz base clock
//! the host shares. A preset's relative speed is thus the one its
//! context-switch figure already states (a7-octa's 8 µs makes its
//! syscalls 4x slower). Every cost is at least 1 ns, so no op is free.

use crate::machine::MachineCosts;
use crate::time::Nanos;

/// Host: `write(2)` of 100 bytes into a pipe with room, no reader waiting.
const HOST_PIPE_WRITE_NS: Nanos = 156;
/// Host: `read(2)` of 100 bytes from a pipe holding data, no writer waiting.
const HOST_PIPE_READ_NS: Nanos = 165;
/// Host: `write(2)` of 100 bytes on an AF_UNIX stream socket with room.
const HOST_UNIX_WRITE_NS: Nanos = 402;
/// Host: `read(2)` of 100 bytes from an AF_UNIX stream socket with data.
const HOST_UNIX_READ_NS: Nanos = 424;
/// Host: one futex syscall (`FUTEX_WAKE` with nobody waiting): the price
/// of every slow path (a wake with a waiter, a wait that sleeps).
const HOST_FUTEX_NS: Nanos = 366;
/// Host: a bare syscall (`getppid`), for `sched_yield` (the scheduler's
/// part of a yield is charged by `schedule`).
const HOST_SYSCALL_NS: Nanos = 213;
/// Host: uncontended `pthread_mutex_lock` + `unlock`, 6 ns: 3 ns each.
const HOST_MUTEX_OP_NS: Nanos = 3;
/// Host: `pthread_cond_signal` / `broadcast` with no waiter (2-3 ns).
const HOST_COND_OP_NS: Nanos = 2;
/// Host: `sem_post` + `sem_wait` with a token, 19 ns: 10 ns each.
const HOST_SEM_OP_NS: Nanos = 10;
/// Context switch of the machine the host figures stand for.
const REFERENCE_SWITCH_NS: Nanos = 2_000;

/// A CPU time measured on the host, scaled to a machine by the rule of
/// the module docs (at least 1 ns).
pub fn scale_host_ns(c: &MachineCosts, ns: Nanos) -> Nanos {
    ((ns as u128 * c.context_switch_ns as u128 / REFERENCE_SWITCH_NS as u128) as Nanos).max(1)
}

/// Per-call CPU costs on one machine.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SyscallCosts {
    /// Pipe write (one message).
    pub pipe_write: Nanos,
    /// Pipe read (one message).
    pub pipe_read: Nanos,
    /// AF_UNIX stream write.
    pub unix_write: Nanos,
    /// AF_UNIX stream read.
    pub unix_read: Nanos,
    /// A futex syscall (slow path of a lock, unlock, signal, wait, post).
    pub futex: Nanos,
    /// `sched_yield`'s syscall part.
    pub syscall: Nanos,
    /// Uncontended mutex lock or unlock.
    pub mutex: Nanos,
    /// Condition signal/broadcast with no waiter.
    pub cond: Nanos,
    /// Semaphore post or wait without sleeping or waking.
    pub sem: Nanos,
}

impl SyscallCosts {
    /// The host figures scaled to a machine (module docs).
    pub fn for_machine(c: &MachineCosts) -> SyscallCosts {
        let s = |ns: Nanos| (ns * c.context_switch_ns / REFERENCE_SWITCH_NS).max(1);
        SyscallCosts {
            pipe_write: s(HOST_PIPE_WRITE_NS),
            pipe_read: s(HOST_PIPE_READ_NS),
            unix_write: s(HOST_UNIX_WRITE_NS),
            unix_read: s(HOST_UNIX_READ_NS),
            futex: s(HOST_FUTEX_NS),
            syscall: s(HOST_SYSCALL_NS),
            mutex: s(HOST_MUTEX_OP_NS),
            cond: s(HOST_COND_OP_NS),
            sem: s(HOST_SEM_OP_NS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaling_follows_the_context_switch_and_nothing_is_free() {
        let mut c = crate::machine::presets::default_costs();
        let x = SyscallCosts::for_machine(&c);
        assert_eq!((x.unix_write, x.unix_read), (402, 424));
        c.context_switch_ns = 8_000;
        assert_eq!(SyscallCosts::for_machine(&c).pipe_write, 624);
        c.context_switch_ns = 1;
        let y = SyscallCosts::for_machine(&c);
        assert!(y.mutex >= 1 && y.cond >= 1 && y.sem >= 1 && y.pipe_read >= 1);
    }
}
