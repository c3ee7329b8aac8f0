//! The metrics of `schedlab compare`: from each run's [`RunFigures`] to
//! the [`Metric`]s the table shows, in row order ([`compare_metrics`]).

use super::figures::{RunFigures, TaskFigures, WAKEUP_PCTS};
use super::{Better, Metric};
use crate::results::Headline;

/// One metric of every run: `f` of each run's figures, per variant.
fn metric(
    per_variant: &[Vec<RunFigures>],
    name: &str,
    unit: &str,
    better: Better,
    f: &dyn Fn(&RunFigures) -> f64,
) -> Metric {
    Metric {
        name: name.into(),
        unit: unit.into(),
        better,
        per_variant: per_variant
            .iter()
            .map(|runs| runs.iter().map(f).collect())
            .collect(),
    }
}

/// The run-wide metrics `schedlab compare` tabulates, from each variant's
/// runs (`per_variant[variant][run]`), in row order: the workload's own
/// benchmark figures first, then the totals.
///
/// | metric | unit | better | from | when |
/// |---|---|---|---|---|
/// | `time_s` | s | lower | [`Headline`] `workload_time_us` / 10⁶ | every run has one (hackbench) |
/// | [`RunFigures::benchmark`] in order of first appearance (schbench's percentiles and RPS, OLTP's `tps`, SPECjbb's `jops` and response times: [`super::benchmark_figures`]) | as given | as given | the figure; NaN for a run without it | some run has it |
/// | `throttled_ms` | ms | lower | `throttled_ns` / 10⁶ | every run has a quota |
/// | `nr_throttled` | n | lower | `nr_throttled` | every run has a quota |
/// | `wu_lat_mean_us` | us | lower | `wakeup_latency.mean` | some run has samples |
/// | `wu_lat_p50_us`, `wu_lat_p90_us`, `wu_lat_p99_us` | us | lower | [`RunFigures::wakeup_pct`] (nearest rank over every timer row); NaN without | some run has them |
/// | `wu_lat_max_us` | us | lower | `wakeup_latency.max` | some run has samples |
/// | `wu_lat_samples` | n | higher | `wakeup_latency.n` | some run has samples |
/// | `missed_periods` | n | lower | `missed_periods` (timer periods whose work ended after the expiry) | some run has timer periods |
/// | `runtime_ms` | ms | lower when every run has a completion time (a fixed amount of work: less CPU for it), else higher (a fixed duration: more CPU got) | `runtime_ns` / 10⁶ | always |
/// | `switches` | n | lower | `switches` | always |
/// | `migrations` | n | lower | `migrations` | always |
/// | `loops_per_s` | 1/s | higher | `loops` ÷ `duration_ns` in s (at least 10⁻⁹ s) | always |
pub fn headline_metrics(per_variant: &[Vec<RunFigures>]) -> Vec<Metric> {
    let m = |name: &str, unit: &str, better: Better, f: &dyn Fn(&Headline) -> f64| {
        metric(per_variant, name, unit, better, &|r| f(&r.headline))
    };
    let all = || per_variant.iter().flatten();
    let mut metrics = Vec::new();
    // hackbench-like runs: their own completion time first, as mmtests'
    // hackbench tables show it (seconds, lower is better).
    if all().all(|r| r.headline.workload_time_us.is_some()) {
        metrics.push(m("time_s", "s", Better::Lower, &|r| {
            r.workload_time_us.unwrap_or(0) as f64 / 1e6
        }));
    }
    // The benchmark's own report, in its order.
    let mut bench: Vec<(&str, &str, Better)> = Vec::new();
    for f in all().flat_map(|r| &r.benchmark) {
        if !bench.iter().any(|(n, _, _)| *n == f.name) {
            bench.push((&f.name, &f.unit, f.better));
        }
    }
    for (name, unit, better) in bench {
        metrics.push(metric(per_variant, name, unit, better, &|r| {
            r.benchmark
                .iter()
                .find(|f| f.name == name)
                .map_or(f64::NAN, |f| f.value)
        }));
    }
    if all().all(|r| r.headline.throttled_ns.is_some() && r.headline.nr_throttled.is_some()) {
        metrics.push(m("throttled_ms", "ms", Better::Lower, &|r| {
            r.throttled_ns.unwrap_or(0) as f64 / 1e6
        }));
        metrics.push(m("nr_throttled", "n", Better::Lower, &|r| {
            r.nr_throttled.unwrap_or(0) as f64
        }));
    }
    if all().any(|r| r.headline.wakeup_latency.n > 0) {
        metrics.push(m("wu_lat_mean_us", "us", Better::Lower, &|r| {
            r.wakeup_latency.mean
        }));
        if all().any(|r| r.wakeup_pct.is_some()) {
            for (i, (p, _)) in WAKEUP_PCTS.iter().enumerate() {
                metrics.push(metric(
                    per_variant,
                    &format!("wu_lat_{p}_us"),
                    "us",
                    Better::Lower,
                    &|r| r.wakeup_pct.map_or(f64::NAN, |v| v[i] as f64),
                ));
            }
        }
        metrics.push(m("wu_lat_max_us", "us", Better::Lower, &|r| {
            r.wakeup_latency.max as f64
        }));
        metrics.push(m("wu_lat_samples", "n", Better::Higher, &|r| {
            r.wakeup_latency.n as f64
        }));
    }
    if all().any(|r| r.headline.periods > 0) {
        metrics.push(m("missed_periods", "n", Better::Lower, &|r| {
            r.missed_periods as f64
        }));
    }
    metrics.push(m("runtime_ms", "ms", runtime_better(per_variant), &|r| {
        r.runtime_ns as f64 / 1e6
    }));
    metrics.push(m("switches", "n", Better::Lower, &|r| r.switches as f64));
    metrics.push(m("migrations", "n", Better::Lower, &|r| {
        r.migrations as f64
    }));
    metrics.push(m("loops_per_s", "1/s", Better::Higher, &|r| {
        let secs = r.duration_ns as f64 / 1e9;
        r.loops as f64 / secs.max(1e-9)
    }));
    metrics
}

