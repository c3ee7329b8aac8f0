//! What the simulator reports while it runs: the [`Sink`] trait, one method
//! per tracepoint, in the push style of ripgrep's `Sink`.
//!
//! The engine is generic over the sink, so a run without `--trace` pays only
//! for an inlined empty call. Writers (ftrace text, trace.dat, Perfetto)
//! live in `schedlab-output` and implement this trait.

use crate::ids::{CpuId, TaskId};
use crate::stats::LogRow;
use crate::time::Nanos;

/// A task as a tracepoint names it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TaskView<'a> {
    /// Thread id; 0 is the idle task (`swapper/N`).
    pub pid: u32,
    /// comm (at most 15 characters in a real kernel; we keep the full name).
    pub comm: &'a str,
    /// Kernel priority: `120 + nice` for fair tasks.
    pub prio: i32,
}

/// How the previous task left the CPU (`prev_state` of sched_switch).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable, gave up the CPU voluntarily (`R`), or the idle task.
    Runnable,
    /// Still runnable, preempted (`R+`).
    Preempted,
    /// Interruptible sleep (`S`).
    Sleeping,
    /// Uninterruptible sleep (`D`).
    Uninterruptible,
    /// Exiting (`Z`).
    Dead,
}

impl PrevState {
    /// The letters the kernel prints.
    pub fn as_str(self) -> &'static str {
        match self {
            PrevState::Runnable => "R",
            PrevState::Preempted => "R+",
            PrevState::Sleeping => "S",
            PrevState::Uninterruptible => "D",
            PrevState::Dead => "Z",
        }
    }
    /// Parses the kernel letters (the subset above; `X` reads as Dead,
    /// `I` as Uninterruptible-like idle).
    pub fn parse(s: &str) -> Option<PrevState> {
        Some(match s {
            "R" => PrevState::Runnable,
            "R+" => PrevState::Preempted,
            "S" => PrevState::Sleeping,
            "D" | "I" => PrevState::Uninterruptible,
            "Z" | "X" => PrevState::Dead,
            _ => return None,
        })
    }
}

/// A scheduler tracepoint's payload.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TraceEvent<'a> {
    /// `sched_switch`.
    SchedSwitch {
        /// Task leaving the CPU.
        prev: TaskView<'a>,
        /// Its state.
        prev_state: PrevState,
        /// Task taking the CPU.
        next: TaskView<'a>,
    },
    /// `sched_waking` (in the waker's context).
    SchedWaking {
        /// The wakee.
        task: TaskView<'a>,
        /// CPU chosen by select_task_rq.
        target_cpu: CpuId,
    },
    /// `sched_wakeup` (the wakee is runnable on `target_cpu`).
    SchedWakeup {
        /// The wakee.
        task: TaskView<'a>,
        /// Its runqueue.
        target_cpu: CpuId,
    },
    /// `sched_wakeup_new` (first wakeup of a new task).
    SchedWakeupNew {
        /// The new task.
        task: TaskView<'a>,
        /// Its runqueue.
        target_cpu: CpuId,
    },
    /// `sched_migrate_task`.
    SchedMigrateTask {
        /// The task moved.
        task: TaskView<'a>,
        /// From.
        orig_cpu: CpuId,
        /// To.
        dest_cpu: CpuId,
    },
    /// A write to `trace_marker` (`print`, shown as `tracing_mark_write:`
    /// in the trace file): rt-app's `rtapp_*` markers.
    Print {
        /// The text written.
        text: &'a str,
    },
    /// `sched_process_fork` (`kernel_clone`, in the parent's context,
    /// before `sched_wakeup_new`).
    SchedProcessFork {
        /// The forking task.
        parent: TaskView<'a>,
        /// The child: its pid, and the comm it was born with (the parent's,
        /// which the kernel copies at fork).
        child: TaskView<'a>,
    },
    /// `task_rename` (`__set_task_comm`): the task's comm changes.
    TaskRename {
        /// The task, with its new comm.
        task: TaskView<'a>,
        /// The comm it had.
        oldcomm: &'a str,
    },
    /// `sched_process_exit` (`do_exit`, in the exiting task's context).
    SchedProcessExit {
        /// The exiting task.
        task: TaskView<'a>,
    },
    /// `sched_process_free` (the task's last reference dropped).
    SchedProcessFree {
        /// The task freed.
        task: TaskView<'a>,
    },
    /// `sched_stat_runtime` (`update_curr`, and `update_curr_common` for
    /// RT and deadline tasks as since Linux 6.8): CPU time accounted to the
    /// running task since its last update.
    SchedStatRuntime {
        /// The running task.
        task: TaskView<'a>,
        /// Nanoseconds accounted.
        runtime: u64,
    },
    /// `cpu_idle` (power subsystem): the CPU enters idle state `state` (the
    /// index in the machine's idle state table, cpuidle's numbering) or,
    /// with [`CPU_IDLE_EXIT`], leaves it.
    CpuIdle {
        /// State index, or [`CPU_IDLE_EXIT`].
        state: u32,
        /// The CPU (always the CPU the record is on).
        cpu_id: CpuId,
    },
}

/// `cpu_idle`'s state on exit: the kernel passes `PWR_EVENT_EXIT` (-1) into
/// an unsigned 32-bit field, so traces show 4294967295.
pub const CPU_IDLE_EXIT: u32 = u32::MAX;

