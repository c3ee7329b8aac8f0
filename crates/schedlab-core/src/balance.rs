//! The core's side of load balancing: the SCHED_SOFTIRQ walk over a CPU's
//! domains (`sched_balance_trigger` → `sched_balance_domains`), one pass
//! (`sched_balance_rq`: decide with `fair::balance::lb`, then detach and
//! attach tasks), and newidle balancing (`sched_balance_newidle`).
//!
//! Kernel reference: kernel-model.md §7.1–7.3, §8.2, §8.8–8.9, §9,
//! tip-2026 (NI_RANDOM on by default: each domain's newidle pass runs
//! with a probability equal to its recent success ratio).
//!
//! Costs (charged as CPU time of the balancing CPU, guesses of the right
//! order for these machines, the same for every experiment): a pass costs
//! [`LB_PASS_NS`] plus [`LB_PER_CPU_NS`] per CPU whose statistics it reads;
//! each migrated task costs [`LB_MIGRATE_NS`].
//!
//! NOHZ idle balancing (§10): a busy CPU's tick kicks the first idle CPU
//! when idle CPUs are due and this CPU has two tasks or its LLC more than
//! one busy CPU; the kicked CPU (after IPI and idle-exit latency) balances
//! every due idle CPU on its behalf and pays for it.
//!
//! Active balance (§8.10): after more than `cache_nice_tries + 2` failed
//! task-count passes, the busiest CPU is made to switch out its running
//! task, which then moves to the balancing CPU.
//!
//! SD_SERIALIZE (`LB_SERIALIZE`, §7.4): NUMA domains take the global
//! `sched_balance_running` flag, a contended cache line (`atomics.rs`):
//! `eager` tries it for every domain the walk reaches and then checks
//! whether the domain is due (a lost race leaves it due); `when-due` tries
//! it only for a due domain; `balancer-only` tries it inside the pass after
//! should_we_balance chose this CPU, newidle passes included, and a lost
//! race is a balanced pass (interval doubles, last_balance set).
//!
//! Deviations: no `LBF_DST_PINNED` retry with another destination, and no
//! blocked-load decay kicks (idle CPUs' PELT decays when next updated).

use crate::fair::balance::lb::{self, CpuIdle, MigrationType};
use crate::fair::balance::steal;
use crate::fair::eevdf::{self, EnqueueKind};
use crate::fair::select::CpuView;
use crate::features::LbSerialize;
use crate::ids::{CpuId, TaskId};
use crate::machine::domains::{msecs_to_jiffies, SD_BALANCE_NEWIDLE, SD_SERIALIZE};
use crate::machine::CpuMask;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::stats::Path;
use crate::task::TaskState;
use crate::time::{Nanos, NSEC_PER_SEC};
use rand::Rng;

/// CPU time of one balance pass besides reading CPU statistics (a guess).
pub const LB_PASS_NS: Nanos = 1_000;
/// CPU time per CPU whose statistics a pass reads (a guess: a few cache
/// misses on remote runqueue fields).
pub const LB_PER_CPU_NS: Nanos = 40;
/// CPU time to detach and attach one task (a guess: two runqueue locks).
pub const LB_MIGRATE_NS: Nanos = 2_000;
/// CPU time of one `try_steal` (the patch quotes 1–2 µs for a steal; half
/// for the search, half for the move).
pub const STEAL_ATTEMPT_NS: Nanos = 1_000;
/// `sysctl_sched_migration_cost` (task_hot, avg_idle basis).
pub const MIGRATION_COST_NS: Nanos = 500_000;
/// `sysctl_sched_nr_migrate`.
pub const NR_MIGRATE: u32 = 32;

impl<S: Sink> Sim<S> {
    fn jiffies(&self) -> u64 {
        self.now / self.cfg.tick_ns()
    }

    /// `get_sd_balance_interval`.
    fn sd_interval(&self, cpu: CpuId, sdi: usize, busy: bool) -> u64 {
        let sd = &self.domains.domains(cpu)[sdi];
        let ms = self.sd_state[cpu.idx()][sdi].balance_interval_ms
            * if busy { sd.busy_factor as u64 } else { 1 };
        let mut j = msecs_to_jiffies(ms, self.cfg.hz);
        if busy {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.domains.max_load_balance_interval.max(1))
    }

