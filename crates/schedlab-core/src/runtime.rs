//! The behaviour programs' runtime: the objects rt-app's threads (and
//! hackbench's) synchronise on — channels, mutexes, condition variables,
//! barriers, semaphores, timers — the fork pools and the start barrier.
//! Plain state with the bookkeeping half of each operation; the
//! interpreter (`sched/exec.rs`, with `sched/channel_io.rs` and
//! `sched/sync_obj.rs`) does the blocking and waking.

use crate::ids::TaskId;
use crate::program::Workload;
use crate::time::Nanos;
use std::collections::VecDeque;

/// One futex word (schbench's message and worker words; its operations
/// are in `sched/futex_word.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FutexWord {
    /// RUNNING (posted) rather than BLOCKED.
    pub running: bool,
    /// Threads asleep in `FUTEX_WAIT` on it, in arrival order.
    pub sleepers: VecDeque<TaskId>,
}

/// The program runtime of one simulation.
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    /// rt-app timer objects.
    pub(crate) timers: Vec<TimerState>,
    /// Channels (pipes/sockets) of the workload.
    pub(crate) channels: Vec<ChannelState>,
    /// Mutexes: owner and waiters in arrival order. Change owners only
    /// through [`Runtime::mutex_lock`] and [`Runtime::mutex_unlock`], which
    /// keep `mutexes_held` in step.
    pub(crate) mutexes: Vec<MutexState>,
    /// The mutexes each task (by index) holds, in no particular order, so
    /// that the PI walk (`pi_prio`) visits those rather than scanning every
    /// mutex (a scan of every mutex is a fifth of an OLTP run). Grown on
    /// demand.
    pub(crate) mutexes_held: Vec<Vec<u32>>,
    /// Condition variables: waiters in arrival order.
    pub(crate) conds: Vec<VecDeque<TaskId>>,
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
    /// `Workload::sem_waits_sleep`.
    pub(crate) sem_waits_sleep: bool,
    /// rt-app ftrace categories to mark (`Workload::ftrace`).
    pub(crate) ftrace: u8,
    /// Tasks not yet dead.
    pub(crate) live_tasks: usize,
    /// Futex words, wake lists, request queues (`sched/futex_word.rs`).
    pub(crate) futex_words: Vec<FutexWord>,
    pub(crate) wake_lists: Vec<Vec<(TaskId, u32, u8)>>,
    /// Spinning locks: holder, and the threads spinning on it.
    pub(crate) spinlocks: Vec<(Option<TaskId>, Vec<TaskId>)>,
    pub(crate) request_queues: Vec<(crate::program::RequestQueueSpec, u64)>,
    /// Each probe's samples `(start, end)` in recording order (`Op::Record`).
    pub probes: Vec<Vec<(Nanos, Nanos)>>,
    /// An empty list, swapped with a socket's wait queue when all its
    /// sleepers are woken, so that neither list is reallocated per message
    /// (`sched/channel_io.rs`).
    pub(crate) wake_scratch: Vec<TaskId>,
    /// Each task's (by index) reply address: what its last token from an
    /// addressed semaphore carried (`Op::SemSend`, `Op::SemReply`). Grown
    /// on demand.
    pub(crate) reply_to: Vec<Option<u32>>,
    /// The release's rule for a read's writer wake-up (`sched/pipe.rs`),
    /// decided once per run.
    pub(crate) pipe_writer_wake: crate::sched::pipe::WriterWake,
}

/// State of one rt-app timer object.
#[derive(Clone, Debug, Default)]
pub struct TimerState {
    /// Next expiry; None until first used.
    pub next: Option<Nanos>,
    /// Absolute mode.
    pub absolute: bool,
}

/// A channel's state: the kernel object it is, with its wait queues.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelState {
    /// A pipe.
    Pipe(crate::sched::pipe::Pipe, u64),
    /// An AF_UNIX stream socket.
    Unix(crate::sched::unix_stream::UnixStream, u64),
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
    /// Reply addresses of the tokens posted by `Op::SemSend` and not yet
    /// taken, oldest first (empty for a semaphore no `SemSend` posts;
    /// else as many as `count`).
    pub addresses: VecDeque<u32>,
    /// Posted by `Op::SemSend` at least once.
    pub addressed: bool,
}

