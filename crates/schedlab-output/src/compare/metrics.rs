//! The metrics of `schedlab compare`: from each run's figures to the
//! [`Metric`]s the table shows (re-exported by [`crate::compare`]).

use super::{Better, Metric};
use crate::results::Headline;

/// The metrics `schedlab compare` tabulates, from the headline figures of
/// each variant's runs (`per_variant[variant][run]`), in row order:
///
/// | metric | unit | better | from [`Headline`] | when |
/// |---|---|---|---|---|
/// | `time_s` | s | lower | `workload_time_us` / 10⁶ | every run has one (hackbench) |
/// | `throttled_ms` | ms | lower | `throttled_ns` / 10⁶ | every run has a quota |
/// | `nr_throttled` | n | lower | `nr_throttled` | every run has a quota |
/// | `wu_lat_mean_us` | us | lower | `wakeup_latency.mean` | some run has samples |
/// | `wu_lat_max_us` | us | lower | `wakeup_latency.max` | some run has samples |
/// | `wu_lat_samples` | n | higher | `wakeup_latency.n` | some run has samples |
/// | `runtime_ms` | ms | lower when every run has a completion time (a fixed amount of work: less CPU for it), else higher (a fixed duration: more CPU got) | `runtime_ns` / 10⁶ | always |
/// | `switches` | n | lower | `switches` | always |
/// | `migrations` | n | lower | `migrations` | always |
/// | `loops_per_s` | 1/s | higher | `loops` ÷ `duration_ns` in s (at least 10⁻⁹ s) | always |
pub fn headline_metrics(per_variant: &[Vec<Headline>]) -> Vec<Metric> {
    let metric = |name: &str, unit: &str, better: Better, f: &dyn Fn(&Headline) -> f64| Metric {
        name: name.into(),
        unit: unit.into(),
        better,
        per_variant: per_variant
            .iter()
            .map(|runs| runs.iter().map(f).collect())
            .collect(),
    };
    let all = || per_variant.iter().flatten();
    let mut metrics = Vec::new();
    // hackbench-like runs: their own completion time first, as mmtests'
    // hackbench tables show it (seconds, lower is better).
    if all().all(|r| r.workload_time_us.is_some()) {
        metrics.push(metric("time_s", "s", Better::Lower, &|r| {
            r.workload_time_us.unwrap_or(0) as f64 / 1e6
        }));
    }
    if all().all(|r| r.throttled_ns.is_some() && r.nr_throttled.is_some()) {
        metrics.push(metric("throttled_ms", "ms", Better::Lower, &|r| {
            r.throttled_ns.unwrap_or(0) as f64 / 1e6
        }));
        metrics.push(metric("nr_throttled", "n", Better::Lower, &|r| {
            r.nr_throttled.unwrap_or(0) as f64
        }));
    }
    if all().any(|r| r.wakeup_latency.n > 0) {
        metrics.push(metric("wu_lat_mean_us", "us", Better::Lower, &|r| {
            r.wakeup_latency.mean
        }));
        metrics.push(metric("wu_lat_max_us", "us", Better::Lower, &|r| {
            r.wakeup_latency.max as f64
        }));
        metrics.push(metric("wu_lat_samples", "n", Better::Higher, &|r| {
            r.wakeup_latency.n as f64
        }));
    }
    metrics.push(metric(
        "runtime_ms",
        "ms",
        runtime_better(per_variant),
        &|r| r.runtime_ns as f64 / 1e6,
    ));
    metrics.push(metric("switches", "n", Better::Lower, &|r| {
        r.switches as f64
    }));
    metrics.push(metric("migrations", "n", Better::Lower, &|r| {
        r.migrations as f64
    }));
    metrics.push(metric("loops_per_s", "1/s", Better::Higher, &|r| {
        let secs = r.duration_ns as f64 / 1e9;
        r.loops as f64 / secs.max(1e-9)
    }));
    metrics
}

/// Which way CPU time improves: runs that all end on their own
/// (`workload_time_us`: hackbench, fixed work) do better with less; runs
/// of a fixed duration (rt-app) get more done with more.
pub fn runtime_better(per_variant: &[Vec<Headline>]) -> Better {
    let mut runs = per_variant.iter().flatten().peekable();
    if runs.peek().is_some() && runs.all(|r| r.workload_time_us.is_some()) {
        Better::Lower
    } else {
        Better::Higher
    }
}

/// One task name's (or, per task, one thread's) figures in one run, for
/// the per-name rows of `schedlab compare` ([`task_metrics`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskFigures {
    /// Task name (or thread name).
    pub name: String,
    /// Σ CPU time of its threads.
    pub runtime_ns: u64,
    /// Wakeup latency (µs) of its threads' timer rows.
    pub wakeup_latency: schedlab_core::stats::SampleStats,
}

