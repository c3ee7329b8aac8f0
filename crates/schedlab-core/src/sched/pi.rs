//! Priority inheritance through PI mutexes: the priority a task inherits
//! from its waiters, the chain walk, and `rt_mutex_setprio`.

use crate::fair::eevdf::EnqueueKind;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::rq::Class;
use crate::sim::Sim;
use crate::task::TaskState;

/// Longest priority-inheritance chain followed (`max_lock_depth` is 1024;
/// rt-app's workloads never come close).
const MAX_PI_CHAIN: usize = 64;

impl<S: Sink> Sim<S> {
    /// The priority `t` inherits from the waiters of the PI mutexes it
    /// holds (`i32::MAX` when none). A deadline waiter lends the highest
    /// RT priority (deviation: the kernel lends its deadline parameters).
    pub(crate) fn pi_prio(&self, t: TaskId) -> i32 {
        if !self.prog.pi_mutexes {
            return i32::MAX;
        }
        // A minimum: the order the held mutexes are visited in is moot.
        self.prog
            .mutexes_held_by(t)
            .iter()
            .flat_map(|&m| self.prog.mutexes[m as usize].waiters.iter())
            .map(|&w| self.sched.tasks[w.idx()].prio.max(0))
            .min()
            .unwrap_or(i32::MAX)
    }

    /// `rt_mutex_adjust_prio_chain`: recompute `t`'s effective priority and
    /// follow the chain of owners it is blocked behind.
    pub(crate) fn pi_adjust_chain(&mut self, t: TaskId, from: CpuId) {
        let mut x = t;
        for _ in 0..MAX_PI_CHAIN {
            let want = self.sched.tasks[x.idx()].normal_prio.min(self.pi_prio(x));
            if want == self.sched.tasks[x.idx()].prio {
                return;
            }
            self.rt_mutex_setprio(x, want, from);
            // Blocked on another PI mutex? Re-sort it and go on to its owner.
            let Some(mi) = self
                .prog
                .mutexes
                .iter()
                .position(|m| m.waiters.contains(&x))
            else {
                return;
            };
            let mut w: Vec<TaskId> = self.prog.mutexes[mi].waiters.drain(..).collect();
            w.sort_by_key(|&y| self.sched.tasks[y.idx()].prio);
            self.prog.mutexes[mi].waiters = w.into();
            match self.prog.mutexes[mi].owner {
                Some(o) => x = o,
                None => return,
            }
        }
    }

    /// `rt_mutex_setprio`: change `t`'s effective priority (boost or
    /// deboost), moving it between classes if the class changes.
    pub(crate) fn rt_mutex_setprio(&mut self, t: TaskId, prio: i32, from: CpuId) {
        let task = &self.sched.tasks[t.idx()];
        if task.prio == prio {
            return;
        }
        let cpu = task.cpu;
        if Class::of_prio(task.prio) == Class::Fair && Class::of_prio(prio) == Class::Fair {
            // Between fair priorities only p->prio changes: the fair class
            // takes its weight from the static priority.
            self.sched.tasks[t.idx()].prio = prio;
            self.acct.cpu_stats[cpu.idx()].pi_setprio += 1;
            return;
        }
        let running = self.sched.rqs[cpu.idx()].curr == Some(t);
        let queued = task.state == TaskState::Runnable;
        let old = self.sched.class_of(t);
        if !queued && old == Class::Fair && self.sched.ents[task.se.idx()].sched_delayed {
            // A delayed fair entity finishes its dequeue before the class
            // changes (DEQUEUE_DELAYED).
            self.dequeue_task(t, false);
        }
        if queued {
            if running {
                self.update_curr_task(cpu);
                if old == Class::Fair {
                    self.put_prev_task_fair(t, None);
                }
            }
            self.dequeue_task(t, false);
        }
        self.sched.tasks[t.idx()].prio = prio;
        let new = self.sched.class_of(t);
        let se = self.sched.tasks[t.idx()].se;
        if queued && old == Class::Fair && new != Class::Fair {
            self.detach_task_load(t); // switched_from_fair
        }
        if queued {
            self.enqueue_task(t, cpu, EnqueueKind::Migrate);
            if running {
                if new == Class::Fair {
                    self.set_next_task_fair(t, None);
                } else {
                    self.sched.ents[se.idx()].exec_start = self.run_start(cpu);
                }
                self.resched_curr(cpu, false, from);
            } else {
                // (On an idle CPU it may have been invisible until now, in
                // a legacy-throttled fair hierarchy.)
                self.wakeup_preempt(cpu, t, from, true, false);
            }
        }
        self.acct.cpu_stats[cpu.idx()].pi_setprio += 1;
    }
}
