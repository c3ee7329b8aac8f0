//! CPU time of the syscalls (and libc fast paths) a behaviour program's
//! ops stand for: pipe and AF_UNIX stream reads and writes, futex calls,
//! and the uncontended pthread mutex / condition variable / semaphore
//! paths rt-app's events take.
//!
//! Source: an independent measurement on the host this model was built on
//! (`scripts/measure/syscost.c`: minimum over 40 batches of the mean per call,
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
//!
//! Cross-CPU channel cost: a channel's shared state (a pipe's
//! `pipe_inode_info`, its mutex, ring head and tail and the page being
//! merged into; a socket's receive-queue lock and list, the sender's
//! `sk_wmem_alloc`, the skb freed on another CPU than allocated it) sits
//! in cache lines that the CPU which last used the channel holds. A call
//! on another CPU first pulls those lines over: it costs
//! `SyscallCosts::xcpu[distance][kind]` more, by the distance class of
//! the two CPUs (`Machine::distance`: SMT sibling, same LLC, other LLC,
//! other package). The extra is measured on the host, a writer and a
//! reader of 100-byte messages taking turns from two CPUs against the same
//! calls on one CPU (`scripts/measure/xcpu-stream.c --lockstep`), and expressed in
//! cache-line transfers: host extra / the host's core-to-core latency
//! measured alongside. A machine pays that many transfers at its own
//! core-to-core latency for the distance class
//! (`MachineCosts::line_transfer_ns`, documented per preset). A machine
//! whose cross-CPU extras were measured on itself (a recording's
//! costs.json, `MachineCosts::channel_xcpu_ns`) pays those at every
//! distance.
//!
//! A read's lines have two sources: the channel's shared state, from the
//! CPU that used the channel last, and the message it takes, from the CPU
//! that wrote it (`SyscallCosts::xmsg`; `sched/msg_origin.rs` keeps each
//! queued message's CPU). A reader draining a backlog finds the shared
//! state on its own CPU after its first read but still pulls every
//! message from its writer's. The split is measured on the host
//! (`HOST_READ_MSG_LINES_MILLI`); a reader of the message just written on
//! the other CPU pays both, the lockstep figure.

use crate::machine::{Distance, MachineCosts};
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

