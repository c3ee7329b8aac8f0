//! Hand-made traces: what each kernel event becomes in the replayed workload.

use super::errors::err_of;
use super::*;

/// Producer (pid 100, CPU 0) runs 500 µs, wakes the consumer (pid 200),
/// runs 500 µs more and sleeps; the consumer runs 300 µs on CPU 1 and
/// sleeps. A timer wakes the producer every 2 ms from idle. Every other
/// idle -> consumer switch line is left out, as on the real kernel.
fn producer_consumer(rounds: u64) -> String {
    let mut s = String::from(HEADER);
    let mut push = |l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    let t0 = 1_000_000u64;
    for k in 0..rounds {
        let t = t0 + k * 2000;
        push(line(
            "<idle>",
            0,
            0,
            "dNh2.",
            t,
            &waking("sched_waking", "prod", 100, 0),
        ));
        push(line(
            "<idle>",
            0,
            0,
            "dNh2.",
            t,
            &waking("sched_wakeup", "prod", 100, 0),
        ));
        push(line(
            "<idle>",
            0,
            0,
            "d..2.",
            t + 5,
            &switch("swapper/0", 0, "R", "prod", 100),
        ));
        push(line(
            "prod",
            100,
            0,
            "d..2.",
            t + 505,
            &waking("sched_waking", "cons", 200, 1),
        ));
        push(line(
            "<idle>",
            0,
            1,
            "dNh2.",
            t + 510,
            &waking("sched_wakeup", "cons", 200, 1),
        ));
        if k % 2 == 0 {
            push(line(
                "<idle>",
                0,
                1,
                "d..2.",
                t + 512,
                &switch("swapper/1", 0, "R", "cons", 200),
            ));
        }
        push(line(
            "cons",
            200,
            1,
            "...1.",
            t + 600,
            "tracing_mark_write: working",
        ));
        push(line(
            "cons",
            200,
            1,
            "d..2.",
            t + 812,
            &switch("cons", 200, "S", "swapper/1", 0),
        ));
        push(line(
            "prod",
            100,
            0,
            "d..2.",
            t + 1005,
            &switch("prod", 100, "S", "swapper/0", 0),
        ));
    }
    s
}

#[test]
fn producer_consumer_becomes_a_dependency() {
    let r = replay_trace(&producer_consumer(6), "pc.txt", &opts()).unwrap();
    let w = &r.workload;
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["prod", "cons"]);
    assert_eq!(w.sems, 1, "one semaphore: the consumer's");
    let prod = &w.tasks[0];
    let cons = &w.tasks[1];
    assert_eq!(prod.program.phases.len(), 6);
    assert_eq!(cons.program.phases.len(), 6);
    // The traced spans already hold the calls the original made to sleep
    // and to wake, so the replay's semaphore calls cost only the engine's
    // minimum, which comes out of the runs before each call.
    let call = schedlab_core::program::REPLAYED_SYNC_OP_NS;
    assert_eq!(call, 1);
    // Producer: timer, 500 µs less the post's call, post, 500 µs.
    // (Phase 2: phase 1's timer is 50 µs short, see the periodic test.)
    let ops = &prod.program.phases[2].ops;
    assert!(
        matches!(
            ops[0],
            Op::Timer {
                period_ns: 2_000_000,
                ..
            }
        ),
        "{ops:?}"
    );
    assert!(
        matches!(
            ops[1],
            Op::Run { work_ns, .. } if work_ns == 500_000 - call
        ),
        "{ops:?}"
    );
    assert_eq!(ops[2], Op::SemPost { sem: 0 });
    assert!(
        matches!(
            ops[3],
            Op::Run {
                work_ns: 500_000,
                ..
            }
        ),
        "{ops:?}"
    );
    // Consumer: wait, then its CPU time. Where the idle -> cons switch is
    // missing, the run starts at the wakeup (t + 510) instead of t + 512.
    // The next wait's futex sleep is the end of each activation but the
    // last.
    for (k, ph) in cons.program.phases.iter().enumerate() {
        assert_eq!(ph.ops[0], Op::SemWait { sem: 0 }, "phase {k}");
        let want = if k % 2 == 0 { 300_000 } else { 302_000 };
        let want = if k < 5 { want - call } else { want };
        assert_eq!(
            ph.ops[1],
            Op::Run {
                work_ns: want,
                config_us: want / 1000,
                perf: want / 100 / 1000
            },
            "phase {k}"
        );
    }
    assert_eq!(r.report.inferred_switches, 3);
    let rc = r.report.tasks.iter().find(|t| t.pid == 200).unwrap();
    assert_eq!(rc.dependency_wakeups, 6);
    assert_eq!(rc.timed_wakeups, 0);
    // And it runs: the consumer gets its 6 wakeups and its CPU time, on a
    // machine whose futex and libc calls cost far more than 1 ns.
    let (sim, _) = run(&r.workload, "vm-2cpu", None);
    let c = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "cons")
        .unwrap();
    // Its traced CPU time: the runs less the calls, plus the calls, and the
    // first wait's call, which the trace began after.
    let runs = 3 * 300_000 + 3 * 302_000;
    // (The program's time: runtime_ns less the scheduler work charged to
    // the task, sched_work_ns.)
    assert_eq!(c.stats.runtime_ns - c.stats.sched_work_ns, runs + call);
    // Six dependency wakeups, and the start barrier's.
    assert_eq!(c.stats.wakeups, 7);
}

