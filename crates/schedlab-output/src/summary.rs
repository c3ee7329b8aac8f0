//! `summary.json`, the stable contract (architecture.md section 5).
//!
//! What it owns: the serde structs whose field names **are** the contract,
//! the serialisation (2-space pretty JSON plus a trailing newline) and the
//! conversions from `schedlab_core::stats`.
//!
//! Rules kept here:
//!
//! * Field names and their order follow architecture.md section 5 exactly.
//!   New fields may be added (each struct has an `extra` map, flattened, that
//!   keeps insertion order); no field is ever renamed.
//! * `features` is an ordered map (serde_json's `preserve_order` is on in the
//!   workspace), so the resolved feature set prints in the order it was
//!   built.
//! * Floats (`mean`, `stddev`) are printed with serde_json's shortest
//!   round-trip formatting, which depends only on the bits of the value, so
//!   equal runs give equal bytes. Non-finite values would print as `null`;
//!   [`WakeupLatencyUs::from_stats`] maps them to 0.0 so that never happens.
//!
//! Deviations: none.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use schedlab_core::stats::{CpuStats, SampleStats, TaskStats};

/// Extra fields beyond the contract, printed after the contract's fields.
pub type Extra = Map<String, Value>;

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// schedlab version (the workspace version, `CARGO_PKG_VERSION`).
    pub schedlab_version: String,
    /// The simulated machine.
    pub machine: MachineSummary,
    /// Resolved feature set: name → value (`true`/`false` for sched_feats,
    /// strings for enum-valued ones such as `THROTTLE`).
    pub features: Map<String, Value>,
    /// Master seed.
    pub seed: u64,
    /// Tick rate.
    pub hz: u32,
    /// Simulated duration.
    pub duration_ns: u64,
    /// Per task, in creation order.
    pub tasks: Vec<TaskSummary>,
    /// Per CPU, in CPU order.
    pub cpus: Vec<CpuSummary>,
    /// Per task group.
    pub groups: Vec<GroupSummary>,
    /// Where CPU time went.
    pub profile: ProfileSummary,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `machine`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineSummary {
    /// Preset or file name.
    pub name: String,
    /// Number of logical CPUs.
    pub cpus: u32,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One entry of `tasks`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// rt-app thread name (`cfs_thread-0`).
    pub name: String,
    /// Simulated pid.
    pub pid: u32,
    /// `SCHED_NORMAL`, `SCHED_BATCH`, `SCHED_IDLE`...
    pub policy: String,
    /// Nice value.
    pub nice: i32,
    /// cgroup path (`/` for the root).
    pub group: String,
    /// CPU time received.
    pub runtime_ns: u64,
    /// Time runnable but waiting.
    pub wait_ns: u64,
    /// Times switched in.
    pub switches: u64,
    /// Migrations.
    pub migrations: u64,
    /// Wakeups.
    pub wakeups: u64,
    /// Phase iterations completed (rt-app log rows).
    pub loops: u64,
    /// Statistics of the `wu_lat` column of this task's rt-app log.
    pub wakeup_latency_us: WakeupLatencyUs,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `wakeup_latency_us` of a task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WakeupLatencyUs {
    /// Samples.
    pub n: u64,
    /// Minimum.
    pub min: u64,
    /// Maximum.
    pub max: u64,
    /// Sum.
    pub sum: u64,
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub stddev: f64,
}

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

impl WakeupLatencyUs {
    /// From core's sample statistics (non-finite floats become 0.0).
    pub fn from_stats(s: &SampleStats) -> Self {
        WakeupLatencyUs {
            n: s.n,
            min: s.min,
            max: s.max,
            sum: s.sum,
            mean: finite(s.mean),
            stddev: finite(s.stddev),
        }
    }

    /// Back to core's type (for the tables).
    pub fn to_stats(&self) -> SampleStats {
        SampleStats {
            n: self.n,
            min: self.min,
            max: self.max,
            sum: self.sum,
            mean: self.mean,
            stddev: self.stddev,
        }
    }
}

impl From<&SampleStats> for WakeupLatencyUs {
    fn from(s: &SampleStats) -> Self {
        Self::from_stats(s)
    }
}

impl TaskSummary {
    /// Timer periods and missed periods of a thread that waited on timers
    /// (its `deadlines` entry), None for the others.
    pub fn periods_missed(&self) -> Option<(u64, u64)> {
        let d = self.extra.get("deadlines")?;
        let n = |k: &str| d.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some((n("periods"), n("missed")))
    }

    /// Builds a task entry from its identity, counters and latency samples.
    pub fn from_stats(
        name: impl Into<String>,
        pid: u32,
        policy: impl Into<String>,
        nice: i32,
        group: impl Into<String>,
        st: &TaskStats,
        wu_lat: &SampleStats,
    ) -> Self {
        TaskSummary {
            name: name.into(),
            pid,
            policy: policy.into(),
            nice,
            group: group.into(),
            runtime_ns: st.runtime_ns,
            wait_ns: st.wait_ns,
            switches: st.switches,
            migrations: st.migrations,
            wakeups: st.wakeups,
            loops: st.loops,
            wakeup_latency_us: WakeupLatencyUs::from_stats(wu_lat),
            extra: Extra::new(),
        }
    }
}

/// One entry of `cpus`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSummary {
    /// CPU number.
    pub cpu: u32,
    /// Time running tasks.
    pub busy_ns: u64,
    /// Time idle.
    pub idle_ns: u64,
    /// Time in scheduler paths.
    pub sched_overhead_ns: u64,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

impl CpuSummary {
    /// From core's per-CPU counters.
    pub fn from_stats(cpu: u32, st: &CpuStats) -> Self {
        CpuSummary {
            cpu,
            busy_ns: st.busy_ns,
            idle_ns: st.idle_ns,
            sched_overhead_ns: st.sched_overhead_ns,
            extra: Extra::new(),
        }
    }
}

/// One entry of `groups`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    /// cgroup path (`/tg1`).
    pub path: String,
    /// The group's `cpu.stat` figures.
    pub cpu_stat: GroupCpuStat,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `cpu_stat` of a group (cgroup v2 field names). The contract's four
/// fields are typed; `user_usec`, `system_usec`, `nr_bursts` and
/// `burst_usec` are added fields (in `extra`, so a summary without them
/// reads and rewrites unchanged).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupCpuStat {
    /// `usage_usec`.
    pub usage_usec: u64,
    /// `nr_periods`.
    pub nr_periods: u64,
    /// `nr_throttled`.
    pub nr_throttled: u64,
    /// `throttled_usec`.
    pub throttled_usec: u64,
    /// Fields added later (`user_usec`, `system_usec`, `nr_bursts`,
    /// `burst_usec`).
    #[serde(flatten)]
    pub extra: Extra,
}

