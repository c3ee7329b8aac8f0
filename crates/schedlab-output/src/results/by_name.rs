//! The per-task-name view of a run: rt-app's threads of one task (its
//! thread name without the `-<n>` instance index, `cfs_thread-3` →
//! `cfs_thread`) summed into one row. It is the default grouping of the
//! run table, of `schedlab compare` and of the report; one row per thread
//! is the `--per-task` view.

use schedlab_core::stats::SampleStats;

use crate::summary::TaskSummary;

/// The task name of a thread: its name without the last `-<suffix>` (the
/// same rule as the run's latency groups: `cfs_thread-0` → `cfs_thread`,
/// `hb-r0-3` → `hb-r0`); a name without `-` is its own.
pub fn task_name(thread: &str) -> &str {
    thread.rsplit_once('-').map_or(thread, |(a, _)| a)
}

/// One task name's threads, summed.
#[derive(Clone, Debug, PartialEq)]
pub struct NameRow {
    /// The task name.
    pub name: String,
    /// How many threads carry it.
    pub threads: usize,
    /// Their policy, or `mixed`.
    pub policy: String,
    /// Their nice value, or `lo..hi` when they differ.
    pub nice: String,
    /// Σ CPU time.
    pub runtime_ns: u64,
    /// Σ time runnable but waiting.
    pub wait_ns: u64,
    /// Σ switches in.
    pub switches: u64,
    /// Σ migrations.
    pub migrations: u64,
    /// Σ wakeups.
    pub wakeups: u64,
    /// Σ loops (rt-app log rows).
    pub loops: u64,
    /// Wakeup latency (µs) of all their timer rows, merged from the
    /// per-thread statistics (n, min, max, sum exact; mean and stddev up
    /// to float rounding).
    pub latency: SampleStats,
}

/// The threads of `tasks` grouped by [`task_name`], in order of first
/// appearance.
pub fn by_name(tasks: &[TaskSummary]) -> Vec<NameRow> {
    let mut order: Vec<&str> = Vec::new();
    for t in tasks {
        let n = task_name(&t.name);
        if !order.contains(&n) {
            order.push(n);
        }
    }
    order
        .into_iter()
        .map(|name| {
            let ts: Vec<&TaskSummary> = tasks
                .iter()
                .filter(|t| task_name(&t.name) == name)
                .collect();
            let policy = if ts.iter().all(|t| t.policy == ts[0].policy) {
                ts[0].policy.clone()
            } else {
                "mixed".to_string()
            };
            let lo = ts.iter().map(|t| t.nice).min().unwrap_or(0);
            let hi = ts.iter().map(|t| t.nice).max().unwrap_or(0);
            let nice = if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..{hi}")
            };
            let stats: Vec<SampleStats> =
                ts.iter().map(|t| t.wakeup_latency_us.to_stats()).collect();
            NameRow {
                name: name.to_string(),
                threads: ts.len(),
                policy,
                nice,
                runtime_ns: ts.iter().map(|t| t.runtime_ns).sum(),
                wait_ns: ts.iter().map(|t| t.wait_ns).sum(),
                switches: ts.iter().map(|t| t.switches).sum(),
                migrations: ts.iter().map(|t| t.migrations).sum(),
                wakeups: ts.iter().map(|t| t.wakeups).sum(),
                loops: ts.iter().map(|t| t.loops).sum(),
                latency: merge_sample_stats(&stats),
            }
        })
        .collect()
}

/// Combines per-task statistics into one for a set of tasks. n, min, max
/// and sum are exact; the mean is sum/n and the population variance is
/// `Σ n_i (σ_i² + μ_i²) / N − μ²` (exact up to float rounding, and summed
/// in the given order, so deterministic). Prefer `SampleStats::of` on the
/// raw samples when they are at hand.
pub fn merge_sample_stats<'a>(parts: impl IntoIterator<Item = &'a SampleStats>) -> SampleStats {
    let mut out = SampleStats::default();
    let mut sq = 0.0f64;
    for p in parts.into_iter().filter(|p| p.n > 0) {
        if out.n == 0 {
            out.min = p.min;
            out.max = p.max;
        } else {
            out.min = out.min.min(p.min);
            out.max = out.max.max(p.max);
        }
        out.n += p.n;
        out.sum += p.sum;
        sq += p.n as f64 * (p.stddev * p.stddev + p.mean * p.mean);
    }
    if out.n > 0 {
        out.mean = out.sum as f64 / out.n as f64;
        out.stddev = (sq / out.n as f64 - out.mean * out.mean).max(0.0).sqrt();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, nice: i32, runtime_ns: u64) -> TaskSummary {
        TaskSummary {
            name: name.into(),
            policy: "SCHED_NORMAL".into(),
            nice,
            runtime_ns,
            ..Default::default()
        }
    }

    #[test]
    fn threads_of_one_task_are_summed_in_order() {
        let rows = by_name(&[
            t("a-0", 0, 1),
            t("b-0", 0, 5),
            t("a-1", 3, 2),
            t("solo", 0, 7),
        ]);
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "solo"]);
        assert_eq!(rows[0].threads, 2);
        assert_eq!(rows[0].runtime_ns, 3);
        assert_eq!(rows[0].nice, "0..3");
        assert_eq!(rows[2].threads, 1);
    }
}