#[test]
fn an_early_post_is_not_lost() {
    // The waker posts while the sleeper has not started waiting yet in the
    // replay (a semaphore counts it): on a slow consumer it must still run
    // every activation.
    let r = replay_trace(&producer_consumer(4), "pc.txt", &opts()).unwrap();
    let mut w = r.workload.clone();
    // Make the consumer's first activation very long: the producer's later
    // posts come before its waits.
    if let Op::Run { work_ns, .. } = &mut w.tasks[1].program.phases[0].ops[1] {
        *work_ns = 20_000_000;
    }
    let (sim, _) = run(&w, "vm-2cpu", None);
    let c = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "cons")
        .unwrap();
    assert_eq!(c.stats.loops, 4);
    // And it sleeps before each, as the trace shows: the posts that came
    // early are held and wake it as it goes to sleep (four, and the start
    // barrier's).
    assert_eq!(c.stats.wakeups, 5);
    assert!(w.sem_waits_sleep);
    // A counting semaphore would let it run them back to back.
    w.sem_waits_sleep = false;
    let (sim, _) = run(&w, "vm-2cpu", None);
    let c = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "cons")
        .unwrap();
    assert_eq!(c.stats.loops, 4);
    assert!(c.stats.wakeups < 5, "{}", c.stats.wakeups);
}

/// A task woken from idle by its timer every `period_us`, running `run_us`.
pub(crate) fn periodic(periods: u64, period_us: u64, run_us: u64) -> String {
    let mut s = String::from(HEADER);
    let t0 = 5_000_000u64;
    for k in 0..periods {
        let t = t0 + k * period_us;
        for l in [
            line(
                "<idle>",
                0,
                1,
                "d.h2.",
                t,
                &waking("sched_waking", "tick", 42, 1),
            ),
            line(
                "<idle>",
                0,
                1,
                "dNh2.",
                t + 1,
                &waking("sched_wakeup", "tick", 42, 1),
            ),
            line(
                "<idle>",
                0,
                1,
                "d..2.",
                t + 3,
                &switch("swapper/1", 0, "R", "tick", 42),
            ),
            line(
                "tick",
                42,
                1,
                "d..2.",
                t + 3 + run_us,
                &switch("tick", 42, "S", "swapper/1", 0),
            ),
        ] {
            s.push_str(&l);
            s.push('\n');
        }
    }
    s
}

