//! `schedlab run examples/sched-idle-a7.json --machine a7-octa --out DIR`:
//! the files it writes, the table it prints, the summary.json contract
//! (architecture.md §5) and the agreement between the rt-app logs and the
//! summary's wakeup-latency figures.

use crate::common::{assert_success, example_workload, list_files, schedlab};
use schedlab_core::stats::{LogRow, SampleStats};
use schedlab_output::rtapp_log::{parse_rtapp_log, RTAPP_LOG_HEADER};
use serde_json::Value;
use std::path::{Path, PathBuf};

const NR_CFS: usize = 8;
const NR_IDLE: usize = 5;

/// Runs the example into a fresh directory; returns (tempdir guard, out dir, stdout).
fn run_example(extra: &[&str]) -> (tempfile::TempDir, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args: Vec<String> = vec![
        "run".into(),
        example_workload().to_string_lossy().into_owned(),
        "--machine".into(),
        "a7-octa".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let stdout = assert_success(&schedlab(&args));
    (tmp, out, stdout)
}

fn thread_names() -> Vec<String> {
    (0..NR_CFS)
        .map(|i| format!("cfs_thread-{i}"))
        .chain((NR_CFS..NR_CFS + NR_IDLE).map(|i| format!("idle_thread-{i}")))
        .collect()
}

fn read_summary(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

fn read_log(out: &Path, thread: &str) -> (String, Vec<LogRow>) {
    let path = out.join(format!("rt-app-{thread}.log"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = parse_rtapp_log(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (text, rows)
}

/// Keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

/// Asserts that `obj` has every key of `want` (more are allowed: §5 says
/// "add fields freely").
fn assert_has_keys(what: &str, obj: &Value, want: &[&str]) {
    let have = keys(obj);
    let missing: Vec<&&str> = want.iter().filter(|k| !have.contains(k)).collect();
    assert!(
        missing.is_empty(),
        "{what}: contract fields missing: {missing:?} (has {have:?})"
    );
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not an unsigned integer: {}", v[key]))
}

#[test]
fn run_writes_summary_and_one_log_per_thread() {
    let (_tmp, out, _) = run_example(&[]);
    let mut want: Vec<PathBuf> = thread_names()
        .iter()
        .map(|t| PathBuf::from(format!("rt-app-{t}.log")))
        .collect();
    want.push(PathBuf::from("summary.json"));
    want.push(PathBuf::from("profile"));
    want.push(PathBuf::from("schedstat"));
    want.sort();
    assert_eq!(list_files(&out), want, "files in --out");
    // No staging directory or temp file is left next to the output.
    let siblings: Vec<_> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(siblings, vec!["out".to_string()], "leftovers next to --out");
}

#[test]
fn stdout_has_task_table_and_wakeup_latency_table() {
    let (_tmp, out, stdout) = run_example(&[]);
    // By default one row per task name (threads summed), with the number
    // of threads; no per-thread rows.
    for (name, threads) in [("cfs_thread", NR_CFS), ("idle_thread", NR_IDLE)] {
        let row: Vec<&str> = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("task table has no row for {name}:\n{stdout}"))
            .split_whitespace()
            .collect();
        assert_eq!(row[1], threads.to_string(), "threads of {name}: {row:?}");
    }
    for t in thread_names() {
        assert!(
            !stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&t)),
            "a per-thread row for {t} without --per-task:\n{stdout}"
        );
    }
    // The wakeup-latency figures are printed once (no second `N .. min ..`
    // line form).
    assert!(
        !stdout.lines().any(|l| l.starts_with("cfs_thread: N ")),
        "latency printed twice:\n{stdout}"
    );
    // The latency table: a header with the six columns in order, then a row
    // for cfs_thread whose figures pool every cfs thread's samples.
    let header_at = stdout
        .lines()
        .position(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 7 && w[1..] == ["N", "min", "max", "sum", "mean", "stddev"]
        })
        .unwrap_or_else(|| panic!("no wakeup-latency table header in stdout:\n{stdout}"));
    let row: Vec<&str> = stdout
        .lines()
        .skip(header_at + 1)
        .find(|l| l.split_whitespace().next() == Some("cfs_thread"))
        .unwrap_or_else(|| panic!("no cfs_thread row in the latency table:\n{stdout}"))
        .split_whitespace()
        .collect();
    assert_eq!(row.len(), 7, "latency row {row:?}");
    let pooled: Vec<u64> = (0..NR_CFS)
        .flat_map(|i| read_log(&out, &format!("cfs_thread-{i}")).1)
        .filter(|r| r.c_period > 0)
        .map(|r| r.wu_lat)
        .collect();
    let st = SampleStats::of(pooled);
    assert!(st.n > 0, "no wakeup-latency samples at all");
    let int = |s: &str| {
        s.parse::<u64>()
            .unwrap_or_else(|_| panic!("{s} in {row:?}"))
    };
    let flt = |s: &str| {
        s.parse::<f64>()
            .unwrap_or_else(|_| panic!("{s} in {row:?}"))
    };
    assert_eq!(
        (int(row[1]), int(row[2]), int(row[3]), int(row[4])),
        (st.n, st.min, st.max, st.sum),
        "N/min/max/sum of the printed table vs the logs"
    );
    assert!(
        (flt(row[5]) - st.mean).abs() <= 0.01,
        "mean {row:?} vs {st:?}"
    );
    assert!(
        (flt(row[6]) - st.stddev).abs() <= 0.01,
        "stddev {row:?} vs {st:?}"
    );
    // SCHED_IDLE threads have no timer, so they have no latency row.
    assert!(
        !stdout
            .lines()
            .skip(header_at + 1)
            .any(|l| l.starts_with("idle_thread")),
        "idle_thread has a latency row:\n{stdout}"
    );
}

#[test]
fn per_task_prints_one_row_per_thread() {
    let (_tmp, _out, stdout) = run_example(&["--per-task"]);
    for t in thread_names() {
        assert!(
            stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&t)),
            "task table has no row for {t}:\n{stdout}"
        );
    }
}

