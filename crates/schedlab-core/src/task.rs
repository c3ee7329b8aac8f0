//! A task's run-time state: scheduling identity, where it is, where its
//! behaviour program stands, and its measurements.

use crate::ids::{CpuId, EntityId, TaskId};
use crate::machine::CpuMask;
use crate::program::{DlParams, Policy, TaskSpec};
use crate::stats::{LatencySamples, LogRow, SlackStats, TaskStats};
use crate::time::Nanos;

/// Where a task is in its life.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Not created yet.
    New,
    /// Queued on a runqueue (running or waiting).
    Runnable,
    /// A wakeup is on its way to the target CPU (TTWU_QUEUE IPI in flight).
    Waking,
    /// Blocked on a timer.
    Sleeping,
    /// Runnable but parked on its cfs_rq's limbo list by per-task bandwidth
    /// throttling (`p->throttled`); back on the queue at unthrottle.
    Throttled,
    /// Finished.
    Dead,
}

/// The interpreter's position in the program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pc {
    /// Completed passes over the phase list.
    pub task_loop: u64,
    /// Current phase.
    pub phase: usize,
    /// Completed iterations of the current phase.
    pub phase_iter: u64,
    /// Current op within the iteration.
    pub op: usize,
    /// The current op has started (its state below is valid).
    pub op_started: bool,
    /// An iteration is open (its start was recorded).
    pub iter_open: bool,
    /// The program has finished.
    pub done: bool,
}

/// Accumulators of the current rt-app iteration (formats-spec.md 2.3).
#[derive(Clone, Debug, Default)]
pub struct Iteration {
    /// Start time.
    pub start: Nanos,
    /// perf column.
    pub perf: u64,
    /// run column (µs, summed per event).
    pub run_us: u64,
    /// slack column.
    pub slack_us: i64,
    /// c_duration column.
    pub c_duration_us: u64,
    /// c_period column.
    pub c_period_us: u64,
    /// wu_lat column.
    pub wu_lat_us: u64,
    /// The iteration had a timer event that slept (a wu_lat sample).
    pub timer_slept: bool,
}

