//! The decisions of `sched_balance_rq` (formerly `load_balance`): group
//! statistics of a domain, the busiest group, the imbalance and its type,
//! the busiest queue. Pure functions over [`CpuView`]; moving tasks is the
//! simulator's job (`sched/balance/`).
//!
//! Kernel reference: fair.c `update_sd_lb_stats`, `update_sg_lb_stats`,
//! `update_sd_pick_busiest`, `sched_balance_find_src_group`,
//! `calculate_imbalance`, `sibling_imbalance`, `sched_balance_find_src_rq`,
//! `should_we_balance` (kernel-model.md §7.5, §8.3–8.7), tip-2026.
//!
//! ```text
//!   groups of sd ──► SgStats each (local = the one holding dst)
//!        │            classify: has_spare < fully_busy < overloaded
//!        ▼
//!   busiest = highest type (ties: avg_load / idle CPUs / nr_running)
//!        ▼
//!   balanced?  (local type > busiest; both overloaded but close; ...)
//!        ▼
//!   calculate_imbalance → (migrate_load | migrate_util | migrate_task, amount)
//!        ▼
//!   busiest queue in the busiest group by migration type
//! ```
//!
//! Deviations: no misfit, asym-packing, SMT-balance or group_imbalanced
//! types; no NUMA fbq filter. The NUMA allowance (`adjust_numa_imbalance`)
//! follows the release ([`NumaLbRule`]: none before 5.6, the busiest
//! group's count 5.6-5.17, `imb_numa_nr` from 5.18, on the unhalved
//! difference from 6.0); `imb_numa_nr` itself follows the release too
//! (machine/domains/mod.rs `ImbNumaRule`: a quarter of a single-LLC node in
//! 5.18-5.19, an eighth from 6.0).

use super::stats::{group_classify, GroupType, SgStats};
use crate::fair::select::{lb_group_summed, CpuView, LbSnapshot, LbSums, NumaLbRule};
use crate::ids::CpuId;
use crate::machine::domains::{
    SchedDomain, NUMA_IMBALANCE_MIN, SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC,
};
use crate::machine::CpuMask;

/// `enum cpu_idle_type`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CpuIdle {
    /// `__CPU_NOT_IDLE`: the balancing CPU is busy.
    NotIdle = 0,
    /// `CPU_IDLE`: balancing from an idle CPU (periodic or nohz).
    Idle = 1,
    /// `CPU_NEWLY_IDLE`: newidle balance before going idle.
    NewlyIdle = 2,
}

/// `enum migration_type`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum MigrationType {
    /// Move load (`task_h_load`).
    Load,
    /// Move utilisation.
    Util,
    /// Move a number of tasks.
    Task,
}

/// `struct sd_lb_stats` (the parts modelled).
#[derive(Clone, Debug, Default)]
pub struct SdLbStats {
    /// The kernel's load-migration arithmetic of 5.5 on (the load_balance
    /// rework, 0b0695f2b34a): unsigned and unguarded for a busiest group
    /// below the domain average (see `calculate_imbalance`). Before 5.5 an
    /// imbalance with the busiest group at or below the average was 0 (and
    /// fix_small_imbalance, not modelled). Set by the caller from the
    /// kernel; false by default.
    pub load_imbalance_wraps: bool,
    /// The release's NUMA allowance in `calculate_imbalance`, from the
    /// view ([`CpuView::numa_lb_rule`]); the current one by default.
    pub numa_lb_rule: NumaLbRule,
    /// Local group's statistics.
    pub local: SgStats,
    /// Busiest group: index in `sd.groups` and statistics.
    pub busiest: Option<(usize, SgStats)>,
    /// Σ group loads.
    pub total_load: u64,
    /// Σ group capacities.
    pub total_capacity: u64,
    /// Some CPU of the domain has more than one runnable task.
    pub overloaded: bool,
    /// The child domain has SD_PREFER_SIBLING.
    pub prefer_sibling: bool,
    /// Cores in the local group and in the busiest one.
    pub local_cores: u32,
    /// Cores in the busiest group.
    pub busiest_cores: u32,
}

/// `update_sg_lb_stats` over `span ∩ cpus` (`cpus` None = the whole span).
pub fn sg_lb_stats(
    v: &impl CpuView,
    span: &CpuMask,
    cpus: Option<&CpuMask>,
    pct: u32,
    overloaded: &mut bool,
) -> SgStats {
    sg_stats(v, v.lb_snapshots(), span, cpus, pct, overloaded)
}