#[test]
fn summary_json_has_the_contract_field_names_and_values() {
    let (_tmp, out, _) = run_example(&[]);
    let s = read_summary(&out);
    assert_has_keys(
        "top level",
        &s,
        &[
            "schedlab_version",
            "machine",
            "features",
            "seed",
            "hz",
            "duration_ns",
            "tasks",
            "cpus",
            "groups",
            "profile",
        ],
    );
    assert_eq!(s["schedlab_version"], env!("CARGO_PKG_VERSION"));
    assert_has_keys("machine", &s["machine"], &["name", "cpus"]);
    assert_eq!(s["machine"]["name"], "a7-octa");
    assert_eq!(s["machine"]["cpus"], 8);
    assert_eq!(u(&s, "seed"), 1);
    assert_eq!(u(&s, "hz"), 250);
    assert_eq!(
        u(&s, "duration_ns"),
        5_000_000_000,
        "global.duration is 5 s"
    );

    // Every switch the binary knows is listed with its default.
    let feats = s["features"].as_object().expect("features is an object");
    for f in schedlab_core::features::FEATURE_TABLE {
        let want = match f.default {
            "on" => Value::Bool(true),
            "off" => Value::Bool(false),
            e => Value::String(e.to_string()),
        };
        assert_eq!(feats.get(f.name), Some(&want), "features.{}", f.name);
    }

    let tasks = s["tasks"].as_array().expect("tasks is an array");
    assert_eq!(tasks.len(), NR_CFS + NR_IDLE);
    let mut runtime_sum = 0;
    for (i, (t, name)) in tasks.iter().zip(thread_names()).enumerate() {
        assert_has_keys(
            &name,
            t,
            &[
                "name",
                "pid",
                "policy",
                "nice",
                "group",
                "runtime_ns",
                "wait_ns",
                "switches",
                "migrations",
                "wakeups",
                "loops",
                "wakeup_latency_us",
            ],
        );
        assert_eq!(t["name"], name.as_str(), "task order follows the file");
        assert_eq!(u(t, "pid"), 1001 + i as u64);
        let policy = if i < NR_CFS {
            "SCHED_NORMAL"
        } else {
            "SCHED_IDLE"
        };
        assert_eq!(t["policy"], policy, "{name}");
        assert_eq!(t["nice"], 0);
        assert_eq!(t["group"], "/");
        for k in [
            "runtime_ns",
            "wait_ns",
            "switches",
            "migrations",
            "wakeups",
            "loops",
        ] {
            u(t, k);
        }
        assert!(u(t, "runtime_ns") > 0, "{name} never ran");
        // runtime_ns is sum_exec_runtime: the scheduler work charged to
        // the task (sched_work_ns) is the CPUs' overhead, not busy time.
        assert!(u(t, "sched_work_ns") <= u(t, "runtime_ns"), "{name}");
        runtime_sum += u(t, "runtime_ns") - u(t, "sched_work_ns");
        let lat = &t["wakeup_latency_us"];
        assert_has_keys(
            "wakeup_latency_us",
            lat,
            &["n", "min", "max", "sum", "mean", "stddev"],
        );
        for k in ["n", "min", "max", "sum"] {
            u(lat, k);
        }
        assert!(
            lat["mean"].is_f64(),
            "{name}: mean is a float: {}",
            lat["mean"]
        );
        assert!(lat["stddev"].is_f64(), "{name}: stddev is a float");
    }

    let cpus = s["cpus"].as_array().expect("cpus is an array");
    assert_eq!(cpus.len(), 8);
    let (mut busy, mut idle) = (0, 0);
    for (i, c) in cpus.iter().enumerate() {
        assert_has_keys(
            "cpus[]",
            c,
            &["cpu", "busy_ns", "idle_ns", "sched_overhead_ns"],
        );
        assert_eq!(u(c, "cpu"), i as u64);
        let total = u(c, "busy_ns") + u(c, "idle_ns") + u(c, "sched_overhead_ns");
        // The CPU figures run from boot, which is 1-2 ms before t_start.
        assert!(
            (5_000_000_000..5_002_000_000).contains(&total),
            "CPU {i}: busy+idle+overhead = {total} ns for a 5 s run"
        );
        busy += u(c, "busy_ns");
        idle += u(c, "idle_ns");
    }
    assert!(s["groups"].is_array(), "groups is an array");

    let p = &s["profile"];
    assert_has_keys("profile", p, &["task_ns", "idle_ns", "paths_ns"]);
    assert_has_keys(
        "profile.paths_ns",
        &p["paths_ns"],
        &[
            "context_switch",
            "wakeup",
            "balance",
            "balance_atomic",
            "newidle",
            "steal",
            "throttle",
        ],
    );
    assert_eq!(
        u(p, "task_ns"),
        busy,
        "profile.task_ns = sum of cpus[].busy_ns"
    );
    assert_eq!(
        u(p, "idle_ns"),
        idle,
        "profile.idle_ns = sum of cpus[].idle_ns"
    );
    // The helper tasks (rt-app's main thread) ran too.
    for h in s["helpers"].as_array().unwrap() {
        runtime_sum += u(h, "runtime_ns") - u(h, "sched_work_ns");
    }
    assert_eq!(
        runtime_sum, busy,
        "sum of (runtime_ns - sched_work_ns) over tasks[] and helpers[] = sum of busy_ns"
    );
}