/// Host: cache-line transfers one call pays when its channel was last used
/// on the other CPU, in thousandths, for a pipe write, pipe read, AF_UNIX
/// write and AF_UNIX read of 100 bytes. Measured by `scripts/measure/xcpu-stream.c
/// --lockstep` (2026-11-26 01:05 UTC, nice -20, load average 7-8): a writer
/// on CPU 0 and a reader on CPU 1 take turns one message at a time, each
/// call timed alone; the median call minus the median of the same calls by
/// one thread on one CPU is the extra (pipe 171 / 320 ns, unix 201 / 601
/// ns), divided by the core-to-core latency measured right before and after
/// (CAS ping-pong, round trip / 2: 122 ns, the host's two vCPUs then on two
/// cores; 28-121 ns for the unix chunks). Medians over 41 chunks of 10 000
/// calls: 1.40 [quartiles 1.39-1.41], 2.62 [2.55-2.62], 1.66 [1.43-1.81],
/// 5.02 [2.16-5.13] lines (docs/syscall-costs.md, "Cross-CPU channel cost").
const HOST_LINES_PER_CALL_MILLI: [Nanos; 4] = [1_400, 2_620, 1_660, 5_020];
/// Host: of a read's lines above, those the message brings from the CPU
/// that wrote it, in thousandths (pipe read, unix read): the page's data
/// (a pipe), the skb, its data and its free (a socket). The rest of a
/// read's lines are the channel's shared state (the ring's head and tail,
/// the queue head, the lock), which come from the CPU that used the
/// channel last. Measured by `scripts/measure/xcpu-stream.c --backlog`
/// (2026-11-26 18:33-18:38 UTC, nice -20): a writer writes 32 messages on
/// one CPU, then a reader drains them on the other; the reads after the
/// first find the shared state on their own CPU and pay only for the
/// message, against the same on one CPU, divided by the core-to-core
/// latency measured beside each chunk. Two runs at the two-core placement
/// (c2c 114 and 126 ns), medians of 41 chunks: pipe 1.14 [0.46-1.62] and
/// 1.65 [1.60-1.67] lines, unix 5.25 [3.93-7.29] and 4.40 [3.39-6.95]:
/// their means, 1.40 and 4.83 (docs/syscall-costs.md, "What a message
/// brings"). A unix read's lines come almost all with its message.
const HOST_READ_MSG_LINES_MILLI: [Nanos; 2] = [1_400, 4_830];
/// Host: the part of a channel call spent under the channel's lock, in
/// thousandths of the call (pipe write, pipe read, unix write, unix read),
/// beside the cache lines the section takes (`xcpu`, which count in the
/// hold too). Two writers into one pipe (`scripts/measure/chanlock.c`,
/// docs/syscall-costs.md "Two writers on one channel" and "The pipe
/// mutex's section, timed"): lock time per call L = W + c2c x (1.40 + h),
/// 1.40 the write's lines (lockstep figure) and h the handoff's; L = 459
/// ns across two cores (c2c 123 ns, the pair lock-bound at 2.18 calls/us)
/// and 134 ns on one core's two threads (c2c 28 ns, hold plus the wait at
/// the end of the window `chanlock --phase` timed, 315 chunks), which
/// give W = 38 ns (range -29..71 over the runs' spread) of a 255 ns call:
/// 0.15. The phase scan's window ends put W at 0-40 ns: the hold is mostly
/// lines. pipe_read is taken to have the same shape. The unix write's
/// section (queueing one skb on the peer) is below what two writers
/// resolve: their contended calls paid the cross-CPU lines alone and no
/// wait; its hold is the lines it takes (below) and the handoff.
const HOST_IN_LOCK_MILLI: [Nanos; 4] = [150, 150, 0, 0];
/// Host: cache-line transfers of a lock handoff to a waiter, in
/// thousandths: h of the two-placement fit above, 2.0 (1.8-2.6), and the
/// same from the two-core window end (459 - 211 ns) / 123 ns = 2.0 (the
/// mutex's owner word and MCS queue moving to the spinning waiter). The
/// same applied to the socket's spinlocks (not measured apart).
const HOST_HANDOFF_LINES_MILLI: Nanos = 2_000;
/// The sleep path of a channel call that blocks (pipe, AF_UNIX stream),
/// in thousandths of the context switch measured beside it. pipe_read
/// with an empty ring and pipe_write with a full one queue the task on
/// the pipe's wait queue, drop `pipe->mutex`, call schedule(), and once
/// woken leave the wait queue and take the mutex again;
/// unix_stream_read_generic drops the state lock and sleeps in its
/// data wait the same way, and a unix writer in the send-buffer wait.
/// Measured on the AMD EPYC guest, 2026-11-27 00:42-00:51 UTC
/// (`scripts/host/wakecost.c --hop-only`, docs/syscall-costs.md "The sleep
/// path of a blocking call"): two threads on one CPU ping-pong 1-byte
/// messages; a hop (a waking write, the writer's blocking read, the
/// switch, the woken read's return) less what the model charges for it
/// (two plain calls, the wakeup, the switch), each repetition's figures
/// measured back to back, over that repetition's switch. Medians of 7
/// repetitions in each of 5 runs: pipe 0.37 0.49 0.17 0.33 0.39 (632 ns
/// [300-833] at a 1.5-1.8 µs switch), unix 0.50 0.64 0.50 0.42 0.14 (806
/// ns [202-1126]); their medians, 0.371 and 0.497. The same hop over a
/// futex word, which the model prices as two futex syscalls, leaves 172
/// ns [-67..250]: the scheduler's own part of blocking and waking is in
/// the wakeup and the switch already, and what is left over a channel is
/// its sleep path. Fair and SCHED_FIFO hops cost the same (fair - FIFO:
/// pipe -74 ns, unix -310, futex -438, medians of the runs): none of it
/// is the fair class's. The unix call takes the pipe's wakeup figure, as
/// the model does (`wakeup_ns` is one figure).
const HOST_SLEEP_SWITCH_MILLI: [Nanos; 2] = [371, 497];
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
    /// Extra CPU time of a channel call (index: pipe write, pipe read,
    /// unix write, unix read) whose channel was last used on a CPU at
    /// distance `Distance as usize` (0 = the same CPU: nothing). For the
    /// reads, the shared state's part only (`xmsg` is the message's).
    pub xcpu: [[Nanos; 4]; 7],
    /// Extra CPU time of a read (index: pipe read, unix read) whose
    /// message was written on a CPU at distance `Distance as usize`.
    pub xmsg: [[Nanos; 2]; 7],
    /// CPU time of a channel call (index as `xcpu`) spent under the
    /// channel's lock, its cross-CPU extra aside (`sched/chan_lock.rs`).
    pub in_lock: [Nanos; 4],
    /// A lock handoff to a waiter on a CPU at distance `Distance as
    /// usize` from the previous holder (0 = the same CPU: nothing).
    pub handoff: [Nanos; 7],
    /// The sleep path of a pipe call and of a unix call that blocked,
    /// paid once woken, before its second pass.
    pub chan_sleep: [Nanos; 2],
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
            xcpu: xcpu_table(c),
            xmsg: xmsg_table(c),
            in_lock: [0, 1, 2, 3].map(|k| ch[k] * HOST_IN_LOCK_MILLI[k] / 1_000),
            handoff: handoff_table(c),
            chan_sleep: c
                .chan_sleep_ns
                .unwrap_or(HOST_SLEEP_SWITCH_MILLI.map(|m| c.context_switch_ns * m / 1_000)),
        }
    }

    /// Extra CPU time of a channel call of `kind` (0 pipe write, 1 pipe
    /// read, 2 unix write, 3 unix read) on a CPU at `d` from the CPU that
    /// last used the channel.
    #[inline]
    pub fn xcpu_ns(&self, d: Distance, kind: usize) -> Nanos {
        self.xcpu[d as usize][kind]
    }

    /// Extra CPU time of a read of `kind` (1 pipe read, 3 unix read) for
    /// the message it takes, written on a CPU at `d` from the reader's.
    #[inline]
    pub fn xmsg_ns(&self, d: Distance, kind: usize) -> Nanos {
        self.xmsg[d as usize][kind / 2]
    }
}

