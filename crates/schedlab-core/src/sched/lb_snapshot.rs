//! The per-CPU load-balance snapshot: what group statistics read about
//! each CPU ([`LbSnapshot`]: `cpu_load`, `cpu_util_cfs`, `cpu_runnable`,
//! `h_nr_runnable`, `nr_running`, idle, `capacity_of`), kept in one dense
//! array so that a balancing pass reads one 48-byte entry per CPU instead
//! of the CPU's runqueue, its root cfs_rq and the machine's CPU entry
//! (three cache lines per CPU for every group of every pass).
//!
//! The kernel has no such copy: `update_sg_lb_stats` reads the runqueues
//! themselves. The array is a cache of the same figures, not a model
//! change. Every entry is refreshed right after a field it derives from
//! changes ([`Sim::lb_refresh`]): `rq->nr_running` (fair, RT, deadline
//! enqueue and dequeue, throttling), `ttwu_pending`, `rq->curr`, and the
//! root cfs_rq's `h_nr_runnable` and PELT averages (which are read as
//! stored, not decayed to "now", so they change only where PELT attaches,
//! detaches, or updates across a period boundary: `SchedAvg::update`
//! says when). None of these figures is decayed at read time,
//! so a pass sees exactly the values it saw when it read the runqueues.
//!
//! The same refreshes keep [`SchedState::nohz_idle`], the CPUs that are
//! idle with their tick stopped (`rq->tick_stopped` changes in
//! `start_tick` / `stop_tick`, which refresh too): `nohz_balancer_kick`
//! looks for its idle CPU there, a word at a time, instead of reading
//! every CPU's runqueue on every tick of a busy CPU.
//!
//! The same refreshes keep running sums of the entries for every group
//! of more than one CPU in a domain of at least `LB_SUM_MIN_DOMAIN` CPUs
//! ([`LbSums`], one per `SchedGroup::span_id`, see
//! [`crate::fair::select::lb_group_summed`]): a changed entry adds its
//! difference to the sums of the 1-4 spans that hold its CPU, so that
//! `update_sd_lb_stats` reads one sum per such group, not every CPU of
//! it, and a pass over a big domain costs its groups.
//! Everything `update_sg_lb_stats` takes from the CPUs in this model is a
//! sum or a count of integers (loads, utilisation, runnable averages,
//! task counts, idle CPUs, CPUs with more than one task, capacity, CPUs),
//! so nothing stays per CPU on a whole-group read. What is not summed:
//! a pass that has excluded CPUs (`env->cpus` after LBF_ALL_PINNED) walks
//! `span ∩ cpus`, and `sched_balance_find_src_rq` still reads every CPU of
//! the busiest group (it picks one of them). The model has no misfit,
//! NUMA-preference or asym-packing statistics (lb.rs's deviations), which
//! are the per-CPU parts of the kernel's `update_sg_lb_stats`.
//!
//! Under `--check` every read compares the entry, or the group's sums,
//! with the runqueues (the first stale read is reported as an invariant
//! violation), and after every event every entry and every sum is
//! compared ([`crate::check::lb_snapshots_match`]).

use crate::fair::select::{lb_group_summed, LbSnapshot, LbSums};
use crate::ids::{CfsRqId, CpuId};
use crate::machine::domains::SchedGroup;
use crate::observe::Sink;
use crate::sim::{SchedState, Sim};

impl SchedState {
    /// Whether `cpu` belongs in [`SchedState::nohz_idle`], from its
    /// runqueue: idle (`available_idle_cpu`) with its tick stopped.
    #[inline]
    pub(crate) fn nohz_idle_fresh(&self, cpu: CpuId) -> bool {
        let rq = &self.rqs[cpu.idx()];
        rq.tick_stopped && rq.is_idle()
    }

    /// The snapshot of `cpu` computed from the runqueues (what the array
    /// must hold).
    #[inline]
    pub(crate) fn lb_snapshot_fresh(&self, cpu: CpuId, capacity: u64) -> LbSnapshot {
        let rq = &self.rqs[cpu.idx()];
        let cfs = &self.cfs[rq.cfs.idx()];
        let nr = rq.nr_running + rq.ttwu_pending;
        LbSnapshot {
            load: cfs.avg.load_avg,
            util: cfs.avg.util_avg.min(capacity),
            runnable: cfs.avg.runnable_avg,
            h_nr_runnable: cfs.h_nr_runnable,
            nr_running: nr,
            idle: nr == 0 && rq.curr.is_none(),
            capacity,
        }
    }
}