/// [`sg_lb_stats`] with the view's dense array (`all`, when it has one)
/// asked for once per domain by the caller.
#[inline]
fn sg_stats(
    v: &impl CpuView,
    all: Option<&[LbSnapshot]>,
    span: &CpuMask,
    cpus: Option<&CpuMask>,
    pct: u32,
    overloaded: &mut bool,
) -> SgStats {
    let mut s = SgStats::default();
    let mut over = false;
    let mut add = |l: &LbSnapshot| {
        s.group_load += l.load;
        s.group_util += l.util;
        s.group_runnable += l.runnable;
        s.sum_h_nr_running += l.h_nr_runnable;
        s.sum_nr_running += l.nr_running;
        over |= l.nr_running > 1;
        s.idle_cpus += l.idle as u32;
        s.group_capacity += l.capacity;
        s.group_weight += 1;
    };
    match all {
        Some(all) => for_each_cpu_in(span, cpus, |c| add(&all[c])),
        None => for_each_cpu_in(span, cpus, |c| add(&v.lb_snapshot(CpuId(c as u32)))),
    }
    *overloaded |= over;
    classify(pct, &mut s);
    s
}

/// [`sg_stats`] of a whole group from its running sums (the view's
/// [`LbSums`], equal to the walk's totals).
#[inline]
fn sg_from_sums(t: &LbSums, pct: u32, overloaded: &mut bool) -> SgStats {
    let mut s = SgStats {
        group_load: t.load,
        group_util: t.util,
        group_runnable: t.runnable,
        sum_h_nr_running: t.h_nr_runnable,
        sum_nr_running: t.nr_running,
        idle_cpus: t.idle_cpus,
        group_capacity: t.capacity,
        group_weight: t.weight,
        ..Default::default()
    };
    *overloaded |= t.overloaded_cpus > 0;
    classify(pct, &mut s);
    s
}

/// The group's type and, when overloaded, its average load.
#[inline]
fn classify(pct: u32, s: &mut SgStats) {
    let t = group_classify(pct, s);
    s.group_type = Some(t);
    if t == GroupType::Overloaded && s.group_capacity > 0 {
        s.avg_load = s.group_load * 1024 / s.group_capacity;
    }
}

/// Calls `f` with the index of every CPU of `span ∩ cpus` (`cpus` None =
/// the whole span), in increasing order, a bit word at a time
/// (`for_each_cpu_and`).
#[inline]
fn for_each_cpu_in(span: &CpuMask, cpus: Option<&CpuMask>, mut f: impl FnMut(usize)) {
    let words = span.words();
    let and = cpus.map(CpuMask::words);
    for (wi, &w) in words.iter().enumerate() {
        let mut w = w;
        if let Some(m) = and {
            w &= m[wi];
        }
        while w != 0 {
            let b = w.trailing_zeros() as usize;
            w &= w - 1;
            f(wi * 64 + b);
        }
    }
}

/// `update_sd_pick_busiest`: should `s` replace the current busiest?
#[inline]
fn pick_busiest(s: &SgStats, busiest: Option<&SgStats>) -> bool {
    if s.sum_h_nr_running == 0 {
        return false;
    }
    let Some(b) = busiest else { return true };
    let (t, bt) = (s.group_type.unwrap(), b.group_type.unwrap());
    if t != bt {
        return t > bt;
    }
    match t {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load > b.avg_load,
        GroupType::HasSpare => {
            s.idle_cpus < b.idle_cpus
                || (s.idle_cpus == b.idle_cpus && s.sum_nr_running > b.sum_nr_running)
        }
    }
}

/// `update_sd_lb_stats`: statistics of every group of `sd` for `dst`.
pub fn sd_lb_stats(
    v: &impl CpuView,
    sd: &SchedDomain,
    child_flags: Option<crate::machine::domains::SdFlags>,
    dst: CpuId,
    cpus: Option<&CpuMask>,
) -> SdLbStats {
    let pct = sd.imbalance_pct;
    let mut out = SdLbStats {
        prefer_sibling: child_flags.is_some_and(|f| f.contains(SD_PREFER_SIBLING)),
        numa_lb_rule: v.numa_lb_rule(),
        ..Default::default()
    };
    let mut overloaded = false;
    let all = v.lb_snapshots();
    // A group read whole (no CPU excluded) that has running sums
    // (`lb_group_summed`): the sums when the view keeps them, instead of
    // its CPUs.
    let whole = cpus.is_none();
    let sums = if whole { v.lb_sums() } else { None };
    for (i, g) in sd.groups.iter().enumerate() {
        let kept = if whole && lb_group_summed(sd.span_weight, g.weight) {
            match sums {
                Some(a) => Some(a[g.span_id as usize]),
                None => v.lb_sum(g),
            }
        } else {
            None
        };
        let s = match kept {
            Some(t) => sg_from_sums(&t, pct, &mut overloaded),
            None => sg_stats(v, all, &g.span, cpus, pct, &mut overloaded),
        };
        out.total_load += s.group_load;
        out.total_capacity += s.group_capacity;
        if g.span.test(dst) {
            out.local = s;
            out.local_cores = g.cores.max(1);
            continue;
        }
        if pick_busiest(&s, out.busiest.as_ref().map(|(_, b)| b)) {
            out.busiest_cores = g.cores.max(1);
            out.busiest = Some((i, s));
        }
    }
    out.overloaded = overloaded;
    out
}

