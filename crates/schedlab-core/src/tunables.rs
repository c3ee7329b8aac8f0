//! The scheduler's tunables: the `kernel.sched_*` sysctls and the debugfs
//! knobs under `/sys/kernel/debug/sched/`, under the kernel's own names,
//! with the kernel's ranges and the CPU-count scaling of `tunable_scaling`
//! (docs/kernels.md lists them with their defaults per release).
//!
//! Scaling (`update_sysctl` / `get_update_sysctl_factor`): the four slice
//! knobs (`base_slice_ns`, `latency_ns`, `min_granularity_ns`,
//! `wakeup_granularity_ns`) are kept as *normalised* values and multiplied
//! at boot by a factor of the online CPU count:
//!
//! ```text
//!   tunable_scaling 0 (none)    factor 1
//!   tunable_scaling 1 (log)     factor 1 + ilog2(min(ncpus, 8))   (default)
//!   tunable_scaling 2 (linear)  factor min(ncpus, 8)
//! ```
//!
//! A value written to one of those knobs is the value in effect (the kernel
//! stores the write as is); `tunable_scaling` rescales the knobs not
//! written. Deviation: the kernel recomputes every knob from its normalised
//! default when `tunable_scaling` is written after a knob; here an explicit
//! value always wins, whatever the order.
//!
//! Ranges: the four slice knobs take 100 µs … 1 s (`wakeup_granularity_ns`
//! 0 … 1 s), the ranges of the sysctl table that held them up to 5.12
//! (`min_sched_granularity_ns`, `max_sched_granularity_ns`,
//! `min_wakeup_granularity_ns`, `max_wakeup_granularity_ns`); since 5.13
//! they are plain debugfs u32 files and the kernel checks nothing, which
//! would let a 0 ns slice stall the model. The others take the kernel's
//! checks: `migration_cost_ns` and `nr_migrate` any u32,
//! `tunable_scaling` 0…2, `sched_rt_period_us` ≥ 1, `sched_rt_runtime_us`
//! −1 (no limit) or 0…period, `sched_cfs_bandwidth_slice_us` ≥ 1,
//! `sched_rr_timeslice_ms` any int (≤ 0 restores the 100 ms default), all
//! at most `INT_MAX` where the kernel uses an int.

use crate::time::{Nanos, NSEC_PER_MSEC, NSEC_PER_USEC};

/// `sysctl_sched_tunable_scaling`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TunableScaling {
    /// 0: no scaling.
    None,
    /// 1: `1 + ilog2(min(ncpus, 8))` (the default).
    Log,
    /// 2: `min(ncpus, 8)`.
    Linear,
}

impl TunableScaling {
    /// The factor for `ncpus` online CPUs.
    pub fn factor(self, ncpus: usize) -> u64 {
        let n = ncpus.clamp(1, 8) as u64;
        match self {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + (63 - n.leading_zeros()) as u64,
            TunableScaling::Linear => n,
        }
    }
    /// The sysctl's number.
    pub fn value(self) -> i64 {
        match self {
            TunableScaling::None => 0,
            TunableScaling::Log => 1,
            TunableScaling::Linear => 2,
        }
    }
}

/// A knob scaled by `tunable_scaling` unless written.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Scaled {
    /// Normalised default (`normalized_sysctl_sched_*`).
    pub normalized_ns: Nanos,
    /// A value written by the user (in effect as is).
    pub set_ns: Option<Nanos>,
}

impl Scaled {
    const fn new(normalized_ns: Nanos) -> Scaled {
        Scaled {
            normalized_ns,
            set_ns: None,
        }
    }
    /// The value in effect on `ncpus` CPUs.
    pub fn effective(&self, s: TunableScaling, ncpus: usize) -> Nanos {
        self.set_ns
            .unwrap_or_else(|| self.normalized_ns * s.factor(ncpus))
    }
}

