//! Task-group input through the binary: rt-app `taskgroup` / `taskgroups`,
//! hackbench's `cgroup=`, and `--cgroup PATH:FILE=VALUE` on `run` and
//! `compare`. Bad input ends like every user error (bad_input.rs): one line
//! `schedlab: error: ...`, exit 2, nothing on stdout, nothing written.
//!
//! The accepted cases here only need the workload side: the threads'
//! groups are checked in summary.json's `group` field, which the core
//! copies from the workload.

use crate::common::{assert_success, describe, entries, schedlab_in};
use std::path::Path;

/// A finite, calibrated workload with one configured group (`/capped`,
/// quota 20 ms per 100 ms, burst 10 ms) that its task runs in.
const CAPPED: &str = r#"{
  "tasks": {"t": {"run": 100, "loop": 3, "taskgroup": "/capped"}},
  "taskgroups": {"/capped": {"cpu.max": "20000 100000", "cpu.max.burst": 10000}},
  "global": {"calibration": 100}
}"#;

/// Runs `schedlab CMD WORKLOAD ARGS... --out out` (`--out` only for `run`)
/// in a fresh directory holding `w.json` = `json`, and checks the user
/// error: exit 2, exactly one line naming every `want`, nothing written.
fn refused(cmd: &str, json: &str, workload: &str, args: &[&str], want: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("w.json"), json).unwrap();
    let before = entries(tmp.path());
    let mut all = vec![cmd.to_string(), workload.to_string()];
    all.extend(args.iter().map(|s| s.to_string()));
    if cmd == "run" {
        all.extend(["--out".to_string(), "out".to_string()]);
    } else {
        all.extend([
            "--new".to_string(),
            String::new(),
            "--runs".into(),
            "1".into(),
        ]);
    }
    let out = schedlab_in(tmp.path(), &all);
    let ctx = format!("args {all:?}\n{}", describe(&out));
    assert_eq!(out.status.code(), Some(2), "{ctx}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{ctx}");
    assert!(lines[0].starts_with("schedlab: error: "), "{ctx}");
    for w in want {
        assert!(lines[0].contains(w), "message lacks {w:?}: {ctx}");
    }
    assert!(out.stdout.is_empty(), "{ctx}");
    assert_eq!(entries(tmp.path()), before, "something was written: {ctx}");
}

/// A workload file whose `taskgroups` object is `groups`.
fn with_groups(groups: &str) -> String {
    format!(
        "{{\"tasks\": {{\"t\": {{\"run\": 100, \"loop\": 3}}}},\n\"taskgroups\": {groups},\n\"global\": {{\"calibration\": 100}}}}"
    )
}

#[test]
fn bad_taskgroups_in_the_workload_file() {
    for (groups, want) in [
        (
            r#"{"/c": {"cpu.max": "999 100000"}}"#,
            &[
                "w.json:2:",
                "key \"cpu.max\"",
                "quota 999 µs is below",
                "1000 µs",
            ][..],
        ),
        (
            r#"{"/c": {"cpu.max": "20000 1000001"}}"#,
            &[
                "w.json:2:",
                "key \"cpu.max\"",
                "period 1000001 µs",
                "1 ms to 1 s",
            ],
        ),
        (
            r#"{"/c": {"cpu.cfs_period_us": 2000000}}"#,
            &["w.json:2:", "key \"cpu.cfs_period_us\"", "out of range"],
        ),
        (
            r#"{"/c": {"cpu.weight": -100}}"#,
            &["w.json:2:", "key \"cpu.weight\"", "-100 is negative"],
        ),
        (
            r#"{"/c": {"cpu.max.burst": "-5"}}"#,
            &["w.json:2:", "key \"cpu.max.burst\"", "negative"],
        ),
        (
            r#"{"/c": {"cpu.cfs_quota_us": -7}}"#,
            &["w.json:2:", "write -1 for no limit"],
        ),
        (
            r#"{"/c": {"cpu.quota": 5000}}"#,
            &[
                "w.json:2:",
                "key \"cpu.quota\"",
                "unknown cpu controller file",
            ],
        ),
        (
            r#"{"c": {"cpu.weight": 50}}"#,
            &["w.json:2:", "\"c\" must start with '/'"],
        ),
        (
            r#"{"/c": {"cpu.max": "20000 100000", "cpu.max.burst": 20001}}"#,
            &[
                "w.json:2:",
                "cpu.max.burst 20001 µs is more than the quota 20000 µs",
            ],
        ),
        (
            r#"{"/": {"cpu.weight": 50}}"#,
            &[
                "w.json:2:",
                "key \"/\"",
                "root group",
                "cannot be configured",
            ],
        ),
        (
            r#"{"/c": {"cpu.idle": 2}}"#,
            &["w.json:2:", "key \"cpu.idle\"", "not 0 or 1"],
        ),
    ] {
        refused("run", &with_groups(groups), "w.json", &[], want);
    }
}

