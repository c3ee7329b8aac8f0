//! Wakeup and fork placement (`select_task_rq_fair`).
//!
//! Kernel reference: fair.c `select_task_rq_fair`, `wake_wide`,
//! `wake_affine{,_idle,_weight}`, `select_idle_sibling`, `select_idle_smt`,
//! `select_idle_core`, `select_idle_cpu` (SIS_UTIL), and the slow path
//! `sched_balance_find_dst_cpu` / `_group` / `_group_cpu`
//! (kernel-model.md §5), tip-2026.
//!
//! ```text
//!  select_task_rq_fair(p, prev, this=waker cpu)
//!    wakeup: want_affine = !wake_wide && this allowed
//!    walk this's domains bottom-up:
//!      WAKE_AFFINE domain spanning prev → new = wake_affine(this, prev); stop
//!      domain with SD_BALANCE_FORK (fork) → remember it
//!    fork  → slow path from the highest remembered domain down
//!    wake  → select_idle_sibling(prev, new): target, prev, recent_used_cpu,
//!            idle SMT sibling, scan of the LLC (idle cores / SIS_UTIL depth)
//! ```
//!
//! SCHED_IDLE_AS_IDLE lives in one place,
//! [`CpuView::sched_idle_counts_as_idle`]: every placement path that asks
//! "is this CPU idle enough to take the task?" goes through it (the fast
//! path via [`CpuView::idle_for_placement`], the slow path directly, since
//! it prefers such a CPU even to a truly idle one). With the switch off only truly idle CPUs qualify (the
//! kernel before 5.4, where only wakeup preemption knew about SCHED_IDLE).
//!
//! Deviations:
//! * No energy-aware placement, no asymmetric capacity, no core
//!   scheduling, no per-CPU kthread stacking (step 3): the simulated tasks
//!   are all user threads.
//! * The slow path's group comparison keeps the overloaded/fully-busy and
//!   has-spare rules of §5.4 and the NUMA small-imbalance allowance, but
//!   not the NUMA-balancing preferred-node rules (no task has a preferred
//!   node: NUMA balancing is not modelled).

use super::balance::stats::{group_classify, GroupType, SgStats};
use crate::ids::CpuId;
use crate::machine::domains::{
    SchedDomain, SchedDomains, NUMA_IMBALANCE_MIN, SD_BALANCE_FORK, SD_NUMA, SD_WAKE_AFFINE,
};
use crate::machine::{CpuMask, Machine};
use crate::time::Nanos;

/// What placement may ask about CPUs.
pub trait CpuView {
    /// The machine.
    fn machine(&self) -> &Machine;
    /// Its sched domains.
    fn domains(&self) -> &SchedDomains;
    /// SCHED_IDLE_AS_IDLE.
    fn sched_idle_as_idle(&self) -> bool;
    /// Which release's NUMA rule the fork/exec path applies between two
    /// has-spare groups (see [`NumaForkRule`]); the current one by default.
    fn numa_fork_rule(&self) -> NumaForkRule {
        NumaForkRule::ImbNumaNrIdle
    }
    /// Which release's NUMA allowance the load balancer's
    /// `calculate_imbalance` applies between two has-spare groups (see
    /// [`NumaLbRule`]); the current one by default.
    fn numa_lb_rule(&self) -> NumaLbRule {
        NumaLbRule::LocalImbNumaNr
    }
    /// `available_idle_cpu`: idle task running, nothing queued, no wakeup
    /// in flight.
    fn available_idle_cpu(&self, cpu: CpuId) -> bool;
    /// `sched_idle_cpu`: runs only SCHED_IDLE tasks.
    fn sched_idle_cpu(&self, cpu: CpuId) -> bool;
    /// Runnable tasks of all classes (in-flight wakeups included).
    fn nr_running(&self, cpu: CpuId) -> u32;
    /// Runnable fair tasks, delayed ones excluded (`cfs.h_nr_runnable`).
    fn h_nr_runnable(&self, cpu: CpuId) -> u32;
    /// `cpu_load`.
    fn cpu_load(&self, cpu: CpuId) -> u64;
    /// `cpu_util_cfs`.
    fn cpu_util(&self, cpu: CpuId) -> u64;
    /// `cpu_runnable`.
    fn cpu_runnable(&self, cpu: CpuId) -> u64;
    /// `capacity_of`.
    fn capacity_of(&self, cpu: CpuId) -> u64 {
        self.machine().cpu(cpu).capacity as u64
    }
    /// Exit latency of the idle state the CPU is in (0 when not idle).
    fn idle_exit_latency(&self, cpu: CpuId) -> u64;
    /// When the CPU went idle (for the slow path's tie break).
    fn idle_stamp(&self, cpu: CpuId) -> u64;
    /// `sd_llc_shared->has_idle_cores` of `cpu`'s LLC.
    fn has_idle_cores(&self, cpu: CpuId) -> bool;
    /// `sd_llc_shared->nr_idle_scan` of `cpu`'s LLC (SIS_UTIL).
    fn nr_idle_scan(&self, cpu: CpuId) -> u32;
    /// `sched_feat(SIS_UTIL)`: [`Self::nr_idle_scan`] is SIS_UTIL's depth,
    /// whose zero stops `select_idle_cpu` before any scan, an idle-core
    /// scan included; otherwise it is SIS_PROP's bound (or none), which
    /// only a scan for an idle CPU obeys.
    fn sis_util(&self) -> bool;
    /// `sched_feat(SIS_PROP)` (before 5.19): the idle-CPU scan's depth
    /// comes from the measured `avg_scan_cost`, which the scan updates.
    fn sis_prop(&self) -> bool {
        false
    }

