//! Sched domains and groups built from a [`Machine`], the way the kernel's
//! `build_sched_domains` builds them, plus the per-CPU shortcuts the fair
//! class reads (`sd_llc`, `sd_llc_size`, `sd_llc_id`, `sd_share_id`,
//! `sd_numa`, `sd_llc_shared`) and a debug rendering.
//!
//! ```text
//!   icx-2s-80c-ht, CPU 0 (bottom-up chain; groups are the child's spans)
//!
//!   NUMA  span 0-159            groups { 0-39,80-119 } { 40-79,120-159 }
//!    │     SD_NUMA|SD_SERIALIZE, no SD_PREFER_SIBLING, imbalance_pct 117
//!   MC    span 0-39,80-119      groups { 0,80 } { 1,81 } ... { 39,119 }
//!    │     SD_SHARE_LLC  (= sd_llc, sd_llc_size 80, sd_llc_id 0)
//!   SMT   span 0,80             groups { 0 } { 80 }
//!          SD_SHARE_CPUCAPACITY|SD_SHARE_LLC, imbalance_pct 110
//!
//!   (CLS = SMT span, PKG = NODE = MC span: built, then removed as degenerate)
//! ```
//!
//! Algorithm ([`SchedDomains::build`]):
//! 1. Topology table, bottom-up: SMT (core), CLS (cluster; the core instead
//!    when the cluster is the whole LLC, the arch_topology rule), MC (LLC),
//!    PKG (package) — PKG left out when some package holds more than one
//!    node (x86 NUMA-in-package: SNC, NPS>1).
//! 2. NUMA levels from the distinct SLIT distances `d0 = 10 < d1 < ...`
//!    (only with more than one node): NODE (distance `d0`, the node itself),
//!    then NUMA(j) for each `dj`, spanning every node within `dj`.
//! 3. For each level, the span of every CPU is deduplicated into a table of
//!    distinct spans (`span_of[cpu]` is an index), so later steps compare
//!    small integers instead of bitmaps.
//! 4. Per CPU, one domain per level bottom-up, stopping after the first
//!    domain that spans the whole machine. Each is set up as `sd_init` does
//!    (kernel-model §6.2): defaults, topology flags, asymmetric-capacity
//!    classification, then the SMT / LLC / NUMA / other adjustments, and a
//!    level with `SD_ASYM_CPUCAPACITY` strips `SD_PREFER_SIBLING` from its
//!    child.
//! 5. `imb_numa_nr` on that full chain: the first domain above the LLC
//!    allows `nr_llcs` (or 1/8 of its span with one LLC, at least 1; 1/4
//!    in 5.18-5.19, none before: [`ImbNumaRule`]) tasks of imbalance;
//!    higher domains scale it by their span over the span of the first
//!    NUMA domain above that one.
//! 6. Degenerate domains are removed as `cpu_attach_domain` does: walking up,
//!    a parent goes when it is itself degenerate or has the child's span and
//!    no flag the child lacks (flags that need groups do not count when the
//!    parent has one group), handing `SD_PREFER_SIBLING` down; then the
//!    bottom domain goes if it is degenerate (one CPU, or one group and no
//!    `SD_WAKE_AFFINE`).
//! 7. Groups of each remaining domain: walk its span wrapping from the CPU,
//!    and for every CPU not yet covered add a group equal to that CPU's span
//!    at the level below (single CPUs at the lowest level). So `groups[0]` is
//!    the local group, as `sd->groups` is. Each group records its balance
//!    mask (CPUs whose own child span is this group), first balance CPU,
//!    core count and capacity.
//! 8. Shortcuts: `sd_llc` = highest domain of the unbroken `SD_SHARE_LLC`
//!    run from the bottom; `sd_llc_id` = its first CPU (the CPU itself when
//!    there is none); `sd_share_id` = first CPU of the lowest `SD_CLUSTER`
//!    domain, else `sd_llc_id`; `sd_numa` = lowest `SD_NUMA` domain; one
//!    [`LlcShared`] per distinct LLC span.
//!
//! Kernel reference: kernel/sched/topology.c (`sd_init`,
//! `build_sched_domain(s)`, `build_sched_groups`,
//! `build_overlap_sched_groups`, `sched_init_numa`, `sd_degenerate`,
//! `sd_parent_degenerate`, `cpu_attach_domain`, `update_top_cache_domain`,
//! the `imb_numa_nr` pass, `asym_cpu_capacity_classify`,
//! `sched_domain_debug_one`); include/linux/sched/sd_flags.h (flag order and
//! which flags need groups); arch/x86/kernel/smpboot.c (x86 topology table,
//! dropping PKG with NUMA in package); drivers/base/arch_topology.c
//! (`cpu_clustergroup_mask` never spans the whole coregroup); fair.c
//! (`get_sd_balance_interval`, `max_load_balance_interval`). Implemented
//! from kernel-model.md §5.3, §6, §7.1–7.2, not from kernel source.
//!
//! Deviations:
//! * NUMA groups use the child-span rule for every level: a group is the
//!   span, one level down, of the first uncovered CPU. That is what
//!   `build_overlap_sched_groups` does for regular machines; its
//!   `find_descended_sibling` refinement for asymmetric distance tables is
//!   not modelled. Groups may overlap on such tables (the balance mask then
//!   marks the CPUs that own the group); on every preset they partition the
//!   span.
//! * Group flags are those of the CPU's own surviving child domain (the
//!   kernel copies the builder's child flags and only refreshes the local
//!   group on degeneration). The lowest domain's groups have no flags.
//! * No ITMT: `SD_ASYM_PACKING` is never set; no `sd_asym_packing`.
//! * PKG spans the package (`cpu_cpu_mask` is the node's span; identical
//!   whenever PKG survives, since PKG is dropped when a package holds more
//!   than one node). The NUMA-in-package rule is applied to every machine,
//!   not only x86.
//! * The x86 CLS mask follows the arch_topology rule (a cluster equal to
//!   the LLC is treated as absent), so the two never both survive.
//! * Runtime per-domain state (`balance_interval`, `last_balance`,
//!   `nr_balance_failed`, `max_newidle_lb_cost`) and the `sched_domain_shared`
//!   counters are the balancer's; this module gives initial values and the
//!   identity of each shared LLC state.
//! * The summary table counts a level's domains by their first CPU, which
//!   undercounts only overlapping NUMA spans sharing a first CPU.

