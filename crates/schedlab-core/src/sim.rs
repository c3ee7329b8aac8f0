//! The simulator object: the [`Sim`] struct and the plain state it holds.
//! Mechanism files (`core.rs`, `rt.rs`, `balance.rs`, ...) add `impl Sim`
//! blocks; the event loop (`engine.rs`) drives them.

use crate::atomics::BalanceFlag;
use crate::config::SimConfig;
use crate::event::queue::EventQueue;
use crate::fair::eevdf::EevdfParams;
use crate::fair::group::TaskGroup;
use crate::ids::{CpuId, TaskId};
use crate::machine::domains::SchedDomains;
use crate::machine::Machine;
use crate::observe::Sink;
use crate::rq::{CfsRq, LlcState, Rq, SchedEntity, SdState};
use crate::stats::{CpuStats, Profile, Waste};
use crate::task::{Task, TimerState};
use crate::time::Nanos;

/// Why a simulation could not be set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The workload does not fit the machine (affinity, sizes).
    #[error("{0}")]
    Workload(String),
}

/// A simulation in progress.
pub struct Sim<S: Sink> {
    /// Configuration.
    pub cfg: SimConfig,
    /// The machine.
    pub machine: Machine,
    /// EEVDF knobs derived from cfg and machine.
    pub(crate) p: EevdfParams,
    /// Current time.
    pub now: Nanos,
    pub(crate) queue: EventQueue,
    /// Per-CPU runqueues.
    pub rqs: Vec<Rq>,
    /// cfs_rq arena.
    pub cfs: Vec<CfsRq>,
    /// Entity arena: task entities (index = task id), then group entities.
    pub ents: Vec<SchedEntity>,
    /// Task groups; `GroupId(0)` is the root.
    pub groups: Vec<TaskGroup>,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// rt-app timer objects.
    pub(crate) timers: Vec<TimerState>,
    /// Per-CPU counters.
    pub cpu_stats: Vec<CpuStats>,
    /// Scheduler path costs.
    pub profile: Profile,
    /// rt-app's `t_start` (just before thread creation).
    pub t_start: Nanos,
    /// rt-app's T0: thread 0's clock read before the start barrier; the
    /// base of every thread's timers (`t_first = T0 + delay`).
    pub t0: Option<Nanos>,
    /// When the start barrier released the threads (hackbench's start).
    pub t_release: Option<Nanos>,
    /// When the last thread exited.
    pub last_exit: Nanos,
    /// The run stopped because every live thread waited for something that
    /// could never happen.
    pub deadlock: bool,
    /// Channels (pipes/sockets) of the workload.
    pub(crate) channels: Vec<ChannelState>,
    /// Mutexes: owner and waiters in arrival order.
    pub(crate) mutexes: Vec<MutexState>,
    /// Condition variables: waiters in arrival order.
    pub(crate) conds: Vec<std::collections::VecDeque<TaskId>>,
    /// Barriers.
    pub(crate) barriers: Vec<BarrierState>,
    /// Semaphores.
    pub(crate) sems: Vec<SemState>,
    /// Threads waiting at the start barrier.
    pub(crate) start_barrier: Vec<TaskId>,
    /// Threads that have reached the start barrier.
    pub(crate) barrier_arrived: usize,
    /// Threads that meet at the start barrier (all but forked ones).
    pub(crate) startup_threads: usize,
    /// `Workload::fork_pools`, and how many of each pool have been started.
    pub(crate) fork_pools: Vec<Vec<u32>>,
    pub(crate) fork_next: Vec<usize>,
    /// `Workload::cumulative_slack`.
    pub(crate) cumulative_slack: bool,
    /// `Workload::pi_mutexes`.
    pub(crate) pi_mutexes: bool,
    /// Tick grid phase.
    pub(crate) tick_offset: Nanos,
    /// End of the run (duration), if fixed.
    pub end: Option<Nanos>,
    /// Events handled.
    pub events: u64,
    /// Tasks not yet dead.
    pub(crate) live_tasks: usize,
    pub(crate) swapper_names: Vec<String>,
    pub(crate) sink: S,
    pub(crate) violation: Option<Violation>,
    pub(crate) trace: bool,
    /// Sched domains of the machine.
    pub domains: SchedDomains,
    /// Run-time state of every CPU's domains (parallel to `domains.per_cpu`).
    pub sd_state: Vec<Vec<SdState>>,
    /// `rd->overloaded`: some CPU has more than one runnable task.
    pub(crate) rd_overloaded: bool,
    /// CPU time of the newidle passes of the schedule() in progress.
    pub(crate) newidle_cost: Nanos,
    /// Counter behind `Task::cfs_tasks_stamp`.
    pub(crate) cfs_tasks_seq: u64,
    /// The wasted-CPU metric.
    pub waste: Waste,
    /// The global `sched_balance_running` flag.
    pub balance_flag: BalanceFlag,
    /// CPU time of the last balance pass (how long the flag is held).
    pub(crate) last_pass_cost: Nanos,
    /// Atomic cost of the newidle passes of the schedule() in progress.
    pub(crate) newidle_atomic_cost: Nanos,
    /// NI_RANDOM's draws.
    pub(crate) ni_rng: rand_chacha::ChaCha8Rng,
    /// CPU time of the steal attempts of the schedule() in progress.
    pub(crate) steal_cost: Nanos,
    /// Arrival stamps of the RT and deadline queues.
    pub(crate) rt_seq: u64,
    /// rt-app ftrace categories to mark (`Workload::ftrace`).
    pub(crate) ftrace: u8,
    /// Bandwidth-control work per CPU not yet charged (it arises inside
    /// accounting, where charging would recurse; see `bandwidth.rs`).
    pub(crate) throttle_cost: Vec<Nanos>,
    /// A newidle balance is running (its costs are charged after the switch).
    pub(crate) in_newidle: bool,
    /// `nohz.next_balance` (jiffies).
    pub(crate) nohz_next_balance: u64,
    /// A NOHZ balance kick is on its way.
    pub(crate) nohz_kick_pending: bool,
    /// The CPU balancing on behalf of idle CPUs (pays for their passes).
    pub(crate) ilb_cpu: Option<CpuId>,
    /// Per-LLC shared state (`sched_domain_shared`), by LlcShared index.
    pub llc_state: Vec<LlcState>,
}

