//! The builder of regular machines, shared by the presets (`presets.rs`)
//! and the machine files (`layout_file.rs`): every socket has the same
//! shape, cores are laid out socket → node → LLC → cluster → core, and
//! logical CPUs are numbered either the way Linux numbers them on x86
//! servers (all first threads of every core, socket by socket, then all
//! second threads) or with SMT siblings adjacent.

use super::{CpuTopo, IdleState, Machine, MachineCosts, MachineError, MAX_CPUS};

/// How logical CPU numbers are assigned to the threads of each core.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Numbering {
    /// Linux on x86 servers (Intel and AMD): CPU `t * nr_cores + core`, so
    /// CPUs 0..nr_cores are the first threads of all cores (socket 0's
    /// cores first) and `i` and `i + nr_cores` are SMT siblings.
    SiblingsLast,
    /// CPU `core * threads + t`: siblings are adjacent (scx's test topology,
    /// many Arm and POWER machines).
    SiblingsAdjacent,
}

impl Numbering {
    /// The name a machine file uses.
    pub fn name(self) -> &'static str {
        match self {
            Numbering::SiblingsLast => "siblings-last",
            Numbering::SiblingsAdjacent => "siblings-adjacent",
        }
    }

    /// The numbering a machine file names, if any.
    pub fn from_name(name: &str) -> Option<Numbering> {
        [Numbering::SiblingsLast, Numbering::SiblingsAdjacent]
            .into_iter()
            .find(|n| n.name() == name)
    }
}

/// SLIT distances between the nodes of a [`Layout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeDistances {
    /// One figure between two nodes of a socket (unused with one node per
    /// socket) and one between nodes of different sockets (unused with one
    /// socket).
    BySocket {
        /// Between two nodes of the same socket.
        same_socket: u32,
        /// Between nodes of different sockets.
        other_socket: u32,
    },
    /// The whole table, `table[a][b]`, nodes numbered socket by socket.
    Table(Vec<Vec<u32>>),
}

/// A regular machine: every socket has the same shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Packages.
    pub sockets: u32,
    /// NUMA nodes per socket (SNC / NPS modes).
    pub nodes_per_socket: u32,
    /// Last-level caches per node.
    pub llcs_per_node: u32,
    /// Cores per LLC.
    pub cores_per_llc: u32,
    /// Cores sharing an L2 (a cluster or module); 1 without clusters. Must
    /// divide `cores_per_llc`.
    pub cores_per_cluster: u32,
    /// SMT threads per core.
    pub threads_per_core: u32,
    /// How CPU numbers are given to threads.
    pub numbering: Numbering,
    /// Node distances.
    pub distances: NodeDistances,
    /// Capacity of every CPU (1..=1024).
    pub capacity: u32,
}

impl Layout {
    /// Number of logical CPUs, or None past `u64`.
    pub fn nr_cpus(&self) -> Option<u64> {
        [
            self.nodes_per_socket,
            self.llcs_per_node,
            self.cores_per_llc,
            self.threads_per_core,
        ]
        .iter()
        .try_fold(u64::from(self.sockets), |acc, &n| {
            acc.checked_mul(u64::from(n))
        })
    }

    /// Number of NUMA nodes.
    pub fn nr_nodes(&self) -> u64 {
        u64::from(self.sockets) * u64::from(self.nodes_per_socket)
    }

    /// Builds the machine. The counts must be non-zero, `cores_per_cluster`
    /// must divide `cores_per_llc` and the machine must have at most
    /// [`MAX_CPUS`] CPUs; everything else is checked by [`Machine::new`].
    pub fn build(
        &self,
        name: impl Into<String>,
        description: impl Into<String>,
        costs: MachineCosts,
        idle_states: Vec<IdleState>,
    ) -> Result<Machine, MachineError> {
        let name = name.into();
        let bad = |m: String| Err(MachineError::Invalid(format!("machine '{name}': {m}")));
        let counts = [
            ("sockets", self.sockets),
            ("nodes_per_socket", self.nodes_per_socket),
            ("llcs_per_node", self.llcs_per_node),
            ("cores_per_llc", self.cores_per_llc),
            ("cores_per_cluster", self.cores_per_cluster),
            ("threads_per_core", self.threads_per_core),
        ];
        if let Some((what, _)) = counts.iter().find(|(_, n)| *n == 0) {
            return bad(format!("{what} is 0"));
        }
        if !self.cores_per_llc.is_multiple_of(self.cores_per_cluster) {
            return bad(format!(
                "cores_per_cluster {} does not divide cores_per_llc {}",
                self.cores_per_cluster, self.cores_per_llc
            ));
        }
        match self.nr_cpus() {
            Some(n) if n <= MAX_CPUS as u64 => {}
            _ => return bad(format!("more than the {MAX_CPUS} CPUs supported")),
        }
        Machine::new(
            name,
            description,
            self.cpus(),
            self.distances(),
            costs,
            idle_states,
        )
    }

    /// The CPUs, indexed by CPU number (the counts already checked).
    fn cpus(&self) -> Vec<CpuTopo> {
        let cores_per_node = self.llcs_per_node * self.cores_per_llc;
        let cores_per_socket = self.nodes_per_socket * cores_per_node;
        let nr_cores = self.sockets * cores_per_socket;
        let t = self.threads_per_core;
        let mut cpus = vec![None; (nr_cores * t) as usize];
        for core in 0..nr_cores {
            let topo = CpuTopo {
                package: core / cores_per_socket,
                node: core / cores_per_node,
                llc: core / self.cores_per_llc,
                cluster: core / self.cores_per_cluster,
                core,
                capacity: self.capacity,
            };
            for thread in 0..t {
                let cpu = match self.numbering {
                    Numbering::SiblingsLast => thread * nr_cores + core,
                    Numbering::SiblingsAdjacent => core * t + thread,
                };
                cpus[cpu as usize] = Some(topo.clone());
            }
        }
        cpus.into_iter()
            .map(|c| c.expect("every CPU placed"))
            .collect()
    }

    fn distances(&self) -> Vec<Vec<u32>> {
        let (same, other) = match &self.distances {
            NodeDistances::Table(t) => return t.clone(),
            NodeDistances::BySocket {
                same_socket,
                other_socket,
            } => (*same_socket, *other_socket),
        };
        let n = self.sockets * self.nodes_per_socket;
        (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| {
                        if a == b {
                            10
                        } else if a / self.nodes_per_socket == b / self.nodes_per_socket {
                            same
                        } else {
                            other
                        }
                    })
                    .collect()
            })
            .collect()
    }
}