/// §5 shows the four mechanisms' switches in `features`, with their values.
#[test]
fn summary_features_name_the_mechanisms() {
    let (_tmp, out, _) = run_example(&[]);
    let s = read_summary(&out);
    let f = &s["features"];
    // Defaults: STEAL off (a patch under review), the merged SCHED_IDLE
    // placement on, and tip's balancer-only serialisation.
    assert_eq!(f["STEAL"], false, "{f}");
    assert_eq!(f["SCHED_IDLE_AS_IDLE"], true, "{f}");
    assert_eq!(f["LB_SERIALIZE"], "balancer-only", "{f}");
}

/// THROTTLE (CFS bandwidth control) is named with its default.
#[test]
fn summary_features_name_throttle() {
    let (_tmp, out, _) = run_example(&[]);
    let s = read_summary(&out);
    assert!(
        s["features"].get("THROTTLE").and_then(|v| v.as_str()) == Some("per-task"),
        "features.THROTTLE missing or not per-task"
    );
}

#[test]
fn logs_parse_and_agree_with_the_summary() {
    let (_tmp, out, _) = run_example(&[]);
    let s = read_summary(&out);
    let tasks = s["tasks"].as_array().unwrap();
    for (i, name) in thread_names().iter().enumerate() {
        let (text, rows) = read_log(&out, name);
        assert_eq!(
            text.lines().next(),
            Some(RTAPP_LOG_HEADER),
            "{name}: rt-app header"
        );
        assert!(!rows.is_empty(), "{name}: empty log");
        let t = &tasks[i];
        assert_eq!(rows.len() as u64, u(t, "loops"), "{name}: log rows = loops");
        for r in &rows {
            assert_eq!(r.idx as usize, i, "{name}: idx column");
            assert!(r.start <= r.end, "{name}: start > end in {r:?}");
            // period is rounded from ns on its own, start and end each
            // separately (as rt-app does), so they may differ by 1 µs.
            assert!(
                r.period.abs_diff(r.end - r.start) <= 1,
                "{name}: period {} vs end - start {}",
                r.period,
                r.end - r.start
            );
        }
        for w in rows.windows(2) {
            assert!(w[0].end <= w[1].start, "{name}: rows overlap: {w:?}");
        }
        let lat = &t["wakeup_latency_us"];
        if i < NR_CFS {
            assert!(rows
                .iter()
                .all(|r| r.c_duration == 5333 && r.c_period == 7777));
            let st = SampleStats::of(rows.iter().filter(|r| r.c_period > 0).map(|r| r.wu_lat));
            assert!(st.n > 500, "{name}: only {} timer iterations in 5 s", st.n);
            assert_eq!(
                (u(lat, "n"), u(lat, "min"), u(lat, "max"), u(lat, "sum")),
                (st.n, st.min, st.max, st.sum),
                "{name}: wakeup_latency_us vs the log's wu_lat column"
            );
            let mean = lat["mean"].as_f64().unwrap();
            let sd = lat["stddev"].as_f64().unwrap();
            assert!(
                (mean - st.mean).abs() <= 1e-9 * st.mean.max(1.0),
                "{name}: mean {mean} vs {}",
                st.mean
            );
            assert!(
                (sd - st.stddev).abs() <= 1e-9 * st.stddev.max(1.0),
                "{name}: stddev {sd} vs {}",
                st.stddev
            );
        } else {
            assert!(
                rows.iter().all(|r| r.c_period == 0 && r.wu_lat == 0),
                "{name}"
            );
            assert_eq!(
                u(lat, "n"),
                0,
                "{name}: SCHED_IDLE thread has no timer samples"
            );
        }
    }
}

