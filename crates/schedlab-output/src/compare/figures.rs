//! What one run gives `schedlab compare` ([`RunFigures`]): its totals
//! ([`Headline`]), the wakeup-latency percentiles of its timer rows
//! ([`TimerLatency`], taken from the rows as they complete), the figures
//! of the workload's own benchmark report ([`benchmark_figures`]) and,
//! when asked, the same per task name or per thread ([`TaskFigures`]).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use schedlab_core::ids::TaskId;
use schedlab_core::observe::RowSink;
use schedlab_core::stats::{LogRow, SampleStats};
use serde_json::Value;

use super::Better;
use crate::results::by_name::{by_name, task_name};
use crate::results::{Headline, RunResults};
use crate::summary::{Summary, TaskSummary};

/// An exact distribution of µs samples (value → count), for
/// nearest-rank percentiles. Its size is the number of distinct values,
/// not the number of samples.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LatencyCounts {
    counts: BTreeMap<u64, u64>,
    n: u64,
}

impl LatencyCounts {
    /// Adds one sample.
    pub fn push(&mut self, us: u64) {
        *self.counts.entry(us).or_insert(0) += 1;
        self.n += 1;
    }

    /// Adds `o`'s samples.
    pub fn merge(&mut self, o: &LatencyCounts) {
        for (&v, &c) in &o.counts {
            *self.counts.entry(v).or_insert(0) += c;
        }
        self.n += o.n;
    }

    /// Number of samples.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Nearest-rank percentile, `p` in tenths of a percent (`990` = p99):
    /// the ⌈p·n/1000⌉-th smallest sample (at least the first), the rule of
    /// the report's p50/p90/p99 and of the SPECjbb response times; `None`
    /// without samples.
    pub fn percentile(&self, p: u64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = (p as u128 * self.n as u128).div_ceil(1000).max(1) as u64;
        let mut seen = 0;
        for (&v, &c) in &self.counts {
            seen += c;
            if seen >= rank {
                return Some(v);
            }
        }
        self.counts.keys().next_back().copied()
    }
}

/// The percentiles of the timer rows' wakeup latency that `compare`
/// shows, in tenths of a percent: p50, p90, p99.
pub const WAKEUP_PCTS: [(&str, u64); 3] = [("p50", 500), ("p90", 900), ("p99", 990)];

/// The wakeup latency (`wu_lat`, µs) of a run's timer rows (`c_period` >
/// 0: the rows `wu_lat_mean_us` and summary.json's `wakeup_latency_us`
/// count), per thread, exact.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimerLatency {
    /// Indexed by [`TaskId`]: the thread's name and samples.
    threads: Vec<Option<(String, LatencyCounts)>>,
}

impl TimerLatency {
    /// Adds one completed row of thread `task` (named `name`); rows
    /// without a timer do not count.
    pub fn row(&mut self, task: TaskId, name: &str, row: &LogRow) {
        if row.c_period == 0 {
            return;
        }
        let i = task.idx();
        if self.threads.len() <= i {
            self.threads.resize(i + 1, None);
        }
        self.threads[i]
            .get_or_insert_with(|| (name.to_string(), LatencyCounts::default()))
            .1
            .push(row.wu_lat);
    }

    /// Every thread's samples merged.
    pub fn all(&self) -> LatencyCounts {
        let mut all = LatencyCounts::default();
        for (_, c) in self.threads.iter().flatten() {
            all.merge(c);
        }
        all
    }

    /// The samples of the threads `keep` accepts by name, merged.
    fn matching(&self, keep: impl Fn(&str) -> bool) -> LatencyCounts {
        let mut out = LatencyCounts::default();
        for (name, c) in self.threads.iter().flatten() {
            if keep(name) {
                out.merge(c);
            }
        }
        out
    }
}

/// A [`RowSink`] for `Sim::stream_rows` that keeps no row, only each
/// timer row's wakeup latency ([`TimerLatency`]): memory grows with the
/// distinct latency values, not with the run's length. Clones share the
/// figures; [`TimerLatencyRows::take`] them after the run.
#[derive(Clone, Debug, Default)]
pub struct TimerLatencyRows(Rc<RefCell<TimerLatency>>);

impl TimerLatencyRows {
    /// The figures gathered so far (leaves an empty set behind).
    pub fn take(&self) -> TimerLatency {
        std::mem::take(&mut self.0.borrow_mut())
    }
}

