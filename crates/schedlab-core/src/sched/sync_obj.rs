//! Synchronisation objects in the task's context: rt-app's pthread-based
//! events (mutex lock and unlock, condition wait and signal, barriers,
//! semaphores), what each costs, and blocking on them.

use crate::ids::{CpuId, TaskId};
use crate::observe::{PrevState, Sink};
use crate::program::Op;
use crate::sim::Sim;
use crate::task::{Resume, TaskState};
use crate::time::Nanos;

impl<S: Sink> Sim<S> {
    /// Runs a synchronisation op (rt-app's pthread-based events) in the
    /// task's context; returns true when the task blocked (it re-enters the
    /// op when woken, at the stage `sync_stage` recorded).
    ///
    /// Mutexes hand ownership to the first waiter on unlock (no stealing);
    /// condition-variable waiters re-take the mutex after waking; barriers
    /// count arrivals and the last one wakes the rest; semaphores remember
    /// posts. All wakeups are from task context on this CPU.
    pub(super) fn sync_op(&mut self, cpu: CpuId, t: TaskId, op: &Op) -> bool {
        match *op {
            Op::Lock { mutex } => self.mutex_lock(cpu, t, mutex),
            Op::Unlock { mutex } => {
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Signal { cond, all } => {
                self.cond_signal(cpu, cond, all);
                false
            }
            Op::Wait { cond, mutex } => self.cond_wait(cpu, t, cond, mutex, 0),
            Op::Sync { cond, mutex } => {
                if self.sched.tasks[t.idx()].sync_stage == 0 {
                    self.cond_signal(cpu, cond, false);
                }
                self.cond_wait(cpu, t, cond, mutex, 0)
            }
            Op::Suspend { cond, mutex } => {
                // lock(m); wait(c, m); unlock(m)
                if self.sched.tasks[t.idx()].sync_stage < 10 {
                    if self.mutex_lock(cpu, t, mutex) {
                        return true;
                    }
                    self.sched.tasks[t.idx()].sync_stage = 10;
                }
                if self.cond_wait(cpu, t, cond, mutex, 10) {
                    return true;
                }
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Resume { cond, mutex } => {
                // lock(m); broadcast(c); unlock(m)
                if self.mutex_lock(cpu, t, mutex) {
                    return true;
                }
                self.cond_signal(cpu, cond, true);
                self.mutex_unlock(cpu, t, mutex);
                false
            }
            Op::Barrier { barrier } => {
                let task = &mut self.sched.tasks[t.idx()];
                if task.sync_stage == 1 {
                    return false; // released
                }
                let Some(waiters) = self.prog.barriers[barrier as usize].arrive(t) else {
                    task.sync_stage = 1;
                    self.block_sync(cpu, t);
                    return true;
                };
                for w in waiters.into_iter().filter(|&w| w != t) {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemPost { sem } => {
                // glibc: the value goes up and one waiter is woken; the
                // token is not reserved for it, so a thread that reaches
                // sem_wait first takes it (the waiter then waits again).
                if let Some(w) = self.prog.sems[sem as usize].post() {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemSend { sem, reply } => {
                // The same post; the token carries its reply address.
                if let Some(w) = self.prog.sems[sem as usize].send(reply) {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemReply => {
                let sem = self
                    .prog
                    .reply_address(t)
                    .expect("SemReply after taking an addressed token (check_addressed_sems, the generators)");
                if let Some(w) = self.prog.sems[sem as usize].post() {
                    self.try_to_wake_up(w, cpu, true, false);
                }
                false
            }
            Op::SemWait { sem } if self.prog.sem_waits_sleep => {
                // Stage 0: sleep. With a post held for it, the held wakeup
                // comes as it sleeps (stage 2, token taken); else it waits
                // for the post (stage 1) and the retry takes the token.
                let stage = self.sched.tasks[t.idx()].sync_stage;
                if stage == 2 {
                    return false;
                }
                if stage == 1 {
                    let took = self.prog.sems[sem as usize].wait(t);
                    debug_assert!(took, "a woken waiter finds its post");
                    if took {
                        self.prog.took_token(sem, t);
                    }
                    return !took;
                }
                let s = &mut self.prog.sems[sem as usize];
                let held = s.count > 0;
                if held {
                    s.count -= 1;
                    self.prog.took_token(sem, t);
                } else {
                    s.waiters.push_back(t);
                }
                self.sched.tasks[t.idx()].sync_stage = if held { 2 } else { 1 };
                self.block_sync(cpu, t);
                if held {
                    self.try_to_wake_up(t, cpu, false, false);
                }
                true
            }
            Op::SemWait { sem } => {
                // Also the retry of a woken waiter.
                if self.prog.sems[sem as usize].wait(t) {
                    self.prog.took_token(sem, t);
                    return false;
                }
                self.block_sync(cpu, t);
                true
            }
            _ => false,
        }
    }

    /// CPU time of one attempt at a synchronisation op, from the state it
    /// finds (`sched/syscall_cost.rs`): each pthread call costs its
    /// uncontended libc path, plus one futex syscall when it must sleep or
    /// wake a waiter. A glibc barrier always sleeps or wakes by futex.
    pub(super) fn sync_cost(&self, t: TaskId, op: &Op) -> Nanos {
        let c = &self.sys;
        let stage = self.sched.tasks[t.idx()].sync_stage;
        let lock = |m: u32| {
            let st = &self.prog.mutexes[m as usize];
            c.mutex
                + if st.owner.is_none() || st.owner == Some(t) {
                    0
                } else {
                    c.futex
                }
        };
        let unlock = |m: u32| {
            c.mutex
                + if self.prog.mutexes[m as usize].waiters.is_empty() {
                    0
                } else {
                    c.futex
                }
        };
        let signal = |cv: u32| {
            c.cond
                + if self.prog.conds[cv as usize].is_empty() {
                    0
                } else {
                    c.futex
                }
        };
        // pthread_cond_wait: release the mutex and sleep (stage `base`),
        // or take the mutex back once woken.
        let wait = |m: u32, base: u8| {
            if stage <= base {
                unlock(m) + c.futex
            } else {
                lock(m)
            }
        };
        match *op {
            Op::Lock { mutex } => lock(mutex),
            Op::Unlock { mutex } => unlock(mutex),
            Op::Signal { cond, .. } => signal(cond),
            Op::Wait { mutex, .. } => wait(mutex, 0),
            Op::Sync { cond, mutex } => {
                if stage == 0 {
                    signal(cond) + wait(mutex, 0)
                } else {
                    wait(mutex, 0)
                }
            }
            Op::Suspend { mutex, .. } => {
                if stage < 10 {
                    // lock, then the wait's unlock and futex sleep
                    lock(mutex) + c.mutex + c.futex
                } else {
                    wait(mutex, 10) + if stage > 10 { unlock(mutex) } else { 0 }
                }
            }
            Op::Resume { cond, mutex } => lock(mutex) + signal(cond) + unlock(mutex),
            Op::Barrier { .. } => c.mutex + c.futex,
            Op::SemPost { .. } | Op::SemWait { .. } | Op::SemSend { .. } | Op::SemReply
                if self.prog.sem_waits_sleep =>
            {
                // A replayed dependency (`Workload::sem_waits_sleep`): the
                // calls it stands for are in the traced runs already.
                crate::program::REPLAYED_SYNC_OP_NS
            }
            Op::SemPost { sem } | Op::SemSend { sem, .. } => {
                c.sem
                    + if self.prog.sems[sem as usize].waiters.is_empty() {
                        0
                    } else {
                        c.futex
                    }
            }
            Op::SemReply => match self.prog.reply_address(t) {
                Some(sem) if !self.prog.sems[sem as usize].waiters.is_empty() => c.sem + c.futex,
                _ => c.sem,
            },
            Op::SemWait { sem } => {
                c.sem
                    + if self.prog.sems[sem as usize].count > 0 {
                        0
                    } else {
                        c.futex
                    }
            }
            _ => 0,
        }
    }

    /// Takes `mutex` for `t`; true if it had to block. The op is retried
    /// when the task is woken: with PI mutexes the unlocker has handed it
    /// over (FUTEX_UNLOCK_PI), so the retry finds it owned; with glibc's
    /// normal mutexes the woken waiter competes again and a running thread
    /// that locks first takes it (barging), sending the waiter back to the
    /// end of the queue.
    fn mutex_lock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) -> bool {
        match self.prog.mutex_lock(mutex as usize, t) {
            Ok(()) => false,
            Err(owner) => {
                if self.prog.pi_mutexes {
                    // rt_mutex: waiters by priority (FIFO among equals), and
                    // the owner inherits the top waiter's priority.
                    let prio = |s: &Self, x: TaskId| s.sched.tasks[x.idx()].prio;
                    let mut w: Vec<TaskId> = self.prog.mutexes[mutex as usize]
                        .waiters
                        .drain(..)
                        .collect();
                    w.sort_by_key(|&x| prio(self, x));
                    self.prog.mutexes[mutex as usize].waiters = w.into();
                    self.pi_adjust_chain(owner, cpu);
                }
                self.block_sync(cpu, t);
                true
            }
        }
    }

    fn mutex_unlock(&mut self, cpu: CpuId, t: TaskId, mutex: u32) {
        let pi = self.prog.pi_mutexes;
        let Some(next) = self.prog.mutex_unlock(mutex as usize, t, pi) else {
            return; // unlocking a mutex one does not hold: rt-app's bug, ignored
        };
        if self.prog.pi_mutexes {
            // The releaser drops what it inherited through this mutex; the
            // new owner inherits from the waiters left.
            self.pi_adjust_chain(t, cpu);
            if let Some(w) = next {
                self.pi_adjust_chain(w, cpu);
            }
        }
        if let Some(w) = next {
            self.try_to_wake_up(w, cpu, true, false);
        }
    }

    fn cond_signal(&mut self, cpu: CpuId, cond: u32, all: bool) {
        for w in self.prog.cond_signal(cond, all) {
            self.try_to_wake_up(w, cpu, true, false);
        }
    }

    /// `pthread_cond_wait`: stages base+0 release and wait, base+1 woken
    /// (take the mutex back), base+2 done. True while blocked.
    fn cond_wait(&mut self, cpu: CpuId, t: TaskId, cond: u32, mutex: u32, base: u8) -> bool {
        let stage = self.sched.tasks[t.idx()].sync_stage;
        if stage <= base {
            self.mutex_unlock(cpu, t, mutex);
            self.prog.conds[cond as usize].push_back(t);
            self.sched.tasks[t.idx()].sync_stage = base + 1;
            self.block_sync(cpu, t);
            return true;
        }
        if stage == base + 1 {
            self.sched.tasks[t.idx()].sync_stage = base + 2;
        }
        // Stage base+2: (re)take the mutex until it is ours.
        self.mutex_lock(cpu, t, mutex)
    }

    pub(crate) fn block_sync(&mut self, cpu: CpuId, t: TaskId) {
        let task = &mut self.sched.tasks[t.idx()];
        task.resume = Resume::Continue;
        task.wake_expiry = None;
        task.wake_is_timer = false;
        task.work_left = 0;
        self.dequeue_task(t, true);
        self.sched.tasks[t.idx()].state = TaskState::Sleeping;
        self.schedule(cpu, PrevState::Sleeping);
    }
}
