//! Reproducibility: the same workload, machine, options and seed give
//! byte-identical output directories; another seed gives other numbers.

use crate::common::{assert_success, example_workload, list_files, schedlab};
use serde_json::Value;
use std::path::Path;

fn run_into(out: &Path, seed: u64, extra: &[&str]) {
    let mut args: Vec<String> = vec![
        "run".into(),
        example_workload().to_string_lossy().into_owned(),
        "--machine".into(),
        "a7-octa".into(),
        "--duration".into(),
        "2s".into(),
        "--seed".into(),
        seed.to_string(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_success(&schedlab(&args));
}

fn assert_same_dirs(a: &Path, b: &Path) {
    let fa = list_files(a);
    let fb = list_files(b);
    assert_eq!(fa, fb, "the two runs wrote different file sets");
    assert!(!fa.is_empty());
    for f in &fa {
        let x = std::fs::read(a.join(f)).unwrap();
        let y = std::fs::read(b.join(f)).unwrap();
        if x != y {
            let at = x
                .iter()
                .zip(&y)
                .position(|(p, q)| p != q)
                .unwrap_or(x.len().min(y.len()));
            panic!(
                "{} differs between identical runs (lengths {} / {}, first difference at byte {at})",
                f.display(),
                x.len(),
                y.len()
            );
        }
    }
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_into(&a, 7, &[]);
    run_into(&b, 7, &[]);
    assert_same_dirs(&a, &b);
}

#[test]
fn same_seed_gives_byte_identical_outputs_with_trace() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_into(&a, 3, &["--trace", "--preempt", "lazy", "--hz", "1000"]);
    run_into(&b, 3, &["--trace", "--preempt", "lazy", "--hz", "1000"]);
    assert!(a.join("trace.txt").is_file(), "--trace wrote no trace.txt");
    assert_same_dirs(&a, &b);
}

/// summary.json without the fields that merely echo the options.
fn figures(dir: &Path) -> Value {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("seed");
    v
}

#[test]
fn another_seed_gives_other_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_into(&a, 1, &[]);
    run_into(&b, 2, &[]);
    let (fa, fb) = (figures(&a), figures(&b));
    assert_ne!(
        fa, fb,
        "seeds 1 and 2 give the same summary.json apart from the seed field"
    );
    // The seed's boot-to-boot variation shows in the latency samples.
    let lat = |v: &Value| -> Vec<Value> {
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["wakeup_latency_us"].clone())
            .collect()
    };
    assert_ne!(
        lat(&fa),
        lat(&fb),
        "wakeup latencies do not depend on the seed"
    );
}

/// Synchronisation events and forks (mutex hand-offs, condition wake-ups,
/// fork pools) and task groups under quota keep runs byte-identical too,
/// traces included (the corpus's sync, fork and groups workloads).
#[test]
fn sync_and_fork_workloads_are_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let examples = crate::common::corpus_dir();
    for (i, f) in ["sync.json", "fork.json", "groups.json"].iter().enumerate() {
        let mut dirs = Vec::new();
        for k in 0..2 {
            let out = tmp.path().join(format!("{i}-{k}"));
            assert_success(&schedlab([
                "run",
                &examples.join(f).to_string_lossy(),
                "--machine",
                "vm-2cpu",
                "--duration",
                "500ms",
                "--seed",
                "3",
                "--trace",
                "--quiet",
                "--out",
                &out.to_string_lossy(),
            ]));
            dirs.push(out);
        }
        assert_same_dirs(&dirs[0], &dirs[1]);
    }
}