    /// `sched_balance_trigger` from the tick (of a busy CPU, or of an idle
    /// CPU whose tick was kept).
    pub(crate) fn sched_balance_trigger(&mut self, cpu: CpuId) {
        if self.jiffies() >= self.rqs[cpu.idx()].next_balance {
            // rq->idle_balance = idle_cpu(cpu) at the tick.
            let idle = if self.available_idle_cpu(cpu) {
                CpuIdle::Idle
            } else {
                CpuIdle::NotIdle
            };
            self.sched_balance_domains(cpu, idle);
        }
    }

    /// `sched_balance_domains`: the softirq walk, bottom-up.
    fn sched_balance_domains(&mut self, cpu: CpuId, mut idle: CpuIdle) {
        let mut busy = idle != CpuIdle::Idle && !self.sched_idle_cpu(cpu);
        let mut cont = true;
        let jiffies = self.jiffies();
        let mut next_balance = jiffies + 60 * self.cfg.hz as u64;
        let ndom = self.domains.domains(cpu).len();
        for sdi in 0..ndom {
            self.update_newidle_cost(cpu, sdi, 0);
            if !cont {
                break;
            }
            let mut interval = self.sd_interval(cpu, sdi, busy);
            let serialize = self.domains.domains(cpu)[sdi].flags.contains(SD_SERIALIZE);
            let due = jiffies >= self.sd_state[cpu.idx()][sdi].last_balance + interval;
            // LB_SERIALIZE: where the walk takes sched_balance_running.
            let take_here = serialize
                && match self.cfg.features.lb_serialize {
                    LbSerialize::Eager => true,
                    LbSerialize::WhenDue => due,
                    LbSerialize::BalancerOnly => false,
                };
            if take_here && !self.balance_flag_acquire(cpu) {
                // Lost the race: this level stays due and is retried at
                // the next softirq; last_balance untouched.
                next_balance =
                    next_balance.min(self.sd_state[cpu.idx()][sdi].last_balance + interval);
                continue;
            }
            if due {
                let moved = self.sched_balance_rq(cpu, sdi, idle, &mut cont);
                if moved > 0 {
                    idle = if self.available_idle_cpu(cpu) {
                        CpuIdle::Idle
                    } else {
                        CpuIdle::NotIdle
                    };
                    busy = idle != CpuIdle::Idle && !self.sched_idle_cpu(cpu);
                }
                self.sd_state[cpu.idx()][sdi].last_balance = jiffies;
                interval = self.sd_interval(cpu, sdi, busy);
            }
            if take_here {
                self.balance_flag_release(cpu);
            }
            next_balance = next_balance.min(self.sd_state[cpu.idx()][sdi].last_balance + interval);
        }
        self.rqs[cpu.idx()].next_balance = next_balance;
    }

    /// Decays `max_newidle_lb_cost` by 253/256 once a second; records a new
    /// maximum `cost`.
    fn update_newidle_cost(&mut self, cpu: CpuId, sdi: usize, cost: Nanos) {
        let now = self.now;
        let st = &mut self.sd_state[cpu.idx()][sdi];
        if cost > st.max_newidle_lb_cost {
            st.max_newidle_lb_cost = cost;
        } else if now > st.last_decay + NSEC_PER_SEC {
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay = now;
        }
    }