use super::{CpuMask, Machine};
use crate::ids::CpuId;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

mod describe;
mod flags;

pub use describe::describe_domains;
pub use flags::*;
use flags::{DEFAULT_FLAGS, NEEDS_GROUPS};

/// A topology level, bottom-up.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// SMT siblings of one core.
    Smt,
    /// A cluster (shared L2 / module).
    Cls,
    /// The last-level cache ("multi-core").
    Mc,
    /// The package (socket).
    Pkg,
    /// One NUMA node (identity distance).
    Node,
    /// All nodes within the j-th distinct SLIT distance (j >= 1).
    Numa(u32),
}

impl Level {
    /// The kernel's `sd->name`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Smt => "SMT",
            Level::Cls => "CLS",
            Level::Mc => "MC",
            Level::Pkg => "PKG",
            Level::Node => "NODE",
            Level::Numa(_) => "NUMA",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Numa(j) => write!(f, "NUMA({j})"),
            l => f.write_str(l.name()),
        }
    }
}

/// One sched group of a domain (`struct sched_group` with its
/// `sched_group_capacity`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedGroup {
    /// CPUs of the group (the child domain's span of some CPU).
    pub span: CpuMask,
    /// `group_weight`: number of CPUs.
    pub weight: u32,
    /// `group_balance_mask`: CPUs that may balance on behalf of the group
    /// (the whole span unless NUMA groups overlap).
    pub balance_mask: CpuMask,
    /// `group_balance_cpu`: first CPU of the balance mask.
    pub balance_cpu: CpuId,
    /// `cores`: number of SMT cores with a CPU in the group.
    pub cores: u32,
    /// Sum of the CPUs' capacities (`sgc->capacity` at build time).
    pub capacity: u64,
    /// Flags of the child domain the group stands for.
    pub flags: SdFlags,
    /// Index of the group's span in [`SchedDomains::group_spans`]: groups
    /// of any level and list with the same CPUs share it (the simulator
    /// keeps one set of running load-balance sums per distinct span).
    pub span_id: u32,
}

/// The groups of one domain as one CPU sees them: a list shared by every
/// CPU whose walk meets the same groups in the same circular order (one
/// list per distinct span, level and child flags, as the kernel's groups
/// are one circular list shared through `sd->groups`), read from the
/// CPU's local group on. Memory is one list per distinct domain, not one
/// per CPU, so the builder grows with CPUs x domain levels, not with CPU
/// pairs. `groups[0]` is the local group.
#[derive(Clone, Debug)]
pub struct Groups {
    list: Arc<[SchedGroup]>,
    /// Index in `list` of the local group.
    first: u32,
}

impl Groups {
    /// Number of groups.
    pub fn len(&self) -> usize {
        self.list.len()
    }
    /// True when there is no group.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// The groups, local group first, then in wrapping CPU order.
    pub fn iter(&self) -> GroupIter<'_> {
        let (a, b) = self.list.split_at(self.first as usize);
        b.iter().chain(a.iter())
    }
}

/// Iterator over a domain's groups, local group first.
pub type GroupIter<'a> =
    std::iter::Chain<std::slice::Iter<'a, SchedGroup>, std::slice::Iter<'a, SchedGroup>>;

impl std::ops::Index<usize> for Groups {
    type Output = SchedGroup;
    fn index(&self, i: usize) -> &SchedGroup {
        let n = self.list.len();
        assert!(i < n, "group {i} of {n}");
        &self.list[(self.first as usize + i) % n]
    }
}

impl PartialEq for Groups {
    fn eq(&self, other: &Groups) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}
impl Eq for Groups {}

impl<'a> IntoIterator for &'a Groups {
    type Item = &'a SchedGroup;
    type IntoIter = GroupIter<'a>;
    fn into_iter(self) -> GroupIter<'a> {
        self.iter()
    }
}

/// One sched domain of one CPU (`struct sched_domain`, build-time fields).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomain {
    /// Topology level.
    pub level: Level,
    /// `sd->name`.
    pub name: &'static str,
    /// CPUs of the domain (shared by every CPU of the same domain).
    pub span: Arc<CpuMask>,
    /// Number of CPUs of the domain.
    pub span_weight: u32,
    /// `SD_*` flags.
    pub flags: SdFlags,
    /// `min_interval` (ms) = span weight.
    pub min_interval_ms: u64,
    /// `max_interval` (ms) = 2 x span weight.
    pub max_interval_ms: u64,
    /// Initial `balance_interval` (ms) = span weight; the balancer adapts it
    /// within `[min_interval_ms, max_interval_ms]`.
    pub balance_interval_ms: u64,
    /// `busy_factor` (16): interval multiplier while the CPU is busy.
    pub busy_factor: u32,
    /// `imbalance_pct` (110 SMT, 117 otherwise).
    pub imbalance_pct: u32,
    /// `cache_nice_tries` (SMT 0, LLC/PKG/NODE 1, NUMA 2).
    pub cache_nice_tries: u32,
    /// `imb_numa_nr`: tolerated NUMA imbalance in tasks (0 up to the LLC).
    pub imb_numa_nr: u32,
    /// SLIT distance of a NODE/NUMA level, `None` below.
    pub numa_distance: Option<u32>,
    /// Groups, local group first (`sd->groups`), then in wrapping CPU order.
    pub groups: Groups,
    /// Index of the child domain in this CPU's chain.
    pub child: Option<usize>,
    /// Index of the parent domain in this CPU's chain.
    pub parent: Option<usize>,
}

