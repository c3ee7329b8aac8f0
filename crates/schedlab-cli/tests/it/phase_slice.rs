//! A phase-level `dl-runtime` changes the running task's slice at the
//! start of the phase (rt-app's `sched_setattr` per phase).

use crate::common::run_json;

/// Longest stretch `comm` ran without a switch, among stretches that start
/// inside `[from, to)` seconds, from trace.txt's sched_switch lines.
fn longest_run(trace: &str, comm: &str, from: f64, to: f64) -> f64 {
    let mut on: Option<f64> = None;
    let mut best: f64 = 0.0;
    for line in trace.lines().filter(|l| l.contains("sched_switch:")) {
        let ts: f64 = line
            .split(": sched_switch:")
            .next()
            .and_then(|h| h.split_whitespace().last())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no timestamp: {line}"));
        if line.contains(&format!("prev_comm={comm} ")) {
            if let Some(start) = on.take() {
                if (from..to).contains(&start) {
                    best = best.max(ts - start);
                }
            }
        }
        if line.contains(&format!("next_comm={comm} ")) {
            on = Some(ts);
        }
    }
    best
}

#[test]
fn phase_dl_runtime_sets_the_slice_for_that_phase() {
    // a and b share CPU 0. b always asks for 50 ms slices; a uses the base
    // slice in p1 (so RUN_TO_PARITY protects either task only for the
    // shorter slice and they alternate every tick, 4 ms at HZ=250) and 50 ms
    // in p2 (so both run ~50 ms stretches, rounded up to the tick).
    let (_tmp, out) = run_json(
        r#"{"tasks": {
          "a": {"cpus": [0], "phases": {
             "p1": {"run": 200000},
             "p2": {"dl-runtime": 50000, "run": 200000}}},
          "b": {"cpus": [0], "dl-runtime": 50000, "run": 1000000}},
         "global": {"calibration": 100, "duration": 1}}"#,
        "vm-2cpu",
        &["--trace"],
    );
    let trace = std::fs::read_to_string(out.join("trace.txt")).unwrap();
    for comm in ["a-0", "b-1"] {
        let p1 = longest_run(&trace, comm, 0.0, 0.35);
        let p2 = longest_run(&trace, comm, 0.45, 0.75);
        assert!(
            (0.0035..=0.0045).contains(&p1),
            "{comm}: longest run in p1 {p1} s"
        );
        assert!(
            (0.050..=0.0545).contains(&p2),
            "{comm}: longest run in p2 {p2} s"
        );
    }
}