/// Every tunable the model reads (defaults: the current kernel; a release's
/// defaults come from [`crate::kernels`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// debugfs `base_slice_ns` (EEVDF request size; 0.70 ms normalised since 6.15).
    pub base_slice: Scaled,
    /// debugfs `latency_ns` (CFS targeted preemption latency, 6 ms normalised).
    pub latency: Scaled,
    /// debugfs `min_granularity_ns` (CFS minimal preemption granularity, 0.75 ms normalised).
    pub min_granularity: Scaled,
    /// debugfs `wakeup_granularity_ns` (CFS wakeup preemption granularity, 1 ms normalised).
    pub wakeup_granularity: Scaled,
    /// debugfs `tunable_scaling`.
    pub tunable_scaling: TunableScaling,
    /// debugfs `migration_cost_ns` (500 µs): cache-hot window of
    /// `task_hot`, initial `avg_idle` and `max_idle_balance_cost`.
    pub migration_cost_ns: Nanos,
    /// debugfs `nr_migrate` (32): most tasks one balance pass looks at.
    pub nr_migrate: u32,
    /// `kernel.sched_rt_runtime_us` (950 000; −1 = no RT throttling).
    pub rt_runtime_us: i64,
    /// `kernel.sched_rt_period_us` (1 000 000).
    pub rt_period_us: u64,
    /// `kernel.sched_cfs_bandwidth_slice_us` (5000).
    pub cfs_bandwidth_slice_us: u64,
    /// `kernel.sched_rr_timeslice_ms` (100; rounded up to jiffies).
    pub rr_timeslice_ms: u64,
    /// hrtimer slack of non-RT tasks (`timer_slack_ns`, 50 µs; a per-task
    /// prctl, not a sysctl).
    pub timer_slack_ns: Nanos,
}

impl Default for Tunables {
    fn default() -> Self {
        Tunables {
            base_slice: Scaled::new(700 * NSEC_PER_USEC),
            latency: Scaled::new(6 * NSEC_PER_MSEC),
            min_granularity: Scaled::new(750 * NSEC_PER_USEC),
            wakeup_granularity: Scaled::new(NSEC_PER_MSEC),
            tunable_scaling: TunableScaling::Log,
            migration_cost_ns: 500_000,
            nr_migrate: 32,
            rt_runtime_us: 950_000,
            rt_period_us: 1_000_000,
            cfs_bandwidth_slice_us: 5000,
            rr_timeslice_ms: 100,
            timer_slack_ns: 50 * NSEC_PER_USEC,
        }
    }
}

/// One settable tunable.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SysctlInfo {
    /// The canonical name (debugfs file name for the debugfs knobs, the
    /// `kernel.` sysctl name for the others).
    pub name: &'static str,
    /// Other spellings accepted (older kernels' sysctl names, paths).
    pub aliases: &'static [&'static str],
    /// Unit and range, as shown in errors and listings.
    pub range: &'static str,
    /// One line: what the model does with it.
    pub doc: &'static str,
}

