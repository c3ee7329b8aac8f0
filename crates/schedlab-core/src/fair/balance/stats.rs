//! Group statistics and classification (`sg_lb_stats`, `group_classify`,
//! `group_has_capacity`, `group_is_overloaded`).
//!
//! Kernel reference: fair.c `update_sg_wakeup_stats`, `group_classify`
//! (kernel-model.md §8.3–8.4, §5.4), tip-2026.
//!
//! Deviations: no asym packing, no SMT-balance or misfit types (the presets
//! are symmetric), no `sgc->imbalance` (pinning bookkeeping arrives with
//! periodic balancing).

/// `enum group_type`, lowest (most spare) first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupType {
    /// `group_has_spare`: room for more tasks.
    HasSpare,
    /// `group_fully_busy`: no spare capacity but not overloaded.
    FullyBusy,
    /// `group_overloaded`: more tasks than CPUs and short of capacity.
    Overloaded,
}

/// Statistics of one group (`struct sg_lb_stats`), computed without the
/// task being placed where the caller asks for it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SgStats {
    /// Σ cpu_load.
    pub group_load: u64,
    /// Σ cpu_util_cfs.
    pub group_util: u64,
    /// Σ cpu_runnable.
    pub group_runnable: u64,
    /// Σ runnable fair tasks (`h_nr_runnable`).
    pub sum_h_nr_running: u32,
    /// Σ runnable tasks of all classes.
    pub sum_nr_running: u32,
    /// CPUs with nothing to run.
    pub idle_cpus: u32,
    /// Σ capacity.
    pub group_capacity: u64,
    /// CPUs in the group.
    pub group_weight: u32,
    /// `group_load × 1024 / group_capacity` (overloaded/fully busy only).
    pub avg_load: u64,
    /// Classification.
    pub group_type: Option<GroupType>,
}

/// `group_has_capacity`.
pub fn group_has_capacity(pct: u32, s: &SgStats) -> bool {
    if s.sum_nr_running < s.group_weight {
        return true;
    }
    s.group_capacity * pct as u64 >= s.group_runnable * 100
        && s.group_capacity * 100 > s.group_util * pct as u64
}

/// `group_is_overloaded`.
pub fn group_is_overloaded(pct: u32, s: &SgStats) -> bool {
    if s.sum_nr_running <= s.group_weight {
        return false;
    }
    s.group_capacity * 100 < s.group_util * pct as u64
        || s.group_capacity * (pct as u64) < s.group_runnable * 100
}

/// `group_classify` (the types this model has).
pub fn group_classify(pct: u32, s: &SgStats) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sg(nr: u32, weight: u32, util: u64, runnable: u64) -> SgStats {
        SgStats {
            sum_nr_running: nr,
            sum_h_nr_running: nr,
            group_weight: weight,
            group_capacity: 1024 * weight as u64,
            group_util: util,
            group_runnable: runnable,
            ..Default::default()
        }
    }

    #[test]
    fn classification_by_hand() {
        // 4 CPUs, 3 tasks: fewer tasks than CPUs → spare.
        assert_eq!(
            group_classify(117, &sg(3, 4, 4000, 4000)),
            GroupType::HasSpare
        );
        // 4 tasks on 4 CPUs at util 3600: capacity·100 = 409600 > 3600·117 = 421200? No
        // → no capacity → fully busy (not overloaded: nr == weight).
        assert_eq!(
            group_classify(117, &sg(4, 4, 3600, 3600)),
            GroupType::FullyBusy
        );
        // 4 tasks at util 3000: 409600 > 351000 and 4096·117 = 479232 ≥ 300000 → spare.
        assert_eq!(
            group_classify(117, &sg(4, 4, 3000, 3000)),
            GroupType::HasSpare
        );
        // 6 tasks on 4 CPUs, runnable 6000: 4096·117 = 479232 < 600000 → overloaded.
        assert_eq!(
            group_classify(117, &sg(6, 4, 3000, 6000)),
            GroupType::Overloaded
        );
        // 6 tasks but little util and runnable (short sleepers) → spare by capacity.
        assert_eq!(
            group_classify(117, &sg(6, 4, 1000, 1500)),
            GroupType::HasSpare
        );
    }
}