    /// `sched_balance_rq`: one balance pass of domain `sdi` for `dst`.
    /// Returns the number of tasks pulled; charges its CPU time to `dst`
    /// (newidle passes return their cost through `newidle_cost`).
    fn sched_balance_rq(&mut self, dst: CpuId, sdi: usize, idle: CpuIdle, cont: &mut bool) -> u32 {
        let ii = idle as usize;
        self.sd_state[dst.idx()][sdi].lb.count[ii] += 1;
        let sd = &self.domains.domains(dst)[sdi];
        let mut cost = LB_PASS_NS + LB_PER_CPU_NS * sd.span_weight as u64;
        // env->cpus: the span, less busiest CPUs found all-pinned.
        let mut excluded: Option<CpuMask> = None;
        let mut last: Option<(CpuId, MigrationType)> = None;
        let mut holds_flag = false;
        let outcome = 'out: {
            if !lb::should_we_balance(self, sd, dst, idle) {
                *cont = false;
                break 'out None;
            }
            // 6.19 order: only the chosen balancer takes the flag, inside the
            // pass (newidle too); losing the race is a balanced pass.
            if sd.flags.contains(SD_SERIALIZE)
                && self.cfg.features.lb_serialize == LbSerialize::BalancerOnly
            {
                if !self.balance_flag_acquire(dst) {
                    break 'out None;
                }
                holds_flag = true;
            }
            loop {
                let sd = &self.domains.domains(dst)[sdi];
                let child_flags = sd.child.map(|c| self.domains.domains(dst)[c].flags);
                let sds = lb::sd_lb_stats(self, sd, child_flags, dst, excluded.as_ref());
                if sd.parent.is_none() {
                    self.rd_overloaded = sds.overloaded;
                }
                let Some(src) = lb::find_src_group(sd, idle, &sds) else {
                    self.sd_state[dst.idx()][sdi].lb.nobusyg[ii] += 1;
                    break 'out None;
                };
                let span = sd.groups[src.group].span.clone();
                let Some(busiest) =
                    lb::find_src_rq(self, &span, excluded.as_ref(), src.migration, src.imbalance)
                else {
                    self.sd_state[dst.idx()][sdi].lb.nobusyq[ii] += 1;
                    break 'out None;
                };
                let lbc = &mut self.sd_state[dst.idx()][sdi].lb;
                match src.migration {
                    MigrationType::Load => lbc.imbalance_load[ii] += src.imbalance,
                    MigrationType::Util => lbc.imbalance_util[ii] += src.imbalance,
                    MigrationType::Task => lbc.imbalance_task[ii] += src.imbalance,
                }
                last = Some((busiest, src.migration));
                let (moved, all_pinned) = if self.rqs[busiest.idx()].nr_running > 1 {
                    self.detach_attach(dst, busiest, sdi, idle, src.migration, src.imbalance)
                } else {
                    (0, false)
                };
                cost += moved as u64 * LB_MIGRATE_NS;
                if moved == 0 && all_pinned {
                    // LBF_ALL_PINNED: try without that CPU.
                    let cpus =
                        excluded.get_or_insert_with(|| self.domains.domains(dst)[sdi].span.clone());
                    cpus.clear(busiest);
                    if !cpus.intersects(&span) {
                        break 'out Some(0);
                    }
                    continue;
                }
                break 'out Some(moved);
            }
        };
        let sdp = &self.domains.domains(dst)[sdi];
        let (min_iv, max_iv, nice_tries) = (
            sdp.min_interval_ms,
            sdp.max_interval_ms,
            sdp.cache_nice_tries,
        );
        let moved = match outcome {
            None => {
                let st = &mut self.sd_state[dst.idx()][sdi];
                st.lb.balanced[ii] += 1;
                st.nr_balance_failed = 0;
                if idle != CpuIdle::NewlyIdle {
                    st.balance_interval_ms = (st.balance_interval_ms * 2).min(max_iv);
                }
                0
            }
            Some(moved) => {
                let st = &mut self.sd_state[dst.idx()][sdi];
                if moved == 0 {
                    st.lb.failed[ii] += 1;
                    if idle != CpuIdle::NewlyIdle {
                        st.nr_balance_failed += 1;
                        // need_active_balance: a task-count imbalance that
                        // keeps failing (the task to move is running).
                        if let Some((busiest, MigrationType::Task)) = last {
                            if st.nr_balance_failed > nice_tries + 2 {
                                self.start_active_balance(busiest, dst, sdi);
                            }
                        }
                    }
                } else {
                    st.nr_balance_failed = 0;
                    st.lb.gained[ii] += moved as u64;
                }
                let st = &mut self.sd_state[dst.idx()][sdi];
                if idle != CpuIdle::NewlyIdle {
                    st.balance_interval_ms = min_iv;
                }
                moved
            }
        };
        self.last_pass_cost = cost;
        if holds_flag {
            self.balance_flag_release(dst);
        }
        if idle == CpuIdle::NewlyIdle {
            self.newidle_cost += cost;
        } else {
            let who = self.ilb_cpu.unwrap_or(dst);
            self.charge(who, cost, Path::Balance, true);
        }
        moved
    }

    /// cmpxchg on `sched_balance_running` by `cpu` (on behalf of it, when a
    /// NOHZ balancer walks its domains); the line access is CPU time of the
    /// CPU doing it. Returns whether the flag was taken.
    fn balance_flag_acquire(&mut self, cpu: CpuId) -> bool {
        let who = self.ilb_cpu.unwrap_or(cpu);
        let (ok, cost) = self.balance_flag.try_acquire(&self.machine, who, self.now);
        self.charge_atomic(who, cost);
        self.last_pass_cost = 0;
        ok
    }

    /// Releases the flag: held until the holder's pass has run.
    fn balance_flag_release(&mut self, cpu: CpuId) {
        let who = self.ilb_cpu.unwrap_or(cpu);
        let until = self.now + self.last_pass_cost;
        let cost = self
            .balance_flag
            .release(&self.machine, who, self.now, until);
        self.charge_atomic(who, cost);
    }

    fn charge_atomic(&mut self, who: CpuId, cost: Nanos) {
        if self.in_newidle {
            // A newidle pass: its CPU time is charged with the switch.
            self.newidle_atomic_cost += cost;
        } else {
            self.charge(who, cost, Path::BalanceAtomic, true);
        }
    }

    /// `can_migrate_task` for a queued (not running) task.
    fn can_migrate_task(
        &self,
        p: TaskId,
        src: CpuId,
        dst: CpuId,
        sdi: usize,
        m: MigrationType,
        pinned: &mut bool,
    ) -> (bool, bool) {
        let task = &self.tasks[p.idx()];
        let se = &self.ents[task.se.idx()];
        if se.sched_delayed && m != MigrationType::Load {
            return (false, false);
        }
        let st = &self.sd_state[dst.idx()][sdi];
        let g = &self.groups[task.group.idx()];
        let q = &self.cfs[g.cfs_rq[src.idx()].idx()];
        let dq = &self.cfs[g.cfs_rq[dst.idx()].idx()];
        // throttled_lb_pair: never into a throttled hierarchy (nor, under
        // legacy throttling, out of one).
        if dq.bw.throttle_count > 0
            || (q.bw.throttle_count > 0
                && self.cfg.features.throttle == crate::features::Throttle::Legacy)
        {
            return (false, false);
        }
        if st.nr_balance_failed == 0
            && !eevdf::entity_eligible(q, &self.ents, task.se)
            && dq.nr_queued > 0
        {
            return (false, false);
        }
        if !task.cpus_allowed.test(dst) {
            return (false, false);
        }
        *pinned = false;
        if self.rqs[src.idx()].curr == Some(p) || task.internal {
            return (false, false);
        }
        let sd = &self.domains.domains(dst)[sdi];
        let hot = lb::task_hot(
            task.policy == crate::program::Policy::Idle,
            sd.flags
                .contains(crate::machine::domains::SD_SHARE_CPUCAPACITY),
            self.now.saturating_sub(se.exec_start),
            MIGRATION_COST_NS,
        );
        let ok = lb::hot_task_may_move(hot, st.nr_balance_failed, sd.cache_nice_tries);
        (ok, ok && hot)
    }

    /// `detach_tasks` + `attach_tasks`. Returns (tasks moved, all pinned).
    fn detach_attach(
        &mut self,
        dst: CpuId,
        src: CpuId,
        sdi: usize,
        idle: CpuIdle,
        m: MigrationType,
        imbalance: u64,
    ) -> (u32, bool) {
        // Candidates: queued tasks of src, least recently run first (the
        // tail of cfs_tasks).
        let mut cands: Vec<(u64, TaskId)> = self
            .queued_tasks(src)
            .into_iter()
            .map(|t| (self.tasks[t.idx()].cfs_tasks_stamp, t))
            .collect();
        cands.sort();
        let loop_max = NR_MIGRATE.min(self.rqs[src.idx()].nr_running);
        let mut imbalance = imbalance as i128;
        let mut all_pinned = true;
        let mut moved = Vec::new();
        for (i, &(_, p)) in cands.iter().enumerate() {
            if idle != CpuIdle::NotIdle && self.rqs[src.idx()].nr_running <= 1 {
                break;
            }
            if i as u32 >= loop_max {
                break;
            }
            let (ok, hot) = self.can_migrate_task(p, src, dst, sdi, m, &mut all_pinned);
            if !ok {
                continue;
            }
            let se = self.tasks[p.idx()].se;
            match m {
                MigrationType::Load => {
                    let load = self.task_h_load(p).max(1);
                    let nbf = self.sd_state[dst.idx()][sdi].nr_balance_failed.min(63);
                    if (load >> nbf) as i128 > imbalance {
                        continue;
                    }
                    imbalance -= load as i128;
                }
                MigrationType::Util => {
                    let util = self.ents[se.idx()].avg.util_avg;
                    if util as i128 > imbalance {
                        continue;
                    }
                    imbalance -= util as i128;
                }
                MigrationType::Task => imbalance -= 1,
            }
            if hot {
                self.sd_state[dst.idx()][sdi].lb.hot_gained[idle as usize] += 1;
            }
            self.detach_task(p, src, dst);
            moved.push(p);
            // CONFIG_PREEMPTION: a newidle pass takes one task.
            if idle == CpuIdle::NewlyIdle || imbalance <= 0 {
                break;
            }
        }
        let n = moved.len() as u32;
        for p in moved {
            self.attach_task(p, dst);
        }
        (n, all_pinned && n == 0)
    }

    fn detach_task(&mut self, p: TaskId, src: CpuId, dst: CpuId) {
        let was_delayed = self.ents[self.tasks[p.idx()].se.idx()].sched_delayed;
        self.dequeue_task(p, false);
        if was_delayed {
            // A delayed task that is moved finishes its sleep here.
            self.tasks[p.idx()].state = TaskState::Sleeping;
        }
        let _ = src;
        self.set_task_cpu(p, dst, dst);
    }

    fn attach_task(&mut self, p: TaskId, dst: CpuId) {
        if self.tasks[p.idx()].state == TaskState::Sleeping {
            return; // was delayed: it sleeps on dst now and wakes there
        }
        self.enqueue_task(p, dst, EnqueueKind::Migrate);
        self.wakeup_preempt(dst, p, dst, false, false);
    }

    /// `update_newidle_stats`: one newidle call of domain `sdi` with
    /// `success` (already weighted); the ratio is refreshed every 1024 calls
    /// and the counters halved, so later refreshes come every 512.
    fn update_newidle_stats(&mut self, cpu: CpuId, sdi: usize, success: u32) {
        let st = &mut self.sd_state[cpu.idx()][sdi];
        st.newidle_call += 1;
        st.newidle_success += success;
        if st.newidle_call >= 1024 {
            st.newidle_ratio = st.newidle_success.min(1024);
            st.newidle_call /= 2;
            st.newidle_success /= 2;
        }
    }

    /// `sched_balance_newidle`: before `cpu` goes idle, try to pull a task.
    /// Returns true when something was pulled; its cost is left in
    /// `self.newidle_cost` for the caller to charge after the switch.
    pub(crate) fn sched_balance_newidle(&mut self, cpu: CpuId) -> bool {
        let rq = &self.rqs[cpu.idx()];
        if rq.ttwu_pending > 0 {
            return false;
        }
        self.rqs[cpu.idx()].newidle_stamp = Some(self.now);
        let ndom = self.domains.domains(cpu).len();
        if ndom == 0 {
            return false;
        }
        let avg_idle = self.rqs[cpu.idx()].avg_idle;
        if !lb::newidle_worth_it(
            self.rd_overloaded,
            avg_idle,
            0,
            self.sd_state[cpu.idx()][0].max_newidle_lb_cost,
        ) {
            return false;
        }
        let mut curr_cost: Nanos = 0;
        let mut pulled = 0;
        let mut cont = true;
        let mut next_balance = u64::MAX;
        self.in_newidle = true;
        for sdi in 0..ndom {
            let interval = self.sd_interval(cpu, sdi, false);
            next_balance = next_balance.min(self.sd_state[cpu.idx()][sdi].last_balance + interval);
            if !lb::newidle_worth_it(
                true,
                avg_idle,
                curr_cost,
                self.sd_state[cpu.idx()][sdi].max_newidle_lb_cost,
            ) {
                break;
            }
            if self.domains.domains(cpu)[sdi]
                .flags
                .contains(SD_BALANCE_NEWIDLE)
            {
                // NI_RANDOM: run the pass with a probability that follows
                // its recent success ratio; successes of a pass that ran
                // are scaled by the inverse probability.
                let mut weight = 1;
                if self.cfg.features.ni_random {
                    let r: u32 = self.ni_rng.random_range(0..1024);
                    let w = 1 + self.sd_state[cpu.idx()][sdi].newidle_ratio;
                    if r > w {
                        self.update_newidle_stats(cpu, sdi, 0);
                        continue;
                    }
                    weight = (1024 + w / 2) / w;
                }
                let before = self.newidle_cost;
                pulled = self.sched_balance_rq(cpu, sdi, CpuIdle::NewlyIdle, &mut cont);
                let domain_cost = self.newidle_cost - before;
                curr_cost += domain_cost;
                self.update_newidle_cost(cpu, sdi, domain_cost);
                self.update_newidle_stats(cpu, sdi, if pulled > 0 { weight } else { 0 });
            }
            if pulled > 0 || !cont {
                break;
            }
        }
        self.in_newidle = false;
        let rq = &mut self.rqs[cpu.idx()];
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(curr_cost);
        rq.next_balance = rq.next_balance.min(next_balance);
        if pulled > 0 {
            rq.newidle_stamp = None;
        }
        pulled > 0
    }

    /// Asks `busiest`'s stopper to push its running task to `dst`
    /// (`active_load_balance_cpu_stop`): the task is moved when `busiest`
    /// next switches it out, which the resched IPI forces at once.
    fn start_active_balance(&mut self, busiest: CpuId, dst: CpuId, sdi: usize) {
        let rq = &self.rqs[busiest.idx()];
        let Some(curr) = rq.curr else { return };
        if rq.active_balance.is_some()
            || !self.tasks[curr.idx()].cpus_allowed.test(dst)
            || self.tasks[curr.idx()].internal
        {
            return;
        }
        self.rqs[busiest.idx()].active_balance = Some((dst, sdi));
        self.sd_state[dst.idx()][sdi].alb_count += 1;
        self.rqs[busiest.idx()].need_resched = true;
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
        let (dst, sdi) = self.rqs[cpu.idx()].active_balance.take()?;
        let p = prev?;
        if self.class_of(p) != crate::rq::Class::Fair {
            return None;
        }
        let task = &self.tasks[p.idx()];
        if task.state != TaskState::Runnable
            || !task.cpus_allowed.test(dst)
            || self.ents[task.se.idx()].sched_delayed
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
        let st = &mut self.sd_state[dst.idx()][sdi];
        st.nr_balance_failed = 0;
        st.alb_pushed += 1;
        self.charge(cpu, LB_MIGRATE_NS, Path::Balance, true);
    }

    // ---------------------------------------------------------------- NOHZ

    /// `nohz_balancer_kick` from the tick of a busy CPU: if idle CPUs are
    /// due for balancing and this CPU or its LLC has more than enough to
    /// do, kick the first idle CPU to balance on behalf of all idle CPUs.
    pub(crate) fn nohz_balancer_kick(&mut self, cpu: CpuId) {
        if self.nohz_kick_pending || self.jiffies() < self.nohz_next_balance {
            return;
        }
        let n = self.machine.nr_cpus();
        let idle_cpu = |s: &Self, c: CpuId| s.rqs[c.idx()].tick_stopped && s.available_idle_cpu(c);
        let start = CpuId((cpu.0 + 1) % n as u32);
        let Some(ilb) = CpuMask::full(n)
            .iter_wrap(start)
            .find(|&c| c != cpu && idle_cpu(self, c))
        else {
            return;
        };
        let busy_llc = self
            .machine
            .llc_span(cpu)
            .iter()
            .filter(|&c| !self.rqs[c.idx()].tick_stopped)
            .count();
        if self.rqs[cpu.idx()].nr_running < 2 && busy_llc <= 1 {
            return;
        }
        self.nohz_next_balance = self.jiffies() + 1;
        self.nohz_kick_pending = true;
        let at = self.now + self.machine.costs.ipi_latency_ns;
        let at = self.irq_time(ilb, at);
        self.queue
            .push(at, crate::event::Event::NohzIdleBalance { cpu: ilb });
    }

    /// `_nohz_idle_balance` on the kicked CPU: balance every idle CPU that
    /// is due, on its behalf, itself last.
    pub(crate) fn nohz_idle_balance(&mut self, ilb: CpuId) {
        self.nohz_kick_pending = false;
        let n = self.machine.nr_cpus();
        let start = CpuId((ilb.0 + 1) % n as u32);
        let order: Vec<CpuId> = CpuMask::full(n).iter_wrap(start).collect();
        self.ilb_cpu = Some(ilb);
        let mut next = u64::MAX;
        for c in order {
            if !self.available_idle_cpu(ilb) {
                break; // the balancer got work
            }
            if !(self.rqs[c.idx()].tick_stopped && self.available_idle_cpu(c)) {
                continue;
            }
            if self.jiffies() >= self.rqs[c.idx()].next_balance {
                self.sched_balance_domains(c, CpuIdle::Idle);
            }
            next = next.min(self.rqs[c.idx()].next_balance);
        }
        self.ilb_cpu = None;
        if next != u64::MAX {
            self.nohz_next_balance = next;
        }
        self.reidle(ilb);
    }

    /// `update_avg(&rq->avg_idle, now − idle_stamp)` at a wakeup onto `cpu`.
    pub(crate) fn update_avg_idle(&mut self, cpu: CpuId) {
        let now = self.now;
        let rq = &mut self.rqs[cpu.idx()];
        if let Some(stamp) = rq.newidle_stamp.take() {
            let sample = now.saturating_sub(stamp) as i128;
            let avg = rq.avg_idle as i128;
            let new = avg + (sample - avg) / 8;
            rq.avg_idle = (new.max(0) as Nanos).min(2 * rq.max_idle_balance_cost);
        }
    }
}