#[test]
fn periodic_task_becomes_a_timer_task() {
    let r = replay_trace(&periodic(20, 7777, 1333), "p.txt", &opts()).unwrap();
    let w = &r.workload;
    assert_eq!(w.tasks.len(), 1);
    assert_eq!(
        w.timers,
        [TimerSpec {
            name: "replay@tick".into(),
            absolute: true
        }]
    );
    let t = &w.tasks[0];
    assert_eq!(t.program.phases.len(), 20);
    for (k, ph) in t.program.phases.iter().enumerate() {
        // The first wakeup is the trace's first line: its timer cannot
        // expire a slack (50 µs) before the origin, so it expires at it,
        // and the second comes 50 µs short of a period after.
        let period = match k {
            0 => 0,
            1 => 7_727_000,
            _ => 7_777_000,
        };
        assert_eq!(
            ph.ops[0],
            Op::Timer {
                timer: TimerRef(0),
                period_ns: period
            },
            "phase {k}"
        );
        assert!(matches!(
            ph.ops[1],
            Op::Run {
                work_ns: 1_333_000,
                ..
            }
        ));
    }
    let rt = &r.report.tasks[0];
    assert_eq!((rt.timed_wakeups, rt.dependency_wakeups), (20, 0));
    let (sim, _) = run(w, "vm-2cpu", None);
    let th = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "tick")
        .unwrap();
    assert_eq!(th.stats.runtime_ns - th.stats.sched_work_ns, 20 * 1_333_000);
    // The absolute grid keeps the period: 18 periods from the second
    // iteration's end to the last's (each ends one run after its wakeup;
    // the first starts at once).
    let ends: Vec<u64> = th.log.iter().map(|row| row.end).collect();
    let span = ends[19] - ends[1];
    assert!(span.abs_diff(18 * 7777) <= 20, "18 periods in {span} µs");
    assert_eq!(r.report.tasks[0].period_ns, Some(7_777_000));
}

#[test]
fn an_overrun_is_split_at_the_missed_expiries() {
    // Period 4000 µs, 1000 µs of work; the 6th activation runs 9000 µs
    // without sleeping (it overran two expiries): no wakeup at the 7th and
    // 8th expiries, the next at the 9th. The replay splits the 9000 µs in
    // three, with a timer wait at each missed expiry.
    let mut s = String::from(HEADER);
    let t0 = 2_000_000u64;
    for k in 0..12u64 {
        if k == 6 || k == 7 {
            continue;
        }
        let t = t0 + k * 4000;
        let run = if k == 5 { 3000 + 4000 + 2000 } else { 1000 };
        for l in [
            line(
                "<idle>",
                0,
                0,
                "d.h2.",
                t,
                &waking("sched_waking", "per", 7, 0),
            ),
            line(
                "<idle>",
                0,
                0,
                "d..2.",
                t + 2,
                &switch("swapper/0", 0, "R", "per", 7),
            ),
            line(
                "per",
                7,
                0,
                "d..2.",
                t + 2 + run,
                &switch("per", 7, "S", "swapper/0", 0),
            ),
        ] {
            s.push_str(&l);
            s.push('\n');
        }
    }
    let r = replay_trace(&s, "o.txt", &opts()).unwrap();
    assert_eq!(r.report.tasks[0].period_ns, Some(4_000_000));
    let ph = &r.workload.tasks[0].program.phases[5];
    let t = TimerRef(0);
    assert_eq!(
        ph.ops,
        [
            Op::Timer {
                timer: t,
                period_ns: 4_000_000
            },
            Op::Run {
                work_ns: 3_000_000,
                config_us: 3000,
                perf: 30
            },
            Op::Timer {
                timer: t,
                period_ns: 4_000_000
            },
            Op::Run {
                work_ns: 3_000_000,
                config_us: 3000,
                perf: 30
            },
            Op::Timer {
                timer: t,
                period_ns: 4_000_000
            },
            Op::Run {
                work_ns: 3_000_000,
                config_us: 3000,
                perf: 30
            },
        ]
    );
    // The next activation's timer is one period after the last expiry.
    assert_eq!(
        r.workload.tasks[0].program.phases[6].ops[0],
        Op::Timer {
            timer: t,
            period_ns: 4_000_000
        }
    );
}

