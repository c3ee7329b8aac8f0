//! The real-time class (`kernel/sched/rt.c`): SCHED_FIFO and SCHED_RR
//! above the fair class.
//!
//! * Strict priority: a runqueue runs its highest-priority runnable RT task
//!   (kernel prio 0..99, lower is higher; `prio = 99 − rt_priority`); tasks
//!   of equal priority run in FIFO order. A preempted task keeps its place
//!   at the head of its priority; a woken one goes to the tail.
//! * SCHED_RR: a 100 ms timeslice (`sched_rr_timeslice`) counted down by
//!   the tick; when it runs out the task goes to the tail of its priority
//!   if another task waits there.
//! * Wakeup placement (`select_task_rq_rt` / `find_lowest_rq` over cpupri):
//!   when the target runs an RT task the wakee cannot preempt, the wakee
//!   goes to an allowed CPU of the lowest priority class present (idle and
//!   fair CPUs count the same, as cpupri's CPUPRI_NORMAL), preferring its
//!   previous CPU, then this CPU, then the nearest by sched domain.
//! * Push and pull: a runqueue with two or more RT tasks is overloaded; its
//!   highest waiting task that may run elsewhere is pushed to the lowest
//!   CPU it can preempt (`push_rt_tasks`, after a wakeup that did not
//!   preempt and after a switch); a CPU whose RT priority drops pulls the
//!   best waiting task it can run from overloaded CPUs (`pull_rt_task`).
//! * RT throttling: RT tasks of a CPU may use `sched_rt_runtime_us`
//!   (950 ms) per `sched_rt_period_us` (1 s); past that the CPU's RT queue
//!   is throttled until the period timer refills it (RT_RUNTIME_SHARE off,
//!   the default).
//!
//! The fair class only sees the time RT tasks leave: an RT task is curr of
//! its runqueue and the fair class's accounting does not run meanwhile.
//!
//! Deviations: no `cpupri` bitmaps (the scan is over the allowed CPUs), no
//! RT group scheduling (RT tasks are throttled per CPU whatever their
//! cgroup), no `rto_push_ipi` chain (pulls look at every overloaded CPU
//! directly), costs of push/pull are not charged.

use crate::event::Event;
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::program::Policy;
use crate::rq::Class;
use crate::rq::MAX_RT_PRIO;
use crate::sim::Sim;
use crate::time::Nanos;

// `sched_rr_timeslice_ms`, `sched_rt_period_us` and `sched_rt_runtime_us`
// are tunables (`cfg.tunables`; 100 ms, 1 s, 0.95 s by default).

impl<S: Sink> Sim<S> {
    fn rt_key(&self, t: TaskId) -> (i32, u64, TaskId) {
        let task = &self.sched.tasks[t.idx()];
        (task.prio, task.rt_seq, t)
    }

    /// `enqueue_task_rt` at the tail of its priority.
    pub(crate) fn enqueue_rt(&mut self, t: TaskId, cpu: CpuId) {
        self.sched.rt_seq += 1;
        let task = &mut self.sched.tasks[t.idx()];
        task.rt_seq = self.sched.rt_seq;
        if task.rr_left == 0 {
            task.rr_left = self.cfg.tunables.rr_timeslice_ns(self.cfg.tick_ns());
        }
        let key = self.rt_key(t);
        let fresh = self.sched.rqs[cpu.idx()].rt.queue.insert(key);
        debug_assert!(fresh, "RT task queued twice");
        self.sched.rqs[cpu.idx()].nr_running += 1;
        if self.sched.rqs[cpu.idx()].nr_running >= 2 {
            self.sched.rd_overloaded = true;
        }
        self.lb_refresh(cpu);
    }