/// /proc/schedstat written by the run agrees with summary.json: per-CPU
/// sched_count / sched_goidle / ttwu_count, and the per-domain lb_count,
/// lb_balanced and lb_failed summed over domains equal the run's totals.
#[test]
fn schedstat_counters_match_the_run() {
    use schedlab_output::schedstat::parse_schedstat;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = crate::common::schedlab([
        "run",
        "oltp:workers=24,clients=4",
        "--machine",
        "icx-2s-80c-ht",
        "--duration",
        "300ms",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = read_summary(&out);
    let text = std::fs::read_to_string(out.join("schedstat")).unwrap();
    let st = parse_schedstat(&text).expect("schedstat parses");
    assert_eq!(st.version, 17);
    let cpus = s["cpus"].as_array().unwrap();
    assert_eq!(st.cpus.len(), cpus.len());
    for (c, j) in st.cpus.iter().zip(cpus) {
        assert_eq!(
            c.sched_count,
            u(j, "sched_count"),
            "cpu{} sched_count",
            c.cpu
        );
        assert_eq!(
            c.sched_goidle,
            u(j, "sched_goidle"),
            "cpu{} sched_goidle",
            c.cpu
        );
        assert_eq!(c.ttwu_count, u(j, "ttwu_count"), "cpu{} ttwu_count", c.cpu);
        // icx: SMT, MC, NUMA.
        let names: Vec<&str> = c.domains.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["SMT", "MC", "NUMA"]);
    }
    let lb = &s["load_balance"];
    for (key, get) in [
        (
            "lb_count",
            (|x: &schedlab_output::schedstat::LbIdleCounters| x.lb_count) as fn(&_) -> u64,
        ),
        ("lb_balanced", |x| x.lb_balanced),
        ("lb_failed", |x| x.lb_failed),
    ] {
        for i in 0..3 {
            let from_file: u64 = st
                .cpus
                .iter()
                .flat_map(|c| &c.domains)
                .map(|d| get(&d.lb[i]))
                .sum();
            assert_eq!(from_file, lb[key][i].as_u64().unwrap(), "{key}[{i}]");
        }
    }
    let total: u64 = (0..3).map(|i| lb["lb_count"][i].as_u64().unwrap()).sum();
    assert!(total > 0, "no balancing happened at all");
}

/// `schedlab report` writes one self-contained page and the SVG plots for
/// several runs; a directory that is not a run is one clear error line.
#[test]
fn report_writes_a_self_contained_page() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    for (dir, f) in [(&a, "SCHED_IDLE_AS_IDLE"), (&b, "NO_SCHED_IDLE_AS_IDLE")] {
        let o = crate::common::schedlab([
            "run",
            crate::common::example_workload().to_str().unwrap(),
            "--machine",
            "a7-octa",
            "--duration",
            "200ms",
            "--trace",
            "--quiet",
            "--features",
            f,
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success());
    }
    let out = tmp.path().join("rep");
    let o = crate::common::schedlab([
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "id=\"timeline\"",
        "id=\"latency-cdf\"",
        "id=\"util-heatmap\"",
        "id=\"runnable-heatmap\"",
        "cfs_thread-3",
        "idle_thread-12",
    ] {
        assert!(html.contains(needle), "report lacks {needle}");
    }
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "external reference"
    );
    assert!(out.join("latency-cdf.svg").exists());
    assert!(out.join("runnable-heatmap-0.svg").exists());
    let o = crate::common::schedlab(["report", tmp.path().join("nope").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("schedlab: error:") && err.contains("nope"),
        "{err}"
    );
}

#[test]
fn summary_records_uclamp_only_where_requested() {
    let (_tmp, out) = crate::common::run_json(
        r#"{"tasks": {
          "t": {"util_min": 128, "util_max": 512, "loop": 2, "phases": {
            "a": {"run": 1000}, "b": {"util_max": 1024, "run": 1000}}},
          "u": {"loop": 1, "run": 100}},
         "global": {"calibration": 100}}"#,
        "vm-2cpu",
        &[],
    );
    let s = read_summary(&out);
    let tasks = s["tasks"].as_array().unwrap();
    assert_eq!(
        tasks[0]["uclamp"],
        serde_json::json!({"util_min": 128, "util_max": 512, "phases": {"b": {"util_max": 1024}}})
    );
    assert!(tasks[1].get("uclamp").is_none(), "{}", tasks[1]);
}

