//! The deadline class (`kernel/sched/deadline.c`): SCHED_DEADLINE tasks,
//! EDF over CBS-managed budgets, above RT and fair.
//!
//! * Parameters (runtime Q, relative deadline D, period P; rt-app's
//!   `dl-runtime`, `dl-deadline`, `dl-period`).
//! * A CPU runs its queued deadline task with the earliest absolute
//!   deadline (EDF); a woken deadline task preempts anything that is not a
//!   deadline task with an earlier deadline.
//! * CBS: while it runs a task's remaining runtime is charged; at zero it
//!   is throttled (dequeued) until its replenishment timer at the start of
//!   its next period, which gives it Q more and pushes its deadline one
//!   period on (`replenish_dl_entity`); a deadline already in the past is
//!   reset to now + D with a full budget.
//! * Wakeup rule (`update_dl_entity`): a task waking with its deadline
//!   passed, or with more runtime left than its bandwidth allows until that
//!   deadline (`dl_entity_overflow`: r / (d − t) > Q / P), gets a new
//!   deadline t + D and a full budget; for constrained tasks (D < P) with a
//!   future deadline the revised rule scales the runtime to the density
//!   instead (`update_dl_revised_wakeup`).
//! * Admission control (`sched_dl_overflow`, at set-up): every parameter
//!   set must satisfy 1024 ns ≤ Q ≤ D ≤ P ≤ 4 s and P ≥ 100 µs, and the sum
//!   of Q/P over the deadline tasks must not exceed 95 % of the CPUs
//!   (`sched_rt_runtime_us / sched_rt_period_us` per CPU), as the kernel's
//!   `sched_setattr` would refuse with EBUSY.
//!
//! * Global EDF across CPUs: wakeup placement (`select_task_rq_dl`) and
//!   pushes (`push_dl_tasks`, after a non-preempting wakeup, a
//!   replenishment and a switch) send a task that cannot run where it is
//!   queued to an allowed CPU without deadline work (idle first, nearest
//!   first) or to the one running the latest deadline (`find_later_rq`); a
//!   CPU whose earliest deadline got later pulls the earliest queued
//!   deadline task it may run from an overloaded CPU (`pull_dl_task`).
//!
//! Deviations: no `cpudl` heap (scans of the allowed CPUs), no GRUB
//! reclaiming, no `dl_server` for fair tasks; the replenishment timer has
//! no slack; push/pull costs are not charged.

use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::program::DlParams;
use crate::rq::Class;
use crate::sim::Sim;
use crate::task::DlState;
use crate::time::Nanos;

impl<S: Sink> Sim<S> {
    fn dl_key(&self, t: TaskId) -> (Nanos, u64, TaskId) {
        let d = &self.sched.tasks[t.idx()].dl;
        (d.deadline, d.seq, t)
    }

    fn dl_params(&self, t: TaskId) -> DlParams {
        self.sched.tasks[t.idx()]
            .dl
            .params
            .expect("deadline task has parameters")
    }

    /// `update_dl_entity` (wakeup or first activation).
    fn update_dl_entity(&mut self, t: TaskId) {
        let now = self.now;
        let p = self.dl_params(t);
        let d = &mut self.sched.tasks[t.idx()].dl;
        let overflow = |d: &DlState| {
            // r / (d − t) > Q / P  ⇔  r·P > (d − t)·Q
            let left = d.runtime.max(0) as u128 * p.period_ns as u128;
            let right = (d.deadline - now) as u128 * p.runtime_ns as u128;
            left > right
        };
        if d.deadline <= now {
            d.deadline = now + p.deadline_ns;
            d.runtime = p.runtime_ns as i64;
        } else if overflow(d) {
            if p.deadline_ns < p.period_ns {
                // Revised wakeup rule: runtime = density × laxity.
                let laxity = (d.deadline - now) as u128;
                d.runtime = (laxity * p.runtime_ns as u128 / p.deadline_ns as u128) as i64;
            } else {
                d.deadline = now + p.deadline_ns;
                d.runtime = p.runtime_ns as i64;
            }
        }
    }