impl RowSink for TimerLatencyRows {
    fn row(&mut self, task: TaskId, name: &str, row: &LogRow) {
        self.0.borrow_mut().row(task, name, row);
    }
}

/// One figure of the workload's own benchmark report.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchFigure {
    /// Row name (`wakeup_p99_us`, `tps`, ...).
    pub name: String,
    /// Unit (`us`, `1/s`).
    pub unit: String,
    /// Which direction is an improvement.
    pub better: Better,
    /// The value.
    pub value: f64,
}

/// The figures of the workload's own benchmark report, as `schedlab run`
/// prints them, from summary.json's added fields; `generator` is the
/// generator the workload came from (`oltp`, ...), if any:
///
/// | workload | figures (better) | from |
/// |---|---|---|
/// | `schbench:` | `wakeup_p50_us` `wakeup_p90_us` `wakeup_p99_us` `wakeup_p99.9_us`, `request_p50_us` .. `request_p99.9_us` (lower); `rps_p20` `rps_p50` `rps_p90`, `rps_avg` (higher) | `schbench`: its percentile tables and `average rps` |
/// | `oltp:` | `tps` (higher) | `throughput_per_s`, pgbench's `tps =` |
/// | `specjbb:` | `jops` (higher); `response_p50_us` .. `response_p99.9_us` (lower) | `specjbb` |
///
/// hackbench's `Time:` is a [`Headline`] figure (`time_s`); rt-app
/// workloads have no report of their own.
pub fn benchmark_figures(s: &Summary, generator: Option<&str>) -> Vec<BenchFigure> {
    let mut out = Vec::new();
    let mut push = |name: String, unit: &str, better: Better, v: Option<f64>| {
        if let Some(value) = v {
            out.push(BenchFigure {
                name,
                unit: unit.into(),
                better,
                value,
            });
        }
    };
    if let Some(sb) = s.extra.get("schbench") {
        // schbench's tables: each listed percentile, its value.
        for (key, prefix, unit, better) in [
            ("wakeup_latency_us", "wakeup", "us", Better::Lower),
            ("request_latency_us", "request", "us", Better::Lower),
            ("rps", "rps", "1/s", Better::Higher),
        ] {
            for row in sb[key]["percentiles"].as_array().into_iter().flatten() {
                let Some(pct) = row["pct"].as_f64() else {
                    continue;
                };
                let suffix = if unit == "us" { "_us" } else { "" };
                push(
                    format!("{prefix}_p{pct}{suffix}"),
                    unit,
                    better,
                    row["value"].as_f64(),
                );
            }
        }
        push(
            "rps_avg".into(),
            "1/s",
            Better::Higher,
            sb["average_rps"].as_f64(),
        );
    }
    if generator == Some("oltp") {
        push(
            "tps".into(),
            "1/s",
            Better::Higher,
            s.extra.get("throughput_per_s").and_then(Value::as_f64),
        );
    }
    if let Some(jbb) = s.extra.get("specjbb") {
        push("jops".into(), "1/s", Better::Higher, jbb["jops"].as_f64());
        for p in ["p50", "p90", "p99", "p99.9"] {
            push(
                format!("response_{p}_us"),
                "us",
                Better::Lower,
                jbb["response_us"][p].as_f64(),
            );
        }
    }
    out
}

/// One task name's (or one thread's) figures in one run, for the rows of
/// `schedlab compare --per-task` ([`super::task_metrics`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskFigures {
    /// Task name (or thread name).
    pub name: String,
    /// Σ CPU time of its threads.
    pub runtime_ns: u64,
    /// Wakeup latency (µs) of its threads' timer rows.
    pub wakeup_latency: SampleStats,
    /// p99 of that latency (nearest rank; `None` without samples or
    /// without [`TimerLatency`] figures).
    pub wakeup_p99_us: Option<u64>,
    /// Σ missed periods of its threads (`None` when none has timer rows).
    pub missed_periods: Option<u64>,
}

/// Missed periods of a thread (summary.json `deadlines.missed`).
fn missed(t: &TaskSummary) -> Option<u64> {
    t.periods_missed().map(|(_, m)| m)
}