/// The [`TaskFigures`] of a run: one per task name (the default grouping,
/// [`crate::results::by_name`]; exact latency from the run's raw samples),
/// or one per thread with `per_task`.
pub fn task_figures(r: &crate::results::RunResults, per_task: bool) -> Vec<TaskFigures> {
    use crate::results::by_name::by_name;
    if per_task {
        return r
            .summary
            .tasks
            .iter()
            .map(|t| TaskFigures {
                name: t.name.clone(),
                runtime_ns: t.runtime_ns,
                wakeup_latency: t.wakeup_latency_us.to_stats(),
            })
            .collect();
    }
    by_name(&r.summary.tasks)
        .into_iter()
        .map(|row| {
            let exact = r.wakeup_latency.iter().find(|g| g.name == row.name);
            TaskFigures {
                runtime_ns: row.runtime_ns,
                wakeup_latency: exact.map_or(row.latency, |g| g.stats.clone()),
                name: row.name,
            }
        })
        .collect()
}

/// Per-name metrics (`per_variant[variant][run]` = that run's
/// [`TaskFigures`]): for each name, in order of first appearance,
/// `<name>.wu_lat_mean_us` (lower is better; names with timer rows) and
/// `<name>.runtime_ms` (better as `runtime`, see [`runtime_better`]). At
/// most `max_names` names;
/// returns the metrics and the number of names left out. None for a
/// single name (its rows would repeat the totals).
pub fn task_metrics(
    per_variant: &[Vec<Vec<TaskFigures>>],
    max_names: usize,
    runtime: Better,
) -> (Vec<Metric>, usize) {
    let mut names: Vec<&str> = Vec::new();
    for f in per_variant.iter().flatten().flatten() {
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
    }
    if names.len() < 2 {
        return (Vec::new(), 0);
    }
    let left_out = names.len().saturating_sub(max_names);
    names.truncate(max_names);
    let find = |run: &Vec<TaskFigures>, n: &str| run.iter().find(|f| f.name == n).cloned();
    let mut metrics = Vec::new();
    for n in names {
        let has_lat = per_variant
            .iter()
            .flatten()
            .any(|run| find(run, n).is_some_and(|f| f.wakeup_latency.n > 0));
        if has_lat {
            metrics.push(Metric {
                name: format!("{n}.wu_lat_mean_us"),
                unit: "us".into(),
                better: Better::Lower,
                per_variant: per_variant
                    .iter()
                    .map(|runs| {
                        runs.iter()
                            .map(|run| find(run, n).map_or(f64::NAN, |f| f.wakeup_latency.mean))
                            .collect()
                    })
                    .collect(),
            });
        }
        metrics.push(Metric {
            name: format!("{n}.runtime_ms"),
            unit: "ms".into(),
            better: runtime,
            per_variant: per_variant
                .iter()
                .map(|runs| {
                    runs.iter()
                        .map(|run| find(run, n).map_or(0.0, |f| f.runtime_ns as f64 / 1e6))
                        .collect()
                })
                .collect(),
        });
    }
    (metrics, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(time_us: Option<u64>, runtime_ns: u64) -> Headline {
        Headline {
            workload_time_us: time_us,
            runtime_ns,
            ..Default::default()
        }
    }

    fn runtime_row(m: &[Metric]) -> &Metric {
        m.iter()
            .find(|m| m.name == "runtime_ms")
            .expect("runtime_ms row")
    }

    #[test]
    fn cpu_time_is_lower_is_better_for_fixed_work_and_higher_for_fixed_duration() {
        // hackbench-like: the new side does the same work with 14 % less
        // CPU; that is an improvement.
        let fixed_work = vec![
            vec![run(Some(965_000), 965_330_000)],
            vec![run(Some(830_000), 830_170_000)],
        ];
        assert_eq!(runtime_better(&fixed_work), Better::Lower);
        assert_eq!(
            runtime_row(&headline_metrics(&fixed_work)).better,
            Better::Lower
        );
        // rt-app-like (a fixed duration, no completion time): more CPU got.
        let fixed_duration = vec![vec![run(None, 100)], vec![run(None, 90)]];
        assert_eq!(runtime_better(&fixed_duration), Better::Higher);
        assert_eq!(
            runtime_row(&headline_metrics(&fixed_duration)).better,
            Better::Higher
        );
        // One run without a completion time makes the set fixed-duration.
        let mixed = vec![vec![run(Some(1), 1)], vec![run(None, 1)]];
        assert_eq!(runtime_better(&mixed), Better::Higher);
        // Per-name rows follow.
        let figs = |name: &str| TaskFigures {
            name: name.into(),
            runtime_ns: 1,
            wakeup_latency: Default::default(),
        };
        let per_name = vec![
            vec![vec![figs("a"), figs("b")]],
            vec![vec![figs("a"), figs("b")]],
        ];
        let (m, _) = task_metrics(&per_name, 16, Better::Lower);
        assert!(m.iter().all(|m| m.better == Better::Lower));
    }
}
