//! The metric columns of a sweep row: figures of summary.json summed or
//! averaged over tasks and CPUs, each with the direction Monte-Carlo
//! screening judges it by.

use serde_json::Value;

/// Which way a metric is better, for screening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Smaller is better (latency, waiting, misses).
    Lower,
    /// Larger is better (throughput).
    Higher,
    /// Neither: descriptive only.
    Neither,
}

/// A row metric: name, integer or not, direction, the smallest absolute
/// difference that matters for screening (in the metric's unit).
pub struct Metric {
    /// Column name.
    pub name: &'static str,
    /// INT64 column (else DOUBLE).
    pub int: bool,
    /// Direction.
    pub better: Better,
    /// Absolute threshold for `schedlab montecarlo`.
    pub min_abs: f64,
}

const fn m(name: &'static str, int: bool, better: Better, min_abs: f64) -> Metric {
    Metric {
        name,
        int,
        better,
        min_abs,
    }
}

/// The metric columns of a sweep row, in order. The absolute thresholds are
/// screening conventions (a difference below them is not worth a report:
/// 1 µs of mean latency, 1 ms of waiting or idle time, one event), not
/// kernel figures.
pub const METRICS: &[Metric] = &[
    m("duration_ns", true, Better::Neither, 0.0),
    m("events", true, Better::Neither, 0.0),
    m("throughput_per_s", false, Better::Higher, 1.0),
    m("loops", true, Better::Higher, 1.0),
    m("runtime_ns", true, Better::Neither, 0.0),
    m("wait_ns", true, Better::Lower, 1e6),
    m("switches", true, Better::Neither, 0.0),
    m("migrations", true, Better::Lower, 1.0),
    m("wakeups", true, Better::Neither, 0.0),
    m("wakeup_latency_n", true, Better::Neither, 0.0),
    m("wakeup_latency_mean_us", false, Better::Lower, 1.0),
    m("wakeup_latency_max_us", true, Better::Lower, 10.0),
    m("deadline_periods", true, Better::Neither, 0.0),
    m("deadline_missed", true, Better::Lower, 1.0),
    m("busy_ns", true, Better::Neither, 0.0),
    m("idle_ns", true, Better::Neither, 0.0),
    m("utilisation", false, Better::Neither, 0.0),
    m("sched_overhead_ns", true, Better::Lower, 1e5),
    m("steal", true, Better::Neither, 0.0),
    m("wasted_idle_ns", true, Better::Lower, 1e6),
    m("throttled_usec", true, Better::Lower, 1000.0),
    m("nr_throttled", true, Better::Lower, 1.0),
    m("workload_time_s", false, Better::Lower, 0.001),
];

/// The metrics of one summary.json, in [`METRICS`] order (`None` where the
/// run has no such figure: no timer rows, no quota, no completion time).
pub fn metrics(s: &Value) -> Vec<Option<f64>> {
    let arr = |k: &str| s[k].as_array().cloned().unwrap_or_default();
    let tasks = arr("tasks");
    let cpus = arr("cpus");
    let groups = arr("groups");
    let sum = |items: &[Value], f: &dyn Fn(&Value) -> Option<f64>| -> f64 {
        items.iter().filter_map(f).sum()
    };
    let num = |v: &Value| v.as_f64();
    let duration = s["duration_ns"].as_f64();
    let lat_n = sum(&tasks, &|t| num(&t["wakeup_latency_us"]["n"]));
    let lat_sum = sum(&tasks, &|t| num(&t["wakeup_latency_us"]["sum"]));
    let lat_max = tasks
        .iter()
        .filter(|t| t["wakeup_latency_us"]["n"].as_f64().unwrap_or(0.0) > 0.0)
        .filter_map(|t| num(&t["wakeup_latency_us"]["max"]))
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))));
    let has_deadlines = tasks.iter().any(|t| t.get("deadlines").is_some());
    let quota_groups: Vec<Value> = groups
        .iter()
        .filter(|g| g["cpu_stat"]["nr_periods"].as_f64().unwrap_or(0.0) > 0.0)
        .cloned()
        .collect();
    let busy = sum(&cpus, &|c| num(&c["busy_ns"]));
    let mut out = Vec::with_capacity(METRICS.len());
    for metric in METRICS {
        let v = match metric.name {
            "duration_ns" => duration,
            "events" => num(&s["events"]),
            "throughput_per_s" => num(&s["throughput_per_s"]),
            "loops" | "runtime_ns" | "wait_ns" | "switches" | "migrations" | "wakeups" => {
                Some(sum(&tasks, &|t| num(&t[metric.name])))
            }
            "wakeup_latency_n" => Some(lat_n),
            "wakeup_latency_mean_us" => (lat_n > 0.0).then(|| lat_sum / lat_n),
            "wakeup_latency_max_us" => lat_max,
            "deadline_periods" => {
                has_deadlines.then(|| sum(&tasks, &|t| num(&t["deadlines"]["periods"])))
            }
            "deadline_missed" => {
                has_deadlines.then(|| sum(&tasks, &|t| num(&t["deadlines"]["missed"])))
            }
            "busy_ns" => Some(busy),
            "idle_ns" => Some(sum(&cpus, &|c| num(&c["idle_ns"]))),
            "utilisation" => duration
                .filter(|d| *d > 0.0 && !cpus.is_empty())
                .map(|d| busy / (d * cpus.len() as f64)),
            "sched_overhead_ns" => Some(sum(&cpus, &|c| num(&c["sched_overhead_ns"]))),
            "steal" => Some(sum(&cpus, &|c| num(&c["steal"]))),
            "wasted_idle_ns" => num(&s["wasted_idle_ns"]),
            "throttled_usec" => (!quota_groups.is_empty())
                .then(|| sum(&quota_groups, &|g| num(&g["cpu_stat"]["throttled_usec"]))),
            "nr_throttled" => (!quota_groups.is_empty())
                .then(|| sum(&quota_groups, &|g| num(&g["cpu_stat"]["nr_throttled"]))),
            "workload_time_s" => num(&s["workload_time_s"]),
            _ => None,
        };
        out.push(v);
    }
    out
}