/// The [`TaskFigures`] of a run: one per task name ([`by_name`]; exact
/// latency from the run's raw samples), or one per thread with `threads`.
/// `lat` gives the percentiles.
pub fn task_figures(r: &RunResults, threads: bool, lat: &TimerLatency) -> Vec<TaskFigures> {
    let p99 = |c: LatencyCounts| c.percentile(990);
    if threads {
        return r
            .summary
            .tasks
            .iter()
            .map(|t| TaskFigures {
                name: t.name.clone(),
                runtime_ns: t.runtime_ns,
                wakeup_latency: t.wakeup_latency_us.to_stats(),
                wakeup_p99_us: p99(lat.matching(|n| n == t.name)),
                missed_periods: missed(t),
            })
            .collect();
    }
    by_name(&r.summary.tasks)
        .into_iter()
        .map(|row| {
            let exact = r.wakeup_latency.iter().find(|g| g.name == row.name);
            let of_name = r
                .summary
                .tasks
                .iter()
                .filter(|t| task_name(&t.name) == row.name);
            let missed = of_name
                .filter_map(missed)
                .fold(None, |a: Option<u64>, m| Some(a.unwrap_or(0) + m));
            TaskFigures {
                runtime_ns: row.runtime_ns,
                wakeup_latency: exact.map_or(row.latency, |g| g.stats.clone()),
                wakeup_p99_us: p99(lat.matching(|n| task_name(n) == row.name)),
                missed_periods: missed,
                name: row.name,
            }
        })
        .collect()
}

/// How `compare` breaks a run down below its totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PerTask {
    /// Totals only.
    #[default]
    Off,
    /// One set of rows per task name (`cfs_thread`, `hb-r0`).
    Names,
    /// One set of rows per thread (`cfs_thread-0`).
    Threads,
}

/// Everything one run gives `schedlab compare`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFigures {
    /// The run's totals.
    pub headline: Headline,
    /// [`WAKEUP_PCTS`] of its timer rows' wakeup latency, µs (`None`
    /// without timer rows).
    pub wakeup_pct: Option<[u64; 3]>,
    /// The workload's own benchmark figures ([`benchmark_figures`]).
    pub benchmark: Vec<BenchFigure>,
    /// Per task name or thread (empty with [`PerTask::Off`]).
    pub tasks: Vec<TaskFigures>,
}