/// `sibling_imbalance`: tasks to move so both groups run the same number
/// of tasks per core.
fn sibling_imbalance(idle: CpuIdle, sds: &SdLbStats, busiest: &SgStats, local: &SgStats) -> u64 {
    if idle == CpuIdle::NotIdle || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (sds.busiest_cores as u64, sds.local_cores as u64);
    if nb == nl {
        return (busiest.sum_nr_running as u64).saturating_sub(local.sum_nr_running as u64);
    }
    let mut imb =
        (nl * busiest.sum_nr_running as u64).saturating_sub(nb * local.sum_nr_running as u64);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
        imb = 2;
    }
    imb
}

/// The tasks to move between two has-spare groups of an SD_NUMA domain
/// after the release's NUMA allowance ("Consider allowing a small
/// imbalance between NUMA groups"; [`NumaLbRule`]): `imb` is the idle-CPU
/// or task difference, not yet halved.
fn numa_allowance(
    rule: NumaLbRule,
    sd: &SchedDomain,
    local: &SgStats,
    busiest: &SgStats,
    imb: u64,
) -> u64 {
    let min = NUMA_IMBALANCE_MIN as u64;
    let halved = imb >> 1;
    // 5.18 on: the local group would run at most imb_numa_nr tasks with
    // one more (`local->sum_nr_running + 1 <= imb_numa_nr`).
    let local_light = local.sum_nr_running < sd.imb_numa_nr;
    match rule {
        NumaLbRule::None => halved,
        NumaLbRule::BusiestPair if busiest.sum_nr_running <= NUMA_IMBALANCE_MIN => 0,
        NumaLbRule::BusiestPair => halved,
        NumaLbRule::BusiestQuarter
            if busiest.sum_nr_running < busiest.group_weight >> 2 && halved <= min =>
        {
            0
        }
        NumaLbRule::BusiestQuarter => halved,
        NumaLbRule::LocalImbNumaNrHalved if local_light && halved <= min => 0,
        NumaLbRule::LocalImbNumaNrHalved => halved,
        NumaLbRule::LocalImbNumaNr if local_light && imb <= min => 0,
        NumaLbRule::LocalImbNumaNr => halved,
    }
}

/// `calculate_imbalance`: what to move and how much.
fn calculate_imbalance(
    sd: &SchedDomain,
    idle: CpuIdle,
    sds: &SdLbStats,
    local: &SgStats,
    busiest: &SgStats,
) -> (MigrationType, u64) {
    let lt = local.group_type.unwrap();
    let bt = busiest.group_type.unwrap();
    if lt == GroupType::HasSpare {
        if bt == GroupType::Overloaded && !sd.flags.contains(SD_SHARE_LLC) {
            let imb = local.group_capacity.max(local.group_util) - local.group_util;
            if idle != CpuIdle::NotIdle && imb == 0 {
                return (MigrationType::Task, 1);
            }
            return (MigrationType::Util, imb);
        }
        let imb = if busiest.group_weight == 1 || sds.prefer_sibling {
            sibling_imbalance(idle, sds, busiest, local)
        } else {
            (local.idle_cpus as u64).saturating_sub(busiest.idle_cpus as u64)
        };
        if !sd.flags.contains(SD_NUMA) {
            return (MigrationType::Task, imb >> 1);
        }
        return (
            MigrationType::Task,
            numa_allowance(sds.numa_lb_rule, sd, local, busiest, imb),
        );
    }
    let local_avg = (local.group_load * 1024)
        .checked_div(local.group_capacity)
        .unwrap_or(0);
    let sd_avg = (sds.total_load * 1024)
        .checked_div(sds.total_capacity)
        .unwrap_or(0);
    if lt < GroupType::Overloaded && (local_avg >= busiest.avg_load || local_avg >= sd_avg) {
        return (MigrationType::Load, 0);
    }
    // The kernel's arithmetic is unsigned long (64-bit) and unguarded for
    // a busiest group below the domain average (busiest is chosen by group
    // type first, so an overloaded group can be under the average that a
    // heavier fully-busy group lifts): its term wraps to a huge value and
    // the min takes the local group's room below the average. The local
    // term cannot wrap (local_avg < sd_avg is checked above).
    if !sds.load_imbalance_wraps && busiest.avg_load <= sd_avg {
        return (MigrationType::Load, 0);
    }
    let a = busiest
        .avg_load
        .wrapping_sub(sd_avg)
        .wrapping_mul(busiest.group_capacity);
    let b = sd_avg
        .wrapping_sub(local_avg)
        .wrapping_mul(local.group_capacity);
    (MigrationType::Load, a.min(b) / 1024)
}

