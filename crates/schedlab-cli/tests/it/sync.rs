//! rt-app synchronisation events, hand-checked on small cases: barriers,
//! mutexes, condition variables (incl. a lost signal), semaphores and
//! suspend/resume. All with --check on.

use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::stats::LogRow;
use schedlab_core::{Sim, SimConfig};
use schedlab_workload::load_rtapp;

fn run(json: &str, machine: &str, duration_ms: u64) -> Sim<NullSink> {
    let m = preset(machine).unwrap();
    let w = load_rtapp("t.json", json, m.nr_cpus()).unwrap().workload;
    let cfg = SimConfig {
        check: true,
        duration_ns: Some(duration_ms * 1_000_000),
        ..SimConfig::default()
    };
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    sim
}

fn rows<'a>(sim: &'a Sim<NullSink>, name: &str) -> &'a [LogRow] {
    &sim.threads()
        .iter()
        .find(|t| t.spec.name == name)
        .unwrap()
        .log
}

#[test]
fn barrier_releases_everyone_at_the_last_arrival() {
    // Three threads run 1, 5 and 3 ms then meet; 3 rounds on 4 CPUs. Every
    // round ends for all of them once the slowest (5 ms) arrives.
    let sim = run(
        r#"{"tasks": {
            "a": {"loop": 3, "run": 1000, "barrier": "b"},
            "b": {"loop": 3, "run": 5000, "barrier": "b"},
            "c": {"loop": 3, "run": 3000, "barrier": "b"}},
          "global": {"calibration": 1000}}"#,
        "vm-2cpu",
        100,
    );
    let (a, b, c) = (rows(&sim, "a-0"), rows(&sim, "b-1"), rows(&sim, "c-2"));
    assert_eq!((a.len(), b.len(), c.len()), (3, 3, 3));
    for k in 0..3 {
        // b arrives last: the others' rounds end no earlier than b's run.
        assert!(
            a[k].end + 50 >= b[k].start + 5000,
            "round {k}: a left before b arrived"
        );
        assert!(
            c[k].end + 50 >= b[k].start + 5000,
            "round {k}: c left before b arrived"
        );
        // All are released at b's arrival; on 2 CPUs one of the three may
        // then wait for a CPU behind another's next run. The running thread
        // is rescheduled at an update_curr point past its deadline, not at
        // the end of a run op (rt-app's busy loop ends in user space), so
        // the wait lasts up to a's 1 ms run or the next tick (4 ms at the
        // default HZ 250), whichever comes first, plus the switch costs.
        let bound = 4000 + 200;
        assert!(
            a[k].end.abs_diff(b[k].end) < bound && c[k].end.abs_diff(b[k].end) < bound,
            "round {k}: ends spread {} / {}",
            a[k].end.abs_diff(b[k].end),
            c[k].end.abs_diff(b[k].end)
        );
    }
}

#[test]
fn a_mutex_serialises_its_critical_sections() {
    // Two threads, 5 × (lock, run 1 ms, unlock) each, on 2 CPUs: the ten
    // critical sections cannot overlap, so the whole takes >= 10 ms.
    let sim = run(
        r#"{"tasks": {"t": {"instance": 2, "loop": 5, "lock": "m", "run": 1000, "unlock": "m"}},
           "global": {"calibration": 1000}}"#,
        "vm-2cpu",
        100,
    );
    let all: Vec<&LogRow> = sim.threads().iter().flat_map(|t| t.log.iter()).collect();
    assert_eq!(all.len(), 10);
    let start = all.iter().map(|r| r.start).min().unwrap();
    let end = all.iter().map(|r| r.end).max().unwrap();
    assert!(
        end - start >= 10_000,
        "critical sections overlapped: {} us",
        end - start
    );
    // Each row's run is the 1 ms of work, not the wait for the lock.
    assert!(
        all.iter().all(|r| (1000..1100).contains(&r.run)),
        "{:?}",
        all.iter().map(|r| r.run).collect::<Vec<_>>()
    );
}