/// The timer ops of a task's program: each one's `period_ns`.
fn timer_periods(w: &Workload, name: &str) -> Vec<u64> {
    let t = w.tasks.iter().find(|t| t.name == name).unwrap();
    t.program
        .phases
        .iter()
        .flat_map(|p| p.ops.iter())
        .filter_map(|op| match op {
            Op::Timer { period_ns, .. } => Some(*period_ns),
            _ => None,
        })
        .collect()
}

/// Task `tmr` (pid 100) wakes from idle on CPU 0 at `wakes` (µs), in the
/// timer interrupt right after the CPU's `cpu_idle` exit line (`lead` µs
/// before it), runs 200 µs and sleeps; the CPU enters idle state 1 after
/// each run. A `busy` task (pid 300) runs on CPU 1 throughout.
fn idle_woken(wakes: &[u64], lead: u64) -> String {
    let mut s = String::from(HEADER);
    let mut push = |l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    push(line(
        "busy",
        300,
        1,
        "d..2.",
        900_000,
        "tracing_mark_write: x",
    ));
    push(line(
        "<idle>",
        0,
        0,
        "d....",
        900_000,
        "cpu_idle: state=1 cpu_id=0",
    ));
    for &w in wakes {
        push(line(
            "<idle>",
            0,
            0,
            "d....",
            w - lead,
            "cpu_idle: state=4294967295 cpu_id=0",
        ));
        push(line(
            "<idle>",
            0,
            0,
            "d.h2.",
            w,
            &waking("sched_waking", "tmr", 100, 0),
        ));
        push(line(
            "<idle>",
            0,
            0,
            "d.h2.",
            w,
            &waking("sched_wakeup", "tmr", 100, 0),
        ));
        push(line(
            "<idle>",
            0,
            0,
            "d..2.",
            w,
            &switch("swapper/0", 0, "R", "tmr", 100),
        ));
        push(line(
            "tmr",
            100,
            0,
            "d..2.",
            w + 200,
            &switch("tmr", 100, "S", "swapper/0", 0),
        ));
        push(line(
            "<idle>",
            0,
            0,
            "d....",
            w + 200,
            "cpu_idle: state=1 cpu_id=0",
        ));
    }
    s
}

#[test]
fn a_timer_wakeup_on_an_idle_cpu_is_replayed_one_exit_latency_earlier() {
    // Irregular gaps: no period, each wakeup its own timer target.
    let wakes = [1_000_000, 1_003_100, 1_007_900, 1_010_000, 1_016_300];
    let text = idle_woken(&wakes, 0);
    let plain = replay_trace(&text, "idle.txt", &opts()).unwrap();
    assert_eq!(plain.report.skipped.get("cpu_idle"), None);
    let known = ReplayOptions {
        idle_exit_ns: vec![0, 30_000],
        ..opts()
    };
    let r = replay_trace(&text, "idle.txt", &known).unwrap();
    let (p, k) = (
        timer_periods(&plain.workload, "tmr"),
        timer_periods(&r.workload, "tmr"),
    );
    assert_eq!(p.len(), wakes.len());
    // Targets from the first line (0.9 s), less the 50 µs slack; with
    // state 1's exit latency known, each target is 30 µs earlier (so the
    // gaps between them are unchanged).
    assert_eq!(p[0], 100_000_000 - 50_000);
    assert_eq!(k[0], 100_000_000 - 50_000 - 30_000);
    assert_eq!(p[1..], k[1..]);
    // A wakeup that is not the interrupt of an idle exit (the CPU left
    // idle 1 µs before it) is not moved.
    let other = replay_trace(&idle_woken(&wakes, 1), "idle.txt", &known).unwrap();
    assert_eq!(timer_periods(&other.workload, "tmr"), p);
    // The machine presets' table is what for_schedlab_trace takes.
    let m = preset("vm-2cpu").unwrap();
    let o = ReplayOptions::for_schedlab_trace(&m);
    assert_eq!(o.idle_exit_ns, vec![0, 30_000]);
}

