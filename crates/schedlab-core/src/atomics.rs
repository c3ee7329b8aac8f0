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
//! Every access takes the line: it waits until the line is free (accesses
//! queue in the order they are made), then pays the cache-line transfer
//! latency from the current owner (same core, same LLC, same node, other
//! node in the package, other package: `Machine::line_transfer_ns`).
//!
//! * **The cmpxchg** (`atomic_cmpxchg_acquire`, one `lock cmpxchg` on x86,
//!   no retry loop: a CPU that finds the flag set gives up) stalls its CPU
//!   until it completes: the wait and the transfer are CPU time of the
//!   attempting CPU, which is how "x % of cycles in the cmpxchg" becomes a
//!   figure of the model. The caller says when it is issued (`issue`): a
//!   CPU's second access in one walk comes after whatever it was stalled
//!   for since its first (that cmpxchg, the pass it ran), so one stall is
//!   never charged twice.
//! * **The release** (`atomic_set_release`) is a plain store on x86
//!   (`smp_store_release` is a compiler barrier and `WRITE_ONCE`,
//!   arch/x86/include/asm/barrier.h): it retires into the store buffer and
//!   does not stall its CPU, so it costs that CPU nothing here. It still
//!   takes the line, in its place in the queue: a cmpxchg issued before the
//!   store (by a CPU that entered its walk at the same tick) is served
//!   first and finds the flag still set. The flag is free once the store
//!   has been served.
//!
//! The flag is held from a successful acquisition until its release store
//! is served; an attempt in between fails (and still costs its line
//! access).
//!
//! Deviation: accesses are served in the order the simulator makes them,
//! except that a pending release store waits for every cmpxchg issued
//! before it, and that an access issued before the line's last access but
//! made after it (a CPU whose walk is processed later in the same instant,
//! or a newidle pass that started earlier) is served in the idle stretch
//! in front of that access if it fits there (it then never takes the
//! flag); otherwise it queues at the end. A CPU's second access in one walk
//! is made right after its first, before the rest of a storm of walks made
//! at the same instant: it does not wait behind them as it would on the
//! machine, which puts the cost of a two-level walk (gnr-2s-snc3) under
//! that of a queue served in time order (about 1.5 x for a storm of N
//! walks: N + k transfers for the k-th CPU there, about 2k here). Simultaneous walks (aligned
//! ticks) are made in CPU order, so the line moves mostly between
//! neighbours (same module, same LLC) and crosses the socket about once
//! per storm; which requester a real home agent serves next is not
//! modelled. Nor is the cost of a line that other CPUs also read (false
//! sharing with read-mostly data adds invalidations to every transfer).

use crate::ids::CpuId;
use crate::machine::Machine;
use crate::time::Nanos;
use std::collections::VecDeque;

/// The `sched_balance_running` flag and its cache line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BalanceFlag {
    owner: Option<CpuId>,
    free_at: Nanos,
    held_by: Option<CpuId>,
    held_until: Nanos,
    /// The holder's release store, made but not yet served: (CPU, issued).
    pending_release: Option<(CpuId, Nanos)>,
    /// Idle stretches of the line in front of accesses made at a later
    /// time than the line was free: (from, until, owner at `from`), oldest
    /// first; those over before the current event time are dropped.
    /// They are disjoint and in time order (each starts at the line's
    /// `free_at` when it is opened, and `free_at` only grows; a fitted
    /// access moves a gap's start, never its end), so their ends increase
    /// strictly: the expired ones are a prefix, and an access looks only
    /// at the gaps that end at or after its issue (binary search), which
    /// keeps a storm of N walks at O(N log N), not O(N^2), with the same
    /// answers as the scan from the oldest (`tests::gaps_match_a_scan`).
    gaps: VecDeque<(Nanos, Nanos, Option<CpuId>)>,
    /// cmpxchg attempts.
    pub attempts: u64,
    /// Successful acquisitions.
    pub acquired: u64,
    /// CPU time spent in accesses to the line (all CPUs).
    pub cost_ns: Nanos,
}

