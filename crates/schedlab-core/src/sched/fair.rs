//! The fair class's operations on the simulator (`kernel/sched/fair.c`'s
//! `struct sched_class fair_sched_class`): `enqueue_task_fair`,
//! `dequeue_task_fair`, `pick_next_task_fair` (with `pick_task_fair`),
//! `put_prev_task_fair`, `set_next_task_fair`, `select_task_rq_fair`,
//! `task_tick_fair`, `wakeup_preempt_fair` and `update_curr_fair`.
//!
//! Each walks the task's entity path through its group hierarchy and
//! applies the pure policy of [`crate::fair`] (EEVDF queue operations in
//! [`crate::fair::eevdf`], wakeup preemption in [`crate::fair::preempt`],
//! placement in [`crate::fair::select`]) to the simulator's arenas.
//!
//! The class variant (`FAIR_CLASS`: EEVDF, or the CFS of ≤6.5 in
//! [`crate::fair::cfs`]) is dispatched here, per queue operation, by a
//! match on the run's [`FairClass`] (the `fair_*` methods below); the
//! buddies of CFS, which span the hierarchy, are set and cleared here too.

use crate::fair::cfs;
use crate::fair::eevdf::{self, CurrUpdate, Dequeued, EnqueueKind};
use crate::fair::preempt::{self, PreemptDecision, WakeupCtx};
use crate::fair::select::{self, PlaceTask, Waker};
use crate::features::FairClass;
use crate::ids::{CfsRqId, EntityId};
use crate::ids::{CpuId, TaskId};
use crate::observe::Sink;
use crate::rq::Class;
use crate::sim::Sim;
use crate::task::TaskState;

/// What `pick_next_task_fair` found.
pub(crate) enum FairPick {
    /// Run this task.
    Task(TaskId),
    /// The queues changed (a delayed entity was dequeued, or newidle
    /// balancing pulled a task): pick again, from the highest class.
    Again,
    /// Nothing to run: go idle.
    Idle,
}

/// The kind of placement `select_task_rq_fair` makes (the kernel's
/// `wake_flags`, as far as the fair class reads them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WakeFlags {
    /// WF_TTWU, with WF_SYNC when the waker is about to sleep.
    Ttwu { sync: bool },
    /// WF_FORK (also a task whose affinity no longer allows its CPU).
    Fork,
}

impl<S: Sink> Sim<S> {
    /// `update_curr` of the fair class for the running fair task `t`.
    pub(crate) fn update_curr_fair(&mut self, cpu: CpuId, t: TaskId) {
        let mut e = self.sched.tasks[t.idx()].se;
        let mut total = CurrUpdate::default();
        let mut first = true;
        loop {
            let q = self.sched.se_cfs_rq(e);
            let u = self.update_curr_cfs_rq(q);
            if first {
                total.delta_exec = u.delta_exec;
                first = false;
            }
            total.resched |= u.resched;
            let bw = &mut self.sched.cfs[q.idx()].bw;
            let delta = u.delta_exec + std::mem::take(&mut bw.unaccounted_ns);
            if delta > 0 && bw.enabled {
                self.account_cfs_rq_runtime(q, delta);
            }
            match self.sched.se_parent(e) {
                Some(p) => e = p,
                None => break,
            }
        }
        self.account(cpu, total);
    }

    /// The running fair task's time up to now, charged outside the
    /// kernel's update_curr points: run time, vruntime and the task's
    /// stats advance (and `exec_start` moves to now), but nothing that
    /// update_curr decides is decided here — no new deadline, no
    /// reschedule, no quota accounting (held in `unaccounted_ns` for the
    /// next update_curr) — and `sched_stat_runtime` waits for the next
    /// update_curr too. Used where the CPU stalls under a running task
    /// (`Sim::stall`): an interrupt, or scheduler work of another CPU's
    /// wake-up or balancing, never reaches update_curr in the kernel, so
    /// it cannot preempt the task by itself.
    pub(crate) fn charge_curr_quiet(&mut self, cpu: CpuId, t: TaskId) {
        let now = self.now;
        let mut e = self.sched.tasks[t.idx()].se;
        let mut own = 0;
        let mut first = true;
        loop {
            let q = self.sched.se_cfs_rq(e);
            let se = &mut self.sched.ents[e.idx()];
            let d = eevdf::charge_curr(se, now).unwrap_or(0);
            se.update_owed |= d > 0;
            if first {
                own = d;
                first = false;
            }
            self.sched.cfs[q.idx()].bw.unaccounted_ns += d;
            match self.sched.se_parent(e) {
                Some(p) => e = p,
                None => break,
            }
        }
        let quiet = self.stat_quiet;
        self.stat_quiet = self.trace;
        self.account(
            cpu,
            CurrUpdate {
                delta_exec: own,
                resched: false,
            },
        );
        self.stat_quiet = quiet;
    }