impl<S: Sink> Sim<S> {
    /// Keeps the LLC's overload bitmap (STEAL) in step with this CPU's
    /// runnable count; called after every change of `h_nr_runnable`.
    pub(crate) fn sync_overload(&mut self, cpu: CpuId) {
        let Some(i) = self.domains.shortcuts(cpu).llc_shared else {
            return;
        };
        let nr = self.cfs[self.rqs[cpu.idx()].cfs.idx()].h_nr_runnable;
        let m = &mut self.llc_state[i].overload;
        if steal::overloaded(nr) {
            m.set(cpu);
        } else {
            m.clear(cpu);
        }
    }

    /// `try_steal` after a newidle pass that pulled nothing (feature STEAL).
    /// Returns true when a task was stolen onto `dst`.
    pub(crate) fn try_steal(&mut self, dst: CpuId) -> bool {
        if !self.cfg.features.steal || !steal::steal_allowed(self.rqs[dst.idx()].avg_idle) {
            return false;
        }
        let Some(i) = self.domains.shortcuts(dst).llc_shared else {
            return false;
        };
        if self.llc_state[i].overload.is_empty() {
            return false;
        }
        self.steal_cost += STEAL_ATTEMPT_NS;
        let order = steal::steal_order(&self.machine, &self.llc_state[i].overload, dst);
        for src in order {
            let rq = &self.rqs[src.idx()];
            let q = rq.cfs.idx();
            if !steal::overloaded(self.cfs[q].h_nr_runnable) {
                continue;
            }
            let cands: Vec<steal::StealCandidate<TaskId>> = self
                .queued_tasks(src)
                .into_iter()
                .map(|t| {
                    let task = &self.tasks[t.idx()];
                    let se = &self.ents[task.se.idx()];
                    let g = &self.groups[task.group.idx()];
                    // Never into a throttled hierarchy.
                    let throttled = self.cfs[g.cfs_rq[dst.idx()].idx()].bw.throttle_count > 0;
                    steal::StealCandidate {
                        task: t,
                        stamp: task.cfs_tasks_stamp,
                        allowed: task.cpus_allowed.test(dst) && !throttled,
                        running: rq.curr == Some(t),
                        pinned_or_delayed: se.sched_delayed || task.internal,
                    }
                })
                .collect();
            match steal::pick_steal_task(&cands) {
                Some(p) => {
                    self.detach_task(p, src, dst);
                    self.attach_task(p, dst);
                    self.cpu_stats[dst.idx()].steal += 1;
                    self.steal_cost += STEAL_ATTEMPT_NS;
                    self.rqs[dst.idx()].newidle_stamp = None;
                    return true;
                }
                None => self.cpu_stats[dst.idx()].steal_fail += 1,
            }
        }
        false
    }
}
