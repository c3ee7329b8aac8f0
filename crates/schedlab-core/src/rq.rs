//! Per-CPU runqueues (`struct rq`), fair runqueues (`struct cfs_rq`) and
//! scheduling entities (`struct sched_entity`).
//!
//! Entities and cfs_rqs live in flat arenas owned by the simulator and are
//! named by [`EntityId`] / [`CfsRqId`], so a group hierarchy (task groups)
//! is a matter of more arena entries: an entity with `my_q` set is a
//! group entity whose child queue is `my_q`.

use crate::fair::pelt::SchedAvg;
use crate::fair::timeline::Timeline;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId, TaskId};
use crate::machine::CpuMask;
use crate::time::Nanos;
use std::collections::BTreeSet;

pub mod armed_timers;
pub use armed_timers::ArmedTimers;

/// A scheduling entity (task or group).
#[derive(Clone, Debug, Default)]
pub struct SchedEntity {
    /// Load weight at user resolution (1024 = nice 0).
    pub weight: u64,
    /// Virtual runtime.
    pub vruntime: i64,
    /// Virtual deadline.
    pub deadline: i64,
    /// Virtual lag `V − v` saved at dequeue.
    pub vlag: i64,
    /// Request size (slice) in ns.
    pub slice: Nanos,
    /// Time was charged outside update_curr (`Sim::charge_curr_quiet`)
    /// since the last update_curr: that update still owes its decisions
    /// (new deadline, reschedule, min_vruntime) even if no further time has
    /// passed, as the kernel's one update_curr over the whole delta makes
    /// them.
    pub update_owed: bool,
    /// The slice was set by the task (not the base slice).
    pub custom_slice: bool,
    /// End of the protected window (RUN_TO_PARITY).
    pub vprot: i64,
    /// Queued on `cfs_rq` (running included).
    pub on_rq: bool,
    /// Slept while ineligible: still queued, burning off negative lag
    /// (DELAY_DEQUEUE).
    pub sched_delayed: bool,
    /// Start of the current accounting window.
    pub exec_start: Nanos,
    /// Total CPU time.
    pub sum_exec_runtime: Nanos,
    /// `sum_exec_runtime` when last picked.
    pub prev_sum_exec_runtime: Nanos,
    /// The queue it sits on when queued.
    pub cfs_rq: CfsRqId,
    /// Group entities: the queue they own.
    pub my_q: Option<CfsRqId>,
    /// Parent group entity (None at depth 0); a task's follows its group
    /// and CPU (`Sim::set_task_rq`).
    pub parent: Option<EntityId>,
    /// Depth in the hierarchy (0 = queued on `rq->cfs`).
    pub depth: u32,
    /// Task entities: the task.
    pub task: Option<TaskId>,
    /// SCHED_IDLE task or idle group (`se_is_idle`).
    pub idle: bool,
    /// PELT signals.
    pub avg: SchedAvg,
}