    /// Scheduler work the kernel does in the running task's context (its
    /// `try_to_wake_up` calls and the IPIs they send, the `__schedule`
    /// that switched to it) is that task's time to the fair class:
    /// `update_curr` charges `rq_clock_task` deltas, and the task clock
    /// runs through kernel code; only interrupt time (with
    /// IRQ_TIME_ACCOUNTING) and steal time are taken out of it. The model
    /// keeps that work off the task's program (`Sim::stall` moves
    /// `exec_start` past it, so a `run` op still gets its full length), so
    /// here the fair entities of `t` are charged `cost` on their own:
    /// `sum_exec_runtime`, vruntime at each level's weight and each
    /// level's bandwidth, quietly as `charge_curr_quiet` does (update_curr
    /// decides at its next point). The class-independent part (the task's
    /// `runtime_ns`, cgroup usage) is `Sim::charge_sched_work`'s, which
    /// calls this.
    pub(crate) fn charge_sched_work_fair(&mut self, t: TaskId, cost: crate::time::Nanos) {
        let mut e = self.sched.tasks[t.idx()].se;
        loop {
            let q = self.sched.se_cfs_rq(e);
            let se = &mut self.sched.ents[e.idx()];
            se.sum_exec_runtime += cost;
            se.vruntime += eevdf::vdelta(cost, se.weight);
            se.update_owed = true;
            self.sched.cfs[q.idx()].bw.unaccounted_ns += cost;
            match self.sched.se_parent(e) {
                Some(p) => e = p,
                None => break,
            }
        }
    }

    /// `update_load_avg` for a task's entities and their queues (and the
    /// group entities' weights, `update_cfs_group`).
    pub(crate) fn update_load_avg(&mut self, t: TaskId) {
        let path = self.sched.task_path(t);
        for (i, &e) in path.as_slice().iter().enumerate() {
            if i > 0 {
                self.update_cfs_group(e);
            }
            self.update_load_avg_se(e);
        }
    }

    pub(crate) fn enqueue_task_fair(&mut self, t: TaskId, cpu: CpuId, kind: EnqueueKind) {
        let now = self.now;
        let _ = now;
        // Every level's running entity is brought up to date first, so the
        // per-level update_curr calls below find nothing to charge.
        self.update_curr_task(cpu);
        let se = self.sched.tasks[t.idx()].se;
        let tq = self.sched.task_cfs_rq(t);
        // Bring the queue's PELT up to date, attach a fresh/migrated entity.
        {
            let cfs = &mut self.sched.cfs[tq.idx()];
            cfs.avg.update(
                now,
                cfs.load_weight,
                cfs.h_nr_queued as u64,
                cfs.curr.is_some(),
                1,
            );
            let e = &mut self.sched.ents[se.idx()];
            if e.avg.last_update_time == 0 {
                e.avg.last_update_time = now & !1023;
                cfs.avg.attach(&e.avg);
            }
        }
        let mut e = se;
        let mut k = kind;
        loop {
            if self.sched.ents[e.idx()].on_rq {
                break;
            }
            let q = self.sched.se_cfs_rq(e);
            // enqueue_entity's update_load_avg comes before the entity is
            // queued (se->on_rq = 1): the time since its last update, a
            // sleep, ages its PELT sums as blocked time.
            self.update_load_avg_se(e);
            let u = self.fair_enqueue_entity(q, e, k);
            self.account(cpu, u);
            if self.sched.cfs[q.idx()].nr_queued == 1 && self.sched.cfs[q.idx()].bw.enabled {
                self.check_enqueue_throttle(q);
            }
            if self.sched.cfs[q.idx()].bw.throttled && self.throttle_legacy() {
                break;
            }
            k = EnqueueKind::Wakeup;
            match self.sched.se_parent(e) {
                Some(p) => e = p,
                None => break,
            }
        }
        let idle = self.sched.ents[se.idx()].idle as i32;
        let reached_root = self.add_h_counts(tq, 1, 1, idle);
        // account_entity_enqueue's list_add (or, for a delayed task woken
        // in place, the move of a task already on the list): at the head.
        self.sched.cfs_tasks_seq += 1;
        self.sched.tasks[t.idx()].cfs_tasks_stamp = self.sched.cfs_tasks_seq;
        self.sched.cfs_tasks.move_to_head(cpu, t);
        if reached_root {
            self.sched.rqs[cpu.idx()].nr_running += 1;
            if self.sched.rqs[cpu.idx()].nr_running >= 2 {
                self.sched.rd_overloaded = true;
            }
        }
        self.update_load_avg(t);
        self.sync_overload(cpu);
        self.lb_refresh(cpu);
    }