    /// Every CPU's [`LbSnapshot`] in one dense array indexed by CPU, when
    /// the view keeps one (the simulator does, `sched/lb_snapshot.rs`);
    /// None: ask [`Self::lb_snapshot`] CPU by CPU. The two give the same
    /// figures.
    fn lb_snapshots(&self) -> Option<&[LbSnapshot]> {
        None
    }

    /// The running sums of every group span the view keeps them for
    /// (indexed by [`crate::machine::domains::SchedGroup::span_id`]: every
    /// group [`lb_group_summed`] names), when the view keeps
    /// them (the simulator does, `sched/lb_snapshot.rs`); None: ask
    /// [`Self::lb_sum`] group by group.
    fn lb_sums(&self) -> Option<&[LbSums]> {
        None
    }

    /// The running sums of one group that [`lb_group_summed`] names; None
    /// when the view keeps none (then the group's CPUs are walked). Equal
    /// to [`LbSums::of`] the group's snapshots.
    fn lb_sum(&self, _g: &crate::machine::domains::SchedGroup) -> Option<LbSums> {
        None
    }

    /// Everything group statistics read about one CPU, in one call.
    fn lb_snapshot(&self, cpu: CpuId) -> LbSnapshot {
        let nr = self.nr_running(cpu);
        LbSnapshot {
            load: self.cpu_load(cpu),
            util: self.cpu_util(cpu),
            runnable: self.cpu_runnable(cpu),
            h_nr_runnable: self.h_nr_runnable(cpu),
            nr_running: nr,
            idle: nr == 0 && self.available_idle_cpu(cpu),
            capacity: self.capacity_of(cpu),
        }
    }

    /// SCHED_IDLE_AS_IDLE, the one place: does placement treat this CPU,
    /// which runs only SCHED_IDLE tasks, as idle?
    fn sched_idle_counts_as_idle(&self, cpu: CpuId) -> bool {
        self.sched_idle_as_idle() && self.sched_idle_cpu(cpu)
    }

    /// The question every placement path asks: may a task be put on `cpu`
    /// as on an idle CPU? Truly idle CPUs always; CPUs running only
    /// SCHED_IDLE tasks when [`Self::sched_idle_counts_as_idle`] says so.
    fn idle_for_placement(&self, cpu: CpuId) -> bool {
        self.available_idle_cpu(cpu) || self.sched_idle_counts_as_idle(cpu)
    }
}

/// What balancing statistics read about one CPU.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LbSnapshot {
    /// `cpu_load`.
    pub load: u64,
    /// `cpu_util_cfs`.
    pub util: u64,
    /// `cpu_runnable`.
    pub runnable: u64,
    /// `cfs.h_nr_runnable`.
    pub h_nr_runnable: u32,
    /// `nr_running` (+ in-flight wakeups).
    pub nr_running: u32,
    /// Idle with nothing queued or in flight.
    pub idle: bool,
    /// `capacity_of`.
    pub capacity: u64,
}

/// A group has running sums ([`LbSums`]) when it has more than one CPU
/// and belongs to a domain of at least [`LB_SUM_MIN_DOMAIN`] CPUs; other
/// groups are walked. Not a model figure, a cost choice: every kept sum
/// costs an update on each refresh of each of its CPUs, and only passes
/// over a domain of many CPUs read enough of them to repay it. Measured
/// (callgrind): periodic-160 (icx, MC domain of 80
/// CPUs in 40 groups of 2) -5.2 % instructions with sums for every group
/// of 2 or more CPUs; periodic-8-dense (a7-octa, top domain of 8 CPUs in
/// 2 groups of 4) +2.3 % with them, where passes are one per 25 events.
pub const LB_SUM_MIN_DOMAIN: u32 = 16;

/// Whether a group of `group_weight` CPUs of a domain of `domain_weight`
/// has running sums ([`LB_SUM_MIN_DOMAIN`]).
#[inline]
pub fn lb_group_summed(domain_weight: u32, group_weight: u32) -> bool {
    group_weight > 1 && domain_weight >= LB_SUM_MIN_DOMAIN
}

/// What `update_sg_lb_stats` sums over a group's CPUs, kept for a group
/// span as a running total of its CPUs' [`LbSnapshot`]s: a CPU's change
/// adds the difference. Everything the group statistics take from the
/// CPUs is a sum or a count of an integer figure, so the total is exact
/// (wrapping arithmetic: the same value modulo 2^64 as adding the CPUs in
/// order, which never comes near wrapping).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LbSums {
    /// Σ `cpu_load`.
    pub load: u64,
    /// Σ `cpu_util_cfs`.
    pub util: u64,
    /// Σ `cpu_runnable`.
    pub runnable: u64,
    /// Σ `capacity_of`.
    pub capacity: u64,
    /// Σ `h_nr_runnable`.
    pub h_nr_runnable: u32,
    /// Σ `nr_running`.
    pub nr_running: u32,
    /// CPUs with more than one runnable task (`sg_overloaded` is this > 0).
    pub overloaded_cpus: u32,
    /// Idle CPUs.
    pub idle_cpus: u32,
    /// CPUs.
    pub weight: u32,
}