#[test]
fn wait_is_woken_by_signal_and_a_signal_with_no_waiter_is_lost() {
    let json = |delay_signal: u64| {
        format!(
            r#"{{"tasks": {{
                "w": {{"loop": 1, "lock": "m", "wait": {{"ref": "c", "mutex": "m"}}, "unlock": "m"}},
                "s": {{"loop": 1, "sleep": {delay_signal}, "lock": "m", "signal": "c", "unlock": "m"}}}},
              "global": {{"calibration": 1000}}}}"#
        )
    };
    // The signal comes 2 ms after the wait: the waiter finishes after it.
    let sim = run(&json(2000), "vm-2cpu", 50);
    let w = rows(&sim, "w-0");
    assert_eq!(w.len(), 1, "waiter never woken");
    assert!(w[0].end >= rows(&sim, "s-1")[0].start + 2000);
    // Signal before anyone waits (the waiter is delayed by a 5 ms start
    // delay): lost, the waiter sleeps until the end.
    let lost = r#"{"tasks": {
            "w": {"delay": 5000, "loop": 1, "lock": "m", "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"},
            "s": {"loop": 1, "lock": "m", "signal": "c", "unlock": "m"}},
          "global": {"calibration": 1000}}"#;
    let sim = run(lost, "vm-2cpu", 50);
    assert_eq!(rows(&sim, "w-0").len(), 0, "a lost signal woke the waiter");
}

#[test]
fn semaphore_posts_are_remembered() {
    let sim = run(
        r#"{"tasks": {
            "p": {"loop": 1, "sem_post": "x"},
            "w": {"delay": 3000, "loop": 1, "sem_wait": "x"}},
          "global": {"calibration": 1000}}"#,
        "vm-2cpu",
        50,
    );
    assert_eq!(rows(&sim, "w-1").len(), 1, "the earlier post was forgotten");
}

#[test]
fn a_posted_token_goes_to_whoever_waits_first() {
    // w sleeps in sem_wait on CPU 1. p (CPU 0) posts, which wakes w, then
    // waits on the same semaphore at once: glibc does not reserve the
    // token for the woken waiter, so p takes it back and w, once awake,
    // finds none and sleeps again. p loops; w never gets through.
    let sim = run(
        r#"{"tasks": {
            "p": {"cpus": [0], "delay": 1000, "sem_post": "x", "sem_wait": "x", "run": 5000},
            "w": {"cpus": [1], "sem_wait": "x", "run": 5000}},
          "global": {"calibration": 1000}}"#,
        "vm-2cpu",
        200,
    );
    let (p, w) = (rows(&sim, "p-0").len(), rows(&sim, "w-1").len());
    assert!(p >= 35 && w == 0, "p {p} loops, w {w}");
    let w = &sim.threads()[1];
    assert!(
        w.stats.wakeups >= 35,
        "w was woken {} times",
        w.stats.wakeups
    );
}

#[test]
fn resume_wakes_every_suspended_instance() {
    let sim = run(
        r#"{"tasks": {
            "a": {"instance": 2, "loop": 1, "suspend": "", "run": 100},
            "b": {"loop": 1, "sleep": 1000, "resume": "a"}},
          "global": {"calibration": 1000}}"#,
        "a7-octa",
        50,
    );
    // b resumes them after its 1 ms sleep, counted from b's own start (the
    // instances may start later, after their CPUs' idle exit).
    let b = rows(&sim, "b-2")[0].start;
    for name in ["a-0", "a-1"] {
        let r = rows(&sim, name);
        assert_eq!(r.len(), 1, "{name} not resumed");
        assert!(r[0].end >= b + 1000 + 100, "{name} ran before the resume");
    }
}

