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

pub(crate) mod spans;
pub(crate) use spans::WasteSpans;

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
            self.acct.waste_spans = WasteSpans::build(&self.sched.domains, levels);
        }
        // Only a truly idle CPU can be charged: when none is, the sample
        // charges nothing and the walk over every queued task is skipped
        // (on busy machines that walk is a fifth of the run).
        // The runqueues are walked at each sample (a few instructions per
        // CPU, against ~8 000 events per sample at 4096 CPUs): keeping
        // idle/waiting sets up to date at every refresh cost more
        // instructions than these walks on every bench case (scale13).
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
        // CPU (no restricted task waits), each distinct span is tested once
        // per sample ([`WasteSpans`]): the cost per sample is sized by the
        // waiting CPUs, the distinct spans and the idle CPUs' rows, not by
        // idle CPUs x levels x words.
        let any_words = waiting_any.word_indices();
        let mut charges: Vec<(usize, Option<usize>)> = Vec::new();
        if restricted.is_empty() {
            let ws = &mut self.acct.waste_spans;
            ws.new_sample();
            for (c, rq) in self.sched.rqs.iter().enumerate() {
                if rq.is_idle() {
                    charges.push((c, ws.level(c, &waiting_any, &any_words)));
                }
            }
        } else {
            for (c, rq) in self.sched.rqs.iter().enumerate() {
                if !rq.is_idle() {
                    continue;
                }
                let cpu = CpuId(c as u32);
                let doms = self.sched.domains.domains(cpu);
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
                let level = doms.iter().position(|sd| sd.span.intersects_in(&h, &words));
                charges.push((c, level));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::domains::SchedDomains;
    use crate::machine::preset;

    /// One step of an xorshift64 generator.
    fn xorshift(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// For random helpable sets (a few CPUs, a few whole words, empty),
    /// the table's level of every CPU equals the walk of its domains
    /// (the first whose span intersects the set), sample after sample,
    /// on machines with SMT, clusters, SNC and NUMA levels.
    #[test]
    fn the_span_table_finds_the_level_the_domain_walk_finds() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for name in ["a7-octa", "icx-2s-80c-ht", "gnr-2s-snc3", "big-8s-4096"] {
            let m = preset(name).unwrap();
            let n = m.nr_cpus();
            let d = SchedDomains::build(&m, 250);
            let levels = d.per_cpu.iter().map(Vec::len).max().unwrap_or(0);
            let mut ws = WasteSpans::build(&d, levels);
            for sample in 0..12 {
                let mut set = CpuMask::new(n);
                let k = [0usize, 1, 3, 40][sample % 4];
                for _ in 0..k {
                    set.set(CpuId((xorshift(&mut x) % n as u64) as u32));
                }
                let words = set.word_indices();
                ws.new_sample();
                for c in 0..n {
                    let walk = d.per_cpu[c].iter().position(|sd| sd.span.intersects(&set));
                    assert_eq!(
                        ws.level(c, &set, &words),
                        walk,
                        "{name} CPU {c}, set {}",
                        set.to_list()
                    );
                }
            }
        }
    }
}
