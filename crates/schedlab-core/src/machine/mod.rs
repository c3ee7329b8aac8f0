//! The simulated machine: CPUs grouped into SMT cores, clusters, LLCs, NUMA
//! nodes and packages, a node distance matrix, and per-machine costs.
//!
//! ```text
//!   package ─┬─ node (NUMA, SLIT distances) ─┬─ LLC ─┬─ cluster ─┬─ core ─┬─ CPU
//!            │                               │       │           │        └─ CPU (SMT sibling)
//! ```
//!
//! Ids are absolute and machine-wide: `core` 7 is the same physical core for
//! every CPU that names it, whatever its package (unlike sysfs `core_id`,
//! which is per package). Every level nests in the one above.
//!
//! This module owns the topology description only. Sched domains built from
//! it live in `domains/`; the builder of regular machines in `layout.rs`;
//! presets and synthetic test machines in `presets.rs`; machine files
//! (`FILE.toml`, `layout:...`) in `layout_file.rs`; the sysfs importer in `sysfs.rs` (it reads
//! through a [`sysfs::SysfsReader`] supplied by the caller, so the library
//! itself does no I/O); the text rendering for `schedlab machines` in
//! `describe.rs`.

pub mod cpumask;
mod describe;
pub mod domains;
pub mod layout;
pub mod layout_file;
pub mod presets;
pub mod sysfs;

pub use cpumask::CpuMask;
pub use presets::{make_test_machine, preset, preset_list, PRESET_NAMES};

use crate::ids::CpuId;
use crate::time::Nanos;

/// Where one logical CPU sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuTopo {
    /// Package (socket), machine-wide id.
    pub package: u32,
    /// NUMA node, machine-wide id (index into the distance matrix).
    pub node: u32,
    /// Last-level cache, machine-wide id.
    pub llc: u32,
    /// Cluster (shared L2 / module), machine-wide id; equals the core id
    /// when the machine has no clusters.
    pub cluster: u32,
    /// Physical core, machine-wide id.
    pub core: u32,
    /// Capacity (`arch_scale_cpu_capacity`, 1024 for the biggest CPU).
    pub capacity: u32,
}

/// One cpuidle state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    /// Name, as in `/sys/devices/system/cpu/cpuN/cpuidle/stateK/name`.
    pub name: String,
    /// Time from the wake-up interrupt until the CPU runs code again.
    pub exit_latency_ns: Nanos,
    /// Minimum idle time for the state to pay off; the governor only picks a
    /// state whose residency fits the predicted idle time.
    pub target_residency_ns: Nanos,
}

/// How far apart two CPUs are, for cache-line transfer costs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distance {
    /// The same logical CPU.
    SameCpu,
    /// SMT siblings.
    SameCore,
    /// Same cluster (shared L2).
    SameCluster,
    /// Same LLC.
    SameLlc,
    /// Same NUMA node, different LLC.
    SameNode,
    /// Same package, different node (SNC / NPS).
    SamePackage,
    /// Different packages.
    OtherPackage,
}

/// Context switch of the machine the host figures stand for.
pub const REFERENCE_SWITCH_NS: crate::time::Nanos = 2_000;

