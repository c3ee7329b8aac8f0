//! `ttwu_queue_cond`: which wakeups go through the target CPU's wakelist
//! (the target's IPI handler enqueues the task and traces `sched_wakeup`)
//! and which the waker enqueues itself. From 6.0 on a wakeup onto an idle
//! CPU of the waker's LLC is queued there; before, only wakeups across
//! LLCs were, and (from 5.8) those of a task still switching out on its
//! CPU (ttwu's on_cpu path).

use crate::common::{release_config, rtapp_workload, run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::{Sink, TraceEvent, TraceRecord};
use schedlab_core::program::{Op, Policy};
use schedlab_core::time::NSEC_PER_MSEC;
use schedlab_core::Sim;

/// (time, CPU) of the wakee's `sched_waking` and `sched_wakeup` lines.
#[derive(Default)]
struct Wakes {
    waking: Vec<(u64, u32)>,
    wakeup: Vec<(u64, u32)>,
}

impl Sink for Wakes {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        match &rec.event {
            TraceEvent::SchedWaking { task, .. } if task.comm == "wakee" => {
                self.waking.push((rec.time, rec.cpu.0))
            }
            TraceEvent::SchedWakeup { task, .. } if task.comm == "wakee" => {
                self.wakeup.push((rec.time, rec.cpu.0))
            }
            _ => {}
        }
    }
}

/// On vm-2cpu (one LLC): "waker", pinned to CPU 0, runs `waker_run_ns`
/// and posts a semaphore that "wakee", pinned to CPU 1, waits on before
/// running `wakee_run_ns`; both loop. Simulated on `kernel` for
/// `duration_ns`, with `sink` watching.
fn waker_and_wakee<S: Sink>(
    kernel: &str,
    waker_run_ns: u64,
    wakee_run_ns: u64,
    duration_ns: u64,
    sink: S,
) -> Sim<S> {
    let mut waker = task(
        "waker",
        0,
        Policy::Normal,
        0,
        vec![run_op(waker_run_ns), Op::SemPost { sem: 0 }],
    );
    waker.cpus = Some(vec![0]);
    let mut wakee = task(
        "wakee",
        1,
        Policy::Normal,
        0,
        vec![Op::SemWait { sem: 0 }, run_op(wakee_run_ns)],
    );
    wakee.cpus = Some(vec![1]);
    let w = rtapp_workload(vec![waker, wakee], 1);
    let cfg = release_config(kernel, duration_ns);
    let mut sim = Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, sink).unwrap();
    assert!(sim.run().violation.is_none());
    sim
}

/// On vm-2cpu (one LLC): "waker" on CPU 0 runs 1 ms and posts a semaphore
/// that "wakee", alone on CPU 1 and asleep there, waits on. The first
/// wakeup's two lines, on `kernel`.
fn first_wakeup(kernel: &str) -> ((u64, u32), (u64, u32)) {
    let mut sim = waker_and_wakee(
        kernel,
        NSEC_PER_MSEC,
        10_000,
        5 * NSEC_PER_MSEC,
        Wakes::default(),
    );
    let s = sim.sink_mut();
    let waking = *s
        .waking
        .iter()
        .find(|w| w.1 == 0)
        .expect("woken from CPU 0");
    let wakeup = *s
        .wakeup
        .iter()
        .find(|w| w.0 >= waking.0)
        .expect("a sched_wakeup after it");
    (waking, wakeup)
}

#[test]
fn from_6_0_a_wakeup_onto_an_idle_cpu_of_the_llc_goes_through_its_wakelist() {
    let m = preset("vm-2cpu").unwrap();
    let ipi = m.costs.ipi_latency_ns;
    assert!(ipi > 0);
    let (waking, wakeup) = first_wakeup("6.18");
    // Traced by CPU 1's IPI handler, at least one IPI latency later (plus
    // the exit latency of the idle state it was in).
    assert_eq!(wakeup.1, 1, "{waking:?} {wakeup:?}");
    assert!(wakeup.0 >= waking.0 + ipi, "{waking:?} {wakeup:?}");
    // Before 6.0 the waker enqueues it and traces the wakeup at once.
    let (waking, wakeup) = first_wakeup("5.4");
    assert_eq!(wakeup, (waking.0, 0), "{waking:?}");
}