impl SchedDomain {
    /// The domain's identity across CPUs: its first CPU (with the level).
    pub fn first_cpu(&self) -> CpuId {
        self.span.first().expect("domain spans are never empty")
    }
}

/// Identity of one per-LLC `sched_domain_shared` (`nr_busy_cpus`,
/// `has_idle_cores`, `nr_idle_scan` live with the simulator's state, indexed
/// like [`SchedDomains::llc_shared`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LlcShared {
    /// First CPU of the LLC domain (`sd_llc_id` of its CPUs).
    pub id: CpuId,
    /// CPUs of the LLC domain.
    pub span: CpuMask,
    /// Number of CPUs (initial `nr_busy_cpus`).
    pub weight: u32,
}

/// Per-CPU shortcuts (`update_top_cache_domain`). Domain indexes point into
/// [`SchedDomains::domains`] of the same CPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuShortcuts {
    /// `sd_llc`: the highest domain of the bottom run of `SD_SHARE_LLC`.
    pub sd_llc: Option<usize>,
    /// `sd_llc_size`: its weight (1 without one).
    pub sd_llc_size: u32,
    /// `sd_llc_id`: its first CPU (the CPU itself without one).
    pub sd_llc_id: CpuId,
    /// `sd_share_id`: first CPU of the lowest `SD_CLUSTER` domain, else
    /// `sd_llc_id`.
    pub sd_share_id: CpuId,
    /// `sd_numa`: the lowest `SD_NUMA` domain.
    pub sd_numa: Option<usize>,
    /// `sd_asym_cpucapacity`: the lowest `SD_ASYM_CPUCAPACITY_FULL` domain.
    pub sd_asym_cpucapacity: Option<usize>,
    /// `sd_llc_shared`: index into [`SchedDomains::llc_shared`].
    pub llc_shared: Option<usize>,
}

/// The sched domains of every CPU of a machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomains {
    /// CONFIG_HZ the intervals are converted with.
    pub hz: u32,
    /// Per CPU, its domains bottom-up (index 0 is the lowest); empty when
    /// every level is degenerate (a one-CPU machine).
    pub per_cpu: Vec<Vec<SchedDomain>>,
    /// Per CPU, the shortcuts.
    pub shortcuts: Vec<CpuShortcuts>,
    /// One entry per distinct LLC domain, in order of first CPU.
    pub llc_shared: Vec<LlcShared>,
    /// `max_load_balance_interval` in jiffies: `HZ * nr_cpus / 10`.
    pub max_load_balance_interval: u64,
    /// Distinct SLIT distances, ascending (`sched_domains_numa_distance`);
    /// `[10]` on a one-node machine.
    pub numa_distances: Vec<u32>,
    /// `get_sd_balance_interval` takes one jiffy off a busy interval (from
    /// 5.10, "sched/fair: Minimize concurrent LBs between domain level", so
    /// that the levels' busy periods are not multiples of each other).
    pub busy_interval_less_one: bool,
    /// Every distinct group span of every CPU's domains, indexed by
    /// [`SchedGroup::span_id`].
    pub group_spans: Vec<CpuMask>,
}

/// One level of the topology table before per-CPU domains exist.
struct RawLevel {
    level: Level,
    /// Flags from the topology function (`tl->sd_flags`).
    topo_flags: SdFlags,
    numa_distance: Option<u32>,
    /// Distinct spans of the level.
    spans: Vec<Arc<CpuMask>>,
    /// Weight of each distinct span.
    weights: Vec<u32>,
    /// Per CPU, index into `spans`.
    span_of: Vec<u32>,
    /// Asymmetric-capacity flags of each distinct span.
    asym: Vec<SdFlags>,
}

impl RawLevel {
    /// Builds the level from each CPU's span, deduplicating equal spans.
    fn new<'a>(
        level: Level,
        topo_flags: SdFlags,
        numa_distance: Option<u32>,
        m: &Machine,
        capacities: &[u32],
        mask_of: impl Fn(usize) -> &'a CpuMask,
    ) -> RawLevel {
        let n = m.nr_cpus();
        let mut spans: Vec<Arc<CpuMask>> = Vec::new();
        let mut by_first: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut span_of = Vec::with_capacity(n);
        for cpu in 0..n {
            let mask = mask_of(cpu);
            debug_assert!(mask.test(CpuId(cpu as u32)), "a CPU's span holds it");
            let first = mask.first().expect("non-empty span").idx();
            let id = match by_first[first]
                .iter()
                .find(|&&id| *spans[id as usize] == *mask)
            {
                Some(&id) => id,
                None => {
                    spans.push(Arc::new(mask.clone()));
                    let id = (spans.len() - 1) as u32;
                    by_first[first].push(id);
                    id
                }
            };
            span_of.push(id);
        }
        let weights = spans.iter().map(|s| s.weight() as u32).collect();
        let asym = spans
            .iter()
            .map(|s| asym_cpu_capacity_classify(m, s, capacities))
            .collect();
        RawLevel {
            level,
            topo_flags,
            numa_distance,
            spans,
            weights,
            span_of,
            asym,
        }
    }
}

