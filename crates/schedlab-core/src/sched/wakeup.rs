//! Waking tasks: `try_to_wake_up` (the on_cpu and delayed-dequeue paths,
//! placement, the wakelist), `ttwu_do_activate`, wakeup preemption, and
//! `wake_up_new_task` with fork placement.

use crate::event::Event;
use crate::fair::eevdf::{self, EnqueueKind};
use crate::fair::pelt::{SchedAvg, PELT_MIN_DIVIDER};
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::rq::Class;
use crate::sched::core::Tp;
use crate::sched::fair::WakeFlags;
use crate::sim::Sim;
use crate::stats::Path;
use crate::task::TaskState;

impl<S: Sink> Sim<S> {
    /// `try_to_wake_up` from `waker_cpu` (an interrupt when `!in_task`).
    pub(crate) fn try_to_wake_up(
        &mut self,
        t: TaskId,
        waker_cpu: CpuId,
        in_task: bool,
        sync: bool,
    ) {
        debug_assert_eq!(self.sched.tasks[t.idx()].state, TaskState::Sleeping);
        let target0 = self.sched.tasks[t.idx()].cpu;
        self.emit(waker_cpu, !in_task, Tp::Waking(t, target0));
        self.sched.tasks[t.idx()].stats.wakeups += 1;
        self.acct.cpu_stats[waker_cpu.idx()].ttwu_count += 1;
        let cost = self.machine.costs.wakeup_ns;
        self.charge_waker(waker_cpu, cost, Path::Wakeup, in_task);
        let se = self.sched.tasks[t.idx()].se;
        if self.sched.ents[se.idx()].sched_delayed {
            // ttwu_runnable: still queued (delayed), so no placement: requeue
            // where it is and check preemption there.
            let cpu = self.sched.tasks[t.idx()].cpu;
            self.charge_remote_enqueue(t, cpu, waker_cpu, in_task);
            let outer = self.exec_ctx.replace(waker_cpu);
            self.update_curr_task(cpu);
            let q = self.sched.task_cfs_rq(t);
            let u = eevdf::requeue_delayed_entity(
                &mut self.sched.cfs[q.idx()],
                &mut self.sched.ents,
                se,
                self.now,
                &self.sched.p,
            );
            self.account(cpu, u);
            self.exec_ctx = outer;
            self.add_h_counts(q, 0, 1, 0);
            self.sync_overload(cpu);
            self.lb_refresh(cpu);
            let task = &mut self.sched.tasks[t.idx()];
            task.state = TaskState::Runnable;
            task.wait_since = Some(self.now);
            self.emit(waker_cpu, !in_task, Tp::Wakeup(t, cpu));
            // (The kernel's ttwu_runnable would also kick the CPU if it is
            // idle; the model has never done so here. Left as it is.)
            if self.sched.rqs[cpu.idx()].curr.is_some() {
                self.wakeup_preempt(cpu, t, waker_cpu, in_task, false);
            }
            return;
        }
        // ttwu's on_cpu path: the task's CPU is still switching away from
        // it. From 5.8 on, ttwu_queue_wakelist onto that CPU where
        // ttwu_queue_cond allows (no select_task_rq: it stays there);
        // otherwise the waker spins until the switch is done
        // (smp_cond_load_acquire on p->on_cpu), then selects as usual.
        let on_cpu_until = self.sched.tasks[t.idx()].on_cpu_until;
        if on_cpu_until > self.now && target0 != waker_cpu {
            if crate::kernels::at_least(self.cfg.kernel, 5, 8)
                && self.ttwu_queue_cond(target0, waker_cpu, true)
            {
                self.queue_wakelist(t, target0, waker_cpu);
                return;
            }
            let spin = on_cpu_until - self.now;
            self.charge_waker(waker_cpu, spin, Path::Wakeup, in_task);
        }
        let target = match self.sched.class_of(t) {
            Class::Fair => {
                // The placement's reads of other CPUs' runqueues are the
                // waker's time, beside `wakeup_ns` (fair/select: Probes).
                let (cpu, probes) =
                    self.select_task_rq_fair(t, waker_cpu, WakeFlags::Ttwu { sync });
                self.charge_waker(
                    waker_cpu,
                    probes.available_idle_ns,
                    Path::AvailableIdle,
                    in_task,
                );
                self.charge_waker(waker_cpu, probes.sched_idle_ns, Path::SchedIdle, in_task);
                cpu
            }
            Class::Rt => self.select_task_rq_rt(t, waker_cpu),
            Class::Dl => self.select_task_rq_dl(t),
        };
        if target == waker_cpu {
            self.acct.cpu_stats[waker_cpu.idx()].ttwu_local += 1;
        } else if let Some(i) = self
            .sched
            .domains
            .domains(waker_cpu)
            .iter()
            .position(|sd| sd.span.test(target))
        {
            // ttwu_stat: the waker's lowest domain spanning the target.
            self.sched.sd_state[waker_cpu.idx()][i].ttwu_wake_remote += 1;
        }
        self.set_task_cpu(t, target, waker_cpu);
        if !self.ttwu_queue_cond(target, waker_cpu, false) {
            self.charge_remote_enqueue(t, target, waker_cpu, in_task);
            self.ttwu_do_activate(t, target, waker_cpu, in_task, EnqueueKind::Wakeup);
        } else {
            self.queue_wakelist(t, target, waker_cpu);
        }
    }