#[test]
fn a_cpu_idle_line_without_a_state_is_a_broken_line() {
    let text =
        idle_woken(&[1_000_000], 0).replacen("cpu_idle: state=1 cpu_id=0", "cpu_idle: cpu_id=0", 1);
    let e = replay_trace(&text, "idle.txt", &opts()).unwrap_err();
    assert_eq!(e.kind, ReplayErrorKind::BrokenLine);
    assert_eq!(e.line, 4, "{e}");
    assert!(e.to_string().starts_with("idle.txt:4: cpu_idle"), "{e}");
}

/// A trace in which task "per" (pid 100) is woken at each of `at` (µs) in
/// the interrupt context of "busy" on CPU 0, runs 300 µs on CPU 1 from
/// idle and sleeps again; the trace starts at 1.9 s.
fn timer_wakeups(at: impl IntoIterator<Item = u64>) -> String {
    let mut s = String::from(HEADER);
    s.push_str(&line(
        "busy",
        300,
        0,
        "d..2.",
        1_900_000,
        "tracing_mark_write: x",
    ));
    s.push('\n');
    for w in at {
        for ev in ["sched_waking", "sched_wakeup"] {
            s.push_str(&line(
                "busy",
                300,
                0,
                "d.h2.",
                w,
                &waking(ev, "per", 100, 1),
            ));
            s.push('\n');
        }
        s.push_str(&line(
            "<idle>",
            0,
            1,
            "d..2.",
            w,
            &switch("swapper/1", 0, "R", "per", 100),
        ));
        s.push('\n');
        s.push_str(&line(
            "per",
            100,
            1,
            "d..2.",
            w + 300,
            &switch("per", 100, "S", "swapper/1", 0),
        ));
        s.push('\n');
    }
    s
}

#[test]
fn a_periodic_task_is_replayed_on_its_timer_grid() {
    // 1 ms period; each wakeup comes at its expiry plus a latency of 0 to
    // 37 µs (the slack's end, a deferred interrupt, an idle exit...), in a
    // running task's interrupt context. The replay's timer waits lie on
    // the grid: the latencies are the replaying machine's to make again.
    let lat = [0u64, 5, 30, 0, 12, 37, 0, 3, 30, 30, 0, 8, 21, 0, 30, 5];
    let s = timer_wakeups((0..lat.len() as u64).map(|k| 2_000_000 + k * 1000 + lat[k as usize]));
    let r = replay_trace(&s, "per.txt", &opts()).unwrap();
    let t = r.report.tasks.iter().find(|t| t.comm == "per").unwrap();
    // The period: the exact slope that pairs of wakeups with equal
    // latencies share (the five with none, the four 30 µs idle exits),
    // where the mean gap would give 1 ms + 5 µs / 15.
    assert_eq!(t.period_ns, Some(1_000_000));
    let p = timer_periods(&r.workload, "per");
    assert_eq!(p.len(), lat.len());
    // Exactly on the grid (the traced gaps vary by up to 37 µs): each
    // wakeup's neighbours share the 0 latency.
    assert!(p[1..].iter().all(|&x| x == 1_000_000), "{p:?}");
    // The first: the grid point (the first wakeup, 0 latency), 100 ms
    // after the trace's first line, less the slack.
    assert_eq!(p[0], 100_000_000 - 50_000, "{p:?}");
}

#[test]
fn a_lone_early_timer_wakeup_stays_on_the_grid() {
    // 1 ms period, wakeups at the slack's end but one (the 7th) that
    // another interrupt inside the slack took 7 µs early: the grid keeps
    // the time its neighbours share, where the earliest proposal would
    // move every expiry near it 7 µs early.
    let early = 6;
    let s =
        timer_wakeups((0..16u64).map(|k| 2_000_000 + k * 1000 - if k == early { 7 } else { 0 }));
    let r = replay_trace(&s, "early.txt", &opts()).unwrap();
    let t = r.report.tasks.iter().find(|t| t.comm == "per").unwrap();
    assert_eq!(t.period_ns, Some(1_000_000));
    let p = timer_periods(&r.workload, "per");
    assert_eq!(p[0], 100_000_000 - 50_000, "{p:?}");
    assert!(p[1..].iter().all(|&x| x == 1_000_000), "{p:?}");
}

