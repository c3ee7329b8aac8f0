//! Active balancing: the busiest CPU is made to switch out its running
//! task (`active_load_balance_cpu_stop`), which then moves to the
//! balancing CPU.

use super::*;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::sim::Sim;
use crate::stats::Path;
use crate::task::TaskState;

impl<S: Sink> Sim<S> {
    /// Asks `busiest`'s stopper to push its running task to `dst`
    /// (`active_load_balance_cpu_stop`): the task is moved when `busiest`
    /// next switches it out, which the resched IPI forces at once.
    pub(crate) fn start_active_balance(&mut self, busiest: CpuId, dst: CpuId, sdi: usize) {
        let rq = &self.sched.rqs[busiest.idx()];
        let Some(curr) = rq.curr else { return };
        if rq.active_balance.is_some()
            || !self.sched.tasks[curr.idx()].allowed_on(dst)
            || self.sched.tasks[curr.idx()].internal
        {
            return;
        }
        self.sched.rqs[busiest.idx()].active_balance = Some((dst, sdi));
        self.sched.sd_state[dst.idx()][sdi].alb_count += 1;
        self.sched.rqs[busiest.idx()].need_resched = true;
        let at = self.now + self.machine.costs.ipi_latency_ns;
        self.post_resched(busiest, at);
    }

    /// Called by `schedule()` on `cpu` before its pick: if an active
    /// balance was requested, take the running task off this queue (the
    /// stopper's `detach_one_task`); `complete_active_balance` puts it on
    /// the destination after the switch.
    pub(crate) fn take_active_balance(
        &mut self,
        cpu: CpuId,
        prev: Option<TaskId>,
    ) -> Option<(TaskId, CpuId, usize)> {
        let (dst, sdi) = self.sched.rqs[cpu.idx()].active_balance.take()?;
        let p = prev?;
        if self.sched.class_of(p) != crate::rq::Class::Fair {
            return None;
        }
        let task = &self.sched.tasks[p.idx()];
        if task.state != TaskState::Runnable
            || !task.allowed_on(dst)
            || self.sched.ents[task.se.idx()].sched_delayed
        {
            return None;
        }
        self.dequeue_task(p, false);
        Some((p, dst, sdi))
    }

    /// Second half of an active balance: `p` (off every queue) goes to `dst`.
    pub(crate) fn complete_active_balance(
        &mut self,
        cpu: CpuId,
        (p, dst, sdi): (TaskId, CpuId, usize),
    ) {
        self.set_task_cpu(p, dst, cpu);
        self.attach_task(p, dst);
        let st = &mut self.sched.sd_state[dst.idx()][sdi];
        st.nr_balance_failed = 0;
        st.alb_pushed += 1;
        self.charge(cpu, LB_MIGRATE_NS, Path::Balance, true);
    }
}