/// A cache-line transfer from `owner` (none yet: the line comes from
/// memory, charged as the same-CPU figure, as before) to `cpu`.
fn transfer(m: &Machine, owner: Option<CpuId>, cpu: CpuId) -> Nanos {
    match owner {
        Some(o) => m.line_transfer_ns(o, cpu),
        None => m.costs.line_transfer_ns[0],
    }
}

impl BalanceFlag {
    /// Serves the pending release store if it was issued no later than
    /// `issue` (program order: a CPU's own store goes before its next
    /// locked access; other CPUs' accesses go by time).
    fn settle(&mut self, m: &Machine, issue: Nanos) {
        if let Some((cpu, at)) = self.pending_release {
            if at <= issue {
                if at > self.free_at {
                    self.gaps.push_back((self.free_at, at, self.owner));
                }
                let done = at.max(self.free_at) + transfer(m, self.owner, cpu);
                self.free_at = done;
                self.owner = Some(cpu);
                self.held_until = done;
                self.pending_release = None;
            }
        }
    }

    /// One locked access by `cpu` issued at `issue`: (the time it
    /// completes, whether it was served in the gap before a later-issued
    /// access made earlier).
    fn access(&mut self, m: &Machine, cpu: CpuId, issue: Nanos, now: Nanos) -> (Nanos, bool) {
        self.settle(m, issue);
        // No access is issued before the event being processed: the gaps
        // over by `now` (a prefix, ends increasing) are dropped.
        while self.gaps.front().is_some_and(|g| g.1 <= now) {
            self.gaps.pop_front();
        }
        // An access issued before later-issued ones already made fits in
        // the first idle stretch in front of them where it can. A gap that
        // ends before `issue` cannot hold it (it would complete at `issue`
        // plus a transfer at the earliest), so the scan starts at the first
        // gap ending at or after `issue`.
        let first = self.gaps.partition_point(|g| g.1 < issue);
        for g in self.gaps.range_mut(first..) {
            let done = issue.max(g.0) + transfer(m, g.2, cpu);
            if done <= g.1 {
                *g = (done, g.1, Some(cpu));
                return (done, true);
            }
        }
        if issue > self.free_at {
            self.gaps.push_back((self.free_at, issue, self.owner));
        }
        let done = issue.max(self.free_at) + transfer(m, self.owner, cpu);
        self.free_at = done;
        self.owner = Some(cpu);
        (done, false)
    }

    /// `atomic_cmpxchg_acquire(&sched_balance_running, 0, 1)` by `cpu`,
    /// issued at `issue`, made while the event at `now` (<= `issue`) is
    /// processed: (acquired, CPU time it took).
    pub fn try_acquire(
        &mut self,
        m: &Machine,
        cpu: CpuId,
        issue: Nanos,
        now: Nanos,
    ) -> (bool, Nanos) {
        debug_assert!(now <= issue);
        self.attempts += 1;
        let (done, in_gap) = self.access(m, cpu, issue, now);
        // In the gap it comes before an access already decided: it finds
        // the flag as that one did, or set by it, so it never takes it.
        let free = !in_gap
            && self.pending_release.is_none()
            && (self.held_by.is_none() || self.held_until <= done);
        if free {
            self.held_by = Some(cpu);
            self.held_until = Nanos::MAX;
            self.acquired += 1;
        }
        let cost = done - issue;
        self.cost_ns += cost;
        (free, cost)
    }

    /// `atomic_set_release(&sched_balance_running, 0)` by the holder,
    /// issued at `issue` (after its pass): a buffered store, served in the
    /// line's queue later; no CPU time.
    pub fn release(&mut self, cpu: CpuId, issue: Nanos) {
        debug_assert_eq!(self.held_by, Some(cpu));
        debug_assert!(self.pending_release.is_none());
        self.pending_release = Some((cpu, issue));
    }

