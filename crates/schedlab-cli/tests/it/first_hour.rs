//! What a new user sees in the first hour, through the binary:
//! each generator's own result line, the per-task-name grouping, the
//! `compare` table, one error line for every argument error, the note on a
//! constant wakeup latency, and the README's promises.

use std::path::Path;
use std::process::Output;

use crate::common::*;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// An argument error: exit 2, exactly one line on stderr (`schedlab:
/// error: MESSAGE; HINT`), nothing on stdout. Returns the message and the
/// hint.
fn assert_arg_error(args: &[&str]) -> (String, String) {
    let out = schedlab(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
    assert!(out.stdout.is_empty(), "{args:?}: stdout {}", describe(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: stderr is not one line:\n{err}");
    assert!(lines[0].starts_with("schedlab: error: "), "{err}");
    let (msg, hint) = lines[0]
        .split_once("; ")
        .unwrap_or_else(|| panic!("{args:?}: no hint folded in: {err}"));
    assert!(!hint.is_empty(), "{err}");
    (msg.to_string(), hint.to_string())
}

/// A user error: exit 2, one line on stderr. Returns it.
fn assert_user_error(args: &[&str]) -> String {
    let out = schedlab(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("schedlab: error: "), "{err}");
    err
}

// ------------------------------------------------------------ 1. results

#[test]
fn hackbench_prints_its_time_line_last() {
    let out = schedlab(["run", "hackbench:groups=2,loops=20", "--machine", "a7-octa"]);
    let text = assert_success(&out);
    let last = text.lines().last().unwrap();
    let t = last
        .strip_prefix("Time: ")
        .unwrap_or_else(|| panic!("{text}"));
    let (s, ms) = t.split_once('.').unwrap();
    assert!(
        s.parse::<u64>().is_ok() && ms.len() == 3 && ms.parse::<u64>().is_ok(),
        "{last}"
    );
}

#[test]
fn hackbench_cut_short_says_what_it_cut() {
    let out = schedlab([
        "run",
        "hackbench:groups=1,fds=2,loops=20000",
        "--machine",
        "vm-2cpu",
        "--duration",
        "5ms",
    ]);
    let text = assert_success(&out);
    assert!(!text.lines().any(|l| l.starts_with("Time:")), "{text}");
    let note = text
        .lines()
        .find(|l| l.starts_with("note: hackbench's Time: is not measured"))
        .unwrap_or_else(|| panic!("no note:\n{text}"));
    assert!(
        note.contains("workload_time_s") && note.contains("5.000 ms"),
        "{note}"
    );
    assert!(note.contains("0 of 2 receivers done"), "{note}");
}

#[test]
fn oltp_prints_transactions_per_second() {
    let out = schedlab([
        "run",
        "oltp:workers=2,clients=1",
        "--machine",
        "vm-2cpu",
        "--duration",
        "50ms",
    ]);
    let text = assert_success(&out);
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("tps = "), "{text}");
    assert!(last.contains("transactions per simulated second"), "{last}");
    let tps: f64 = last["tps = ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(tps > 0.0, "{last}");
}

#[test]
fn hackbench_writes_no_header_only_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    assert_success(&schedlab([
        "run",
        "hackbench:groups=1,fds=2,loops=5",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]));
    let logs: Vec<_> = list_files(&out)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert!(logs.is_empty(), "header-only logs: {logs:?}");
}

// ---------------------------------------------------- 2. per-task names

#[test]
fn run_groups_hackbench_threads_by_task_name() {
    let out = schedlab([
        "run",
        "hackbench:groups=2,fds=3,loops=5",
        "--machine",
        "vm-2cpu",
    ]);
    let text = assert_success(&out);
    // Two header lines (what ran), the column heads, then the rows.
    assert!(
        text.starts_with(
            "# hackbench:groups=2,fds=3,loops=5 on vm-2cpu (2 CPUs; the default machine"
        ),
        "{text}"
    );
    assert_eq!(
        text.lines().nth(1),
        Some("# features and tunables: tip's defaults"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with("hb-"))
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(rows[0].starts_with("hb-r0 ") && rows[0].split_whitespace().nth(1) == Some("3"));
    assert!(
        text.contains("--per-task prints one row per thread"),
        "{text}"
    );
}

#[test]
fn compare_has_per_task_name_rows() {
    let out = schedlab([
        "compare",
        example_workload().to_str().unwrap(),
        "--machine",
        "a7-octa",
        "--duration",
        "200ms",
        "--runs",
        "2",
        "--new",
        "NO_SCHED_IDLE_AS_IDLE",
        "--per-task",
    ]);
    let text = assert_success(&out);
    assert!(text.contains("AMean   cfs_thread.wu_lat_mean_us"), "{text}");
    assert!(text.contains("idle_thread.runtime_ms"), "{text}");
    assert!(!text.contains("cfs_thread-0"), "{text}");
}

#[test]
fn report_groups_by_name_and_pools_only_sleeping_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    assert_success(&schedlab([
        "run",
        example_workload().to_str().unwrap(),
        "--machine",
        "a7-octa",
        "--duration",
        "200ms",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_success(&schedlab([
        "report",
        out.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // 8 cfs threads sleep on timers, the 5 SCHED_IDLE hogs never sleep.
    assert!(
        html.contains(r#"data-sleeping="8" data-threads="13""#),
        "pool"
    );
    assert!(html.contains(r#"<td class="l">cfs_thread</td>"#));
    let cdf = &html[html.find(r#"id="latency-cdf""#).unwrap()..];
    assert!(!cdf[..cdf.find('>').unwrap()].contains("idle_thread"));
}

// ------------------------------------------------------------ 3. compare

fn hackbench_compare(extra: &[&str]) -> String {
    hackbench_compare_spec("hackbench:groups=2,loops=20", extra)
}

fn hackbench_compare_spec(spec: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "compare",
        spec,
        "--machine",
        "a7-octa",
        "--runs",
        "2",
        "--new",
        "STEAL,NO_SIS_UTIL",
    ];
    args.extend_from_slice(extra);
    assert_success(&schedlab(&args))
}

#[test]
fn compare_table_is_fit_for_a_patch_posting() {
    let text = hackbench_compare(&[]);
    let lines: Vec<&str> = text.lines().collect();
    // Short column headers with a legend giving the features.
    assert_eq!(lines[1], "base = default features", "{text}");
    assert_eq!(lines[2], "new  = STEAL,NO_SIS_UTIL", "{text}");
    let head: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(head, ["base", "new"], "{text}");
    // A time of a few ms keeps four significant digits.
    let amean = lines
        .iter()
        .find(|l| l.starts_with("AMean   time_s"))
        .unwrap_or_else(|| panic!("{text}"));
    let v = amean.split_whitespace().nth(2).unwrap();
    let decimals = v.split_once('.').unwrap().1.len();
    assert!(decimals >= 4, "{amean}");
    // Rows the same in every run are left out and named. (CPU time depends
    // on placement since channel calls pay cross-CPU line transfers, so
    // the 2-group runtime differs between the sides; one group of 2+2
    // runs the same on both.)
    let text = hackbench_compare_spec("hackbench:groups=1,fds=2,loops=20", &[]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        !lines
            .iter()
            .any(|l| l.split_whitespace().nth(1) == Some("runtime_ms")),
        "{text}"
    );
    assert!(
        text.contains("Same in every run (rows left out): time_s")
            && text.contains(", runtime_ms "),
        "{text}"
    );
    assert!(text.contains("--all-rows"), "{text}");
    // --all-rows brings them back.
    let all = hackbench_compare_spec("hackbench:groups=1,fds=2,loops=20", &["--all-rows"]);
    assert!(
        all.lines().any(|l| l.starts_with("AMean   runtime_ms")),
        "{all}"
    );
}

#[test]
fn compare_runs_in_parallel_with_the_same_table_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = |jobs: &str| {
        let json = dir.path().join(format!("j{jobs}.json"));
        let text = hackbench_compare(&["-j", jobs, "--json", json.to_str().unwrap()]);
        (text, std::fs::read(json).unwrap())
    };
    let one = out("1");
    assert_eq!(one, out("2"));
    assert_eq!(one, out("5"));
    let r = schedlab(&[
        "compare",
        "hackbench:groups=1,loops=5",
        "--new",
        "STEAL",
        "-j",
        "0",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("--jobs: at least 1"));
}

#[test]
fn compare_help_says_generator_specs_work() {
    let out = schedlab(["compare", "--help"]);
    let text = assert_success(&out);
    assert!(text.contains("generator spec"), "{text}");
    assert!(
        text.contains("--all-rows") && text.contains("--per-task"),
        "{text}"
    );
}

// ------------------------------------------------------- 4. error lines

#[test]
fn clap_errors_are_one_line_with_the_hint_folded_in() {
    let (e, h) = assert_arg_error(&["run", "x.json", "--seeed", "3"]);
    assert!(e.contains("'--seeed'"), "{e}");
    assert!(h.contains("--seed"), "{h}");
    let (e, h) = assert_arg_error(&["run"]);
    assert!(e.contains("<WORKLOAD>"), "{e}");
    assert!(h.contains("schedlab run --help"), "{h}");
    let (e, _) = assert_arg_error(&["run", "x.json", "--machine"]);
    assert!(e.contains("--machine"), "{e}");
    assert_arg_error(&["frobnicate"]);
    assert_arg_error(&[]);
    assert_arg_error(&["compare", "x.json"]);
    assert_arg_error(&["run", "x.json", "--seed", "minus-one"]);
    // A negative duration is the duration's error, not clap's.
    let e = assert_user_error(&["run", "hackbench:groups=1", "--duration", "-1s"]);
    assert!(e.contains("--duration: -1s is negative"), "{e}");
}

#[test]
fn help_and_version_still_print_normally() {
    for args in [
        &["--help"][..],
        &["run", "--help"],
        &["--version"],
        &["help"],
    ] {
        let out = schedlab(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        assert!(!out.stdout.is_empty() && out.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn negated_enum_feature_shows_the_values() {
    let wl = example_workload();
    let e = assert_user_error(&["run", wl.to_str().unwrap(), "--features", "NO_THROTTLE"]);
    assert!(
        e.contains("THROTTLE=legacy, THROTTLE=per-task, THROTTLE=unified"),
        "{e}"
    );
    let e = assert_user_error(&["compare", wl.to_str().unwrap(), "--new", "NO_LB_SERIALIZE"]);
    assert!(
        e.contains("--new") && e.contains("LB_SERIALIZE=eager"),
        "{e}"
    );
}

#[test]
fn unknown_generator_is_named_with_the_list() {
    let e = assert_user_error(&["run", "hackbnech:groups=2"]);
    assert!(e.contains("unknown generator 'hackbnech'"), "{e}");
    assert!(e.contains("oltp, hackbench"), "{e}");
    let e = assert_user_error(&["run", "hackbench"]);
    assert!(e.contains("write 'hackbench:'"), "{e}");
}

#[test]
fn elided_domains_say_what_was_left_out() {
    let out = schedlab(["machines", "icx-2s-80c-ht", "--domains"]);
    let text = assert_success(&out);
    assert!(text.contains("CPU0 attaching") && text.contains("CPU159 attaching"));
    let last = text.lines().last().unwrap();
    assert!(
        last.contains("CPUs 1-158 are left out") && last.contains("--cpu N"),
        "{last}"
    );
    let out = schedlab(["machines", "icx-2s-80c-ht", "--domains", "--cpu", "40"]);
    let text = assert_success(&out);
    assert!(text.contains("CPU40 attaching") && !text.contains("CPU0 attaching"));
    // A small machine prints every CPU and no such line.
    let text = assert_success(&schedlab(["machines", "a7-octa", "--domains"]));
    assert!(!text.contains("left out"), "{text}");
}

/// `--kernel` applies that release's sd_init: 5.4 has busy_factor 32 and
/// the package level's imbalance_pct 125; an unknown release is one line.
#[test]
fn domains_follow_the_release() {
    let old = assert_success(&schedlab([
        "machines",
        "a7-octa",
        "--domains",
        "--kernel",
        "5.4",
    ]));
    let new = assert_success(&schedlab(["machines", "a7-octa", "--domains"]));
    let pkg = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("PKG"))
            .unwrap()
            .to_string()
    };
    assert!(
        pkg(&old).contains(" 125 ") && pkg(&old).contains("256-512"),
        "{old}"
    );
    assert!(
        pkg(&new).contains(" 117 ") && pkg(&new).contains("128-256"),
        "{new}"
    );
    assert!(old.contains("busy_factor=32") && new.contains("busy_factor=16"));
    let e = assert_user_error(&["machines", "a7-octa", "--domains", "--kernel", "4.19"]);
    assert!(e.contains("--kernel: unknown release '4.19'"), "{e}");
}

#[test]
fn run_help_names_the_three_trace_files() {
    let text = assert_success(&schedlab(["run", "--help"]));
    for f in ["trace.txt", "trace.dat", "trace.pftrace"] {
        assert!(text.contains(f), "{f} not in run --help:\n{text}");
    }
}

#[test]
fn bench_seconds_sets_every_case() {
    // Every case, 10 simulated ms each, as JSON: each row says 0.01 s, has
    // events and a peak RSS from its own child process.
    let text = assert_success(&schedlab(["bench", "--seconds", "0.01", "--json"]));
    let v: serde_json::Value = serde_json::from_str(&text).expect("bench --json is JSON");
    let cases = v["cases"].as_array().expect("cases");
    let list = assert_success(&schedlab(["bench", "--list"]));
    assert_eq!(cases.len(), list.lines().count() - 1, "{text}\n{list}");
    for c in cases {
        assert_eq!(c["sim_s"].as_f64(), Some(0.01), "{c}");
        assert!(c["events"].as_u64().unwrap() > 0, "{c}");
        assert!(c["peak_rss_bytes"].as_u64().unwrap() > 1 << 20, "{c}");
        assert!(c["events_per_s"].as_f64().unwrap() > 0.0, "{c}");
    }
    assert!(
        cases
            .iter()
            .any(|c| c["cpus"] == 4096 && c["tasks"] == 50_000),
        "{text}"
    );
    // The table, one case chosen by name; no footnote with --seconds.
    let text = assert_success(&schedlab([
        "bench",
        "--seconds",
        "0.5",
        "--case",
        "sched-idle-8",
    ]));
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].starts_with("sched-idle 8cpu"), "{text}");
    assert_eq!(
        rows[0][48..].split_whitespace().next(),
        Some("0.5"),
        "{text}"
    );
    // In-process: the same events, no memory figure.
    let a = assert_success(&schedlab([
        "bench",
        "--seconds",
        "0.5",
        "--case",
        "sched-idle-8",
        "--json",
    ]));
    let b = assert_success(&schedlab([
        "bench",
        "--seconds",
        "0.5",
        "--case",
        "sched-idle-8",
        "--json",
        "--in-process",
    ]));
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
    );
    assert_eq!(a["cases"][0]["events"], b["cases"][0]["events"]);
    assert!(b["cases"][0]["peak_rss_bytes"].is_null(), "{b}");
}

#[test]
fn bench_refuses_bad_seconds_and_unknown_cases() {
    for bad in ["0", "-1", "abc", "nan", "inf", "1e9"] {
        let arg = format!("--seconds={bad}");
        let err = assert_user_error(&["bench", &arg]);
        assert!(err.contains("--seconds"), "{err}");
        // --callgrind-from (with --child) names itself, not --seconds.
        let arg = format!("--callgrind-from={bad}");
        let err = assert_user_error(&["bench", "--child", "sched-idle-8", &arg]);
        assert!(
            err.contains("--callgrind-from") && !err.contains("--seconds"),
            "{err}"
        );
    }
    let err = assert_user_error(&["bench", "--case", "no-such-case"]);
    assert!(
        err.contains("no-such-case") && err.contains("periodic-4096"),
        "{err}"
    );
}

// --------------------------------------------- 6. constant latency note

#[test]
fn a_lone_periodic_task_gets_a_note_on_its_constant_latency() {
    let tmp = tempfile::tempdir().unwrap();
    let wl = tmp.path().join("lone.json");
    std::fs::write(
        &wl,
        r#"{ "tasks": { "lone": { "loop": -1, "run": 1000, "timer": { "ref": "unique", "period": 10000 } } },
             "global": { "duration": 1, "calibration": 100 } }"#,
    )
    .unwrap();
    let text = assert_success(&schedlab([
        "run",
        wl.to_str().unwrap(),
        "--machine",
        "a7-octa",
    ]));
    let note = text
        .lines()
        .find(|l| l.starts_with("note: lone: wakeup latency is"))
        .unwrap_or_else(|| panic!("no note:\n{text}"));
    for part in [
        "stddev 0",
        "no host noise",
        "idle state",
        "cluster-sleep, 700 us",
        "50 us timer slack",
    ] {
        assert!(note.contains(part), "{part:?} not in {note}");
    }
    // The figure is printed once, in the table.
    assert_eq!(text.matches("763.00").count(), 1, "{text}");
}

// --------------------------------------------------------------- 5. docs

#[test]
fn readme_has_the_install_line_and_its_figure_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo install --path crates/schedlab-cli"));
    let img = readme
        .split("](")
        .skip(1)
        .map(|s| &s[..s.find(')').unwrap()])
        .find(|p| p.ends_with(".svg") || p.ends_with(".png"))
        .expect("README shows a figure");
    assert!(root.join(img).is_file(), "{img} does not exist");
    assert!(readme.contains("Why is a lone periodic task's latency constant?"));
}

#[test]
fn misspelt_names_get_a_suggestion_and_minutes_are_a_unit() {
    let err = |args: &[&str]| {
        let r = schedlab(args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let e = String::from_utf8_lossy(&r.stderr).to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        e
    };
    let e = err(&["run", "hackbench:groups=1,loops=5", "--machine", "a7_octa"]);
    assert!(
        e.contains("unknown machine 'a7_octa' (did you mean a7-octa?)"),
        "{e}"
    );
    let e = err(&[
        "run",
        "hackbench:groups=1,loops=5",
        "--features",
        "NO_SCHED_IDEL_AS_IDLE",
    ]);
    assert!(e.contains("did you mean NO_SCHED_IDLE_AS_IDLE?"), "{e}");
    // Minutes parse (refused here only because the limit is lower).
    let e = err(&[
        "run",
        "hackbench:groups=1,loops=5",
        "--duration",
        "2m",
        "--max-duration",
        "1m",
    ]);
    assert!(!e.contains("unknown time unit"), "{e}");
    let e = err(&["run", "hackbench:groups=1,loops=5", "--duration", "2y"]);
    assert!(e.contains("unknown time unit 'y'"), "{e}");
}