    /// `replenish_dl_entity`.
    fn replenish_dl(&mut self, t: TaskId) {
        let now = self.now;
        let p = self.dl_params(t);
        let d = &mut self.sched.tasks[t.idx()].dl;
        d.periods += 1;
        while d.runtime <= 0 {
            d.deadline += p.period_ns;
            d.runtime += p.runtime_ns as i64;
        }
        if d.deadline < now {
            // Lagging behind: start over from now.
            d.misses += 1;
            d.deadline = now + p.deadline_ns;
            d.runtime = p.runtime_ns as i64;
        }
    }

    /// `enqueue_task_dl`; `wakeup` applies the CBS wakeup rule. A throttled
    /// task is not queued (its timer will).
    pub(crate) fn enqueue_dl(&mut self, t: TaskId, cpu: CpuId, wakeup: bool) {
        if self.sched.tasks[t.idx()].dl.throttled {
            return;
        }
        if wakeup {
            self.update_dl_entity(t);
        }
        self.insert_dl(t, cpu);
    }

    fn insert_dl(&mut self, t: TaskId, cpu: CpuId) {
        self.sched.rt_seq += 1;
        self.sched.tasks[t.idx()].dl.seq = self.sched.rt_seq;
        let key = self.dl_key(t);
        let fresh = self.sched.rqs[cpu.idx()].dl.queue.insert(key);
        debug_assert!(fresh, "deadline task queued twice");
        self.sched.rqs[cpu.idx()].nr_running += 1;
        if self.sched.rqs[cpu.idx()].nr_running >= 2 {
            self.sched.rd_overloaded = true;
        }
        self.lb_refresh(cpu);
    }

