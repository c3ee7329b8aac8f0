//! STEAL's simulator side: the per-LLC overload bitmap kept in step with
//! each CPU's runnable count (`sync_overload`) and `try_steal` after a
//! newidle pass that pulled nothing. The policy (who may be stolen, the
//! search order) is pure, in [`crate::fair::balance::steal`].

use crate::fair::balance::steal;
use crate::ids::CpuId;
use crate::observe::Sink;
use crate::sim::Sim;
use crate::time::Nanos;

/// CPU time of one `try_steal` (the patch quotes 1–2 µs for a steal; half
/// for the search, half for the move).
pub const STEAL_ATTEMPT_NS: Nanos = 1_000;

impl<S: Sink> Sim<S> {
    /// Keeps the LLC's overload bitmap (STEAL) in step with this CPU's
    /// runnable count; called after every change of `h_nr_runnable`.
    pub(crate) fn sync_overload(&mut self, cpu: CpuId) {
        let Some(i) = self.sched.domains.shortcuts(cpu).llc_shared else {
            return;
        };
        let nr = self.sched.cfs[self.sched.rqs[cpu.idx()].cfs.idx()].h_nr_runnable;
        let m = &mut self.sched.llc_state[i].overload;
        if steal::overloaded(nr) {
            m.set(cpu);
        } else {
            m.clear(cpu);
        }
    }

    /// `try_steal` after a newidle pass that pulled nothing (feature STEAL).
    /// Returns true when a task was stolen onto `dst`.
    pub(crate) fn try_steal(&mut self, dst: CpuId) -> bool {
        if !self.cfg.features.steal || !steal::steal_allowed(self.sched.rqs[dst.idx()].avg_idle) {
            return false;
        }
        let Some(i) = self.sched.domains.shortcuts(dst).llc_shared else {
            return false;
        };
        if self.sched.llc_state[i].overload.is_empty() {
            return false;
        }
        self.acct.steal_cost += STEAL_ATTEMPT_NS;
        let order = steal::steal_order(&self.machine, &self.sched.llc_state[i].overload, dst);
        for src in order {
            let rq = &self.sched.rqs[src.idx()];
            let q = rq.cfs.idx();
            if !steal::overloaded(self.sched.cfs[q].h_nr_runnable) {
                continue;
            }
            // cfs_tasks from the tail, up to the first task it may take.
            let cands = self.sched.cfs_tasks_from_tail(src).map(|t| {
                let task = &self.sched.tasks[t.idx()];
                let se = &self.sched.ents[task.se.idx()];
                let g = &self.sched.groups[task.group.idx()];
                // Never into a throttled hierarchy.
                let throttled = self.sched.cfs[g.cfs_rq[dst.idx()].idx()].bw.throttle_count > 0;
                steal::StealCandidate {
                    task: t,
                    allowed: task.allowed_on(dst) && !throttled,
                    running: rq.curr == Some(t),
                    pinned_or_delayed: se.sched_delayed || task.internal,
                }
            });
            match steal::pick_steal_task(cands) {
                Some(p) => {
                    self.detach_task(p, src, dst);
                    self.attach_task(p, dst);
                    self.acct.cpu_stats[dst.idx()].steal += 1;
                    self.acct.steal_cost += STEAL_ATTEMPT_NS;
                    self.sched.rqs[dst.idx()].newidle_stamp = None;
                    return true;
                }
                None => self.acct.cpu_stats[dst.idx()].steal_fail += 1,
            }
        }
        false
    }
}
