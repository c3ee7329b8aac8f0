//! A remote wake-up's cache lines: what `try_to_wake_up` costs the waker
//! when it enqueues the task on another CPU's runqueue itself, and what
//! the wakee's first switch in on that CPU costs beyond one after a local
//! enqueue.
//!
//! Mechanism: when the target CPU has tasks queued, `ttwu_queue_cond`
//! refuses the wakelist and the waker activates the task under the
//! target's runqueue lock (`ttwu_do_activate` from the waker's CPU; the
//! same for `ttwu_runnable`'s requeue of a delayed task). That reads and
//! writes lines the target CPU owns: the rq lock and the rq's clock and
//! counts, the cfs_rq of every level the enqueue walks (load, PELT sums,
//! the tree), and the wakee's `task_struct` and entities (`pi_lock`,
//! `on_rq`, `state`, the entity's vruntime and averages, last written on
//! the target when the task went to sleep there). The waker stalls on each
//! transfer. When the target next switches to the wakee, its `__schedule`
//! pulls the rq, cfs_rq and wakee lines back from the waker's cache. The
//! model's `wakeup_ns` and `context_switch_ns` are one-CPU figures, so
//! neither transfer was in them. A wake-up through the wakelist (an idle
//! target) is the target's own work, paid as the IPI
//! (`MachineCosts::ipi_send_ns`, `ipi_latency_ns`): no charge here.
//!
//! Source: an independent measurement on this project's host
//! (`scripts/host/wakecost.c --busy-only`, "busy-target"; docs/syscall-costs.md,
//! "Remote wake-up onto a busy CPU"): a SCHED_FIFO waker on CPU 0 wakes a
//! SCHED_BATCH task blocked on a futex while CPU 1 runs a SCHED_FIFO task
//! (no idle exit, no wakelist, no preemption, no IPI: counted with the ipi
//! tracepoints), against the same with the wakee on the waker's CPU. The
//! remote − local extra of the waker's `futex(WAKE)` and of the wakee's
//! whole cycle (switch in, return, next wait, switch out), divided by the
//! core-to-core latency measured around each repetition (CAS ping-pong,
//! round trip / 2), is the number of line transfers each side pays. A
//! machine pays those at its own latency for the distance class
//! (`MachineCosts::line_transfer_ns`, documented per preset); a machine
//! measured itself (a recording's costs.json, `MachineCosts::
//! wakeup_xcpu_ns` / `switch_xcpu_ns`) pays its figures at every distance.
//! A new task's first enqueue (`wake_up_new_task` onto another CPU) was not
//! measured and is not charged.

use crate::ids::{CpuId, TaskId};
use crate::machine::{Distance, MachineCosts};
use crate::sim::Sim;
use crate::stats::Path;
use crate::time::Nanos;

/// Host: line transfers the waker pays for one remote enqueue, in
/// thousandths. `scripts/host/wakecost.c --busy-only`, futex channel, three
/// runs of 7 repetitions with the two vCPUs on two cores (CAS latency
/// 121-123 ns; 2026-11-26 09:14, 09:33, 09:34 UTC, nice -20, load average
/// 6-10): medians 1 150, 896, 855 ns = 9.5, 7.29, 6.93 lines; the median
/// run, 7.3. With the vCPUs on one core's two threads (CAS 22-29 ns) the
/// waker pays 7.4-8.3 lines of that latency (docs/syscall-costs.md).
pub const HOST_WAKER_LINES_MILLI: Nanos = 7_300;
/// Host: line transfers the wakee's switch in pays after a remote enqueue,
/// in thousandths: the same runs, the wakee's side, medians 1 033, 1 014,
/// 1 113 ns = 8.5, 8.43, 9.01 lines; the median run, 8.5. (On one core's
/// two threads, 1.3-3.3 lines: SMT siblings share the caches the reads
/// come from, which a CAS ping-pong does not show.)
pub const HOST_WAKEE_LINES_MILLI: Nanos = 8_500;

/// The waker's extra for a remote enqueue at distance `d`.
pub fn waker_ns(c: &MachineCosts, d: Distance) -> Nanos {
    if d == Distance::SameCpu {
        return 0;
    }
    c.wakeup_xcpu_ns
        .unwrap_or(HOST_WAKER_LINES_MILLI * c.line_transfer_ns[d as usize] / 1_000)
}

/// The wakee's extra at its switch in, `d` from the CPU that enqueued it.
pub fn wakee_ns(c: &MachineCosts, d: Distance) -> Nanos {
    if d == Distance::SameCpu {
        return 0;
    }
    c.switch_xcpu_ns
        .unwrap_or(HOST_WAKEE_LINES_MILLI * c.line_transfer_ns[d as usize] / 1_000)
}

impl<S: crate::observe::Sink> Sim<S> {
    /// The waker on `waker_cpu` enqueues `t` on `target`'s runqueue
    /// itself: it pays the lines (as wake-up work, in its task's context
    /// when `in_task`), and `t` remembers where it was enqueued from for
    /// its switch in. Nothing when `target` is the waker's own CPU.
    pub(crate) fn charge_remote_enqueue(
        &mut self,
        t: TaskId,
        target: CpuId,
        waker_cpu: CpuId,
        in_task: bool,
    ) {
        if target == waker_cpu {
            return;
        }
        let cost = waker_ns(
            &self.machine.costs,
            self.machine.distance(waker_cpu, target),
        );
        self.charge_waker(waker_cpu, cost, Path::Wakeup, in_task);
        self.sched.tasks[t.idx()].enqueued_from = Some(waker_cpu);
    }

    /// The extra of switching `next` in on `cpu`: the lines back from the
    /// CPU that enqueued it, once, if that was another CPU.
    pub(crate) fn remote_switch_in_ns(&mut self, next: TaskId, cpu: CpuId) -> Nanos {
        match self.sched.tasks[next.idx()].enqueued_from.take() {
            Some(w) if w != cpu => wakee_ns(&self.machine.costs, self.machine.distance(w, cpu)),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked: the host's lines at the machine's latency of the
    /// distance class; a measured machine's figures at every distance.
    #[test]
    fn lines_at_the_machine_latency_or_the_measured_figures() {
        let mut c = crate::machine::presets::default_costs();
        c.line_transfer_ns = [5, 8, 8, 51, 51, 108, 108];
        assert_eq!(waker_ns(&c, Distance::SameCpu), 0);
        assert_eq!(wakee_ns(&c, Distance::SameCpu), 0);
        // SMT siblings: 8 ns a line.
        assert_eq!(
            waker_ns(&c, Distance::SameCore),
            HOST_WAKER_LINES_MILLI * 8 / 1_000
        );
        // Same LLC at 51 ns, other package at 108 ns.
        assert_eq!(
            waker_ns(&c, Distance::SameLlc),
            HOST_WAKER_LINES_MILLI * 51 / 1_000
        );
        assert_eq!(
            wakee_ns(&c, Distance::OtherPackage),
            HOST_WAKEE_LINES_MILLI * 108 / 1_000
        );
        c.wakeup_xcpu_ns = Some(1_150);
        c.switch_xcpu_ns = Some(1_030);
        assert_eq!(waker_ns(&c, Distance::SameCore), 1_150);
        assert_eq!(wakee_ns(&c, Distance::OtherPackage), 1_030);
        assert_eq!(waker_ns(&c, Distance::SameCpu), 0);
    }
}