#[test]
fn summary_counts_deadline_misses_from_timer_slack() {
    // p: 3 ms of work every 5 ms on CPU 0 (60 %). Alone it has 2 ms of
    // slack every period. From 100 ms a CPU-bound hog shares CPU 0 for
    // 100 ms of work; at half the CPU p overruns, and the summary's misses
    // are exactly the log rows with negative slack.
    let run = |hog: bool| {
        let hog = if hog {
            r#", "hog": {"loop": 1, "cpus": [0], "delay": 100000, "run": 100000}"#
        } else {
            ""
        };
        let (_tmp, out) = crate::common::run_json(
            &format!(
                r#"{{"tasks": {{"p": {{"loop": 50, "cpus": [0], "run": 3000, "timer": {{"ref": "t", "period": 5000}}}}{hog}}},
                 "global": {{"calibration": 100}}}}"#
            ),
            "vm-2cpu",
            &[],
        );
        let s = read_summary(&out);
        let (_, rows) = read_log(&out, "p-0");
        (s["tasks"][0]["deadlines"].clone(), s["tasks"].clone(), rows)
    };
    let (alone, tasks, _) = run(false);
    assert_eq!(alone["periods"], 50);
    assert_eq!(alone["missed"], 0);
    let min = alone["slack_us"]["min"].as_i64().unwrap();
    assert!((1_900..=2_000).contains(&min), "{alone}");
    assert_eq!(alone["slack_us"]["max"], 2_000);
    assert_eq!(tasks.as_array().unwrap().len(), 1);

    let (shared, tasks, rows) = run(true);
    assert!(tasks[1].get("deadlines").is_none(), "the hog has no timer");
    let neg = rows.iter().filter(|r| r.slack < 0).count() as u64;
    assert!(neg >= 5, "{shared}");
    assert_eq!(shared["missed"].as_u64(), Some(neg));
    assert_eq!(
        shared["slack_us"]["min"].as_i64(),
        rows.iter().map(|r| r.slack).min()
    );
}