/// `asym_cpu_capacity_classify`: `SD_ASYM_CPUCAPACITY` when the span holds
/// more than one of the machine's capacities, plus `_FULL` when it holds
/// them all.
fn asym_cpu_capacity_classify(m: &Machine, span: &CpuMask, capacities: &[u32]) -> SdFlags {
    if capacities.len() < 2 {
        return SdFlags::EMPTY;
    }
    let mut seen = vec![false; capacities.len()];
    for c in span.iter() {
        let cap = m.cpu(c).capacity;
        let i = capacities.binary_search(&cap).expect("capacity listed");
        seen[i] = true;
    }
    match seen.iter().filter(|&&s| s).count() {
        0 | 1 => SdFlags::EMPTY,
        k if k == capacities.len() => SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL,
        _ => SD_ASYM_CPUCAPACITY,
    }
}

/// One domain of one CPU's full (pre-degeneration) chain.
#[derive(Clone)]
struct RawDomain {
    /// Index into the level table.
    li: usize,
    /// Index into that level's spans.
    span_id: u32,
    weight: u32,
    flags: SdFlags,
    imbalance_pct: u32,
    cache_nice_tries: u32,
    imb_numa_nr: u32,
    /// The domain has a single group (its child's span equals its own).
    single_group: bool,
}

/// `sd_degenerate`.
fn sd_degenerate(d: &RawDomain) -> bool {
    if d.weight == 1 {
        return true;
    }
    if d.flags.intersects(NEEDS_GROUPS) && !d.single_group {
        return false;
    }
    !d.flags.contains(SD_WAKE_AFFINE)
}

/// `sd_parent_degenerate(child, parent)`.
fn sd_parent_degenerate(child: &RawDomain, parent: &RawDomain, levels: &[RawLevel]) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    let cspan = &levels[child.li].spans[child.span_id as usize];
    let pspan = &levels[parent.li].spans[parent.span_id as usize];
    if cspan != pspan {
        return false;
    }
    let mut pflags = parent.flags;
    if parent.single_group {
        pflags.remove(NEEDS_GROUPS);
    }
    (!child.flags & pflags).is_empty()
}

/// Build-time data of one group, shared by every CPU that sees it.
#[derive(Clone)]
struct GroupProto {
    span_id: u32,
    balance_mask: CpuMask,
    balance_cpu: CpuId,
    weight: u32,
    cores: u32,
    capacity: u64,
}

fn group_proto(
    m: &Machine,
    span: &CpuMask,
    owns: impl Fn(CpuId) -> bool,
    spans: &mut SpanIds,
) -> GroupProto {
    let n = m.nr_cpus();
    let mut balance_mask = CpuMask::new(n);
    let mut cores = 0;
    let mut capacity = 0u64;
    for c in span.iter() {
        if owns(c) {
            balance_mask.set(c);
        }
        // Count a core at its first CPU inside the group.
        if m.core_span(c).iter().find(|&x| span.test(x)) == Some(c) {
            cores += 1;
        }
        capacity += m.cpu(c).capacity as u64;
    }
    let balance_cpu = balance_mask
        .first()
        .or_else(|| span.first())
        .expect("non-empty group");
    GroupProto {
        span_id: spans.id(span),
        balance_mask,
        balance_cpu,
        weight: span.weight() as u32,
        cores,
        capacity,
    }
}

/// The distinct group spans met while building, numbered in order of
/// first appearance ([`SchedGroup::span_id`]).
#[derive(Default)]
struct SpanIds {
    ids: HashMap<CpuMask, u32>,
    spans: Vec<CpuMask>,
}

impl SpanIds {
    fn id(&mut self, span: &CpuMask) -> u32 {
        if let Some(&id) = self.ids.get(span) {
            return id;
        }
        let id = self.spans.len() as u32;
        self.ids.insert(span.clone(), id);
        self.spans.push(span.clone());
        id
    }
}

/// `msecs_to_jiffies`: rounds up.
pub fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms * hz as u64).div_ceil(1000)
}

/// The span of group `key` at level `li` (a single CPU at the lowest level,
/// else the child level's span `key`).
fn group_span(levels: &[RawLevel], li: usize, key: usize, n: usize) -> Arc<CpuMask> {
    if li == 0 {
        let mut s = CpuMask::new(n);
        s.set(CpuId(key as u32));
        Arc::new(s)
    } else {
        Arc::clone(&levels[li - 1].spans[key])
    }
}

/// Step 7's walk of `span` wrapping from `start`: for every CPU not yet
/// covered, the key of its group (the CPU at the lowest level, else its
/// child span id), in order, into `keys`. `covered` is scratch.
fn group_walk(
    levels: &[RawLevel],
    li: usize,
    span: &CpuMask,
    start: CpuId,
    covered: &mut CpuMask,
    keys: &mut Vec<usize>,
) {
    keys.clear();
    for i in span.iter_wrap(start) {
        if covered.test(i) {
            continue;
        }
        if li == 0 {
            covered.set(i);
            keys.push(i.idx());
        } else {
            let id = levels[li - 1].span_of[i.idx()] as usize;
            for c in levels[li - 1].spans[id].iter() {
                covered.set(c);
            }
            keys.push(id);
        }
    }
    // Leave the scratch mask empty for the next walk.
    for i in span.iter() {
        covered.clear(i);
    }
    if li > 0 {
        for &id in keys.iter() {
            for c in levels[li - 1].spans[id].iter() {
                covered.clear(c);
            }
        }
    }
}