impl GroupCpuStat {
    /// A counter by its cpu.stat key (0 when absent).
    pub fn get(&self, key: &str) -> u64 {
        match key {
            "usage_usec" => self.usage_usec,
            "nr_periods" => self.nr_periods,
            "nr_throttled" => self.nr_throttled,
            "throttled_usec" => self.throttled_usec,
            k => self.extra.get(k).and_then(|v| v.as_u64()).unwrap_or(0),
        }
    }

    /// Sets a counter by its cpu.stat key.
    pub fn set(&mut self, key: &str, v: u64) {
        match key {
            "usage_usec" => self.usage_usec = v,
            "nr_periods" => self.nr_periods = v,
            "nr_throttled" => self.nr_throttled = v,
            "throttled_usec" => self.throttled_usec = v,
            k => {
                self.extra.insert(k.into(), serde_json::Value::from(v));
            }
        }
    }
}

/// `profile`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSummary {
    /// Time running tasks, all CPUs.
    pub task_ns: u64,
    /// Time idle, all CPUs.
    pub idle_ns: u64,
    /// Simulated cost of each scheduler path.
    pub paths_ns: PathsNs,
    /// Fields added later.
    #[serde(flatten)]
    pub extra: Extra,
}

/// `profile.paths_ns`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PathsNs {
    /// Context switches.
    pub context_switch: u64,
    /// Wakeups.
    pub wakeup: u64,
    /// Periodic load balancing.
    pub balance: u64,
    /// The `sched_balance_running` atomic.
    pub balance_atomic: u64,
    /// Newidle balancing.
    pub newidle: u64,
    /// Stealing.
    pub steal: u64,
    /// Bandwidth throttling.
    pub throttle: u64,
    /// Wakeup placement's `available_idle_cpu` reads of other CPUs'
    /// runqueues (absent from summaries written before it was counted).
    #[serde(default)]
    pub available_idle_cpu: u64,
    /// Wakeup placement's `sched_idle_cpu` reads.
    #[serde(default)]
    pub sched_idle_cpu: u64,
    /// Further paths (`pick`...).
    #[serde(flatten)]
    pub extra: Extra,
}

impl Summary {
    /// The file's text: 2-space pretty JSON and a trailing newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("summary serialises");
        s.push('\n');
        s
    }

    /// Writes the file's text to `out`.
    pub fn write_to<W: Write + ?Sized>(&self, out: &mut W) -> io::Result<()> {
        out.write_all(self.to_json_string().as_bytes())
    }

    /// Reads a summary back.
    pub fn from_json_str(text: &str) -> Result<Summary, serde_json::Error> {
        serde_json::from_str(text)
    }
}