/// The outcome of `sched_balance_find_src_group`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrcGroup {
    /// Index of the busiest group in `sd.groups`.
    pub group: usize,
    /// What to move.
    pub migration: MigrationType,
    /// How much.
    pub imbalance: u64,
}

/// `sched_balance_find_src_group`: the group to pull from, or None when the
/// domain is balanced.
pub fn find_src_group(sd: &SchedDomain, idle: CpuIdle, sds: &SdLbStats) -> Option<SrcGroup> {
    let (gi, busiest) = sds.busiest.as_ref()?;
    let local = &sds.local;
    let (lt, bt) = (local.group_type.unwrap(), busiest.group_type.unwrap());
    if lt > bt {
        return None;
    }
    if lt == GroupType::Overloaded {
        let local_avg = local.avg_load;
        let sd_avg = (sds.total_load * 1024)
            .checked_div(sds.total_capacity)
            .unwrap_or(0);
        if local_avg >= busiest.avg_load
            || local_avg >= sd_avg
            || 100 * busiest.avg_load <= sd.imbalance_pct as u64 * local_avg
        {
            return None;
        }
    }
    let force = sds.prefer_sibling
        && lt == GroupType::HasSpare
        && sibling_imbalance(idle, sds, busiest, local) > 1;
    if !force && bt != GroupType::Overloaded {
        if idle == CpuIdle::NotIdle {
            return None;
        }
        if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
            return None;
        }
        if busiest.sum_h_nr_running == 1 {
            return None;
        }
    }
    let (migration, imbalance) = calculate_imbalance(sd, idle, sds, local, busiest);
    (imbalance > 0).then_some(SrcGroup {
        group: *gi,
        migration,
        imbalance,
    })
}

/// `sched_balance_find_src_rq`: the busiest CPU of the busiest group.
pub fn find_src_rq(
    v: &impl CpuView,
    span: &CpuMask,
    cpus: Option<&CpuMask>,
    m: MigrationType,
    imbalance: u64,
) -> Option<CpuId> {
    let mut best: Option<(u64, u64, CpuId)> = None; // (metric, capacity, cpu)
    for c in span.iter().filter(|&c| cpus.is_none_or(|m| m.test(c))) {
        let nr = v.h_nr_runnable(c);
        if nr == 0 {
            continue;
        }
        let cap = v.capacity_of(c);
        match m {
            MigrationType::Load => {
                let load = v.cpu_load(c);
                if nr == 1 && load > imbalance {
                    continue;
                }
                // max load/capacity: load·best_cap > best_load·cap
                if best
                    .is_none_or(|(bl, bc, _)| load as u128 * bc as u128 > bl as u128 * cap as u128)
                {
                    best = Some((load, cap, c));
                }
            }
            MigrationType::Util => {
                if v.nr_running(c) <= 1 {
                    continue;
                }
                let u = v.cpu_util(c);
                if best.is_none_or(|(bu, _, _)| u > bu) {
                    best = Some((u, cap, c));
                }
            }
            MigrationType::Task => {
                if best.is_none_or(|(bn, _, _)| nr as u64 > bn) {
                    best = Some((nr as u64, cap, c));
                }
            }
        }
    }
    best.map(|b| b.2)
}

/// `should_we_balance`: is `dst` the CPU that balances this domain now?
pub fn should_we_balance(v: &impl CpuView, sd: &SchedDomain, dst: CpuId, idle: CpuIdle) -> bool {
    if idle == CpuIdle::NewlyIdle {
        return v.nr_running(dst) == 0;
    }
    let local = &sd.groups[0];
    let smt_domain = sd.flags.contains(SD_SHARE_CPUCAPACITY);
    let m = v.machine();
    let mut idle_smt: Option<CpuId> = None;
    let mut skip = CpuMask::new(m.nr_cpus());
    for c in local.balance_mask.iter() {
        if skip.test(c) || !v.available_idle_cpu(c) {
            continue;
        }
        if !smt_domain && m.has_smt() {
            let core = m.core_span(c);
            if !core.iter().all(|s| v.available_idle_cpu(s)) {
                if idle_smt.is_none() {
                    idle_smt = Some(c);
                }
                for s in core.iter() {
                    skip.set(s);
                }
                continue;
            }
        }
        return c == dst;
    }
    if let Some(c) = idle_smt {
        return c == dst;
    }
    local.balance_cpu == dst
}