impl LbSums {
    /// One CPU's contribution.
    #[inline]
    pub fn one(l: &LbSnapshot) -> LbSums {
        LbSums {
            load: l.load,
            util: l.util,
            runnable: l.runnable,
            capacity: l.capacity,
            h_nr_runnable: l.h_nr_runnable,
            nr_running: l.nr_running,
            overloaded_cpus: (l.nr_running > 1) as u32,
            idle_cpus: l.idle as u32,
            weight: 1,
        }
    }

    /// `self + o` (wrapping).
    #[inline]
    pub fn add(&mut self, o: &LbSums) {
        self.load = self.load.wrapping_add(o.load);
        self.util = self.util.wrapping_add(o.util);
        self.runnable = self.runnable.wrapping_add(o.runnable);
        self.capacity = self.capacity.wrapping_add(o.capacity);
        self.h_nr_runnable = self.h_nr_runnable.wrapping_add(o.h_nr_runnable);
        self.nr_running = self.nr_running.wrapping_add(o.nr_running);
        self.overloaded_cpus = self.overloaded_cpus.wrapping_add(o.overloaded_cpus);
        self.idle_cpus = self.idle_cpus.wrapping_add(o.idle_cpus);
        self.weight = self.weight.wrapping_add(o.weight);
    }

    /// `new - old` (wrapping): what [`Self::add`] applies when one CPU's
    /// snapshot goes from `old` to `new`.
    #[inline]
    pub fn delta(old: &LbSnapshot, new: &LbSnapshot) -> LbSums {
        let (o, n) = (LbSums::one(old), LbSums::one(new));
        LbSums {
            load: n.load.wrapping_sub(o.load),
            util: n.util.wrapping_sub(o.util),
            runnable: n.runnable.wrapping_sub(o.runnable),
            capacity: n.capacity.wrapping_sub(o.capacity),
            h_nr_runnable: n.h_nr_runnable.wrapping_sub(o.h_nr_runnable),
            nr_running: n.nr_running.wrapping_sub(o.nr_running),
            overloaded_cpus: n.overloaded_cpus.wrapping_sub(o.overloaded_cpus),
            idle_cpus: n.idle_cpus.wrapping_sub(o.idle_cpus),
            weight: 0,
        }
    }

    /// The sums of `span`'s CPUs, walking `snap` (what a kept sum must
    /// equal).
    pub fn of(span: &CpuMask, mut snap: impl FnMut(CpuId) -> LbSnapshot) -> LbSums {
        let mut s = LbSums::default();
        for c in span.iter() {
            s.add(&LbSums::one(&snap(c)));
        }
        s
    }
}

/// The task being placed, as placement sees it.
#[derive(Clone, Debug)]
pub struct PlaceTask<'a> {
    /// Allowed CPUs.
    pub allowed: &'a CpuMask,
    /// CPU it last ran on.
    pub prev: CpuId,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: CpuId,
    /// `p->wakee_flips`.
    pub wakee_flips: u32,
    /// `task_h_load(p)` (flat hierarchy: its PELT load).
    pub load: u64,
}

/// The waker, for wake_wide / wake_affine.
#[derive(Copy, Clone, Debug)]
pub struct Waker {
    /// CPU doing the wakeup.
    pub cpu: CpuId,
    /// `current->wakee_flips`.
    pub wakee_flips: u32,
    /// `task_h_load(current)` (for WF_SYNC).
    pub load: u64,
    /// WF_SYNC and the waker is not exiting.
    pub sync: bool,
}

/// The decision and its side effects.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The CPU chosen.
    pub cpu: CpuId,
    /// The new `p->recent_used_cpu`.
    pub recent_used_cpu: CpuId,
    /// wake_affine picked the waker's CPU (`ttwu_move_affine`).
    pub affine: bool,
    /// An idle-core scan of this CPU's LLC failed: clear `has_idle_cores`.
    pub clear_idle_cores: Option<CpuId>,
    /// The waker's CPU time for the runqueue lines `select_idle_sibling`
    /// read on other CPUs (`Probes`), the scan's included.
    pub probes: ProbeCost,
    /// The part of [`Self::probes`] spent in `select_idle_cpu`'s loop
    /// when SIS_PROP bounded it, with a CPU of the LLC scanned: the time
    /// the kernel measures into `avg_scan_cost`. None when no bounded scan
    /// ran.
    pub scan_ns: Option<(CpuId, Nanos)>,
}

/// `update_avg(&avg, sample)`: the average moves an eighth of the way to
/// the sample (SIS_PROP's `avg_scan_cost`; integer division toward zero,
/// as the kernel's signed `diff / 8`).
pub fn update_avg(avg: Nanos, sample: Nanos) -> Nanos {
    let diff = sample as i64 - avg as i64;
    (avg as i64 + diff / 8) as Nanos
}

/// The cache lines `select_idle_sibling` reads of other CPUs' runqueues,
/// priced at the machine's line transfer from the reading (waking) CPU.
///
/// Kernel rule: `available_idle_cpu(cpu)` reads `cpu`'s runqueue (`curr`,
/// `nr_running`, the pending-wakeup flag), one line the owner rewrites at
/// every enqueue, dequeue and switch, so a waker on another CPU takes a
/// transfer for it. `sched_idle_cpu(cpu)` (SCHED_IDLE_AS_IDLE, evaluated
/// only when the CPU is not idle: `available_idle_cpu(cpu) ||
/// sched_idle_cpu(cpu)`) reads `rq->cfs.idle_h_nr_running`, a second line
/// (in the embedded `cfs_rq`, beside `h_nr_running`, as often rewritten).
/// A read of the reader's own runqueue costs nothing extra. Every read is
/// one transfer at `Machine::line_transfer_ns` of the two CPUs' distance
/// (the preset's figure; no cache-state model beyond it).
#[derive(Copy, Clone, Debug)]
struct Probes {
    reader: CpuId,
    cost: ProbeCost,
}