#[test]
fn cumulative_slack_sums_the_timers_of_an_iteration() {
    // Two 10 ms timers back to back on the same grid: the first sleeps a
    // whole period (slack ~10000 us), the second finds its expiry just
    // passed (slack ~0 or slightly negative). The slack column keeps the
    // last one, or with cumulative_slack the sum: ~10000 us more.
    let slack = |cumulative: bool| -> Vec<i64> {
        let (_tmp, out) = crate::common::run_json(
            &format!(
                r#"{{"tasks": {{"t": {{"loop": 5, "run": 100,
                     "timer": {{"ref": "a", "period": 10000}},
                     "timer1": {{"ref": "b", "period": 10000}}}}}},
                   "global": {{"calibration": 100, "cumulative_slack": {cumulative}}}}}"#
            ),
            "vm-2cpu",
            &[],
        );
        read_log(&out, "t-0").1.iter().map(|r| r.slack).collect()
    };
    let (last, sum) = (slack(false), slack(true));
    assert_eq!((last.len(), sum.len()), (5, 5));
    for (l, s) in last.iter().zip(&sum) {
        assert!(l.abs() < 1_000, "last timer's slack {l}");
        assert!((s - l - 9_900).abs() < 200, "cumulative {s} vs last {l}");
    }
}

/// The report says which kernel each run simulated, marks switches the
/// release does not have, takes the runs' names from --label, and by
/// default writes to ./schedlab-report, leaving the run directories as
/// `run` wrote them.
#[test]
fn report_names_kernels_labels_and_writes_beside_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    for (d, k) in [("a", "5.15"), ("b", "6.6")] {
        crate::common::assert_success(&crate::common::schedlab_in(
            tmp.path(),
            [
                "run",
                "oltp:workers=2,clients=0",
                "--duration",
                "0.01",
                "--kernel",
                k,
                "--quiet",
                "--out",
                d,
            ],
        ));
    }
    let before = crate::common::list_tree(&tmp.path().join("a"));
    let o = crate::common::schedlab_in(
        tmp.path(),
        ["report", "a", "b", "--label", "CFS", "--label", "EEVDF"],
    );
    crate::common::assert_success(&o);
    assert_eq!(crate::common::list_tree(&tmp.path().join("a")), before);
    let html = std::fs::read_to_string(tmp.path().join("schedlab-report/report.html")).unwrap();
    assert!(html.contains("<td>5.15</td>") && html.contains("<td>6.6</td>"));
    assert!(html.contains("CFS") && html.contains("EEVDF"));
    // GENTLE_FAIR_SLEEPERS is a CFS switch: 6.6 does not have it, 5.15 does.
    let row = html
        .split("<tr")
        .find(|r| r.contains("GENTLE_FAIR_SLEEPERS"))
        .expect("a GENTLE_FAIR_SLEEPERS row");
    assert!(
        row.contains("absent (6.6)") && row.contains("<td>true</td>"),
        "{row}"
    );
    // Tunables: latency_ns is CFS's (5.15), base_slice_ns EEVDF's (6.6).
    let row = html
        .split("<tr")
        .find(|r| r.contains(">latency_ns<"))
        .expect("a latency_ns row");
    assert!(row.contains("absent (6.6)"), "{row}");
    let row = html
        .split("<tr")
        .find(|r| r.contains(">base_slice_ns<"))
        .expect("a base_slice_ns row");
    assert!(row.contains("absent (5.15)"), "{row}");
    // A switch no release has, set by the run, shows its value.
    crate::common::assert_success(&crate::common::schedlab_in(
        tmp.path(),
        [
            "run",
            "oltp:workers=2,clients=0",
            "--duration",
            "0.01",
            "--kernel",
            "6.6",
            "--features",
            "STEAL",
            "--quiet",
            "--out",
            "c",
        ],
    ));
    crate::common::assert_success(&crate::common::schedlab_in(
        tmp.path(),
        ["report", "b", "c", "--out", "r2"],
    ));
    let html = std::fs::read_to_string(tmp.path().join("r2/report.html")).unwrap();
    let row = html
        .split("<tr")
        .find(|r| r.contains(">STEAL<"))
        .expect("a STEAL row");
    assert!(
        row.contains("absent (6.6)") && row.contains("<td>true</td>"),
        "{row}"
    );
    // Labels must match the directories one to one.
    let o = crate::common::schedlab_in(tmp.path(), ["report", "a", "b", "--label", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", crate::common::describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--label: 1 labels for 2 run directories"),
        "{err}"
    );
}