/// A fair runqueue.
#[derive(Clone, Debug, Default)]
pub struct CfsRq {
    /// CPU it belongs to.
    pub cpu: CpuId,
    /// Σ weights of queued entities, curr included.
    pub load_weight: u64,
    /// Queued entities at this level, curr included.
    pub nr_queued: u32,
    /// Queued tasks below this queue.
    pub h_nr_queued: u32,
    /// Queued tasks below this queue that are not delayed.
    pub h_nr_runnable: u32,
    /// Queued SCHED_IDLE tasks below this queue.
    pub h_nr_idle: u32,
    /// Entities waiting to run, ordered by (deadline, id); curr is not here.
    pub timeline: Timeline,
    /// The running entity at this level.
    pub curr: Option<EntityId>,
    /// Reference point of the sums (`zero_vruntime`).
    pub zero_vruntime: i64,
    /// Σ w·(v − v0) over `timeline`.
    pub sum_w_vruntime: i128,
    /// Σ w over `timeline`.
    pub sum_weight: u64,
    /// CFS (`FAIR_CLASS=cfs`): the queue's monotonic `min_vruntime`.
    pub min_vruntime: i64,
    /// CFS: the next buddy (`cfs_rq->next`).
    pub next: Option<EntityId>,
    /// CFS: the last buddy (`cfs_rq->last`).
    pub last: Option<EntityId>,
    /// CFS: the skip buddy (`cfs_rq->skip`, set by yield).
    pub skip: Option<EntityId>,
    /// PELT of the queue.
    pub avg: SchedAvg,
    /// Task group owning the queue (the root group for `rq->cfs`).
    pub tg: GroupId,
    /// The group entity whose queue this is (None for `rq->cfs`).
    pub se: Option<EntityId>,
    /// `tg_load_avg_contrib`: the load last published into `tg.load_avg`.
    pub tg_load_avg_contrib: u64,
    /// When it was last published.
    pub last_tg_update: Nanos,
    /// Bandwidth state of the queue.
    pub bw: CfsRqBandwidth,
}

/// A cfs_rq's part of bandwidth control.
#[derive(Clone, Debug, Default)]
pub struct CfsRqBandwidth {
    /// The group has a quota (`runtime_enabled`).
    pub enabled: bool,
    /// `runtime_remaining` (may go negative: runtime used past the slice).
    pub remaining: i64,
    /// This queue is throttled (`throttled`).
    pub throttled: bool,
    /// Throttled ancestors, self included (`throttle_count`).
    pub throttle_count: u32,
    /// `throttled_clock`: when the throttled time of the pool started
    /// counting for this queue.
    pub throttled_clock: Option<Nanos>,
    /// Tasks parked by per-task throttling (`throttled_limbo_list`).
    pub limbo: Vec<TaskId>,
    /// Queued for an asynchronous unthrottle on its CPU (CSD list).
    pub csd_pending: bool,
    /// Run time charged to this queue's running entity outside an
    /// update_curr (at a stall, `Sim::charge_curr_quiet`), not yet
    /// accounted to the quota: the next update_curr accounts it, as the
    /// kernel accounts all time since its last update_curr there.
    pub unaccounted_ns: Nanos,
}

/// A CPU's runqueue.
#[derive(Clone, Debug, Default)]
pub struct Rq {
    /// The CPU.
    pub cpu: CpuId,
    /// Root fair queue.
    pub cfs: CfsRqId,
    /// Running task (None = idle task).
    pub curr: Option<TaskId>,
    /// Runnable tasks on this CPU, running one included.
    pub nr_running: u32,
    /// `TIF_NEED_RESCHED`.
    pub need_resched: bool,
    /// `TIF_NEED_RESCHED_LAZY`.
    pub need_resched_lazy: bool,
    /// A Resched event is pending at this time.
    pub resched_posted: Option<Nanos>,
    /// Remote wakeups queued for this CPU but not yet enqueued.
    pub ttwu_pending: u32,
    /// Scheduler work on this CPU occupies it until this time.
    pub ovh_until: Nanos,
    /// The stretches of `ovh_until` charged to a task as work done in its
    /// context (`Sim::charge_task_ctx`), (start, end, task), those that
    /// may still end after now: at the end of a run the part past it is
    /// taken back off the task, as it is off the CPU's overhead.
    pub ctx_work: std::collections::VecDeque<(Nanos, Nanos, TaskId)>,
    /// Idle since this time (None while a task runs).
    pub idle_since: Option<Nanos>,
    /// cpuidle state entered (None while not idle).
    pub idle_state: Option<usize>,
    /// Idle and already woken by an interrupt: runs code from this time.
    pub awake_at: Option<Nanos>,
    /// When the current cpuidle state was entered.
    pub idle_entry: Nanos,
    /// The menu governor's idle-period history (`sched/cpuidle_menu.rs`).
    pub menu: crate::sched::cpuidle_menu::MenuState,
    /// Tick stopped (NO_HZ idle).
    pub tick_stopped: bool,
    /// Generation of the armed tick.
    pub tick_gen: u32,
    /// Generation of the running task's burst-end event.
    pub burst_gen: u32,
    /// Time of the last context switch on this CPU.
    pub last_switch: Nanos,
    /// When the CPU last went idle (`rq->idle_stamp`).
    pub idle_stamp: Nanos,
    /// wake_wide bookkeeping of the idle task (the waker when an interrupt
    /// on an idle CPU wakes a task).
    pub idle_wakee: crate::task::WakeeState,
    /// `next_balance` (jiffies).
    pub next_balance: u64,
    /// `avg_idle`: average idle period, for the newidle gate.
    pub avg_idle: Nanos,
    /// `max_idle_balance_cost`.
    pub max_idle_balance_cost: Nanos,
    /// An active balance asked this CPU to push its running task to
    /// (destination, domain index).
    pub active_balance: Option<(CpuId, usize)>,
    /// `idle_stamp` of newidle balancing (None = 0 in the kernel).
    pub newidle_stamp: Option<Nanos>,
    /// Armed task hrtimers on this CPU, for the idle governor.
    pub timers: ArmedTimers,
    /// Throttled queues of this CPU waiting for an asynchronous unthrottle
    /// (`cfsb_csd_list`).
    pub cfsb_csd: Vec<CfsRqId>,
    /// The RT runqueue.
    pub rt: crate::rq::RtRq,
    /// The deadline runqueue.
    pub dl: crate::rq::DlRq,
}