/// The sorted CPUs of each distinct span of `lvl`, when its spans
/// partition the CPUs (every CPU's span holds only CPUs with that same
/// span); None when spans overlap (asymmetric NUMA tables).
fn partition_members(lvl: &RawLevel) -> Option<Vec<Vec<u32>>> {
    let mut members = Vec::with_capacity(lvl.spans.len());
    for (id, span) in lvl.spans.iter().enumerate() {
        let cpus: Vec<u32> = span.iter().map(|c| c.0).collect();
        if cpus.iter().any(|&c| lvl.span_of[c as usize] as usize != id) {
            return None;
        }
        members.push(cpus);
    }
    Some(members)
}

/// Step 7's walk from `start` when the child spans partition the machine:
/// the domain's child spans `canon` (its walk from any CPU, in any order)
/// ordered by their first CPU at or after `start`, wrapping past the last
/// CPU. The same keys as [`group_walk`]: walking the span from `start`, the
/// first uncovered CPU met is always the first CPU of a not yet listed
/// child span, and child spans are disjoint. `firsts` is scratch.
fn ordered_walk(
    members: &[Vec<u32>],
    canon: &[usize],
    start: u32,
    n: usize,
    firsts: &mut Vec<(usize, usize)>,
    keys: &mut Vec<usize>,
) {
    firsts.clear();
    for &id in canon {
        let cpus = &members[id];
        let at = cpus.partition_point(|&c| c < start);
        let first = match cpus.get(at) {
            Some(&c) => c as usize,
            None => cpus[0] as usize + n,
        };
        firsts.push((first, id));
    }
    firsts.sort_unstable();
    keys.clear();
    keys.extend(firsts.iter().map(|&(_, id)| id));
}

/// The groups of `keys` at level `li`, with the child's flags.
fn make_groups(
    m: &Machine,
    levels: &[RawLevel],
    li: usize,
    keys: &[usize],
    child_flags: SdFlags,
    protos: &mut [Vec<Option<GroupProto>>],
    spans: &mut SpanIds,
) -> Arc<[SchedGroup]> {
    let n = m.nr_cpus();
    keys.iter()
        .map(|&key| {
            let gspan = group_span(levels, li, key, n);
            let proto = protos[li][key].get_or_insert_with(|| {
                if li == 0 {
                    group_proto(m, &gspan, |_| true, spans)
                } else {
                    let child = &levels[li - 1];
                    group_proto(m, &gspan, |c| child.span_of[c.idx()] as usize == key, spans)
                }
            });
            SchedGroup {
                span: (*gspan).clone(),
                weight: proto.weight,
                balance_mask: proto.balance_mask.clone(),
                balance_cpu: proto.balance_cpu,
                cores: proto.cores,
                capacity: proto.capacity,
                flags: child_flags,
                span_id: proto.span_id,
            }
        })
        .collect()
}

impl SchedDomains {
    /// Builds the domains of every CPU of `m` (see the module doc for the
    /// steps), converting intervals with `hz`.
    pub fn build(m: &Machine, hz: u32) -> SchedDomains {
        Self::build_with(m, hz, ImbNumaRule::EighthAtLeastOne)
    }

    /// The domains of release `kernel`: [`Self::build`] with that
    /// release's [`ImbNumaRule`], then [`Self::apply_release`].
    pub fn for_release(m: &Machine, hz: u32, kernel: &str) -> SchedDomains {
        let mut d = Self::build_with(m, hz, ImbNumaRule::for_kernel(kernel));
        d.apply_release(kernel);
        d
    }

