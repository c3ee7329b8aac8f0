//! host.json: what a recording writes about the host, the capture and
//! the run beside its trace.

use crate::cgroup::GroupStat;
use crate::facts::HostFacts;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Per-CPU buffer statistics after the run (`per_cpu/cpuN/stats`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuBufferStats {
    /// CPU.
    pub cpu: u32,
    /// Every `key: value` of the stats file that is a number.
    pub stats: BTreeMap<String, f64>,
}

/// How the trace was captured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceInfo {
    /// tracefs mount point.
    pub tracefs: PathBuf,
    /// True if this run mounted it.
    pub mounted_now: bool,
    /// The instance directory used.
    pub instance: PathBuf,
    /// `trace_clock`.
    pub clock: String,
    /// Per-CPU buffer size (KiB).
    pub buffer_size_kb: u64,
    /// Events enabled.
    pub events: Vec<String>,
    /// Lines in trace.txt (comments included).
    pub lines: u64,
    /// Buffer statistics per CPU.
    pub per_cpu: Vec<CpuBufferStats>,
}

/// A thread as host.json lists it (to map trace pids to the workload).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadId {
    /// Name.
    pub name: String,
    /// rt-app index.
    pub index: u32,
    /// Kernel tid (0: never started).
    pub tid: i32,
}

/// host.json.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostJson {
    /// Format version of this file.
    pub version: u32,
    /// The host.
    pub host: HostFacts,
    /// The capture.
    pub trace: TraceInfo,
    /// The run's calibration (ns per loop).
    pub calibration: crate::calib::Calibration,
    /// CLOCK_MONOTONIC stamps of the run (ns): t_start, T0, end (0: none), last exit.
    pub clock: BTreeMap<String, u64>,
    /// The cgroup interface used, if any.
    pub cgroup_version: Option<crate::cgroup::CgroupVersion>,
    /// Each group's cpu.stat before and after.
    pub groups: Vec<GroupStat>,
    /// The threads.
    pub threads: Vec<ThreadId>,
    /// Warnings of the run.
    pub warnings: Vec<String>,
}