/// `task_hot`: would moving a task that last ran `since_ran` ago lose its
/// cache? SCHED_IDLE tasks and SMT domains are never hot; otherwise hot if
/// it ran within `sysctl_sched_migration_cost` (500 µs).
pub fn task_hot(
    sched_idle: bool,
    smt_domain: bool,
    since_ran: crate::time::Nanos,
    migration_cost: crate::time::Nanos,
) -> bool {
    !sched_idle && !smt_domain && since_ran < migration_cost
}

/// The last step of `can_migrate_task`: a hot task moves only once
/// balancing this domain has failed more than `cache_nice_tries` times.
pub fn hot_task_may_move(hot: bool, nr_balance_failed: u32, cache_nice_tries: u32) -> bool {
    !hot || nr_balance_failed > cache_nice_tries
}

/// `detach_tasks`' check that a task does not move too much load
/// (migration type load): from 5.10 ("sched/fair: Relax constraint on
/// task's load during load balance") the task's load halves per failed
/// balance of the domain before it is compared with the imbalance; 5.5-5.9
/// (the load_balance rework) skip a task whose half load exceeds it until
/// the domain has failed more than `cache_nice_tries` times; 5.4 skips it
/// always.
pub fn detach_too_much_load(
    kernel: &str,
    load: u64,
    imbalance: i128,
    nr_balance_failed: u32,
    cache_nice_tries: u32,
) -> bool {
    if crate::kernels::at_least(kernel, 5, 10) {
        (load >> nr_balance_failed.min(63)) as i128 > imbalance
    } else if crate::kernels::at_least(kernel, 5, 5) {
        (load / 2) as i128 > imbalance && nr_balance_failed <= cache_nice_tries
    } else {
        (load / 2) as i128 > imbalance
    }
}