    fn build_with(m: &Machine, hz: u32, imb_rule: ImbNumaRule) -> SchedDomains {
        let n = m.nr_cpus();
        let levels = topology_levels(m);
        let numa_distances = distinct_distances(m);

        let mut per_cpu = Vec::with_capacity(n);
        // Groups of a level, keyed by the child span id they stand for (or
        // by CPU at the lowest level): built once, copied into each list.
        let mut protos: Vec<Vec<Option<GroupProto>>> = levels
            .iter()
            .enumerate()
            .map(|(li, _)| {
                let len = if li == 0 {
                    n
                } else {
                    levels[li - 1].spans.len()
                };
                vec![None; len]
            })
            .collect();
        // Shared group lists: (level, span id, child flags) -> the list as
        // walked from the span's first CPU and its keys in that order.
        let mut lists: BTreeMap<(usize, u32, u32), (Arc<[SchedGroup]>, Vec<usize>)> =
            BTreeMap::new();
        let mut covered = CpuMask::new(n);
        let mut keys: Vec<usize> = Vec::new();
        // Per level, the sorted CPUs of each distinct span when the level's
        // spans partition the machine (None when they overlap): then the
        // walk of a domain from any CPU is its child spans ordered by their
        // first CPU at or after that CPU, which `ordered_walk` finds by
        // binary search instead of walking every CPU of the span (the walk
        // per CPU made the build quadratic: 0.46 s at 4096 CPUs).
        let members: Vec<Option<Vec<Vec<u32>>>> = levels.iter().map(partition_members).collect();
        let mut firsts: Vec<(usize, usize)> = Vec::new();
        let mut spans = SpanIds::default();

        for cpu in 0..n {
            let mut chain = raw_chain(cpu, n, &levels);
            set_imb_numa_nr(&mut chain, imb_rule);
            degenerate(&mut chain, &levels);
            let mut doms: Vec<SchedDomain> = Vec::with_capacity(chain.len());
            for (k, d) in chain.iter().enumerate() {
                let lvl = &levels[d.li];
                let span = &lvl.spans[d.span_id as usize];
                let child_flags = if k > 0 {
                    chain[k - 1].flags
                } else {
                    SdFlags::EMPTY
                };
                let lkey = (d.li, d.span_id, child_flags.0);
                let shared = lists.entry(lkey).or_insert_with(|| {
                    let start = span.first().expect("domain spans are never empty");
                    let mut canon = Vec::new();
                    group_walk(&levels, d.li, span, start, &mut covered, &mut canon);
                    let list = make_groups(
                        m,
                        &levels,
                        d.li,
                        &canon,
                        child_flags,
                        &mut protos,
                        &mut spans,
                    );
                    (list, canon)
                });
                // This CPU's walk (step 7): the keys of its groups in order.
                match d.li.checked_sub(1).and_then(|c| members[c].as_ref()) {
                    Some(mem) => {
                        ordered_walk(mem, &shared.1, cpu as u32, n, &mut firsts, &mut keys)
                    }
                    None => group_walk(
                        &levels,
                        d.li,
                        span,
                        CpuId(cpu as u32),
                        &mut covered,
                        &mut keys,
                    ),
                }
                // Shared when this CPU's order is a rotation of the list's.
                let len = shared.1.len();
                let rotation = shared
                    .1
                    .iter()
                    .position(|&x| Some(&x) == keys.first())
                    .filter(|&r| {
                        len == keys.len() && (0..len).all(|i| shared.1[(r + i) % len] == keys[i])
                    });
                let groups = match rotation {
                    Some(r) => Groups {
                        list: Arc::clone(&shared.0),
                        first: r as u32,
                    },
                    None => Groups {
                        list: make_groups(
                            m,
                            &levels,
                            d.li,
                            &keys,
                            child_flags,
                            &mut protos,
                            &mut spans,
                        ),
                        first: 0,
                    },
                };
                doms.push(SchedDomain {
                    level: lvl.level,
                    name: lvl.level.name(),
                    span: Arc::clone(span),
                    span_weight: d.weight,
                    flags: d.flags,
                    min_interval_ms: d.weight as u64,
                    max_interval_ms: 2 * d.weight as u64,
                    balance_interval_ms: d.weight as u64,
                    busy_factor: BUSY_FACTOR,
                    imbalance_pct: d.imbalance_pct,
                    cache_nice_tries: d.cache_nice_tries,
                    imb_numa_nr: d.imb_numa_nr,
                    numa_distance: lvl.numa_distance,
                    groups,
                    child: k.checked_sub(1),
                    parent: (k + 1 < chain.len()).then_some(k + 1),
                });
            }
            per_cpu.push(doms);
        }

        // Shortcuts and the per-LLC shared state.
        let mut llc_shared: Vec<LlcShared> = Vec::new();
        let mut llc_index: Vec<Option<usize>> = vec![None; n];
        let mut shortcuts = Vec::with_capacity(n);
        for (cpu, doms) in per_cpu.iter().enumerate() {
            let sd_llc = doms
                .iter()
                .take_while(|d| d.flags.contains(SD_SHARE_LLC))
                .count()
                .checked_sub(1);
            let (sd_llc_size, sd_llc_id, llc) = match sd_llc {
                Some(k) => {
                    let d = &doms[k];
                    let id = d.first_cpu();
                    let idx = *llc_index[id.idx()].get_or_insert_with(|| {
                        llc_shared.push(LlcShared {
                            id,
                            span: (*d.span).clone(),
                            weight: d.span_weight,
                        });
                        llc_shared.len() - 1
                    });
                    (d.span_weight, id, Some(idx))
                }
                None => (1, CpuId(cpu as u32), None),
            };
            let lowest = |f: SdFlags| doms.iter().position(|d| d.flags.contains(f));
            let sd_share_id = lowest(SD_CLUSTER)
                .map(|k| doms[k].first_cpu())
                .unwrap_or(sd_llc_id);
            shortcuts.push(CpuShortcuts {
                sd_llc,
                sd_llc_size,
                sd_llc_id,
                sd_share_id,
                sd_numa: lowest(SD_NUMA),
                sd_asym_cpucapacity: lowest(SD_ASYM_CPUCAPACITY_FULL),
                llc_shared: llc,
            });
        }

        SchedDomains {
            hz,
            per_cpu,
            shortcuts,
            llc_shared,
            max_load_balance_interval: hz as u64 * n as u64 / 10,
            numa_distances,
            busy_interval_less_one: true,
            group_spans: spans.spans,
        }
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.per_cpu.len()
    }
    /// The domains of `cpu`, bottom-up (`for_each_domain`).
    pub fn domains(&self, cpu: CpuId) -> &[SchedDomain] {
        &self.per_cpu[cpu.idx()]
    }
    /// The shortcuts of `cpu`.
    pub fn shortcuts(&self, cpu: CpuId) -> &CpuShortcuts {
        &self.shortcuts[cpu.idx()]
    }
    /// `sd_llc` of `cpu`.
    pub fn sd_llc(&self, cpu: CpuId) -> Option<&SchedDomain> {
        self.shortcuts[cpu.idx()]
            .sd_llc
            .map(|k| &self.per_cpu[cpu.idx()][k])
    }
    /// `sd_numa` of `cpu`.
    pub fn sd_numa(&self, cpu: CpuId) -> Option<&SchedDomain> {
        self.shortcuts[cpu.idx()]
            .sd_numa
            .map(|k| &self.per_cpu[cpu.idx()][k])
    }
    /// `cpus_share_cache(a, b)`: same `sd_llc_id`.
    pub fn cpus_share_cache(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.shortcuts[a.idx()].sd_llc_id == self.shortcuts[b.idx()].sd_llc_id
    }
    /// `cpus_share_resources(a, b)`: same `sd_share_id` (cluster, else LLC).
    pub fn cpus_share_resources(&self, a: CpuId, b: CpuId) -> bool {
        a == b || self.shortcuts[a.idx()].sd_share_id == self.shortcuts[b.idx()].sd_share_id
    }
    /// The domains as an older release's `sd_init` and
    /// `get_sd_balance_interval` made them: before 5.10 (Vincent Guittot's
    /// series "sched/fair: Improve fairness between cfs tasks", merged for
    /// 5.10) `busy_factor` was 32, the package and NUMA levels kept the
    /// default `imbalance_pct` of 125, and a busy interval was not one
    /// jiffy short. [`Self::build`] gives 5.10 and later.
    pub fn apply_release(&mut self, kernel: &str) {
        if crate::kernels::at_least(kernel, 5, 10) {
            return;
        }
        self.busy_interval_less_one = false;
        for doms in &mut self.per_cpu {
            for sd in doms.iter_mut() {
                sd.busy_factor = BUSY_FACTOR_PRE_5_10;
                if !sd.flags.contains(SD_SHARE_CPUCAPACITY) && !sd.flags.contains(SD_SHARE_LLC) {
                    sd.imbalance_pct = IMBALANCE_PCT_PRE_5_10;
                }
            }
        }
    }