/// Which way CPU time improves: runs that all end on their own
/// (`workload_time_us`: hackbench, fixed work) do better with less; runs
/// of a fixed duration (rt-app) get more done with more.
pub fn runtime_better(per_variant: &[Vec<RunFigures>]) -> Better {
    let mut runs = per_variant.iter().flatten().peekable();
    if runs.peek().is_some() && runs.all(|r| r.headline.workload_time_us.is_some()) {
        Better::Lower
    } else {
        Better::Higher
    }
}

/// Per-name metrics (`per_variant[variant][run]` = that run's
/// [`TaskFigures`]): for each name, in order of first appearance,
/// `<name>.wu_lat_mean_us` and `<name>.wu_lat_p99_us` (lower is better;
/// names with timer rows, the p99 when known), `<name>.missed_periods`
/// (lower; names with timer periods) and `<name>.runtime_ms` (better as
/// `runtime`, see [`runtime_better`]). At most `max_names` names; returns
/// the metrics and the number of names left out. None for a single name
/// (its rows would repeat the totals).
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
    let find = |run: &[TaskFigures], n: &str| run.iter().find(|f| f.name == n).cloned();
    let any = |n: &str, has: &dyn Fn(&TaskFigures) -> bool| {
        per_variant
            .iter()
            .flatten()
            .any(|run| find(run, n).is_some_and(|f| has(&f)))
    };
    let metric = |n: &str,
                  what: &str,
                  unit: &str,
                  better: Better,
                  f: &dyn Fn(Option<TaskFigures>) -> f64| {
        Metric {
            name: format!("{n}.{what}"),
            unit: unit.into(),
            better,
            per_variant: per_variant
                .iter()
                .map(|runs| runs.iter().map(|run| f(find(run, n))).collect())
                .collect(),
        }
    };
    let mut metrics = Vec::new();
    for n in names {
        if any(n, &|f| f.wakeup_latency.n > 0) {
            metrics.push(metric(n, "wu_lat_mean_us", "us", Better::Lower, &|f| {
                f.map_or(f64::NAN, |f| f.wakeup_latency.mean)
            }));
            if any(n, &|f| f.wakeup_p99_us.is_some()) {
                metrics.push(metric(n, "wu_lat_p99_us", "us", Better::Lower, &|f| {
                    f.and_then(|f| f.wakeup_p99_us)
                        .map_or(f64::NAN, |v| v as f64)
                }));
            }
        }
        if any(n, &|f| f.missed_periods.is_some()) {
            metrics.push(metric(n, "missed_periods", "n", Better::Lower, &|f| {
                f.and_then(|f| f.missed_periods)
                    .map_or(f64::NAN, |v| v as f64)
            }));
        }
        metrics.push(metric(n, "runtime_ms", "ms", runtime, &|f| {
            f.map_or(0.0, |f| f.runtime_ns as f64 / 1e6)
        }));
    }
    (metrics, left_out)
}

