//! rt-app `fork`: threads started while the run goes on, from a pool made
//! at load time; the unused part of a pool never exists.

use crate::common::{fixtures_dir, run_file, run_json};
use serde_json::Value;

fn run(workload: &std::path::Path, machine: &str) -> (tempfile::TempDir, Value) {
    let (tmp, out) = run_file(workload, machine, &["--check"]);
    let s =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (tmp, s)
}

fn names(s: &Value) -> Vec<String> {
    s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn example9_forks_thread1_then_thread2() {
    // thread3 (loop 1) forks thread1 at the start of its phase1 and thread2
    // (instance 0, a pure template) 20 ms later, at the start of phase2
    // (after phase1's run 10 ms + sleep 10 ms). The run lasts 2 s.
    let w = fixtures_dir().join("rt-app-examples/tutorial/example9.json");
    for machine in ["a7-octa", "vm-2cpu"] {
        let (tmp, s) = run(&w, machine);
        assert_eq!(
            names(&s),
            ["thread1-0", "thread3-1", "thread1-2-0001", "thread2-3-0001"],
            "{machine}"
        );
        let out = tmp.path().join("out");
        let first_start = |f: &str| -> u64 {
            let text = std::fs::read_to_string(out.join(f)).unwrap();
            let row = text.lines().nth(1).expect("a row");
            row.split_whitespace().nth(4).unwrap().parse().unwrap()
        };
        let parent = first_start("rt-app1-thread3-1.log");
        let child1 = first_start("rt-app1-thread1-2-0001.log");
        let child2 = first_start("rt-app1-thread2-3-0001.log");
        assert!(child1 >= parent && child2 >= parent + 20_000, "{machine}");
        if machine == "a7-octa" {
            // Free CPUs: forked at once and 20 ms later; the child starts on
            // an idle CPU once it has left its idle state (up to 0.75 ms),
            // and the second fork comes after thread3's own wakeup from its
            // sleep, which pays the same.
            assert!(child1 < parent + 1_000, "{parent} {child1}");
            assert!(child2 < parent + 22_000, "{parent} {child2}");
        }
        // thread2's copy: run 20 ms + sleep 20 ms per loop until the end.
        let loops = s["tasks"][3]["loops"].as_u64().unwrap();
        // 2 s / 40 ms = 50 at most; on vm-2cpu three threads at ~50 % duty
        // share two CPUs and lose a little to waiting.
        let min = if machine == "a7-octa" { 47 } else { 40 };
        assert!((min..=49).contains(&loops), "{machine}: {loops}");
        assert_eq!(s["tasks"][1]["loops"], 2, "{machine}: thread3's two phases");
    }
}

#[test]
fn only_forks_that_happened_exist() {
    // p forks q every 5 ms for ever (a pool of 1024); in 52 ms it forks 11
    // times (at 0, 5, ..., 50 ms), and only those 11 appear.
    let (tmp, out) = run_json(
        r#"{"tasks": {
            "p": {"fork": "q", "sleep": 5000},
            "q": {"instance": 0, "loop": 1, "run": 1000}},
           "global": {"calibration": 100}}"#,
        "vm-2cpu",
        &["--check", "--duration", "52ms"],
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let n = names(&s);
    assert_eq!(n.len(), 12, "{n:?}");
    assert_eq!(n[1], "q-1-0001");
    assert_eq!(n[11], "q-11-0011");
    let logs = std::fs::read_dir(tmp.path().join("out"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".log")
        })
        .count();
    assert_eq!(logs, 12);
    for t in &s["tasks"].as_array().unwrap()[1..] {
        assert_eq!(t["loops"], 1, "{t}");
    }
}
