//! CPU shares between always-runnable tasks on one CPU follow the fair
//! class's weights (nice 0 = 1024, nice 5 = 335, SCHED_IDLE = 3). Library
//! level: the workload is built by hand, as `schedlab bench` does.

use crate::common::{run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Policy, TaskSpec, Workload};
use schedlab_core::time::NSEC_PER_SEC;
use schedlab_core::{Sim, SimConfig};

/// Always runnable: one very long Run op, looped for ever.
fn hog(name: &str, index: u32, policy: Policy, nice: i32) -> TaskSpec {
    let mut t = task(name, index, policy, nice, vec![run_op(100 * NSEC_PER_SEC)]);
    t.cpus = Some(vec![0]);
    t
}

/// Runs `tasks` pinned to CPU 0 of vm-2cpu for `secs`; returns each task's
/// share (percent) of CPU 0's busy time.
fn shares(tasks: Vec<TaskSpec>, secs: u64, seed: u64) -> Vec<f64> {
    let w = Workload {
        tasks,
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let cfg = SimConfig {
        seed,
        duration_ns: Some(secs * NSEC_PER_SEC),
        check: false,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let busy0 = sim.acct.cpu_stats[0].busy_ns;
    assert_eq!(
        sim.acct.cpu_stats[1].busy_ns, 0,
        "a task pinned to CPU 0 ran on CPU 1"
    );
    // The tasks' program time; runtime_ns also holds the scheduler work
    // charged to them, which the CPU counts as overhead, not busy time.
    let runtimes: Vec<u64> = sim
        .sched
        .tasks
        .iter()
        .map(|t| t.stats.program_ns())
        .collect();
    assert_eq!(
        runtimes.iter().sum::<u64>(),
        busy0,
        "task time vs CPU 0 busy time"
    );
    // CPU 0 is never idle once the tasks have started.
    let window = res.end_ns - sim.t_start;
    assert!(
        busy0 as f64 >= 0.98 * window as f64,
        "CPU 0 busy {busy0} ns of a {window} ns run with runnable tasks"
    );
    runtimes
        .iter()
        .map(|&r| 100.0 * r as f64 / busy0 as f64)
        .collect()
}

fn expected(weights: &[u64]) -> Vec<f64> {
    let total: u64 = weights.iter().sum();
    weights
        .iter()
        .map(|&w| 100.0 * w as f64 / total as f64)
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], tol_pp: f64, what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol_pp,
            "{what}: task {i} got {g:.3}% of CPU 0, expected {w:.3}% ± {tol_pp} (all: {got:.3?} vs {want:.3?})"
        );
    }
}

#[test]
fn nice0_nice5_sched_idle_share_by_weight() {
    let got = shares(
        vec![
            hog("nice0-0", 0, Policy::Normal, 0),
            hog("nice5-1", 1, Policy::Normal, 5),
            hog("idle-2", 2, Policy::Idle, 0),
        ],
        10,
        1,
    );
    assert_close(&got, &expected(&[1024, 335, 3]), 2.0, "1024:335:3");
}

#[test]
fn two_nice0_tasks_split_evenly() {
    for seed in [1, 2] {
        let got = shares(
            vec![
                hog("a-0", 0, Policy::Normal, 0),
                hog("b-1", 1, Policy::Normal, 0),
            ],
            10,
            seed,
        );
        assert_close(&got, &[50.0, 50.0], 1.0, &format!("50/50, seed {seed}"));
    }
}

#[test]
fn sched_batch_weighs_like_normal_and_idle_gets_almost_nothing() {
    let got = shares(
        vec![
            hog("normal-0", 0, Policy::Normal, 0),
            hog("batch-1", 1, Policy::Batch, 0),
            hog("idle-2", 2, Policy::Idle, 0),
            hog("idle-3", 3, Policy::Idle, 19),
        ],
        5,
        3,
    );
    // SCHED_IDLE's weight is 3 whatever its nice value.
    assert_close(&got, &expected(&[1024, 1024, 3, 3]), 2.0, "1024:1024:3:3");
}