impl Runtime {
    /// The runtime objects a workload declares, all idle, for a run of
    /// `kernel` (a `--kernel` name: the release's channel rules).
    pub fn new(workload: &Workload, kernel: &str) -> Runtime {
        let startup_threads = workload.tasks.iter().filter(|t| !t.forked).count();
        Runtime {
            timers: workload
                .timers
                .iter()
                .map(|t| TimerState {
                    next: None,
                    absolute: t.absolute,
                })
                .collect(),
            channels: workload
                .channels
                .iter()
                .map(|c| match c.kind {
                    crate::program::ChannelKind::Pipe => {
                        ChannelState::Pipe(Default::default(), c.msg_bytes)
                    }
                    crate::program::ChannelKind::UnixStream => {
                        ChannelState::Unix(Default::default(), c.msg_bytes)
                    }
                })
                .collect(),
            mutexes: vec![MutexState::default(); workload.mutexes as usize],
            mutexes_held: Vec::new(),
            conds: vec![Default::default(); workload.conds as usize],
            barriers: workload
                .barriers
                .iter()
                .map(|&p| BarrierState {
                    participants: p,
                    arrived: Vec::new(),
                })
                .collect(),
            sems: vec![SemState::default(); workload.sems as usize],
            start_barrier: Vec::new(),
            barrier_arrived: 0,
            startup_threads,
            fork_pools: workload.fork_pools.clone(),
            fork_next: vec![0; workload.fork_pools.len()],
            cumulative_slack: workload.cumulative_slack,
            pi_mutexes: workload.pi_mutexes,
            sem_waits_sleep: workload.sem_waits_sleep,
            ftrace: workload.ftrace,
            live_tasks: startup_threads,
            futex_words: vec![Default::default(); workload.futex_words as usize],
            wake_lists: vec![Vec::new(); workload.wake_lists as usize],
            spinlocks: vec![(None, Vec::new()); workload.spinlocks as usize],
            request_queues: workload
                .request_queues
                .iter()
                .map(|q| (q.clone(), 0))
                .collect(),
            probes: vec![Vec::new(); workload.probes.len()],
            wake_scratch: Vec::new(),
            reply_to: Vec::new(),
            pipe_writer_wake: crate::sched::pipe::WriterWake::of(kernel),
        }
    }

    /// [`MutexState::lock`] of mutex `m`, counting holders.
    pub(crate) fn mutex_lock(&mut self, m: usize, t: TaskId) -> Result<(), TaskId> {
        let before = self.mutexes[m].owner;
        let r = self.mutexes[m].lock(t);
        self.note_owner(m, before, self.mutexes[m].owner);
        r
    }

    /// [`MutexState::unlock`] of mutex `m`, counting holders.
    pub(crate) fn mutex_unlock(
        &mut self,
        m: usize,
        t: TaskId,
        handoff: bool,
    ) -> Option<Option<TaskId>> {
        let before = self.mutexes[m].owner;
        let r = self.mutexes[m].unlock(t, handoff);
        self.note_owner(m, before, self.mutexes[m].owner);
        r
    }

    fn note_owner(&mut self, m: usize, before: Option<TaskId>, after: Option<TaskId>) {
        if before == after {
            return;
        }
        if let Some(b) = before {
            let held = &mut self.mutexes_held[b.idx()];
            let i = held
                .iter()
                .position(|&x| x as usize == m)
                .expect("the owner's list holds the mutex");
            held.swap_remove(i);
        }
        if let Some(a) = after {
            if self.mutexes_held.len() <= a.idx() {
                self.mutexes_held.resize_with(a.idx() + 1, Vec::new);
            }
            self.mutexes_held[a.idx()].push(m as u32);
        }
    }

    /// The mutexes `t` holds, in no particular order.
    #[inline]
    pub(crate) fn mutexes_held_by(&self, t: TaskId) -> &[u32] {
        self.mutexes_held.get(t.idx()).map_or(&[], Vec::as_slice)
    }

    /// Condition variable `cond` signalled (`all`: broadcast): the waiters
    /// to wake, in arrival order.
    pub fn cond_signal(&mut self, cond: u32, all: bool) -> Vec<TaskId> {
        let c = &mut self.conds[cond as usize];
        if all {
            std::mem::take(c).into()
        } else {
            c.pop_front().into_iter().collect()
        }
    }
}

