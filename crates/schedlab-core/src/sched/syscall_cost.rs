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
//! The factor is `MachineCosts::syscall_scale` (1/1 for costs measured on
//! the host itself), and a machine whose channel calls were measured in
//! hackbench's pattern (`MachineCosts::channel_ns`, from a recording's
//! costs.json) uses those for pipe and socket reads and writes.

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
pub use crate::machine::REFERENCE_SWITCH_NS;

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
        let [num, den] = c.syscall_scale;
        let s = |ns: Nanos| (ns * num / den.max(1)).max(1);
        let ch = c.channel_ns.map(|v| v.map(|x| x.max(1))).unwrap_or([
            s(HOST_PIPE_WRITE_NS),
            s(HOST_PIPE_READ_NS),
            s(HOST_UNIX_WRITE_NS),
            s(HOST_UNIX_READ_NS),
        ]);
        SyscallCosts {
            pipe_write: ch[0],
            pipe_read: ch[1],
            unix_write: ch[2],
            unix_read: ch[3],
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
        c.syscall_scale = [8_000, REFERENCE_SWITCH_NS];
        assert_eq!(SyscallCosts::for_machine(&c).pipe_write, 624);
        c.syscall_scale = [1, 1];
        assert_eq!(SyscallCosts::for_machine(&c).pipe_write, 156);
        c.channel_ns = Some([250, 260, 0, 800]);
        let m = SyscallCosts::for_machine(&c);
        assert_eq!(
            (m.pipe_write, m.pipe_read, m.unix_write, m.unix_read),
            (250, 260, 1, 800)
        );
        c.channel_ns = None;
        c.syscall_scale = [1, REFERENCE_SWITCH_NS];
        let y = SyscallCosts::for_machine(&c);
        assert!(y.mutex >= 1 && y.cond >= 1 && y.sem >= 1 && y.pipe_read >= 1);
    }
}
