//! The behaviour programs' runtime: the objects rt-app's threads (and
//! hackbench's) synchronise on — channels, mutexes, condition variables,
//! barriers, semaphores, timers — the fork pools and the start barrier.
//! Plain state with the bookkeeping half of each operation; the
//! interpreter (`sched/exec.rs`) does the blocking and waking.

use crate::ids::TaskId;
use crate::task::TimerState;
use std::collections::VecDeque;

/// The program runtime of one simulation.
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    /// rt-app timer objects.
    pub(crate) timers: Vec<TimerState>,
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
    /// rt-app ftrace categories to mark (`Workload::ftrace`).
    pub(crate) ftrace: u8,
    /// Tasks not yet dead.
    pub(crate) live_tasks: usize,
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
    pub waiters: VecDeque<TaskId>,
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
    pub waiters: VecDeque<TaskId>,
}
