//! report.html: rendering checks on the string, and browser checks in
//! headless Chromium through `tests/browser_check.py`.
//!
//! The run directories are generated here (small, deterministic): two CPUs,
//! a SCHED_NORMAL and a SCHED_IDLE task, a trace with a known busy pattern,
//! rt-app logs with known latencies, schedstat and profile.
//!
//! Browser tests need `python3` and Chromium (`apt-get install -y
//! chromium`); without Chromium they fail with an install hint, unless
//! `SCHEDLAB_SKIP_BROWSER=1` is set, in which case they pass with a message.

use std::path::{Path, PathBuf};
use std::process::Command;

use schedlab_core::stats::LogRow;
use schedlab_output::ftrace_text::{write_header, OwnedEvent, OwnedRecord, OwnedTask};
use schedlab_output::report_html::*;
use schedlab_output::rtapp_log::write_log;
use serde_json::{json, Value};

const NORMAL: &str = "cfs_thread-0";
const IDLE: &str = "idle_thread-1";
/// A SCHED_IDLE hog that never sleeps: log rows with wu_lat 0, no timer
/// samples in summary.json.
const HOG: &str = "hog_thread-2";

fn task(pid: u32, comm: &str) -> OwnedTask {
    OwnedTask {
        pid,
        comm: comm.into(),
        prio: 120,
    }
}

fn switch(time_us: u64, cpu: u32, prev: (u32, &str), next: (u32, &str)) -> OwnedRecord {
    let prev_comm = if prev.0 == 0 {
        format!("swapper/{cpu}")
    } else {
        prev.1.to_owned()
    };
    let next_comm = if next.0 == 0 {
        format!("swapper/{cpu}")
    } else {
        next.1.to_owned()
    };
    OwnedRecord {
        time_ns: time_us * 1000,
        cpu,
        ctx_comm: if prev.0 == 0 {
            "<idle>".into()
        } else {
            prev.1.into()
        },
        ctx_pid: prev.0,
        flags: "d..2.".into(),
        event: OwnedEvent::SchedSwitch {
            prev: task(prev.0, &prev_comm),
            prev_state: if prev.0 == 0 { "R".into() } else { "S".into() },
            next: task(next.0, &next_comm),
        },
    }
}