impl MutexState {
    /// `t` locks: `Ok` if it holds the mutex now (or already did),
    /// `Err(owner)` when it has to wait (it is queued last).
    pub fn lock(&mut self, t: TaskId) -> Result<(), TaskId> {
        match self.owner {
            Some(o) if o == t => Ok(()),
            None => {
                self.owner = Some(t);
                Ok(())
            }
            Some(owner) => {
                self.waiters.push_back(t);
                Err(owner)
            }
        }
    }

    /// `t` unlocks: `None` if it does not hold the mutex (nothing
    /// happens); else the first waiter, to wake. With `handoff` (PI
    /// mutexes) that waiter owns the mutex already; without, the mutex is
    /// free and the waiter competes for it again.
    pub fn unlock(&mut self, t: TaskId, handoff: bool) -> Option<Option<TaskId>> {
        if self.owner != Some(t) {
            return None;
        }
        let next = self.waiters.pop_front();
        self.owner = if handoff { next } else { None };
        Some(next)
    }
}

impl BarrierState {
    /// `t` arrives: `None` while others are still expected (`t` waits),
    /// else the threads that waited, to release (`t` included).
    pub fn arrive(&mut self, t: TaskId) -> Option<Vec<TaskId>> {
        self.arrived.push(t);
        if (self.arrived.len() as u32) < self.participants {
            return None;
        }
        Some(std::mem::take(&mut self.arrived))
    }
}

impl Runtime {
    /// `t` took a token of semaphore `sem`: it now answers to the address
    /// the token carried, if the semaphore is addressed.
    pub(crate) fn took_token(&mut self, sem: u32, t: TaskId) {
        if let Some(a) = self.sems[sem as usize].take_address() {
            if self.reply_to.len() <= t.idx() {
                self.reply_to.resize(t.idx() + 1, None);
            }
            self.reply_to[t.idx()] = Some(a);
        }
    }

    /// The semaphore `t`'s `Op::SemReply` posts.
    pub(crate) fn reply_address(&self, t: TaskId) -> Option<u32> {
        self.reply_to.get(t.idx()).copied().flatten()
    }
}

impl SemState {
    /// `sem_post`: the count goes up; the waiter to wake, if any (the
    /// token is not reserved for it).
    pub fn post(&mut self) -> Option<TaskId> {
        self.count += 1;
        self.waiters.pop_front()
    }

    /// `sem_wait`: true if `t` took a token, false if it has to wait (it
    /// is queued).
    pub fn wait(&mut self, t: TaskId) -> bool {
        if self.count > 0 {
            self.count -= 1;
            return true;
        }
        self.waiters.push_back(t);
        false
    }

    /// `Op::SemSend`: a post whose token carries `reply`; the waiter to
    /// wake, if any.
    pub fn send(&mut self, reply: u32) -> Option<TaskId> {
        self.addressed = true;
        self.addresses.push_back(reply);
        self.post()
    }

    /// The reply address of the token just taken (the oldest), if this
    /// semaphore is addressed.
    pub fn take_address(&mut self) -> Option<u32> {
        self.addresses.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addressed_tokens_carry_their_reply_first_in_first_out() {
        let mut rt = Runtime {
            sems: vec![SemState::default(); 4],
            ..Default::default()
        };
        let (asker_a, asker_b, server) = (TaskId(0), TaskId(1), TaskId(2));
        // The server waits first; A's request wakes it, B's is queued.
        assert!(!rt.sems[0].wait(server));
        assert_eq!(rt.sems[0].send(2), Some(server));
        assert_eq!(rt.sems[0].send(3), None);
        assert_eq!(rt.sems[0].count, 2);
        // The woken server's retry takes the oldest token: A's address.
        assert!(rt.sems[0].wait(server));
        rt.took_token(0, server);
        assert_eq!(rt.reply_address(server), Some(2));
        // A token of a plain semaphore leaves the address alone.
        rt.sems[1].post();
        assert!(rt.sems[1].wait(server));
        rt.took_token(1, server);
        assert_eq!(rt.reply_address(server), Some(2));
        // The next request is B's.
        assert!(rt.sems[0].wait(server));
        rt.took_token(0, server);
        assert_eq!(rt.reply_address(server), Some(3));
        assert!(rt.sems[0].addresses.is_empty() && rt.sems[0].addressed);
        // Nobody else took an addressed token.
        assert_eq!(rt.reply_address(asker_a), None);
        assert_eq!(rt.reply_address(asker_b), None);
    }
}