impl RunFigures {
    /// The figures of a finished run: `r` its results, `generator` the
    /// generator its workload came from, `lat` its timer rows' latency
    /// (streamed through [`TimerLatencyRows`]).
    pub fn of(
        r: &RunResults,
        generator: Option<&str>,
        lat: &TimerLatency,
        per_task: PerTask,
    ) -> RunFigures {
        let all = lat.all();
        let wakeup_pct =
            (all.n() > 0).then(|| WAKEUP_PCTS.map(|(_, p)| all.percentile(p).unwrap_or(0)));
        let tasks = match per_task {
            PerTask::Off => Vec::new(),
            PerTask::Names => task_figures(r, false, lat),
            PerTask::Threads => task_figures(r, true, lat),
        };
        RunFigures {
            headline: r.headline.clone(),
            wakeup_pct,
            benchmark: benchmark_figures(&r.summary, generator),
            tasks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn counts(xs: &[u64]) -> LatencyCounts {
        let mut c = LatencyCounts::default();
        for &x in xs {
            c.push(x);
        }
        c
    }

    #[test]
    fn nearest_rank_percentiles() {
        // 1..=100: p50 is the 50th smallest, p99 the 99th, p99.9 the 100th.
        let c = counts(&(1..=100).rev().collect::<Vec<_>>());
        assert_eq!(c.n(), 100);
        assert_eq!(c.percentile(500), Some(50));
        assert_eq!(c.percentile(900), Some(90));
        assert_eq!(c.percentile(990), Some(99));
        assert_eq!(c.percentile(999), Some(100));
        assert_eq!(c.percentile(0), Some(1), "rank at least 1");
        // Repeated values: nine 10s and one 1000, p90 is 10, p99 1000.
        let c = counts(&[10, 10, 10, 10, 10, 10, 10, 10, 10, 1000]);
        assert_eq!(c.percentile(900), Some(10));
        assert_eq!(c.percentile(990), Some(1000));
        assert_eq!(LatencyCounts::default().percentile(500), None);
        // Merging is the percentile of the concatenation.
        let mut a = counts(&[1, 2, 3]);
        a.merge(&counts(&[4, 5, 6, 7]));
        assert_eq!(a, counts(&[1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(a.percentile(500), Some(4));
    }

    fn row(c_period: u64, wu_lat: u64) -> LogRow {
        LogRow {
            idx: 0,
            perf: 0,
            run: 0,
            period: 0,
            start: 0,
            end: 0,
            rel_st: 0,
            slack: 0,
            c_duration: 0,
            c_period,
            wu_lat,
        }
    }

    #[test]
    fn timer_rows_only_per_thread_and_shared_between_clones() {
        let rows = TimerLatencyRows::default();
        let mut sink: Box<dyn RowSink> = Box::new(rows.clone());
        sink.row(TaskId(3), "t-1", &row(1000, 40));
        sink.row(TaskId(3), "t-1", &row(0, 9999)); // no timer: left out
        sink.row(TaskId(0), "t-0", &row(1000, 20));
        sink.row(TaskId(5), "u-0", &row(500, 7));
        let lat = rows.take();
        assert_eq!(lat.all(), counts(&[40, 20, 7]));
        assert_eq!(lat.matching(|n| task_name(n) == "t"), counts(&[40, 20]));
        assert_eq!(lat.matching(|n| n == "u-0"), counts(&[7]));
        assert_eq!(rows.take(), TimerLatency::default(), "taken");
    }

    fn figure<'a>(f: &'a [BenchFigure], name: &str) -> &'a BenchFigure {
        f.iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no {name} in {f:?}"))
    }

    #[test]
    fn schbench_figures_are_its_tables_with_their_directions() {
        let table = |vals: &[(f64, u64)]| {
            let rows: Vec<Value> = vals
                .iter()
                .map(|&(pct, value)| json!({"pct": pct, "value": value, "samples": 1}))
                .collect();
            json!({"samples": 4, "percentiles": rows, "min": 1, "max": 9})
        };
        let mut s = Summary::default();
        s.extra.insert(
            "schbench".into(),
            json!({
                "wakeup_latency_us": table(&[(50.0, 17), (90.0, 723), (99.0, 729), (99.9, 739)]),
                "request_latency_us": table(&[(50.0, 7880), (90.0, 7960), (99.0, 7961), (99.9, 9328)]),
                "rps": table(&[(20.0, 0), (50.0, 957), (90.0, 965)]),
                "average_rps": 960.5,
            }),
        );
        s.extra.insert("throughput_per_s".into(), json!(1.0));
        let f = benchmark_figures(&s, Some("schbench"));
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "wakeup_p50_us",
                "wakeup_p90_us",
                "wakeup_p99_us",
                "wakeup_p99.9_us",
                "request_p50_us",
                "request_p90_us",
                "request_p99_us",
                "request_p99.9_us",
                "rps_p20",
                "rps_p50",
                "rps_p90",
                "rps_avg"
            ]
        );
        let w = figure(&f, "wakeup_p99_us");
        assert_eq!(
            (w.value, w.better, w.unit.as_str()),
            (729.0, Better::Lower, "us")
        );
        assert_eq!(figure(&f, "request_p99.9_us").value, 9328.0);
        assert_eq!(figure(&f, "request_p99.9_us").better, Better::Lower);
        let r = figure(&f, "rps_p50");
        assert_eq!((r.value, r.better), (957.0, Better::Higher));
        let a = figure(&f, "rps_avg");
        assert_eq!((a.value, a.better), (960.5, Better::Higher));
        assert!(f.iter().all(|f| f.name != "tps"), "tps is OLTP's");
    }

    #[test]
    fn oltp_tps_and_specjbb_jops_are_higher_is_better() {
        let mut s = Summary::default();
        s.extra.insert("throughput_per_s".into(), json!(1234.0));
        let f = benchmark_figures(&s, Some("oltp"));
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].name.as_str(), f[0].value), ("tps", 1234.0));
        assert_eq!(f[0].better, Better::Higher);
        // Not OLTP: the throughput is no benchmark figure.
        assert!(benchmark_figures(&s, None).is_empty());
        assert!(benchmark_figures(&s, Some("hackbench")).is_empty());
        s.extra.insert(
            "specjbb".into(),
            json!({"jops": 6056.0, "response_us": {"p50": 1246.2, "p90": 2217.0,
                "p99": 3062.1, "p99.9": 3660.1, "max": 4239.1}}),
        );
        let f = benchmark_figures(&s, Some("specjbb"));
        let j = figure(&f, "jops");
        assert_eq!((j.value, j.better), (6056.0, Better::Higher));
        let r = figure(&f, "response_p99_us");
        assert_eq!((r.value, r.better), (3062.1, Better::Lower));
        assert_eq!(f.len(), 5);
    }
}