    /// Who holds the flag at `now`, if anyone (a pending release store
    /// counts as served at the earliest time the line could take it).
    pub fn holder(&self, m: &Machine, now: Nanos) -> Option<CpuId> {
        let until = match self.pending_release {
            Some((cpu, at)) => at.max(self.free_at) + transfer(m, self.owner, cpu),
            None => self.held_until,
        };
        self.held_by.filter(|_| until > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::make_test_machine;

    #[test]
    fn accesses_queue_and_pay_the_transfer_distance() {
        // 2 nodes × 1 LLC × 2 cores: CPUs 0,1 node 0; 2,3 node 1.
        let m = make_test_machine(2, 1, 2, 1);
        let l0 = m.costs.line_transfer_ns[0];
        let same_llc = m.line_transfer_ns(CpuId(0), CpuId(1));
        let other_pkg = m.line_transfer_ns(CpuId(1), CpuId(2));
        assert!(same_llc < other_pkg);
        let mut f = BalanceFlag::default();
        // Tick at t = 1000: CPU 0 walks first and takes the flag; the line
        // comes from memory (the same-CPU figure).
        let (ok, t0) = f.try_acquire(&m, CpuId(0), 1000, 1000);
        assert!(ok);
        assert_eq!(t0, l0);
        // Its pass is not due; it releases once its cmpxchg is done: a
        // buffered store, no CPU time, not served yet.
        f.release(CpuId(0), 1000 + t0);
        assert_eq!(f.holder(&m, 1000 + t0), Some(CpuId(0)));
        // CPUs 1 and 2 entered their walks at the same tick (1000), before
        // the store was made: their cmpxchgs are served first, each after
        // the one before it, and find the flag set.
        let (ok, t1) = f.try_acquire(&m, CpuId(1), 1000, 1000);
        assert!(!ok);
        // It waits for CPU 0's cmpxchg:
        assert_eq!(t1, l0 + same_llc);
        let (ok, t2) = f.try_acquire(&m, CpuId(2), 1000, 1000);
        assert!(!ok);
        // ... and for CPU 1's:
        assert_eq!(t2, l0 + same_llc + other_pkg);
        // CPU 3 at 5000: the store went first (served at 1000 + l0 +
        // same_llc + other_pkg, the line coming back from CPU 2 to CPU 0
        // across the packages), so the flag is free; CPU 3 pays the
        // transfer from CPU 0 (other package) and nothing else.
        let (ok, t3) = f.try_acquire(&m, CpuId(3), 5000, 5000);
        assert!(ok);
        assert_eq!(t3, m.line_transfer_ns(CpuId(0), CpuId(3)));
        assert_eq!((f.attempts, f.acquired), (4, 2));
        assert_eq!(f.cost_ns, t0 + t1 + t2 + t3);
        assert_eq!(f.holder(&m, 5000 + t3), Some(CpuId(3)));
    }

    #[test]
    fn an_earlier_access_made_later_uses_the_gap_before_a_later_one() {
        // All made while the event at 0 is processed. CPU 0 (a newidle
        // pass that ran 10 µs of lower levels first) issues its cmpxchg at
        // 10 000 and takes the flag; CPU 2, made after it but issued at
        // 1 000, is served in the idle line before it instead of waiting
        // for it, and does not take the flag.
        let m = make_test_machine(2, 1, 2, 1);
        let l0 = m.costs.line_transfer_ns[0];
        let mut f = BalanceFlag::default();
        let (ok, t0) = f.try_acquire(&m, CpuId(0), 10_000, 0);
        assert!(ok);
        assert_eq!(t0, l0);
        let (ok, t2) = f.try_acquire(&m, CpuId(2), 1_000, 0);
        assert!(!ok);
        // The line came from memory, not from CPU 0:
        assert_eq!(t2, l0);
        // One that does not fit (issued at 9 999) queues behind CPU 0's.
        let (ok, t3) = f.try_acquire(&m, CpuId(3), 9_999, 0);
        assert!(!ok);
        assert_eq!(t3, 1 + l0 + m.line_transfer_ns(CpuId(0), CpuId(3)));
    }

    #[test]
    fn a_second_level_follows_the_cpus_own_release() {
        // Two SD_SERIALIZE levels in one walk: CPU 0 takes the flag for
        // the first, releases it after a 10 µs pass, and takes it again for
        // the second right after its own store (program order), paying a
        // same-CPU transfer only: the walk is charged l0 + l0, not its
        // first wait again.
        let m = make_test_machine(2, 1, 2, 1);
        let l0 = m.costs.line_transfer_ns[0];
        let mut f = BalanceFlag::default();
        let (ok, t0) = f.try_acquire(&m, CpuId(0), 0, 0);
        assert!(ok);
        let rel = t0 + 10_000;
        f.release(CpuId(0), rel);
        // All made while the event at 0 is processed. Another CPU tries
        // during the pass (issued at 5 000): the flag is held.
        let (ok, _) = f.try_acquire(&m, CpuId(2), 5_000, 0);
        assert!(!ok);
        // CPU 0's second level, issued right after its store: the store is
        // served first (the line comes back from CPU 2), then the cmpxchg
        // finds the line at home and the flag free.
        let (ok, t1) = f.try_acquire(&m, CpuId(0), rel, 0);
        assert!(ok);
        assert_eq!(t1, m.line_transfer_ns(CpuId(2), CpuId(0)) + l0);
        assert_eq!(f.holder(&m, rel + t1), Some(CpuId(0)));
        // CPU 3 entered its walk at 6 000, during CPU 0's pass, but is
        // made after CPU 0's second access: it is served in the idle line
        // before CPU 0's store, not behind CPU 0's second cmpxchg.
        let (ok, t3) = f.try_acquire(&m, CpuId(3), 6_000, 0);
        assert!(!ok);
        assert_eq!(t3, m.line_transfer_ns(CpuId(2), CpuId(3)));
    }

    /// The access as it was before the gaps were searched (every gap
    /// looked at, oldest first; `retain` of the unexpired ones): the
    /// reference the fast search must equal.
    fn access_scan(
        f: &mut BalanceFlag,
        m: &Machine,
        cpu: CpuId,
        issue: Nanos,
        now: Nanos,
    ) -> (Nanos, bool) {
        f.settle(m, issue);
        f.gaps.retain(|g| g.1 > now);
        for g in f.gaps.iter_mut() {
            let done = issue.max(g.0) + transfer(m, g.2, cpu);
            if done <= g.1 {
                *g = (done, g.1, Some(cpu));
                return (done, true);
            }
        }
        if issue > f.free_at {
            f.gaps.push_back((f.free_at, issue, f.owner));
        }
        let done = issue.max(f.free_at) + transfer(m, f.owner, cpu);
        f.free_at = done;
        f.owner = Some(cpu);
        (done, false)
    }

    proptest::proptest! {
        /// Random storms of accesses (issue times out of order within an
        /// event, releases by the holder, events advancing): the search
        /// from the first gap ending at or after the issue gives the same
        /// answers and leaves the same state as the scan of every gap.
        #[test]
        fn gaps_match_a_scan(
            ops in proptest::collection::vec((0u32..4, 0u64..3, 0u64..20_000, 0u8..4), 1..200)
        ) {
            let m = make_test_machine(2, 1, 2, 1);
            let (mut fast, mut slow) = (BalanceFlag::default(), BalanceFlag::default());
            let mut now: Nanos = 0;
            for (cpu, step, delay, kind) in ops {
                now += step * 7_000;
                let cpu = CpuId(cpu);
                let issue = now + delay;
                if kind == 0 && fast.held_by == Some(cpu) && fast.pending_release.is_none() {
                    fast.release(cpu, issue);
                    slow.release(cpu, issue);
                } else {
                    let a = fast.access(&m, cpu, issue, now);
                    let b = access_scan(&mut slow, &m, cpu, issue, now);
                    proptest::prop_assert_eq!(a, b);
                    let (ok, _) = fast.try_acquire(&m, cpu, issue + 1, now);
                    slow.settle(&m, issue + 1);
                    let (done, gap) = access_scan(&mut slow, &m, cpu, issue + 1, now);
                    slow.attempts += 1;
                    let free = !gap
                        && slow.pending_release.is_none()
                        && (slow.held_by.is_none() || slow.held_until <= done);
                    if free {
                        slow.held_by = Some(cpu);
                        slow.held_until = Nanos::MAX;
                        slow.acquired += 1;
                    }
                    slow.cost_ns += done - (issue + 1);
                    proptest::prop_assert_eq!(ok, free);
                }
                proptest::prop_assert_eq!(&fast, &slow);
                proptest::prop_assert!(fast.gaps.iter().zip(fast.gaps.iter().skip(1)).all(|(a, b)| a.1 < b.1));
            }
        }
    }
}
