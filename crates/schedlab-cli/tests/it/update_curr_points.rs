//! Who may reschedule a running fair task: only the kernel's update_curr
//! points (the tick, enqueue/dequeue on its runqueue, the wake-up
//! preemption check, put_prev). An interrupt that wakes nothing there does
//! not reach update_curr, so a task past its deadline keeps the CPU until
//! the next tick, however many interrupts arrive (found on the host: two
//! periodic threads pinned to one CPU never preempt each other between
//! ticks, where the model preempted at the first interrupt past the slice;
//! docs/validation.md, p2-pin0).

use crate::common::{run_op, task};
use schedlab_core::config::NoiseSetting;
use schedlab_core::machine::preset;
use schedlab_core::noise::NoiseParams;
use schedlab_core::observe::{Sink, TraceEvent, TraceRecord};
use schedlab_core::program::{Policy, Workload};
use schedlab_core::time::{NSEC_PER_MSEC, NSEC_PER_SEC};
use schedlab_core::{Sim, SimConfig};

#[derive(Default)]
struct Switches(Vec<(u64, String, String)>);

impl Sink for Switches {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        if let TraceEvent::SchedSwitch { prev, next, .. } = &rec.event {
            if rec.cpu.0 == 0 {
                self.0
                    .push((rec.time, prev.comm.to_string(), next.comm.to_string()));
            }
        }
    }
}

/// Two nice-0 hogs pinned to CPU 0 of vm-2cpu (HZ 250, slice 1.4 ms), with
/// an interrupt every 50 µs on average, 1-2 µs long, and no timer
/// lateness (so ticks run on the jiffies grid): the hogs switch at ticks
/// only, every 4 ms, not at the first interrupt past their 1.4 ms slice.
#[test]
fn interrupts_do_not_preempt_a_task_past_its_deadline() {
    let mut tasks = Vec::new();
    for (i, name) in ["a", "b"].into_iter().enumerate() {
        let mut t = task(
            name,
            i as u32,
            Policy::Normal,
            0,
            vec![run_op(100 * NSEC_PER_SEC)],
        );
        t.cpus = Some(vec![0]);
        tasks.push(t);
    }
    let w = Workload {
        tasks,
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    let noise = NoiseParams {
        irq_interval_ns: 50_000,
        irq_len_q_ns: vec![1_000, 2_000],
        ..Default::default()
    };
    let cfg = SimConfig {
        seed: 3,
        duration_ns: Some(400 * NSEC_PER_MSEC),
        check: true,
        noise: NoiseSetting::Given(noise),
        ..SimConfig::default()
    };
    let tick = cfg.tick_ns();
    assert_eq!(tick, 4 * NSEC_PER_MSEC);
    let mut sim = Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, Switches::default()).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let sw: Vec<_> = sim
        .into_sink()
        .0
        .into_iter()
        .filter(|(t, p, n)| {
            // After start-up (rt-app's main thread releases the hogs).
            *t > 10 * NSEC_PER_MSEC && ((p == "a" && n == "b") || (p == "b" && n == "a"))
        })
        .collect();
    // ~97 ticks in the 390 ms after start-up: a switch at (nearly) every one of them.
    assert!(
        (88..=98).contains(&sw.len()),
        "{} hog-to-hog switches",
        sw.len()
    );
    // All on one phase of the tick grid: the tick, not an interrupt, ends
    // each turn (the switch follows the tick by at most the bursts that
    // delay it, a few µs).
    let phase = sw[0].0 % tick;
    for (t, p, n) in &sw {
        let d = (t % tick + tick - phase) % tick;
        assert!(
            d < 20_000,
            "{p} -> {n} at {t} ns: {d} ns off the tick phase"
        );
    }
}