/// A task.
///
/// `repr(C)` keeps the fields in the order written: the ones a wakeup, a
/// switch and a run step touch first, together, then the per-iteration
/// accumulators, then the fields of rarer ops and classes. With tens of
/// thousands of tasks the task a wakeup or a switch touches is rarely in
/// cache, and the compiler's own order spread those fields over most of
/// the struct's ~15 cache lines.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Task {
    /// Its id.
    pub id: TaskId,
    /// Its scheduling entity.
    pub se: EntityId,
    /// CPU it is on (or last ran on).
    pub cpu: CpuId,
    /// Life state.
    pub state: TaskState,
    /// Current policy.
    pub policy: Policy,
    /// Effective kernel prio (`p->prio`: 0..99 RT, 100..139 fair, −1
    /// deadline), priority inheritance included.
    pub prio: i32,
    /// Prio from the policy alone (`normal_prio`).
    pub normal_prio: i32,
    /// Current nice.
    pub nice: i32,
    /// Weight of `cpus_allowed` (`p->nr_cpus_allowed`).
    pub nr_cpus_allowed: u32,
    /// Task group.
    pub group: crate::ids::GroupId,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: CpuId,
    /// Generation of the armed hrtimer.
    pub timer_gen: u32,
    /// CPU the hrtimer is armed on.
    pub timer_cpu: CpuId,
    /// What to do when the task next gets the CPU.
    pub resume: Resume,
    /// The timer op it blocked in counts for wu_lat.
    pub wake_is_timer: bool,
    /// The current channel syscall had to sleep (a pipe writer that waited
    /// wakes the next writer; a reader, the next reader).
    pub chan_waited: bool,
    /// A throttle task_work is pending: the task parks itself when it next
    /// returns to user space (per-task and unified throttling).
    pub throttle_work: bool,
    /// A helper task of the simulator (rt-app's main thread), not a thread
    /// of the workload: it has no log and is not in summary.json.
    pub internal: bool,
    /// rt-app's start `delay` has been slept.
    pub delay_done: bool,
    /// Passed rt-app's start barrier.
    pub barrier_done: bool,
    /// Where a blocking synchronisation op stands (see `exec::sync_op`).
    pub sync_stage: u8,
    /// What the current channel syscall, woken from sleep on its channel,
    /// still has to pay before it acts (`exec::pay_retry`).
    pub chan_retry: ChanRetry,
    /// Thread id shown in traces.
    pub pid: u32,
    /// When it became runnable-waiting (for wait time and run_delay).
    pub wait_since: Option<Nanos>,
    /// Expiry the task is blocked on (timer semantics, for wu_lat).
    pub wake_expiry: Option<Nanos>,
    /// Expiry of the armed hrtimer (soft, without slack).
    pub timer_expiry: Nanos,
    /// Work left in the current Run op (ns at capacity 1024).
    pub work_left: Nanos,
    /// Start time of the current run/runtime op.
    pub op_start: Nanos,
    /// End (wall) of the current Runtime op.
    pub runtime_end: Nanos,
    /// Trace only: run time accounted at user-level op boundaries (the
    /// simulator's own steps, which the kernel does not see) and not yet
    /// reported by a `sched_stat_runtime`; the next kernel-visible
    /// `update_curr` reports it. Keeps the trace the same whether a run of
    /// syscalls is stepped one by one or fast-forwarded.
    pub stat_unreported: Nanos,
    /// RT and deadline tasks: scheduler work charged to the task
    /// (`Sim::charge_task_ctx`) that its class's `update_curr` has not
    /// yet seen; the next `update_curr_rt` / `update_curr_dl` counts it in
    /// its delta (RT time, deadline runtime), as the kernel's, whose
    /// delta runs through that work.
    pub sched_work_pending: Nanos,
    /// When it last went to the head of its runqueue's `cfs_tasks` list
    /// (enqueued or picked): the list ([`crate::sim::SchedState::cfs_tasks`])
    /// is in decreasing stamp order from its head, which `--check`
    /// verifies against a walk of the queues sorted by stamp.
    pub cfs_tasks_stamp: u64,
    /// `p->on_cpu` after the task left its CPU: until then that CPU is
    /// still switching away from it (the end of the switch's overhead
    /// window), and a wakeup takes ttwu's on_cpu path. 0 once done.
    pub on_cpu_until: Nanos,
    /// The CPU whose waker enqueued the task on another CPU's runqueue,
    /// until the task's next switch in pays the lines back
    /// (`sched/ttwu_xcpu.rs`).
    pub enqueued_from: Option<crate::ids::CpuId>,
    /// Syscalls of the current op already paid for (CPU time being spent
    /// or spent, effect pending): channel reads/writes, or 1 for a
    /// synchronisation op (`sched/channel_io.rs`, `sched/sync_obj.rs`).
    pub paid: u64,
    /// Channel op progress: next channel of a send round, or messages still
    /// to read.
    pub chan_pos: u64,
    /// When a forked thread was forked (its timers start from there).
    pub fork_time: Option<crate::time::Nanos>,
    /// Program position.
    pub pc: Pc,
    /// wake_wide bookkeeping.
    pub wakee: WakeeState,
    /// Current iteration accumulators.
    pub iter: Iteration,
    /// Counters.
    pub stats: TaskStats,
    /// Wakeup-latency samples of the completed timer iterations (kept
    /// whether or not the rows are).
    pub latency: LatencySamples,
    /// Slack of the completed timer iterations (kept whether or not the
    /// rows are).
    pub slack: SlackStats,
    /// Allowed CPUs. Assign through [`Task::set_cpus_allowed`], which
    /// keeps `nr_cpus_allowed` in step.
    pub cpus_allowed: CpuMask,
    /// The spec it was built from.
    pub spec: TaskSpec,
    // Cold: fields of ops and classes most runs do not use.
    /// Completed iterations (rt-app log rows), unless the simulator streams
    /// them out ([`crate::observe::RowSink`]).
    pub log: Vec<LogRow>,
    /// Members of a wake list being woken (`Op::ListWakeAll`), and the
    /// time read at the start of that list run.
    pub wake_batch: Vec<(TaskId, u32, u8)>,
    /// The clock read at the start of the current `Op::ListWakeAll`.
    pub wake_now: Nanos,
    /// Timestamp slots of `Op::Stamp` / `Op::Record` (`sched/futex_word.rs`).
    pub stamps: [Nanos; 2],
    /// The spinning lock `Op::CpuLock` chose (and holds once taken).
    pub spin_lock: u32,
    /// Requests spliced from its queue and not yet taken (`Op::RequestTake`).
    pub batch: u64,
    /// Round-robin position of `Op::RequestPost`.
    pub rr_next: u64,
    /// Arrival stamp in its RT queue.
    pub rt_seq: u64,
    /// SCHED_RR: what is left of the timeslice.
    pub rr_left: Nanos,
    /// Deadline-class state.
    pub dl: crate::task::DlState,
}

/// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee` of a task.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WakeeState {
    /// Switches between different wakees, halved every second.
    pub flips: u32,
    /// Last halving.
    pub decay_ts: Nanos,
    /// The task woken last.
    pub last_wakee: Option<TaskId>,
}

/// What a channel syscall woken from sleep on its channel still owes
/// (`Task::chan_retry`, `exec::pay_retry`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ChanRetry {
    /// Nothing: a fresh call, or the woken one has paid.
    Paid,
    /// Its sleep path (`SyscallCosts::chan_sleep`), then its second pass.
    SleepPath,
    /// Its second pass (`exec::chan_retry_price`).
    SecondPass,
}

/// What a task does when it next runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Resume {
    /// Carry on with the current Run/Runtime op.
    Op,
    /// It blocked in an op (sleep/timer): that op completes when it runs.
    CompleteBlock,
    /// Start the op the program counter points at.
    Continue,
}

impl Task {
    /// May every CPU of the machine run the task? Read from the task
    /// alone, without the mask's bits (their own heap block, a cache miss
    /// per wakeup when tens of thousands of tasks take turns).
    #[inline]
    pub fn allowed_everywhere(&self) -> bool {
        self.nr_cpus_allowed as usize == self.cpus_allowed.nr_cpus()
    }

    /// Is `cpu` in the task's affinity (`cpus_allowed.test(cpu)`)?
    #[inline]
    pub fn allowed_on(&self, cpu: CpuId) -> bool {
        if self.allowed_everywhere() {
            cpu.idx() < self.cpus_allowed.nr_cpus()
        } else {
            self.cpus_allowed.test(cpu)
        }
    }

    /// Sets the allowed CPUs and their count.
    pub fn set_cpus_allowed(&mut self, mask: CpuMask) {
        self.nr_cpus_allowed = mask.weight() as u32;
        self.cpus_allowed = mask;
    }

    /// False for a thread of a fork pool that no fork ever started: it
    /// never existed, so it has no log and is not in summary.json.
    pub fn existed(&self) -> bool {
        !self.spec.forked || self.fork_time.is_some()
    }

    /// The op the program counter points at (None when finished).
    pub fn current_op(&self) -> Option<&crate::program::Op> {
        if self.pc.done {
            return None;
        }
        self.spec
            .program
            .phases
            .get(self.pc.phase)?
            .ops
            .get(self.pc.op)
    }
}

/// A task's deadline-class state (`struct sched_dl_entity`).
#[derive(Clone, Debug, Default)]
pub struct DlState {
    /// Parameters (None while the task is not a deadline task).
    pub params: Option<DlParams>,
    /// Remaining runtime in the current period.
    pub runtime: i64,
    /// Absolute deadline.
    pub deadline: Nanos,
    /// Out of runtime, waiting for the replenishment timer.
    pub throttled: bool,
    /// Generation of the armed replenishment timer.
    pub timer_gen: u32,
    /// Arrival stamp in its queue.
    pub seq: u64,
    /// Deadlines missed (a replenishment found the deadline already past).
    pub misses: u64,
    /// Replenishments.
    pub periods: u64,
}