impl<S: Sink> Sim<S> {
    /// Recomputes `cpu`'s entry after one of its figures changed.
    #[inline]
    pub(crate) fn lb_refresh(&mut self, cpu: CpuId) {
        // `capacity_of` is fixed for the run (every preset CPU runs at a
        // fixed frequency): the entry's own copy, set by `lb_init`, saves
        // reading the machine's CPU entry.
        let i = cpu.idx();
        let capacity = self.sched.lb_cpus[i].capacity;
        let s = self.sched.lb_snapshot_fresh(cpu, capacity);
        let st = &mut self.sched;
        if st.lb_sums_any {
            let old = st.lb_cpus[i];
            st.lb_cpus[i] = s;
            let (a, b) = (st.lb_sum_start[i] as usize, st.lb_sum_start[i + 1] as usize);
            if a != b && s != old {
                let d = LbSums::delta(&old, &s);
                for &id in &st.lb_sum_ids[a..b] {
                    st.lb_sums[id as usize].add(&d);
                }
            }
        } else {
            st.lb_cpus[i] = s;
        }
        if self.sched.nohz_idle_fresh(cpu) {
            self.sched.nohz_idle.set(cpu);
        } else {
            self.sched.nohz_idle.clear(cpu);
        }
    }

    /// [`Self::lb_refresh`] after queue `q`'s PELT averages changed: only a
    /// root queue's are in the snapshot.
    #[inline]
    pub(crate) fn lb_refresh_cfs(&mut self, q: CfsRqId) {
        let c = &self.sched.cfs[q.idx()];
        if c.se.is_none() {
            let cpu = c.cpu;
            self.lb_refresh(cpu);
        }
    }

    /// Fills the array at set-up.
    pub(crate) fn lb_init(&mut self) {
        let n = self.sched.rqs.len();
        self.sched.lb_cpus = (0..n)
            .map(|c| {
                let cpu = CpuId(c as u32);
                let capacity = self.machine.cpu(cpu).capacity as u64;
                self.sched.lb_snapshot_fresh(cpu, capacity)
            })
            .collect();
        for c in 0..n {
            let cpu = CpuId(c as u32);
            if self.sched.nohz_idle_fresh(cpu) {
                self.sched.nohz_idle.set(cpu);
            }
        }
        // The spans with sums, per CPU in increasing span id, and their
        // first totals.
        let spans = &self.sched.domains.group_spans;
        let mut kept = vec![false; spans.len()];
        for sd in self.sched.domains.per_cpu.iter().flatten() {
            for g in sd.groups.iter() {
                if lb_group_summed(sd.span_weight, g.weight) {
                    kept[g.span_id as usize] = true;
                }
            }
        }
        let mut count = vec![0u32; n + 1];
        for s in spans
            .iter()
            .enumerate()
            .filter(|(id, _)| kept[*id])
            .map(|(_, s)| s)
        {
            for c in s.iter() {
                count[c.idx() + 1] += 1;
            }
        }
        for c in 0..n {
            count[c + 1] += count[c];
        }
        let mut ids = vec![0u32; count[n] as usize];
        let mut next = count.clone();
        let mut sums = vec![LbSums::default(); spans.len()];
        for (id, s) in spans.iter().enumerate().filter(|(id, _)| kept[*id]) {
            for c in s.iter() {
                ids[next[c.idx()] as usize] = id as u32;
                next[c.idx()] += 1;
            }
            sums[id] = LbSums::of(s, |c| self.sched.lb_cpus[c.idx()]);
        }
        self.sched.lb_sum_start = count;
        self.sched.lb_sum_ids = ids;
        self.sched.lb_sums = sums;
        self.sched.lb_sums_any = kept.iter().any(|&k| k);
        self.sched.lb_sum_kept = kept;
    }

    /// The running sums of group `g`, as balancing reads them under
    /// `--check` (outside it the pass reads [`SchedState::lb_sums`]
    /// directly); None for a group without them. A stale sum
    /// (against a walk of the runqueues) is remembered, the first one.
    #[inline]
    pub(crate) fn lb_sum_read(&self, g: &SchedGroup) -> Option<LbSums> {
        if !self.sched.lb_sum_kept[g.span_id as usize] {
            return None;
        }
        let s = self.sched.lb_sums[g.span_id as usize];
        if self.cfg.check && self.sched.lb_stale_sum.get().is_none() {
            let fresh = LbSums::of(&g.span, |c| {
                self.sched
                    .lb_snapshot_fresh(c, self.machine.cpu(c).capacity as u64)
            });
            if s != fresh {
                self.sched.lb_stale_sum.set(Some(g.span_id));
            }
        }
        Some(s)
    }

