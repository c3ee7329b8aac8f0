//! CFS bandwidth control on the simulator: runtime accounting per queue,
//! the period and slack timers as events, throttling and unthrottling in
//! the three generations of the `THROTTLE` switch.
//!
//! Kernel reference: fair.c `account_cfs_rq_runtime`,
//! `assign_cfs_rq_runtime`, `check_cfs_rq_runtime`,
//! `check_enqueue_throttle`, `throttle_cfs_rq`, `unthrottle_cfs_rq`,
//! `tg_throttle_down` / `tg_unthrottle_up`, `throttle_cfs_rq_work`,
//! `sched_cfs_period_timer`, `sched_cfs_slack_timer`,
//! `distribute_cfs_runtime`, `__cfsb_csd_unthrottle` (kernel-model.md §12).
//! Pool arithmetic is in `fair::bandwidth`.
//!
//! The three generations (`features::Throttle`):
//! * **legacy** (≤ 6.17): running out only asks for a reschedule; the next
//!   pick or put of that level throttles it and dequeues its group entity
//!   (the whole subtree vanishes from the CPU, tasks in the kernel too).
//!   `throttled_clock` starts at the throttle.
//! * **per-task** (6.18+): the throttled hierarchy stays queued; a task
//!   picked from it gets a task_work and parks itself on its queue's limbo
//!   list when it returns to user space. A task inside a syscall (the
//!   channel operations' CPU time) runs on until it leaves the kernel.
//!   `throttled_clock` starts when the first task parks.
//! * **unified** (2026 proposal): runtime accounting throttles at once —
//!   asking the pool for a full slice while the queue's entity runs — and
//!   gives the running task the task_work without a reschedule; unthrottle
//!   and distribution first bring the queue's accounting up to date.
//!
//! Return to user space is modelled as: at once for a task running user
//! code (the accounting that found the overrun ran in an interrupt or a
//! syscall of that task, which returns to user right after), at the end of
//! the current channel syscall otherwise.
//!
//! Costs (guesses, charged as CPU time under the profile's `throttle`
//! path): [`TG_WALK_NS`] per cfs_rq visited by a throttle or unthrottle
//! walk (`walk_tg_tree_from`) and per throttled queue the period or slack
//! timer visits, and a wakeup's cost (`MachineCosts::wakeup_ns`) per limbo
//! task re-enqueued. Work that arises inside runtime accounting is charged
//! at the CPU's next schedule or tick (charging there would recurse).
//!
//! The period timer fires on the CPU whose queue started it; the slack
//! timer's distribution is charged to that CPU too.
//!
//! Deviations: PELT clocks of throttled queues keep running; the period
//! timer's precision guard (quota doubling after 4 overruns in one
//! callback) never triggers because simulated timers never run late.

use crate::event::Event;
use crate::fair::bandwidth::{distribute, SLACK_PERIOD_NS};
use crate::fair::eevdf::EnqueueKind;
use crate::features::Throttle;
use crate::ids::{CfsRqId, CpuId, GroupId, TaskId};
use crate::observe::{PrevState, Sink};
use crate::sim::Sim;
use crate::task::TaskState;
use rand::Rng;

/// CPU time to visit one cfs_rq in a throttle/unthrottle walk or in the
/// distribution loop (a few cache lines and a lock; a guess).
pub const TG_WALK_NS: u64 = 50;

impl<S: Sink> Sim<S> {
    /// THROTTLE=legacy.
    #[inline]
    pub(crate) fn throttle_legacy(&self) -> bool {
        self.cfg.features.throttle == Throttle::Legacy
    }

    /// Charges the bandwidth work pending on `cpu` (from a safe point:
    /// end of schedule, tick, timer and IPI handlers).
    pub(crate) fn flush_throttle_cost(&mut self, cpu: CpuId, rearm: bool) {
        let c = std::mem::take(&mut self.acct.throttle_cost[cpu.idx()]);
        self.charge(cpu, c, crate::stats::Path::Throttle, rearm);
    }