/// The gate of `sched_balance_newidle` for one domain: skip when no CPU is
/// overloaded, or when the CPU's average idle time does not cover the cost
/// spent so far plus this domain's worst newidle cost.
pub fn newidle_worth_it(
    rd_overloaded: bool,
    avg_idle: crate::time::Nanos,
    curr_cost: crate::time::Nanos,
    max_newidle_lb_cost: crate::time::Nanos,
) -> bool {
    rd_overloaded && avg_idle >= curr_cost + max_newidle_lb_cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::domains::SchedDomains;
    use crate::machine::make_test_machine;

    /// A task of load 300 against an imbalance of 200 after 1 and 2
    /// failed balances of a domain with cache_nice_tries 1: 5.10 halves the
    /// load per failure (150 fits after one); 5.5-5.9 compare half the load
    /// (150 fits at once); 5.4 the same, and a load of 500 (250) never fits.
    #[test]
    fn detach_load_rule_by_release() {
        assert!(detach_too_much_load("6.18", 300, 200, 0, 1));
        assert!(!detach_too_much_load("6.18", 300, 200, 1, 1));
        assert!(!detach_too_much_load("5.4", 300, 200, 0, 1));
        assert!(detach_too_much_load("5.4", 500, 200, 5, 1));
        assert!(detach_too_much_load("5.5", 500, 200, 1, 1));
        assert!(!detach_too_much_load("5.5", 500, 200, 2, 1));
        assert!(!detach_too_much_load("5.10", 500, 200, 2, 1));
        assert!(detach_too_much_load("5.10", 500, 200, 1, 1));
    }

    fn sg(nr: u32, weight: u32, load: u64, util: u64, idle: u32) -> SgStats {
        let mut s = SgStats {
            sum_nr_running: nr,
            sum_h_nr_running: nr,
            group_weight: weight,
            group_capacity: 1024 * weight as u64,
            group_load: load,
            group_util: util,
            group_runnable: util,
            idle_cpus: idle,
            ..Default::default()
        };
        let t = group_classify(117, &s);
        s.group_type = Some(t);
        if t == GroupType::Overloaded {
            s.avg_load = s.group_load * 1024 / s.group_capacity;
        }
        s
    }

    fn numa_domain() -> SchedDomain {
        // 2 nodes × 1 LLC × 2 cores: the NUMA level of CPU 0 (groups {0,1}, {2,3}).
        let m = make_test_machine(2, 1, 2, 1);
        let d = SchedDomains::build(&m, 250);
        d.domains(CpuId(0)).last().unwrap().clone()
    }

    #[test]
    fn both_overloaded_imbalance_by_hand() {
        // Busiest: 2 CPUs, 6 tasks, load 6144 → avg_load 6144·1024/2048 = 3072.
        // Local: 2 CPUs, 3 tasks, load 3072 but overloaded (runnable high)
        //   → avg_load 1536. sd_avg = (6144+3072)·1024/4096 = 2304.
        // imbalance = min((3072−2304)·2048, (2304−1536)·2048)/1024 = 1536.
        let sd = numa_domain();
        let local = sg(3, 2, 3072, 2048, 0);
        let busiest = sg(6, 2, 6144, 2048, 0);
        assert_eq!(local.group_type, Some(GroupType::Overloaded));
        let sds = SdLbStats {
            local: local.clone(),
            busiest: Some((1, busiest)),
            total_load: 9216,
            total_capacity: 4096,
            overloaded: true,
            prefer_sibling: false,
            local_cores: 2,
            busiest_cores: 2,
            load_imbalance_wraps: false,
            ..Default::default()
        };
        let src = find_src_group(&sd, CpuIdle::NotIdle, &sds).expect("imbalanced");
        assert_eq!(src.migration, MigrationType::Load);
        assert_eq!(src.imbalance, 1536);
    }

    #[test]
    fn a_busiest_group_below_the_average_wraps_from_5_5_on() {
        // Three single-CPU groups (3 nodes × 1 core). Local runs one
        // SCHED_IDLE task: load 3, util 1024 → fully busy, avg_load 3.
        // Busiest runs two nice-0 tasks: load 2048 → overloaded (chosen by
        // type), avg_load 2048. The third runs one nice −10 task: load
        // 9548, fully busy (a lower type, so not the busiest).
        // sd_avg = (3 + 2048 + 9548)·1024/3072 = 3866 > busiest's 2048.
        // 5.5+: (2048 − 3866) wraps in unsigned long, so the min is the
        // local term: (3866 − 3)·1024/1024 = 3863. Before 5.5 the busiest
        // group at or below the average meant no imbalance.
        let m = make_test_machine(3, 1, 1, 1);
        let d = SchedDomains::build(&m, 250);
        let sd = d.domains(CpuId(0)).last().unwrap().clone();
        assert_eq!(sd.groups.len(), 3);
        let mut local = sg(1, 1, 3, 1024, 0);
        local.avg_load = 3;
        let busiest = sg(2, 1, 2048, 1024, 0);
        assert_eq!(local.group_type, Some(GroupType::FullyBusy));
        assert_eq!(busiest.group_type, Some(GroupType::Overloaded));
        assert_eq!(busiest.avg_load, 2048);
        let mut sds = SdLbStats {
            local,
            busiest: Some((1, busiest)),
            total_load: 3 + 2048 + 9548,
            total_capacity: 3072,
            overloaded: true,
            local_cores: 1,
            busiest_cores: 1,
            load_imbalance_wraps: true,
            ..Default::default()
        };
        let src = find_src_group(&sd, CpuIdle::NotIdle, &sds).expect("5.5+: imbalanced");
        assert_eq!(src.migration, MigrationType::Load);
        assert_eq!(src.imbalance, 3863);
        sds.load_imbalance_wraps = false;
        let pre = find_src_group(&sd, CpuIdle::NotIdle, &sds);
        assert!(
            pre.as_ref().is_none_or(|s| s.imbalance == 0),
            "pre-5.5: {pre:?}"
        );
    }

    #[test]
    fn close_overloaded_groups_are_balanced() {
        // local avg 2900, busiest 3072: 100·3072 = 307200 ≤ 117·2900 = 339300.
        let sd = numa_domain();
        let mut local = sg(5, 2, 5800, 2048, 0);
        local.avg_load = 2900;
        let busiest = sg(6, 2, 6144, 2048, 0);
        let sds = SdLbStats {
            local,
            busiest: Some((1, busiest)),
            total_load: 11944,
            total_capacity: 4096,
            ..Default::default()
        };
        assert_eq!(find_src_group(&sd, CpuIdle::NotIdle, &sds), None);
    }

    #[test]
    fn idle_cpus_are_evened_out_between_spare_groups() {
        // Local 2 idle CPUs, busiest 0 idle (3 tasks on 2 CPUs, low util):
        // an idle dst, NUMA domain, no prefer_sibling: imbalance =
        // (2 − 0) >> 1 = 1 task, unless the NUMA allowance keeps it local
        // (local would have 1 task ≤ imb_numa_nr and imbalance ≤ 2).
        let sd = numa_domain();
        let local = sg(0, 2, 0, 0, 2);
        let busiest = sg(3, 2, 3072, 900, 0);
        assert_eq!(busiest.group_type, Some(GroupType::HasSpare));
        let sds = SdLbStats {
            local,
            busiest: Some((1, busiest)),
            total_load: 3072,
            total_capacity: 4096,
            ..Default::default()
        };
        let got = find_src_group(&sd, CpuIdle::Idle, &sds);
        if sd.imb_numa_nr >= 1 {
            assert_eq!(got, None, "NUMA allowance (imb_numa_nr {})", sd.imb_numa_nr);
        } else {
            assert_eq!(got.map(|g| g.imbalance), Some(1));
        }
        // A busy dst never pulls from a group that is not overloaded.
        assert_eq!(find_src_group(&sd, CpuIdle::NotIdle, &sds), None);
    }

    /// The NUMA level of CPU 0 on 2 nodes × 1 LLC × `cores` cores.
    fn numa_level(cores: u32) -> SchedDomain {
        let m = make_test_machine(2, 1, cores, 1);
        let d = SchedDomains::build(&m, 250);
        d.domains(CpuId(0)).last().unwrap().clone()
    }

    /// What a listed release moves from `busiest` to an idle `local`, both
    /// has-spare, at the NUMA level `sd`: `calculate_imbalance`'s answer,
    /// checked against `find_src_group` (None when it is 0) so that the
    /// case passes the balanced tests before it.
    fn numa_spare_move(
        kernel: &str,
        sd: &SchedDomain,
        local: SgStats,
        busiest: SgStats,
    ) -> (MigrationType, u64) {
        assert_eq!(local.group_type, Some(GroupType::HasSpare));
        assert_eq!(busiest.group_type, Some(GroupType::HasSpare));
        let sds = SdLbStats {
            total_load: local.group_load + busiest.group_load,
            total_capacity: local.group_capacity + busiest.group_capacity,
            local,
            busiest: Some((1, busiest)),
            numa_lb_rule: NumaLbRule::for_kernel(kernel),
            ..Default::default()
        };
        let b = &sds.busiest.as_ref().unwrap().1;
        let got = calculate_imbalance(sd, CpuIdle::Idle, &sds, &sds.local, b);
        let src = find_src_group(sd, CpuIdle::Idle, &sds).map(|g| (g.migration, g.imbalance));
        assert_eq!(src, (got.1 > 0).then_some(got), "{kernel}");
        got
    }

    /// One release per rule: before 5.6, 5.6-5.10, 5.11-5.17, 5.18-5.19,
    /// 6.0 on.
    const NUMA_LB_RELEASES: [&str; 5] = ["5.4", "5.10", "5.15", "5.19", "6.1"];

    fn numa_spare_moves(sd: &SchedDomain, local: &SgStats, busiest: &SgStats) -> Vec<u64> {
        NUMA_LB_RELEASES
            .iter()
            .map(|k| {
                let (m, imb) = numa_spare_move(k, sd, local.clone(), busiest.clone());
                assert_eq!(m, MigrationType::Task, "{k}");
                imb
            })
            .collect()
    }

    #[test]
    fn numa_lb_rule_by_release() {
        use NumaLbRule::*;
        let rules: Vec<_> = NUMA_LB_RELEASES
            .iter()
            .map(|k| NumaLbRule::for_kernel(k))
            .collect();
        assert_eq!(
            rules,
            [
                None,
                BusiestPair,
                BusiestQuarter,
                LocalImbNumaNrHalved,
                LocalImbNumaNr
            ]
        );
        assert_eq!(NumaLbRule::for_kernel("tip"), LocalImbNumaNr);
        assert_eq!(NumaLbRule::default(), LocalImbNumaNr);
    }

    #[test]
    fn numa_allowance_a_pair_on_the_busiest_node() {
        // Nodes of 8 CPUs, imb_numa_nr 8 >> 3 = 1. Local node empty (8
        // idle), busiest runs 2 tasks on 2 CPUs (6 idle): difference 2.
        // 5.4: no allowance, 2 >> 1 = 1 task.
        // 5.6: busiest runs 2 <= 2 tasks: 0.
        // 5.11: busiest 2 < 8 >> 2 = 2 fails: 1 task.
        // 5.18: halved 1 <= 2, local 0 + 1 <= 1: 0.
        // 6.0: whole 2 <= 2, local 0 + 1 <= 1: 0.
        let sd = numa_level(8);
        assert_eq!(sd.imb_numa_nr, 1);
        let local = sg(0, 8, 0, 0, 8);
        let busiest = sg(2, 8, 2048, 400, 6);
        assert_eq!(numa_spare_moves(&sd, &local, &busiest), [1, 0, 1, 0, 0]);
    }

    #[test]
    fn numa_allowance_three_tasks_two_stacked() {
        // Nodes of 8 CPUs (imb_numa_nr 1). Local empty (8 idle), busiest
        // runs 3 tasks on 2 CPUs (6 idle): difference 2.
        // 5.4: 1. 5.6: busiest 3 > 2: 1. 5.11: 3 < 2 fails: 1.
        // 5.18: halved 1 <= 2, 0 + 1 <= 1: 0. 6.0: 2 <= 2, 0 + 1 <= 1: 0.
        let sd = numa_level(8);
        let local = sg(0, 8, 0, 0, 8);
        let busiest = sg(3, 8, 3072, 600, 6);
        assert_eq!(numa_spare_moves(&sd, &local, &busiest), [1, 1, 1, 0, 0]);
    }

    #[test]
    fn numa_allowance_under_a_quarter_of_the_busiest_node() {
        // Nodes of 16 CPUs, imb_numa_nr 16 >> 3 = 2. Local empty (16
        // idle), busiest runs 3 tasks on 3 CPUs (13 idle): difference 3.
        // 5.4: 3 >> 1 = 1. 5.6: busiest 3 > 2: 1.
        // 5.11: busiest 3 < 16 >> 2 = 4 and halved 1 <= 2: 0.
        // 5.18: halved 1 <= 2, local 0 + 1 <= 2: 0.
        // 6.0: whole 3 > 2: 1.
        let sd = numa_level(16);
        assert_eq!(sd.imb_numa_nr, 2);
        let local = sg(0, 16, 0, 0, 16);
        let busiest = sg(3, 16, 3072, 600, 13);
        assert_eq!(numa_spare_moves(&sd, &local, &busiest), [1, 1, 0, 0, 1]);
    }

    #[test]
    fn numa_allowance_halved_first_at_the_imb_numa_nr_edge() {
        // Nodes of 16 CPUs (imb_numa_nr 2). Local runs 1 task (15 idle),
        // busiest 5 tasks on 5 CPUs (11 idle): difference 4.
        // 5.4, 5.6 (5 > 2), 5.11 (5 < 4 fails): 4 >> 1 = 2 tasks.
        // 5.18: halved 2 <= 2 and local 1 + 1 <= 2 (the `<=` of v6 of
        // e496132ebedd; v5's `<` would keep 2): 0.
        // 6.0: whole 4 > 2: 2 tasks.
        let sd = numa_level(16);
        let local = sg(1, 16, 1024, 200, 15);
        let busiest = sg(5, 16, 5120, 1000, 11);
        assert_eq!(numa_spare_moves(&sd, &local, &busiest), [2, 2, 2, 0, 2]);
    }

    #[test]
    fn cache_hot_task_stays_until_balancing_has_failed_enough() {
        // Ran 200 µs ago, migration cost 500 µs: hot (not on SMT, not SCHED_IDLE).
        let hot = task_hot(false, false, 200_000, 500_000);
        assert!(hot);
        assert!(
            !task_hot(true, false, 200_000, 500_000),
            "SCHED_IDLE is never hot"
        );
        assert!(
            !task_hot(false, true, 200_000, 500_000),
            "SMT siblings share the cache"
        );
        assert!(!task_hot(false, false, 600_000, 500_000));
        // LLC domain: cache_nice_tries 1 → needs 2 failures.
        assert!(!hot_task_may_move(hot, 0, 1));
        assert!(!hot_task_may_move(hot, 1, 1));
        assert!(hot_task_may_move(hot, 2, 1));
        assert!(hot_task_may_move(false, 0, 1));
    }

    #[test]
    fn newidle_is_skipped_when_avg_idle_is_below_the_cost() {
        // avg_idle 20 µs, domain cost 30 µs → skip; 50 µs → go.
        assert!(!newidle_worth_it(true, 20_000, 0, 30_000));
        assert!(newidle_worth_it(true, 50_000, 0, 30_000));
        // Cost already spent at lower levels counts: 50 < 25 + 30.
        assert!(!newidle_worth_it(true, 50_000, 25_000, 30_000));
        // Nothing overloaded: nothing to pull.
        assert!(!newidle_worth_it(false, 1_000_000, 0, 0));
    }
}