/// What `Probes` cost, by the kernel function that reads.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeCost {
    /// `available_idle_cpu`'s reads.
    pub available_idle_ns: Nanos,
    /// `sched_idle_cpu`'s reads.
    pub sched_idle_ns: Nanos,
}

impl ProbeCost {
    /// Both.
    pub fn total(&self) -> Nanos {
        self.available_idle_ns + self.sched_idle_ns
    }
}

impl Probes {
    fn line(&self, v: &impl CpuView, c: CpuId) -> Nanos {
        if c == self.reader {
            0
        } else {
            v.machine().line_transfer_ns(self.reader, c)
        }
    }

    /// `available_idle_cpu(c)`, priced.
    fn available_idle(&mut self, v: &impl CpuView, c: CpuId) -> bool {
        self.cost.available_idle_ns += self.line(v, c);
        v.available_idle_cpu(c)
    }

    /// `sched_idle_cpu(c)`, priced, where placement asks it: only under
    /// SCHED_IDLE_AS_IDLE (without it nothing is read and the answer is no).
    fn sched_idle(&mut self, v: &impl CpuView, c: CpuId) -> bool {
        if !v.sched_idle_as_idle() {
            return false;
        }
        self.cost.sched_idle_ns += self.line(v, c);
        v.sched_idle_counts_as_idle(c)
    }

    /// [`CpuView::idle_for_placement`], priced: the `sched_idle_cpu` read
    /// only when the CPU is not idle and SCHED_IDLE_AS_IDLE makes the
    /// kernel ask.
    fn idle(&mut self, v: &impl CpuView, c: CpuId) -> bool {
        self.available_idle(v, c) || self.sched_idle(v, c)
    }
}

/// `wake_wide`: many-to-many wakeup patterns spread instead of pulling.
pub fn wake_wide(v: &impl CpuView, p: &PlaceTask, w: &Waker) -> bool {
    let llc_size = v.domains().shortcuts(w.cpu).sd_llc_size.max(1);
    let (master, slave) = if w.wakee_flips >= p.wakee_flips {
        (w.wakee_flips, p.wakee_flips)
    } else {
        (p.wakee_flips, w.wakee_flips)
    };
    !(slave < llc_size || master < slave * llc_size)
}

/// `wake_affine_idle`.
fn wake_affine_idle(v: &impl CpuView, this: CpuId, prev: CpuId, sync: bool) -> Option<CpuId> {
    if v.available_idle_cpu(this) && v.domains().cpus_share_cache(this, prev) {
        return Some(if v.available_idle_cpu(prev) {
            prev
        } else {
            this
        });
    }
    if sync && v.h_nr_runnable(this) == 1 {
        return Some(this);
    }
    if v.available_idle_cpu(prev) {
        return Some(prev);
    }
    None
}

/// `wake_affine_weight` (WA_BIAS on).
fn wake_affine_weight(
    v: &impl CpuView,
    pct: u32,
    p: &PlaceTask,
    w: &Waker,
    prev: CpuId,
) -> Option<CpuId> {
    let this = w.cpu;
    let mut this_eff = v.cpu_load(this) as i128;
    if w.sync {
        let current = w.load as i128;
        if current > this_eff {
            return Some(this);
        }
        this_eff -= current;
    }
    let task = p.load as i128;
    this_eff += task;
    this_eff *= 100;
    this_eff *= v.capacity_of(prev) as i128;
    let mut prev_eff = (v.cpu_load(prev) as i128 - task).max(0);
    prev_eff *= 100 + (pct as i128 - 100) / 2;
    prev_eff *= v.capacity_of(this) as i128;
    if w.sync {
        prev_eff += 1;
    }
    (this_eff < prev_eff).then_some(this)
}

/// `wake_affine`: the waker's CPU or prev. Returns (cpu, moved to waker).
pub fn wake_affine(
    v: &impl CpuView,
    pct: u32,
    p: &PlaceTask,
    w: &Waker,
    prev: CpuId,
) -> (CpuId, bool) {
    let target =
        wake_affine_idle(v, w.cpu, prev, w.sync).or_else(|| wake_affine_weight(v, pct, p, w, prev));
    match target {
        Some(t) => (t, t == w.cpu && t != prev),
        None => (prev, false),
    }
}

/// `select_idle_smt`: an idle SMT sibling of `prev` in the LLC.
fn select_idle_smt(
    v: &impl CpuView,
    p: &PlaceTask,
    llc: &CpuMask,
    prev: CpuId,
    probes: &mut Probes,
) -> Option<CpuId> {
    v.machine()
        .core_siblings(prev)
        .iter()
        .copied()
        .filter(|&c| c != prev && p.allowed.test(c) && llc.test(c))
        .find(|&c| probes.idle(v, c))
}

