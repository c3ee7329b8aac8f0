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
        assert!(
            a[k].end.abs_diff(b[k].end) < 200 && c[k].end.abs_diff(b[k].end) < 200,
            "round {k}: ends spread"
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
fn resume_wakes_every_suspended_instance() {
    let sim = run(
        r#"{"tasks": {
            "a": {"instance": 2, "loop": 1, "suspend": "", "run": 100},
            "b": {"loop": 1, "sleep": 1000, "resume": "a"}},
          "global": {"calibration": 1000}}"#,
        "a7-octa",
        50,
    );
    for name in ["a-0", "a-1"] {
        let r = rows(&sim, name);
        assert_eq!(r.len(), 1, "{name} not resumed");
        assert!(
            r[0].end >= r[0].start + 1000,
            "{name} ran before the resume"
        );
    }
}
