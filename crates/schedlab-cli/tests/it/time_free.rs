//! Loops of rt-app events alone, which cost no time in the workload's own
//! terms, still advance simulated time. Every rt-app event
//! stands for calls that cost CPU time (`sched/syscall_cost.rs`), so a
//! `loop: -1` task made only of them advances simulated time like a real
//! one: the run ends, and the rows it keeps are bounded by the run length
//! over the per-iteration cost (memory bounded). Each case runs in a
//! process limited to 1 GB of address space and 30 s.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `json` for 1 ms into a fresh --out; returns the number of rows of
/// thread `log` (its rt-app log, header excluded).
fn run_bounded(json: &str, log: &str) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("w.json");
    std::fs::write(&f, json).unwrap();
    let out = tmp.path().join("out");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1000000; exec "$0" run "$1" --duration 1ms --quiet --check --out "$2""#)
        .arg(crate::common::BIN)
        .arg(&f)
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "{json}: still running after 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{json}: {status:?} {err}");
    let text = std::fs::read_to_string(out.join(format!("rt-app-{log}.log"))).unwrap();
    text.lines().filter(|l| !l.starts_with('#')).count()
}

/// On vm-2cpu (2 µs context switch: the host figures unscaled) one
/// iteration costs at least the given ns, so 1 ms holds at most
/// 1e6 / ns rows; and at least one iteration completes.
fn check(json: &str, log: &str, min_iter_ns: usize) {
    let rows = run_bounded(json, log);
    assert!(rows >= 1, "{json}: no iteration completed");
    assert!(
        rows <= 1_000_000 / min_iter_ns,
        "{json}: {rows} rows in 1 ms"
    );
}

#[test]
fn resume_only_loop_advances_time() {
    // lock + broadcast + unlock: 3 + 2 + 3 ns.
    check(
        r#"{"tasks": {"t": {"loop": -1, "resume": "x"}}, "global": {"calibration": 100}}"#,
        "t-0",
        8,
    );
}

#[test]
fn sem_post_only_loop_advances_time() {
    check(
        r#"{"tasks": {"t": {"loop": -1, "sem_post": "s"}}, "global": {"calibration": 100}}"#,
        "t-0",
        10,
    );
}

#[test]
fn signal_only_loop_advances_time() {
    check(
        r#"{"tasks": {"t": {"loop": -1, "signal": "c"}}, "global": {"calibration": 100}}"#,
        "t-0",
        2,
    );
}

#[test]
fn lock_unlock_loop_advances_time() {
    check(
        r#"{"resources": {"m": {"type": "mutex"}}, "tasks": {"t": {"loop": -1, "lock": "m", "unlock": "m"}}, "global": {"calibration": 100}}"#,
        "t-0",
        6,
    );
}

#[test]
fn fifo_iorun_mem_resume_loop_advances_time() {
    check(
        r#"{"tasks": {"t": {"loop": -1, "policy": "SCHED_FIFO", "priority": 10, "iorun": 1, "mem": 1, "resume": "x"}}, "global": {"calibration": 100}}"#,
        "t-0",
        8,
    );
}

#[test]
fn yield_only_loop_advances_time() {
    // The syscall (213 ns) plus the context switch schedule() charges.
    check(
        r#"{"tasks": {"t": {"loop": -1, "yield": 0}}, "global": {"calibration": 100}}"#,
        "t-0",
        213,
    );
}