/// `select_idle_core`: `core`'s CPU if the whole core is truly idle;
/// remembers the first acceptable CPU (in the LLC and allowed; a
/// SCHED_IDLE-only one included) in `fallback`.
fn select_idle_core(
    v: &impl CpuView,
    llc: &CpuMask,
    allowed: &CpuMask,
    core: CpuId,
    fallback: &mut Option<CpuId>,
    probes: &mut Probes,
) -> Option<CpuId> {
    let mut idle = true;
    let ok = |c: CpuId| llc.test(c) && allowed.test(c);
    for &c in v.machine().core_siblings(core) {
        if !probes.available_idle(v, c) {
            idle = false;
            if fallback.is_none() {
                if probes.sched_idle(v, c) && ok(c) {
                    *fallback = Some(c);
                    break;
                }
                continue;
            }
            break;
        }
        if fallback.is_none() && ok(c) {
            *fallback = Some(c);
        }
    }
    idle.then_some(core)
}

/// `select_idle_cpu`: scan the LLC from `target + 1` for an idle core
/// (when the LLC has one) or an idle CPU, bounded by SIS_UTIL.
///
/// The kernel builds `cpus = sd_llc span & p->cpus_ptr` in a per-CPU
/// scratch mask; here the scan walks that intersection a word at a time
/// without building it (and the target's cluster first, then the rest),
/// and the cores already scanned are recognised from the scan order
/// instead of being marked in a mask: nothing is allocated per wakeup.
fn select_idle_cpu(
    v: &impl CpuView,
    p: &PlaceTask,
    llc: &CpuMask,
    llc_weight: usize,
    has_idle_core: bool,
    target: CpuId,
    probes: &mut Probes,
) -> (Option<CpuId>, bool) {
    let m = v.machine();
    let n = m.nr_cpus();
    let allowed = p.allowed;
    let mut nr: i64 = i64::MAX;
    // SIS_UTIL (6.0 on, 70fb5ccf2ebb; docs/kernels.md): `nr =
    // nr_idle_scan + 1`, and `nr == 1` ("overloaded LLC is unlikely to
    // have idle cpu/core") ends the search whether or not the LLC claims
    // an idle core; the depth then bounds only the idle-CPU scan. SIS_PROP
    // (before 6.0) computed its bound only for that scan (`SIS_PROP &&
    // !has_idle_core`).
    if v.sis_util() || !has_idle_core {
        nr = v.nr_idle_scan(target) as i64 + 1;
        if nr == 1 {
            return (None, false);
        }
    }
    let start = CpuId((target.0 + 1) % n as u32);
    let mut fallback = None;
    // Clusters: the target's cluster first.
    let cluster = m.cluster_span(target);
    let cw = m.cluster_weight(target);
    let clusters_active = cw > m.core_siblings(target).len() && cw < llc_weight;
    let in_first = move |i: usize| {
        if clusters_active {
            cluster.word(i)
        } else {
            0
        }
    };
    let order = CpuMask::iter_wrap_words(n, start, move |i| {
        llc.word(i) & allowed.word(i) & in_first(i)
    })
    .chain(CpuMask::iter_wrap_words(n, start, move |i| {
        llc.word(i) & allowed.word(i) & !in_first(i)
    }));
    // A CPU's place in `order`: the first part, then the wrapping distance
    // from `start`.
    let place = |c: CpuId| {
        let first = clusters_active && cluster.test(c);
        // (c - start) mod n for c, start < n, without a division.
        let d = c.idx() + n - start.idx();
        (!first, if d >= n { d - n } else { d })
    };
    for c in order {
        if has_idle_core {
            // The core was scanned already if a sibling of c came earlier
            // in the order (every CPU of `order` is scanned or skipped
            // because its core was).
            let pc = place(c);
            let done = m
                .core_siblings(c)
                .iter()
                .any(|&s| s != c && llc.test(s) && allowed.test(s) && place(s) < pc);
            if done {
                continue;
            }
            if let Some(i) = select_idle_core(v, llc, allowed, c, &mut fallback, probes) {
                return (Some(i), false);
            }
        } else {
            nr -= 1;
            if nr <= 0 {
                return (None, false);
            }
            if probes.idle(v, c) {
                return (Some(c), false);
            }
        }
    }
    // The idle-core scan failed: the LLC has no idle core any more.
    (fallback, has_idle_core)
}

/// `select_idle_sibling(p, prev, target)`.
///
/// `reader` is the CPU doing the wakeup: the runqueue reads of other CPUs
/// are priced from it (`Probes`, [`Placement::probes`]).
pub fn select_idle_sibling(
    v: &impl CpuView,
    p: &PlaceTask,
    prev: CpuId,
    target: CpuId,
    reader: CpuId,
) -> Placement {
    let mut probes = Probes {
        reader,
        cost: ProbeCost::default(),
    };
    let mut out = Placement {
        cpu: target,
        recent_used_cpu: p.recent_used_cpu,
        affine: false,
        clear_idle_cores: None,
        probes: ProbeCost::default(),
        scan_ns: None,
    };
    sis_search(v, p, prev, target, &mut probes, &mut out);
    out.probes = probes.cost;
    out
}