    /// `sched_idle_rq`: the CPU runs something, and only SCHED_IDLE tasks.
    pub(crate) fn sched_idle_rq(&self, cpu: CpuId) -> bool {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.nr_running > 0 && rq.nr_running == self.sched.cfs[rq.cfs.idx()].h_nr_idle
    }

    /// Takes `t` off its CPU's queue (it stays curr until the next
    /// schedule). A `sleep` of an ineligible task is delayed
    /// (DELAY_DEQUEUE): it stays queued but no longer counts as runnable.
    /// Group entities whose queue becomes empty leave their parents.
    pub(crate) fn dequeue_task_fair(&mut self, t: TaskId, sleep: bool) -> Dequeued {
        let now = self.now;
        let cpu = self.sched.tasks[t.idx()].cpu;
        self.update_curr_task(cpu);
        let tq = self.sched.task_cfs_rq(t);
        let se = self.sched.tasks[t.idx()].se;
        self.update_load_avg(t);
        let was_delayed = self.sched.ents[se.idx()].sched_delayed;
        let was_sched_idle = self.sched_idle_rq(cpu);
        let (u, d) = self.fair_dequeue_entity(tq, se, sleep);
        self.account(cpu, u);
        if d == Dequeued::Delayed {
            self.add_h_counts(tq, 0, -1, 0);
            self.sync_overload(cpu);
            self.lb_refresh(cpu);
            return d;
        }
        // account_entity_dequeue's list_del: a delayed task stays listed
        // until its dequeue finishes.
        self.sched.cfs_tasks.remove(t);
        // Group entities whose queue went empty leave their parent.
        let mut q = tq;
        loop {
            if self.sched.cfs[q.idx()].nr_queued == 0 && self.sched.cfs[q.idx()].bw.enabled {
                self.return_cfs_rq_runtime(q);
            }
            if self.sched.cfs[q.idx()].load_weight > 0 || self.sched.cfs[q.idx()].nr_queued > 0 {
                break;
            }
            if self.sched.cfs[q.idx()].bw.throttled && self.throttle_legacy() {
                break;
            }
            let Some(ge) = self.sched.cfs[q.idx()].se else {
                break;
            };
            if !self.sched.ents[ge.idx()].on_rq {
                break;
            }
            let pq = self.sched.ents[ge.idx()].cfs_rq;
            let (u, _) = self.fair_dequeue_entity(pq, ge, false);
            self.account(cpu, u);
            q = pq;
        }
        let dr = if was_delayed { 0 } else { -1 };
        let idle = -(self.sched.ents[se.idx()].idle as i32);
        if self.add_h_counts(tq, -1, dr, idle) {
            self.sched.rqs[cpu.idx()].nr_running -= 1;
        }
        // Balance early to pull higher-priority work onto a CPU left with
        // only SCHED_IDLE tasks (from 5.6, 323af6deaf70).
        if !was_sched_idle
            && self.sched_idle_rq(cpu)
            && crate::kernels::at_least(self.cfg.kernel, 5, 6)
        {
            self.sched.rqs[cpu.idx()].next_balance = self.jiffies();
        }
        // PELT of the levels it left.
        let path = self.sched.task_path(t);
        for &e in path.as_slice() {
            let q = self.sched.se_cfs_rq(e);
            let cfs = &mut self.sched.cfs[q.idx()];
            cfs.avg.update(
                now,
                cfs.load_weight,
                cfs.h_nr_runnable as u64,
                cfs.curr.is_some(),
                1,
            );
        }
        self.sync_overload(cpu);
        self.lb_refresh(cpu);
        d
    }

