//! rt-app `fork`: threads started while the run goes on, from a pool made
//! at load time; the unused part of a pool never exists.

use crate::common::{rt_app_examples, run_file, run_json, summary_program_ns};
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
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn example9_forks_thread1_then_thread2() {
    // thread3 (loop 1) forks thread1 at the start of its phase1 and thread2
    // (instance 0, a pure template) 20 ms later, at the start of phase2
    // (after phase1's run 10 ms + sleep 10 ms). The run lasts 2 s.
    let examples = rt_app_examples("fork::example9_forks_thread1_then_thread2");
    let w = examples.join("tutorial/example9.json");
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

#[test]
fn a_forked_thread_forks_again() {
    // Two levels: root (2 passes) forks mid at the start of each pass; each
    // mid forks leaf at the start of each of the 3 iterations of its phase
    // p. Pools are made breadth first, so root's mids are threads 1 and 2
    // and the leaves of mid-1 are 3..5, those of mid-2 6..8.
    let (tmp, out) = run_json(
        r#"{"tasks": {
            "root": {"loop": 2, "fork": "mid", "run": 1000, "sleep": 10000},
            "mid": {"instance": 0, "loop": 1, "phases": {
                "p": {"loop": 3, "fork": "leaf", "run": 500, "sleep": 2000},
                "q": {"run": 100}}},
            "leaf": {"instance": 0, "loop": 1, "run": 2000}},
           "global": {"calibration": 100}}"#,
        "vm-2cpu",
        &["--check", "--duration", "200ms"],
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let mut n = names(&s);
    n.sort_by_key(|x| x.split('-').nth(1).unwrap().parse::<u32>().unwrap());
    assert_eq!(
        n,
        [
            "root-0",
            "mid-1-0001",
            "mid-2-0002",
            "leaf-3-0001",
            "leaf-4-0002",
            "leaf-5-0003",
            "leaf-6-0001",
            "leaf-7-0002",
            "leaf-8-0003",
        ]
    );
    let by_name = |name: &str| {
        s["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(by_name("root-0")["loops"], 2);
    for mid in ["mid-1-0001", "mid-2-0002"] {
        // phase p's 3 iterations and phase q's one.
        assert_eq!(by_name(mid)["loops"], 4, "{mid}");
        // Program time (runtime_ns also holds the scheduler work).
        assert_eq!(summary_program_ns(&by_name(mid)), 1_600_000, "{mid}");
    }
    for leaf in &n[3..] {
        assert_eq!(by_name(leaf)["loops"], 1, "{leaf}");
        assert_eq!(summary_program_ns(&by_name(leaf)), 2_000_000, "{leaf}");
    }
    // A leaf starts after the mid that forks it, which starts after root.
    let first_start = |name: &str| -> u64 {
        let text =
            std::fs::read_to_string(tmp.path().join("out").join(format!("rt-app-{name}.log")))
                .unwrap();
        let row = text.lines().nth(1).expect("a row");
        row.split_whitespace().nth(4).unwrap().parse().unwrap()
    };
    let root = first_start("root-0");
    let mid2 = first_start("mid-2-0002");
    assert!(mid2 >= root + 11_000, "{root} {mid2}");
    for leaf in ["leaf-6-0001", "leaf-7-0002", "leaf-8-0003"] {
        assert!(first_start(leaf) >= mid2, "{leaf}");
    }
    // The third leaf of mid-2 comes at the start of p's third iteration,
    // two (run 500 + sleep 2000) later.
    assert!(first_start("leaf-8-0003") >= mid2 + 5_000);
}
