//! `schedlab bench`: the performance suite. Each case is a fixed workload on
//! a preset; the figures are events per wall second and simulated seconds
//! per wall second. Targets are tracked in BENCHMARKS.md, never asserted.

use crate::user;
use anyhow::Result;
use clap::Args;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy, TaskSpec, TimerRef, TimerSpec, Workload};
use schedlab_core::time::{NSEC_PER_SEC, NSEC_PER_USEC};
use schedlab_core::SimConfig;
use schedlab_output::results::simulate;
use std::process::ExitCode;
use std::time::Instant;

/// `schedlab bench` arguments.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Simulated seconds of every case. Without it the small cases (8 and
    /// 160 CPUs) run 10 s and the large ones (384 and 512 CPUs, several
    /// wall seconds per simulated second) run 1 s.
    #[arg(long)]
    pub seconds: Option<u64>,
}

/// `n` periodic threads (run `run_us` every `period_us`, unique timers) plus
/// `idle` SCHED_IDLE threads looping on `idle_run_us` runs: the shape of the
/// SCHED_IDLE rt-app experiment, scaled.
pub fn periodic(n: u32, run_us: u64, period_us: u64, idle: u32, idle_run_us: u64) -> Workload {
    let mut w = Workload {
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    for i in 0..n + idle {
        let is_idle = i >= n;
        let name = if is_idle {
            format!("idle_thread-{i}")
        } else {
            format!("cfs_thread-{i}")
        };
        let mut ops = vec![Op::Run {
            work_ns: if is_idle { idle_run_us } else { run_us } * NSEC_PER_USEC,
            config_us: if is_idle { idle_run_us } else { run_us },
            perf: 0,
        }];
        if !is_idle {
            w.timers.push(TimerSpec {
                name: format!("unique@{name}"),
                absolute: false,
            });
            ops.push(Op::Timer {
                timer: TimerRef(w.timers.len() as u32 - 1),
                period_ns: period_us * NSEC_PER_USEC,
            });
        }
        let policy = if is_idle {
            Policy::Idle
        } else {
            Policy::Normal
        };
        w.tasks.push(TaskSpec::looping(name, i, policy, ops));
    }
    w
}

/// `schedlab bench`.
pub fn run(a: &BenchArgs) -> Result<ExitCode> {
    let oltp = |m: &str| {
        let n = preset(m).expect("preset exists").nr_cpus();
        schedlab_workload::generators::oltp("oltp:", "", n)
            .expect("default oltp")
            .workload
    };
    // hackbench in a 3-level hierarchy with quotas on every level (the
    // bandwidth-hierarchy experiment's shape), looping for the whole run.
    let capped_hackbench = {
        let mut w = schedlab_workload::generators::hackbench(
            "hackbench:",
            "groups=16,loops=1000000,mode=process,ipc=pipe,cgroup=/hb/l2/g%g",
        )
        .expect("hackbench spec")
        .workload;
        let mut args = vec![
            "/hb:cpu.max=480000,20000".to_string(),
            "/hb/l2:cpu.max=320000,20000".into(),
        ];
        args.extend((0..16).map(|g| format!("/hb/l2/g{g}:cpu.max=30000,20000")));
        let args: Vec<_> = args
            .iter()
            .map(|a| schedlab_workload::cgroup::parse_arg(a).expect("cgroup arg"))
            .collect();
        schedlab_workload::cgroup::apply_overrides(&mut w, &args).expect("cgroup settings");
        w
    };
    // (name, machine, workload, simulated seconds)
    if a.seconds == Some(0) {
        return Err(user("--seconds: must be greater than zero"));
    }
    let small = a.seconds.unwrap_or(10);
    let big = a.seconds.unwrap_or(1);
    let cases: Vec<(&str, &str, Workload, u64)> = vec![
        (
            "sched-idle 8cpu: 8 periodic + 5 SCHED_IDLE",
            "a7-octa",
            periodic(8, 5333, 7777, 5, 3000),
            small,
        ),
        (
            "periodic 160cpu: 320 periodic + 40 SCHED_IDLE",
            "icx-2s-80c-ht",
            periodic(320, 2000, 5000, 40, 3000),
            small,
        ),
        (
            "oltp 384cpu gnr-2s-snc3 (defaults)",
            "gnr-2s-snc3",
            oltp("gnr-2s-snc3"),
            big,
        ),
        (
            "oltp 512cpu epyc-2s-256c-smt (defaults)",
            "epyc-2s-256c-smt",
            oltp("epyc-2s-256c-smt"),
            big,
        ),
        (
            "hackbench 512cpu, 3-level cgroups with cpu.max",
            "epyc-2s-256c-smt",
            capped_hackbench,
            big,
        ),
    ];
    println!(
        "{:<48} {:>6} {:>12} {:>10} {:>12} {:>12}",
        "case", "sim s", "events", "wall s", "events/s", "sim-s/wall-s"
    );
    for (name, m, w, secs) in cases {
        let machine = preset(m).expect("preset exists");
        let cfg = SimConfig {
            duration_ns: Some(secs * NSEC_PER_SEC),
            ..SimConfig::default()
        };
        let t0 = Instant::now();
        let (_sim, res) = simulate(machine, &w, cfg, NullSink).map_err(|e| user(e.to_string()))?;
        let wall = t0.elapsed().as_secs_f64();
        println!(
            "{:<48} {:>6} {:>12} {:>10.3} {:>12.0} {:>12.3}",
            name,
            secs,
            res.events,
            wall,
            res.events as f64 / wall,
            secs as f64 / wall
        );
    }
    if a.seconds.is_none() {
        println!(
            "(default lengths: the 8- and 160-CPU cases run 10 simulated s, the 384- and 512-CPU \
             cases 1 s as they take seconds of wall time per simulated s; --seconds N runs every case N s)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