    /// `pick_task_fair`: from `rq->cfs` down through group entities to a
    /// task. Bandwidth is checked at each level on the way: legacy
    /// throttling dequeues a level that ran out and restarts the pick;
    /// per-task and unified throttling report whether any level of the
    /// chosen hierarchy is throttled.
    pub(crate) fn pick_task_fair(&mut self, cpu: CpuId) -> Option<(TaskId, bool)> {
        let legacy = self.cfg.features.throttle == crate::features::Throttle::Legacy;
        'again: loop {
            let mut q = self.sched.rqs[cpu.idx()].cfs;
            let mut throttled = false;
            loop {
                if self.sched.cfs[q.idx()].bw.enabled {
                    let t = self.check_cfs_rq_runtime(q);
                    if t && legacy {
                        continue 'again;
                    }
                    throttled |= t;
                }
                let e = match self.cfg.features.fair_class {
                    FairClass::Eevdf => eevdf::pick_eevdf(
                        &self.sched.cfs[q.idx()],
                        &self.sched.ents,
                        self.sched.p.pick_protects(),
                    )?,
                    FairClass::Cfs => cfs::pick_next_entity(
                        &self.sched.cfs[q.idx()],
                        &self.sched.ents,
                        &self.sched.cfs_p,
                    )?,
                };
                match self.sched.ents[e.idx()].my_q {
                    Some(child) => q = child,
                    None => {
                        return Some((
                            self.sched.ents[e.idx()].task.expect("task entity"),
                            throttled,
                        ))
                    }
                }
            }
        }
    }

    /// `pick_next_task_fair`: the fair class's pick for `schedule()`. With
    /// nothing queued it runs newidle balancing (then STEAL) once per
    /// `schedule()` (`tried_newidle`) and asks for a new pick if that pulled
    /// a task; a picked delayed entity finishes its dequeue and the pick
    /// repeats. `schedule()` itself does the `put_prev_task_fair` /
    /// `set_next_task_fair` switch.
    pub(crate) fn pick_next_task_fair(&mut self, cpu: CpuId, tried_newidle: &mut bool) -> FairPick {
        let Some((t, throttled)) = self.pick_task_fair(cpu) else {
            // Nothing queued: newidle balance before going idle, and
            // pick again if it pulled something.
            if !*tried_newidle {
                *tried_newidle = true;
                if self.sched_balance_newidle(cpu) || self.try_steal(cpu) {
                    return FairPick::Again;
                }
            }
            return FairPick::Idle;
        };
        let se = self.sched.tasks[t.idx()].se;
        if self.sched.ents[se.idx()].sched_delayed {
            self.dequeue_task(t, false);
            return FairPick::Again;
        }
        if throttled {
            // Per-task throttling: the task parks itself on its way
            // back to user space (task_throttle_setup_work).
            self.sched.tasks[t.idx()].throttle_work = true;
        }
        FairPick::Task(t)
    }

    /// `task_tick_fair` for the running fair task `t` (its runtime was
    /// already accounted by `sched_tick`'s `update_curr`): PELT and group
    /// shares along its path.
    pub(crate) fn task_tick_fair(&mut self, t: TaskId) {
        self.update_load_avg(t);
        if self.sched.cfs_p.active {
            self.check_preempt_tick_cfs(t);
        }
    }

    /// CFS `entity_tick`'s `check_preempt_tick` at every level of the
    /// running task's hierarchy with more than one entity queued.
    fn check_preempt_tick_cfs(&mut self, t: TaskId) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        let h_nr = self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()].h_nr_queued;
        let path = self.sched.task_path(t);
        for &e in path.as_slice() {
            let q = self.sched.se_cfs_rq(e);
            if self.sched.cfs[q.idx()].nr_queued <= 1 {
                continue;
            }
            let ideal = cfs::sched_slice(
                &self.sched.cfs,
                &self.sched.ents,
                e,
                h_nr,
                &self.sched.cfs_p,
            );
            if cfs::check_preempt_tick(
                &self.sched.cfs[q.idx()],
                &self.sched.ents,
                ideal,
                &self.sched.cfs_p,
            ) {
                self.resched_curr(cpu, false, cpu);
                // It ran long enough: no buddy favour re-elects it.
                self.clear_buddies_h(e);
            }
        }
    }

    /// `put_prev_task_fair` for `prev`, up to the level it shares with
    /// `next` (the rest of the path stays curr).
    pub(crate) fn put_prev_task_fair(&mut self, prev: TaskId, next: Option<TaskId>) {
        let now = self.now;
        let pp = self.sched.task_path(prev);
        let keep = match next {
            Some(n) if pp.as_slice().len() > 1 => {
                common_suffix(pp.as_slice(), self.sched.task_path(n).as_slice())
            }
            _ => 0,
        };
        let ents = pp.as_slice();
        for &e in &ents[..ents.len() - keep] {
            let q = self.sched.se_cfs_rq(e);
            let u = match self.cfg.features.fair_class {
                FairClass::Eevdf => eevdf::put_prev_entity(
                    &mut self.sched.cfs[q.idx()],
                    &mut self.sched.ents,
                    now,
                    &self.sched.p,
                ),
                FairClass::Cfs => {
                    cfs::put_prev_entity(&mut self.sched.cfs[q.idx()], &mut self.sched.ents, now)
                }
            };
            debug_assert_eq!(u.delta_exec, 0, "update_curr_task ran first");
            let _ = u;
            if self.sched.cfs[q.idx()].bw.enabled
                && self.cfg.features.throttle == crate::features::Throttle::Legacy
            {
                self.check_cfs_rq_runtime(q);
            }
        }
        self.update_load_avg(prev);
    }

    /// `set_next_task_fair` for `next`, down from the level it shares with
    /// `prev`.
    pub(crate) fn set_next_task_fair(&mut self, next: TaskId, prev: Option<TaskId>) {
        debug_assert_eq!(self.sched.class_of(next), Class::Fair);
        let np = self.sched.task_path(next);
        let keep = match prev {
            Some(p) if np.as_slice().len() > 1 => {
                common_suffix(np.as_slice(), self.sched.task_path(p).as_slice())
            }
            _ => 0,
        };
        let ents = np.as_slice();
        // Scheduler work still pending on this CPU is not the task's time.
        let start = self.run_start(self.sched.tasks[next.idx()].cpu);
        for &e in ents[..ents.len() - keep].iter().rev() {
            let q = self.sched.se_cfs_rq(e);
            match self.cfg.features.fair_class {
                FairClass::Eevdf => eevdf::set_next_entity(
                    &mut self.sched.cfs[q.idx()],
                    &mut self.sched.ents,
                    e,
                    start,
                    &self.sched.p,
                ),
                FairClass::Cfs => cfs::set_next_entity(
                    &mut self.sched.cfs[q.idx()],
                    &mut self.sched.ents,
                    e,
                    start,
                ),
            }
        }
        self.update_load_avg(next);
    }

    /// `select_task_rq_fair` for `t` on `cpu` (the waker's CPU for a
    /// wakeup, the parent's for a fork), with its side effects applied: the
    /// one entry of the fair class's placement, whose decisions are
    /// [`select::place_wakeup`] and [`select::place_fork`].
    ///
    /// Returns the CPU and the waker's CPU time for the runqueue lines a
    /// wakeup's placement read on other CPUs ([`select::Placement::probes`];
    /// nothing for a fork, whose slow path is not priced).
    pub(crate) fn select_task_rq_fair(
        &mut self,
        t: TaskId,
        cpu: CpuId,
        flags: WakeFlags,
    ) -> (CpuId, select::ProbeCost) {
        match flags {
            WakeFlags::Ttwu { sync } => self.select_task_rq_fair_ttwu(t, cpu, sync),
            WakeFlags::Fork => (
                self.select_task_rq_fair_fork(t, cpu),
                select::ProbeCost::default(),
            ),
        }
    }

    /// WF_TTWU: `t` woken on `waker_cpu`.
    fn select_task_rq_fair_ttwu(
        &mut self,
        t: TaskId,
        waker_cpu: CpuId,
        sync: bool,
    ) -> (CpuId, select::ProbeCost) {
        // select_task_rq (core.c) asks the class only for a task allowed on
        // more than one CPU; a pinned task goes to its CPU with no
        // placement at all (no record_wakee, no runqueue read).
        if self.sched.tasks[t.idx()].nr_cpus_allowed == 1 {
            let cpu = self.sched.allowed(t).first().expect("non-empty affinity");
            return (cpu, select::ProbeCost::default());
        }
        let (flips, load) = self.record_wakee(waker_cpu, t);
        let task = &self.sched.tasks[t.idx()];
        let p = PlaceTask {
            allowed: self.sched.allowed(t),
            prev: task.cpu,
            recent_used_cpu: task.recent_used_cpu,
            wakee_flips: task.wakee.flips,
            load: self.sched.ents[task.se.idx()].avg.load_avg,
        };
        // WF_SYNC only counts when the waker is a running task.
        let sync = sync && self.sched.rqs[waker_cpu.idx()].curr.is_some();
        let w = Waker {
            cpu: waker_cpu,
            wakee_flips: flips,
            load,
            sync,
        };
        let out = select::place_wakeup(self, &p, &w);
        if out.affine {
            // schedstat: the domain whose wake_affine chose the waker's CPU
            // (the lowest SD_WAKE_AFFINE one spanning prev).
            let prev = p.prev;
            if let Some(i) = self.sched.domains.domains(waker_cpu).iter().position(|sd| {
                sd.flags.contains(crate::machine::domains::SD_WAKE_AFFINE) && sd.span.test(prev)
            }) {
                self.sched.sd_state[waker_cpu.idx()][i].ttwu_move_affine += 1;
            }
        }
        self.sched.tasks[t.idx()].recent_used_cpu = out.recent_used_cpu;
        if let Some(c) = out.clear_idle_cores {
            if let Some(i) = self.sched.domains.shortcuts(c).llc_shared {
                self.sched.llc_state[i].has_idle_cores = false;
            }
        }
        if let Some((c, ns)) = out.scan_ns {
            self.account_sis_scan(c, ns);
        }
        (out.cpu, out.probes)
    }

    /// WF_FORK: the slow path for `t` created on `this`.
    fn select_task_rq_fair_fork(&mut self, t: TaskId, this: CpuId) -> CpuId {
        let task = &self.sched.tasks[t.idx()];
        let p = PlaceTask {
            allowed: self.sched.allowed(t),
            prev: this,
            recent_used_cpu: this,
            wakee_flips: 0,
            load: self.sched.ents[task.se.idx()].avg.load_avg,
        };
        select::place_fork(self, &p, this)
    }

    /// Takes a task's PELT load off the fair queue it is attached to (a
    /// migration or a switch away from the fair class); it is attached
    /// again at its next fair enqueue.
    pub(crate) fn detach_task_load(&mut self, t: TaskId) {
        let se = self.sched.tasks[t.idx()].se;
        if self.sched.ents[se.idx()].avg.last_update_time != 0 {
            let q = self.sched.task_cfs_rq(t).idx();
            // sync_entity_load_avg (remove_entity_load_avg's first step):
            // a task off the queue has its sums aged as blocked up to its
            // queue's last update before they are taken off it.
            let e = &mut self.sched.ents[se.idx()];
            if !e.on_rq {
                let w = e.weight;
                e.avg
                    .update(self.sched.cfs[q].avg.last_update_time, 0, 0, false, w);
            }
            let avg = self.sched.ents[se.idx()].avg.clone();
            self.sched.cfs[q].avg.detach(&avg);
            self.sched.ents[se.idx()].avg.last_update_time = 0;
            self.lb_refresh_cfs(crate::ids::CfsRqId(q as u32));
        }
    }

    /// `wakeup_preempt_fair`: may the woken fair task `t` preempt the fair
    /// task `curr` running on `cpu`? (The entities compared are the ones
    /// that share a queue, `find_matching_se`; the decision is the pure
    /// [`preempt::wakeup_preempt_fair`].)
    pub(crate) fn wakeup_preempt_fair(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        curr: TaskId,
        exec_cpu: CpuId,
        in_task: bool,
        fork: bool,
    ) {
        if self.sched.cfs_p.active {
            return self.wakeup_preempt_cfs(cpu, t, curr, exec_cpu, fork);
        }
        if self.sched.rqs[cpu.idx()].need_resched || !self.cfg.features.wakeup_preemption {
            return;
        }
        if self.sched.tasks[t.idx()].state == TaskState::Throttled {
            return;
        }
        self.update_curr_task(cpu);
        let (se, pse) = self.sched.find_matching_se(
            self.sched.tasks[curr.idx()].se,
            self.sched.tasks[t.idx()].se,
        );
        let q = self.sched.se_cfs_rq(se).idx();
        let ctx = WakeupCtx {
            wakee_policy: self.sched.tasks[t.idx()].policy,
            fork,
            in_task,
            preempt_short: self.cfg.features.preempt_short,
            run_to_parity: self.cfg.features.run_to_parity,
            protect: self.sched.p.protect,
            rework_6_19: crate::kernels::at_least(self.cfg.kernel, 6, 19),
        };
        match preempt::wakeup_preempt_fair(&self.sched.cfs[q], &self.sched.ents, se, pse, &ctx) {
            PreemptDecision::Preempt { cancel_protect } => {
                if cancel_protect {
                    eevdf::cancel_protect_slice(&mut self.sched.ents, se);
                }
                self.resched_curr(cpu, true, exec_cpu);
            }
            PreemptDecision::ShrinkProtect => {
                eevdf::update_protect_slice(&self.sched.cfs[q], &mut self.sched.ents, se)
            }
            PreemptDecision::None => {}
        }
    }
}