/// Writes a run directory. `variant` shifts the latencies (so two runs
/// differ); `with_trace` adds trace.txt.
///
/// Trace: CPU 0 runs cfs_thread-0 for [0, 15) ms of every 20 ms (75% busy),
/// CPU 1 runs idle_thread-1 for [0, 5) ms of every 20 ms (25% busy), 100 ms.
fn make_run(dir: &Path, variant: u64, with_trace: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let summary = json!({
        "schedlab_version": "0.1.0",
        "machine": {"name": "test-duo", "cpus": 2},
        "features": {"SCHED_IDLE_AS_IDLE": variant == 0, "LB_SERIALIZE": "balancer-only"},
        "seed": 1, "hz": 250, "duration_ns": 100_000_000u64,
        "tasks": [
            {"name": NORMAL, "pid": 1001, "policy": "SCHED_NORMAL", "nice": 0, "group": "/tg1",
             "runtime_ns": 75_000_000u64, "wait_ns": 1_000_000, "switches": 5, "migrations": 0,
             "wakeups": 5, "loops": 5,
             "wakeup_latency_us": {"n": 5, "min": 0, "max": 40, "sum": 100, "mean": 20.0, "stddev": 1.0}},
            {"name": IDLE, "pid": 1002, "policy": "SCHED_IDLE", "nice": 0, "group": "/",
             "runtime_ns": 25_000_000u64, "wait_ns": 0, "switches": 5, "migrations": 0,
             "wakeups": 5, "loops": 5,
             "wakeup_latency_us": {"n": 5, "min": 0, "max": 4000, "sum": 5000, "mean": 1000.0, "stddev": 1.0}},
            {"name": HOG, "pid": 1003, "policy": "SCHED_IDLE", "nice": 0, "group": "/",
             "runtime_ns": 1_000_000u64, "wait_ns": 0, "switches": 1, "migrations": 0,
             "wakeups": 0, "loops": 5,
             "wakeup_latency_us": {"n": 0, "min": 0, "max": 0, "sum": 0, "mean": 0.0, "stddev": 0.0}}
        ],
        "cpus": [
            {"cpu": 0, "busy_ns": 75_000_000u64, "idle_ns": 25_000_000u64, "sched_overhead_ns": 0},
            {"cpu": 1, "busy_ns": 25_000_000u64, "idle_ns": 75_000_000u64, "sched_overhead_ns": 0}
        ],
        "groups": [{"path": "/tg1", "cpu_stat": {"usage_usec": 75000, "nr_periods": 10,
                    "nr_throttled": 2, "throttled_usec": 300}}],
        "profile": {"task_ns": 100_000_000u64, "idle_ns": 100_000_000u64, "paths_ns": {
            "context_switch": 20000, "wakeup": 10000, "balance": 3000, "balance_atomic": 0,
            "newidle": 100, "steal": 0, "throttle": 0}}
    });
    std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();

    for (name, lats) in [
        (NORMAL, [0u64, 10, 20, 30, 40]),
        (IDLE, [0u64, 100, 400, 500, 4000]),
        (HOG, [0u64; 5]),
    ] {
        let rows: Vec<LogRow> = lats
            .iter()
            .enumerate()
            .map(|(i, &l)| LogRow {
                idx: 0,
                run: 1000,
                period: 20000,
                start: i as u64 * 20000,
                end: i as u64 * 20000 + 1000,
                wu_lat: l + variant * l,
                ..LogRow::default()
            })
            .collect();
        let mut out = Vec::new();
        write_log(&mut out, &rows).unwrap();
        std::fs::write(dir.join(format!("rt-app-{name}.log")), out).unwrap();
    }

    if with_trace {
        let mut recs = Vec::new();
        for k in 0..5u64 {
            let t = k * 20_000;
            recs.push(switch(t, 0, (0, ""), (1001, NORMAL)));
            recs.push(switch(t, 1, (0, ""), (1002, IDLE)));
            recs.push(switch(t + 5_000, 1, (1002, IDLE), (0, "")));
            recs.push(switch(t + 15_000, 0, (1001, NORMAL), (0, "")));
        }
        recs.sort_by_key(|r| (r.time_ns, r.cpu));
        // Close both CPUs' last span at 100 ms.
        recs.push(switch(100_000, 0, (0, ""), (0, "")));
        recs.push(switch(100_000, 1, (0, ""), (0, "")));
        let mut out = Vec::new();
        write_header(&mut out, recs.len() as u64, 2).unwrap();
        let mut text = String::from_utf8(out).unwrap();
        for r in &recs {
            text.push_str(&r.to_line());
            text.push('\n');
        }
        std::fs::write(dir.join("trace.txt"), text).unwrap();
    }

    let dom = |mask: &str, name: &str| {
        format!("domain0 {name} {mask} 6 5 1 64 0 0 0 0 0 0 5 30 0 5 0 0 30 0 25 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
    };
    let schedstat = format!(
        "version 17\ntimestamp 250\ncpu0 0 0 339 62 118 112 877427356 493411240 228\n{}cpu1 0 0 312 69 114 108 855252396 376680364 198\n{}",
        dom("3", "MC"),
        dom("3", "MC")
    );
    std::fs::write(dir.join("schedstat"), schedstat).unwrap();
    std::fs::write(
        dir.join("profile"),
        "# schedlab profile\ntask 100000000 50.0%\nidle 100000000 50.0%\n",
    )
    .unwrap();
}

/// Two runs: `traced` (variant 0, trace) and `untraced` (variant 1, none).
fn two_runs(root: &Path) -> Vec<RunData> {
    make_run(&root.join("traced"), 0, true);
    make_run(&root.join("untraced"), 1, false);
    vec![
        load_run(&root.join("traced")).unwrap(),
        load_run(&root.join("untraced")).unwrap(),
    ]
}

#[test]
fn load_run_reads_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let r = &runs[0];
    assert_eq!(r.label, "traced");
    assert_eq!(r.latencies.len(), 2);
    assert_eq!(r.latencies[0].task, NORMAL);
    assert_eq!(r.latencies[0].wu_lat_us, vec![0, 10, 20, 30, 40]);
    assert_eq!(
        runs[1].latencies[1].wu_lat_us,
        vec![0, 200, 800, 1000, 8000]
    );
    assert!(r.trace.is_some() && runs[1].trace.is_none());
    assert_eq!(r.schedstat.as_ref().unwrap().cpus.len(), 2);
    assert!(r.profile_text.as_ref().unwrap().contains("idle"));
}