impl Rq {
    /// Truly idle: nothing runs or waits, and no wakeup is queued for it
    /// (the kernel's `available_idle_cpu` without vCPU preemption).
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.nr_running == 0 && self.ttwu_pending == 0
    }
}

/// Scheduling class of a task, by its effective prio (`p->sched_class`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// SCHED_DEADLINE (prio < 0).
    Dl,
    /// SCHED_FIFO / SCHED_RR, or a task PI-boosted to an RT prio.
    Rt,
    /// SCHED_NORMAL / BATCH / IDLE.
    Fair,
}

impl Class {
    /// The class a kernel prio belongs to.
    #[inline]
    pub fn of_prio(p: i32) -> Class {
        if p < 0 {
            Class::Dl
        } else if p < MAX_RT_PRIO {
            Class::Rt
        } else {
            Class::Fair
        }
    }
}

/// Kernel prio of the first non-RT priority (`MAX_RT_PRIO`).
pub const MAX_RT_PRIO: i32 = 100;

/// A CPU's RT runqueue (`struct rt_rq`).
#[derive(Clone, Debug, Default)]
pub struct RtRq {
    /// Runnable RT tasks by (prio, arrival); curr stays in it.
    pub queue: BTreeSet<(i32, u64, TaskId)>,
    /// RT runtime used in the current period (`rt_time`).
    pub rt_time: Nanos,
    /// Out of RT runtime until the next period (`rt_throttled`).
    pub throttled: bool,
}

impl RtRq {
    /// `highest_prio.curr`: the best queued prio, `MAX_RT_PRIO` if none.
    pub fn highest_prio(&self) -> i32 {
        self.queue.first().map_or(MAX_RT_PRIO, |&(p, _, _)| p)
    }
}

/// Kernel prio of an RT policy at `rt_priority` (1..99).
pub fn rt_prio(rt_priority: i32) -> i32 {
    MAX_RT_PRIO - 1 - rt_priority.clamp(1, 99)
}

/// A CPU's deadline runqueue (`struct dl_rq`).
#[derive(Clone, Debug, Default)]
pub struct DlRq {
    /// Queued deadline tasks by (absolute deadline, arrival); curr stays.
    pub queue: BTreeSet<(Nanos, u64, TaskId)>,
}