impl<S: Sink> Sim<S> {
    /// `update_curr(cfs_rq)`: one queue's running entity charged up to now,
    /// by class (EEVDF or CFS).
    pub(crate) fn update_curr_cfs_rq(&mut self, q: CfsRqId) -> CurrUpdate {
        let c = &mut self.sched.cfs[q.idx()];
        match self.cfg.features.fair_class {
            FairClass::Eevdf => {
                eevdf::update_curr(c, &mut self.sched.ents, self.now, &self.sched.p)
            }
            FairClass::Cfs => cfs::update_curr(c, &mut self.sched.ents, self.now),
        }
    }

    /// `enqueue_entity` of `e` on queue `q`, by class.
    pub(crate) fn fair_enqueue_entity(
        &mut self,
        q: CfsRqId,
        e: EntityId,
        kind: EnqueueKind,
    ) -> CurrUpdate {
        let now = self.now;
        match self.cfg.features.fair_class {
            FairClass::Eevdf => eevdf::enqueue_entity(
                &mut self.sched.cfs[q.idx()],
                &mut self.sched.ents,
                e,
                kind,
                now,
                &self.sched.p,
            ),
            FairClass::Cfs => {
                let vslice = if kind == EnqueueKind::Initial {
                    let cpu = self.sched.cfs[q.idx()].cpu;
                    let h_nr = self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()].h_nr_queued;
                    cfs::sched_vslice(
                        &self.sched.cfs,
                        &self.sched.ents,
                        e,
                        h_nr,
                        &self.sched.cfs_p,
                    )
                } else {
                    0
                };
                cfs::enqueue_entity(
                    &mut self.sched.cfs[q.idx()],
                    &mut self.sched.ents,
                    e,
                    kind,
                    now,
                    vslice,
                    &self.sched.cfs_p,
                )
            }
        }
    }

    /// `dequeue_entity` of `e` from queue `q`, by class (CFS never delays;
    /// its buddies pointing at `e`'s path are cleared first).
    pub(crate) fn fair_dequeue_entity(
        &mut self,
        q: CfsRqId,
        e: EntityId,
        sleep: bool,
    ) -> (CurrUpdate, Dequeued) {
        let now = self.now;
        match self.cfg.features.fair_class {
            FairClass::Eevdf => eevdf::dequeue_entity(
                &mut self.sched.cfs[q.idx()],
                &mut self.sched.ents,
                e,
                sleep,
                now,
                &self.sched.p,
            ),
            FairClass::Cfs => {
                self.clear_buddies_h(e);
                let u =
                    cfs::dequeue_entity(&mut self.sched.cfs[q.idx()], &mut self.sched.ents, e, now);
                (u, Dequeued::Gone)
            }
        }
    }

    /// `reweight_entity` of `e` on queue `q`, by class.
    pub(crate) fn fair_reweight_entity(&mut self, q: CfsRqId, e: EntityId, w: u64) {
        let now = self.now;
        match self.cfg.features.fair_class {
            FairClass::Eevdf => eevdf::reweight_entity(
                &mut self.sched.cfs[q.idx()],
                &mut self.sched.ents,
                e,
                w,
                now,
                &self.sched.p,
            ),
            FairClass::Cfs => cfs::reweight_entity(
                &mut self.sched.cfs[q.idx()],
                &mut self.sched.ents,
                e,
                w,
                now,
            ),
        }
    }

    /// CFS `clear_buddies`: from `e` up, each buddy slot is cleared while it
    /// points at that level's entity.
    pub(crate) fn clear_buddies_h(&mut self, e: EntityId) {
        for slot in 0..3 {
            let mut x = Some(e);
            while let Some(se) = x {
                let q = self.sched.se_cfs_rq(se).idx();
                let b = match slot {
                    0 => &mut self.sched.cfs[q].next,
                    1 => &mut self.sched.cfs[q].last,
                    _ => &mut self.sched.cfs[q].skip,
                };
                if *b != Some(se) {
                    break;
                }
                *b = None;
                x = self.sched.se_parent(se);
            }
        }
    }

    /// CFS `set_next_buddy` (slot 0), `set_last_buddy` (1) or
    /// `set_skip_buddy` (2) from `e` up: not for a SCHED_IDLE task, and
    /// (5.15+) not through an idle entity.
    pub(crate) fn set_buddy_h(&mut self, e: EntityId, slot: u8) {
        if slot != 2 && self.sched.ents[e.idx()].idle {
            return;
        }
        let mut x = Some(e);
        while let Some(se) = x {
            let ent = &self.sched.ents[se.idx()];
            if slot != 2 && (!ent.on_rq || ent.idle) {
                return;
            }
            let q = ent.cfs_rq.idx();
            match slot {
                0 => self.sched.cfs[q].next = Some(se),
                1 => self.sched.cfs[q].last = Some(se),
                _ => self.sched.cfs[q].skip = Some(se),
            }
            x = ent.parent;
        }
    }

    /// CFS `yield_task_fair` for the running task `t` (its accounting is up
    /// to date): unless it is alone on its CPU, it becomes the skip buddy.
    pub(crate) fn yield_task_cfs(&mut self, t: TaskId) {
        let cpu = self.sched.tasks[t.idx()].cpu;
        if self.sched.rqs[cpu.idx()].nr_running <= 1 {
            return;
        }
        let se = self.sched.tasks[t.idx()].se;
        self.clear_buddies_h(se);
        self.set_buddy_h(se, 2);
    }

    /// CFS `check_preempt_wakeup` (5.15–6.5; 5.4–5.14 lack only the idle
    /// group rule, which agrees for tasks): the decision is
    /// [`preempt::wakeup_preempt_cfs`]; the buddies are set here.
    fn wakeup_preempt_cfs(
        &mut self,
        cpu: CpuId,
        t: TaskId,
        curr: TaskId,
        exec_cpu: CpuId,
        fork: bool,
    ) {
        if self.sched.tasks[t.idx()].state == TaskState::Throttled {
            return;
        }
        let pse0 = self.sched.tasks[t.idx()].se;
        let mut next_marked = false;
        if self.sched.cfs_p.next_buddy && !fork {
            self.set_buddy_h(pse0, 0);
            next_marked = true;
        }
        if self.sched.rqs[cpu.idx()].need_resched {
            return;
        }
        let curr_idle_policy = self.sched.tasks[curr.idx()].policy == crate::program::Policy::Idle;
        let wakee_policy = self.sched.tasks[t.idx()].policy;
        let idle_preempt = curr_idle_policy && wakee_policy != crate::program::Policy::Idle;
        if !idle_preempt
            && (wakee_policy != crate::program::Policy::Normal
                || !self.cfg.features.wakeup_preemption)
        {
            return;
        }
        self.update_curr_task(cpu);
        let (se, pse) = self
            .sched
            .find_matching_se(self.sched.tasks[curr.idx()].se, pse0);
        let decision = if idle_preempt {
            preempt::CfsWakeup::Preempt
        } else {
            preempt::wakeup_preempt_cfs(&self.sched.ents, se, pse, &self.sched.cfs_p)
        };
        match decision {
            preempt::CfsWakeup::None => return,
            preempt::CfsWakeup::PreemptWithBuddy => {
                if !next_marked {
                    self.set_buddy_h(pse, 0);
                }
            }
            preempt::CfsWakeup::Preempt => {}
        }
        self.resched_curr(cpu, false, exec_cpu);
        // Return the CPU to the preempted task soon, on a crowded queue.
        let tq = self.sched.task_cfs_rq(curr);
        let scale = self.sched.cfs[tq.idx()].nr_queued as u64 >= self.sched.cfs_p.nr_latency;
        let se_is_task = self.sched.ents[se.idx()].my_q.is_none();
        if self.sched.ents[se.idx()].on_rq && self.sched.cfs_p.last_buddy && scale && se_is_task {
            self.set_buddy_h(se, 1);
        }
    }
}

