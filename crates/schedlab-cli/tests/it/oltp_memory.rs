//! Bounded resources: an `oltp:` workload is sized before it is built
//! (each backend holds 32 pre-drawn transactions, ~34 KB, and the
//! simulator keeps a copy), so one the process cannot hold is refused at
//! once with one line and exit 2 instead of allocating until malloc
//! aborts. The address-space limit (`ulimit -v`) stands in for a
//! small machine: preflight.rs takes the lesser of it and MemAvailable.

use std::process::Command;

/// `schedlab run SPEC --duration 1ms --quiet --out DIR` under `ulimit -v KB`.
fn run_limited(kb: u64, spec: &str) -> (std::process::Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            r#"ulimit -v {kb}; exec "$0" run "$1" --duration 1ms --quiet --out "$2""#
        ))
        .arg(crate::common::BIN)
        .arg(spec)
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    (out, tmp)
}

#[test]
fn an_oltp_workload_past_the_memory_is_refused_before_it_is_built() {
    // 20 000 backends: ~0.7 GB as built, ~1.4 GB with the simulator's copy,
    // past a 1 GB address space.
    let (out, tmp) = run_limited(1_000_000, "oltp:workers=20000");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    for want in [
        "schedlab: error: oltp:workers=20000:",
        "GiB of memory",
        "pre-drawn transactions",
        "available",
    ] {
        assert!(lines[0].contains(want), "{want:?} not in {err}");
    }
    assert!(out.stdout.is_empty());
    assert!(!tmp.path().join("out").exists(), "nothing written");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "no stage left"
    );
}

#[test]
fn an_oltp_workload_that_fits_still_runs_under_the_same_limit() {
    let (out, tmp) = run_limited(1_000_000, "oltp:workers=200");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tmp.path().join("out/summary.json").is_file());
}