#[test]
fn load_run_errors_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let e = load_run(tmp.path()).unwrap_err();
    assert!(matches!(e, ReportError::Io { .. }));
    assert!(e.to_string().contains("summary.json"), "{e}");

    make_run(tmp.path(), 0, false);
    std::fs::write(tmp.path().join("rt-app-cfs_thread-0.log"), "#idx\n1 2 3\n").unwrap();
    let e = load_run(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("rt-app-cfs_thread-0.log:2: expected 11 columns"),
        "{e}"
    );

    std::fs::write(tmp.path().join("summary.json"), "{}").unwrap();
    let e = load_run(tmp.path()).unwrap_err();
    assert!(matches!(e, ReportError::Summary { .. }), "{e}");
}

#[test]
fn utilisation_bins_follow_the_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let (bin, rows) = utilisation_bins(&runs[0]);
    assert_eq!(bin, HEATMAP_BIN_NS);
    assert_eq!(rows.len(), 2);
    // CPU 0: busy 0-15 ms of each 20 ms; bins of 10 ms alternate 100%, 50%.
    let expect0: Vec<f64> = (0..10)
        .map(|k| if k % 2 == 0 { 1.0 } else { 0.5 })
        .collect();
    assert_eq!(rows[0], (0, expect0));
    // CPU 1: busy 0-5 ms: 50%, 0%.
    let expect1: Vec<f64> = (0..10)
        .map(|k| if k % 2 == 0 { 0.5 } else { 0.0 })
        .collect();
    assert_eq!(rows[1], (1, expect1));
    // Without a trace: one column from summary.json.
    let (_, rows) = utilisation_bins(&runs[1]);
    assert_eq!(rows, vec![(0, vec![0.75]), (1, vec![0.25])]);
}

