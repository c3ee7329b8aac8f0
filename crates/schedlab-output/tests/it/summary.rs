use schedlab_core::stats::{CpuStats, SampleStats, TaskStats};
use schedlab_output::summary::*;
use serde_json::{json, Value};

use crate::read_data;

/// The contract's keys, in order (architecture.md section 5).
const TOP: &[&str] = &[
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
];
const MACHINE: &[&str] = &["name", "cpus"];
const TASK: &[&str] = &[
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
];
const LAT: &[&str] = &["n", "min", "max", "sum", "mean", "stddev"];
const CPU: &[&str] = &["cpu", "busy_ns", "idle_ns", "sched_overhead_ns"];
const GROUP: &[&str] = &["path", "cpu_stat"];
const CPU_STAT: &[&str] = &["usage_usec", "nr_periods", "nr_throttled", "throttled_usec"];
const PROFILE: &[&str] = &["task_ns", "idle_ns", "paths_ns"];
const PATHS: &[&str] = &[
    "context_switch",
    "wakeup",
    "balance",
    "balance_atomic",
    "newidle",
    "steal",
    "throttle",
    "available_idle_cpu",
    "sched_idle_cpu",
];

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn check_contract(v: &Value) {
    assert_eq!(keys(v), TOP);
    assert_eq!(keys(&v["machine"]), MACHINE);
    assert_eq!(keys(&v["tasks"][0]), TASK);
    assert_eq!(keys(&v["tasks"][0]["wakeup_latency_us"]), LAT);
    assert_eq!(keys(&v["cpus"][0]), CPU);
    assert_eq!(keys(&v["groups"][0]), GROUP);
    assert_eq!(keys(&v["groups"][0]["cpu_stat"]), CPU_STAT);
    assert_eq!(keys(&v["profile"]), PROFILE);
    assert_eq!(keys(&v["profile"]["paths_ns"]), PATHS);
}

fn sample() -> Summary {
    let mut features = serde_json::Map::new();
    // Deliberately not alphabetical: insertion order must survive.
    features.insert("STEAL".into(), json!(false));
    features.insert("SCHED_IDLE_AS_IDLE".into(), json!(true));
    features.insert("LB_SERIALIZE".into(), json!("balancer-only"));
    features.insert("THROTTLE".into(), json!("per-task"));
    let lat = SampleStats::of([63, 57, 58, 60]);
    let st = TaskStats {
        runtime_ns: 4_000_000_000,
        sched_work_ns: 1_000_000,
        wait_ns: 12_345,
        switches: 1245,
        preempted: 3,
        migrations: 7,
        wakeups: 1244,
        loops: 1245,
    };
    Summary {
        schedlab_version: "0.1.0".into(),
        machine: MachineSummary {
            name: "a7-octa".into(),
            cpus: 8,
            ..Default::default()
        },
        features,
        seed: 1,
        hz: 250,
        duration_ns: 5_000_000_000,
        tasks: vec![TaskSummary::from_stats(
            "cfs_thread-0",
            1001,
            "SCHED_NORMAL",
            0,
            "/",
            &st,
            &lat,
        )],
        cpus: vec![CpuSummary::from_stats(
            0,
            &CpuStats {
                busy_ns: 1,
                idle_ns: 2,
                sched_overhead_ns: 3,
                ..Default::default()
            },
        )],
        groups: vec![GroupSummary {
            path: "/tg1".into(),
            ..Default::default()
        }],
        profile: ProfileSummary::default(),
        extra: Default::default(),
    }
}

#[test]
fn written_summary_has_exactly_the_contract_field_names() {
    let text = sample().to_json_string();
    let v: Value = serde_json::from_str(&text).unwrap();
    check_contract(&v);
    assert_eq!(
        keys(&v["features"]),
        ["STEAL", "SCHED_IDLE_AS_IDLE", "LB_SERIALIZE", "THROTTLE"]
    );
    assert_eq!(v["tasks"][0]["wakeup_latency_us"]["mean"], json!(59.5));
    assert_eq!(v["tasks"][0]["wakeup_latency_us"]["sum"], json!(238));
}

#[test]
fn contract_example_reads_and_rewrites_to_the_same_json() {
    let text = read_data("summary_contract.json");
    let want: Value = serde_json::from_str(&text).unwrap();
    check_contract(&want);
    let s = Summary::from_json_str(&text).unwrap();
    assert!(s.extra.is_empty() && s.tasks[0].extra.is_empty());
    let again: Value = serde_json::from_str(&s.to_json_string()).unwrap();
    assert_eq!(again, want);
    // Float zeros stay floats, as in the contract.
    assert!(s.to_json_string().contains("\"mean\": 0.0"));
}

#[test]
fn pretty_two_space_json_with_trailing_newline_and_stable_bytes() {
    let a = sample().to_json_string();
    assert!(a.ends_with("}\n") && !a.ends_with("\n\n"));
    assert!(a.starts_with("{\n  \"schedlab_version\": \"0.1.0\",\n  \"machine\": {\n    \"name\""));
    assert_eq!(a, sample().to_json_string());
    let mut w = Vec::new();
    sample().write_to(&mut w).unwrap();
    assert_eq!(w, a.as_bytes());
    // Reading back and writing again is byte-identical (floats included).
    assert_eq!(Summary::from_json_str(&a).unwrap().to_json_string(), a);
}

#[test]
fn extra_fields_follow_the_contract_and_survive_a_round_trip() {
    let mut s = sample();
    s.extra.insert("schedstat_version".into(), json!(17));
    s.tasks[0].extra.insert("preempted".into(), json!(3));
    s.profile.paths_ns.extra.insert("pick".into(), json!(99));
    let text = s.to_json_string();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(keys(&v).last(), Some(&"schedstat_version"));
    assert_eq!(keys(&v["tasks"][0]).last(), Some(&"preempted"));
    assert_eq!(keys(&v["profile"]["paths_ns"]).last(), Some(&"pick"));
    assert_eq!(Summary::from_json_str(&text).unwrap(), s);
}

#[test]
fn non_finite_latency_floats_become_zero() {
    let bad = SampleStats {
        mean: f64::NAN,
        stddev: f64::INFINITY,
        ..Default::default()
    };
    let l = WakeupLatencyUs::from_stats(&bad);
    assert_eq!((l.mean, l.stddev), (0.0, 0.0));
}