    /// TTWU_QUEUE (`__ttwu_queue_wakelist`): `target` enqueues `t` in its
    /// IPI handler. A polling idle CPU needs no IPI
    /// (`send_call_function_single_ipi` sets its need-resched flag
    /// instead); a running or halted one does.
    fn queue_wakelist(&mut self, t: TaskId, target: CpuId, waker_cpu: CpuId) {
        let rq = &self.sched.rqs[target.idx()];
        let needs_ipi = rq.curr.is_some() || self.halted(target);
        self.sched.tasks[t.idx()].state = TaskState::Waking;
        self.sched.rqs[target.idx()].ttwu_pending += 1;
        self.lb_refresh(target);
        if needs_ipi {
            self.charge_ipi_send(waker_cpu);
        }
        let at = self.now + self.machine.costs.ipi_latency_ns;
        let at = self.irq_time(target, at);
        self.queue.push(
            at,
            Event::RemoteWakeup {
                cpu: target,
                task: t,
            },
        );
    }

    /// `ttwu_queue_cond`: whether a wakeup onto `target` from `waker` goes
    /// through the target's wakelist (its IPI handler enqueues the task)
    /// rather than being enqueued by the waker. Across LLCs always (the
    /// waker would touch another cache's runqueue); never on the waker's own
    /// CPU. Within the LLC, from 6.0 on, when the target has nothing to run
    /// ("Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is
    /// idle": the idle or soon-idle CPU does the activation, as the waker is
    /// likely busy); from 5.8 to 5.19 only for a task still descheduling on
    /// `target` (`on_cpu`, WF_ON_CPU) when it runs at most one task.
    fn ttwu_queue_cond(&self, target: CpuId, waker: CpuId, on_cpu: bool) -> bool {
        if target == waker {
            return false;
        }
        if !self.machine.share_llc(target, waker) {
            return true;
        }
        let nr = self.sched.rqs[target.idx()].nr_running;
        if crate::kernels::at_least(self.cfg.kernel, 6, 0) {
            nr == 0
        } else {
            on_cpu && nr <= 1
        }
    }

    /// An idle CPU in a halting state, not yet woken: waking it takes an
    /// IPI (one that polls notices its need-resched flag by itself).
    pub(super) fn halted(&self, cpu: CpuId) -> bool {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.curr.is_none()
            && rq.awake_at.is_none()
            && rq
                .idle_state
                .is_some_and(|s| self.machine.idle_states[s].exit_latency_ns > 0)
    }

    pub(crate) fn remote_wakeup(&mut self, cpu: CpuId, t: TaskId) {
        self.sched.rqs[cpu.idx()].ttwu_pending -= 1;
        self.lb_refresh(cpu);
        self.ttwu_do_activate(t, cpu, cpu, false, EnqueueKind::Wakeup);
        self.reidle(cpu);
    }

    /// `ttwu_do_activate` run by `exec_cpu`: enqueue, trace, preempt check.
    fn ttwu_do_activate(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        exec_cpu: CpuId,
        in_task: bool,
        kind: EnqueueKind,
    ) {
        self.update_avg_idle(cpu);
        let outer = self.exec_ctx.replace(exec_cpu);
        self.enqueue_task(t, cpu, kind);
        self.exec_ctx = outer;
        let task = &mut self.sched.tasks[t.idx()];
        task.state = TaskState::Runnable;
        task.wait_since = Some(self.now);
        if kind == EnqueueKind::Initial {
            self.emit(exec_cpu, false, Tp::WakeupNew(t, cpu));
        } else {
            self.emit(exec_cpu, !in_task, Tp::Wakeup(t, cpu));
        }
        self.wakeup_preempt(cpu, t, exec_cpu, in_task, kind == EnqueueKind::Initial);
    }