    /// `get_sd_balance_interval`: `balance_interval_ms` (times
    /// `busy_factor` when busy) in jiffies, minus one jiffy when busy (from
    /// 5.10: [`Self::busy_interval_less_one`]),
    /// clamped to `[1, max_load_balance_interval]`.
    pub fn balance_interval_jiffies(
        &self,
        d: &SchedDomain,
        balance_interval_ms: u64,
        busy: bool,
    ) -> u64 {
        let ms = if busy {
            balance_interval_ms * d.busy_factor as u64
        } else {
            balance_interval_ms
        };
        let mut j = msecs_to_jiffies(ms, self.hz);
        if busy && self.busy_interval_less_one {
            j = j.saturating_sub(1);
        }
        j.clamp(1, self.max_load_balance_interval.max(1))
    }
}

/// The levels the kernel builds, bottom-up (steps 1–3).
fn topology_levels(m: &Machine) -> Vec<RawLevel> {
    let n = m.nr_cpus();
    let mut capacities: Vec<u32> = m.cpus.iter().map(|c| c.capacity).collect();
    capacities.sort_unstable();
    capacities.dedup();
    let caps = &capacities[..];
    let cpu = |i: usize| CpuId(i as u32);

    let mut levels = vec![
        RawLevel::new(
            Level::Smt,
            SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
            None,
            m,
            caps,
            |i| m.core_span(cpu(i)),
        ),
        // arch_topology's cpu_clustergroup_mask: a cluster covering the whole
        // coregroup (LLC) is no cluster; fall back to the SMT mask so the
        // level degenerates and MC keeps the LLC. This is the a7-octa case
        // (its L2 cluster *is* the LLC): no CLS, MC(4) then PKG(8).
        RawLevel::new(Level::Cls, SD_CLUSTER | SD_SHARE_LLC, None, m, caps, |i| {
            let cls = m.cluster_span(cpu(i));
            if cls.weight() >= m.llc_span(cpu(i)).weight() {
                m.core_span(cpu(i))
            } else {
                cls
            }
        }),
        RawLevel::new(Level::Mc, SD_SHARE_LLC, None, m, caps, |i| {
            m.llc_span(cpu(i))
        }),
    ];
    let (_, _, _, nr_nodes, nr_pkgs) = m.counts();
    let mut nodes_in_pkg = vec![0u32; nr_pkgs];
    for node in 0..nr_nodes as u32 {
        let first = m.node_cpus(node).first().expect("dense node");
        nodes_in_pkg[m.cpu(first).package as usize] += 1;
    }
    let numa_in_package = nodes_in_pkg.iter().any(|&k| k > 1);
    if !numa_in_package {
        levels.push(RawLevel::new(
            Level::Pkg,
            SdFlags::EMPTY,
            None,
            m,
            caps,
            |i| m.package_span(cpu(i)),
        ));
    }
    if nr_nodes > 1 {
        for (j, &dist) in distinct_distances(m).iter().enumerate() {
            // Span of each node at this distance: every node within it.
            let masks: Vec<CpuMask> = (0..nr_nodes)
                .map(|a| {
                    let mut mask = CpuMask::new(n);
                    for b in 0..nr_nodes {
                        if m.node_distance[a][b] <= dist {
                            for c in m.node_cpus(b as u32).iter() {
                                mask.set(c);
                            }
                        }
                    }
                    mask
                })
                .collect();
            let (level, flags) = if j == 0 {
                (Level::Node, SdFlags::EMPTY)
            } else {
                (Level::Numa(j as u32), SD_NUMA)
            };
            levels.push(RawLevel::new(level, flags, Some(dist), m, caps, |i| {
                &masks[m.cpu(cpu(i)).node as usize]
            }));
        }
    }
    levels
}

