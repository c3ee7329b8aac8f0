//! `schedlab compare` reports the headline figures of the workload's own
//! benchmark, each with its direction, and the same numbers `run` gives:
//! schbench's latency percentiles and RPS, rt-app's wakeup-latency
//! percentiles and missed periods; the per-task-name (or per-thread) rows
//! only with `--per-task`.

use crate::common::{assert_success, example_workload, schedlab};
use schedlab_output::rtapp_log::parse_rtapp_log;
use serde_json::Value;
use std::path::Path;

/// `schedlab compare ARGS --json F`: the table and the JSON.
fn compare(args: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let mut all: Vec<&str> = vec!["compare"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let text = assert_success(&schedlab(&all));
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (text, v)
}

/// The JSON metric `name`.
fn metric<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {v:#}"))
}

/// Its AMean on side `i` (0 base, 1 new).
fn amean(v: &Value, name: &str, i: usize) -> f64 {
    metric(v, name)["variants"][i]["stats"]["amean"]
        .as_f64()
        .unwrap()
}

/// Whether the table has an `AMean` row of `name`.
fn has_row(text: &str, name: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("AMean ") && l.split_whitespace().nth(1) == Some(name))
}

/// `schedlab run ARGS --out D`: summary.json and the directory.
fn run_out(args: &[&str]) -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut all: Vec<&str> = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--quiet", "--out", out.to_str().unwrap()]);
    assert_success(&schedlab(&all));
    let s =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (dir, s)
}

#[test]
fn schbench_compare_has_its_latency_percentiles_and_rps() {
    let spec = "schbench:m=2,r=2";
    let (text, v) = compare(&[
        spec,
        "--machine",
        "a7-octa",
        "--base-kernel",
        "5.4",
        "--new-kernel",
        "6.6",
        "--runs",
        "1",
        "--all-rows",
    ]);
    for name in [
        "wakeup_p50_us",
        "wakeup_p90_us",
        "wakeup_p99_us",
        "wakeup_p99.9_us",
        "request_p50_us",
        "request_p99_us",
        "request_p99.9_us",
        "rps_p50",
        "rps_avg",
    ] {
        assert!(has_row(&text, name), "{name}:\n{text}");
        let better = if name.starts_with("rps") {
            "higher"
        } else {
            "lower"
        };
        assert_eq!(metric(&v, name)["better"], better, "{name}");
    }
    // The benchmark's figures come first, before the run-wide totals.
    let first = text
        .lines()
        .find(|l| l.starts_with("Min "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(first.contains("wakeup_p50_us"), "{text}");
    // The same numbers as the run's own schbench report, side by side.
    for (i, kernel) in [(0, "5.4"), (1, "6.6")] {
        let (_d, s) = run_out(&[spec, "--machine", "a7-octa", "--kernel", kernel]);
        let sb = &s["schbench"];
        let pct = |table: &str, p: f64| -> f64 {
            sb[table]["percentiles"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["pct"] == p)
                .unwrap()["value"]
                .as_f64()
                .unwrap()
        };
        assert_eq!(
            amean(&v, "wakeup_p99_us", i),
            pct("wakeup_latency_us", 99.0)
        );
        assert_eq!(
            amean(&v, "request_p99.9_us", i),
            pct("request_latency_us", 99.9)
        );
        assert_eq!(amean(&v, "rps_p50", i), pct("rps", 50.0));
        assert_eq!(amean(&v, "rps_avg", i), sb["average_rps"].as_f64().unwrap());
    }
}

/// Nearest-rank percentile (tenths of a percent) of sorted samples.
fn nearest_rank(sorted: &[u64], p: usize) -> f64 {
    let rank = (p * sorted.len()).div_ceil(1000).max(1);
    sorted[rank - 1] as f64
}

#[test]
fn rt_app_compare_has_latency_percentiles_and_missed_periods() {
    let w = example_workload();
    let w = w.to_str().unwrap();
    let common = ["--machine", "a7-octa", "--duration", "300ms"];
    let mut args = vec![w];
    args.extend_from_slice(&common);
    args.extend_from_slice(&[
        "--new",
        "NO_SCHED_IDLE_AS_IDLE",
        "--runs",
        "1",
        "--all-rows",
    ]);
    let (text, v) = compare(&args);
    for name in [
        "wu_lat_p50_us",
        "wu_lat_p90_us",
        "wu_lat_p99_us",
        "missed_periods",
    ] {
        assert!(has_row(&text, name), "{name}:\n{text}");
        assert_eq!(metric(&v, name)["better"], "lower", "{name}");
    }
    // The same figures as the run's: Σ deadlines.missed of summary.json,
    // and the percentiles of the logs' timer rows.
    for (i, features) in [(0, ""), (1, "NO_SCHED_IDLE_AS_IDLE")] {
        let mut run = vec![w];
        run.extend_from_slice(&common);
        run.extend_from_slice(&["--features", features]);
        let (dir, s) = run_out(&run);
        let missed: u64 = s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["deadlines"]["missed"].as_u64())
            .sum();
        assert!(missed > 0, "the example misses periods");
        assert_eq!(amean(&v, "missed_periods", i), missed as f64);
        let mut lat: Vec<u64> = Vec::new();
        for f in std::fs::read_dir(dir.path().join("run")).unwrap() {
            let p = f.unwrap().path();
            if p.extension().and_then(|e| e.to_str()) == Some("log") {
                let rows = parse_rtapp_log(&std::fs::read_to_string(&p).unwrap()).unwrap();
                lat.extend(rows.iter().filter(|r| r.c_period > 0).map(|r| r.wu_lat));
            }
        }
        lat.sort_unstable();
        let n: u64 = s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["wakeup_latency_us"]["n"].as_u64().unwrap())
            .sum();
        assert_eq!(lat.len() as u64, n, "every timer row's latency");
        for (name, p) in [
            ("wu_lat_p50_us", 500),
            ("wu_lat_p90_us", 900),
            ("wu_lat_p99_us", 990),
        ] {
            assert_eq!(amean(&v, name, i), nearest_rank(&lat, p), "{name} side {i}");
        }
    }
}