/// A read's lines (`kind` 1 or 3): those its message brings, and the
/// shared state's, in thousandths.
fn read_split(kind: usize) -> (Nanos, Nanos) {
    let total = HOST_LINES_PER_CALL_MILLI[kind];
    let msg = HOST_READ_MSG_LINES_MILLI[kind / 2].min(total);
    (msg, total - msg)
}

/// The message's part of each read's cross-CPU extra by distance class:
/// the host's lines at the machine's core-to-core latency, or the
/// machine's own measured extra split in the host's proportion.
fn xmsg_table(c: &MachineCosts) -> [[Nanos; 2]; 7] {
    let mut t = [[0; 2]; 7];
    for (d, row) in t.iter_mut().enumerate().skip(1) {
        for (r, x) in row.iter_mut().enumerate() {
            let kind = 2 * r + 1;
            let (msg, _) = read_split(kind);
            *x = match c.channel_xcpu_ns {
                Some(m) => m[kind] * msg / HOST_LINES_PER_CALL_MILLI[kind],
                None => msg * c.line_transfer_ns[d] / 1_000,
            };
        }
    }
    t
}

/// The lock handoff of each distance class: the host's lines at the
/// machine's core-to-core latency (the same CPU: nothing).
fn handoff_table(c: &MachineCosts) -> [Nanos; 7] {
    let mut t = [0; 7];
    for (d, x) in t.iter_mut().enumerate().skip(1) {
        *x = HOST_HANDOFF_LINES_MILLI * c.line_transfer_ns[d] / 1_000;
    }
    t
}

