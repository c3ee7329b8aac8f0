//! The simulator's side of placement: [`CpuView`] for [`Sim`] (what the
//! pure policy in [`crate::fair::select`] may ask about the runqueues), the
//! wake_wide bookkeeping (`record_wakee`) and the per-LLC shared state
//! (`has_idle_cores`, `nr_idle_scan`). `select_task_rq_fair` itself, which
//! asks the policy and applies its side effects, is in `sched/fair.rs`.
//!
//! Deviation: SIS_UTIL's scan depth is refreshed at most once per jiffy per
//! LLC by the tick of a busy CPU of that LLC (`update_idle_cpu_scan` from
//! `sched_tick`), not by the periodic load balance at the LLC level that
//! computes it in the kernel (kernel-model.md §5.3).

use crate::fair::select::{CpuView, NumaForkRule, NumaLbRule};
use crate::ids::{CpuId, TaskId};
use crate::machine::domains::SchedDomains;
use crate::machine::Machine;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::time::{Nanos, NSEC_PER_SEC};

impl<S: Sink> CpuView for Sim<S> {
    /// The dense per-CPU array (`sched/lb_snapshot.rs`); not under
    /// `--check`, where every read goes through [`Self::lb_snapshot`] to be
    /// compared with the runqueues.
    #[inline]
    fn lb_snapshots(&self) -> Option<&[crate::fair::select::LbSnapshot]> {
        (!self.cfg.check).then_some(&self.sched.lb_cpus[..])
    }
    /// The group spans' running sums (`sched/lb_snapshot.rs`); not under
    /// `--check`, where each group's read goes through [`Self::lb_sum`] to
    /// be compared with the runqueues.
    #[inline]
    fn lb_sums(&self) -> Option<&[crate::fair::select::LbSums]> {
        (!self.cfg.check).then_some(&self.sched.lb_sums[..])
    }
    /// One group's running sums (`sched/lb_snapshot.rs`).
    #[inline]
    fn lb_sum(
        &self,
        g: &crate::machine::domains::SchedGroup,
    ) -> Option<crate::fair::select::LbSums> {
        self.lb_sum_read(g)
    }
    /// One entry of the dense per-CPU array (`sched/lb_snapshot.rs`).
    #[inline]
    fn lb_snapshot(&self, cpu: CpuId) -> crate::fair::select::LbSnapshot {
        self.lb_read(cpu)
    }
    fn machine(&self) -> &Machine {
        &self.machine
    }
    fn domains(&self) -> &SchedDomains {
        &self.sched.domains
    }
    fn sched_idle_as_idle(&self) -> bool {
        self.cfg.features.sched_idle_as_idle
    }
    fn numa_fork_rule(&self) -> NumaForkRule {
        self.numa_fork_rule
    }
    fn numa_lb_rule(&self) -> NumaLbRule {
        self.numa_lb_rule
    }
    fn available_idle_cpu(&self, cpu: CpuId) -> bool {
        self.sched.rqs[cpu.idx()].is_idle()
    }
    fn sched_idle_cpu(&self, cpu: CpuId) -> bool {
        self.sched.rqs[cpu.idx()].ttwu_pending == 0 && self.sched_idle_rq(cpu)
    }
    fn nr_running(&self, cpu: CpuId) -> u32 {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.nr_running + rq.ttwu_pending
    }
    fn h_nr_runnable(&self, cpu: CpuId) -> u32 {
        self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()].h_nr_runnable
    }
    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()]
            .avg
            .load_avg
    }
    fn cpu_util(&self, cpu: CpuId) -> u64 {
        let u = self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()]
            .avg
            .util_avg;
        u.min(self.machine.cpu(cpu).capacity as u64)
    }
    fn cpu_runnable(&self, cpu: CpuId) -> u64 {
        self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()]
            .avg
            .runnable_avg
    }
    fn idle_exit_latency(&self, cpu: CpuId) -> u64 {
        let rq = &self.sched.rqs[cpu.idx()];
        rq.idle_state
            .map_or(0, |s| self.machine.idle_states[s].exit_latency_ns)
    }
    fn idle_stamp(&self, cpu: CpuId) -> u64 {
        self.sched.rqs[cpu.idx()].idle_stamp
    }
    fn has_idle_cores(&self, cpu: CpuId) -> bool {
        self.sched
            .domains
            .shortcuts(cpu)
            .llc_shared
            .is_some_and(|i| self.sched.llc_state[i].has_idle_cores)
    }
    fn nr_idle_scan(&self, cpu: CpuId) -> u32 {
        if !self.cfg.features.sis_util {
            if self.cfg.features.sis_prop {
                return self.sis_prop_nr(cpu).saturating_sub(1);
            }
            return u32::MAX - 1;
        }
        self.sched
            .domains
            .shortcuts(cpu)
            .llc_shared
            .map_or(u32::MAX, |i| self.sched.llc_state[i].nr_idle_scan)
    }
    fn sis_util(&self) -> bool {
        self.cfg.features.sis_util
    }
    fn sis_prop(&self) -> bool {
        self.cfg.features.sis_prop
    }
}