/// Costs that belong to the machine rather than to the scheduler code.
///
/// Every cost is a figure for this class of hardware, stated in the preset
/// with its source or marked as a guess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineCosts {
    /// Cache-line transfer latency between two CPUs at each [`Distance`]
    /// (index = `Distance as usize`).
    pub line_transfer_ns: [Nanos; 7],
    /// CPU time of one context switch (`__schedule` + switch_to).
    pub context_switch_ns: Nanos,
    /// CPU time of one wakeup (`try_to_wake_up` incl. select_task_rq, enqueue).
    pub wakeup_ns: Nanos,
    /// Latency from sending a reschedule/wakeup IPI until the target runs the
    /// handler, excluding any idle-exit latency of the target.
    pub ipi_latency_ns: Nanos,
    /// CPU time the *sender* of a reschedule/wakeup IPI spends sending it
    /// (`smp_send_reschedule`, the wakelist IPI of `ttwu_queue_wakelist`).
    /// Small on bare metal (an x2APIC ICR write) and taken as 0 there; in a
    /// guest without IPI virtualisation the write exits to the host, which
    /// also kicks the target vCPU: microseconds (measured, `vm-2cpu`).
    pub ipi_send_ns: Nanos,
    /// The syscall figures of `sched/syscall_cost.rs` are multiplied by
    /// `syscall_scale[0] / syscall_scale[1]`: a preset's context switch over
    /// the 2 µs reference (the presets' rule), or 1/1 for costs measured on
    /// the host the syscall figures come from.
    pub syscall_scale: [Nanos; 2],
    /// Pipe write, pipe read, AF_UNIX write, AF_UNIX read of one message,
    /// measured on this machine in hackbench's own pattern (a writer and a
    /// reader of 100-byte messages taking turns on one CPU): when present
    /// they replace the scaled host figures of `sched/syscall_cost.rs`.
    pub channel_ns: Option<[Nanos; 4]>,
    /// The extra CPU time of each of those four calls when the channel was
    /// last used on another CPU, measured on this machine (a recording's
    /// costs.json: the stream cases on two CPUs minus on one). None: the
    /// host's line transfers per call at `line_transfer_ns`
    /// (`sched/syscall_cost.rs`).
    pub channel_xcpu_ns: Option<[Nanos; 4]>,
    /// The waker's extra CPU time when it enqueues a task on another CPU's
    /// runqueue itself, measured on this machine (a recording's
    /// costs.json). None: the host's line transfers at `line_transfer_ns`
    /// (`sched/ttwu_xcpu.rs`).
    pub wakeup_xcpu_ns: Option<Nanos>,
    /// The extra CPU time of the switch to a task enqueued from another
    /// CPU, measured on this machine; None: as `wakeup_xcpu_ns`.
    pub switch_xcpu_ns: Option<Nanos>,
    /// The sleep path of a pipe call and of an AF_UNIX stream call that
    /// blocks: its CPU time beyond the call, the wakeup that ends the
    /// sleep and the context switch, measured on this machine (a
    /// recording's costs.json, `pipe_sleep_ns` and `unix_sleep_ns`).
    /// None: the host's share of a context switch (`sched/syscall_cost.rs`).
    pub chan_sleep_ns: Option<[Nanos; 2]>,
}

/// A machine to simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Preset or import name.
    pub name: String,
    /// One line: what the machine is.
    pub description: String,
    /// Per logical CPU, indexed by `CpuId`.
    pub cpus: Vec<CpuTopo>,
    /// SLIT node distances, `node_distance[a][b]`, 10 = local.
    pub node_distance: Vec<Vec<u32>>,
    /// Hardware costs.
    pub costs: MachineCosts,
    /// cpuidle states, shallowest first (state 0 is the polling/WFI state).
    pub idle_states: Vec<IdleState>,
    /// Measured host noise this machine runs with by default
    /// (`sched/noise.rs`); None for a clean machine.
    pub noise: Option<crate::noise::NoiseParams>,
    spans: Spans,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Spans {
    core: Vec<CpuMask>,
    cluster: Vec<CpuMask>,
    llc: Vec<CpuMask>,
    node: Vec<CpuMask>,
    package: Vec<CpuMask>,
    /// Some core has more than one CPU (cached: `has_smt` is asked on
    /// every wakeup).
    smt: bool,
    /// The CPUs of each core as a list (the wakeup path walks a core's
    /// siblings; a list costs the core's width, a mask the machine's).
    core_list: Vec<Vec<CpuId>>,
    /// Number of CPUs of each cluster.
    cluster_weight: Vec<u32>,
}

/// Why a machine description is impossible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineError {
    /// The description is inconsistent; the message says where.
    #[error("{0}")]
    Invalid(String),
}

/// Largest machine the simulator accepts.
pub const MAX_CPUS: usize = 16384;