/// Every metric of a comparison, in row order: [`headline_metrics`], then
/// [`task_metrics`] of the runs' [`RunFigures::tasks`] (none unless the
/// runs were broken down per task name or thread). Returns the metrics
/// and the number of names left without rows (past `max_names`).
pub fn compare_metrics(per_variant: &[Vec<RunFigures>], max_names: usize) -> (Vec<Metric>, usize) {
    let mut metrics = headline_metrics(per_variant);
    let tasks: Vec<Vec<Vec<TaskFigures>>> = per_variant
        .iter()
        .map(|runs| runs.iter().map(|r| r.tasks.clone()).collect())
        .collect();
    let (per_name, left_out) = task_metrics(&tasks, max_names, runtime_better(per_variant));
    metrics.extend(per_name);
    (metrics, left_out)
}

#[cfg(test)]
mod tests {
    use super::super::figures::BenchFigure;
    use super::*;
    use schedlab_core::stats::SampleStats;

    fn run(time_us: Option<u64>, runtime_ns: u64) -> RunFigures {
        RunFigures {
            headline: Headline {
                workload_time_us: time_us,
                runtime_ns,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn row<'a>(m: &'a [Metric], name: &str) -> &'a Metric {
        m.iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name} row"))
    }

    fn names(m: &[Metric]) -> Vec<&str> {
        m.iter().map(|m| m.name.as_str()).collect()
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
        let m = headline_metrics(&fixed_work);
        assert_eq!(row(&m, "runtime_ms").better, Better::Lower);
        // rt-app-like (a fixed duration, no completion time): more CPU got.
        let fixed_duration = vec![vec![run(None, 100)], vec![run(None, 90)]];
        assert_eq!(runtime_better(&fixed_duration), Better::Higher);
        let m = headline_metrics(&fixed_duration);
        assert_eq!(row(&m, "runtime_ms").better, Better::Higher);
        // One run without a completion time makes the set fixed-duration.
        let mixed = vec![vec![run(Some(1), 1)], vec![run(None, 1)]];
        assert_eq!(runtime_better(&mixed), Better::Higher);
        // Per-name rows follow.
        let figs = |name: &str| TaskFigures {
            name: name.into(),
            runtime_ns: 1,
            wakeup_latency: Default::default(),
            wakeup_p99_us: None,
            missed_periods: None,
        };
        let per_name = vec![
            vec![vec![figs("a"), figs("b")]],
            vec![vec![figs("a"), figs("b")]],
        ];
        let (m, _) = task_metrics(&per_name, 16, Better::Lower);
        assert!(m.iter().all(|m| m.better == Better::Lower));
    }

    /// An rt-app-like run: timer rows with these percentiles, `missed` of
    /// `periods` missed.
    fn periodic(mean: f64, pct: [u64; 3], periods: u64, missed: u64) -> RunFigures {
        RunFigures {
            headline: Headline {
                wakeup_latency: SampleStats {
                    n: periods,
                    mean,
                    max: pct[2] + 10,
                    ..Default::default()
                },
                periods,
                missed_periods: missed,
                duration_ns: 1_000_000_000,
                ..Default::default()
            },
            wakeup_pct: Some(pct),
            ..Default::default()
        }
    }

    #[test]
    fn rt_app_rows_have_percentiles_and_missed_periods_lower_is_better() {
        let runs = vec![
            vec![periodic(100.0, [90, 180, 400], 50, 4)],
            vec![periodic(120.0, [95, 200, 900], 50, 11)],
        ];
        let m = headline_metrics(&runs);
        assert_eq!(
            names(&m),
            [
                "wu_lat_mean_us",
                "wu_lat_p50_us",
                "wu_lat_p90_us",
                "wu_lat_p99_us",
                "wu_lat_max_us",
                "wu_lat_samples",
                "missed_periods",
                "runtime_ms",
                "switches",
                "migrations",
                "loops_per_s"
            ]
        );
        for name in [
            "wu_lat_p50_us",
            "wu_lat_p90_us",
            "wu_lat_p99_us",
            "missed_periods",
        ] {
            assert_eq!(row(&m, name).better, Better::Lower, "{name}");
        }
        assert_eq!(row(&m, "wu_lat_p99_us").per_variant, [[400.0], [900.0]]);
        assert_eq!(row(&m, "wu_lat_p50_us").per_variant, [[90.0], [95.0]]);
        assert_eq!(row(&m, "missed_periods").per_variant, [[4.0], [11.0]]);
        // Without streamed rows there are no percentile rows (no NaN rows),
        // and without timer periods no missed_periods row.
        let mut bare = runs.clone();
        for r in bare.iter_mut().flatten() {
            r.wakeup_pct = None;
        }
        assert!(!names(&headline_metrics(&bare)).contains(&"wu_lat_p99_us"));
        let none = vec![vec![run(None, 1)], vec![run(None, 1)]];
        let m = headline_metrics(&none);
        assert!(!names(&m)
            .iter()
            .any(|n| n.starts_with("wu_lat") || *n == "missed_periods"));
    }