    /// `dequeue_task_rt`.
    pub(crate) fn dequeue_rt(&mut self, t: TaskId) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        let key = self.rt_key(t);
        let was = self.sched.rqs[cpu.idx()].rt.queue.remove(&key);
        debug_assert!(was, "RT task not queued");
        self.sched.rqs[cpu.idx()].nr_running -= 1;
        self.lb_refresh(cpu);
    }

    /// `requeue_task_rt`: to the tail of its priority (RR slice end, yield).
    pub(crate) fn requeue_rt_tail(&mut self, t: TaskId) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        let key = self.rt_key(t);
        if self.sched.rqs[cpu.idx()].rt.queue.remove(&key) {
            self.sched.rt_seq += 1;
            self.sched.tasks[t.idx()].rt_seq = self.sched.rt_seq;
            let key = self.rt_key(t);
            self.sched.rqs[cpu.idx()].rt.queue.insert(key);
        }
    }

    /// `pick_task_rt`.
    pub(crate) fn pick_rt(&self, cpu: CpuId) -> Option<TaskId> {
        let rt = &self.sched.rqs[cpu.idx()].rt;
        if rt.throttled {
            return None;
        }
        rt.queue.first().map(|&(_, _, t)| t)
    }

    /// `update_curr_rt`: charge the running RT task and the CPU's RT time;
    /// throttle the RT queue once it used its runtime for the period.
    pub(crate) fn update_curr_rt(&mut self, cpu: CpuId) {
        let Some((_, delta)) = self.update_curr_common(cpu) else {
            return;
        };
        let runtime = self.cfg.tunables.rt_runtime_ns().unwrap_or(u64::MAX);
        let rt = &mut self.sched.rqs[cpu.idx()].rt;
        rt.rt_time += delta;
        if !rt.throttled && rt.rt_time > runtime {
            rt.throttled = true;
            self.acct.cpu_stats[cpu.idx()].rt_throttled += 1;
            self.resched_curr(cpu, false, cpu);
        }
    }

    /// `update_curr_common`: charge the running (RT or deadline) task up to
    /// now. Returns the task and the time charged, if any: its program's
    /// time since `exec_start` plus the scheduler work charged to it since
    /// the last update (`charge_sched_work_rt_dl`), which the kernel's
    /// delta includes.
    pub(crate) fn update_curr_common(&mut self, cpu: CpuId) -> Option<(TaskId, Nanos)> {
        let t = self.sched.rqs[cpu.idx()].curr?;
        let se = self.sched.tasks[t.idx()].se;
        let work = std::mem::take(&mut self.sched.tasks[t.idx()].sched_work_pending);
        let now = self.now;
        let e = &mut self.sched.ents[se.idx()];
        let delta = now.saturating_sub(e.exec_start);
        if delta > 0 {
            e.exec_start = now;
            e.sum_exec_runtime += delta;
        }
        // With no new program time this still reports the time held back
        // for `sched_stat_runtime` (`Task::stat_unreported`: a quiet burst
        // end's time), as the fair class's update does: the kernel's delta
        // at this update would include that time.
        self.account(
            cpu,
            crate::fair::eevdf::CurrUpdate {
                delta_exec: delta,
                resched: false,
            },
        );
        if delta == 0 && work == 0 {
            return None;
        }
        Some((t, delta + work))
    }

    /// [`Sim::charge_sched_work`] for an RT or deadline task: its
    /// `sum_exec_runtime` now (no decision rests on it), and its class's
    /// use of the time — the CPU's RT time against `sched_rt_runtime_us`,
    /// a deadline task's runtime — at the task's next `update_curr_rt` /
    /// `update_curr_dl`, as in the kernel: neither `try_to_wake_up` nor
    /// `__schedule`'s switch to a task calls its class's update_curr, so
    /// throttling sees the work at the next tick, dequeue or put_prev
    /// (or the next stall of the CPU under the task: `Sim::stall`
    /// updates RT and deadline tasks first).
    pub(crate) fn charge_sched_work_rt_dl(&mut self, t: TaskId, cost: Nanos) {
        let task = &mut self.sched.tasks[t.idx()];
        task.sched_work_pending += cost;
        self.sched.ents[task.se.idx()].sum_exec_runtime += cost;
    }

    /// `task_tick_rt`: the RR timeslice.
    pub(crate) fn task_tick_rt(&mut self, cpu: CpuId, t: TaskId) {
        let tick = self.cfg.tick_ns();
        let task = &mut self.sched.tasks[t.idx()];
        if task.policy != Policy::Rr {
            return;
        }
        task.rr_left = task.rr_left.saturating_sub(tick);
        if task.rr_left > 0 {
            return;
        }
        task.rr_left = self.cfg.tunables.rr_timeslice_ns(self.cfg.tick_ns());
        let prio = task.prio;
        let others = self.sched.rqs[cpu.idx()]
            .rt
            .queue
            .iter()
            .any(|&(p, _, x)| p == prio && x != t);
        if others {
            self.requeue_rt_tail(t);
            self.resched_curr(cpu, false, cpu);
        }
    }

    /// The RT priority a CPU runs at for placement (`cpupri`): its best
    /// queued RT prio, `MAX_RT_PRIO` when it runs fair work or nothing.
    /// A CPU running a deadline task counts as better than any RT prio.
    fn cpupri(&self, cpu: CpuId) -> i32 {
        let rq = &self.sched.rqs[cpu.idx()];
        if let Some(c) = rq.curr {
            if self.sched.class_of(c) == Class::Dl {
                return -1;
            }
        }
        rq.rt.highest_prio()
    }

    /// `find_lowest_rq`: an allowed CPU of the lowest priority class below
    /// `t`'s prio, nearest to `t`'s CPU; None if there is none.
    pub(crate) fn find_lowest_rq(&self, t: TaskId, this: CpuId) -> Option<CpuId> {
        let task = &self.sched.tasks[t.idx()];
        let prev = task.cpu;
        let mut best = task.prio; // must be strictly lower priority (higher number)
        let mut mask: Vec<CpuId> = Vec::new();
        for c in task.cpus_allowed.iter() {
            let p = self.cpupri(c);
            if p > best {
                best = p;
                mask.clear();
            }
            if p == best && p > task.prio {
                mask.push(c);
            }
        }
        if mask.is_empty() {
            return None;
        }
        if mask.contains(&prev) {
            return Some(prev);
        }
        for sd in self.sched.domains.domains(prev) {
            if mask.contains(&this) && sd.span.test(this) {
                return Some(this);
            }
            if let Some(&c) = mask.iter().find(|&&c| sd.span.test(c)) {
                return Some(c);
            }
        }
        mask.first().copied()
    }

    /// `select_task_rq_rt` for a wakeup or fork of `t`.
    pub(crate) fn select_task_rq_rt(&self, t: TaskId, this: CpuId) -> CpuId {
        let task = &self.sched.tasks[t.idx()];
        let cpu = if task.cpus_allowed.test(task.cpu) {
            task.cpu
        } else {
            task.cpus_allowed.first().expect("non-empty affinity")
        };
        let rq = &self.sched.rqs[cpu.idx()];
        let curr_blocks = rq.curr.is_some_and(|c| {
            let ct = &self.sched.tasks[c.idx()];
            match self.sched.class_of(c) {
                Class::Dl => true,
                Class::Rt => ct.nr_cpus_allowed < 2 || ct.prio <= task.prio,
                Class::Fair => false,
            }
        });
        if curr_blocks || rq.rt.throttled {
            if let Some(l) = self.find_lowest_rq(t, this) {
                if task.prio < self.cpupri(l) {
                    return l;
                }
            }
        }
        cpu
    }

    /// The task `push_rt_task` would move from `cpu`: the best queued RT
    /// task that is not running and may run elsewhere.
    fn pushable_rt(&self, cpu: CpuId) -> Option<TaskId> {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.rt
            .queue
            .iter()
            .map(|&(_, _, t)| t)
            .find(|&t| rq.curr != Some(t) && self.sched.tasks[t.idx()].nr_cpus_allowed > 1)
    }

    /// `push_rt_tasks`: move waiting RT tasks of an overloaded `cpu` to
    /// CPUs where they would run at once.
    pub(crate) fn push_rt_tasks(&mut self, cpu: CpuId) {
        for _ in 0..self.machine.nr_cpus() {
            if self.sched.rqs[cpu.idx()].rt.queue.len() < 2 {
                return;
            }
            let Some(p) = self.pushable_rt(cpu) else {
                return;
            };
            // Only if it cannot run here now.
            let curr_prio = self.sched.rqs[cpu.idx()]
                .curr
                .map_or(MAX_RT_PRIO + 40, |c| self.sched.tasks[c.idx()].prio);
            if self.sched.tasks[p.idx()].prio < curr_prio && !self.sched.rqs[cpu.idx()].rt.throttled
            {
                return; // it will preempt curr here
            }
            let Some(dst) = self.find_lowest_rq(p, cpu) else {
                return;
            };
            if dst == cpu || self.cpupri(dst) <= self.sched.tasks[p.idx()].prio {
                return;
            }
            self.move_rt_task(p, cpu, dst);
            self.acct.cpu_stats[cpu.idx()].rt_push += 1;
        }
    }

    /// `pull_rt_task`: `this` is about to run something of lower priority;
    /// take the best waiting RT task it can run from an overloaded CPU.
    pub(crate) fn pull_rt_task(&mut self, this: CpuId) {
        if self.sched.rqs[this.idx()].rt.throttled {
            return;
        }
        let mine = self.sched.rqs[this.idx()].rt.highest_prio();
        let mut best: Option<(i32, TaskId, CpuId)> = None;
        for c in 0..self.machine.nr_cpus() {
            let src = CpuId(c as u32);
            if src == this || self.sched.rqs[c].rt.queue.len() < 2 {
                continue;
            }
            let rq = &self.sched.rqs[c];
            for &(p, _, t) in &rq.rt.queue {
                if rq.curr == Some(t) || !self.sched.tasks[t.idx()].cpus_allowed.test(this) {
                    continue;
                }
                if p < mine && best.is_none_or(|(bp, _, _)| p < bp) {
                    best = Some((p, t, src));
                }
                break; // the first pullable one is that queue's best
            }
        }
        if let Some((_, t, src)) = best {
            self.move_rt_task(t, src, this);
            self.acct.cpu_stats[this.idx()].rt_pull += 1;
        }
    }

    /// Moves a queued, not running RT task between runqueues and lets the
    /// destination reschedule.
    fn move_rt_task(&mut self, t: TaskId, src: CpuId, dst: CpuId) {
        self.dequeue_rt(t);
        self.set_task_cpu(t, dst, src);
        self.enqueue_rt(t, dst);
        let rq = &self.sched.rqs[dst.idx()];
        let preempt = match rq.curr {
            None => true,
            Some(c) => self.sched.tasks[t.idx()].prio < self.sched.tasks[c.idx()].prio,
        };
        if preempt {
            self.resched_curr(dst, false, src);
        }
    }

    /// Arms the global RT period timer (workloads with RT or deadline
    /// tasks only, so fair-only runs keep their event sequence).
    pub(crate) fn start_rt_period(&mut self) {
        let period = self.cfg.tunables.rt_period_ns();
        let at = (self.now / period + 1) * period;
        self.queue.push(at, Event::RtPeriod);
    }

    /// `do_sched_rt_period_timer` for every CPU.
    pub(crate) fn rt_period_timer(&mut self) {
        for c in 0..self.machine.nr_cpus() {
            let cpu = CpuId(c as u32);
            if self.sched.rqs[c]
                .curr
                .is_some_and(|t| self.sched.class_of(t) == Class::Rt)
            {
                self.update_curr_rt(cpu);
            }
            let runtime = self.cfg.tunables.rt_runtime_ns().unwrap_or(u64::MAX);
            let rt = &mut self.sched.rqs[c].rt;
            rt.rt_time = rt.rt_time.saturating_sub(runtime);
            if rt.throttled && rt.rt_time < runtime {
                rt.throttled = false;
                if !rt.queue.is_empty() {
                    self.resched_curr(cpu, false, cpu);
                }
            }
        }
        let at = self.now + self.cfg.tunables.rt_period_ns();
        self.queue.push(at, Event::RtPeriod);
    }
}