#[test]
fn a_timer_taken_early_every_other_period_keeps_its_hard_expiry() {
    // 1 ms period against another periodic interrupt (a tick) that falls
    // 26 µs before the hard expiry, inside the 50 µs slack, every other
    // period: the two phases are equally common (8 and 8). The grid is the
    // hard expiry, where the even periods fire; the odd ones' phase is the
    // interrupt's, and the replaying machine's own interrupt takes them
    // early again. (Picking the earlier of the two, the tie rule of
    // event/order.rs set that interrupt and the replayed expiry at the same
    // ns: replay.rs's round trip, periodic beside a hog, tip, seed 4.)
    let s =
        timer_wakeups((0..16u64).map(|k| 2_000_000 + k * 1000 - if k % 2 == 1 { 26 } else { 0 }));
    let r = replay_trace(&s, "beat.txt", &opts()).unwrap();
    let t = r.report.tasks.iter().find(|t| t.comm == "per").unwrap();
    assert_eq!(t.period_ns, Some(1_000_000));
    let p = timer_periods(&r.workload, "per");
    assert_eq!(p.len(), 16);
    assert_eq!(p[0], 100_000_000 - 50_000, "{p:?}");
    assert!(p[1..].iter().all(|&x| x == 1_000_000), "{p:?}");
}

#[test]
fn unknown_events_are_skipped_and_counted() {
    let mut s = periodic(3, 10_000, 100);
    for k in 0..4 {
        s.push_str(&line(
            "tick",
            42,
            1,
            "...1.",
            5_100_000 + k,
            "tracing_mark_write: hello",
        ));
        s.push('\n');
    }
    s.push_str(&line(
        "tick",
        42,
        1,
        "d..2.",
        5_100_010,
        "sched_stat_wait: comm=tick pid=42 delay=1000 [ns]",
    ));
    s.push('\n');
    let r = replay_trace(&s, "u.txt", &opts()).unwrap();
    assert_eq!(r.report.skipped.get("tracing_mark_write"), Some(&4));
    assert_eq!(r.report.skipped.get("sched_stat_wait"), Some(&1));
    assert_eq!(r.report.events_used, 12);
    assert_eq!(r.report.lines, 17);
}

/// `periodic(3, 10_000, 100)` with `sched_stat_runtime` lines of "tick"
/// (time in ns, runtime in ns) in its second activation, the one that
/// starts at 5.010003.
fn periodic_with_runtime_lines(lines: &[(u64, u64)]) -> String {
    let mut s = String::new();
    for l in periodic(3, 10_000, 100).lines() {
        s.push_str(l);
        s.push('\n');
        if l.contains("next_comm=tick") && l.contains(" 5.010003:") {
            for &(t, ns) in lines {
                let ev = format!("sched_stat_runtime: comm=tick pid=42 runtime={ns} [ns]");
                s.push_str(&line("tick", 42, 1, "d..2.", t, &ev));
                s.push('\n');
            }
        }
    }
    s
}