/// Every tunable `--sysctl` sets, in listing order.
pub const SYSCTL_TABLE: &[SysctlInfo] = &[
    SysctlInfo {
        name: "base_slice_ns",
        aliases: &[
            "sched/base_slice_ns",
            "kernel.sched_base_slice_ns",
            "sched_base_slice_ns",
        ],
        range: "ns, 100000..=1000000000",
        doc: "EEVDF request size (6.6+)",
    },
    SysctlInfo {
        name: "latency_ns",
        aliases: &[
            "sched/latency_ns",
            "kernel.sched_latency_ns",
            "sched_latency_ns",
        ],
        range: "ns, 100000..=1000000000",
        doc: "CFS scheduling period for up to nr_latency tasks; sleeper credit (<=6.5)",
    },
    SysctlInfo {
        name: "min_granularity_ns",
        aliases: &[
            "sched/min_granularity_ns",
            "kernel.sched_min_granularity_ns",
            "sched_min_granularity_ns",
        ],
        range: "ns, 100000..=1000000000",
        doc: "CFS least slice; period = nr x this past nr_latency tasks (<=6.5)",
    },
    SysctlInfo {
        name: "wakeup_granularity_ns",
        aliases: &[
            "sched/wakeup_granularity_ns",
            "kernel.sched_wakeup_granularity_ns",
            "sched_wakeup_granularity_ns",
        ],
        range: "ns, 0..=1000000000",
        doc: "CFS wakeup preemption needs a vruntime lead past this, weight-scaled (<=6.5)",
    },
    SysctlInfo {
        name: "tunable_scaling",
        aliases: &[
            "sched/tunable_scaling",
            "kernel.sched_tunable_scaling",
            "sched_tunable_scaling",
        ],
        range: "0 (none), 1 (log), 2 (linear)",
        doc: "CPU-count factor of the four slice knobs",
    },
    SysctlInfo {
        name: "migration_cost_ns",
        aliases: &[
            "sched/migration_cost_ns",
            "kernel.sched_migration_cost_ns",
            "sched_migration_cost_ns",
        ],
        range: "ns, 0..=4294967295",
        doc: "cache-hot window of task_hot; avg_idle cap of newidle balancing",
    },
    SysctlInfo {
        name: "nr_migrate",
        aliases: &[
            "sched/nr_migrate",
            "kernel.sched_nr_migrate",
            "sched_nr_migrate",
        ],
        range: "tasks, 0..=4294967295",
        doc: "most tasks one load-balance pass looks at",
    },
    SysctlInfo {
        name: "kernel.sched_rt_runtime_us",
        aliases: &["sched_rt_runtime_us"],
        range: "us, -1 (no limit) or 0..=sched_rt_period_us",
        doc: "RT throttling: runtime per period",
    },
    SysctlInfo {
        name: "kernel.sched_rt_period_us",
        aliases: &["sched_rt_period_us"],
        range: "us, 1..=2147483647",
        doc: "RT throttling period",
    },
    SysctlInfo {
        name: "kernel.sched_cfs_bandwidth_slice_us",
        aliases: &["sched_cfs_bandwidth_slice_us"],
        range: "us, 1..=2147483647",
        doc: "runtime a cfs_rq takes from its group's pool at a time",
    },
    SysctlInfo {
        name: "kernel.sched_rr_timeslice_ms",
        aliases: &["sched_rr_timeslice_ms"],
        range: "ms, any int (<= 0: the 100 ms default)",
        doc: "SCHED_RR time slice",
    },
];

/// Why a `--sysctl` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SysctlError {
    /// Not `NAME=VALUE`.
    #[error("'{0}': expected NAME=VALUE")]
    Syntax(String),
    /// No such tunable.
    #[error("unknown tunable '{0}' (valid: {1})")]
    Unknown(String, String),
    /// Not a number, or out of the kernel's range.
    #[error("{0}: bad value '{1}' ({2})")]
    BadValue(String, String, String),
}

fn lookup(name: &str) -> Option<&'static SysctlInfo> {
    let n = name
        .trim()
        .trim_start_matches("/proc/sys/")
        .trim_start_matches("/sys/kernel/debug/");
    let n = n.replace('/', ".");
    let n = n.replace("sched.", "sched/");
    SYSCTL_TABLE
        .iter()
        .find(|i| i.name == n || i.aliases.contains(&n.as_str()))
}

impl Tunables {
    /// `sysctl_sched_base_slice` in effect on `ncpus` CPUs.
    pub fn base_slice_ns(&self, ncpus: usize) -> Nanos {
        self.base_slice.effective(self.tunable_scaling, ncpus)
    }
    /// `sysctl_sched_latency` in effect.
    pub fn latency_ns(&self, ncpus: usize) -> Nanos {
        self.latency.effective(self.tunable_scaling, ncpus)
    }
    /// `sysctl_sched_min_granularity` in effect.
    pub fn min_granularity_ns(&self, ncpus: usize) -> Nanos {
        self.min_granularity.effective(self.tunable_scaling, ncpus)
    }
    /// `sysctl_sched_wakeup_granularity` in effect.
    pub fn wakeup_granularity_ns(&self, ncpus: usize) -> Nanos {
        self.wakeup_granularity
            .effective(self.tunable_scaling, ncpus)
    }
    /// `sched_nr_latency = latency / min_granularity` (recomputed by the
    /// kernel whenever either is written).
    pub fn nr_latency(&self, ncpus: usize) -> u64 {
        (self.latency_ns(ncpus) / self.min_granularity_ns(ncpus).max(1)).max(1)
    }
    /// RT runtime per period in ns (None = no RT throttling).
    pub fn rt_runtime_ns(&self) -> Option<Nanos> {
        (self.rt_runtime_us >= 0).then(|| self.rt_runtime_us as Nanos * NSEC_PER_USEC)
    }
    /// RT period in ns.
    pub fn rt_period_ns(&self) -> Nanos {
        self.rt_period_us * NSEC_PER_USEC
    }
    /// `sched_cfs_bandwidth_slice()` in ns.
    pub fn cfs_bandwidth_slice_ns(&self) -> Nanos {
        self.cfs_bandwidth_slice_us * NSEC_PER_USEC
    }
    /// `sched_rr_timeslice` in ns: `msecs_to_jiffies`, rounded up to whole
    /// ticks of `tick_ns`.
    pub fn rr_timeslice_ns(&self, tick_ns: Nanos) -> Nanos {
        let ns = self.rr_timeslice_ms * NSEC_PER_MSEC;
        ns.div_ceil(tick_ns).max(1) * tick_ns
    }