/// The cross-CPU extras of each distance class (module docs): measured on
/// the machine itself when given, else the host's line transfers per call
/// at the machine's core-to-core latency. The same CPU pays nothing.
fn xcpu_table(c: &MachineCosts) -> [[Nanos; 4]; 7] {
    let mut t = [[0; 4]; 7];
    for (d, row) in t.iter_mut().enumerate().skip(1) {
        for (k, x) in row.iter_mut().enumerate() {
            // A read's own part: the shared state's lines (its message's
            // are `xmsg_table`'s).
            let lines = if k % 2 == 1 {
                read_split(k).1
            } else {
                HOST_LINES_PER_CALL_MILLI[k]
            };
            *x = match c.channel_xcpu_ns {
                Some(m) => m[k] * lines / HOST_LINES_PER_CALL_MILLI[k],
                None => lines * c.line_transfer_ns[d] / 1_000,
            };
        }
    }
    t
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

    /// Hand-worked: the sleep path is the host's share of the machine's
    /// switch (icx's 2 µs: 742 and 994 ns; a7-octa's 8 µs: four times
    /// that), or the machine's own measured figure.
    #[test]
    fn the_sleep_path_is_a_share_of_the_switch_or_measured() {
        let mut c = crate::machine::presets::default_costs();
        assert_eq!(c.context_switch_ns, 2_000);
        assert_eq!(SyscallCosts::for_machine(&c).chan_sleep, [742, 994]);
        c.context_switch_ns = 8_000;
        assert_eq!(SyscallCosts::for_machine(&c).chan_sleep, [2_968, 3_976]);
        c.chan_sleep_ns = Some([632, 806]);
        assert_eq!(SyscallCosts::for_machine(&c).chan_sleep, [632, 806]);
    }

    /// Hand-worked: the host's lines per call at the machine's latency of
    /// the distance class.
    #[test]
    fn cross_cpu_extra_is_the_host_lines_at_the_machine_latency() {
        let mut c = crate::machine::presets::default_costs();
        c.line_transfer_ns = [5, 8, 8, 51, 51, 108, 108];
        let x = SyscallCosts::for_machine(&c);
        assert_eq!(x.xcpu_ns(Distance::SameCpu, 0), 0);
        // Pipe write: 1.40 lines; 8 ns between SMT siblings: 11.2 -> 11.
        assert_eq!(x.xcpu_ns(Distance::SameCore, 0), 11);
        // 1.40 x 51 = 71.4. A pipe read's 2.62 lines: 1.40 its message's
        // (71.4 -> 71), 1.22 the shared state's (62.2 -> 62).
        assert_eq!(x.xcpu_ns(Distance::SameLlc, 0), 71);
        assert_eq!(x.xcpu_ns(Distance::SameLlc, 1), 62);
        assert_eq!(x.xmsg_ns(Distance::SameLlc, 1), 71);
        // Across packages: a unix read's 5.02 lines, 4.83 its message's
        // (x 108 = 521.6 -> 521), 0.19 the state's (20.5 -> 20).
        assert_eq!(x.xcpu_ns(Distance::OtherPackage, 3), 20);
        assert_eq!(x.xmsg_ns(Distance::OtherPackage, 3), 521);
        assert_eq!(x.xcpu_ns(Distance::OtherPackage, 2), 179);
        assert_eq!(x.xmsg_ns(Distance::SameCpu, 3), 0);
        // Measured on the machine itself: those figures at every distance,
        // a read's split in the host's proportion (pipe read 2000: 1400 /
        // 2620 of it, 1068.7 -> 1068, and the rest 1220 / 2620, 931.3 ->
        // 931; unix read 4000: 4830 / 5020, 3848.6 -> 3848, and 151).
        c.channel_xcpu_ns = Some([1000, 2000, 3000, 4000]);
        let m = SyscallCosts::for_machine(&c);
        assert_eq!(m.xcpu[0], [0; 4]);
        assert!(m.xcpu[1..].iter().all(|r| *r == [1000, 931, 3000, 151]));
        assert!(m.xmsg[1..].iter().all(|r| *r == [1068, 3848]));
    }

    /// Hand-worked: the lock's share of each call and the handoff.
    #[test]
    fn in_lock_share_and_handoff() {
        let mut c = crate::machine::presets::default_costs();
        c.line_transfer_ns = [5, 8, 8, 51, 51, 108, 108];
        let x = SyscallCosts::for_machine(&c);
        // 0.15 of 156 = 23.4 -> 23; of 165: 24.75 -> 24.
        assert_eq!(x.in_lock, [23, 24, 0, 0]);
        assert_eq!(x.handoff[0], 0);
        // 2.0 lines: 102 in an LLC, 216 across packages.
        assert_eq!(x.handoff[Distance::SameLlc as usize], 102);
        assert_eq!(x.handoff[Distance::OtherPackage as usize], 216);
    }
}