    fn bench(figures: &[(&str, Better, f64)]) -> RunFigures {
        RunFigures {
            headline: Headline {
                workload_time_us: None,
                ..Default::default()
            },
            benchmark: figures
                .iter()
                .map(|&(name, better, value)| BenchFigure {
                    name: name.into(),
                    unit: "us".into(),
                    better,
                    value,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn benchmark_figures_come_first_with_their_own_direction() {
        let runs = vec![
            vec![bench(&[
                ("wakeup_p99_us", Better::Lower, 729.0),
                ("rps_avg", Better::Higher, 960.5),
            ])],
            // A run without one of the figures has NaN there.
            vec![bench(&[("wakeup_p99_us", Better::Lower, 500.0)])],
        ];
        let m = headline_metrics(&runs);
        assert_eq!(&names(&m)[..3], ["wakeup_p99_us", "rps_avg", "runtime_ms"]);
        assert_eq!(row(&m, "wakeup_p99_us").better, Better::Lower);
        assert_eq!(row(&m, "rps_avg").better, Better::Higher);
        assert_eq!(row(&m, "wakeup_p99_us").per_variant, [[729.0], [500.0]]);
        assert!(row(&m, "rps_avg").per_variant[1][0].is_nan());
        // hackbench's time stays the first row.
        let mut hb = runs.clone();
        for r in hb.iter_mut().flatten() {
            r.headline.workload_time_us = Some(1000);
        }
        assert_eq!(names(&headline_metrics(&hb))[0], "time_s");
    }

    fn named(name: &str, runtime_ns: u64, lat: Option<(f64, u64, u64)>) -> TaskFigures {
        TaskFigures {
            name: name.into(),
            runtime_ns,
            wakeup_latency: SampleStats {
                n: lat.map_or(0, |_| 10),
                mean: lat.map_or(0.0, |l| l.0),
                ..Default::default()
            },
            wakeup_p99_us: lat.map(|l| l.1),
            missed_periods: lat.map(|l| l.2),
        }
    }

    #[test]
    fn per_name_rows_only_from_broken_down_runs() {
        let mut a = periodic(100.0, [1, 2, 3], 10, 0);
        let mut b = periodic(100.0, [1, 2, 3], 10, 1);
        let totals = vec![vec![a.clone()], vec![b.clone()]];
        let (m, left) = compare_metrics(&totals, 16);
        assert_eq!(left, 0);
        assert!(
            !names(&m).iter().any(|n| n.contains('.')),
            "{:?}",
            names(&m)
        );
        a.tasks = vec![
            named("cam", 5_000_000, Some((80.0, 300, 0))),
            named("hog", 9_000_000, None),
        ];
        b.tasks = vec![
            named("cam", 4_000_000, Some((90.0, 350, 1))),
            named("hog", 9_000_000, None),
        ];
        let (m, _) = compare_metrics(&[vec![a.clone()], vec![b.clone()]], 16);
        let per_name: Vec<&str> = names(&m).into_iter().filter(|n| n.contains('.')).collect();
        assert_eq!(
            per_name,
            [
                "cam.wu_lat_mean_us",
                "cam.wu_lat_p99_us",
                "cam.missed_periods",
                "cam.runtime_ms",
                "hog.runtime_ms"
            ]
        );
        assert_eq!(row(&m, "cam.wu_lat_p99_us").per_variant, [[300.0], [350.0]]);
        assert_eq!(row(&m, "cam.wu_lat_p99_us").better, Better::Lower);
        assert_eq!(row(&m, "cam.missed_periods").better, Better::Lower);
        assert_eq!(row(&m, "cam.runtime_ms").better, Better::Higher);
        // At most max_names names; the rest counted.
        let (m, left) = compare_metrics(&[vec![a], vec![b]], 1);
        assert_eq!(left, 1);
        assert!(!names(&m).contains(&"hog.runtime_ms"));
    }
}
