//! Kernel generations: every `--kernel` runs the rt-app corpus
//! under `--check`; summary.json records the kernel, its features and the
//! tunables in effect; `--sysctl` changes what the model reads; bad
//! `--kernel` / `--sysctl` / `global.sysctl` values are one line, exit 2.

use crate::common::{corpus_dir, corpus_files, describe, schedlab, schedlab_in};
use serde_json::Value;

const KERNELS: &[&str] = &[
    "5.4", "5.10", "5.15", "5.19", "6.1", "6.6", "6.12", "6.15", "6.18", "6.19", "tip",
];

#[test]
fn every_kernel_runs_the_rt_app_examples_under_check() {
    let mut problems = Vec::new();
    for k in KERNELS {
        for f in corpus_files() {
            let out = schedlab([
                "run",
                &f.to_string_lossy(),
                "--machine",
                "a7-octa",
                "--kernel",
                k,
                "--check",
                "--duration",
                "200ms",
                "--quiet",
            ]);
            if !out.status.success() || !out.stderr.is_empty() {
                problems.push(format!(
                    "{} on --kernel {k}:\n{}",
                    f.display(),
                    describe(&out)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

fn summary(args: &[&str]) -> Value {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut a: Vec<String> = vec![
        "run".into(),
        corpus_dir().join("periodic.json").to_string_lossy().into(),
        "--duration".into(),
        "300ms".into(),
        "--quiet".into(),
        "--out".into(),
        out.to_string_lossy().into(),
    ];
    a.extend(args.iter().map(|s| s.to_string()));
    let o = schedlab(&a);
    assert!(o.status.success(), "{}", describe(&o));
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn summary_records_kernel_features_and_tunables() {
    let s = summary(&["--kernel", "v5.4.0", "--sysctl", "nr_migrate=8"]);
    assert_eq!(s["kernel"], "5.4");
    assert_eq!(s["features"]["FAIR_CLASS"], "cfs");
    assert_eq!(s["features"]["SIS_UTIL"], false);
    assert_eq!(s["features"]["THROTTLE"], "legacy");
    let t = &s["tunables"];
    // vm-2cpu: log scaling factor 2.
    assert_eq!(t["latency_ns"], 12_000_000);
    assert_eq!(t["wakeup_granularity_ns"], 2_000_000);
    assert_eq!(t["nr_migrate"], 8);
    assert_eq!(t["kernel.sched_rt_runtime_us"], 950_000);
    let s = summary(&[]);
    assert_eq!(s["kernel"], "tip");
    assert_eq!(s["features"]["FAIR_CLASS"], "eevdf");
    assert_eq!(s["tunables"]["base_slice_ns"], 1_400_000);
    let s = summary(&[
        "--sysctl",
        "tunable_scaling=0",
        "--sysctl",
        "base_slice_ns=3000000",
    ]);
    assert_eq!(s["tunables"]["base_slice_ns"], 3_000_000);
    assert_eq!(s["tunables"]["latency_ns"], 6_000_000);
}

#[test]
fn the_class_and_tunables_change_the_run() {
    let tip = summary(&[]);
    let cfs = summary(&["--kernel", "5.4"]);
    assert_ne!(
        tip["tasks"], cfs["tasks"],
        "CFS and EEVDF gave the same run"
    );
    let a = summary(&["--sysctl", "base_slice_ns=100000"]);
    assert_ne!(tip["tasks"], a["tasks"], "base_slice_ns was not read");
    let c = summary(&["--kernel", "5.4", "--sysctl", "wakeup_granularity_ns=0"]);
    assert_ne!(
        cfs["tasks"], c["tasks"],
        "wakeup_granularity_ns was not read"
    );
    // The same values as the defaults give the same bytes of results.
    let b = summary(&["--sysctl", "base_slice_ns=1400000"]);
    assert_eq!(tip["tasks"], b["tasks"]);
}

#[test]
fn kernels_lists_every_release_and_the_changes() {
    let o = schedlab(["kernels"]);
    assert!(o.status.success(), "{}", describe(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    for k in KERNELS {
        assert!(
            text.contains(&format!("  {k:<5} fair class")),
            "{k} missing:\n{text}"
        );
    }
    for needle in [
        "FAIR_CLASS",
        "SIS_UTIL",
        "DELAY_DEQUEUE",
        "migration_cost_ns",
        "kernel.sched_rt_runtime_us",
        "imb_numa_nr",
        "find_idlest_group",
    ] {
        assert!(text.contains(needle), "{needle} missing");
    }
}

/// One-line error, exit 2, no --out left behind.
fn refused(args: &[&str], files: &[(&str, &str)], want: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    for (n, t) in files {
        std::fs::write(tmp.path().join(n), t).unwrap();
    }
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--out", "out"]);
    let o = schedlab_in(tmp.path(), &a);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", describe(&o));
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(err.starts_with("schedlab: error: "), "{err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: want {w:?} in {err}");
    }
    assert!(!tmp.path().join("out").exists(), "{args:?}: out written");
}

const OK: &str = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100}}"#;

#[test]
fn bad_kernel_and_sysctl_are_one_line_exit_2() {
    let f = [("ok.json", OK)];
    refused(
        &["ok.json", "--kernel", "4.19"],
        &f,
        &["--kernel", "4.19", "5.4"],
    );
    refused(&["ok.json", "--kernel", ""], &f, &["--kernel"]);
    refused(&["ok.json", "--kernel", "six"], &f, &["unknown release"]);
    refused(
        &["ok.json", "--sysctl", "bogus=1"],
        &f,
        &["--sysctl bogus=1", "unknown tunable"],
    );
    refused(
        &["ok.json", "--sysctl", "nr_migrate"],
        &f,
        &["expected NAME=VALUE"],
    );
    refused(
        &["ok.json", "--sysctl", "nr_migrate=-1"],
        &f,
        &["nr_migrate", "bad value"],
    );
    refused(
        &["ok.json", "--sysctl", "base_slice_ns=0"],
        &f,
        &["base_slice_ns", "100000"],
    );
    refused(
        &["ok.json", "--sysctl", "latency_ns=2000000000"],
        &f,
        &["latency_ns"],
    );
    refused(
        &["ok.json", "--sysctl", "tunable_scaling=3"],
        &f,
        &["tunable_scaling"],
    );
    refused(
        &["ok.json", "--sysctl", "kernel.sched_rt_period_us=0"],
        &f,
        &["sched_rt_period_us"],
    );
    refused(
        &["ok.json", "--sysctl", "kernel.sched_rt_runtime_us=1000001"],
        &f,
        &["sched_rt_runtime_us", "period"],
    );
    refused(
        &[
            "ok.json",
            "--sysctl",
            "kernel.sched_cfs_bandwidth_slice_us=0",
        ],
        &f,
        &["bandwidth_slice"],
    );
    refused(
        &["ok.json", "--features", "FAIR_CLASS=bfs"],
        &f,
        &["FAIR_CLASS", "eevdf, cfs"],
    );
    // In the workload: FILE:LINE:COL.
    let bad = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100, "sysctl": {"nr_migrate": "many"}}}"#;
    refused(
        &["bad.json"],
        &[("bad.json", bad)],
        &["bad.json:1:", "nr_migrate", "bad value"],
    );
    let bad = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100, "sysctl": {"sched_bogus": 1}}}"#;
    refused(
        &["bad.json"],
        &[("bad.json", bad)],
        &["bad.json:1:", "unknown tunable"],
    );
    let bad = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100, "sysctl": [1]}}"#;
    refused(
        &["bad.json"],
        &[("bad.json", bad)],
        &["bad.json:1:", "sysctl"],
    );
}

