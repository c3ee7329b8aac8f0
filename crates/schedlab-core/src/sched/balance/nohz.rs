//! NOHZ idle balancing: a busy CPU's tick kicks an idle CPU
//! (`nohz_balancer_kick`), which balances every due idle CPU on their
//! behalf (`nohz_idle_balance`).

use crate::fair::balance::lb::CpuIdle;
use crate::fair::select::CpuView;
use crate::ids::CpuId;
use crate::machine::CpuMask;
use crate::observe::Sink;
use crate::sim::Sim;

impl<S: Sink> Sim<S> {
    /// `nohz_balancer_kick` from the tick of a busy CPU: if idle CPUs are
    /// due for balancing and this CPU or its LLC has more than enough to
    /// do, kick the first idle CPU to balance on behalf of all idle CPUs.
    pub(crate) fn nohz_balancer_kick(&mut self, cpu: CpuId) {
        if self.sched.nohz_kick_pending || self.jiffies() < self.sched.nohz_next_balance {
            return;
        }
        // The first idle CPU with its tick stopped after this one
        // (sched/lb_snapshot.rs keeps the mask).
        let Some(ilb) = self.nohz_find_idle(cpu) else {
            return;
        };
        let busy_llc = self
            .machine
            .llc_span(cpu)
            .iter()
            .filter(|&c| !self.sched.rqs[c.idx()].tick_stopped)
            .count();
        if self.sched.rqs[cpu.idx()].nr_running < 2 && busy_llc <= 1 {
            return;
        }
        self.sched.nohz_next_balance = self.jiffies() + 1;
        self.sched.nohz_kick_pending = true;
        let at = self.now + self.machine.costs.ipi_latency_ns;
        let at = self.irq_time(ilb, at);
        self.queue
            .push(at, crate::event::Event::NohzIdleBalance { cpu: ilb });
    }

    /// `_nohz_idle_balance` on the kicked CPU: balance every idle CPU that
    /// is due, on its behalf, itself last.
    pub(crate) fn nohz_idle_balance(&mut self, ilb: CpuId) {
        self.sched.nohz_kick_pending = false;
        let n = self.machine.nr_cpus();
        let start = CpuId((ilb.0 + 1) % n as u32);
        let order: Vec<CpuId> = CpuMask::full(n).iter_wrap(start).collect();
        self.sched.ilb_cpu = Some(ilb);
        let mut next = u64::MAX;
        for c in order {
            if !self.available_idle_cpu(ilb) {
                break; // the balancer got work
            }
            if !(self.sched.rqs[c.idx()].tick_stopped && self.available_idle_cpu(c)) {
                continue;
            }
            if self.jiffies() >= self.sched.rqs[c.idx()].next_balance {
                self.sched_balance_domains(c, CpuIdle::Idle);
            }
            next = next.min(self.sched.rqs[c.idx()].next_balance);
        }
        self.sched.ilb_cpu = None;
        if next != u64::MAX {
            self.sched.nohz_next_balance = next;
        }
        self.reidle(ilb);
    }
}
