//! The resolved configuration of one run (all knobs in one place, like
//! tokio's `runtime::Config`).

use crate::features::{Features, PreemptModel};
use crate::time::Nanos;

pub use crate::tunables::Tunables;

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
    /// The kernel release whose defaults the features and tunables started
    /// from (`--kernel`; `tip` by default), see [`crate::kernels`].
    pub kernel: &'static str,
    /// Verify invariants after every event.
    pub check: bool,
    /// Fast-forward runs of channel syscalls that nothing can observe in
    /// closed form (`sched/channel_io.rs`); off = one event per read and write.
    /// The outputs are the same either way.
    pub fast_forward: bool,
    /// Host noise (`sched/noise.rs`).
    pub noise: NoiseSetting,
}

/// Which host noise a run has (`--noise`). The default is the clean
/// model: noise is opt-in (`--noise machine` for a preset's measured
/// noise, a recording's noise.json in `validate`), so hand-checked runs
/// and baselines stay exact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NoiseSetting {
    /// The machine's own ([`crate::machine::Machine::noise`]; none for most).
    Machine,
    /// None: the clean model.
    #[default]
    Off,
    /// These parameters (a recording's `noise.json`).
    Given(crate::noise::NoiseParams),
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
            kernel: crate::kernels::DEFAULT_KERNEL,
            check: false,
            noise: NoiseSetting::Off,
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