#[test]
fn workload_sysctl_applies_and_the_flag_wins() {
    let tmp = tempfile::tempdir().unwrap();
    let w = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100, "sysctl": {"kernel.sched_migration_cost_ns": 250000, "nr_migrate": "4"}}}"#;
    std::fs::write(tmp.path().join("w.json"), w).unwrap();
    let o = schedlab_in(
        tmp.path(),
        [
            "run",
            "w.json",
            "--sysctl",
            "nr_migrate=16",
            "--out",
            "out",
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    let s: Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("out/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(s["tunables"]["migration_cost_ns"], 250_000);
    assert_eq!(s["tunables"]["nr_migrate"], 16);
}

#[test]
fn compare_between_two_kernels() {
    let o = schedlab([
        "compare",
        &corpus_dir().join("periodic.json").to_string_lossy(),
        "--duration",
        "300ms",
        "--runs",
        "2",
        "--base-kernel",
        "6.1",
        "--new-kernel",
        "6.12",
    ]);
    assert!(o.status.success(), "{}", describe(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("base = --kernel 6.1"), "{text}");
    assert!(text.contains("new  = --kernel 6.12"), "{text}");
    let o = schedlab([
        "compare",
        &corpus_dir().join("periodic.json").to_string_lossy(),
        "--new-kernel",
        "3.0",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
}