/// The end of a `run` op is not an update_curr point in the kernel either:
/// rt-app's busy loop returns to its own code, with no kernel entry, so a
/// CPU hog whose 10 ms `run` loops forever should be scheduled exactly as
/// one hog whose single `run` never ends. Beside four periodic threads on
/// vm-2cpu (HZ 250, preempt none) the model calls update_curr, with its
/// decisions, at each op end (`burst_end`, sched/exec.rs), and a thread
/// woken behind the nice-19 hog takes the CPU there instead of at the
/// next tick (found by the replay round trip, which replays the hog as
/// one run: crates/schedlab-workload/tests/replay.rs). Passes with
/// `burst_end` charging a fair task through `charge_curr_quiet`.
#[test]
fn the_end_of_a_run_op_does_not_reschedule() {
    use schedlab_core::program::{TimerRef, TimerSpec};
    let switches = |hog_ops: Vec<schedlab_core::program::Op>| {
        let mut w = Workload {
            log_basename: "rt-app".into(),
            calibration_ns: 100,
            ..Default::default()
        };
        let mix = [(2000, 10_000), (2000, 7777), (300, 1000), (1500, 4000)];
        for (i, (run_us, period_us)) in mix.into_iter().enumerate() {
            w.timers.push(TimerSpec {
                name: format!("unique@p{i}"),
                absolute: true,
            });
            w.tasks.push(task(
                &format!("p{i}"),
                i as u32,
                Policy::Normal,
                0,
                vec![
                    run_op(run_us * 1000),
                    schedlab_core::program::Op::Timer {
                        timer: TimerRef(i as u32),
                        period_ns: period_us * 1000,
                    },
                ],
            ));
        }
        w.tasks.push(task("hog", 4, Policy::Normal, 19, hog_ops));
        let cfg = SimConfig {
            duration_ns: Some(NSEC_PER_SEC),
            preempt: schedlab_core::features::PreemptModel::None,
            check: true,
            ..SimConfig::default()
        };
        let mut sim =
            Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, AllSwitches::default()).unwrap();
        let res = sim.run();
        assert!(res.violation.is_none(), "{:?}", res.violation);
        sim.into_sink().0
    };
    let looped = switches(vec![run_op(10 * NSEC_PER_MSEC)]);
    let single = switches(vec![run_op(100 * NSEC_PER_SEC)]);
    assert!(looped.len() > 1000, "{} switches", looped.len());
    let first = looped.iter().zip(&single).position(|(a, b)| a != b);
    assert_eq!(
        (looped.len(), first),
        (single.len(), None),
        "first difference: {:?} vs {:?}",
        first.map(|i| &looped[i]),
        first.map(|i| &single[i])
    );
}

/// Every sched_switch: (time, CPU, prev, prev state, next).
#[derive(Default)]
struct AllSwitches(Vec<(u64, u32, String, String, String)>);

impl Sink for AllSwitches {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &TraceRecord<'_>) {
        if let TraceEvent::SchedSwitch {
            prev,
            prev_state,
            next,
        } = &rec.event
        {
            self.0.push((
                rec.time,
                rec.cpu.0,
                prev.comm.to_string(),
                format!("{prev_state:?}"),
                next.comm.to_string(),
            ));
        }
    }
}

/// `__schedule` clears the need-resched flag after `pick_next_task` (its
/// `picked:` point), so a reschedule that put_prev's update_curr asks for
/// while picking is absorbed by that same schedule, and `sched_switch` is
/// never recorded with the flag set. Real traces agree: none of the 68 000
/// `sched_switch` lines of this host's validation recordings (hackbench,
/// periodic, bandwidth shapes; Linux 6.18) nor of the 2-CPU SCHED_IDLE
/// fixture carries `N`. The model used to clear the flag before put_prev,
/// so the flag update_curr set stayed up: the switch showed `dN`, a second
/// schedule ran at the same instant, and two tasks whose switch costs
/// pushed each other's vruntime past the other's could swap the CPU at
/// one instant without end (the proptest case
/// `charged_scheduler_work_fits_the_run`).
#[test]
fn a_switch_never_carries_need_resched() {
    use crate::common::BIN;
    use std::process::Command;
    let tiny =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/tiny/workload.json");
    let cases: [(&str, &str, &str); 3] = [
        (tiny.to_str().unwrap(), "vm-2cpu", "none"),
        ("hackbench:groups=1,loops=300", "vm-2cpu", "full"),
        ("oltp:workers=8,cpu_us=80,io_us=120", "a7-octa", "lazy"),
    ];
    for (w, m, preempt) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let st = Command::new(BIN)
            .args(["run", w, "--machine", m, "--preempt", preempt])
            .args(["--duration", "200ms", "--trace", "--quiet", "--out"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "{w}");
        let text = std::fs::read_to_string(out.join("trace.txt")).unwrap();
        let mut switches = 0;
        for line in text.lines().filter(|l| l.contains(" sched_switch: ")) {
            switches += 1;
            // "comm-pid [cpu] dN.2. time: ...": the flags follow the CPU.
            let flags = line.split("] ").nth(1).unwrap_or("");
            assert!(
                !flags.starts_with("dN") && !flags.starts_with("dn") && !flags.starts_with("dp"),
                "{w} on {m}: a switch with need-resched set: {line}"
            );
        }
        assert!(switches > 200, "{w} on {m}: only {switches} switches");
    }
}