    /// `wakeup_preempt`: a woken or newly queued task against the running
    /// one; across classes the higher class wins, within the fair class
    /// [`Sim::wakeup_preempt_fair`] decides.
    pub(crate) fn wakeup_preempt(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        exec_cpu: CpuId,
        in_task: bool,
        fork: bool,
    ) {
        let rq = &self.sched.rqs[cpu.idx()];
        let Some(curr) = rq.curr else {
            // The idle class is below every other: an idle CPU runs the
            // newcomer.
            self.resched_curr(cpu, false, exec_cpu);
            return;
        };
        if curr == t {
            return;
        }
        let (wc, cc) = (self.sched.class_of(t), self.sched.class_of(curr));
        let rank = |c: Class| match c {
            Class::Dl => 0,
            Class::Rt => 1,
            Class::Fair => 2,
        };
        if rank(wc) != rank(cc) || wc != Class::Fair {
            let preempt = match (wc, cc) {
                _ if rank(wc) < rank(cc) => true,
                _ if rank(wc) > rank(cc) => false,
                (Class::Rt, _) => {
                    self.sched.tasks[t.idx()].prio < self.sched.tasks[curr.idx()].prio
                }
                _ => {
                    self.sched.tasks[t.idx()].dl.deadline < self.sched.tasks[curr.idx()].dl.deadline
                }
            };
            if preempt {
                self.resched_curr(cpu, false, exec_cpu);
            } else if wc == Class::Rt && self.sched.rqs[cpu.idx()].rt.queue.len() >= 2 {
                // task_woken_rt: it cannot run here now; push it away.
                self.push_rt_tasks(cpu);
            } else if wc == Class::Dl && self.sched.rqs[cpu.idx()].dl.queue.len() >= 2 {
                // task_woken_dl.
                self.push_dl_tasks(cpu);
            }
            return;
        }
        self.wakeup_preempt_fair(cpu, t, curr, exec_cpu, in_task, fork);
    }

    /// `wake_up_new_task`: first placement (fork slow path) and wakeup.
    pub(crate) fn wake_up_new_task(&mut self, t: TaskId, this: CpuId) {
        let cpu = self.select_task_rq_fork(t, this);
        self.sched.tasks[t.idx()].cpu = cpu;
        self.sched.set_task_rq(t);
        // post_init_entity_util_avg: a new task looks heavy (load = weight)
        // and gets half the spare capacity of its CPU as util.
        let q = self.sched.task_cfs_rq(t).idx();
        let se = self.sched.tasks[t.idx()].se;
        let (cfs_util, cfs_load) = (
            self.sched.cfs[q].avg.util_avg,
            self.sched.cfs[q].avg.load_avg,
        );
        let cap = (1024u64.saturating_sub(cfs_util)) / 2;
        let w = self.sched.ents[se.idx()].weight;
        let util = if cfs_util > 0 {
            (cfs_util * w / (cfs_load + 1)).min(cap)
        } else {
            cap
        };
        let div = PELT_MIN_DIVIDER;
        self.sched.ents[se.idx()].avg = SchedAvg {
            load_sum: div,
            load_avg: w,
            util_avg: util,
            util_sum: util * div,
            runnable_avg: util,
            runnable_sum: util * div,
            ..Default::default()
        };
        if self.trace {
            let parent = self.sched.rqs[this.idx()].curr;
            self.emit(this, false, Tp::Fork { parent, child: t });
            if let Some(p) = parent.filter(|p| {
                self.sched.tasks[p.idx()].spec.name != self.sched.tasks[t.idx()].spec.name
            }) {
                // The thread takes its own name (rt-app's
                // pthread_setname_np) before its first wakeup.
                self.emit(this, false, Tp::Rename { task: t, parent: p });
            }
        }
        self.ttwu_do_activate(t, cpu, this, true, EnqueueKind::Initial);
    }

    /// `select_task_rq` with `WF_FORK` (also used to move a task whose
    /// affinity no longer allows its CPU), by class.
    pub(crate) fn select_task_rq_fork(&mut self, t: TaskId, this: CpuId) -> CpuId {
        match self.sched.class_of(t) {
            Class::Fair => self.select_task_rq_fair(t, this, WakeFlags::Fork).0,
            Class::Rt => {
                // A new task's CPU is not meaningful yet: start from `this`.
                self.sched.tasks[t.idx()].cpu = this;
                self.select_task_rq_rt(t, this)
            }
            Class::Dl => {
                self.sched.tasks[t.idx()].cpu = this;
                self.select_task_rq_dl(t)
            }
        }
    }
}