/// Runs one of rt-app's own examples (`../shared/fixtures`, see
/// [`crate::common::rt_app_examples`]) to its own end (its loops, or its
/// `duration`) on `machine` with --check.
fn run_example(test: &str, rel: &str, machine: &str) -> Sim<NullSink> {
    let path = crate::common::rt_app_examples(test).join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let m = preset(machine).unwrap();
    let loaded = load_rtapp(&path.to_string_lossy(), &text, m.nr_cpus()).unwrap();
    let w = loaded.workload;
    let cfg = SimConfig {
        check: true,
        duration_ns: w.duration_ns,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{rel}: {:?}", res.violation);
    sim
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn example5_rows_hand_checked() {
    // thread0: p0 once + p1 8 times = 9 rows. thread1 (3 loops) needs per
    // loop one `signal` while it waits and two `resume`s while suspended;
    // thread0 gives one of each per 200 ms p1 round, and signals and
    // resumes that find nobody waiting are lost, so thread1's loops end
    // on rounds 2, 4 and 6 (hand-worked: wait, suspend, suspend per loop).
    for machine in ["a7-octa", "vm-2cpu"] {
        let sim = run_example(
            "sync::example5_rows_hand_checked",
            "tutorial/example5.json",
            machine,
        );
        assert!(!sim.deadlock, "{machine}: ended in a deadlock");
        let (t0, t1) = (rows(&sim, "thread0-0"), rows(&sim, "thread1-1"));
        assert_eq!((t0.len(), t1.len()), (9, 3), "{machine}");
        for (k, r) in t1.iter().enumerate() {
            // thread1's loop k ends with the resume of thread0's row 2k+2
            // (after its 120 ms of lock/run/unlock/run), plus 10 ms of run.
            let resume = t0[2 * k + 2].start + 120_000;
            assert!(
                r.end >= resume + 10_000 && r.end < resume + 12_000,
                "{machine} loop {k}: ends at {} us, resume at {resume} us",
                r.end
            );
        }
    }
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn mp3_short_rows_hand_checked() {
    // 6 s. AudioTick: one row per 6 ms timer period; the 1000th period
    // ends just after the 6 s cut (the thread starts a little after t=0):
    // 999 rows. It resumes AudioOut once per 5 periods (30 ms): 200
    // resumes, the first lost because AudioOut is still running its first
    // loop, so AudioOut completes 199 loops (a loop ends when its suspend
    // returns). AudioOut resumes AudioTrack once per loop it starts (200);
    // AudioTrack resumes mp3.decoder (200), which hands over to OMXCall
    // with signal/wait on "queue" and back (200 each).
    for machine in ["a7-octa", "vm-2cpu"] {
        let sim = run_example(
            "sync::mp3_short_rows_hand_checked",
            "mp3-short.json",
            machine,
        );
        assert!(!sim.deadlock, "{machine}");
        let n: Vec<usize> = [
            "AudioTick-0",
            "AudioOut-1",
            "AudioTrack-2",
            "mp3.decoder-3",
            "OMXCall-4",
        ]
        .iter()
        .map(|t| rows(&sim, t).len())
        .collect();
        assert_eq!(n, [999, 199, 200, 200, 200], "{machine}");
        // AudioOut's loop k+1 starts when its loop k ends (resumed): 275 us
        // of run, then its resume wakes AudioTrack, which runs 300 us. On
        // top: wakeup, context switch and the idle-state exit of AudioTrack's
        // CPU (up to 700 us from cluster-sleep on a7-octa).
        let (out, track) = (rows(&sim, "AudioOut-1"), rows(&sim, "AudioTrack-2"));
        for k in 0..out.len() {
            let d = track[k + 1].end - out[k].end;
            assert!(
                (575..1_600).contains(&d),
                "{machine} loop {k}: AudioTrack ends {d} us after AudioOut's resume"
            );
        }
    }
}

#[test]
fn normal_mutexes_let_the_unlocker_barge_pi_mutexes_hand_over() {
    // a and b, each on its own CPU, loop lock / run 5 ms / unlock with no
    // gap. A glibc normal mutex is free after the unlock: the unlocker
    // takes it again before the woken waiter (on another CPU, still
    // waking up) gets there, so the first owner keeps it. A PI futex hands
    // it to the waiter at the unlock, so the two alternate.
    let w = |pi: bool| {
        format!(
            r#"{{"tasks": {{
                "a": {{"cpus": [0], "lock": "m", "run": 5000, "unlock": "m"}},
                "b": {{"cpus": [1], "lock": "m", "run": 5000, "unlock": "m"}}}},
              "global": {{"calibration": 1000, "pi_enabled": {pi}}}}}"#
        )
    };
    let sim = run(&w(false), "vm-2cpu", 200);
    let (a, b) = (rows(&sim, "a-0").len(), rows(&sim, "b-1").len());
    assert!(
        a.min(b) <= 1 && a.max(b) >= 35,
        "normal mutex: {a} / {b} loops"
    );
    let sim = run(&w(true), "vm-2cpu", 200);
    let (a, b) = (rows(&sim, "a-0").len(), rows(&sim, "b-1").len());
    assert!(
        a.abs_diff(b) <= 1 && a + b >= 35,
        "PI mutex: {a} / {b} loops"
    );
}

