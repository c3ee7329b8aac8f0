//! The wasted-CPU metric: time a CPU sat idle while another CPU it could
//! have helped (task affinity allowing) had runnable tasks waiting — the
//! "wasted cores" measure that load balancing exists to drive to zero.
//!
//! Sampled every [`WASTE_SAMPLE_NS`] of simulated time: at each sample,
//! every truly idle CPU that could run some waiting task (queued, not
//! running, not delayed) is charged the sample period, attributed to the
//! lowest level of its sched domains whose span holds such a task's CPU.
//! Sampling keeps the cost independent of the event rate; the figure is an
//! estimate with a resolution of one period per idle interval.

use crate::ids::{CpuId, TaskId};
use crate::machine::CpuMask;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::stats::WASTE_SAMPLE_NS;

impl<S: Sink> Sim<S> {
    /// One sample of the wasted-CPU metric.
    pub(crate) fn waste_sample(&mut self) {
        let n = self.machine.nr_cpus();
        if self.acct.waste.per_cpu.is_empty() {
            self.acct.waste.per_cpu = vec![0; n];
            let levels = self
                .sched
                .domains
                .per_cpu
                .iter()
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            self.acct.waste.per_level = vec![0; levels];
        }
        // Only a truly idle CPU can be charged: when none is, the sample
        // charges nothing and the walk over every queued task is skipped
        // (issue 17: on busy machines this walk was a fifth of the run).
        let idle =
            |rq: &crate::rq::Rq| rq.curr.is_none() && rq.nr_running == 0 && rq.ttwu_pending == 0;
        if !self.sched.rqs.iter().any(idle) {
            return;
        }
        // CPUs holding waiting tasks that may run anywhere, and the waiting
        // tasks with a restricted affinity.
        let mut waiting_any = CpuMask::new(n);
        let mut restricted: Vec<(CpuId, &CpuMask)> = Vec::new();
        // When every task may run anywhere, a queue needs only one waiting
        // task found, not all of them walked.
        let any_restricted = self
            .sched
            .tasks
            .iter()
            .any(|t| (t.nr_cpus_allowed as usize) < n);
        for rq in &self.sched.rqs {
            if rq.nr_running <= rq.curr.is_some() as u32 {
                continue;
            }
            let tasks = &self.sched.tasks;
            let ents = &self.sched.ents;
            if !any_restricted {
                let mut waiting = |t: TaskId| !ents[tasks[t.idx()].se.idx()].sched_delayed;
                if self.sched.any_queued_task(rq.cpu, &mut waiting) {
                    waiting_any.set(rq.cpu);
                }
                continue;
            }
            self.sched.for_each_queued_task(rq.cpu, &mut |t| {
                let task = &tasks[t.idx()];
                if ents[task.se.idx()].sched_delayed {
                    return;
                }
                if task.nr_cpus_allowed as usize == n {
                    waiting_any.set(rq.cpu);
                } else {
                    restricted.push((rq.cpu, &task.cpus_allowed));
                }
            });
        }
        if waiting_any.is_empty() && restricted.is_empty() {
            return;
        }
        let mut charges: Vec<(usize, Option<usize>)> = Vec::new();
        for c in 0..n {
            let cpu = CpuId(c as u32);
            if !idle(&self.sched.rqs[c]) {
                continue;
            }
            let with_restricted;
            let helpable = if restricted.is_empty() {
                &waiting_any
            } else {
                let mut h = waiting_any.clone();
                for (src, allowed) in &restricted {
                    if allowed.test(cpu) {
                        h.set(*src);
                    }
                }
                with_restricted = h;
                &with_restricted
            };
            if helpable.is_empty() {
                continue;
            }
            let level = self
                .sched
                .domains
                .domains(cpu)
                .iter()
                .position(|sd| sd.span.intersects(helpable));
            charges.push((c, level));
        }
        for (c, level) in charges {
            self.acct.waste.per_cpu[c] += WASTE_SAMPLE_NS;
            match level {
                Some(l) => self.acct.waste.per_level[l] += WASTE_SAMPLE_NS,
                None => self.acct.waste.beyond_domains += WASTE_SAMPLE_NS,
            }
        }
    }
}
