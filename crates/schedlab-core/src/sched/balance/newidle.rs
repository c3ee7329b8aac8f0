//! Newidle balancing (`sched_balance_newidle`): a CPU about to go idle
//! pulls work, gated by `avg_idle` against each domain's cost, with
//! NI_RANDOM's success-ratio draws; and `update_avg_idle`.

use crate::fair::balance::lb::{self, CpuIdle};
use crate::ids::CpuId;
use crate::machine::domains::SD_BALANCE_NEWIDLE;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::time::{Nanos, NSEC_PER_SEC};
use rand::Rng;

impl<S: Sink> Sim<S> {
    /// `sched_balance_newidle`: before `cpu` goes idle, try to pull a task.
    /// Returns true when something was pulled; its cost is left in
    /// `self.acct.newidle_cost` for the caller to charge after the switch.
    pub(crate) fn sched_balance_newidle(&mut self, cpu: CpuId) -> bool {
        let rq = &self.sched.rqs[cpu.idx()];
        if rq.ttwu_pending > 0 {
            return false;
        }
        self.sched.rqs[cpu.idx()].newidle_stamp = Some(self.now);
        let ndom = self.sched.domains.domains(cpu).len();
        if ndom == 0 {
            return false;
        }
        let avg_idle = self.sched.rqs[cpu.idx()].avg_idle;
        // The 5.16+ gate on every release. Before 5.16 (c5b0a7eefc70,
        // "sched/fair: Remove sysctl_sched_migration_cost condition") the
        // kernel compared avg_idle with sysctl_sched_migration_cost
        // instead: not modelled yet, see docs/kernels.md.
        let gate = self.sched.sd_state[cpu.idx()][0].max_newidle_lb_cost;
        if !lb::newidle_worth_it(self.sched.rd_overloaded, avg_idle, 0, gate) {
            // update_next_balance of the lowest domain, at its idle
            // interval: the next periodic (or NOHZ) balance of this CPU.
            let interval = self.sd_interval(cpu, 0, false);
            let next = self.sched.sd_state[cpu.idx()][0].last_balance + interval;
            let rq = &mut self.sched.rqs[cpu.idx()];
            rq.next_balance = rq.next_balance.min(next);
            return false;
        }
        let mut curr_cost: Nanos = 0;
        let mut pulled = 0;
        let mut cont = true;
        let mut next_balance = u64::MAX;
        self.sched.in_newidle = true;
        for sdi in 0..ndom {
            let interval = self.sd_interval(cpu, sdi, false);
            next_balance =
                next_balance.min(self.sched.sd_state[cpu.idx()][sdi].last_balance + interval);
            if !lb::newidle_worth_it(
                true,
                avg_idle,
                curr_cost,
                self.sched.sd_state[cpu.idx()][sdi].max_newidle_lb_cost,
            ) {
                break;
            }
            if self.sched.domains.domains(cpu)[sdi]
                .flags
                .contains(SD_BALANCE_NEWIDLE)
            {
                // NI_RANDOM: run the pass with a probability that follows
                // its recent success ratio; successes of a pass that ran
                // are scaled by the inverse probability.
                let mut weight = 1;
                if self.cfg.features.ni_random {
                    let r: u32 = self.sched.ni_rng.random_range(0..1024);
                    let w = 1 + self.sched.sd_state[cpu.idx()][sdi].newidle_ratio;
                    if r > w {
                        self.update_newidle_stats(cpu, sdi, 0);
                        continue;
                    }
                    weight = (1024 + w / 2) / w;
                }
                let before = self.acct.newidle_cost + self.acct.newidle_atomic_cost;
                pulled = self.sched_balance_rq(cpu, sdi, CpuIdle::NewlyIdle, &mut cont);
                // domain_cost is sched_clock_cpu's t1 - t0 around the pass:
                // everything the CPU spent in it, the stall of an
                // SD_SERIALIZE cmpxchg (LB_SERIALIZE=balancer-only) included.
                let domain_cost = self.acct.newidle_cost + self.acct.newidle_atomic_cost - before;
                curr_cost += domain_cost;
                self.update_newidle_cost(cpu, sdi, domain_cost);
                self.update_newidle_stats(cpu, sdi, if pulled > 0 { weight } else { 0 });
            }
            if pulled > 0 || !cont {
                break;
            }
        }
        self.sched.in_newidle = false;
        let rq = &mut self.sched.rqs[cpu.idx()];
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(curr_cost);
        rq.next_balance = rq.next_balance.min(next_balance);
        if pulled > 0 {
            rq.newidle_stamp = None;
        }
        pulled > 0
    }

    /// Decays `max_newidle_lb_cost` by 253/256 once a second; records a new
    /// maximum `cost`.
    pub(crate) fn update_newidle_cost(&mut self, cpu: CpuId, sdi: usize, cost: Nanos) {
        let now = self.now;
        let st = &mut self.sched.sd_state[cpu.idx()][sdi];
        if cost > st.max_newidle_lb_cost {
            st.max_newidle_lb_cost = cost;
        } else if now > st.last_decay + NSEC_PER_SEC {
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay = now;
        }
    }

