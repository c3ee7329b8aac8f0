//! Wakeup and fork placement (`select_task_rq_fair`), foundation version.
//!
//! Kernel reference: fair.c `select_task_rq_fair`, `select_idle_sibling`,
//! `sched_balance_find_dst_cpu` (kernel-model.md §5).
//!
//! Deviations (the sched-domains issue replaces this with the full paths):
//! * Wakeups: `prev` if it is idle, else the first idle CPU of prev's LLC
//!   scanning from prev+1, else `prev` — no wake_affine, no idle-core
//!   search, no SIS_UTIL bound, no recent_used_cpu.
//! * Fork: the allowed CPU with the fewest runnable tasks, ties broken by
//!   lower load, then lower CPU number (a flat stand-in for the
//!   find_idlest_group walk).

use crate::ids::CpuId;
use crate::machine::{CpuMask, Machine};

/// What placement may ask about CPUs.
pub trait CpuView {
    /// The machine.
    fn machine(&self) -> &Machine;
    /// `available_idle_cpu`: idle task running, nothing queued, no wakeup
    /// in flight.
    fn available_idle_cpu(&self, cpu: CpuId) -> bool;
    /// Runnable tasks on the CPU (in-flight wakeups included).
    fn nr_running(&self, cpu: CpuId) -> u32;
    /// `cpu_load` (PELT load of the root cfs_rq).
    fn cpu_load(&self, cpu: CpuId) -> u64;
}

/// Placement of a waking task last on `prev`.
pub fn select_task_rq_wakeup(v: &impl CpuView, allowed: &CpuMask, prev: CpuId) -> CpuId {
    if allowed.test(prev) && v.available_idle_cpu(prev) {
        return prev;
    }
    let m = v.machine();
    let start = CpuId((prev.0 + 1) % m.nr_cpus() as u32);
    for c in m.llc_span(prev).iter_wrap(start) {
        if allowed.test(c) && v.available_idle_cpu(c) {
            return c;
        }
    }
    if allowed.test(prev) {
        prev
    } else {
        select_task_rq_fork(v, allowed)
    }
}

/// Placement of a new task (the fork slow path, flattened).
pub fn select_task_rq_fork(v: &impl CpuView, allowed: &CpuMask) -> CpuId {
    allowed
        .iter()
        .min_by_key(|&c| (v.nr_running(c), v.cpu_load(c), c.0))
        .expect("a task's allowed mask is never empty")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::make_test_machine;

    struct View {
        m: Machine,
        nr: Vec<u32>,
    }
    impl CpuView for View {
        fn machine(&self) -> &Machine {
            &self.m
        }
        fn available_idle_cpu(&self, c: CpuId) -> bool {
            self.nr[c.idx()] == 0
        }
        fn nr_running(&self, c: CpuId) -> u32 {
            self.nr[c.idx()]
        }
        fn cpu_load(&self, _: CpuId) -> u64 {
            0
        }
    }

    #[test]
    fn wakeup_prefers_idle_prev_then_idle_llc_sibling() {
        // 1 node, 2 LLCs of 2 cores, no SMT: CPUs {0,1} and {2,3}.
        let m = make_test_machine(1, 2, 2, 1);
        let all = CpuMask::full(4);
        let v = View {
            m,
            nr: vec![0, 0, 1, 1],
        };
        assert_eq!(select_task_rq_wakeup(&v, &all, CpuId(1)), CpuId(1));
        let v = View {
            nr: vec![0, 1, 1, 1],
            ..v
        };
        assert_eq!(select_task_rq_wakeup(&v, &all, CpuId(1)), CpuId(0));
        // Nothing idle in prev's LLC: stay on prev (CPU 0 of the other LLC is idle).
        let v = View {
            nr: vec![0, 1, 1, 1],
            ..v
        };
        assert_eq!(select_task_rq_wakeup(&v, &all, CpuId(3)), CpuId(3));
    }

    #[test]
    fn fork_spreads_by_nr_running() {
        let m = make_test_machine(1, 1, 4, 1);
        let v = View {
            m,
            nr: vec![2, 1, 1, 3],
        };
        assert_eq!(select_task_rq_fork(&v, &CpuMask::full(4)), CpuId(1));
        let only3 = CpuMask::from_cpus(4, &[3]).unwrap();
        assert_eq!(select_task_rq_fork(&v, &only3), CpuId(3));
    }
}
