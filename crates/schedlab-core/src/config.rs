//! The resolved configuration of one run (all knobs in one place, like
//! tokio's `runtime::Config`).

use crate::features::{Features, PreemptModel};
use crate::time::{Nanos, NSEC_PER_USEC};

/// Sysctl-like tunables (kernel defaults, kernel-model.md Appendix A).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// `sysctl_sched_base_slice` before tunable scaling (0.70 ms, 6.15+).
    pub base_slice_normalized_ns: Nanos,
    /// hrtimer slack of non-RT tasks (`timer_slack_ns`, 50 µs).
    pub timer_slack_ns: Nanos,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            base_slice_normalized_ns: 700 * NSEC_PER_USEC,
            timer_slack_ns: 50 * NSEC_PER_USEC,
        }
    }
}

impl Tunables {
    /// `sysctl_sched_base_slice` for a machine of `ncpus` with the default
    /// LOG tunable scaling: `normalized × (1 + ⌊log2 min(ncpu, 8)⌋)`.
    pub fn base_slice_ns(&self, ncpus: usize) -> Nanos {
        let n = ncpus.clamp(1, 8) as u32;
        let factor = 1 + (31 - n.leading_zeros()) as u64;
        self.base_slice_normalized_ns * factor
    }
}

/// Everything that decides a run besides the machine and the workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Master seed.
    pub seed: u64,
    /// CONFIG_HZ.
    pub hz: u32,
    /// Preemption model.
    pub preempt: PreemptModel,
    /// Run length; `None` = until every task has finished.
    pub duration_ns: Option<Nanos>,
    /// Feature switches.
    pub features: Features,
    /// Tunables.
    pub tunables: Tunables,
    /// Verify invariants after every event.
    pub check: bool,
    /// Fast-forward runs of channel syscalls that nothing can observe in
    /// closed form (`sched/exec.rs`); off = one event per read and write.
    /// The outputs are the same either way.
    pub fast_forward: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 1,
            hz: 250,
            preempt: PreemptModel::Full,
            duration_ns: None,
            features: Features::default(),
            tunables: Tunables::default(),
            check: false,
            fast_forward: true,
        }
    }
}

impl SimConfig {
    /// `TICK_NSEC`.
    pub fn tick_ns(&self) -> Nanos {
        1_000_000_000 / self.hz as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_slice_scales_like_the_kernel() {
        let t = Tunables::default();
        assert_eq!(t.base_slice_ns(1), 700_000);
        assert_eq!(t.base_slice_ns(2), 1_400_000); // the 2-vCPU fixture: 1.4 ms
        assert_eq!(t.base_slice_ns(4), 2_100_000);
        assert_eq!(t.base_slice_ns(8), 2_800_000);
        assert_eq!(t.base_slice_ns(160), 2_800_000);
    }
}