/// Every wakeup of "wakee" (alone on CPU 1, waiting on a semaphore) by
/// "waker" (CPU 0, posting every `period_ns` of work), on `kernel`: (time
/// since the wakee last left CPU 1, CPU that traced its sched_wakeup).
fn wakeups_after_switch_out(kernel: &str, period_ns: u64) -> Vec<(u64, u32)> {
    #[derive(Default)]
    struct Log {
        out: Option<u64>,
        pending: Option<u64>,
        rows: Vec<(u64, u32)>,
    }
    impl Sink for Log {
        fn wants_trace(&self) -> bool {
            true
        }
        fn trace(&mut self, rec: &TraceRecord<'_>) {
            match &rec.event {
                TraceEvent::SchedSwitch { prev, .. } if prev.comm == "wakee" => {
                    self.out = Some(rec.time)
                }
                TraceEvent::SchedWaking { task, .. } if task.comm == "wakee" => {
                    self.pending = self.out.map(|o| rec.time - o)
                }
                TraceEvent::SchedWakeup { task, .. } if task.comm == "wakee" => {
                    if let Some(d) = self.pending.take() {
                        self.rows.push((d, rec.cpu.0));
                    }
                }
                _ => {}
            }
        }
    }
    let mut sim = waker_and_wakee(kernel, period_ns, 2_000, 20 * NSEC_PER_MSEC, Log::default());
    std::mem::take(&mut sim.sink_mut().rows)
}

/// ttwu's on_cpu path (5.8 on): a wakeup that finds the wakee still
/// switching out on CPU 1 (within one context switch of its switch-out)
/// is queued on CPU 1's wakelist (traced there); later ones, on 5.15, are
/// enqueued by the waker (traced on CPU 0). On 5.4 the waker always
/// enqueues (it spins through the switch first); on 6.18 CPU 1, with
/// nothing else to run, always takes the wakelist.
#[test]
fn a_wakeup_during_the_wakees_switch_out_goes_to_its_cpus_wakelist() {
    let cs = preset("vm-2cpu").unwrap().costs.context_switch_ns;
    let rows = wakeups_after_switch_out("5.15", 9_000);
    let inside: Vec<_> = rows.iter().filter(|r| r.0 < cs).collect();
    let outside: Vec<_> = rows.iter().filter(|r| r.0 >= 2 * cs).collect();
    assert!(!inside.is_empty() && !outside.is_empty(), "{rows:?}");
    assert!(inside.iter().all(|r| r.1 == 1), "{inside:?}");
    assert!(outside.iter().all(|r| r.1 == 0), "{outside:?}");
    let old = wakeups_after_switch_out("5.4", 9_000);
    assert!(old.iter().any(|r| r.0 < cs), "{old:?}");
    assert!(old.iter().all(|r| r.1 == 0), "{old:?}");
    let new = wakeups_after_switch_out("6.18", 9_000);
    assert!(new.iter().any(|r| r.0 >= 2 * cs), "{new:?}");
    assert!(new.iter().all(|r| r.1 == 1), "{new:?}");
}