#[test]
fn bad_taskgroup_paths_in_the_workload_file() {
    for (path, want) in [
        ("tg1", "must start with '/'"),
        ("/tg1/", "must not end with '/'"),
        ("/tg1//x", "empty component"),
        ("/tg1/..", "'..'"),
    ] {
        let json = format!(
            "{{\"tasks\": {{\"t\": {{\"run\": 100, \"loop\": 3, \"taskgroup\": \"{path}\"}}}}, \"global\": {{\"calibration\": 100}}}}"
        );
        refused(
            "run",
            &json,
            "w.json",
            &[],
            &["w.json:1:", "key \"taskgroup\"", want],
        );
    }
}

#[test]
fn bad_cgroup_flags() {
    for (flag, want) in [
        (
            "/capped:cpu.max=500,100000",
            &["--cgroup", "\"/capped\"", "quota 500 µs is below"][..],
        ),
        (
            "/capped:cpu.max=20000,2000000",
            &["--cgroup", "period 2000000 µs"],
        ),
        ("/capped:cpu.max=max,999", &["--cgroup", "period 999 µs"]),
        (
            "/capped:cpu.weight=-1",
            &["--cgroup", "cpu.weight", "-1 is negative"],
        ),
        (
            "/capped:cpu.weight=0",
            &["--cgroup", "cpu.weight", "1..=10000"],
        ),
        (
            "/capped:cpu.shares=1",
            &["--cgroup", "cpu.shares", "2..=262144"],
        ),
        ("/capped:cpu.weight.nice=20", &["--cgroup", "-20..=19"]),
        ("/capped:cpu.max.burst=-1", &["--cgroup", "negative"]),
        (
            "/capped:cpu.max=abc",
            &["--cgroup", "not a non-negative integer"],
        ),
        (
            "/capped:cpu.wieght=50",
            &["--cgroup", "cpu.wieght", "unknown cpu controller file"],
        ),
        (
            "capped:cpu.weight=50",
            &["--cgroup capped:cpu.weight=50", "must start with '/'"],
        ),
        ("/:cpu.weight=50", &["--cgroup", "root group"]),
        ("/capped", &["--cgroup /capped", "sets nothing"]),
        ("/capped:cpu.max", &["--cgroup", "not FILE=VALUE"]),
        // The file's burst is 10 ms: a 5 ms quota alone leaves burst > quota.
        (
            "/capped:cpu.max=5000",
            &[
                "--cgroup",
                "cpu.max.burst 10000 µs is more than the quota 5000 µs",
            ],
        ),
        (
            "/other:cpu.max=5000:cpu.max.burst=6000",
            &["--cgroup", "\"/other\"", "burst"],
        ),
    ] {
        refused("run", CAPPED, "w.json", &["--cgroup", flag], want);
    }
}

#[test]
fn bad_hackbench_cgroup() {
    for (spec, want) in [
        (
            "hackbench:groups=1,loops=1,cgroup=hb",
            "must start with '/'",
        ),
        ("hackbench:groups=1,loops=1,cgroup=/hb/%d", "only %g"),
        (
            "hackbench:groups=1,loops=1,cgroup=/hb/",
            "must not end with '/'",
        ),
        ("oltp:workers=1,cgroup=/a b", "' '"),
        (
            "hackbench:instances=3,groups=1,loops=1,cgroup=/a;/b",
            "2 paths separated by ';' for instances=3",
        ),
        (
            "hackbench:instances=2,groups=1,loops=1,cgroup=/a;/b/%x",
            "and %i, the instance number",
        ),
    ] {
        refused("run", CAPPED, spec, &[], &["key 'cgroup'", want]);
    }
}

#[test]
fn compare_checks_cgroup_flags_too() {
    refused(
        "compare",
        CAPPED,
        "w.json",
        &["--cgroup", "/capped:cpu.max=500"],
        &["--cgroup", "quota 500 µs is below"],
    );
}

/// summary.json's tasks as (name, group).
fn task_groups(out: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["group"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn good_cgroup_input_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("w.json"), CAPPED).unwrap();
    // Overrides on top of the file, a group with no task, v1 names.
    let out = schedlab_in(
        tmp.path(),
        [
            "run",
            "w.json",
            "--out",
            "o1",
            "--quiet",
            "--cgroup",
            "/capped:cpu.max=30000,50000:cpu.weight=200",
            "--cgroup",
            "/empty/leaf:cpu.idle=1:cpu.cfs_quota_us=-1",
        ],
    );
    assert_success(&out);
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    assert_eq!(
        task_groups(&tmp.path().join("o1")),
        [("t-0".to_string(), "/capped".to_string())]
    );
    // hackbench: each hackbench group in its own leaf.
    let out = schedlab_in(
        tmp.path(),
        [
            "run",
            "hackbench:groups=2,fds=1,loops=2,cgroup=/l1/l2/g%g",
            "--out",
            "o2",
            "--quiet",
            "--cgroup",
            "/l1:cpu.max=50000,100000",
        ],
    );
    assert_success(&out);
    let mut groups = task_groups(&tmp.path().join("o2"));
    groups.sort();
    let want: Vec<(String, String)> = [
        ("hb-r0-0", "/l1/l2/g0"),
        ("hb-r1-0", "/l1/l2/g1"),
        ("hb-s0-0", "/l1/l2/g0"),
        ("hb-s1-0", "/l1/l2/g1"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(groups, want);
}