/// The steps of [`select_idle_sibling`]: each that finds a CPU sets
/// `out.cpu` and ends the search; `probes` prices every runqueue read.
fn sis_search(
    v: &impl CpuView,
    p: &PlaceTask,
    prev: CpuId,
    target: CpuId,
    probes: &mut Probes,
    out: &mut Placement,
) {
    let d = v.domains();
    // 1. The target itself.
    if probes.idle(v, target) {
        return;
    }
    // 2. prev, if it shares the LLC with target.
    if prev != target
        && d.cpus_share_cache(prev, target)
        && probes.idle(v, prev)
        && p.allowed.test(prev)
    {
        out.cpu = prev;
        return;
    }
    // 4. recent_used_cpu.
    let recent = p.recent_used_cpu;
    out.recent_used_cpu = prev;
    if recent != prev
        && recent != target
        && d.cpus_share_cache(recent, target)
        && probes.idle(v, recent)
        && p.allowed.test(recent)
    {
        out.cpu = recent;
        return;
    }
    // 6. The LLC.
    let Some(sd) = d.sd_llc(target) else {
        return;
    };
    let llc: &CpuMask = &sd.span;
    // 7. SMT: an idle sibling of prev when no core is idle.
    let smt = v.machine().has_smt();
    let has_idle_core = smt && v.has_idle_cores(target);
    if smt && !has_idle_core && d.cpus_share_cache(prev, target) {
        if let Some(c) = select_idle_smt(v, p, llc, prev, probes) {
            out.cpu = c;
            return;
        }
    }
    // 8. Scan. SIS_PROP measures the loop's time into avg_scan_cost when
    // it bounded the loop (no idle core sought).
    let before = probes.cost.total();
    let (found, clear) = select_idle_cpu(
        v,
        p,
        llc,
        sd.span_weight as usize,
        has_idle_core,
        target,
        probes,
    );
    if !v.sis_util() && v.sis_prop() && !has_idle_core {
        out.scan_ns = Some((target, probes.cost.total() - before));
    }
    if clear {
        out.clear_idle_cores = Some(target);
    }
    if let Some(c) = found {
        out.cpu = c;
    }
}

/// Group statistics for the slow path (`update_sg_wakeup_stats`): `p`'s
/// own contribution is not counted on `p.prev`.
fn sg_wakeup_stats(v: &impl CpuView, span: &CpuMask, p: &PlaceTask, pct: u32) -> SgStats {
    let mut s = SgStats::default();
    for c in span.iter_and(p.allowed) {
        // One read of the CPU's figures (the same values as the separate
        // queries; fork placement walks 2 048 CPUs per creation at 4096).
        let x = v.lb_snapshot(c);
        let own = c == p.prev;
        let load = x.load.saturating_sub(if own { p.load } else { 0 });
        s.group_load += load;
        s.group_util += x.util;
        s.group_runnable += x.runnable;
        let nr = x.nr_running;
        s.sum_h_nr_running += x.h_nr_runnable;
        s.sum_nr_running += nr;
        if nr == 0 && x.idle {
            s.idle_cpus += 1;
        }
        s.group_capacity += x.capacity;
        s.group_weight += 1;
    }
    let t = group_classify(pct, &s);
    s.group_type = Some(t);
    if t != GroupType::HasSpare && s.group_capacity > 0 {
        s.avg_load = s.group_load * 1024 / s.group_capacity;
    }
    s
}

/// `sched_balance_find_dst_group`: the idlest group of `sd` if it beats
/// the local one, else None (stay).
fn find_dst_group<'v>(
    v: &'v impl CpuView,
    sd_idx: usize,
    this: CpuId,
    p: &PlaceTask,
) -> Option<&'v CpuMask> {
    let sd = &v.domains().domains(this)[sd_idx];
    let pct = sd.imbalance_pct;
    let mut local: Option<SgStats> = None;
    let mut idlest: Option<(SgStats, &CpuMask)> = None;
    for g in &sd.groups {
        if !g.span.intersects(p.allowed) {
            continue;
        }
        let s = sg_wakeup_stats(v, &g.span, p, pct);
        if g.span.test(this) {
            local = Some(s);
            continue;
        }
        let better = match &idlest {
            None => true,
            Some((b, _)) => idlest_is_better(&s, b),
        };
        if better {
            idlest = Some((s, &g.span));
        }
    }
    let (idlest, span) = idlest?;
    let Some(local) = local else {
        return Some(span);
    };
    let (lt, it) = (local.group_type.unwrap(), idlest.group_type.unwrap());
    if lt < it {
        return None;
    }
    if lt > it {
        return Some(span);
    }
    match lt {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let imb = 1024 * (pct as u64 - 100) / 100;
            if idlest.avg_load >= local.avg_load + imb
                || 100 * local.avg_load <= pct as u64 * idlest.avg_load
            {
                return None;
            }
        }
        GroupType::HasSpare => {
            if sd.flags.contains(SD_NUMA)
                && numa_keeps_local(v.numa_fork_rule(), sd, &local, &idlest)
            {
                return None;
            }
            if local.idle_cpus >= idlest.idle_cpus {
                return None;
            }
        }
    }
    Some(span)
}