/// A wakeup done from CPU 0 onto busy CPU 1 runs `update_curr` on CPU 1's
/// running task (the enqueue). When that task is past its deadline the
/// reschedule it asks for is `resched_curr` from CPU 0: an IPI, which
/// lands one IPI latency later, not at once (exec_ctx in sched/core.rs).
/// Two hogs share CPU 1 with the wakee. Without the IPI, a hog found past
/// its deadline would leave CPU 1 at the wakeup's own time (and the
/// wakeup's preemption check would then send no IPI either).
#[test]
fn a_reschedule_asked_by_a_remote_enqueue_is_an_ipi() {
    #[derive(Default)]
    struct Log {
        wakeups: Vec<u64>,
        hog_out: Vec<u64>,
    }
    impl Sink for Log {
        fn wants_trace(&self) -> bool {
            true
        }
        fn trace(&mut self, rec: &TraceRecord<'_>) {
            match &rec.event {
                TraceEvent::SchedWakeup { task, .. } if task.comm == "wakee" => {
                    self.wakeups.push(rec.time)
                }
                TraceEvent::SchedSwitch { prev, .. }
                    if rec.cpu.0 == 1 && prev.comm.starts_with("hog") =>
                {
                    self.hog_out.push(rec.time)
                }
                _ => {}
            }
        }
    }
    let mut waker = task(
        "waker",
        0,
        Policy::Normal,
        0,
        vec![run_op(230_000), Op::SemPost { sem: 0 }],
    );
    waker.cpus = Some(vec![0]);
    let mut wakee = task(
        "wakee",
        1,
        Policy::Normal,
        0,
        vec![Op::SemWait { sem: 0 }, run_op(5_000)],
    );
    wakee.cpus = Some(vec![1]);
    let mut tasks = vec![waker, wakee];
    for i in 0..2 {
        let mut hog = task(
            &format!("hog{i}"),
            2 + i,
            Policy::Normal,
            0,
            vec![run_op(50 * NSEC_PER_MSEC)],
        );
        hog.cpus = Some(vec![1]);
        tasks.push(hog);
    }
    let w = rtapp_workload(tasks, 1);
    let cfg = release_config("6.18", 200 * NSEC_PER_MSEC);
    let m = preset("vm-2cpu").unwrap();
    let ipi = m.costs.ipi_latency_ns;
    assert!(ipi > 0);
    let mut sim = Sim::new(m, &w, cfg, Log::default()).unwrap();
    assert!(sim.run().violation.is_none());
    let log = sim.sink_mut();
    let mut landed = 0;
    for &t in &log.hog_out {
        let Some(&wk) = log.wakeups.iter().rev().find(|&&w| w <= t) else {
            continue;
        };
        assert!(
            t >= wk + ipi || t - wk > ipi,
            "a hog left CPU 1 {} ns after a remote wakeup, inside the IPI latency {ipi}",
            t - wk
        );
        if t == wk + ipi {
            landed += 1;
        }
    }
    assert!(
        landed > 0,
        "no reschedule landed one IPI after a wakeup: {:?}",
        &log.hog_out[..log.hog_out.len().min(20)]
    );
}

/// schedstat's domain counters of wakeups. "waker" pinned to CPU 0 wakes
/// "wakee" pinned to CPU 1 every time: each wakeup is done on CPU 0 onto
/// CPU 1, so CPU 0's lowest domain spanning CPU 1 (vm-2cpu's only one)
/// counts every one in `ttwu_wake_remote`, and none is `ttwu_local`.
/// The wakee is not allowed on the waker's CPU, so `wake_affine` never
/// runs: `ttwu_move_affine` stays 0. (5.4: no wakelist, the waker
/// selects and enqueues.)
#[test]
fn schedstat_counts_remote_wakeups_at_the_domain_spanning_the_target() {
    let sim = waker_and_wakee(
        "5.4",
        100_000,
        10_000,
        20 * NSEC_PER_MSEC,
        schedlab_core::observe::NullSink,
    );
    let ss = schedlab_output::results::schedstat(&sim);
    let wakee_wakeups = sim
        .sched
        .tasks
        .iter()
        .find(|t| t.spec.name == "wakee")
        .map(|t| t.stats.wakeups)
        .unwrap();
    assert!(wakee_wakeups >= 100, "{wakee_wakeups}");
    let d0 = &ss[0].domains[0];
    assert_eq!(d0.ttwu_wake_remote, wakee_wakeups);
    assert_eq!(ss[0].ttwu_local, 0);
    assert_eq!(d0.ttwu_move_affine, 0);
    // CPU 1 wakes nobody but, at most, the threads the rt-app main
    // thread starts.
    assert!(ss[1].domains[0].ttwu_wake_remote <= 2, "{:?}", ss[1]);
}
