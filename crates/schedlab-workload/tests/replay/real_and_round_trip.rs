//! The real kernel fixture, and the simulate -> trace -> replay -> simulate
//! round trip.

use super::*;

const FIXTURE: &str =
    include_str!("../../../schedlab-output/tests/data/ftrace_sched_idle_2cpu_sample.txt");

#[test]
fn the_real_kernel_trace_replays_on_small_and_big_machines() {
    let r = replay_trace(FIXTURE, "ftrace_sched_idle_2cpu_sample.txt", &opts()).unwrap();
    let rep = &r.report;
    assert_eq!(rep.lines, 1988);
    assert_eq!(rep.skipped.get("tracing_mark_write"), Some(&1148));
    assert_eq!(rep.skipped.len(), 1);
    // As schedlab-output's RunningTimeline finds: 10 idle -> task and one
    // task -> task switch without a sched_switch line.
    assert_eq!(rep.inferred_switches, 11);
    let names: Vec<&str> = r.workload.tasks.iter().map(|t| t.name.as_str()).collect();
    for n in [
        "cfs_thread-0",
        "cfs_thread-1",
        "idle_thread-2",
        "idle_thread-3",
        "rt-app-0",
        "rcu_preempt",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    // The rt-app threads are forked by rt-app's main thread.
    let find = |n: &str| {
        r.report
            .tasks
            .iter()
            .find(|t| t.name.as_deref() == Some(n))
            .unwrap()
    };
    assert_eq!(find("cfs_thread-0").forked_by, Some(19061));
    // cfs_thread-0: 5333 µs of work per 7777 µs period, timer driven.
    let c0 = find("cfs_thread-0");
    assert!(c0.timed_wakeups > 50, "{c0:?}");
    let p = c0.period_ns.unwrap();
    assert!(p.abs_diff(7_777_000) < 2_000, "period {p}");
    for machine in ["vm-2cpu", "icx-2s-80c-ht"] {
        let (sim, end) = run(&r.workload, machine, None);
        let th = sim
            .threads()
            .iter()
            .find(|t| t.spec.name == "cfs_thread-0")
            .unwrap();
        let want = c0.runtime_ns;
        let got = th.stats.runtime_ns;
        assert!(
            got.abs_diff(want) * 100 <= want,
            "{machine}: cfs_thread-0 ran {got} ns, trace {want} ns"
        );
        assert!(end > rep.span_ns / 2, "{machine}: ended at {end}");
    }
    // Dropping kernel threads leaves the rt-app ones.
    let r2 = replay_trace(
        FIXTURE,
        "f.txt",
        &ReplayOptions {
            kernel_threads: false,
            ..opts()
        },
    )
    .unwrap();
    assert!(r2
        .workload
        .tasks
        .iter()
        .all(|t| !t.name.starts_with("rcu_") && !t.name.starts_with("kworker")));
    let (_sim, _) = run(&r2.workload, "vm-2cpu", None);
}

// --------------------------------------------------------------- round trip

fn rt(name: &str, idx: u32, run_us: u64, period_us: u64, timer: u32) -> TaskSpec {
    let mut t = TaskSpec::looping(
        name,
        idx,
        Policy::Normal,
        vec![
            Op::Run {
                work_ns: run_us * 1000,
                config_us: run_us,
                perf: run_us * 10,
            },
            Op::Timer {
                timer: TimerRef(timer),
                period_ns: period_us * 1000,
            },
        ],
    );
    t.program.loops = None;
    t
}

/// Per task (by name) of the original run: (runtime, wakeups) against the
/// replay's, with relative errors.
fn round_trip(
    w: &Workload,
    machine: &str,
    duration_ns: Option<u64>,
) -> Vec<(String, u64, u64, u64, u64)> {
    round_trip_with(w, machine, duration_ns, config)
}

/// [`round_trip`] with the configuration `cfg(duration)` gives, for the
/// original (`duration_ns`) and the replay (`None`).
fn round_trip_with(
    w: &Workload,
    machine: &str,
    duration_ns: Option<u64>,
    cfg: impl Fn(Option<u64>) -> SimConfig,
) -> Vec<(String, u64, u64, u64, u64)> {
    let (orig, text) = run_traced_with(w, machine, cfg(duration_ns));
    let m = preset(machine).unwrap();
    let r = replay_trace(&text, "trace.txt", &ReplayOptions::for_schedlab_trace(&m)).unwrap();
    // The replay runs until its programs end (the trace's length).
    let (rep, _) = run_with(&r.workload, machine, cfg(None));
    let by_name: HashMap<&str, &schedlab_core::task::Task> = rep
        .threads()
        .iter()
        .map(|t| (t.spec.name.as_str(), t))
        .collect();
    let mut out = Vec::new();
    for t in orig.threads().iter().filter(|t| t.existed()) {
        let Some(r) = by_name.get(t.spec.name.as_str()) else {
            panic!("{} is not in the replay", t.spec.name);
        };
        out.push((
            t.spec.name.clone(),
            // The programs' time: what the replay rebuilds (runtime_ns
            // less the scheduler work charged to the task).
            t.stats.runtime_ns - t.stats.sched_work_ns,
            r.stats.runtime_ns - r.stats.sched_work_ns,
            t.stats.wakeups,
            r.stats.wakeups,
        ));
    }
    out
}

fn check_with(rows: &[(String, u64, u64, u64, u64)], what: &str, wakeups: bool) {
    let mut bad = Vec::new();
    for (n, r0, r1, w0, w1) in rows {
        let re = r1.abs_diff(*r0) as f64 / (*r0).max(1) as f64;
        let we = w1.abs_diff(*w0) as f64 / (*w0).max(1) as f64;
        eprintln!(
            "{what}: {n:<12} runtime {r0:>11} -> {r1:>11} ns ({:+.3}%)  wakeups {w0:>6} -> {w1:>6} ({:+.2}%)",
            (*r1 as f64 - *r0 as f64) / (*r0).max(1) as f64 * 100.0,
            (*w1 as f64 - *w0 as f64) / (*w0).max(1) as f64 * 100.0
        );
        if re > 0.02 || (wakeups && we > 0.05) {
            bad.push(n.clone());
        }
    }
    assert!(
        bad.is_empty(),
        "{what}: outside 2% runtime / 5% wakeups: {bad:?}"
    );
}

/// The replay criterion on each task: runtime within 2 %, wakeups within
/// 5 %.
fn check(rows: &[(String, u64, u64, u64, u64)], what: &str) {
    check_with(rows, what, true)
}

/// Runtime within 2 % only (wakeup counts printed, not checked).
fn check_runtime(rows: &[(String, u64, u64, u64, u64)], what: &str) {
    check_with(rows, what, false)
}

/// Four rt-app-like periodic threads on two CPUs, 1.35 CPUs of demand:
/// p2 (300 µs every 1 ms) overruns now and then.
fn periodic_mix() -> Workload {
    let mut w = Workload {
        log_basename: "rt".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let mix = [
        ("p0", 2000, 10_000),
        ("p1", 2000, 7777),
        ("p2", 300, 1000),
        ("p3", 1500, 4000),
    ];
    for (i, (n, run, period)) in mix.iter().enumerate() {
        w.timers.push(TimerSpec {
            name: format!("unique@{n}"),
            absolute: true,
        });
        w.tasks.push(rt(n, i as u32, *run, *period, i as u32));
    }
    w
}

/// A CPU hog of 10 ms runs for ever, at `nice`.
fn hog(index: u32, nice: i32) -> TaskSpec {
    let mut hog = TaskSpec::looping(
        "hog",
        index,
        Policy::Normal,
        vec![Op::Run {
            work_ns: 10_000_000,
            config_us: 10_000,
            perf: 100_000,
        }],
    );
    hog.nice = nice;
    hog.program.loops = None;
    hog
}

fn hackbench_pipe() -> Workload {
    schedlab_workload::generators::generator("hackbench:groups=2,fds=4,loops=200,ipc=pipe", 2)
        .unwrap()
        .unwrap()
        .workload
}

#[test]
fn round_trip_periodic_mix_on_vm_2cpu() {
    let rows = round_trip(&periodic_mix(), "vm-2cpu", Some(2_000_000_000));
    check(&rows, "periodic");
}

// Beside a hog, and pipe hackbench: the module doc of `replay` has the
// figures. Each shape has a runtime-only test and a `_full_criterion` one
// (runtime within 2 % and wakeups within 5 %, the replay criterion).

fn periodic_beside_hog() -> Workload {
    let mut w = periodic_mix();
    w.tasks.push(hog(4, 19));
    w
}

#[test]
fn round_trip_periodic_beside_a_hog_runtimes() {
    let rows = round_trip(&periodic_beside_hog(), "vm-2cpu", Some(2_000_000_000));
    check_runtime(&rows, "periodic+hog");
}

#[test]
fn round_trip_periodic_beside_a_hog_full_criterion() {
    let rows = round_trip(&periodic_beside_hog(), "vm-2cpu", Some(2_000_000_000));
    check(&rows, "periodic+hog");
}

#[test]
fn round_trip_hackbench_pipe_runtimes() {
    let rows = round_trip(&hackbench_pipe(), "vm-2cpu", None);
    check_runtime(&rows, "hackbench");
}

#[test]
fn round_trip_hackbench_pipe_full_criterion() {
    let rows = round_trip(&hackbench_pipe(), "vm-2cpu", None);
    check(&rows, "hackbench");
}

/// One group of 10+10: senders block on full pipes, and the last thread to
/// start writes (and wakes receivers) in the same activation that releases
/// the start barrier: only the barrier's post is the start-up's (dropping
/// every post of that activation to a started task deadlocked the replay).
fn hackbench_ten_fds() -> Workload {
    schedlab_workload::generators::generator("hackbench:groups=1,fds=10,loops=300,ipc=pipe", 2)
        .unwrap()
        .unwrap()
        .workload
}

#[test]
fn round_trip_hackbench_pipe_ten_fds_wakeups() {
    // Runs to the end (no deadlock), every wakeup count exact.
    let rows = round_trip(&hackbench_ten_fds(), "vm-2cpu", None);
    for (n, _, _, w0, w1) in &rows {
        assert_eq!(w0, w1, "{n}");
    }
}

#[test]
fn round_trip_hackbench_pipe_ten_fds_full_criterion() {
    // Fails if the replayed semaphore calls cost a futex and libc call on
    // top of the traced runs (busiest receivers +11 % to +62 %).
    let rows = round_trip(&hackbench_ten_fds(), "vm-2cpu", None);
    check(&rows, "hackbench 1x10");
}

/// The replay criterion over seeds and releases: tip (NI_RANDOM), 6.18
/// (every newidle pass runs), 6.12 and 6.6 (EEVDF), 6.1 and 5.15 (CFS),
/// each shape on ten seeds. Each miss found so far was a replay fault that
/// one seed hid and another showed (module doc, "Round trip").
#[test]
fn round_trips_hold_over_seeds_and_releases() {
    for kernel in ["tip", "6.18", "6.12", "6.6", "6.1", "5.15"] {
        let k = schedlab_core::kernels::canonical(kernel).unwrap();
        let (features, tunables) = schedlab_core::kernels::defaults(k).unwrap();
        for seed in 1..=10u64 {
            let cfg = |d: Option<u64>| SimConfig {
                seed,
                kernel: k,
                features: features.clone(),
                tunables: tunables.clone(),
                ..config(d)
            };
            let shapes = [
                ("periodic+hog", periodic_beside_hog(), Some(2_000_000_000)),
                ("hackbench", hackbench_pipe(), None),
                ("periodic", periodic_mix(), Some(2_000_000_000)),
            ];
            for (name, w, d) in shapes {
                let rows = round_trip_with(&w, "vm-2cpu", d, cfg);
                check(&rows, &format!("{name} {kernel} seed {seed}"));
            }
        }
    }
}
