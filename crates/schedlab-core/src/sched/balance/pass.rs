//! One load-balance pass (`sched_balance_rq`): decide with the pure
//! [`crate::fair::balance::lb`], then detach and attach tasks
//! (`detach_tasks`, `can_migrate_task`, `attach_tasks`); and the
//! SD_SERIALIZE `sched_balance_running` flag.

use super::*;
use crate::fair::balance::lb::{self, CpuIdle, MigrationType};
use crate::fair::eevdf::{self, EnqueueKind};
use crate::features::LbSerialize;
use crate::ids::{CpuId, TaskId};
use crate::machine::domains::SD_SERIALIZE;
use crate::machine::CpuMask;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::stats::Path;
use crate::task::TaskState;
use crate::time::Nanos;

impl<S: Sink> Sim<S> {
    pub(crate) fn jiffies(&self) -> u64 {
        self.now / self.cfg.tick_ns()
    }

    /// `sched_balance_rq`: one balance pass of domain `sdi` for `dst`.
    /// Returns the number of tasks pulled; charges its CPU time to `dst`
    /// (newidle passes return their cost through `newidle_cost`).
    pub(crate) fn sched_balance_rq(
        &mut self,
        dst: CpuId,
        sdi: usize,
        idle: CpuIdle,
        cont: &mut bool,
    ) -> u32 {
        let ii = idle as usize;
        self.sched.sd_state[dst.idx()][sdi].lb.count[ii] += 1;
        let sd = &self.sched.domains.domains(dst)[sdi];
        let mut cost = LB_PASS_NS + LB_PER_CPU_NS * sd.span_weight as u64;
        // env->cpus: the span, less busiest CPUs found all-pinned.
        let mut excluded: Option<CpuMask> = None;
        let mut last: Option<(CpuId, MigrationType)> = None;
        // LBF_ALL_PINNED as the last detach attempt left it: set when
        // affinity kept every candidate of the busiest queue off `dst`.
        let mut lbf_all_pinned = false;
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
                    // A lost race reads no CPU's statistics: the pass's
                    // fixed part only (the cmpxchg is charged by itself).
                    cost = LB_PASS_NS;
                    break 'out None;
                }
                holds_flag = true;
            }
            loop {
                let sd = &self.sched.domains.domains(dst)[sdi];
                let child_flags = sd.child.map(|c| self.sched.domains.domains(dst)[c].flags);
                let mut sds = lb::sd_lb_stats(self, sd, child_flags, dst, excluded.as_ref());
                sds.load_imbalance_wraps = crate::kernels::at_least(self.cfg.kernel, 5, 5);
                if sd.parent.is_none() {
                    self.sched.rd_overloaded = sds.overloaded;
                }
                let Some(src) = lb::find_src_group(sd, idle, &sds) else {
                    self.sched.sd_state[dst.idx()][sdi].lb.nobusyg[ii] += 1;
                    break 'out None;
                };
                // The group's span is read in place (a clone copied 512
                // bytes per pass at 4096 CPUs).
                let Some(busiest) = lb::find_src_rq(
                    self,
                    &sd.groups[src.group].span,
                    excluded.as_ref(),
                    src.migration,
                    src.imbalance,
                ) else {
                    self.sched.sd_state[dst.idx()][sdi].lb.nobusyq[ii] += 1;
                    break 'out None;
                };
                let lbc = &mut self.sched.sd_state[dst.idx()][sdi].lb;
                match src.migration {
                    MigrationType::Load => lbc.imbalance_load[ii] += src.imbalance,
                    MigrationType::Util => lbc.imbalance_util[ii] += src.imbalance,
                    MigrationType::Task => lbc.imbalance_task[ii] += src.imbalance,
                }
                last = Some((busiest, src.migration));
                let (moved, all_pinned) = if self.sched.rqs[busiest.idx()].nr_running > 1 {
                    self.detach_attach(dst, busiest, sdi, idle, src.migration, src.imbalance)
                } else {
                    (0, false)
                };
                cost += moved as u64 * LB_MIGRATE_NS;
                lbf_all_pinned = all_pinned;
                if moved == 0 && all_pinned {
                    // LBF_ALL_PINNED: try without that CPU; when none is
                    // left, `out_all_pinned` (a balanced pass, below).
                    let cpus = excluded.get_or_insert_with(|| {
                        (*self.sched.domains.domains(dst)[sdi].span).clone()
                    });
                    cpus.clear(busiest);
                    let sd = &self.sched.domains.domains(dst)[sdi];
                    if !cpus.intersects(&sd.groups[src.group].span) {
                        break 'out None;
                    }
                    continue;
                }
                break 'out Some(moved);
            }
        };
        let sdp = &self.sched.domains.domains(dst)[sdi];
        let (min_iv, max_iv, nice_tries) = (
            sdp.min_interval_ms,
            sdp.max_interval_ms,
            sdp.cache_nice_tries,
        );
        let moved = match outcome {
            None => {
                // out_balanced / out_all_pinned: a balanced pass; the
                // interval doubles while under max_interval, or, with
                // LBF_ALL_PINNED, while under MAX_PINNED_INTERVAL.
                let st = &mut self.sched.sd_state[dst.idx()][sdi];
                st.lb.balanced[ii] += 1;
                st.nr_balance_failed = 0;
                let bi = st.balance_interval_ms;
                if idle != CpuIdle::NewlyIdle
                    && ((lbf_all_pinned && bi < MAX_PINNED_INTERVAL_MS) || bi < max_iv)
                {
                    st.balance_interval_ms = bi * 2;
                }
                0
            }
            Some(moved) => {
                let st = &mut self.sched.sd_state[dst.idx()][sdi];
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
                let st = &mut self.sched.sd_state[dst.idx()][sdi];
                if idle != CpuIdle::NewlyIdle {
                    st.balance_interval_ms = min_iv;
                }
                moved
            }
        };
        if idle == CpuIdle::NewlyIdle {
            self.acct.newidle_cost += cost;
        } else {
            let who = self.sched.ilb_cpu.unwrap_or(dst);
            self.charge(who, cost, Path::Balance, true);
        }
        // After the pass's cost: the release store is made once it has run.
        if holds_flag {
            self.balance_flag_release(dst);
        }
        moved
    }

    /// cmpxchg on `sched_balance_running` by `cpu` (on behalf of it, when a
    /// NOHZ balancer walks its domains); the line access is CPU time of the
    /// CPU doing it. Returns whether the flag was taken.
    pub(crate) fn balance_flag_acquire(&mut self, cpu: CpuId) -> bool {
        let who = self.sched.ilb_cpu.unwrap_or(cpu);
        let issue = self.balance_flag_clock(who);
        let (ok, cost) = self
            .sched
            .balance_flag
            .try_acquire(&self.machine, who, issue, self.now);
        self.charge_atomic(who, cost);
        ok
    }

    /// Releases the flag: a store made once the holder's pass has run
    /// (its cost is already charged, so the CPU's clock is past it).
    pub(crate) fn balance_flag_release(&mut self, cpu: CpuId) {
        let who = self.sched.ilb_cpu.unwrap_or(cpu);
        let issue = self.balance_flag_clock(who);
        self.sched.balance_flag.release(who, issue);
    }

    /// When `who` issues its next access to the flag's line. Its first
    /// access at this event time is issued at `now`, the instant of its
    /// walk (aligned ticks make one storm of them); each later one at the
    /// same time is issued after the CPU time charged to `who` since (its
    /// earlier accesses and the passes between them, or, for a NOHZ
    /// balancer, its walks for the CPUs before) and, in a newidle balance,
    /// after the costs that balance has gathered so far (charged with the
    /// switch). Not `max(now, ovh_until)` for the first access: accesses
    /// are served in the order they are made (`atomics.rs`), and a CPU
    /// still busy with earlier overhead, walked first, would hold up the
    /// line for the CPUs walked after it.
    fn balance_flag_clock(&mut self, who: CpuId) -> Nanos {
        let clock = self.now.max(self.sched.rqs[who.idx()].ovh_until);
        let base = &mut self.sched.flag_clock_base[who.idx()];
        if base.0 != self.now {
            *base = (self.now, clock);
        }
        let mut t = self.now + (clock - base.1);
        if self.sched.in_newidle {
            t += self.acct.newidle_cost + self.acct.newidle_atomic_cost;
        }
        t
    }

    pub(crate) fn charge_atomic(&mut self, who: CpuId, cost: Nanos) {
        if self.sched.in_newidle {
            // A newidle pass: its CPU time is charged with the switch.
            self.acct.newidle_atomic_cost += cost;
        } else {
            self.charge(who, cost, Path::BalanceAtomic, true);
        }
    }

    /// `can_migrate_task` for a queued (not running) task.
    pub(crate) fn can_migrate_task(
        &self,
        p: TaskId,
        src: CpuId,
        dst: CpuId,
        sdi: usize,
        m: MigrationType,
        pinned: &mut bool,
    ) -> (bool, bool) {
        let task = &self.sched.tasks[p.idx()];
        let se = &self.sched.ents[task.se.idx()];
        if se.sched_delayed && m != MigrationType::Load {
            return (false, false);
        }
        let st = &self.sched.sd_state[dst.idx()][sdi];
        let g = &self.sched.groups[task.group.idx()];
        let q = &self.sched.cfs[g.cfs_rq[src.idx()].idx()];
        let dq = &self.sched.cfs[g.cfs_rq[dst.idx()].idx()];
        // throttled_lb_pair: never into a throttled hierarchy (nor, under
        // legacy throttling, out of one).
        if dq.bw.throttle_count > 0
            || (q.bw.throttle_count > 0
                && self.cfg.features.throttle == crate::features::Throttle::Legacy)
        {
            return (false, false);
        }
        if st.nr_balance_failed == 0
            && self.cfg.features.fair_class == crate::features::FairClass::Eevdf
            && !eevdf::entity_eligible(q, &self.sched.ents, task.se)
            && dq.nr_queued > 0
        {
            return (false, false);
        }
        if !task.allowed_on(dst) {
            return (false, false);
        }
        *pinned = false;
        if self.sched.rqs[src.idx()].curr == Some(p) || task.internal {
            return (false, false);
        }
        let sd = &self.sched.domains.domains(dst)[sdi];
        // CACHE_HOT_BUDDY: the next or last buddy of its queue is hot
        // while the destination has tasks (buddies are set only by CFS).
        // (After task_hot's SCHED_IDLE and SMT-domain exits.)
        let sched_idle = task.policy == crate::program::Policy::Idle;
        let smt = sd
            .flags
            .contains(crate::machine::domains::SD_SHARE_CPUCAPACITY);
        let buddy = (q.next == Some(task.se) || q.last == Some(task.se))
            && self.sched.rqs[dst.idx()].nr_running > 0;
        let hot = (buddy && !sched_idle && !smt)
            || lb::task_hot(
                sched_idle,
                smt,
                self.now.saturating_sub(se.exec_start),
                self.cfg.tunables.migration_cost_ns,
            );
        let ok = lb::hot_task_may_move(hot, st.nr_balance_failed, sd.cache_nice_tries);
        (ok, ok && hot)
    }

    /// `detach_tasks` + `attach_tasks`. Returns (tasks moved, all pinned).
    pub(crate) fn detach_attach(
        &mut self,
        dst: CpuId,
        src: CpuId,
        sdi: usize,
        idle: CpuIdle,
        m: MigrationType,
        imbalance: u64,
    ) -> (u32, bool) {
        // can_migrate_task reads src's queue (the eligibility test uses
        // avg_vruntime, which counts the running task's vruntime): a
        // pending syscall fold there is settled first (sched/fold.rs).
        self.fold_touch_cpu(src);
        // Candidates: queued tasks of src, least recently run first (the
        // tail of cfs_tasks); only the first loop_max (sysctl
        // sched_nr_migrate, 32, at most nr_running) are looked at, and only
        // those are visited. Deviations (the model's, from before the list):
        // the running task and, under legacy throttling, the tasks of a
        // throttled group are passed over without counting towards
        // loop_max (the kernel counts them and `can_migrate_task` refuses
        // them; the running task is still tested for LBF_ALL_PINNED after
        // the loop), and a task that may not move is not rotated to the
        // head (the kernel's `list_move` in detach_tasks).
        let loop_max = self
            .cfg
            .tunables
            .nr_migrate
            .min(self.sched.rqs[src.idx()].nr_running);
        let cands: Vec<TaskId> = self
            .sched
            .cfs_tasks_from_tail(src)
            .take(loop_max as usize)
            .collect();
        let mut imbalance = imbalance as i128;
        let mut all_pinned = true;
        let mut moved = Vec::new();
        for &p in &cands {
            if idle != CpuIdle::NotIdle && self.sched.rqs[src.idx()].nr_running <= 1 {
                break;
            }
            let (ok, hot) = self.can_migrate_task(p, src, dst, sdi, m, &mut all_pinned);
            if !ok {
                continue;
            }
            let se = self.sched.tasks[p.idx()].se;
            match m {
                MigrationType::Load => {
                    let load = self.task_h_load(p).max(1);
                    let nbf = self.sched.sd_state[dst.idx()][sdi].nr_balance_failed;
                    if lb::detach_too_much_load(
                        self.cfg.kernel,
                        load,
                        imbalance,
                        nbf,
                        self.sched.domains.domains(dst)[sdi].cache_nice_tries,
                    ) {
                        continue;
                    }
                    imbalance -= load as i128;
                }
                MigrationType::Util => {
                    let util = self.sched.ents[se.idx()].avg.util_avg;
                    if util as i128 > imbalance {
                        continue;
                    }
                    imbalance -= util as i128;
                }
                MigrationType::Task => imbalance -= 1,
            }
            if hot {
                self.sched.sd_state[dst.idx()][sdi].lb.hot_gained[idle as usize] += 1;
            }
            self.detach_task(p, src, dst);
            moved.push(p);
            // CONFIG_PREEMPTION: a newidle pass takes one task.
            if idle == CpuIdle::NewlyIdle || imbalance <= 0 {
                break;
            }
        }
        // The running task heads cfs_tasks, so the walk from the tail
        // reaches it last, when the whole list fits in loop_max: it is
        // refused as running, but only after the affinity test, so one that
        // passes the earlier tests and may run on dst clears LBF_ALL_PINNED
        // (kernel-model.md §8.9). Only the flag needs it. A flag still set
        // means nothing moved, so src still holds the two or more tasks it
        // was called with and no break was taken: the walk reached the
        // running task unless the list exceeds loop_max.
        let nr_src = self.sched.rqs[src.idx()].nr_running;
        if all_pinned && nr_src <= self.cfg.tunables.nr_migrate {
            if let Some(curr) = self.sched.rqs[src.idx()].curr {
                if self.sched.class_of(curr) == crate::rq::Class::Fair {
                    let _ = self.can_migrate_task(curr, src, dst, sdi, m, &mut all_pinned);
                }
            }
        }
        let n = moved.len() as u32;
        for p in moved {
            self.attach_task(p, dst);
        }
        (n, all_pinned && n == 0)
    }

    pub(crate) fn detach_task(&mut self, p: TaskId, src: CpuId, dst: CpuId) {
        let was_delayed = self.sched.ents[self.sched.tasks[p.idx()].se.idx()].sched_delayed;
        self.dequeue_task(p, false);
        if was_delayed {
            // A delayed task that is moved finishes its sleep here.
            self.sched.tasks[p.idx()].state = TaskState::Sleeping;
        }
        let _ = src;
        self.set_task_cpu(p, dst, dst);
    }

    pub(crate) fn attach_task(&mut self, p: TaskId, dst: CpuId) {
        if self.sched.tasks[p.idx()].state == TaskState::Sleeping {
            return; // was delayed: it sleeps on dst now and wakes there
        }
        self.enqueue_task(p, dst, EnqueueKind::Migrate);
        self.wakeup_preempt(dst, p, dst, false, false);
    }
}