    /// `dequeue_task_dl` (a throttled task is already off the queue).
    pub(crate) fn dequeue_dl(&mut self, t: TaskId) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        let key = self.dl_key(t);
        if self.sched.rqs[cpu.idx()].dl.queue.remove(&key) {
            self.sched.rqs[cpu.idx()].nr_running -= 1;
            self.lb_refresh(cpu);
        }
    }

    /// Is `t` on its CPU's deadline queue?
    pub(crate) fn dl_queued(&self, t: TaskId) -> bool {
        let cpu = self.sched.tasks[t.idx()].cpu;
        self.sched.rqs[cpu.idx()].dl.queue.contains(&self.dl_key(t))
    }

    /// `pick_task_dl`: earliest deadline.
    pub(crate) fn pick_dl(&self, cpu: CpuId) -> Option<TaskId> {
        self.sched.rqs[cpu.idx()]
            .dl
            .queue
            .first()
            .map(|&(_, _, t)| t)
    }

    /// `update_curr_dl`: charge the running deadline task; out of runtime
    /// it is throttled until its next period.
    pub(crate) fn update_curr_dl(&mut self, cpu: CpuId) {
        let Some((t, delta)) = self.update_curr_common(cpu) else {
            return;
        };
        self.sched.tasks[t.idx()].dl.runtime -= delta as i64;
        if self.sched.tasks[t.idx()].dl.runtime <= 0 && !self.sched.tasks[t.idx()].dl.throttled {
            self.dl_throttle(t, cpu);
        }
    }

    /// Out of runtime: off the queue until the replenishment timer (or
    /// replenished at once if the next period already started).
    fn dl_throttle(&mut self, t: TaskId, cpu: CpuId) {
        let p = self.dl_params(t);
        let queued = self.dl_queued(t);
        if queued {
            self.dequeue_dl(t);
        }
        let d = &self.sched.tasks[t.idx()].dl;
        // The next period starts at deadline − D + P.
        let act = d.deadline - p.deadline_ns + p.period_ns;
        if act <= self.now {
            self.replenish_dl(t);
            if queued {
                self.insert_dl(t, cpu);
            }
        } else {
            let d = &mut self.sched.tasks[t.idx()].dl;
            d.throttled = true;
            d.timer_gen = d.timer_gen.wrapping_add(1);
            let gen = d.timer_gen;
            self.queue.push(act, Event::DlTimer { task: t, gen });
        }
        self.resched_curr(cpu, false, cpu);
    }

    /// `dl_task_timer`: replenish and, if the task is runnable, queue it
    /// and preempt a later deadline.
    pub(crate) fn dl_timer(&mut self, t: TaskId, gen: u32) {
        let d = &self.sched.tasks[t.idx()].dl;
        if d.timer_gen != gen || !d.throttled {
            return;
        }
        self.sched.tasks[t.idx()].dl.throttled = false;
        self.replenish_dl(t);
        let task = &self.sched.tasks[t.idx()];
        let runnable =
            task.state == crate::task::TaskState::Runnable && self.sched.class_of(t) == Class::Dl;
        if !runnable {
            return;
        }
        let cpu = task.cpu;
        self.insert_dl(t, cpu);
        self.check_preempt_dl(cpu, t, cpu);
        self.push_dl_tasks(cpu);
    }

    /// Does `t` preempt the current task of `cpu`?
    pub(crate) fn check_preempt_dl(&mut self, cpu: CpuId, t: TaskId, from: CpuId) {
        let preempt = match self.sched.rqs[cpu.idx()].curr {
            None => true,
            Some(c) if c == t => false,
            Some(c) => {
                self.sched.class_of(c) != Class::Dl
                    || self.sched.tasks[t.idx()].dl.deadline < self.sched.tasks[c.idx()].dl.deadline
            }
        };
        if preempt {
            self.resched_curr(cpu, false, from);
        }
    }

    /// `select_task_rq_dl` / `find_later_rq`.
    pub(crate) fn select_task_rq_dl(&self, t: TaskId) -> CpuId {
        let task = &self.sched.tasks[t.idx()];
        let prev = if task.cpus_allowed.test(task.cpu) {
            task.cpu
        } else {
            task.cpus_allowed.first().expect("non-empty affinity")
        };
        let busy_with_dl = |c: CpuId| {
            self.sched.rqs[c.idx()]
                .curr
                .filter(|&x| self.sched.class_of(x) == Class::Dl)
                .map(|x| self.sched.tasks[x.idx()].dl.deadline)
        };
        let my_deadline = match task.dl.deadline {
            0 => self.now + self.dl_params(t).deadline_ns,
            d => d,
        };
        match busy_with_dl(prev) {
            None => return prev,
            Some(d) if d > my_deadline => return prev,
            _ => {}
        }
        // A CPU without a deadline task, idle ones first, nearest first.
        let mut free: Option<CpuId> = None;
        for sd in self.sched.domains.domains(prev) {
            for c in sd.span.iter().filter(|&c| task.cpus_allowed.test(c)) {
                if busy_with_dl(c).is_none() && self.sched.rqs[c.idx()].dl.queue.is_empty() {
                    if self.sched.rqs[c.idx()].curr.is_none() {
                        return c;
                    }
                    free.get_or_insert(c);
                }
            }
            if let Some(c) = free {
                return c;
            }
        }
        // Else the latest deadline.
        task.cpus_allowed
            .iter()
            .max_by_key(|&c| busy_with_dl(c).unwrap_or(Nanos::MAX))
            .unwrap_or(prev)
    }

    /// `find_later_rq` for a push: an allowed CPU other than `from` where
    /// `t` would run at once — one without deadline work (idle first,
    /// nearest to `from` first), else the one whose running deadline task
    /// has the latest deadline, if later than `t`'s.
    fn find_later_rq(&self, t: TaskId, from: CpuId) -> Option<CpuId> {
        let task = &self.sched.tasks[t.idx()];
        let running_dl = |c: CpuId| {
            self.sched.rqs[c.idx()]
                .curr
                .filter(|&x| self.sched.class_of(x) == Class::Dl)
                .map(|x| self.sched.tasks[x.idx()].dl.deadline)
        };
        let mut free: Option<CpuId> = None;
        for sd in self.sched.domains.domains(from) {
            for c in sd
                .span
                .iter()
                .filter(|&c| c != from && task.cpus_allowed.test(c))
            {
                if running_dl(c).is_none() && self.sched.rqs[c.idx()].dl.queue.is_empty() {
                    if self.sched.rqs[c.idx()].curr.is_none() {
                        return Some(c);
                    }
                    free.get_or_insert(c);
                }
            }
            if free.is_some() {
                return free;
            }
        }
        task.cpus_allowed
            .iter()
            .filter(|&c| c != from)
            .filter_map(|c| running_dl(c).map(|d| (d, c)))
            .filter(|&(d, _)| d > task.dl.deadline)
            .max()
            .map(|(_, c)| c)
    }

    /// The deadline task `push_dl_task` would move from `cpu`: the queued,
    /// not running one with the earliest deadline that may run elsewhere.
    fn pushable_dl(&self, cpu: CpuId) -> Option<TaskId> {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.dl
            .queue
            .iter()
            .map(|&(_, _, t)| t)
            .find(|&t| rq.curr != Some(t) && self.sched.tasks[t.idx()].nr_cpus_allowed > 1)
    }

    /// `push_dl_tasks`: move queued deadline tasks that cannot run on
    /// `cpu` now to CPUs where they would (global EDF).
    pub(crate) fn push_dl_tasks(&mut self, cpu: CpuId) {
        for _ in 0..self.machine.nr_cpus() {
            if self.sched.rqs[cpu.idx()].dl.queue.len() < 2 {
                return;
            }
            let Some(p) = self.pushable_dl(cpu) else {
                return;
            };
            let runs_here = match self.sched.rqs[cpu.idx()].curr {
                None => true,
                Some(c) => {
                    self.sched.class_of(c) != Class::Dl
                        || self.sched.tasks[p.idx()].dl.deadline
                            < self.sched.tasks[c.idx()].dl.deadline
                }
            };
            if runs_here {
                return;
            }
            let Some(dst) = self.find_later_rq(p, cpu) else {
                return;
            };
            self.move_dl_task(p, cpu, dst);
            self.acct.cpu_stats[cpu.idx()].dl_push += 1;
        }
    }

    /// `pull_dl_task`: `this` is about to run something with a later
    /// deadline (or no deadline task); take the queued deadline task with
    /// the earliest deadline that could run here from an overloaded CPU.
    pub(crate) fn pull_dl_task(&mut self, this: CpuId) {
        let mine = self.sched.rqs[this.idx()]
            .dl
            .queue
            .first()
            .map(|&(d, _, _)| d);
        let mut best: Option<(Nanos, TaskId, CpuId)> = None;
        for c in 0..self.machine.nr_cpus() {
            let src = CpuId(c as u32);
            if src == this || self.sched.rqs[c].dl.queue.len() < 2 {
                continue;
            }
            let rq = &self.sched.rqs[c];
            let cand = rq.dl.queue.iter().find(|&&(_, _, t)| {
                rq.curr != Some(t) && self.sched.tasks[t.idx()].cpus_allowed.test(this)
            });
            if let Some(&(d, _, t)) = cand {
                if mine.is_none_or(|m| d < m) && best.is_none_or(|(bd, _, _)| d < bd) {
                    best = Some((d, t, src));
                }
            }
        }
        if let Some((_, t, src)) = best {
            self.move_dl_task(t, src, this);
            self.acct.cpu_stats[this.idx()].dl_pull += 1;
        }
    }

    /// Moves a queued, not running deadline task between runqueues (its
    /// deadline and runtime travel with it) and lets the destination
    /// preempt.
    fn move_dl_task(&mut self, t: TaskId, src: CpuId, dst: CpuId) {
        self.dequeue_dl(t);
        self.set_task_cpu(t, dst, src);
        self.insert_dl(t, dst);
        self.check_preempt_dl(dst, t, src);
    }

    /// `yield_task_dl`: give up the rest of this period's runtime.
    pub(crate) fn yield_dl(&mut self, cpu: CpuId, t: TaskId) {
        self.update_curr_dl(cpu);
        if !self.sched.tasks[t.idx()].dl.throttled {
            self.sched.tasks[t.idx()].dl.runtime = 0;
            self.dl_throttle(t, cpu);
        }
    }
}