impl TraceEvent<'_> {
    /// The tracepoint's name as the kernel prints it (`print` is the ftrace
    /// event a `trace_marker` write records).
    pub fn name(&self) -> &'static str {
        match self {
            TraceEvent::SchedSwitch { .. } => "sched_switch",
            TraceEvent::SchedWaking { .. } => "sched_waking",
            TraceEvent::SchedWakeup { .. } => "sched_wakeup",
            TraceEvent::SchedWakeupNew { .. } => "sched_wakeup_new",
            TraceEvent::SchedMigrateTask { .. } => "sched_migrate_task",
            TraceEvent::Print { .. } => "print",
            TraceEvent::SchedProcessFork { .. } => "sched_process_fork",
            TraceEvent::TaskRename { .. } => "task_rename",
            TraceEvent::SchedProcessExit { .. } => "sched_process_exit",
            TraceEvent::SchedProcessFree { .. } => "sched_process_free",
            TraceEvent::SchedStatRuntime { .. } => "sched_stat_runtime",
            TraceEvent::CpuIdle { .. } => "cpu_idle",
        }
    }
}

impl<'a> TraceEvent<'a> {
    /// The tasks the payload names (prev and next of a switch, the task of
    /// the others, the parent of a fork, none for a print or cpu_idle).
    pub fn tasks(&self) -> impl Iterator<Item = &TaskView<'a>> {
        let (a, b) = match self {
            TraceEvent::SchedSwitch { prev, next, .. } => (Some(prev), Some(next)),
            TraceEvent::SchedWaking { task, .. }
            | TraceEvent::SchedWakeup { task, .. }
            | TraceEvent::SchedWakeupNew { task, .. }
            | TraceEvent::SchedMigrateTask { task, .. }
            | TraceEvent::TaskRename { task, .. }
            | TraceEvent::SchedProcessExit { task }
            | TraceEvent::SchedProcessFree { task }
            | TraceEvent::SchedStatRuntime { task, .. } => (Some(task), None),
            // The child's comm is the parent's until it is renamed: only
            // the parent names itself.
            TraceEvent::SchedProcessFork { parent, .. } => (Some(parent), None),
            TraceEvent::Print { .. } | TraceEvent::CpuIdle { .. } => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// One trace line: who (context task) on which CPU at what time did what.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TraceRecord<'a> {
    /// Time in ns since the simulated boot (the trace clock).
    pub time: Nanos,
    /// CPU the event was recorded on.
    pub cpu: CpuId,
    /// Task whose context recorded it (the `TASK-PID` column).
    pub ctx: TaskView<'a>,
    /// The five latency-format flag characters (`d..2.`).
    pub flags: [u8; 5],
    /// The event.
    pub event: TraceEvent<'a>,
}

/// Receiver of everything the simulator reports.
pub trait Sink {
    /// Does this sink want tracepoints? When false the engine skips building
    /// records.
    fn wants_trace(&self) -> bool {
        false
    }
    /// One tracepoint hit.
    fn trace(&mut self, _rec: &TraceRecord<'_>) {}
}

/// A sink that ignores everything.
#[derive(Default, Debug, Clone, Copy)]
pub struct NullSink;
impl Sink for NullSink {}

/// A sink that only counts the records of each tracepoint (for tests and
/// quick checks; it keeps no record).
#[derive(Default, Debug, Clone)]
pub struct CountingSink {
    /// Number of records per event kind: switch, waking, wakeup,
    /// wakeup_new, migrate, print, process_fork, task_rename, process_exit,
    /// process_free, stat_runtime, cpu_idle.
    pub counts: [u64; 12],
}
impl Sink for CountingSink {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        let i = match rec.event {
            TraceEvent::SchedSwitch { .. } => 0,
            TraceEvent::SchedWaking { .. } => 1,
            TraceEvent::SchedWakeup { .. } => 2,
            TraceEvent::SchedWakeupNew { .. } => 3,
            TraceEvent::SchedMigrateTask { .. } => 4,
            TraceEvent::Print { .. } => 5,
            TraceEvent::SchedProcessFork { .. } => 6,
            TraceEvent::TaskRename { .. } => 7,
            TraceEvent::SchedProcessExit { .. } => 8,
            TraceEvent::SchedProcessFree { .. } => 9,
            TraceEvent::SchedStatRuntime { .. } => 10,
            TraceEvent::CpuIdle { .. } => 11,
        };
        self.counts[i] += 1;
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn wants_trace(&self) -> bool {
        (**self).wants_trace()
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        (**self).trace(rec)
    }
}

/// Receiver of the rt-app log rows when the simulator streams them
/// ([`crate::Sim::stream_rows`]): one call per completed iteration of a
/// thread that logs, in simulated-time order, instead of keeping the row
/// in the thread's `log`. It cannot fail mid-run: an implementation keeps
/// its first error and reports it from its own `finish`.
pub trait RowSink {
    /// Thread `task` (named `name`) completed an iteration.
    fn row(&mut self, task: TaskId, name: &str, row: &LogRow);
    /// Ends the stream (flushes what is buffered); the first error of the
    /// run, if any.
    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A row sink that drops the rows (a run that writes no logs, such as
/// `schedlab run` without `--out`: the statistics are kept by the tasks).
#[derive(Default, Debug, Clone, Copy)]
pub struct DiscardRows;
impl RowSink for DiscardRows {
    fn row(&mut self, _task: TaskId, _name: &str, _row: &LogRow) {}
}