/// Timer wake-ups of each watched thread (sched_wakeup times).
#[derive(Default)]
struct TimerWakeups(std::collections::BTreeMap<String, Vec<u64>>);

impl schedlab_core::observe::Sink for TimerWakeups {
    fn wants_trace(&self) -> bool {
        true
    }
    fn trace(&mut self, rec: &schedlab_core::observe::TraceRecord<'_>) {
        if let schedlab_core::observe::TraceEvent::SchedWakeup { task, .. } = &rec.event {
            self.0
                .entry(task.comm.to_string())
                .or_default()
                .push(rec.time);
        }
    }
}

/// Two threads on two CPUs whose timer event names one shared timer:
/// rt-app keeps one `next` per timer object and every user advances it by
/// the period (formats-spec.md 1.8), so the threads are woken on the ticks of
/// one grid T0 + kP, taking turns; with unique timers each thread has its
/// own grid and both wake on every tick.
#[test]
fn a_shared_timer_wakes_its_threads_on_one_grid() {
    use schedlab_core::program::{Op, TimerRef, TimerSpec};
    use schedlab_core::time::NSEC_PER_MSEC;
    let p = 10 * NSEC_PER_MSEC;
    let run = |shared: bool| {
        let mk = |name: &str, i: u32, timer: u32| {
            let mut t = crate::common::task(
                name,
                i,
                schedlab_core::program::Policy::Normal,
                0,
                vec![
                    crate::common::run_op(NSEC_PER_MSEC),
                    Op::Timer {
                        timer: TimerRef(timer),
                        period_ns: p,
                    },
                ],
            );
            t.cpus = Some(vec![i]);
            t
        };
        let w = schedlab_core::program::Workload {
            tasks: vec![mk("a", 0, 0), mk("b", 1, if shared { 0 } else { 1 })],
            timers: vec![
                TimerSpec {
                    name: "tick".into(),
                    absolute: false,
                },
                TimerSpec {
                    name: "tick@b".into(),
                    absolute: false,
                },
            ],
            log_basename: "rt-app".into(),
            calibration_ns: 100,
            ..Default::default()
        };
        let cfg = schedlab_core::SimConfig {
            seed: 4,
            duration_ns: Some(300 * NSEC_PER_MSEC),
            check: true,
            ..Default::default()
        };
        let mut sim = schedlab_core::Sim::new(
            schedlab_core::machine::preset("vm-2cpu").unwrap(),
            &w,
            cfg,
            TimerWakeups::default(),
        )
        .unwrap();
        assert!(sim.run().violation.is_none());
        let t0 = sim.t0.unwrap();
        let s = sim.into_sink();
        // Grid index of each timer wake-up (k with T0 + kP ≤ wake <
        // T0 + kP + 1 ms); the start barrier's release (k = 0) is not one.
        let ks = |n: &str| -> Vec<u64> {
            s.0[n]
                .iter()
                .filter(|&&w| w >= t0 + p)
                .map(|&w| {
                    let k = (w - t0) / p;
                    assert!(
                        (w - t0) % p < NSEC_PER_MSEC,
                        "{n} woke {} ns off the grid",
                        (w - t0) % p
                    );
                    k
                })
                .collect()
        };
        (ks("a"), ks("b"))
    };
    let (a, b) = run(true);
    // Shared: together they take every tick once, in turns.
    let mut all: Vec<u64> = a.iter().chain(&b).copied().collect();
    all.sort();
    assert!(all.len() >= 25, "{all:?}");
    assert!(
        all.windows(2).all(|w| w[1] == w[0] + 1),
        "shared grid has gaps or doubles: {all:?}"
    );
    assert!(
        a.iter().all(|k| !b.contains(k)),
        "two threads on one tick: {a:?} {b:?}"
    );
    // Unique: each wakes on every tick of its own grid, the same ticks.
    let (a, b) = run(false);
    assert!(a.windows(2).all(|w| w[1] == w[0] + 1), "{a:?}");
    assert_eq!(
        a, b,
        "unique timers with the same period and T0 tick together"
    );
}