/// How many entities at the top of two bottom-up paths are the same.
fn common_suffix(a: &[crate::ids::EntityId], b: &[crate::ids::EntityId]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

#[cfg(test)]
mod pelt_tests {
    use crate::config::SimConfig;
    use crate::machine::make_test_machine;
    use crate::observe::NullSink;
    use crate::program::{Op, Policy, TaskSpec, Workload};
    use crate::sim::Sim;

    /// A task that runs 1 ms and sleeps 500 ms (15.6 PELT half-lives):
    /// its load is aged as blocked over each sleep, so after its third run
    /// (ended at about 1.003 s, the run stopped at 1.2 s in the next sleep)
    /// it holds the little that 1 ms of running adds (about 22 of 1024)
    /// plus the decayed rest, far below the 1024 it would show if the
    /// sleeps counted as queued time. Its queue's load, which attached
    /// it, is as small.
    #[test]
    fn a_sleep_ages_the_load_as_blocked_time() {
        let w = Workload {
            tasks: vec![TaskSpec::looping(
                "t".to_string(),
                0,
                Policy::Normal,
                vec![
                    Op::Run {
                        work_ns: 1_000_000,
                        config_us: 1000,
                        perf: 0,
                    },
                    Op::Sleep { ns: 500_000_000 },
                ],
            )],
            ..Default::default()
        };
        let cfg = SimConfig {
            duration_ns: Some(1_200_000_000),
            ..SimConfig::default()
        };
        let mut sim = Sim::new(make_test_machine(1, 1, 1, 1), &w, cfg, NullSink).unwrap();
        sim.run();
        let t = &sim.sched.tasks[0];
        let se = &sim.sched.ents[t.se.idx()];
        assert!(
            se.avg.load_avg < 60,
            "task load_avg {} after three 1 ms runs 500 ms apart",
            se.avg.load_avg
        );
        let q = &sim.sched.cfs[sim.sched.rqs[t.cpu.idx()].cfs.idx()];
        assert!(q.avg.load_avg < 60, "queue load_avg {}", q.avg.load_avg);
    }
}
