//! The closed set of simulator events and their queue.
//!
//! Stale events (a cancelled timer, a preempted burst end, a stopped tick)
//! are not searched for and removed: each carries the generation of the
//! thing it belongs to and is dropped on pop when that generation moved on.

pub mod order;
pub mod queue;

use crate::ids::{CpuId, GroupId, TaskId};

/// Something that happens at a point in simulated time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The periodic tick of a CPU (`sched_tick`).
    Tick {
        /// CPU.
        cpu: CpuId,
        /// `Rq::tick_gen` when armed.
        gen: u32,
    },
    /// The running task of `cpu` finishes its current work burst.
    BurstEnd {
        /// CPU.
        cpu: CpuId,
        /// `Rq::burst_gen` when armed.
        gen: u32,
    },
    /// The CPU must run `schedule()` (resched IPI arrived, or an idle CPU
    /// finished waking up).
    Resched {
        /// CPU.
        cpu: CpuId,
    },
    /// A task's hrtimer (sleep or rt-app timer) expires.
    TaskTimer {
        /// Task.
        task: TaskId,
        /// `Task::timer_gen` when armed.
        gen: u32,
        /// False at expiry; true once the CPU is awake to run the handler.
        handler: bool,
    },
    /// A queued remote wakeup (TTWU_QUEUE IPI) runs on `cpu`.
    RemoteWakeup {
        /// Target CPU.
        cpu: CpuId,
        /// The wakee.
        task: TaskId,
    },
    /// A task of the workload is created (`wake_up_new_task`).
    TaskStart {
        /// Task.
        task: TaskId,
    },
    /// A NOHZ idle-balance kick arrives at an idle CPU.
    NohzIdleBalance {
        /// The idle load balancer.
        cpu: CpuId,
    },
    /// A group's bandwidth period timer (`sched_cfs_period_timer`).
    BwPeriod {
        /// The group.
        group: GroupId,
        /// `CfsBandwidth::period_gen` when armed.
        gen: u32,
    },
    /// A group's bandwidth slack timer (`sched_cfs_slack_timer`).
    BwSlack {
        /// The group.
        group: GroupId,
        /// `CfsBandwidth::slack_gen` when armed.
        gen: u32,
    },
    /// The asynchronous-unthrottle IPI (`cfsb_csd`) runs on `cpu`.
    CfsbCsd {
        /// Target CPU.
        cpu: CpuId,
    },
    /// The running task of `cpu` returns to user space and runs its
    /// pending task_work (per-task and unified throttling).
    TaskWork {
        /// CPU.
        cpu: CpuId,
        /// The task that had the work when it was posted.
        task: TaskId,
    },
    /// The RT bandwidth period timer (all CPUs, `sched_rt_period_timer`).
    RtPeriod,
    /// A deadline task's replenishment timer (`dl_task_timer`).
    DlTimer {
        /// The task.
        task: TaskId,
        /// `DlState::timer_gen` when armed.
        gen: u32,
    },
    /// A host-noise burst on `cpu` (`sched/noise.rs`).
    Noise {
        /// CPU.
        cpu: CpuId,
        /// Host preemption (steal) rather than an interrupt.
        steal: bool,
    },
    /// Sample the wasted-CPU metric (every `waste::WASTE_SAMPLE_NS`).
    WasteSample,
    /// The end of the run.
    End,
}
