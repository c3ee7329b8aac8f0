//! The project's own rt-app corpus (`examples/rt-app/*.json`; which keys
//! and events it covers is checked in `schedlab-workload/tests/corpus.rs`):
//! every file runs under `--check` on the small presets, quietly, and the
//! fork example makes exactly the threads its header promises.

use crate::common::{corpus_dir, corpus_files, describe, run_file, schedlab};
use serde_json::Value;

#[test]
fn every_corpus_file_runs_under_check() {
    let mut problems = Vec::new();
    for f in corpus_files() {
        for machine in ["vm-2cpu", "a7-octa"] {
            let out = schedlab([
                "run",
                &f.to_string_lossy(),
                "--machine",
                machine,
                "--check",
                "--duration",
                "200ms",
                "--quiet",
            ]);
            if !out.status.success() || !out.stderr.is_empty() {
                problems.push(format!("{} on {machine}:\n{}", f.display(), describe(&out)));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn corpus_fork_makes_three_workers_and_six_helpers() {
    let (tmp, out) = run_file(&corpus_dir().join("fork.json"), "vm-2cpu", &["--check"]);
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let names: Vec<&str> = s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    assert_eq!(
        (count("launcher-"), count("worker-"), count("helper-")),
        (1, 3, 6),
        "{names:?}"
    );
    // Every helper finishes its 4 loops, every worker its 2.
    for t in s["tasks"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let want = match name.split('-').next().unwrap() {
            "worker" => 2,
            "helper" => 4,
            _ => continue,
        };
        assert_eq!(t["loops"], want, "{name}");
    }
    drop(tmp);
}