/// The fork/exec path's NUMA rule between two has-spare groups
/// (`sched_balance_find_dst_group`, kernel-model.md §5.4 b), by release.
/// Each keeps a new task on its parent's node while the node is lightly
/// loaded; "If there is a real need of migration, periodic load balance
/// will take care of it" (the kernel's comment on all of them).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NumaForkRule {
    /// Before 5.5: `find_idlest_group` compared loads (not modelled: the
    /// 5.5 group types are used, with no NUMA rule).
    None,
    /// 5.5-5.10 (57abff067a08 "sched/fair: Rework find_idlest_group()"):
    /// stay while the local group has an idle CPU, so a node may fill
    /// completely before a fork goes elsewhere.
    LocalIdle,
    /// 5.11-5.17 (23e6082a522e "sched: Limit the amount of NUMA imbalance
    /// that can exist at fork time"): stay while the local group runs
    /// fewer tasks than a quarter of the NUMA domain's CPUs.
    Quarter,
    /// 5.18-5.19 (e496132ebedd "sched/fair: Adjust the allowed NUMA
    /// imbalance when SD_NUMA spans multiple LLCs", 2cfb7a1b031b "sched/
    /// fair: Improve consistency of allowed NUMA balance calculations"):
    /// stay while the local group would run at most `imb_numa_nr` tasks
    /// with the new one.
    ImbNumaNr,
    /// 6.0 on (cb29a5c19d2d "sched/numa: Apply imbalance limitations
    /// consistently", f5b2eeb49991 "sched/fair: Consider CPU affinity when
    /// allowing NUMA imbalance in find_idlest_group()"): as `ImbNumaNr`,
    /// and only while the groups' idle CPUs differ by at most
    /// `NUMA_IMBALANCE_MIN` (`adjust_numa_imbalance`), with `imb_numa_nr`
    /// capped by the local CPUs the task may use. The kernel caps it for
    /// any task whose `nr_cpus_allowed` is not `NR_CPUS`, i.e. every task
    /// on a machine with fewer CPUs than the kernel was built for.
    ImbNumaNrIdle,
}

impl NumaForkRule {
    /// The rule of a `--kernel` release (see [`crate::kernels::at_least`]).
    pub fn for_kernel(kernel: &str) -> Self {
        let rows = [
            ((6, 0), Self::ImbNumaNrIdle),
            ((5, 18), Self::ImbNumaNr),
            ((5, 11), Self::Quarter),
            ((5, 5), Self::LocalIdle),
        ];
        crate::kernels::by_release(kernel, &rows, Self::None)
    }
}

/// The load balancer's NUMA allowance (`calculate_imbalance` between a
/// has-spare local group and a has-spare busiest group of an SD_NUMA
/// domain: the "Consider allowing a small imbalance between NUMA groups"
/// step, `adjust_numa_imbalance` from 5.7), by release. "Halved first":
/// the task count to move (idle-CPU or task difference, `>> 1`) is
/// computed, then dropped to 0 when the rule allows; "whole": the rule
/// sees the difference itself, halved after. Ids and how they were checked:
/// docs/kernels.md (rows 5.6, 5.11, 5.18, 6.0). `fair/balance/lb.rs`
/// applies it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum NumaLbRule {
    /// Before 5.6: no NUMA allowance (the 5.5 load_balance rework,
    /// 0b0695f2b34a; earlier balancers are not modelled).
    None,
    /// 5.6-5.10 (b396f52326de "sched/fair: Allow a small load imbalance
    /// between low utilisation SD_NUMA domains", 5.6-rc2; made a function,
    /// `adjust_numa_imbalance`, by fb86f5b21192 in 5.7, same rule): halved
    /// first, then 0 while the *busiest* group runs at most 2 tasks,
    /// whatever the imbalance.
    BusiestPair,
    /// 5.11-5.17 (7d2b5dd0bcc4 "sched/numa: Allow a floating imbalance
    /// between NUMA nodes"): halved first, then 0 when it is at most
    /// `NUMA_IMBALANCE_MIN` (2) and the *busiest* group runs fewer tasks
    /// than a quarter of its own CPUs (`sum_nr_running < group_weight >> 2`).
    BusiestQuarter,
    /// 5.18-5.19 (2cfb7a1b031b "sched/fair: Improve consistency of allowed
    /// NUMA balance calculations" and e496132ebedd "sched/fair: Adjust the
    /// allowed NUMA imbalance when SD_NUMA spans multiple LLCs", both in
    /// 5.18): halved first, then 0 when it is at most 2 and the *local*
    /// group would run at most `imb_numa_nr` tasks with one more
    /// (`local + 1 <= imb_numa_nr`).
    LocalImbNumaNrHalved,
    /// 6.0 on (cb29a5c19d2d "sched/numa: Apply imbalance limitations
    /// consistently"): the rule of 5.18 on the whole difference (0 when it
    /// is at most 2 and `local + 1 <= imb_numa_nr`), halved after.
    #[default]
    LocalImbNumaNr,
}

impl NumaLbRule {
    /// The rule of a `--kernel` release (see [`crate::kernels::at_least`]).
    pub fn for_kernel(kernel: &str) -> Self {
        let rows = [
            ((6, 0), Self::LocalImbNumaNr),
            ((5, 18), Self::LocalImbNumaNrHalved),
            ((5, 11), Self::BusiestQuarter),
            ((5, 6), Self::BusiestPair),
        ];
        crate::kernels::by_release(kernel, &rows, Self::None)
    }
}