impl Machine {
    /// Builds a machine, checking that the levels nest and ids are dense.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        cpus: Vec<CpuTopo>,
        node_distance: Vec<Vec<u32>>,
        costs: MachineCosts,
        idle_states: Vec<IdleState>,
    ) -> Result<Machine, MachineError> {
        let name = name.into();
        let bad = |m: String| Err(MachineError::Invalid(format!("machine '{name}': {m}")));
        if cpus.is_empty() {
            return bad("has no CPUs".into());
        }
        if cpus.len() > MAX_CPUS {
            return bad(format!(
                "{} CPUs is more than the {MAX_CPUS} supported",
                cpus.len()
            ));
        }
        let n = cpus.len();
        let dense = |f: &dyn Fn(&CpuTopo) -> u32, what: &str| -> Result<Vec<CpuMask>, String> {
            let max = cpus.iter().map(f).max().unwrap() as usize;
            if max >= n {
                return Err(format!("{what} id {max} is out of range for {n} CPUs"));
            }
            let mut spans = vec![CpuMask::new(n); max + 1];
            for (i, c) in cpus.iter().enumerate() {
                spans[f(c) as usize].set(CpuId(i as u32));
            }
            if let Some(empty) = spans.iter().position(|s| s.is_empty()) {
                return Err(format!(
                    "{what} ids are not dense ({what} {empty} has no CPU)"
                ));
            }
            Ok(spans)
        };
        let spans = (|| -> Result<Spans, String> {
            Ok(Spans {
                core: dense(&|c| c.core, "core")?,
                cluster: dense(&|c| c.cluster, "cluster")?,
                llc: dense(&|c| c.llc, "LLC")?,
                node: dense(&|c| c.node, "node")?,
                package: dense(&|c| c.package, "package")?,
                smt: false,
                core_list: Vec::new(),
                cluster_weight: Vec::new(),
            })
        })();
        let mut spans = match spans {
            Ok(s) => s,
            Err(m) => return bad(m),
        };
        spans.smt = spans.core.iter().any(|s| s.weight() > 1);
        spans.core_list = spans.core.iter().map(|s| s.iter().collect()).collect();
        spans.cluster_weight = spans.cluster.iter().map(|s| s.weight() as u32).collect();
        // Nesting: all CPUs of a core share a cluster, of a cluster an LLC, ...
        for (i, c) in cpus.iter().enumerate() {
            let first_of = |span: &CpuMask| span.first().unwrap().idx();
            let checks: [(&str, usize, &str, bool); 4] = [
                (
                    "core",
                    first_of(&spans.core[c.core as usize]),
                    "cluster",
                    cpus[first_of(&spans.core[c.core as usize])].cluster == c.cluster,
                ),
                (
                    "cluster",
                    first_of(&spans.cluster[c.cluster as usize]),
                    "LLC",
                    cpus[first_of(&spans.cluster[c.cluster as usize])].llc == c.llc,
                ),
                (
                    "LLC",
                    first_of(&spans.llc[c.llc as usize]),
                    "node",
                    cpus[first_of(&spans.llc[c.llc as usize])].node == c.node,
                ),
                (
                    "node",
                    first_of(&spans.node[c.node as usize]),
                    "package",
                    cpus[first_of(&spans.node[c.node as usize])].package == c.package,
                ),
            ];
            for (lvl, other, parent, ok) in checks {
                if !ok {
                    let a = |w: &str| if w == "LLC" { "an" } else { "a" };
                    return bad(format!(
                        "CPU {i} and CPU {other} share {} {lvl} but not {} {parent}",
                        a(lvl),
                        a(parent)
                    ));
                }
            }
            if c.capacity == 0 || c.capacity > 1024 {
                return bad(format!(
                    "CPU {i} has capacity {} (must be 1..=1024)",
                    c.capacity
                ));
            }
        }
        let nodes = spans.node.len();
        if node_distance.len() != nodes || node_distance.iter().any(|r| r.len() != nodes) {
            return bad(format!("the node distance matrix must be {nodes}x{nodes}"));
        }
        for (a, row) in node_distance.iter().enumerate() {
            for (b, &d) in row.iter().enumerate() {
                if a == b && d != 10 {
                    return bad(format!("node {a}'s distance to itself is {d} (must be 10)"));
                }
                if a != b && d <= 10 {
                    return bad(format!(
                        "distance from node {a} to node {b} is {d} (must be above 10)"
                    ));
                }
                if d > 254 {
                    return bad(format!(
                        "distance from node {a} to node {b} is {d} (SLIT distances stop at 254)"
                    ));
                }
                if d != node_distance[b][a] {
                    return bad(format!("node distances {a}->{b} and {b}->{a} differ"));
                }
            }
        }
        if idle_states.is_empty() {
            return bad("needs at least one idle state".into());
        }
        // `idle_state_for` picks the last state whose residency fits, so the
        // states must be ordered by target residency (cpuidle drivers list
        // them shallowest first).
        for (i, w) in idle_states.windows(2).enumerate() {
            if w[1].target_residency_ns < w[0].target_residency_ns {
                return bad(format!(
                    "idle state {} ({}) has a shorter target residency than state {} ({}); states must go from shallow to deep",
                    i + 1,
                    w[1].name,
                    i,
                    w[0].name
                ));
            }
        }
        Ok(Machine {
            name,
            description: description.into(),
            cpus,
            node_distance,
            costs,
            idle_states,
            noise: None,
            spans,
        })
    }

    /// Number of logical CPUs.
    #[inline]
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Topology of one CPU.
    #[inline]
    pub fn cpu(&self, cpu: CpuId) -> &CpuTopo {
        &self.cpus[cpu.idx()]
    }

    /// SMT siblings of `cpu`, itself included.
    pub fn core_span(&self, cpu: CpuId) -> &CpuMask {
        &self.spans.core[self.cpu(cpu).core as usize]
    }
    /// SMT siblings of `cpu`, itself included, in increasing order (the
    /// CPUs of [`Self::core_span`] as a list).
    #[inline]
    pub fn core_siblings(&self, cpu: CpuId) -> &[CpuId] {
        &self.spans.core_list[self.cpu(cpu).core as usize]
    }
    /// Number of CPUs of `cpu`'s cluster (`cluster_span(cpu).weight()`).
    #[inline]
    pub fn cluster_weight(&self, cpu: CpuId) -> usize {
        self.spans.cluster_weight[self.cpu(cpu).cluster as usize] as usize
    }
    /// CPUs of `cpu`'s cluster.
    pub fn cluster_span(&self, cpu: CpuId) -> &CpuMask {
        &self.spans.cluster[self.cpu(cpu).cluster as usize]
    }
    /// CPUs sharing `cpu`'s last-level cache.
    pub fn llc_span(&self, cpu: CpuId) -> &CpuMask {
        &self.spans.llc[self.cpu(cpu).llc as usize]
    }
    /// CPUs of `cpu`'s NUMA node.
    pub fn node_span(&self, cpu: CpuId) -> &CpuMask {
        &self.spans.node[self.cpu(cpu).node as usize]
    }
    /// CPUs of `cpu`'s package.
    pub fn package_span(&self, cpu: CpuId) -> &CpuMask {
        &self.spans.package[self.cpu(cpu).package as usize]
    }
    /// CPUs of core `core` (machine-wide id).
    pub fn core_cpus(&self, core: u32) -> &CpuMask {
        &self.spans.core[core as usize]
    }
    /// CPUs of NUMA node `node`.
    pub fn node_cpus(&self, node: u32) -> &CpuMask {
        &self.spans.node[node as usize]
    }
    /// Largest number of SMT threads in one core (1 without SMT).
    pub fn max_threads_per_core(&self) -> usize {
        self.spans
            .core
            .iter()
            .map(|s| s.weight())
            .max()
            .unwrap_or(1)
    }
    /// Number of cores, clusters, LLCs, nodes and packages.
    pub fn counts(&self) -> (usize, usize, usize, usize, usize) {
        (
            self.spans.core.len(),
            self.spans.cluster.len(),
            self.spans.llc.len(),
            self.spans.node.len(),
            self.spans.package.len(),
        )
    }
    /// True when some core has more than one CPU.
    pub fn has_smt(&self) -> bool {
        self.spans.smt
    }
    /// `cpus_share_cache(a, b)`.
    #[inline]
    pub fn share_llc(&self, a: CpuId, b: CpuId) -> bool {
        self.cpu(a).llc == self.cpu(b).llc
    }

    /// How far apart two CPUs are.
    pub fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        let (x, y) = (self.cpu(a), self.cpu(b));
        if a == b {
            Distance::SameCpu
        } else if x.core == y.core {
            Distance::SameCore
        } else if x.cluster == y.cluster {
            Distance::SameCluster
        } else if x.llc == y.llc {
            Distance::SameLlc
        } else if x.node == y.node {
            Distance::SameNode
        } else if x.package == y.package {
            Distance::SamePackage
        } else {
            Distance::OtherPackage
        }
    }

    /// Cache-line transfer cost between two CPUs.
    #[inline]
    pub fn line_transfer_ns(&self, a: CpuId, b: CpuId) -> Nanos {
        self.costs.line_transfer_ns[self.distance(a, b) as usize]
    }

    /// The deepest idle state whose target residency fits `predicted_idle_ns`
    /// (the menu/teo governors' main rule: next timer event bounds the sleep).
    pub fn idle_state_for(&self, predicted_idle_ns: Nanos) -> usize {
        let mut pick = 0;
        for (i, s) in self.idle_states.iter().enumerate() {
            if s.target_residency_ns <= predicted_idle_ns {
                pick = i;
            }
        }
        pick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(package: u32, node: u32, llc: u32, cluster: u32, core: u32) -> CpuTopo {
        CpuTopo {
            package,
            node,
            llc,
            cluster,
            core,
            capacity: 1024,
        }
    }

    /// 4 CPUs: two 2-thread cores, each in its own LLC/node/package.
    fn cpus() -> Vec<CpuTopo> {
        vec![
            topo(0, 0, 0, 0, 0),
            topo(0, 0, 0, 0, 0),
            topo(1, 1, 1, 1, 1),
            topo(1, 1, 1, 1, 1),
        ]
    }

    fn try_build(cpus: Vec<CpuTopo>, dist: Vec<Vec<u32>>) -> Result<Machine, String> {
        Machine::new(
            "t",
            "test",
            cpus,
            dist,
            presets::default_costs(),
            presets::default_idle_states(),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn machine_new_accepts_valid() {
        let m = try_build(cpus(), vec![vec![10, 20], vec![20, 10]]).unwrap();
        assert_eq!(m.counts(), (2, 2, 2, 2, 2));
        assert_eq!(m.core_cpus(1).to_list(), "2-3");
        assert_eq!(m.max_threads_per_core(), 2);
        assert_eq!(m.distance(CpuId(0), CpuId(2)), Distance::OtherPackage);
    }

    #[test]
    fn machine_new_rejects_non_nesting() {
        let d = vec![vec![10, 20], vec![20, 10]];
        // CPU 1 shares core 0 with CPU 0 but sits in cluster 1.
        let mut c = cpus();
        c[1].cluster = 1;
        c[2].cluster = 0;
        assert_eq!(
            try_build(c, d.clone()).unwrap_err(),
            "machine 't': CPU 1 and CPU 0 share a core but not a cluster"
        );
        // An LLC spanning two nodes.
        let mut c = cpus();
        c[2].llc = 0;
        c[3].llc = 0;
        let e = try_build(c, d.clone()).unwrap_err();
        assert!(e.contains("share an LLC but not a node"), "{e}");
        // Sparse ids.
        let mut c = cpus();
        for x in &mut c[2..] {
            x.core = 3;
        }
        let e = try_build(c, d.clone()).unwrap_err();
        assert_eq!(e, "machine 't': core ids are not dense (core 1 has no CPU)");
        let mut c = cpus();
        c[0].capacity = 0;
        assert!(try_build(c, d).unwrap_err().contains("capacity 0"));
        assert!(try_build(vec![], vec![])
            .unwrap_err()
            .contains("has no CPUs"));
    }

    #[test]
    fn machine_new_rejects_bad_distances() {
        let e = |d: Vec<Vec<u32>>| try_build(cpus(), d).unwrap_err();
        assert_eq!(
            e(vec![vec![10]]),
            "machine 't': the node distance matrix must be 2x2"
        );
        assert_eq!(
            e(vec![vec![10, 20], vec![20]]),
            "machine 't': the node distance matrix must be 2x2"
        );
        assert!(e(vec![vec![11, 20], vec![20, 10]]).contains("node 0's distance to itself is 11"));
        assert!(e(vec![vec![10, 10], vec![10, 10]]).contains("must be above 10"));
        assert!(e(vec![vec![10, 20], vec![21, 10]]).contains("0->1 and 1->0 differ"));
        assert!(e(vec![vec![10, 300], vec![300, 10]]).contains("stop at 254"));
    }

    #[test]
    fn machine_new_rejects_unordered_idle_states() {
        let mut idle = presets::default_idle_states();
        idle.swap(1, 2);
        let e = Machine::new(
            "t",
            "test",
            cpus(),
            vec![vec![10, 20], vec![20, 10]],
            presets::default_costs(),
            idle,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("idle state 2 (C1) has a shorter target residency"),
            "{e}"
        );
        let e = Machine::new(
            "t",
            "test",
            cpus(),
            vec![vec![10, 20], vec![20, 10]],
            presets::default_costs(),
            vec![],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at least one idle state"), "{e}");
    }
}
