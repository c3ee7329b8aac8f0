//! Contended atomics: one cache line holding the global
//! `sched_balance_running` flag (kernel-model.md §7.4, §15(a) item 5).
//!
//! ```text
//!   CPU a ── cmpxchg ──►┌──────────── line ────────────┐
//!   CPU b ── cmpxchg ──►│ owner: last CPU that wrote it │──► each access waits for the
//!   CPU c ── cmpxchg ──►│ free_at: when it is free      │    previous one (FIFO), then
//!                       └───────────────────────────────┘    pays the transfer from the
//!                                                            owner's distance class
//! ```
//!
//! Every locked read-modify-write takes the line: it waits until the line is
//! free (accesses queue in arrival order), then pays the cache-line transfer
//! latency from the current owner (same core, same LLC, same node, other
//! node in the package, other package: `Machine::line_transfer_ns`). The
//! whole wait is CPU time of the attempting CPU — a locked instruction
//! stalls the core — which is how "x % of cycles in the cmpxchg" becomes a
//! figure of the model.
//!
//! The flag is held from a successful acquisition until the holder's
//! balance pass ends (`hold_until`); an attempt in between fails (and still
//! costs its line access).

use crate::ids::CpuId;
use crate::machine::Machine;
use crate::time::Nanos;

/// The `sched_balance_running` flag and its cache line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BalanceFlag {
    owner: Option<CpuId>,
    free_at: Nanos,
    held_by: Option<CpuId>,
    held_until: Nanos,
    /// cmpxchg attempts.
    pub attempts: u64,
    /// Successful acquisitions.
    pub acquired: u64,
    /// CPU time spent in accesses to the line (all CPUs).
    pub cost_ns: Nanos,
}

impl BalanceFlag {
    /// One locked access by `cpu` at `now`; returns the time it completes.
    fn access(&mut self, m: &Machine, cpu: CpuId, now: Nanos) -> Nanos {
        let start = now.max(self.free_at);
        let transfer = match self.owner {
            Some(o) => m.line_transfer_ns(o, cpu),
            None => m.costs.line_transfer_ns[0],
        };
        let done = start + transfer;
        self.free_at = done;
        self.owner = Some(cpu);
        self.cost_ns += done - now;
        done
    }

    /// `atomic_try_cmpxchg(&sched_balance_running, 0, 1)` by `cpu` at `now`:
    /// (acquired, CPU time it took).
    pub fn try_acquire(&mut self, m: &Machine, cpu: CpuId, now: Nanos) -> (bool, Nanos) {
        self.attempts += 1;
        let done = self.access(m, cpu, now);
        let free = self.held_by.is_none() || self.held_until <= done;
        if free {
            self.held_by = Some(cpu);
            self.held_until = Nanos::MAX;
            self.acquired += 1;
        }
        (free, done - now)
    }

    /// The holder will release the flag once its pass has run, at `until`
    /// (`atomic_set_release(..., 0)`); returns the CPU time of the store.
    pub fn release(&mut self, m: &Machine, cpu: CpuId, now: Nanos, until: Nanos) -> Nanos {
        debug_assert_eq!(self.held_by, Some(cpu));
        let done = self.access(m, cpu, now);
        self.held_until = until.max(done);
        done - now
    }

    /// Who holds the flag at `now`, if anyone.
    pub fn holder(&self, now: Nanos) -> Option<CpuId> {
        self.held_by.filter(|_| self.held_until > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::make_test_machine;

    #[test]
    fn accesses_queue_and_pay_the_transfer_distance() {
        // 2 nodes × 1 LLC × 2 cores: CPUs 0,1 node 0; 2,3 node 1.
        // Test machine transfer costs: same LLC 40 ns, other package 200 ns.
        let m = make_test_machine(2, 1, 2, 1);
        let mut f = BalanceFlag::default();
        let (ok, t0) = f.try_acquire(&m, CpuId(0), 1000);
        assert!(ok);
        assert_eq!(t0, m.costs.line_transfer_ns[0]);
        f.release(&m, CpuId(0), 1000 + t0, 5000);
        // CPU 1 (same LLC) at 1000 waits for both of CPU 0's accesses, pays
        // an LLC transfer and finds the flag held until 5000.
        let (ok, t1) = f.try_acquire(&m, CpuId(1), 1000);
        assert!(!ok);
        let same_llc = m.line_transfer_ns(CpuId(0), CpuId(1));
        assert_eq!(t1, 2 * m.costs.line_transfer_ns[0] + same_llc);
        // CPU 2 (other package) after the release: succeeds, pays cross-package.
        let (ok, t2) = f.try_acquire(&m, CpuId(2), 6000);
        assert!(ok);
        assert_eq!(t2, m.line_transfer_ns(CpuId(1), CpuId(2)));
        assert_eq!((f.attempts, f.acquired), (3, 2));
    }
}