#[test]
fn rendered_html_is_self_contained_and_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let html = render_report(&runs);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for needle in [
        NORMAL,
        IDLE,
        "SCHED_IDLE",
        r#"id="timeline""#,
        r#"id="latency-cdf""#,
        r#"id="latency-hist""#,
        r#"id="util-heatmap""#,
        r#"id="task-table""#,
        r#"id="schedstat-cpu""#,
        r#"id="schedstat-domain""#,
        r#"id="profile-table""#,
        r#"id="group-table""#,
        r#"id="features""#,
        r#"id="report-data""#,
        "/tg1",
        "Content-Security-Policy",
        r#"content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:""#,
        "Run untraced has no trace.txt",
        r#"<tr class="diff"><td class="l">SCHED_IDLE_AS_IDLE</td>"#,
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
    let tl = format!(r#"id="timeline" data-tasks="{NORMAL} {IDLE}""#);
    assert!(html.contains(&tl), "timeline data-tasks");
    let lat = format!(r#"id="latency-cdf" data-tasks="{NORMAL} {IDLE}""#);
    assert!(html.contains(&lat), "latency data-tasks");
    // Nothing that could make the browser fetch anything.
    let lower = html.to_lowercase();
    for bad in [
        "http://",
        "https://",
        "<script src",
        "<link",
        "src=",
        "@import",
        "url(",
    ] {
        assert!(!lower.contains(bad), "external reference {bad:?}");
    }
    // Valid-ish structure: balanced script/style/svg/table elements.
    for tag in ["script", "style", "svg", "table", "div", "select"] {
        let open = lower.matches(&format!("<{tag}")).count();
        let close = lower.matches(&format!("</{tag}>")).count();
        assert_eq!(open, close, "<{tag}> not balanced");
    }
    // The embedded JSON parses and holds the trace of the traced run only.
    let start = html.find(r#"id="report-data">"#).unwrap() + r#"id="report-data">"#.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data: Value = serde_json::from_str(&html[start..end]).unwrap();
    let tl0 = &data["runs"][0]["timeline"];
    assert_eq!(tl0["cpus"], json!([0, 1]));
    assert_eq!(tl0["tasks"][1]["policy"], "SCHED_NORMAL");
    assert!(data["runs"][1]["timeline"].is_null());
}

#[test]
fn hostile_names_are_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let mut runs = two_runs(tmp.path());
    runs[0].label = "</script><b>x".into();
    runs[0].summary.tasks[0].name = "a<b>&\"c".into();
    let html = render_report(&runs);
    assert!(!html.contains("<b>"));
    assert!(html.contains("&lt;/script&gt;&lt;b&gt;x"));
    assert_eq!(html.matches("</script>").count(), 2);
}

#[test]
fn svg_files_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let out = tmp.path().join("plots");
    let files = write_plots_svg(&runs, &out).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "latency-cdf.svg",
            "latency-hist.svg",
            "util-heatmap-0.svg",
            // Run 0 has a trace: its run-queue map too.
            "runnable-heatmap-0.svg",
            "util-heatmap-1.svg"
        ]
    );
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.starts_with("<?xml"), "{}", f.display());
        assert!(text.contains(r#"<svg xmlns="http://www.w3.org/2000/svg" "#));
        assert_eq!(text.matches("<svg").count(), text.matches("</svg>").count());
    }
    let cdf = std::fs::read_to_string(&files[0]).unwrap();
    assert_eq!(cdf.matches(r#"class="series""#).count(), 2);
    assert!(cdf.contains("traced (n=10)") && cdf.contains("untraced (n=10)"));
}

#[test]
fn per_task_cdf_uses_that_task_only() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let svg = svg_latency_cdf(&runs[..1], Some(NORMAL));
    assert!(svg.contains("traced (n=5)"));
    assert!(svg.contains(&format!("Wakeup latency CDF: {NORMAL}")));
}

#[test]
fn pooled_latency_leaves_out_tasks_that_never_sleep() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    assert!(
        runs[0].latencies.iter().all(|l| l.task != HOG),
        "the hog's zeros are in the latency data"
    );
    let svg = svg_latency_cdf(&runs[..1], None);
    assert!(svg.contains("traced (n=10)"), "{svg}");
    let html = render_report(&runs);
    let cdf = &html[html.find(r#"id="latency-cdf""#).unwrap()..];
    let tasks = &cdf[..cdf.find('>').unwrap()];
    assert!(!tasks.contains(HOG) && tasks.contains(NORMAL), "{tasks}");
    assert!(html.contains(r#"data-sleeping="2" data-threads="3""#));
}

#[test]
fn tables_group_by_task_name_and_list_each_profile_path_once() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = two_runs(tmp.path());
    let html = render_report(&runs);
    let table = |id: &str| {
        let at = html.find(&format!(r#"id="{id}""#)).unwrap();
        let rest = &html[at..];
        rest[..rest.find("</table>").unwrap()].to_string()
    };
    let names = table("task-table");
    assert!(
        names.contains(r#"<td class="l">cfs_thread</td>"#),
        "{names}"
    );
    assert!(
        !names.contains(NORMAL),
        "per-thread name in the per-name table"
    );
    let threads = table("task-table-threads");
    assert!(threads.contains(NORMAL) && threads.contains(HOG));
    let profile = table("profile-table");
    for path in ["task", "idle", "context_switch", "wakeup"] {
        let cell = format!(r#"<td class="l">{path}</td>"#);
        assert_eq!(profile.matches(&cell).count(), 1, "{path} in {profile}");
    }
}

// ---------------------------------------------------------------- browser

/// Whether to run browser tests: panics with an install hint when Chromium
/// or python3 is missing, unless SCHEDLAB_SKIP_BROWSER=1.
fn browser_available(test: &str) -> bool {
    if std::env::var("SCHEDLAB_SKIP_BROWSER").as_deref() == Ok("1") {
        eprintln!("{test}: skipped (SCHEDLAB_SKIP_BROWSER=1)");
        return false;
    }
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    let browser = std::env::var("CHROMIUM").is_ok()
        || ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .any(|b| on_path(b));
    assert!(
        browser,
        "{test}: headless Chromium is needed: `apt-get install -y chromium` \
         (or set CHROMIUM=/path/to/browser, or SCHEDLAB_SKIP_BROWSER=1 to skip)"
    );
    assert!(
        on_path("python3"),
        "{test}: python3 is needed for tests/browser_check.py"
    );
    true
}

/// Runs browser_check.py; returns (passed, parsed JSON result).
fn browser_check(report: &Path, out_dir: &Path, tasks: &[&str]) -> (bool, Value) {
    browser_check_at(report, out_dir, tasks, 1400)
}

/// [`browser_check`] in a window `width` px wide.
fn browser_check_at(report: &Path, out_dir: &Path, tasks: &[&str], width: u32) -> (bool, Value) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser_check.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).arg(report).arg(out_dir);
    cmd.args(["--width", &width.to_string()]);
    for t in tasks {
        cmd.args(["--expect-task", t]);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "browser_check.py printed no JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_ne!(out.status.code(), Some(2), "Chromium did not start: {v}");
    (out.status.success(), v)
}

fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("report_html")
}

#[test]
fn browser_renders_report_without_errors() {
    if !browser_available("browser_renders_report_without_errors") {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runs = two_runs(tmp.path());
    let report = tmp.path().join("report.html");
    std::fs::write(&report, render_report(&runs)).unwrap();
    let (ok, v) = browser_check(&report, &tmp.path().join("check"), &[NORMAL, IDLE]);
    assert!(ok, "browser check failed: {v:#}");
    assert_eq!(v["dom"]["rendered"], "2 tasks");
    assert_eq!(v["dom"]["canvases"], 1);
    assert_eq!(v["dom"]["heatmaps"], 2);
    assert!(v["tooltip"].as_str().unwrap().contains("pid 100"), "{v:#}");
    // Layout at 1400 px: checked by the script (tables inside the window,
    // the pooled plots' n = the task table's timer samples, the hog left
    // out of the pool).
    assert_eq!(v["layout"]["window"], 1400);
    assert_eq!(
        v["layout"]["cdf_pooled"],
        json!([["traced", 10], ["untraced", 10]])
    );
    assert_eq!(v["layout"]["pool"], json!(["2", "3"]));
    let png = PathBuf::from(v["screenshot"].as_str().unwrap());
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
    // Keep a sample for humans: target/tmp/report_html/report.png.
    std::fs::create_dir_all(sample_dir()).unwrap();
    std::fs::copy(&png, sample_dir().join("report.png")).unwrap();
    std::fs::copy(&report, sample_dir().join("report.html")).unwrap();
    eprintln!(
        "sample screenshot: {}",
        sample_dir().join("report.png").display()
    );
}

#[test]
fn browser_layout_check_catches_a_table_past_the_window() {
    if !browser_available("browser_layout_check_catches_a_table_past_the_window") {
        return;
    }
    // Control: the same page in a 500 px window, where the task tables
    // cannot fit, must fail the layout check.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runs = two_runs(tmp.path());
    let report = tmp.path().join("report.html");
    std::fs::write(&report, render_report(&runs)).unwrap();
    let (ok, v) = browser_check_at(&report, &tmp.path().join("narrow"), &[], 500);
    assert!(!ok, "{v:#}");
    assert!(
        v["errors"].to_string().contains("past the 500 px window"),
        "{v:#}"
    );
}

#[test]
fn browser_sees_no_network_request_and_would_catch_one() {
    if !browser_available("browser_sees_no_network_request_and_would_catch_one") {
        return;
    }
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let runs = two_runs(tmp.path());
    let html = render_report(&runs);
    let report = tmp.path().join("report.html");
    std::fs::write(&report, &html).unwrap();
    let (ok, v) = browser_check(&report, &tmp.path().join("ok"), &[]);
    assert!(ok, "{v:#}");
    let url = format!("file://{}", report.display());
    assert_eq!(
        v["requests"],
        json!([url]),
        "the page requested more than itself"
    );

    // Controls: the same page with a fetch added must fail the check, once
    // stopped by the page's CSP (reported as a violation) and once without
    // the CSP (seen as a request).
    let probe = r#"<img alt="" src="http://127.0.0.1:9/probe.png">"#;
    let with_img = html.replacen("<body>", &format!("<body>{probe}"), 1);
    let csp_start = with_img.find("<meta http-equiv=").unwrap();
    let csp_end = csp_start + with_img[csp_start..].find('>').unwrap() + 1;
    let without_csp = format!("{}{}", &with_img[..csp_start], &with_img[csp_end..]);
    for (name, page, expect) in [
        ("csp", &with_img, "Content Security Policy"),
        (
            "no-csp",
            &without_csp,
            "network request: http://127.0.0.1:9/probe.png",
        ),
    ] {
        let path = tmp.path().join(format!("{name}.html"));
        std::fs::write(&path, page).unwrap();
        let (ok, v) = browser_check(&path, &tmp.path().join(name), &[]);
        assert!(!ok, "{name}: the check missed a fetch: {v:#}");
        let errors = v["errors"].to_string();
        assert!(errors.contains(expect), "{name}: {errors}");
    }
}