#[test]
fn rt_app_compare_per_task_rows_have_p99_and_missed_periods_per_name() {
    let w = example_workload();
    let (text, v) = compare(&[
        w.to_str().unwrap(),
        "--machine",
        "a7-octa",
        "--duration",
        "200ms",
        "--runs",
        "1",
        "--new",
        "NO_SCHED_IDLE_AS_IDLE",
        "--per-task",
        "--all-rows",
    ]);
    for name in [
        "cfs_thread.wu_lat_mean_us",
        "cfs_thread.wu_lat_p99_us",
        "cfs_thread.missed_periods",
        "cfs_thread.runtime_ms",
        "idle_thread.runtime_ms",
    ] {
        assert!(has_row(&text, name), "{name}:\n{text}");
    }
    // The SCHED_IDLE hogs sleep on no timer: no latency or period rows.
    assert!(!text.contains("idle_thread.wu_lat"), "{text}");
    assert!(!text.contains("idle_thread.missed"), "{text}");
    // One name has all the timer rows: its figures are the totals'.
    for (per_name, total) in [
        ("cfs_thread.wu_lat_p99_us", "wu_lat_p99_us"),
        ("cfs_thread.missed_periods", "missed_periods"),
    ] {
        assert_eq!(amean(&v, per_name, 0), amean(&v, total, 0));
    }
}

/// A 4-group hackbench compare on a7-octa with `extra`.
fn hackbench(extra: &[&str], json: &Path) -> String {
    let mut args = vec![
        "compare",
        "hackbench:groups=4,loops=20",
        "--machine",
        "a7-octa",
        "--runs",
        "2",
        "--new",
        "STEAL",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assert_success(&schedlab(&args))
}

#[test]
fn hackbench_compare_has_per_group_rows_only_with_per_task() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("c.json");
    let names = |v: &Value| -> Vec<String> {
        v["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap().to_string())
            .collect()
    };
    let read =
        || -> Value { serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap() };
    // By default: hackbench's time, the throughput and the totals.
    for extra in [&[][..], &["--all-rows"][..]] {
        let text = hackbench(extra, &json);
        assert!(!text.contains("hb-"), "{extra:?}:\n{text}");
        assert!(has_row(&text, "time_s"), "{text}");
        let v = read();
        assert_eq!(
            names(&v),
            [
                "time_s",
                "runtime_ms",
                "switches",
                "migrations",
                "loops_per_s"
            ]
        );
        assert_eq!(metric(&v, "time_s")["better"], "lower");
        assert_eq!(metric(&v, "loops_per_s")["better"], "higher");
        assert_eq!(metric(&v, "runtime_ms")["better"], "lower");
    }
    // --per-task: a set of rows per group's senders and receivers.
    let text = hackbench(&["--per-task", "--all-rows"], &json);
    let v = read();
    for g in 0..4 {
        for side in ["r", "s"] {
            let name = format!("hb-{side}{g}.runtime_ms");
            assert!(has_row(&text, &name), "{name}:\n{text}");
            assert_eq!(metric(&v, &name)["better"], "lower");
        }
    }
    assert!(has_row(&text, "time_s"), "{text}");
    assert!(!text.contains("hb-r0-0"), "{text}");
    // --per-task=threads: per thread, at most 16, the rest counted.
    let text = hackbench(&["--per-task=threads"], &json);
    assert!(text.contains("hb-r0-0.runtime_ms"), "{text}");
    assert!(
        text.contains("more threads without rows of their own: at most 16 are shown"),
        "{text}"
    );
}

#[test]
fn per_task_takes_names_or_threads_only() {
    let out = schedlab([
        "compare",
        "hackbench:groups=1,loops=5",
        "--new",
        "STEAL",
        "--per-task=groups",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("names") && e.contains("threads"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    // The workload after a bare --per-task is the workload, not its value.
    let out = schedlab([
        "compare",
        "--per-task",
        "hackbench:groups=1,loops=5",
        "--new",
        "STEAL",
        "--runs",
        "1",
    ]);
    assert_success(&out);
}