#[test]
fn sched_stat_runtime_gives_the_cpu_time_to_the_ns() {
    // The kernel's runtime lines (ns) replace the span (µs) of the
    // activations they fall in: here two lines in the second activation.
    let s = periodic_with_runtime_lines(&[(5_010_050, 49_900), (5_010_103, 50_311)]);
    let r = replay_trace(&s, "s.txt", &opts()).unwrap();
    assert!(r.report.skipped.is_empty(), "{:?}", r.report.skipped);
    let runs: Vec<u64> = r.workload.tasks[0]
        .program
        .phases
        .iter()
        .map(|ph| match ph.ops[1] {
            Op::Run { work_ns, .. } => work_ns,
            ref o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(runs, [100_000, 100_211, 100_000]);
    // A line without its runtime is broken.
    let bad = s.replace("runtime=49900", "runtime=x");
    let e = err_of(&bad);
    assert_eq!(e.kind, ReplayErrorKind::BrokenLine);
}

#[test]
fn with_complete_runtime_lines_an_activation_without_one_used_no_cpu() {
    // The second activation has its runtime lines, the first and third
    // none. A schedlab trace writes a line at every update with time in it
    // (`runtime_lines_complete`): a switched-out activation without one
    // used no CPU time, and its span is scheduler work (a newidle pass
    // charged after the switch). Other traces keep the span.
    let s = periodic_with_runtime_lines(&[(5_010_050, 99_500)]);
    let work = |o: &ReplayOptions| -> Vec<u64> {
        let r = replay_trace(&s, "s.txt", o).unwrap();
        r.workload.tasks[0]
            .program
            .phases
            .iter()
            .map(|ph| {
                ph.ops
                    .iter()
                    .map(|op| match op {
                        Op::Run { work_ns, .. } => *work_ns,
                        _ => 0,
                    })
                    .sum()
            })
            .collect()
    };
    assert_eq!(work(&opts()), [100_000, 99_500, 100_000]);
    let complete = ReplayOptions {
        runtime_lines_complete: true,
        ..opts()
    };
    assert_eq!(work(&complete), [0, 99_500, 0]);
}

#[test]
fn fork_and_exit_lines_are_read() {
    let mut s = String::from(HEADER);
    for l in [
        line("sh", 10, 0, "d..2.", 1_000_000, "sched_switch: prev_comm=sh prev_pid=10 prev_prio=120 prev_state=R+ ==> next_comm=sh next_pid=10 next_prio=120"),
        line("sh", 10, 0, "...1.", 1_000_100, "sched_process_fork: comm=sh pid=10 child_comm=sh child_pid=11"),
        line("sh", 10, 0, "d..2.", 1_000_110, &waking("sched_wakeup_new", "sh", 11, 1)),
        line("sh", 10, 0, "d..2.", 1_000_200, &switch("sh", 10, "S", "swapper/0", 0)),
        line("<idle>", 0, 1, "d..2.", 1_000_150, &switch("swapper/1", 0, "R", "sh", 11)),
        line("sh", 11, 1, "...1.", 1_000_900, "sched_process_exit: comm=sh pid=11 prio=120 group_dead=1"),
        line("sh", 11, 1, "d..2.", 1_001_000, &switch("sh", 11, "Z", "swapper/1", 0)),
        line("<idle>", 0, 0, "dNh2.", 1_003_000, &waking("sched_waking", "sh", 10, 0)),
        line("sh", 10, 0, "d..2.", 1_003_100, &switch("sh", 10, "S", "swapper/0", 0)),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let r = replay_trace(&s, "f.txt", &opts()).unwrap();
    let w = &r.workload;
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["sh-0", "sh-1"]);
    assert!(w.tasks[1].forked);
    assert_eq!(w.fork_pools, [vec![1]]);
    let ops = &w.tasks[0].program.phases[0].ops;
    assert_eq!(
        ops[1],
        Op::Run {
            work_ns: 110_000,
            config_us: 110,
            perf: 1
        }
    );
    assert_eq!(ops[2], Op::Fork { pool: 0 });
    assert_eq!(
        w.tasks[1].program.phases[0].ops.len(),
        1,
        "{:?}",
        w.tasks[1].program
    );
    assert!(r.report.skipped.is_empty(), "{:?}", r.report.skipped);
    assert_eq!(r.report.tasks[1].forked_by, Some(10));
    let (sim, _) = run(w, "vm-2cpu", None);
    let c = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "sh-1")
        .unwrap();
    assert_eq!(c.stats.runtime_ns - c.stats.sched_work_ns, 850_000);
}

#[test]
fn a_launcher_is_replaced_by_the_start_up() {
    // `go` forks two workers in one activation and never runs again.
    let mut s = String::from(HEADER);
    for l in [
        line(
            "<idle>",
            0,
            0,
            "d..2.",
            1_000_000,
            &switch("swapper/0", 0, "R", "go", 9),
        ),
        line(
            "go",
            9,
            0,
            "d..2.",
            1_000_030,
            &waking("sched_wakeup_new", "go", 10, 1),
        ),
        line(
            "go",
            9,
            0,
            "d..2.",
            1_000_060,
            &waking("sched_wakeup_new", "go", 11, 1),
        ),
        line(
            "go",
            9,
            0,
            "d..2.",
            1_000_070,
            &switch("go", 9, "S", "w1", 11),
        ),
        line(
            "<idle>",
            0,
            1,
            "d..2.",
            1_000_080,
            &switch("swapper/1", 0, "R", "w0", 10),
        ),
        line(
            "w0",
            10,
            1,
            "d..2.",
            1_000_580,
            &switch("w0", 10, "S", "swapper/1", 0),
        ),
        line(
            "w1",
            11,
            0,
            "d..2.",
            1_000_370,
            &switch("w1", 11, "S", "swapper/0", 0),
        ),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let r = replay_trace(&s, "l.txt", &opts()).unwrap();
    let w = &r.workload;
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["w0", "w1"]);
    assert!(w.tasks.iter().all(|t| !t.forked));
    assert!(w.fork_pools.is_empty());
    assert_eq!(
        w.tasks[0].program.phases[0].ops,
        [Op::Run {
            work_ns: 500_000,
            config_us: 500,
            perf: 5
        }]
    );
    let go = &r.report.tasks[0];
    assert!(go.launcher && go.name.is_none());
    // Without the option, `go` forks them.
    let r = replay_trace(
        &s,
        "l.txt",
        &ReplayOptions {
            launchers: false,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(r.workload.tasks.len(), 3);
    assert_eq!(r.workload.fork_pools.len(), 2);
}

#[test]
fn policy_comes_from_prio() {
    let mut s = String::from(HEADER);
    for l in [
        line("<idle>", 0, 0, "d..2.", 1_000_000, "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=fifo next_pid=5 next_prio=89"),
        line("fifo", 5, 0, "d..2.", 1_000_100, "sched_switch: prev_comm=fifo prev_pid=5 prev_prio=89 prev_state=S ==> next_comm=nice next_pid=6 next_prio=125"),
        line("nice", 6, 0, "d..2.", 1_000_200, "sched_switch: prev_comm=nice prev_pid=6 prev_prio=125 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let w = replay_trace(&s, "x.txt", &opts()).unwrap().workload;
    assert_eq!((w.tasks[0].policy, w.tasks[0].nice), (Policy::Fifo, 10));
    assert_eq!((w.tasks[1].policy, w.tasks[1].nice), (Policy::Normal, 5));
}

#[test]
fn kernel_threads_are_kept_unless_dropped() {
    let mut s = String::from(HEADER);
    for l in [
        line(
            "<idle>",
            0,
            0,
            "d..2.",
            1_000_000,
            &switch("swapper/0", 0, "R", "kworker/0:1", 11),
        ),
        line(
            "kworker/0:1",
            11,
            0,
            "d..2.",
            1_000_050,
            &waking("sched_waking", "app", 20, 0),
        ),
        line(
            "kworker/0:1",
            11,
            0,
            "d..2.",
            1_000_060,
            &switch("kworker/0:1", 11, "I", "app", 20),
        ),
        line(
            "app",
            20,
            0,
            "d..2.",
            1_000_300,
            &switch("app", 20, "S", "swapper/0", 0),
        ),
    ] {
        s.push_str(&l);
        s.push('\n');
    }
    let keep = replay_trace(&s, "k.txt", &opts()).unwrap();
    assert_eq!(keep.workload.tasks.len(), 2);
    assert_eq!(keep.workload.tasks[0].name, "kworker_0:1");
    assert_eq!(
        keep.workload.tasks[1].program.phases[0].ops[0],
        Op::SemWait { sem: 0 }
    );
    let drop = replay_trace(
        &s,
        "k.txt",
        &ReplayOptions {
            kernel_threads: false,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(drop.workload.tasks.len(), 1);
    assert!(matches!(
        drop.workload.tasks[0].program.phases[0].ops[0],
        Op::Timer { .. }
    ));
    assert!(drop.report.tasks[0].kernel_thread);
    assert_eq!(drop.report.tasks[0].name, None);
}