/// A channel's state: messages queued, the reader and writers asleep on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelState {
    /// Messages queued.
    pub msgs: u64,
    /// Capacity in messages.
    pub capacity: u64,
    /// The reader, if it sleeps waiting for a message.
    pub reader: Option<TaskId>,
    /// Writers sleeping until there is space.
    pub writers: Vec<TaskId>,
}

/// A mutex.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MutexState {
    /// Holder.
    pub owner: Option<TaskId>,
    /// Waiters, first come first served.
    pub waiters: std::collections::VecDeque<TaskId>,
}

/// A barrier.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BarrierState {
    /// Threads that must arrive.
    pub participants: u32,
    /// Threads that arrived in this round.
    pub arrived: Vec<TaskId>,
}

/// A counting semaphore.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SemState {
    /// Posts not yet consumed.
    pub count: u64,
    /// Waiters.
    pub waiters: std::collections::VecDeque<TaskId>,
}

/// What a finished run hands back (the simulator keeps the details; see
/// [`Sim`]'s public fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// Simulated time at the end.
    pub end_ns: Nanos,
    /// Events handled.
    pub events: u64,
    /// First invariant violation, with `--check`.
    pub violation: Option<Violation>,
}

/// The first broken invariant of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Simulated time.
    pub time: Nanos,
    /// The event just handled.
    pub event: String,
    /// What is wrong.
    pub what: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "invariant violated at {} ns after {}: {}",
            self.time, self.event, self.what
        )
    }
}

impl<S: Sink> Sim<S> {
    /// The workload's threads (the simulator's own helper tasks, such as
    /// rt-app's main thread, excluded), in workload order. Forked threads
    /// that were never forked are included: filter with
    /// [`crate::task::Task::existed`].
    pub fn threads(&self) -> &[Task] {
        let n = self.tasks.iter().take_while(|t| !t.internal).count();
        &self.tasks[..n]
    }

    /// Threads of the workload that have not exited.
    pub fn live_tasks_left(&self) -> usize {
        self.live_tasks
    }

    /// The sink (e.g. to finish a trace file).
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// Consumes the simulator, returning the sink.
    pub fn into_sink(self) -> S {
        self.sink
    }

    /// Events pushed so far (for benchmarks).
    pub fn events_pushed(&self) -> u64 {
        self.queue.pushed()
    }
}
