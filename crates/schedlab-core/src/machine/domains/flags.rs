//! Sched-domain flags (`SD_*`, include/linux/sched/sd_flags.h) and the
//! per-level constants `sd_init` sets from them.

use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

/// A set of sched-domain flags (`SD_*`, include/linux/sched/sd_flags.h).
/// Bits follow the kernel's order.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct SdFlags(pub u32);

/// Balance when about to become idle (newidle balance).
pub const SD_BALANCE_NEWIDLE: SdFlags = SdFlags(1 << 0);
/// Balance on exec (slow-path placement).
pub const SD_BALANCE_EXEC: SdFlags = SdFlags(1 << 1);
/// Balance on fork/clone (slow-path placement).
pub const SD_BALANCE_FORK: SdFlags = SdFlags(1 << 2);
/// Balance on wakeup (slow path on wakeups; never set by `sd_init`).
pub const SD_BALANCE_WAKE: SdFlags = SdFlags(1 << 3);
/// Wake a task next to its waker (`wake_affine`).
pub const SD_WAKE_AFFINE: SdFlags = SdFlags(1 << 4);
/// The span holds CPUs of different capacities.
pub const SD_ASYM_CPUCAPACITY: SdFlags = SdFlags(1 << 5);
/// The span holds every CPU capacity of the machine.
pub const SD_ASYM_CPUCAPACITY_FULL: SdFlags = SdFlags(1 << 6);
/// Members share CPU capacity (SMT siblings).
pub const SD_SHARE_CPUCAPACITY: SdFlags = SdFlags(1 << 7);
/// Members share a cluster (L2 / LLC tags).
pub const SD_CLUSTER: SdFlags = SdFlags(1 << 8);
/// Members share the last-level cache.
pub const SD_SHARE_LLC: SdFlags = SdFlags(1 << 9);
/// Only one CPU at a time may balance domains with this flag
/// (`sched_balance_running`); NUMA levels only.
pub const SD_SERIALIZE: SdFlags = SdFlags(1 << 10);
/// Prefer to place tasks on higher-priority CPUs (ITMT); not modelled.
pub const SD_ASYM_PACKING: SdFlags = SdFlags(1 << 11);
/// Spread tasks to sibling groups before stacking.
pub const SD_PREFER_SIBLING: SdFlags = SdFlags(1 << 12);
/// A NUMA level (distance-based span).
pub const SD_NUMA: SdFlags = SdFlags(1 << 13);

/// Every flag with its kernel name, in bit order.
const FLAG_NAMES: [(SdFlags, &str); 14] = [
    (SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
    (SD_BALANCE_FORK, "SD_BALANCE_FORK"),
    (SD_BALANCE_WAKE, "SD_BALANCE_WAKE"),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
    (SD_ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
    (SD_ASYM_CPUCAPACITY_FULL, "SD_ASYM_CPUCAPACITY_FULL"),
    (SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
    (SD_CLUSTER, "SD_CLUSTER"),
    (SD_SHARE_LLC, "SD_SHARE_LLC"),
    (SD_SERIALIZE, "SD_SERIALIZE"),
    (SD_ASYM_PACKING, "SD_ASYM_PACKING"),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
    (SD_NUMA, "SD_NUMA"),
];

/// Flags that only mean something with at least two groups
/// (`SDF_NEEDS_GROUPS`): all but `SD_WAKE_AFFINE` and `SD_SHARE_LLC`.
pub(super) const NEEDS_GROUPS: SdFlags = SdFlags(
    SD_BALANCE_NEWIDLE.0
        | SD_BALANCE_EXEC.0
        | SD_BALANCE_FORK.0
        | SD_BALANCE_WAKE.0
        | SD_ASYM_CPUCAPACITY.0
        | SD_ASYM_CPUCAPACITY_FULL.0
        | SD_SHARE_CPUCAPACITY.0
        | SD_CLUSTER.0
        | SD_SERIALIZE.0
        | SD_ASYM_PACKING.0
        | SD_PREFER_SIBLING.0
        | SD_NUMA.0,
);

/// Behaviour flags every level starts with (`sd_init`).
pub(super) const DEFAULT_FLAGS: SdFlags = SdFlags(
    SD_BALANCE_NEWIDLE.0
        | SD_BALANCE_EXEC.0
        | SD_BALANCE_FORK.0
        | SD_WAKE_AFFINE.0
        | SD_PREFER_SIBLING.0,
);

/// `node_reclaim_distance`: NUMA levels farther than this lose exec/fork
/// balancing and wake-affine.
pub const NODE_RECLAIM_DISTANCE: u32 = 30;

/// `busy_factor` of every level (from 5.10, 6e7499135db7 "sched/fair:
/// Reduce busy load balance interval"; 32 before, [`BUSY_FACTOR_PRE_5_10`]).
pub const BUSY_FACTOR: u32 = 16;

/// `sd_init`'s `busy_factor` before 5.10.
pub const BUSY_FACTOR_PRE_5_10: u32 = 32;

/// `sd_init`'s default `imbalance_pct` before 5.10, kept by the levels that
/// do not set their own (the package/DIE and NUMA levels): "sched/fair:
/// Reduce minimal imbalance threshold" (5.10) lowered it to 117.
pub const IMBALANCE_PCT_PRE_5_10: u32 = 125;

impl SdFlags {
    /// No flag.
    pub const EMPTY: SdFlags = SdFlags(0);

    /// Are all flags of `other` set?
    #[inline]
    pub fn contains(self, other: SdFlags) -> bool {
        self.0 & other.0 == other.0
    }
    /// Is any flag of `other` set?
    #[inline]
    pub fn intersects(self, other: SdFlags) -> bool {
        self.0 & other.0 != 0
    }
    /// No flag set.
    #[inline]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Sets the flags of `other`.
    #[inline]
    pub fn insert(&mut self, other: SdFlags) {
        self.0 |= other.0;
    }
    /// Clears the flags of `other`.
    #[inline]
    pub fn remove(&mut self, other: SdFlags) {
        self.0 &= !other.0;
    }
    /// Kernel names of the flags set, in bit order.
    pub fn names(self) -> Vec<&'static str> {
        FLAG_NAMES
            .iter()
            .filter(|(f, _)| self.contains(*f))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl BitOr for SdFlags {
    type Output = SdFlags;
    fn bitor(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 | rhs.0)
    }
}
impl BitOrAssign for SdFlags {
    fn bitor_assign(&mut self, rhs: SdFlags) {
        self.0 |= rhs.0;
    }
}
impl BitAnd for SdFlags {
    type Output = SdFlags;
    fn bitand(self, rhs: SdFlags) -> SdFlags {
        SdFlags(self.0 & rhs.0)
    }
}
impl Not for SdFlags {
    type Output = SdFlags;
    fn not(self) -> SdFlags {
        SdFlags(!self.0)
    }
}
/// `SD_SHARE_CPUCAPACITY|SD_SHARE_LLC`, or `0` when empty.
impl fmt::Display for SdFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("0");
        }
        f.write_str(&self.names().join("|"))
    }
}
impl fmt::Debug for SdFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SdFlags({self})")
    }
}