    /// `find_new_ilb` as the kick uses it: the first CPU other than `cpu`,
    /// in wrapping order from the one after it, that is idle with its tick
    /// stopped. Under `--check` the answer is compared with a walk of the
    /// runqueues.
    pub(crate) fn nohz_find_idle(&self, cpu: CpuId) -> Option<CpuId> {
        let n = self.machine.nr_cpus();
        let start = CpuId((cpu.0 + 1) % n as u32);
        let found = self.sched.nohz_idle.iter_wrap(start).find(|&c| c != cpu);
        if self.cfg.check && self.sched.lb_stale_read.get().is_none() {
            let walk = crate::machine::CpuMask::full(n)
                .iter_wrap(start)
                .find(|&c| c != cpu && self.sched.nohz_idle_fresh(c));
            if walk != found {
                self.sched
                    .lb_stale_read
                    .set(Some(walk.or(found).unwrap_or(cpu)));
            }
        }
        found
    }

    /// The entry of `cpu`, as balancing reads it. Under `--check` a stale
    /// entry is remembered (the first one) for the invariant check.
    #[inline]
    pub(crate) fn lb_read(&self, cpu: CpuId) -> LbSnapshot {
        let s = self.sched.lb_cpus[cpu.idx()];
        if self.cfg.check && self.sched.lb_stale_read.get().is_none() {
            let capacity = self.machine.cpu(cpu).capacity as u64;
            if s != self.sched.lb_snapshot_fresh(cpu, capacity) {
                self.sched.lb_stale_read.set(Some(cpu));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use crate::config::SimConfig;
    use crate::fair::select::LbSums;
    use crate::ids::CpuId;
    use crate::machine::make_test_machine;
    use crate::observe::NullSink;
    use crate::program::{Op, Policy, TaskSpec, Workload};
    use crate::sim::Sim;

    /// Six tasks that run 3 ms and sleep 1 ms on 4 CPUs for 50 ms, under
    /// `--check`.
    fn ran() -> Sim<NullSink> {
        ran_on(make_test_machine(1, 1, 2, 2), 6)
    }

    /// 40 such tasks on 32 CPUs (2 LLCs of 8 SMT-2 cores: MC domains of
    /// 16 CPUs in groups of 2, a package of 2 groups of 16), whose groups
    /// above SMT have running sums.
    fn ran_big() -> Sim<NullSink> {
        ran_on(make_test_machine(1, 2, 8, 2), 40)
    }

    fn ran_on(m: crate::machine::Machine, tasks: u32) -> Sim<NullSink> {
        let ops = vec![
            Op::Run {
                work_ns: 3_000_000,
                config_us: 0,
                perf: 0,
            },
            Op::Sleep { ns: 1_000_000 },
        ];
        let w = Workload {
            tasks: (0..tasks)
                .map(|i| TaskSpec::looping(format!("t{i}"), i, Policy::Normal, ops.clone()))
                .collect(),
            ..Default::default()
        };
        let cfg = SimConfig {
            duration_ns: Some(50_000_000),
            check: true,
            ..SimConfig::default()
        };
        let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
        let r = sim.run();
        assert_eq!(r.violation, None);
        sim
    }

    #[test]
    fn the_array_follows_the_runqueues_and_a_stale_entry_is_caught() {
        let mut sim = ran();
        // The run moved the figures away from the set-up values.
        assert!(sim.sched.lb_cpus.iter().any(|s| s.load > 0 && s.util > 0));
        assert!(crate::check::lb_snapshots_match(&sim).is_ok());
        // A stale entry fails the after-event comparison...
        sim.sched.lb_cpus[1].runnable += 1;
        let e = crate::check::lb_snapshots_match(&sim).unwrap_err();
        assert!(e.starts_with("CPU 1: load-balance snapshot"), "{e}");
        // ...and a read of it under --check is remembered.
        let _ = sim.lb_read(CpuId(1));
        assert_eq!(sim.sched.lb_stale_read.get(), Some(CpuId(1)));
        sim.sched.lb_cpus[1].runnable -= 1;
        let e = crate::check::lb_snapshots_match(&sim).unwrap_err();
        assert!(e.contains("stale"), "{e}");
    }

    #[test]
    fn the_nohz_idle_mask_follows_the_runqueues_and_a_stale_bit_is_caught() {
        let mut sim = ran();
        // At the end every task sleeps or runs; whichever CPUs are idle
        // with their tick stopped are in the mask, the others are not.
        for c in 0..4 {
            let cpu = CpuId(c);
            assert_eq!(
                sim.sched.nohz_idle.test(cpu),
                sim.sched.nohz_idle_fresh(cpu)
            );
        }
        // Flip one bit: the after-event check and the kick's lookup both
        // notice.
        let cpu = CpuId(3);
        if sim.sched.nohz_idle.test(cpu) {
            sim.sched.nohz_idle.clear(cpu);
        } else {
            sim.sched.nohz_idle.set(cpu);
        }
        let e = crate::check::lb_snapshots_match(&sim).unwrap_err();
        assert!(e.starts_with("CPU 3: in the NOHZ idle mask"), "{e}");
        let _ = sim.nohz_find_idle(CpuId(2));
        assert!(sim.sched.lb_stale_read.get().is_some());
    }

    #[test]
    fn the_group_sums_follow_the_entries_and_a_stale_sum_is_caught() {
        let mut sim = ran_big();
        let spans = sim.sched.domains.group_spans.clone();
        let kept: Vec<usize> = (0..spans.len())
            .filter(|&i| sim.sched.lb_sum_kept[i])
            .collect();
        // 16 cores, 2 LLCs; not the single CPUs.
        assert_eq!(kept.len(), 18);
        assert!(kept.iter().all(|&i| spans[i].weight() > 1));
        // Each kept sum is its CPUs' entries, and the run moved them.
        for &i in &kept {
            let walk = LbSums::of(&spans[i], |c| sim.sched.lb_cpus[c.idx()]);
            assert_eq!(sim.sched.lb_sums[i], walk);
            assert_eq!(walk.weight, spans[i].weight() as u32);
        }
        assert!(kept.iter().any(|&i| sim.sched.lb_sums[i].load > 0));
        // A stale sum fails the after-event comparison...
        let i = kept[0];
        sim.sched.lb_sums[i].idle_cpus += 1;
        let e = crate::check::lb_snapshots_match(&sim).unwrap_err();
        assert!(e.starts_with(&format!("group span {i} ")), "{e}");
        // ...and a read of it under --check is remembered.
        let g = sim
            .sched
            .domains
            .per_cpu
            .iter()
            .flatten()
            .flat_map(|d| d.groups.iter())
            .find(|g| g.span_id as usize == i)
            .unwrap()
            .clone();
        assert!(sim.lb_sum_read(&g).is_some());
        assert_eq!(sim.sched.lb_stale_sum.get(), Some(i as u32));
        sim.sched.lb_sums[i].idle_cpus -= 1;
        let e = crate::check::lb_snapshots_match(&sim).unwrap_err();
        assert!(e.contains("stale"), "{e}");
    }

    #[test]
    fn a_pass_from_the_sums_equals_the_walk() {
        use crate::fair::balance::lb::sd_lb_stats;
        let mut sim = ran_big();
        // Outside --check the pass reads the sums; with `cpus` the whole
        // span it walks the CPUs instead. Same statistics, every domain of
        // every CPU.
        sim.cfg.check = false;
        let mut compared = 0;
        for c in 0..32u32 {
            let dst = CpuId(c);
            let doms = sim.sched.domains.domains(dst).to_vec();
            for sd in &doms {
                let child = sd.child.map(|k| doms[k].flags);
                let a = sd_lb_stats(&sim, sd, child, dst, None);
                let b = sd_lb_stats(&sim, sd, child, dst, Some(&*sd.span));
                assert_eq!(a.local, b.local);
                assert_eq!(a.busiest, b.busiest);
                assert_eq!(
                    (a.total_load, a.total_capacity, a.overloaded),
                    (b.total_load, b.total_capacity, b.overloaded)
                );
                compared += sd
                    .groups
                    .iter()
                    .filter(|g| crate::fair::select::lb_group_summed(sd.span_weight, g.weight))
                    .count();
            }
        }
        assert!(compared > 0);
    }

    #[test]
    fn small_machines_keep_no_sums() {
        // 4 CPUs: no domain reaches LB_SUM_MIN_DOMAIN.
        let sim = ran();
        assert!(!sim.sched.lb_sums_any);
        assert!(sim.sched.lb_sum_ids.is_empty());
    }

    #[test]
    fn a_refresh_recomputes_the_entry() {
        let mut sim = ran();
        let good = sim.sched.lb_cpus[2];
        // Everything but the capacity, which is fixed for the run and
        // which the refresh takes from the entry.
        sim.sched.lb_cpus[2] = crate::fair::select::LbSnapshot {
            capacity: good.capacity,
            ..Default::default()
        };
        sim.lb_refresh(CpuId(2));
        assert_eq!(sim.sched.lb_cpus[2], good);
    }
}