/// Distinct SLIT distances, ascending.
fn distinct_distances(m: &Machine) -> Vec<u32> {
    let mut d: Vec<u32> = m.node_distance.iter().flatten().copied().collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// One CPU's full chain with `sd_init` applied (step 4).
fn raw_chain(cpu: usize, n: usize, levels: &[RawLevel]) -> Vec<RawDomain> {
    let mut chain: Vec<RawDomain> = Vec::with_capacity(levels.len());
    for (li, lvl) in levels.iter().enumerate() {
        let span_id = lvl.span_of[cpu];
        let weight = lvl.weights[span_id as usize];
        let mut flags = DEFAULT_FLAGS | lvl.topo_flags | lvl.asym[span_id as usize];
        let (imbalance_pct, cache_nice_tries);
        if flags.contains(SD_SHARE_CPUCAPACITY) {
            imbalance_pct = 110;
            cache_nice_tries = 0;
        } else if flags.contains(SD_SHARE_LLC) {
            imbalance_pct = 117;
            cache_nice_tries = 1;
        } else if flags.contains(SD_NUMA) {
            imbalance_pct = 117;
            cache_nice_tries = 2;
            flags.remove(SD_PREFER_SIBLING);
            flags.insert(SD_SERIALIZE);
            if lvl.numa_distance.unwrap_or(0) > NODE_RECLAIM_DISTANCE {
                flags.remove(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
            }
        } else {
            imbalance_pct = 117;
            cache_nice_tries = 1;
        }
        if flags.contains(SD_ASYM_CPUCAPACITY) {
            if let Some(child) = chain.last_mut() {
                child.flags.remove(SD_PREFER_SIBLING);
            }
        }
        let single_group = match li {
            0 => weight == 1,
            _ => {
                levels[li - 1].spans[levels[li - 1].span_of[cpu] as usize]
                    == lvl.spans[span_id as usize]
            }
        };
        chain.push(RawDomain {
            li,
            span_id,
            weight,
            flags,
            imbalance_pct,
            cache_nice_tries,
            imb_numa_nr: 0,
            single_group,
        });
        if weight as usize == n {
            break;
        }
    }
    chain
}

/// `NUMA_IMBALANCE_MIN` (fair.c): the imbalance, in tasks or idle CPUs,
/// that `adjust_numa_imbalance` tolerates between NUMA groups while the
/// destination stays under `imb_numa_nr` (the load balancer's
/// `calculate_imbalance` and, from 6.0, fork placement).
pub const NUMA_IMBALANCE_MIN: u32 = 2;

/// How `build_sched_domains` sizes `imb_numa_nr`, by release. Only the
/// first domain above a single LLC differs: with several LLCs it allows
/// one task per LLC in every release that has the field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ImbNumaRule {
    /// Before 5.18 the field does not exist (0 everywhere; no release's
    /// NUMA rule before 5.18 reads it).
    Absent,
    /// 5.18-5.19 (e496132ebedd "sched/fair: Adjust the allowed NUMA
    /// imbalance when SD_NUMA spans multiple LLCs"): a quarter of the
    /// domain's CPUs, with no minimum.
    Quarter,
    /// 6.0 on (026b98a93bbd "sched/numa: Adjust imb_numa_nr to a better
    /// approximation of memory channels"): an eighth, "a better
    /// approximation of the number of memory channels", and at least 1
    /// "to allow a communicating pair to remain local".
    EighthAtLeastOne,
}

impl ImbNumaRule {
    /// The rule of a `--kernel` release (see [`crate::kernels::at_least`]).
    pub fn for_kernel(kernel: &str) -> Self {
        let rows = [((6, 0), Self::EighthAtLeastOne), ((5, 18), Self::Quarter)];
        crate::kernels::by_release(kernel, &rows, Self::Absent)
    }
}

/// `imb_numa_nr` on the full chain (step 5).
fn set_imb_numa_nr(chain: &mut [RawDomain], rule: ImbNumaRule) {
    if rule == ImbNumaRule::Absent {
        return;
    }
    let mut imb = 0u32;
    let mut imb_span = 1u32;
    for k in 0..chain.len() {
        let above_llc = k > 0
            && !chain[k].flags.contains(SD_SHARE_LLC)
            && chain[k - 1].flags.contains(SD_SHARE_LLC);
        if above_llc {
            let nr_llcs = chain[k].weight / chain[k - 1].weight;
            imb = match (nr_llcs, rule) {
                (1, ImbNumaRule::Quarter) => chain[k].weight >> 2,
                (1, _) => (chain[k].weight >> 3).max(1),
                _ => nr_llcs,
            };
            chain[k].imb_numa_nr = imb;
            // Scale higher levels by the span of the first NUMA domain above.
            imb_span = chain[k + 1..]
                .iter()
                .find(|d| d.flags.contains(SD_NUMA))
                .map_or(chain[k].weight, |d| d.weight);
        } else {
            let factor = (chain[k].weight / imb_span).max(1);
            chain[k].imb_numa_nr = imb * factor;
        }
    }
}

/// Removes degenerate domains (step 6).
fn degenerate(chain: &mut Vec<RawDomain>, levels: &[RawLevel]) {
    let mut k = 0;
    while k + 1 < chain.len() {
        if sd_parent_degenerate(&chain[k], &chain[k + 1], levels) {
            let parent = chain.remove(k + 1);
            // Same span, so the property carries down.
            if parent.flags.contains(SD_PREFER_SIBLING) {
                chain[k].flags.insert(SD_PREFER_SIBLING);
            }
        } else {
            k += 1;
        }
    }
    if chain.first().is_some_and(sd_degenerate) {
        chain.remove(0);
    }
}

#[cfg(test)]
mod tests;
