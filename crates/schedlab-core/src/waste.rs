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
        if !self.sched.rqs.iter().any(crate::rq::Rq::is_idle) {
            return;
        }
        // CPUs holding waiting tasks that may run anywhere, and the waiting
        // tasks with a restricted affinity.
        let mut waiting_any = CpuMask::new(n);
        let mut restricted: Vec<(CpuId, &CpuMask)> = Vec::new();
        let tasks = &self.sched.tasks;
        let ents = &self.sched.ents;
        for rq in &self.sched.rqs {
            if rq.nr_running <= rq.curr.is_some() as u32 {
                continue;
            }
            // The walk (`cfs_tasks` from the tail: the queued, not running
            // tasks) stops at the first waiting task that may run anywhere:
            // it puts this CPU in `waiting_any`, and a restricted task
            // further on would only add this same CPU to a helper's set
            // (below), so neither the rest nor the order of the walk can
            // change a charge.
            let found_any = self.sched.cfs_tasks_from_tail(rq.cpu).any(|t: TaskId| {
                let task = &tasks[t.idx()];
                if ents[task.se.idx()].sched_delayed {
                    return false;
                }
                if task.nr_cpus_allowed as usize == n {
                    return true;
                }
                restricted.push((rq.cpu, &task.cpus_allowed));
                false
            });
            if found_any {
                waiting_any.set(rq.cpu);
            }
        }
        if waiting_any.is_empty() && restricted.is_empty() {
            return;
        }
        // The lowest level of an idle CPU's domains whose span holds a
        // helpable CPU. Only the words of the helpable set with a CPU in
        // them are compared, and, while the set is the same for every idle
        // CPU (no restricted task waits), a span shared with the previous
        // idle CPU at that level (the domains' spans are shared `Arc`s)
        // reuses its answer: the cost per sample is sized by the waiting
        // CPUs and the distinct spans, not by idle CPUs x levels x words.
        let any_words = waiting_any.word_indices();
        let levels = self.acct.waste.per_level.len();
        let mut memo: Vec<Option<(*const CpuMask, bool)>> = vec![None; levels];
        let mut charges: Vec<(usize, Option<usize>)> = Vec::new();
        for c in 0..n {
            let cpu = CpuId(c as u32);
            if !self.sched.rqs[c].is_idle() {
                continue;
            }
            let doms = self.sched.domains.domains(cpu);
            let level = if restricted.is_empty() {
                doms.iter().enumerate().position(|(l, sd)| {
                    let key = std::sync::Arc::as_ptr(&sd.span);
                    match memo[l] {
                        Some((k, hit)) if k == key => hit,
                        _ => {
                            let hit = sd.span.intersects_in(&waiting_any, &any_words);
                            memo[l] = Some((key, hit));
                            hit
                        }
                    }
                })
            } else {
                let mut h = waiting_any.clone();
                for (src, allowed) in &restricted {
                    if allowed.test(cpu) {
                        h.set(*src);
                    }
                }
                if h.is_empty() {
                    continue;
                }
                let words = h.word_indices();
                doms.iter().position(|sd| sd.span.intersects_in(&h, &words))
            };
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