    /// Cfs_rqs of group `g`'s subtree (one per group on a CPU).
    fn subtree_size(&self, g: GroupId) -> u64 {
        let mut n = 0;
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            n += 1;
            stack.extend(self.sched.groups[x.idx()].children.iter().copied());
        }
        n
    }

    fn bw_mut(&mut self, g: GroupId) -> &mut crate::fair::bandwidth::CfsBandwidth {
        self.sched.groups[g.idx()]
            .bw
            .as_mut()
            .expect("group with bandwidth")
    }

    /// `start_cfs_bandwidth`: arm the period timer if it is not running.
    /// Its grid is fixed per group (the cgroup's creation time), drawn from
    /// the seed.
    fn start_cfs_bandwidth(&mut self, g: GroupId, cpu: CpuId) {
        let now = self.now;
        let seed = self.cfg.seed;
        let path = self.sched.groups[g.idx()].path.clone();
        let b = self.bw_mut(g);
        if b.period_active {
            return;
        }
        let period = b.period;
        let phase = crate::rng::stream(seed, &format!("bw-period:{path}")).random_range(0..period);
        let next = if now < phase {
            phase
        } else {
            phase + ((now - phase) / period + 1) * period
        };
        b.period_active = true;
        b.timer_cpu = cpu;
        b.next_refresh = next;
        b.period_gen = b.period_gen.wrapping_add(1);
        let gen = b.period_gen;
        self.queue.push(next, Event::BwPeriod { group: g, gen });
    }

    /// `assign_cfs_rq_runtime` toward `target`: true if the queue has
    /// runtime afterwards.
    fn assign_cfs_rq_runtime(&mut self, q: CfsRqId, target: u64) -> bool {
        let g = self.sched.cfs[q.idx()].tg;
        let cpu = self.sched.cfs[q.idx()].cpu;
        self.start_cfs_bandwidth(g, cpu);
        let remaining = self.sched.cfs[q.idx()].bw.remaining;
        let got = self.bw_mut(g).take(remaining, target);
        let c = &mut self.sched.cfs[q.idx()];
        c.bw.remaining += got as i64;
        c.bw.remaining > 0
    }

    /// `account_cfs_rq_runtime` for `delta` of runtime used on queue `q`
    /// (the caller checked `bw.enabled`).
    pub(crate) fn account_cfs_rq_runtime(&mut self, q: CfsRqId, delta: u64) {
        let c = &mut self.sched.cfs[q.idx()];
        c.bw.remaining -= delta as i64;
        if c.bw.remaining > 0 || c.bw.throttled {
            return;
        }
        match self.cfg.features.throttle {
            Throttle::Legacy | Throttle::PerTask => {
                if !self.assign_cfs_rq_runtime(q, self.cfg.tunables.cfs_bandwidth_slice_ns())
                    && self.sched.cfs[q.idx()].curr.is_some()
                {
                    let cpu = self.sched.cfs[q.idx()].cpu;
                    self.resched_curr(cpu, false, cpu);
                }
            }
            Throttle::Unified => {
                if !self.assign_cfs_rq_runtime(q, self.cfg.tunables.cfs_bandwidth_slice_ns()) {
                    self.throttle_cfs_rq(q);
                }
            }
        }
    }

    /// `check_cfs_rq_runtime`: true if queue `q` is (now) throttled.
    pub(crate) fn check_cfs_rq_runtime(&mut self, q: CfsRqId) -> bool {
        let c = &self.sched.cfs[q.idx()];
        if !c.bw.enabled {
            return false;
        }
        if c.bw.throttled {
            return true;
        }
        if c.bw.remaining > 0 {
            return false;
        }
        self.throttle_cfs_rq(q)
    }

    /// `check_enqueue_throttle`: the first entity queued on a queue with no
    /// runtime left and nothing running throttles it at once.
    pub(crate) fn check_enqueue_throttle(&mut self, q: CfsRqId) {
        let c = &self.sched.cfs[q.idx()];
        if c.curr.is_some() || c.bw.throttled {
            return;
        }
        if c.bw.remaining <= 0
            && !self.assign_cfs_rq_runtime(q, self.cfg.tunables.cfs_bandwidth_slice_ns())
        {
            self.throttle_cfs_rq(q);
        }
    }

    /// `return_cfs_rq_runtime`: an empty queue gives back its slack.
    pub(crate) fn return_cfs_rq_runtime(&mut self, q: CfsRqId) {
        let now = self.now;
        let g = self.sched.cfs[q.idx()].tg;
        let remaining = self.sched.cfs[q.idx()].bw.remaining;
        let bw_slice = self.cfg.tunables.cfs_bandwidth_slice_ns();
        let b = self.bw_mut(g);
        let back = b.give_back(remaining);
        if back == 0 {
            return;
        }
        let arm = b.wants_slack_timer(now, bw_slice);
        if arm {
            b.slack_armed = true;
            b.slack_gen = b.slack_gen.wrapping_add(1);
            let gen = b.slack_gen;
            self.queue
                .push(now + SLACK_PERIOD_NS, Event::BwSlack { group: g, gen });
        }
        self.sched.cfs[q.idx()].bw.remaining -= back as i64;
    }

    /// `throttle_cfs_rq`. Returns true if the queue is throttled.
    fn throttle_cfs_rq(&mut self, q: CfsRqId) -> bool {
        let now = self.now;
        let mode = self.cfg.features.throttle;
        let running = self.sched.cfs[q.idx()].curr.is_some();
        // Raced with a refill? The probe asks for 1 ns (a full slice for a
        // running queue under unified throttling).
        let target = if mode == Throttle::Unified && running {
            self.cfg.tunables.cfs_bandwidth_slice_ns()
        } else {
            1
        };
        if self.assign_cfs_rq_runtime(q, target) {
            return false;
        }
        let g = self.sched.cfs[q.idx()].tg;
        let cpu = self.sched.cfs[q.idx()].cpu;
        self.bw_mut(g).throttled.push(q);
        self.tg_throttle_down(g, cpu);
        self.acct.throttle_cost[cpu.idx()] += TG_WALK_NS * self.subtree_size(g);
        self.sched.cfs[q.idx()].bw.throttled = true;
        match mode {
            Throttle::Legacy => {
                if self.sched.cfs[q.idx()].nr_queued > 0 {
                    self.sched.cfs[q.idx()].bw.throttled_clock = Some(now);
                }
                self.dequeue_throttled_subtree(q);
            }
            Throttle::PerTask => {}
            Throttle::Unified => {
                // The running task of this hierarchy parks at return to
                // user; no reschedule is asked for.
                if let Some(t) = self.sched.rqs[cpu.idx()].curr {
                    if self.task_in_hierarchy_of(t, q) {
                        self.sched.tasks[t.idx()].throttle_work = true;
                        self.post_task_work(cpu);
                    }
                }
            }
        }
        true
    }

    /// Is `t` queued below (or on) queue `q`?
    fn task_in_hierarchy_of(&self, t: TaskId, q: CfsRqId) -> bool {
        let mut x = Some(self.sched.task_cfs_rq(t));
        while let Some(c) = x {
            if c == q {
                return true;
            }
            x = self.sched.cfs[c.idx()]
                .se
                .map(|ge| self.sched.ents[ge.idx()].cfs_rq);
        }
        false
    }

    /// `tg_throttle_down` over group `g`'s subtree on `cpu`.
    fn tg_throttle_down(&mut self, g: GroupId, cpu: CpuId) {
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            let q = self.sched.groups[x.idx()].cfs_rq[cpu.idx()];
            self.sched.cfs[q.idx()].bw.throttle_count += 1;
            stack.extend(self.sched.groups[x.idx()].children.iter().copied());
        }
    }

    /// What queue `q` adds to its parent's counts: (tasks, runnable, idle);
    /// every task below an idle group counts as idle.
    fn subtree_counts(&self, q: CfsRqId) -> (i32, i32, i32) {
        let c = &self.sched.cfs[q.idx()];
        let (dq, dr) = (c.h_nr_queued as i32, c.h_nr_runnable as i32);
        let di = if self.sched.groups[c.tg.idx()].idle {
            dq
        } else {
            c.h_nr_idle as i32
        };
        (dq, dr, di)
    }

    /// Legacy: dequeue the throttled queue's group entity and every
    /// ancestor left empty; take its tasks out of the counts above.
    fn dequeue_throttled_subtree(&mut self, q: CfsRqId) {
        let cpu = self.sched.cfs[q.idx()].cpu;
        let Some(ge) = self.sched.cfs[q.idx()].se else {
            return;
        };
        if !self.sched.ents[ge.idx()].on_rq {
            return; // not queued yet (throttled on its first enqueue)
        }
        let (dq, dr, di) = self.subtree_counts(q);
        let mut e = ge;
        loop {
            let pq = self.sched.ents[e.idx()].cfs_rq;
            let (u, _) = self.fair_dequeue_entity(pq, e, false);
            self.account(cpu, u);
            let pc = &self.sched.cfs[pq.idx()];
            if pc.load_weight > 0 || pc.bw.throttled {
                break;
            }
            match pc.se {
                Some(pe) if self.sched.ents[pe.idx()].on_rq => e = pe,
                _ => break,
            }
        }
        let pq = self.sched.ents[ge.idx()].cfs_rq;
        if self.add_h_counts(pq, -dq, -dr, -di) {
            self.sched.rqs[cpu.idx()].nr_running -= dq as u32;
        }
        self.sync_overload(cpu);
        self.lb_refresh(cpu);
    }

    /// `unthrottle_cfs_rq`.
    fn unthrottle_cfs_rq(&mut self, q: CfsRqId) {
        let now = self.now;
        let cpu = self.sched.cfs[q.idx()].cpu;
        if self.cfg.features.throttle == Throttle::Unified {
            self.update_curr_task(cpu);
        }
        let c = &self.sched.cfs[q.idx()];
        if !c.bw.throttled || c.bw.remaining <= 0 {
            return;
        }
        let g = c.tg;
        let clock = self.sched.cfs[q.idx()].bw.throttled_clock.take();
        self.sched.cfs[q.idx()].bw.throttled = false;
        {
            let b = self.bw_mut(g);
            if let Some(t0) = clock {
                b.stats.throttled_ns += now.saturating_sub(t0);
            }
            b.throttled.retain(|&x| x != q);
        }
        let mut limbo = Vec::new();
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            let cq = self.sched.groups[x.idx()].cfs_rq[cpu.idx()];
            let c = &mut self.sched.cfs[cq.idx()];
            c.bw.throttle_count -= 1;
            if c.bw.throttle_count == 0 {
                limbo.append(&mut c.bw.limbo);
            }
            stack.extend(self.sched.groups[x.idx()].children.iter().copied());
        }
        self.acct.throttle_cost[cpu.idx()] +=
            TG_WALK_NS * self.subtree_size(g) + self.machine.costs.wakeup_ns * limbo.len() as u64;
        match self.cfg.features.throttle {
            Throttle::Legacy => self.enqueue_unthrottled_subtree(q),
            Throttle::PerTask | Throttle::Unified => {
                for t in limbo {
                    self.enqueue_task(t, cpu, EnqueueKind::Wakeup);
                    let task = &mut self.sched.tasks[t.idx()];
                    task.state = TaskState::Runnable;
                    task.wait_since = Some(now);
                }
            }
        }
        let rq = &self.sched.rqs[cpu.idx()];
        if rq.curr.is_none() && rq.nr_running > 0 {
            self.resched_curr(cpu, false, cpu);
        }
    }

    /// Legacy: put the group entity (and emptied ancestors) back and the
    /// subtree's tasks back into the counts above.
    fn enqueue_unthrottled_subtree(&mut self, q: CfsRqId) {
        let cpu = self.sched.cfs[q.idx()].cpu;
        let Some(ge) = self.sched.cfs[q.idx()].se else {
            return;
        };
        if self.sched.cfs[q.idx()].nr_queued == 0 || self.sched.ents[ge.idx()].on_rq {
            return;
        }
        self.update_curr_task(cpu);
        let (dq, dr, di) = self.subtree_counts(q);
        let mut e = ge;
        loop {
            if self.sched.ents[e.idx()].on_rq {
                break;
            }
            let pq = self.sched.ents[e.idx()].cfs_rq;
            let u = self.fair_enqueue_entity(pq, e, EnqueueKind::Wakeup);
            self.account(cpu, u);
            if self.sched.cfs[pq.idx()].bw.throttled {
                break;
            }
            match self.sched.cfs[pq.idx()].se {
                Some(pe) => e = pe,
                None => break,
            }
        }
        let pq = self.sched.ents[ge.idx()].cfs_rq;
        if self.add_h_counts(pq, dq, dr, di) {
            self.sched.rqs[cpu.idx()].nr_running += dq as u32;
            if self.sched.rqs[cpu.idx()].nr_running >= 2 {
                self.sched.rd_overloaded = true;
            }
        }
        self.sync_overload(cpu);
        self.lb_refresh(cpu);
    }

    /// Posts the running task's pending throttle task_work for when it is
    /// back in user space (after the scheduler work in progress).
    pub(crate) fn post_task_work(&mut self, cpu: CpuId) {
        let Some(t) = self.sched.rqs[cpu.idx()].curr else {
            return;
        };
        if !self.sched.tasks[t.idx()].throttle_work {
            return;
        }
        let at = self.run_start(cpu);
        self.queue.push(at, Event::TaskWork { cpu, task: t });
    }

    /// The TaskWork event: the task is in user space now unless it is in
    /// the middle of a syscall (then it runs the work when it leaves).
    pub(crate) fn task_work(&mut self, cpu: CpuId, t: TaskId) {
        if self.sched.rqs[cpu.idx()].curr != Some(t) || !self.sched.tasks[t.idx()].throttle_work {
            return;
        }
        if self.in_kernel(t) {
            return;
        }
        self.throttle_task_work(cpu, t);
    }

    /// `throttle_cfs_rq_work`: park the running task `t` on its queue's
    /// limbo list if its hierarchy is still throttled, and schedule.
    /// Returns true when it parked.
    pub(crate) fn throttle_task_work(&mut self, cpu: CpuId, t: TaskId) -> bool {
        self.sched.tasks[t.idx()].throttle_work = false;
        let q = self.sched.task_cfs_rq(t);
        if self.sched.cfs[q.idx()].bw.throttle_count == 0 {
            return false;
        }
        let now = self.now;
        self.dequeue_task(t, false);
        self.sched.tasks[t.idx()].state = TaskState::Throttled;
        self.sched.cfs[q.idx()].bw.limbo.push(t);
        // record_throttle_clock: the throttled ancestors' time starts with
        // the first task actually parked.
        let mut x = Some(q);
        while let Some(c) = x {
            let cc = &mut self.sched.cfs[c.idx()];
            if cc.bw.throttled && cc.bw.throttled_clock.is_none() {
                cc.bw.throttled_clock = Some(now);
            }
            x = cc.se.map(|ge| self.sched.ents[ge.idx()].cfs_rq);
        }
        self.schedule(cpu, PrevState::Runnable);
        true
    }

    /// The period timer of group `g`.
    pub(crate) fn bw_period_timer(&mut self, g: GroupId, gen: u32) {
        let now = self.now;
        {
            let b = self.bw_mut(g);
            if b.period_gen != gen || !b.period_active {
                return;
            }
            b.stats.nr_periods += 1;
            b.refill();
            if b.throttled.is_empty() {
                if b.idle {
                    // Two idle periods in a row: the timer stops.
                    b.period_active = false;
                    return;
                }
                b.idle = true;
            } else {
                b.stats.nr_throttled += 1;
                b.idle = false;
            }
            b.next_refresh = now + b.period;
            let next = b.next_refresh;
            self.queue.push(next, Event::BwPeriod { group: g, gen });
        }
        self.distribute_cfs_runtime(g);
    }

    /// The slack timer of group `g`.
    pub(crate) fn bw_slack_timer(&mut self, g: GroupId, gen: u32) {
        let now = self.now;
        let bw_slice = self.cfg.tunables.cfs_bandwidth_slice_ns();
        let b = self.bw_mut(g);
        if b.slack_gen != gen || !b.slack_armed {
            return;
        }
        b.slack_armed = false;
        if b.slack_may_distribute(now, bw_slice) {
            self.distribute_cfs_runtime(g);
        }
    }

    /// `distribute_cfs_runtime`: hand the pool to the throttled queues in
    /// list order; local ones are unthrottled at once, remote ones through
    /// their CPU's CSD list (an IPI).
    fn distribute_cfs_runtime(&mut self, g: GroupId) {
        let list = self.bw_mut(g).throttled.clone();
        if list.is_empty() {
            return;
        }
        if self.cfg.features.throttle == Throttle::Unified {
            for &q in &list {
                let cpu = self.sched.cfs[q.idx()].cpu;
                self.update_curr_task(cpu);
            }
        }
        let remaining: Vec<i64> = list
            .iter()
            .map(|q| {
                let c = &self.sched.cfs[q.idx()];
                if c.bw.csd_pending {
                    1 // already has runtime, waiting for its IPI
                } else {
                    c.bw.remaining
                }
            })
            .collect();
        let mut pool = self.bw_mut(g).runtime;
        let before = pool;
        let got = distribute(&mut pool, &remaining);
        {
            let b = self.bw_mut(g);
            b.runtime = pool;
            b.handed_out += before - pool;
        }
        let timer_cpu = self.bw_mut(g).timer_cpu; // where the hrtimer runs
        self.acct.throttle_cost[timer_cpu.idx()] += TG_WALK_NS * list.len() as u64;
        for (&q, &amt) in list.iter().zip(&got) {
            if amt == 0 {
                continue;
            }
            self.sched.cfs[q.idx()].bw.remaining += amt as i64;
            if self.sched.cfs[q.idx()].bw.remaining <= 0 {
                continue;
            }
            let cpu = self.sched.cfs[q.idx()].cpu;
            if cpu == timer_cpu {
                self.unthrottle_cfs_rq(q);
            } else if !self.sched.cfs[q.idx()].bw.csd_pending {
                self.sched.cfs[q.idx()].bw.csd_pending = true;
                let rq = &mut self.sched.rqs[cpu.idx()];
                let first = rq.cfsb_csd.is_empty();
                rq.cfsb_csd.push(q);
                if first {
                    let at = self.now + self.machine.costs.ipi_latency_ns;
                    let at = self.irq_time(cpu, at);
                    self.queue.push(at, Event::CfsbCsd { cpu });
                }
            }
        }
        self.flush_throttle_cost(timer_cpu, true);
        self.reidle(timer_cpu);
    }

    /// `__cfsb_csd_unthrottle` on `cpu`.
    pub(crate) fn cfsb_csd(&mut self, cpu: CpuId) {
        let list = std::mem::take(&mut self.sched.rqs[cpu.idx()].cfsb_csd);
        for q in list {
            self.sched.cfs[q.idx()].bw.csd_pending = false;
            self.unthrottle_cfs_rq(q);
        }
        self.flush_throttle_cost(cpu, true);
        self.reidle(cpu);
    }
}