impl<S: Sink> Sim<S> {
    /// `record_wakee` for the task running on `waker_cpu` (or its idle task).
    pub(crate) fn record_wakee(&mut self, waker_cpu: CpuId, p: TaskId) -> (u32, u64) {
        let now = self.now;
        let rq = &mut self.sched.rqs[waker_cpu.idx()];
        let (w, load) = match rq.curr {
            Some(c) => {
                let load = self.sched.ents[self.sched.tasks[c.idx()].se.idx()]
                    .avg
                    .load_avg;
                (&mut self.sched.tasks[c.idx()].wakee, load)
            }
            None => (&mut rq.idle_wakee, 0),
        };
        if now > w.decay_ts + NSEC_PER_SEC {
            w.flips >>= 1;
            w.decay_ts = now;
        }
        if w.last_wakee != Some(p) {
            w.last_wakee = Some(p);
            w.flips += 1;
        }
        (w.flips, load)
    }

    /// `__update_idle_core`: a CPU went idle; if its whole core is idle, the
    /// LLC has an idle core again.
    pub(crate) fn update_idle_core(&mut self, cpu: CpuId) {
        if !self.machine.has_smt() {
            return;
        }
        if self
            .machine
            .core_siblings(cpu)
            .iter()
            .all(|&c| self.available_idle_cpu(c))
        {
            if let Some(i) = self.sched.domains.shortcuts(cpu).llc_shared {
                self.sched.llc_state[i].has_idle_cores = true;
            }
        }
    }

    /// SIS_PROP (before 5.19): how many CPUs `select_idle_cpu` may look
    /// at, `max(4, llc_weight × (avg_idle / 512) / (avg_scan_cost + 1))`.
    /// `avg_scan_cost` is the measured average of the scans' time
    /// ([`Self::account_sis_scan`]). Deviation: `avg_idle` is the target
    /// CPU's (the kernel reads the waking CPU's).
    pub(crate) fn sis_prop_nr(&self, cpu: CpuId) -> u32 {
        let Some(sd) = self.sched.domains.sd_llc(cpu) else {
            return u32::MAX;
        };
        let weight = sd.span_weight as u64;
        let avg_scan_cost = self
            .sched
            .domains
            .shortcuts(cpu)
            .llc_shared
            .map_or(0, |i| self.sched.llc_state[i].avg_scan_cost);
        let avg_cost = avg_scan_cost + 1;
        let avg_idle = self.sched.rqs[cpu.idx()].avg_idle / 512;
        let span_avg = weight * avg_idle;
        if span_avg > 4 * avg_cost {
            (span_avg / avg_cost).min(u32::MAX as u64) as u32
        } else {
            4
        }
    }

    /// SIS_PROP's `update_avg(&avg_scan_cost, time)`: the average moves an
    /// eighth of the way to a bounded scan's time (`ns`) of `cpu`'s LLC.
    pub(crate) fn account_sis_scan(&mut self, cpu: CpuId, ns: Nanos) {
        if let Some(i) = self.sched.domains.shortcuts(cpu).llc_shared {
            let avg = &mut self.sched.llc_state[i].avg_scan_cost;
            *avg = crate::fair::select::update_avg(*avg, ns);
        }
    }

    /// SIS_UTIL: `nr_idle_scan = y × llc_weight / 1024` with
    /// `y = 1024 − min(1024, x² × pct² / (10000 × 1024))` and `x` the LLC's
    /// average utilisation (0..1024).
    pub(crate) fn update_idle_cpu_scan(&mut self, cpu: CpuId) {
        let Some(i) = self.sched.domains.shortcuts(cpu).llc_shared else {
            return;
        };
        let jiffy = self.now / self.cfg.tick_ns();
        if self.sched.llc_state[i].scan_jiffy == jiffy {
            return;
        }
        let Some(sd) = self.sched.domains.sd_llc(cpu) else {
            return;
        };
        let pct = sd.imbalance_pct as u64;
        let weight = sd.span_weight as u64;
        let sum: u64 = sd.span.iter().map(|c| self.cpu_util(c)).sum();
        let x = sum / weight.max(1);
        let y = 1024 - (x * x * pct * pct / (10000 * 1024)).min(1024);
        self.sched.llc_state[i].nr_idle_scan = (y * weight / 1024) as u32;
        self.sched.llc_state[i].scan_jiffy = jiffy;
    }
}
