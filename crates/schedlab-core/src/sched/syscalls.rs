//! Scheduling-policy system calls (`kernel/sched/syscalls.c`):
//! `__sched_setscheduler`, as rt-app's per-phase policy, priority and
//! deadline changes use it.

use crate::fair::eevdf::EnqueueKind;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::rq::Class;
use crate::sim::Sim;

impl<S: Sink> Sim<S> {
    /// `__sched_setscheduler` on the running task `t` of `cpu`: a new
    /// policy, priority (nice for fair policies, rt_priority for FIFO/RR)
    /// and deadline parameters. The task leaves its class's queue, changes,
    /// and is queued in its (possibly new) class; a reschedule lets the pick
    /// decide. A priority-inheritance boost stays in force.
    pub(crate) fn sched_setscheduler(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        policy: crate::program::Policy,
        nice: i32,
        dl: Option<crate::program::DlParams>,
    ) {
        debug_assert_eq!(self.sched.rqs[cpu.idx()].curr, Some(t));
        let task = &self.sched.tasks[t.idx()];
        let dl = dl.or(task.dl.params).or(task.spec.dl);
        if policy == crate::program::Policy::Deadline && dl.is_none() {
            return; // no parameters: sched_setattr fails with EINVAL
        }
        self.update_curr_task(cpu);
        let old = self.sched.class_of(t);
        if old == Class::Fair {
            self.put_prev_task_fair(t, None);
        }
        self.dequeue_task(t, false);
        let se = self.sched.tasks[t.idx()].se;
        if old == Class::Fair {
            self.detach_task_load(t); // switched_from_fair
        }
        let boost = self.pi_prio(t);
        let task = &mut self.sched.tasks[t.idx()];
        task.policy = policy;
        task.nice = nice;
        task.normal_prio = crate::fair::weight::kernel_prio(policy, nice);
        task.prio = task.normal_prio.min(boost);
        // A pending replenishment timer of the old parameters is void.
        task.dl.throttled = false;
        task.dl.timer_gen = task.dl.timer_gen.wrapping_add(1);
        if policy == crate::program::Policy::Deadline {
            task.dl.params = dl;
            task.dl.deadline = 0;
            task.dl.runtime = 0;
        } else {
            task.dl.params = None;
        }
        let e = &mut self.sched.ents[se.idx()];
        if policy.is_fair() {
            e.weight = crate::fair::weight::task_weight(policy, nice);
        }
        e.idle = policy == crate::program::Policy::Idle;
        let new = self.sched.class_of(t);
        let kind = if new == Class::Dl {
            EnqueueKind::Wakeup
        } else {
            EnqueueKind::Migrate
        };
        self.enqueue_task(t, cpu, kind);
        if new == Class::Fair {
            self.set_next_task_fair(t, None);
        } else {
            self.sched.ents[se.idx()].exec_start = self.run_start(cpu);
        }
        self.resched_curr(cpu, false, cpu);
    }
}