/// rt-app's log_size: "disable" writes no log, N MiB keeps each thread's
/// last N MiB of rows (the run is long enough to log more), "file" all.
#[test]
fn log_size_disable_ring_and_file() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for (name, size) in [("off", "\"disable\""), ("ring", "1"), ("all", "\"file\"")] {
        let json = format!(
            r#"{{"tasks": {{"t": {{"loop": -1, "run": 10, "sleep": 10}}}}, "global": {{"duration": 20, "calibration": 100, "log_size": {size}}}}}"#
        );
        let f = tmp.path().join(format!("{name}.json"));
        std::fs::write(&f, json).unwrap();
        let out = tmp.path().join(name);
        crate::common::assert_success(&crate::common::schedlab([
            "run",
            f.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]));
        let log = out.join("rt-app-t-0.log");
        sizes.push(std::fs::metadata(&log).map(|m| m.len()).ok());
    }
    assert_eq!(sizes[0], None, "disable: no log");
    let ring = sizes[1].expect("a ring log");
    let all = sizes[2].expect("a file log");
    assert!(all > 4 * ring, "file {all} ring {ring}");
    // The ring holds the file's last rows: 1 MiB of them, less than a row
    // short, after the header.
    let r = std::fs::read_to_string(tmp.path().join("ring/rt-app-t-0.log")).unwrap();
    let a = std::fs::read_to_string(tmp.path().join("all/rt-app-t-0.log")).unwrap();
    let rows = ring - (r.lines().next().unwrap().len() as u64 + 1);
    assert!(
        rows <= 1 << 20 && rows > (1 << 20) - 200,
        "ring rows {rows}"
    );
    let last = r.lines().last().unwrap();
    assert_eq!(a.lines().last().unwrap(), last);
    let body: Vec<&str> = r.lines().skip(1).collect();
    assert!(a.ends_with(&(body.join("\n") + "\n")));
}
