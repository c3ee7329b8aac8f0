//! Host noise: what a real machine does besides the workload, seeded.
//!
//! A clean model gives a lone periodic thread the same wake-up latency
//! every period; a real host does not. Three sources, each measured on the
//! host (`schedlab record` writes them to `noise.json`, see
//! `crates/schedlab-host/src/noise.rs`; the `vm-2cpu` preset carries a
//! measurement as its default):
//!
//! | source | what happens in the model | parameters |
//! |---|---|---|
//! | interrupts, softirqs, kernel threads | per CPU, bursts arrive as a Poisson process; a burst makes the CPU unavailable for its length: the running task stops for it (its clock does not advance: `exec_start` moves past the burst, as IRQ time accounting does), a task set running there starts after it | `irq_interval_ns` (mean gap between bursts on one CPU), `irq_len_q_ns` (quantiles of the length) |
//! | host preemption of a vCPU (steal) | the same, from its own Poisson process and length table (paravirt steal time is not charged to the task either) | `steal_interval_ns`, `steal_len_q_ns` |
//! | timer expiry | a CPU's hrtimer interrupt runs later than the model's tick/slack rule says: a draw from the measured lateness of a zero-slack timer (interrupt delivery, in a VM through the host, idle exit, wake-up and switch), less the wake-up and switch costs the model charges itself (`MachineCosts::wakeup_ns + context_switch_ns`); every timer of that CPU due by then expires in the same interrupt | `timer_late_q_ns` |
//!
//! A length table holds the 0, 5, ..., 100 % quantiles of the measured
//! distribution; a draw picks a uniform point in [0, 1] and interpolates
//! linearly between neighbouring quantiles (so draws stay within the
//! measured range). Gaps between bursts are exponential (memoryless
//! arrivals) with the measured mean. Randomness comes from the `noise`
//! stream of the run's seed ([`crate::rng::stream`]), so a seed gives the
//! same noise every time and other mechanisms see the same numbers with or
//! without noise.
//!
//! The parameters, the per-run state and the draws are plain data in
//! [`crate::noise`]; this file is the mechanism.
//!
//! Burst time is scheduler-visible overhead (`sched_overhead_ns` of the
//! CPU), never workload time. Which parameters a run uses:
//! [`crate::config::NoiseSetting`] (`--noise`): the machine's own
//! ([`crate::machine::Machine::noise`], only `vm-2cpu` has one), off, or
//! given (a recording's `noise.json`).
//!
//! Not modelled: interrupt affinity (every CPU gets the same rate),
//! bursts that wake an idle CPU from a deep state (they only occupy it),
//! and correlation between CPUs.

use crate::event::Event;
use crate::ids::CpuId;
use crate::noise::{draw_exp, draw_quantile};
use crate::observe::Sink;
use crate::sim::Sim;
use crate::time::Nanos;
use rand::Rng;

impl<S: Sink> Sim<S> {
    /// Arms the first burst of each source on every CPU (set-up).
    pub(crate) fn noise_init(&mut self) {
        let Some(n) = self.noise.as_mut() else {
            return;
        };
        let mut first = Vec::new();
        for c in 0..self.sched.rqs.len() {
            for steal in [false, true] {
                let mean = if steal {
                    n.params.steal_interval_ns
                } else {
                    n.params.irq_interval_ns
                };
                if mean > 0 {
                    first.push((self.now + draw_exp(&mut n.rng, mean), c, steal));
                }
            }
        }
        for (at, c, steal) in first {
            self.queue.push(
                at,
                Event::Noise {
                    cpu: CpuId(c as u32),
                    steal,
                },
            );
        }
    }

    /// A burst on `cpu`: the CPU is unavailable for its length; the next
    /// burst of that source is armed.
    pub(crate) fn noise_burst(&mut self, cpu: CpuId, steal: bool) {
        let Some(n) = self.noise.as_mut() else {
            return;
        };
        let (mean, q) = if steal {
            (n.params.steal_interval_ns, &n.params.steal_len_q_ns)
        } else {
            (n.params.irq_interval_ns, &n.params.irq_len_q_ns)
        };
        let u: f64 = n.rng.random();
        let len = draw_quantile(q, u);
        let next = self.now + draw_exp(&mut n.rng, mean);
        self.queue.push(next, Event::Noise { cpu, steal });
        self.stall(cpu, len, true);
    }

    /// When the hrtimer interrupt that expires a timer due at `due` on
    /// `cpu` runs (`due` itself without noise). Lateness belongs to the
    /// interrupt, not to one timer: the handler expires every timer due by
    /// the time it runs (`__hrtimer_run_queues`), so a timer due within
    /// the window of the CPU's latest interrupt (due ≤ t ≤ runs) expires in
    /// it; otherwise a new interrupt runs late by a draw of the measured
    /// lateness less what the model charges itself on the way (the wake-up
    /// and the switch).
    pub(crate) fn timer_interrupt_at(&mut self, cpu: CpuId, due: Nanos) -> Nanos {
        let own = self.machine.costs.wakeup_ns + self.machine.costs.context_switch_ns;
        let n_cpus = self.sched.rqs.len();
        let Some(n) = self.noise.as_mut() else {
            return due;
        };
        if n.params.timer_late_q_ns.is_empty() {
            return due;
        }
        if n.irq.len() < n_cpus {
            n.irq.resize(n_cpus, (0, 0));
        }
        let (d0, r0) = n.irq[cpu.idx()];
        if d0 <= due && due <= r0 && r0 > 0 {
            return r0;
        }
        let u: f64 = n.rng.random();
        let at = due + draw_quantile(&n.params.timer_late_q_ns, u).saturating_sub(own);
        n.irq[cpu.idx()] = (due, at);
        at
    }
}