    /// `update_newidle_stats`: one newidle call of domain `sdi` with
    /// `success` (already weighted); the ratio is refreshed every 1024 calls
    /// and the counters halved, so later refreshes come every 512.
    pub(crate) fn update_newidle_stats(&mut self, cpu: CpuId, sdi: usize, success: u32) {
        let st = &mut self.sched.sd_state[cpu.idx()][sdi];
        st.newidle_call += 1;
        st.newidle_success += success;
        if st.newidle_call >= 1024 {
            st.newidle_ratio = st.newidle_success.min(1024);
            st.newidle_call /= 2;
            st.newidle_success /= 2;
        }
    }

    /// `update_avg(&rq->avg_idle, now − idle_stamp)` at a wakeup onto `cpu`.
    pub(crate) fn update_avg_idle(&mut self, cpu: CpuId) {
        let now = self.now;
        let rq = &mut self.sched.rqs[cpu.idx()];
        if let Some(stamp) = rq.newidle_stamp.take() {
            let sample = now.saturating_sub(stamp) as i128;
            let avg = rq.avg_idle as i128;
            let new = avg + (sample - avg) / 8;
            rq.avg_idle = (new.max(0) as Nanos).min(2 * rq.max_idle_balance_cost);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::SimConfig;
    use crate::ids::CpuId;
    use crate::machine::domains::SD_SERIALIZE;
    use crate::machine::make_test_machine;
    use crate::observe::NullSink;
    use crate::program::{Op, Policy, TaskSpec, Workload};
    use crate::sched::balance::{LB_PASS_NS, LB_PER_CPU_NS};
    use crate::sim::Sim;

    /// 2 nodes x 1 LLC x 2 cores (CPUs 0,1 node 0; 2,3 node 1), one task
    /// asleep, LB_SERIALIZE=balancer-only (the default), NI_RANDOM off so
    /// every level is tried; CPU 0 about to go idle with a long average
    /// idle, and the flag taken by CPU 2 at t = 0 with its line busy past
    /// 20 µs (a queue of accesses in front of CPU 0's).
    fn set_up() -> (Sim<NullSink>, usize) {
        let w = Workload {
            tasks: vec![TaskSpec::looping(
                "t".to_string(),
                0,
                Policy::Normal,
                vec![Op::Sleep { ns: 1_000_000_000 }],
            )],
            ..Default::default()
        };
        let mut cfg = SimConfig::default();
        cfg.features.ni_random = false;
        let mut sim = Sim::new(make_test_machine(2, 1, 2, 1), &w, cfg, NullSink).unwrap();
        let doms = sim.sched.domains.domains(CpuId(0));
        let numa = doms
            .iter()
            .position(|d| d.flags.contains(SD_SERIALIZE))
            .expect("a NUMA level");
        assert_eq!(numa, doms.len() - 1);
        sim.sched.rqs[0].avg_idle = 1_000_000_000;
        sim.sched.rd_overloaded = true;
        let m = sim.machine.clone();
        let (ok, _) = sim.sched.balance_flag.try_acquire(&m, CpuId(2), 0, 0);
        assert!(ok);
        // Accesses by CPUs 3 and 2, all issued at 0, queue back to back
        // and keep the line busy past 20 µs.
        let mut c = 3;
        loop {
            let (ok, done) = sim.sched.balance_flag.try_acquire(&m, CpuId(c), 0, 0);
            assert!(!ok);
            if done >= 20_000 {
                break;
            }
            c = 5 - c;
        }
        (sim, numa)
    }

    /// The lower levels' passes find nothing to pull (no task is queued),
    /// each costing its fixed part and its CPUs' statistics; at the NUMA
    /// level CPU 0's cmpxchg is issued after them, waits for the line and
    /// finds the flag held: that pass reads no statistics and costs
    /// LB_PASS_NS, and the stall is its CPU's atomic cost.
    #[test]
    fn a_lost_race_costs_the_fixed_part_and_its_stall_counts_in_the_domain_cost() {
        let (mut sim, numa) = set_up();
        let lower: u64 = sim.sched.domains.domains(CpuId(0))[..numa]
            .iter()
            .map(|d| LB_PASS_NS + LB_PER_CPU_NS * d.span_weight as u64)
            .sum();
        let free_at = {
            let m = sim.machine.clone();
            // What the line's next access by CPU 0 would wait for: probe a
            // copy of the flag.
            let mut f = sim.sched.balance_flag.clone();
            let (_, c) = f.try_acquire(&m, CpuId(0), lower, 0);
            lower + c
        };
        let stall = free_at - lower;
        assert!(stall > 15_000, "the line is busy past 20 µs: {stall}");
        let attempts = sim.sched.balance_flag.attempts;
        assert!(!sim.sched_balance_newidle(CpuId(0)));
        assert_eq!(sim.sched.balance_flag.attempts, attempts + 1);
        // The lost race: LB_PASS_NS, not LB_PASS_NS + 4 x LB_PER_CPU_NS.
        assert_eq!(sim.acct.newidle_cost, lower + LB_PASS_NS);
        assert_eq!(sim.acct.newidle_atomic_cost, stall);
        // update_newidle_cost got t1 - t0 of the pass: its fixed part and
        // the stall (the kernel's sched_clock_cpu span includes the
        // cmpxchg).
        assert_eq!(
            sim.sched.sd_state[0][numa].max_newidle_lb_cost,
            LB_PASS_NS + stall
        );
    }
}
