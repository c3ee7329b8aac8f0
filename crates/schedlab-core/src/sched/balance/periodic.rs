//! Periodic balancing: the SCHED_SOFTIRQ walk over a CPU's domains
//! (`sched_balance_trigger` → `sched_balance_domains`) and each domain's
//! interval (`get_sd_balance_interval`).

use crate::fair::balance::lb::CpuIdle;
use crate::fair::select::CpuView;
use crate::features::LbSerialize;
use crate::ids::CpuId;
use crate::machine::domains::SD_SERIALIZE;
use crate::observe::Sink;
use crate::sim::Sim;

impl<S: Sink> Sim<S> {
    /// `sched_balance_trigger` from the tick (of a busy CPU, or of an idle
    /// CPU whose tick was kept).
    pub(crate) fn sched_balance_trigger(&mut self, cpu: CpuId) {
        if self.jiffies() >= self.sched.rqs[cpu.idx()].next_balance {
            // rq->idle_balance = idle_cpu(cpu) at the tick.
            let idle = if self.available_idle_cpu(cpu) {
                CpuIdle::Idle
            } else {
                CpuIdle::NotIdle
            };
            self.sched_balance_domains(cpu, idle);
        }
    }

    /// Whether the softirq walk uses the busy intervals: a CPU that is not
    /// idle, and from 5.6 one running only SCHED_IDLE tasks counts as idle
    /// here (323af6deaf70 "sched/fair: Load balance aggressively for
    /// SCHED_IDLE CPUs"); on 5.4 it balances at the busy intervals.
    fn balance_busy(&self, cpu: CpuId, idle: CpuIdle) -> bool {
        idle != CpuIdle::Idle
            && !(crate::kernels::at_least(self.cfg.kernel, 5, 6) && self.sched_idle_cpu(cpu))
    }

    /// `sched_balance_domains`: the softirq walk, bottom-up.
    pub(crate) fn sched_balance_domains(&mut self, cpu: CpuId, mut idle: CpuIdle) {
        let mut busy = self.balance_busy(cpu, idle);
        let mut cont = true;
        let jiffies = self.jiffies();
        let mut next_balance = jiffies + 60 * self.cfg.hz as u64;
        let ndom = self.sched.domains.domains(cpu).len();
        for sdi in 0..ndom {
            self.update_newidle_cost(cpu, sdi, 0);
            if !cont {
                break;
            }
            let mut interval = self.sd_interval(cpu, sdi, busy);
            let serialize = self.sched.domains.domains(cpu)[sdi]
                .flags
                .contains(SD_SERIALIZE);
            let due = jiffies >= self.sched.sd_state[cpu.idx()][sdi].last_balance + interval;
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
                    next_balance.min(self.sched.sd_state[cpu.idx()][sdi].last_balance + interval);
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
                    busy = self.balance_busy(cpu, idle);
                }
                self.sched.sd_state[cpu.idx()][sdi].last_balance = jiffies;
                interval = self.sd_interval(cpu, sdi, busy);
            }
            if take_here {
                self.balance_flag_release(cpu);
            }
            next_balance =
                next_balance.min(self.sched.sd_state[cpu.idx()][sdi].last_balance + interval);
        }
        self.sched.rqs[cpu.idx()].next_balance = next_balance;
    }

    /// `get_sd_balance_interval`.
    pub(crate) fn sd_interval(&self, cpu: CpuId, sdi: usize, busy: bool) -> u64 {
        let sd = &self.sched.domains.domains(cpu)[sdi];
        self.sched.domains.balance_interval_jiffies(
            sd,
            self.sched.sd_state[cpu.idx()][sdi].balance_interval_ms,
            busy,
        )
    }
}