/// Does `rule` keep the new task in the local group? `local` and `idlest`
/// are `sg_wakeup_stats` figures, which count only the CPUs the task may
/// use (so `group_weight` is the affinity cap). The NUMA-balancing
/// preferred-node rules before it are not modelled: a new task has no
/// preferred node.
fn numa_keeps_local(
    rule: NumaForkRule,
    sd: &SchedDomain,
    local: &SgStats,
    idlest: &SgStats,
) -> bool {
    let dst_running = local.sum_nr_running + 1;
    match rule {
        NumaForkRule::None => false,
        NumaForkRule::LocalIdle => local.idle_cpus > 0,
        NumaForkRule::Quarter => local.sum_nr_running < sd.span_weight >> 2,
        NumaForkRule::ImbNumaNr => dst_running <= sd.imb_numa_nr,
        NumaForkRule::ImbNumaNrIdle => {
            let imb_numa_nr = sd.imb_numa_nr.min(local.group_weight);
            dst_running <= imb_numa_nr
                && local.idle_cpus.abs_diff(idlest.idle_cpus) <= NUMA_IMBALANCE_MIN
        }
    }
}

/// Ordering of candidate groups in find_dst_group (§5.4 a).
fn idlest_is_better(s: &SgStats, best: &SgStats) -> bool {
    let (t, bt) = (s.group_type.unwrap(), best.group_type.unwrap());
    if t != bt {
        return t < bt;
    }
    match t {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < best.avg_load,
        GroupType::HasSpare => {
            s.idle_cpus > best.idle_cpus
                || (s.idle_cpus == best.idle_cpus && s.group_util < best.group_util)
        }
    }
}

/// `sched_balance_find_dst_group_cpu`: a SCHED_IDLE-only CPU at once (with
/// the switch); else the idle CPU in the shallowest state, most recently
/// idle on ties; else the least loaded CPU.
fn find_dst_group_cpu(v: &impl CpuView, span: &CpuMask, p: &PlaceTask, this: CpuId) -> CpuId {
    let mut shallowest: Option<(u64, u64, CpuId)> = None;
    let mut least: Option<(u64, CpuId)> = None;
    for c in span.iter_and(p.allowed) {
        if v.sched_idle_counts_as_idle(c) {
            return c;
        }
        if v.available_idle_cpu(c) {
            let key = (v.idle_exit_latency(c), u64::MAX - v.idle_stamp(c), c);
            if shallowest.is_none_or(|s| key < s) {
                shallowest = Some(key);
            }
        } else if shallowest.is_none() {
            let l = v.cpu_load(c);
            if least.is_none_or(|(b, _)| l < b) {
                least = Some((l, c));
            }
        }
    }
    shallowest
        .map(|s| s.2)
        .or(least.map(|l| l.1))
        .unwrap_or(this)
}

/// `select_task_rq_fair`'s decision for a fork (WF_FORK): the slow path
/// from `this`'s highest SD_BALANCE_FORK domain.
pub fn place_fork(v: &impl CpuView, p: &PlaceTask, this: CpuId) -> CpuId {
    let d = v.domains();
    let mut cpu = this;
    let doms = d.domains(cpu);
    let Some(mut idx) = doms.iter().rposition(|s| s.flags.contains(SD_BALANCE_FORK)) else {
        return if p.allowed.test(this) {
            this
        } else {
            p.allowed.first().expect("non-empty affinity")
        };
    };
    if !doms[idx].span.intersects(p.allowed) {
        return p.prev;
    }
    loop {
        let sd = &d.domains(cpu)[idx];
        if !sd.flags.contains(SD_BALANCE_FORK) {
            match sd.child {
                Some(c) => {
                    idx = c;
                    continue;
                }
                None => break,
            }
        }
        let Some(group) = find_dst_group(v, idx, cpu, p) else {
            match sd.child {
                Some(c) => {
                    idx = c;
                    continue;
                }
                None => break,
            }
        };
        let new_cpu = find_dst_group_cpu(v, group, p, cpu);
        if new_cpu == cpu {
            match sd.child {
                Some(c) => {
                    idx = c;
                    continue;
                }
                None => break,
            }
        }
        // Restart from the new CPU's domains below this span weight.
        let weight = sd.span_weight;
        cpu = new_cpu;
        match d
            .domains(cpu)
            .iter()
            .rposition(|s| s.span_weight < weight && s.flags.contains(SD_BALANCE_FORK))
        {
            Some(i) => idx = i,
            None => break,
        }
    }
    if p.allowed.test(cpu) {
        cpu
    } else {
        p.allowed.first().expect("non-empty affinity")
    }
}

/// `select_task_rq_fair`'s decision for a wakeup (WF_TTWU).
pub fn place_wakeup(v: &impl CpuView, p: &PlaceTask, w: &Waker) -> Placement {
    let d = v.domains();
    let this = w.cpu;
    let want_affine = !wake_wide(v, p, w) && p.allowed.test(this);
    let mut new_cpu = p.prev;
    let mut affine = false;
    if want_affine {
        for sd in d.domains(this) {
            if sd.flags.contains(SD_WAKE_AFFINE) && sd.span.test(p.prev) {
                if this != p.prev {
                    let (c, moved) = wake_affine(v, sd.imbalance_pct, p, w, p.prev);
                    new_cpu = c;
                    affine = moved;
                }
                break;
            }
        }
    }
    let mut out = select_idle_sibling(v, p, p.prev, new_cpu, w.cpu);
    out.affine = affine;
    if !p.allowed.test(out.cpu) {
        // Affinity changed since prev: any allowed CPU, idle first.
        out.cpu = p
            .allowed
            .iter()
            .find(|&c| v.idle_for_placement(c))
            .or_else(|| p.allowed.first())
            .expect("non-empty affinity");
    }
    out
}

#[cfg(test)]
mod tests;
