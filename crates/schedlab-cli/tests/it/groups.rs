//! Task groups and CFS bandwidth control at the library level: group
//! weights share a CPU, `cpu.max` caps a group in each THROTTLE mode, and
//! the cpu.stat counters follow.

use crate::common::{run_op, task};
use schedlab_core::features::Throttle;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{GroupSpec, Policy, TaskSpec, Workload};
use schedlab_core::time::{NSEC_PER_MSEC, NSEC_PER_SEC};
use schedlab_core::{Sim, SimConfig};

/// Always runnable, in `group`, pinned to `cpu`.
fn hog(name: &str, index: u32, group: &str, cpu: u32) -> TaskSpec {
    let mut t = task(
        name,
        index,
        Policy::Normal,
        0,
        vec![run_op(100 * NSEC_PER_SEC)],
    );
    t.cpus = Some(vec![cpu]);
    t.group = group.into();
    t
}

fn run(
    machine: &str,
    tasks: Vec<TaskSpec>,
    groups: Vec<GroupSpec>,
    secs: u64,
    throttle: Throttle,
    check: bool,
) -> Sim<NullSink> {
    let w = Workload {
        tasks,
        groups,
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let mut cfg = SimConfig {
        seed: 3,
        duration_ns: Some(secs * NSEC_PER_SEC),
        check,
        ..SimConfig::default()
    };
    cfg.features.throttle = throttle;
    let mut sim = Sim::new(preset(machine).unwrap(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    sim
}

fn capped(path: &str, quota_ms: u64) -> GroupSpec {
    let mut g = GroupSpec::new(path);
    g.quota_ns = Some(quota_ms * NSEC_PER_MSEC);
    g
}

fn runtime_of(sim: &Sim<NullSink>, name: &str) -> u64 {
    sim.sched
        .tasks
        .iter()
        .find(|t| t.spec.name == name)
        .unwrap()
        .stats
        .runtime_ns
}

#[test]
fn weights_100_and_300_share_a_cpu_25_75() {
    let mut a = GroupSpec::new("/a");
    a.shares = 1024;
    let mut b = GroupSpec::new("/b");
    b.shares = 3072;
    let sim = run(
        "vm-2cpu",
        vec![hog("ta", 0, "/a", 0), hog("tb", 1, "/b", 0)],
        vec![a, b],
        10,
        Throttle::PerTask,
        false,
    );
    let (ra, rb) = (runtime_of(&sim, "ta") as f64, runtime_of(&sim, "tb") as f64);
    let share_a = 100.0 * ra / (ra + rb);
    assert!(
        (share_a - 25.0).abs() < 2.0,
        "group /a got {share_a:.2} % (want 25 ± 2)"
    );
    // Usage is charged to the groups.
    let ga = sim.sched.groups.iter().find(|g| g.path == "/a").unwrap();
    assert_eq!(ga.usage_ns, runtime_of(&sim, "ta"));
}

#[test]
fn nested_groups_split_then_split_again() {
    // /p (weight 100) with two children of equal weight, against /q (100):
    // /q gets 1/2, each child of /p 1/4.
    let sim = run(
        "vm-2cpu",
        vec![
            hog("p1", 0, "/p/c1", 0),
            hog("p2", 1, "/p/c2", 0),
            hog("q", 2, "/q", 0),
        ],
        vec![
            GroupSpec::new("/p"),
            GroupSpec::new("/p/c1"),
            GroupSpec::new("/p/c2"),
            GroupSpec::new("/q"),
        ],
        10,
        Throttle::PerTask,
        true,
    );
    let r: Vec<f64> = ["p1", "p2", "q"]
        .iter()
        .map(|n| runtime_of(&sim, n) as f64)
        .collect();
    let total: f64 = r.iter().sum();
    let pct: Vec<f64> = r.iter().map(|x| 100.0 * x / total).collect();
    assert!((pct[2] - 50.0).abs() < 2.0, "/q got {pct:?}");
    assert!((pct[0] - 25.0).abs() < 2.0, "/p/c1 got {pct:?}");
    // /p's usage includes its children's.
    let gp = sim.sched.groups.iter().find(|g| g.path == "/p").unwrap();
    assert_eq!(gp.usage_ns, runtime_of(&sim, "p1") + runtime_of(&sim, "p2"));
}

/// One always-busy task under cpu.max "20000 100000" for 10 s.
fn one_busy_task(mode: Throttle) {
    let secs = 10;
    let sim = run(
        "vm-2cpu",
        vec![hog("t", 0, "/capped", 0)],
        vec![capped("/capped", 20)],
        secs,
        mode,
        true,
    );
    let g = sim
        .sched
        .groups
        .iter()
        .find(|g| g.path == "/capped")
        .unwrap();
    let b = g.bw.as_ref().unwrap();
    let wall = (secs * NSEC_PER_SEC) as f64;
    let pct = 100.0 * g.usage_ns as f64 / wall;
    assert!(
        (pct - 20.0).abs() < 0.5,
        "{mode:?}: usage {pct:.3} % of a CPU"
    );
    let st = b.stats;
    assert!(
        st.nr_periods >= 99 && st.nr_periods <= 101,
        "{mode:?}: {st:?}"
    );
    assert!(st.nr_throttled + 2 >= st.nr_periods, "{mode:?}: {st:?}");
    let thr = 100.0 * st.throttled_ns as f64 / wall;
    assert!(
        (thr - 80.0).abs() < 2.0,
        "{mode:?}: throttled {thr:.2} % of the run"
    );
}

#[test]
fn one_busy_task_gets_20_percent_legacy() {
    one_busy_task(Throttle::Legacy);
}

#[test]
fn one_busy_task_gets_20_percent_per_task() {
    one_busy_task(Throttle::PerTask);
}

#[test]
fn one_busy_task_gets_20_percent_unified() {
    one_busy_task(Throttle::Unified);
}

/// Two busy tasks of one capped group on two CPUs still get 20 ms per
/// period between them.
fn two_busy_tasks(mode: Throttle) {
    let secs = 10;
    let sim = run(
        "vm-2cpu",
        vec![hog("t0", 0, "/capped", 0), hog("t1", 1, "/capped", 1)],
        vec![capped("/capped", 20)],
        secs,
        mode,
        true,
    );
    let g = sim
        .sched
        .groups
        .iter()
        .find(|g| g.path == "/capped")
        .unwrap();
    let per_period_ms = g.usage_ns as f64 / (secs * 10) as f64 / NSEC_PER_MSEC as f64;
    assert!(
        (per_period_ms - 20.0).abs() < 0.5,
        "{mode:?}: {per_period_ms:.3} ms per period"
    );
    // Both tasks ran.
    assert!(runtime_of(&sim, "t0") > NSEC_PER_SEC / 2, "{mode:?}");
    assert!(runtime_of(&sim, "t1") > NSEC_PER_SEC / 2, "{mode:?}");
}

#[test]
fn two_busy_tasks_share_the_quota_legacy() {
    two_busy_tasks(Throttle::Legacy);
}

#[test]
fn two_busy_tasks_share_the_quota_per_task() {
    two_busy_tasks(Throttle::PerTask);
}

#[test]
fn two_busy_tasks_share_the_quota_unified() {
    two_busy_tasks(Throttle::Unified);
}

#[test]
fn an_uncapped_sibling_takes_the_rest() {
    // /capped at 20 % and /free compete for CPU 0: /free gets the 80 %
    // /capped cannot use, and the CPU never idles.
    let sim = run(
        "vm-2cpu",
        vec![hog("c", 0, "/capped", 0), hog("f", 1, "/free", 0)],
        vec![capped("/capped", 20), GroupSpec::new("/free")],
        5,
        Throttle::PerTask,
        true,
    );
    let (c, f) = (runtime_of(&sim, "c") as f64, runtime_of(&sim, "f") as f64);
    let pc = 100.0 * c / (c + f);
    assert!((pc - 20.0).abs() < 1.0, "capped got {pc:.2} %");
}

#[test]
fn burst_lets_an_idle_group_catch_up() {
    // Quota 20 ms with 20 ms burst: a task that runs 35 ms every 200 ms
    // fits (the idle period banks runtime), and bursts are counted.
    let mut g = capped("/b", 20);
    g.burst_ns = 20 * NSEC_PER_MSEC;
    let mut t = task(
        "t",
        0,
        Policy::Normal,
        0,
        vec![
            run_op(35 * NSEC_PER_MSEC),
            schedlab_core::program::Op::Sleep {
                ns: 165 * NSEC_PER_MSEC,
            },
        ],
    );
    t.group = "/b".into();
    let sim = run("vm-2cpu", vec![t], vec![g], 5, Throttle::PerTask, true);
    let b = sim.sched.groups[1].bw.as_ref().unwrap();
    assert!(b.stats.nr_bursts > 0, "{:?}", b.stats);
    assert!(b.stats.burst_ns > 0, "{:?}", b.stats);
}

/// Collects (prev comm, prev_state) of every sched_switch.
#[derive(Default)]
struct Switches(Vec<(String, schedlab_core::observe::PrevState)>);

impl schedlab_core::observe::Sink for Switches {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &schedlab_core::observe::TraceRecord<'_>) {
        if let schedlab_core::observe::TraceEvent::SchedSwitch {
            prev, prev_state, ..
        } = &rec.event
        {
            self.0.push((prev.comm.to_string(), *prev_state));
        }
    }
}

/// Four hogs of a capped group and one free hog on CPU 0 for 1 s: how many
/// times a capped task left the CPU still runnable.
fn capped_switches(mode: Throttle) -> usize {
    let mut tasks: Vec<TaskSpec> = (0..4)
        .map(|i| hog(&format!("c{i}"), i, "/capped", 0))
        .collect();
    tasks.push(hog("free", 4, "/", 0));
    let w = Workload {
        tasks,
        groups: vec![capped("/capped", 20)],
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let mut cfg = SimConfig {
        seed: 5,
        duration_ns: Some(NSEC_PER_SEC),
        check: true,
        ..SimConfig::default()
    };
    cfg.features.throttle = mode;
    let mut sim = Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, Switches::default()).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let g = sim
        .sched
        .groups
        .iter()
        .find(|g| g.path == "/capped")
        .unwrap();
    let b = g.bw.as_ref().unwrap();
    assert!(b.stats.nr_throttled >= 9, "{mode:?}: {:?}", b.stats);
    let sink = sim.into_sink();
    sink.0
        .iter()
        .filter(|(comm, st)| {
            comm.starts_with('c') && *st == schedlab_core::observe::PrevState::Runnable
        })
        .count()
}

#[test]
fn per_task_throttling_parks_tasks_one_by_one_legacy_drops_the_group() {
    // Legacy: at each throttle the whole group leaves at once (one capped
    // task is switched out, as preempted). Per-task: every capped task is
    // picked once more and parks itself on its way back to user space, a
    // sched_switch with prev_state R each, so at least 4 per period.
    let legacy = capped_switches(Throttle::Legacy);
    let per_task = capped_switches(Throttle::PerTask);
    let unified = capped_switches(Throttle::Unified);
    assert!(legacy < 5, "legacy parks nobody: {legacy}");
    assert!(
        per_task >= 4 * 9,
        "per-task parks each task each period: {per_task}"
    );
    assert!(
        unified >= 4 * 9,
        "unified parks each task each period: {unified}"
    );
}

#[test]
fn slack_return_keeps_one_ms_and_gives_back_the_rest() {
    // A task of a capped group runs 1.5 ms, then sleeps: its queue took a
    // 5 ms slice from the pool, used 1.5 ms plus the context switch to the
    // task (update_curr charges the switch's time to the task switched to,
    // sched-work-charged: vm-2cpu's 3 µs) and, once empty, returns
    // 5 − 1.5 − 0.003 − 1 = 2.497 ms (keeping min_cfs_rq_runtime = 1 ms).
    let mut g = capped("/s", 20);
    g.period_ns = NSEC_PER_SEC; // no refill within the run
    let mut t = task(
        "t",
        0,
        Policy::Normal,
        0,
        vec![
            run_op(1_500_000),
            schedlab_core::program::Op::Sleep { ns: NSEC_PER_SEC },
        ],
    );
    t.group = "/s".into();
    t.cpus = Some(vec![1]);
    let w = Workload {
        tasks: vec![t],
        groups: vec![g],
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let cfg = SimConfig {
        seed: 1,
        duration_ns: Some(50 * NSEC_PER_MSEC),
        check: true,
        ..SimConfig::default()
    };
    let m = preset("vm-2cpu").unwrap();
    let switch_ns = m.costs.context_switch_ns;
    assert_eq!(switch_ns, 3_000);
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    sim.run();
    let g = &sim.sched.groups[1];
    let b = g.bw.as_ref().unwrap();
    assert_eq!(
        b.stats.nr_periods, 0,
        "the period timer fired: pick another seed"
    );
    // The 1.5 ms run and the switch to the task, charged to it
    // (update_curr's delta, which cgroup usage gets too).
    assert_eq!(g.usage_ns, 1_500_000 + switch_ns);
    assert_eq!(
        b.runtime,
        20_000_000 - 5_000_000 + (5_000_000 - 1_500_000 - switch_ns - 1_000_000),
        "pool after the slice and the slack return"
    );
    let q = g.cfs_rq[1];
    assert_eq!(sim.sched.cfs[q.idx()].bw.remaining, 1_000_000);
}

#[test]
fn an_idle_group_gets_what_sched_idle_would() {
    // cpu.idle = 1: the group's entity weighs WEIGHT_IDLEPRIO (3) against a
    // nice-0 task: 3 / 1027 = 0.29 % of the CPU, and the CPU counts as
    // running only SCHED_IDLE work when the idle group alone is queued.
    let mut g = GroupSpec::new("/idle");
    g.idle = true;
    let sim = run(
        "vm-2cpu",
        vec![hog("i", 0, "/idle", 0), hog("n", 1, "/", 0)],
        vec![g],
        10,
        Throttle::PerTask,
        true,
    );
    let (i, n) = (runtime_of(&sim, "i") as f64, runtime_of(&sim, "n") as f64);
    let pct = 100.0 * i / (i + n);
    assert!((pct - 0.29).abs() < 0.1, "idle group got {pct:.3} %");
}