    /// Applies one `NAME=VALUE`.
    pub fn set(&mut self, item: &str) -> Result<(), SysctlError> {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| SysctlError::Syntax(item.to_string()))?;
        self.set_value(name, value)
    }

    /// Sets tunable `name` to `value` (kernel ranges, see the module doc).
    pub fn set_value(&mut self, name: &str, value: &str) -> Result<(), SysctlError> {
        let info = lookup(name).ok_or_else(|| {
            SysctlError::Unknown(
                name.trim().to_string(),
                SYSCTL_TABLE
                    .iter()
                    .map(|i| i.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })?;
        let v = value.trim();
        let bad = || {
            SysctlError::BadValue(
                info.name.to_string(),
                v.to_string(),
                format!("valid: {}", info.range),
            )
        };
        let int = |lo: i64, hi: i64| -> Result<i64, SysctlError> {
            let x: i64 = v.parse().map_err(|_| bad())?;
            if x < lo || x > hi {
                return Err(bad());
            }
            Ok(x)
        };
        const INT_MAX: i64 = i32::MAX as i64;
        const U32_MAX: i64 = u32::MAX as i64;
        const GRAN: (i64, i64) = (100_000, 1_000_000_000);
        match info.name {
            "base_slice_ns" => self.base_slice.set_ns = Some(int(GRAN.0, GRAN.1)? as Nanos),
            "latency_ns" => self.latency.set_ns = Some(int(GRAN.0, GRAN.1)? as Nanos),
            "min_granularity_ns" => {
                self.min_granularity.set_ns = Some(int(GRAN.0, GRAN.1)? as Nanos)
            }
            "wakeup_granularity_ns" => {
                self.wakeup_granularity.set_ns = Some(int(0, GRAN.1)? as Nanos)
            }
            "tunable_scaling" => {
                self.tunable_scaling = match v {
                    "none" => TunableScaling::None,
                    "log" => TunableScaling::Log,
                    "linear" => TunableScaling::Linear,
                    _ => match int(0, 2)? {
                        0 => TunableScaling::None,
                        1 => TunableScaling::Log,
                        _ => TunableScaling::Linear,
                    },
                }
            }
            "migration_cost_ns" => self.migration_cost_ns = int(0, U32_MAX)? as Nanos,
            "nr_migrate" => self.nr_migrate = int(0, U32_MAX)? as u32,
            "kernel.sched_rt_runtime_us" => {
                let x = int(-1, INT_MAX)?;
                if x > self.rt_period_us as i64 {
                    return Err(SysctlError::BadValue(
                        info.name.into(),
                        v.into(),
                        format!(
                            "more than kernel.sched_rt_period_us {}; -1 means no limit",
                            self.rt_period_us
                        ),
                    ));
                }
                self.rt_runtime_us = x;
            }
            "kernel.sched_rt_period_us" => {
                let x = int(1, INT_MAX)?;
                if self.rt_runtime_us > x {
                    return Err(SysctlError::BadValue(
                        info.name.into(),
                        v.into(),
                        format!(
                            "less than kernel.sched_rt_runtime_us {} (set the runtime first)",
                            self.rt_runtime_us
                        ),
                    ));
                }
                self.rt_period_us = x as u64;
            }
            "kernel.sched_cfs_bandwidth_slice_us" => {
                self.cfs_bandwidth_slice_us = int(1, INT_MAX)? as u64
            }
            "kernel.sched_rr_timeslice_ms" => {
                let x = int(i32::MIN as i64, INT_MAX)?;
                self.rr_timeslice_ms = if x <= 0 { 100 } else { x as u64 };
            }
            _ => unreachable!("every SYSCTL_TABLE name is handled"),
        }
        Ok(())
    }

    /// `(name, value)` of every tunable in effect on `ncpus` CPUs, in
    /// [`SYSCTL_TABLE`] order (for summary.json and listings).
    pub fn values(&self, ncpus: usize) -> Vec<(&'static str, i64)> {
        vec![
            ("base_slice_ns", self.base_slice_ns(ncpus) as i64),
            ("latency_ns", self.latency_ns(ncpus) as i64),
            ("min_granularity_ns", self.min_granularity_ns(ncpus) as i64),
            (
                "wakeup_granularity_ns",
                self.wakeup_granularity_ns(ncpus) as i64,
            ),
            ("tunable_scaling", self.tunable_scaling.value()),
            ("migration_cost_ns", self.migration_cost_ns as i64),
            ("nr_migrate", self.nr_migrate as i64),
            ("kernel.sched_rt_runtime_us", self.rt_runtime_us),
            ("kernel.sched_rt_period_us", self.rt_period_us as i64),
            (
                "kernel.sched_cfs_bandwidth_slice_us",
                self.cfs_bandwidth_slice_us as i64,
            ),
            ("kernel.sched_rr_timeslice_ms", self.rr_timeslice_ms as i64),
        ]
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

    #[test]
    fn scaling_modes() {
        let mut t = Tunables::default();
        assert_eq!(t.latency_ns(8), 24_000_000); // 6 ms x 4
        t.set("tunable_scaling=0").unwrap();
        assert_eq!(t.latency_ns(8), 6_000_000);
        t.set("tunable_scaling=linear").unwrap();
        assert_eq!(t.latency_ns(8), 48_000_000);
        assert_eq!(t.latency_ns(3), 18_000_000);
        assert_eq!(t.nr_latency(3), 8);
        // A written value is in effect as is.
        t.set("latency_ns=10000000").unwrap();
        assert_eq!(t.latency_ns(8), 10_000_000);
        assert_eq!(t.nr_latency(8), 10_000_000 / 6_000_000);
    }

    #[test]
    fn names_aliases_and_ranges() {
        let mut t = Tunables::default();
        t.set("kernel.sched_migration_cost_ns=250000").unwrap();
        assert_eq!(t.migration_cost_ns, 250_000);
        t.set("/sys/kernel/debug/sched/nr_migrate=8").unwrap();
        assert_eq!(t.nr_migrate, 8);
        t.set("sched_rt_runtime_us=-1").unwrap();
        assert_eq!(t.rt_runtime_ns(), None);
        t.set("kernel.sched_rr_timeslice_ms=0").unwrap();
        assert_eq!(t.rr_timeslice_ms, 100);
        t.set("kernel.sched_rr_timeslice_ms=5").unwrap();
        assert_eq!(t.rr_timeslice_ns(4_000_000), 8_000_000); // 2 jiffies at HZ=250
        for bad in [
            "base_slice_ns=0",
            "latency_ns=99999",
            "wakeup_granularity_ns=1000000001",
            "tunable_scaling=3",
            "nr_migrate=-1",
            "nr_migrate=4294967296",
            "migration_cost_ns=abc",
            "kernel.sched_rt_period_us=0",
            "kernel.sched_rt_runtime_us=-2",
            "kernel.sched_rt_runtime_us=2000000",
            "kernel.sched_cfs_bandwidth_slice_us=0",
        ] {
            assert!(
                matches!(t.clone().set(bad), Err(SysctlError::BadValue(..))),
                "{bad}"
            );
        }
        assert!(matches!(t.set("bogus=1"), Err(SysctlError::Unknown(..))));
        assert!(matches!(t.set("latency_ns"), Err(SysctlError::Syntax(..))));
    }
}
