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
//! it live in `domains.rs` (sched-domains issue); presets in `presets.rs`;
//! the sysfs importer in `sysfs.rs` (it takes a file-reading closure, so the
//! library itself does no I/O).

pub mod cpumask;
pub mod presets;
pub mod sysfs;

pub use cpumask::CpuMask;

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
    spans: Spans,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Spans {
    core: Vec<CpuMask>,
    cluster: Vec<CpuMask>,
    llc: Vec<CpuMask>,
    node: Vec<CpuMask>,
    package: Vec<CpuMask>,
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
            return bad(format!("{} CPUs is more than the {MAX_CPUS} supported", cpus.len()));
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
                return Err(format!("{what} ids are not dense ({what} {empty} has no CPU)"));
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
            })
        })();
        let spans = match spans {
            Ok(s) => s,
            Err(m) => return bad(m),
        };
        // Nesting: all CPUs of a core share a cluster, of a cluster an LLC, ...
        for (i, c) in cpus.iter().enumerate() {
            let first_of = |span: &CpuMask| span.first().unwrap().idx();
            let checks: [(&str, usize, &str, bool); 4] = [
                ("core", first_of(&spans.core[c.core as usize]), "cluster", cpus[first_of(&spans.core[c.core as usize])].cluster == c.cluster),
                ("cluster", first_of(&spans.cluster[c.cluster as usize]), "LLC", cpus[first_of(&spans.cluster[c.cluster as usize])].llc == c.llc),
                ("LLC", first_of(&spans.llc[c.llc as usize]), "node", cpus[first_of(&spans.llc[c.llc as usize])].node == c.node),
                ("node", first_of(&spans.node[c.node as usize]), "package", cpus[first_of(&spans.node[c.node as usize])].package == c.package),
            ];
            for (lvl, other, parent, ok) in checks {
                if !ok {
                    return bad(format!(
                        "CPU {i} and CPU {other} share a {lvl} but not a {parent}"
                    ));
                }
            }
            if c.capacity == 0 || c.capacity > 1024 {
                return bad(format!("CPU {i} has capacity {} (must be 1..=1024)", c.capacity));
            }
        }
        let nodes = spans.node.len();
        if node_distance.len() != nodes || node_distance.iter().any(|r| r.len() != nodes) {
            return bad(format!("the node distance matrix must be {nodes}x{nodes}"));
        }
        for a in 0..nodes {
            if node_distance[a][a] != 10 {
                return bad(format!("node {a}'s distance to itself is {} (must be 10)", node_distance[a][a]));
            }
            for b in 0..nodes {
                if a != b && node_distance[a][b] <= 10 {
                    return bad(format!("distance from node {a} to node {b} must be above 10"));
                }
                if node_distance[a][b] != node_distance[b][a] {
                    return bad(format!("node distances {a}->{b} and {b}->{a} differ"));
                }
            }
        }
        if idle_states.is_empty() {
            return bad("needs at least one idle state".into());
        }
        Ok(Machine {
            name,
            description: description.into(),
            cpus,
            node_distance,
            costs,
            idle_states,
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
        self.spans.core.iter().any(|s| s.weight() > 1)
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