/// Run-time state of one sched domain of one CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SdState {
    /// `last_balance` (jiffies).
    pub last_balance: u64,
    /// `balance_interval` (ms).
    pub balance_interval_ms: u64,
    /// `nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// `max_newidle_lb_cost`.
    pub max_newidle_lb_cost: Nanos,
    /// `last_decay_max_lb_cost`.
    pub last_decay: Nanos,
    /// schedstat counters by idle type (not idle, idle, newly idle).
    pub lb: LbCounters,
    /// `alb_count`: active balances started.
    pub alb_count: u64,
    /// `alb_pushed`: tasks moved by active balancing.
    pub alb_pushed: u64,
    /// `ttwu_wake_remote`: wakeups done on this CPU onto another CPU whose
    /// lowest domain in common with this one is this domain.
    pub ttwu_wake_remote: u64,
    /// `ttwu_move_affine`: wakeups `wake_affine` moved to this CPU (the
    /// waker's) at this domain.
    pub ttwu_move_affine: u64,
    /// NI_RANDOM: newidle calls since the last halving.
    pub newidle_call: u32,
    /// NI_RANDOM: weighted successes since the last halving.
    pub newidle_success: u32,
    /// NI_RANDOM: success ratio (0..=1024). `sd_init` starts the three at
    /// 512/256/512, a 50 % success rate (sched/init.rs).
    pub newidle_ratio: u32,
}

/// The schedstat counters of one domain (by `CpuIdle` index).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LbCounters {
    /// `lb_count`.
    pub count: [u64; 3],
    /// `lb_balanced`.
    pub balanced: [u64; 3],
    /// `lb_failed`.
    pub failed: [u64; 3],
    /// `lb_imbalance_load`.
    pub imbalance_load: [u64; 3],
    /// `lb_imbalance_util`.
    pub imbalance_util: [u64; 3],
    /// `lb_imbalance_task`.
    pub imbalance_task: [u64; 3],
    /// `lb_gained`.
    pub gained: [u64; 3],
    /// `lb_hot_gained`.
    pub hot_gained: [u64; 3],
    /// `lb_nobusyq`.
    pub nobusyq: [u64; 3],
    /// `lb_nobusyg`.
    pub nobusyg: [u64; 3],
}

/// `struct sched_domain_shared` of one LLC.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlcState {
    /// Some core of the LLC is wholly idle (SMT machines).
    pub has_idle_cores: bool,
    /// SIS_UTIL scan depth.
    pub nr_idle_scan: u32,
    /// Jiffy of the last scan-depth update.
    pub scan_jiffy: u64,
    /// SIS_PROP's `avg_scan_cost` (ns): an average, weight 1/8, of the
    /// bounded idle-CPU scans' time ([`crate::fair::select::Placement`]'s
    /// `scan_ns`), 0 at boot as in the kernel's zeroed domain. Deviation:
    /// the kernel keeps one per CPU (in the waker's `sd_llc`), the model
    /// one per LLC, updated by every scan of it.
    pub avg_scan_cost: Nanos,
    /// STEAL's `cfs_overload_cpus`: CPUs of the LLC with ≥ 2 runnable tasks.
    pub overload: CpuMask,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_priorities_map_to_kernel_prio() {
        assert_eq!(rt_prio(99), 0);
        assert_eq!(rt_prio(1), 98);
        assert_eq!(rt_prio(10), 89);
        let mut q = RtRq::default();
        assert_eq!(q.highest_prio(), MAX_RT_PRIO);
        q.queue.insert((89, 2, TaskId(0)));
        q.queue.insert((50, 3, TaskId(1)));
        q.queue.insert((50, 1, TaskId(2)));
        // Best prio first, then arrival order within it.
        assert_eq!(q.highest_prio(), 50);
        assert_eq!(q.queue.first().unwrap().2, TaskId(2));
    }
}
