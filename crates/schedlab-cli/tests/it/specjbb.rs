//! The `specjbb:` generator: the hand-off and stop-the-world semantics on
//! a case small enough to count by hand (one injector, two workers, one
//! GC thread, vm-2cpu), time to safepoint bounded by the poll interval,
//! the CLI's table under `--check`, determinism, and broken specs.

use crate::common::{assert_success, describe, schedlab};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy, TaskSpec, Workload};
use schedlab_core::{Sim, SimConfig};
use schedlab_workload::specjbb::{specjbb, PROBE_PAUSE, PROBE_RESPONSE, PROBE_TTSP};

const MS: u64 = 1_000_000;

/// Runs `specjbb:REST` on vm-2cpu for `ms` under the invariant checker.
fn run(rest: &str, ms: u64) -> Sim<NullSink> {
    let m = preset("vm-2cpu").unwrap();
    let mut w = specjbb("specjbb:", rest, m.nr_cpus()).unwrap().workload;
    w.duration_ns = Some(ms * MS);
    let cfg = SimConfig {
        check: true,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    assert!(!sim.deadlock, "deadlock");
    sim
}

fn thread<'a>(sim: &'a Sim<NullSink>, name: &str) -> &'a schedlab_core::task::Task {
    sim.threads()
        .iter()
        .find(|t| t.spec.name == name)
        .unwrap_or_else(|| panic!("no thread {name}"))
}

const TINY: &str = "injectors=1,workers=2,stage2=0,tx_us=1000,poll_us=1000";

#[test]
fn one_injector_two_workers_every_request_is_one_wakeup_each_way() {
    // Without GC. One request is in flight at a time, so by hand:
    // * every post finds both workers... one worker asleep on the request
    //   semaphore (the other is asleep too, or just done): each request
    //   is exactly one worker wakeup, and the workers take turns (the
    //   semaphore's waiters are FIFO);
    // * every reply finds the injector asleep (a transaction is 1 ms of
    //   CPU): each reply is exactly one injector wakeup;
    // * plus the one start-up wakeup of every thread (rt-app's start).
    let sim = run(&format!("{TINY},gc_every_us=0"), 50);
    let resp = &sim.prog.probes[PROBE_RESPONSE as usize];
    let rep = resp.len() as u64;
    let txi = thread(&sim, "jbb-txi-0");
    let (w0, w1) = (thread(&sim, "jbb-worker-0"), thread(&sim, "jbb-worker-1"));
    // ~1 ms per transaction: 40 to 50 in 50 ms (start-up included).
    assert!((40..=50).contains(&rep), "{rep} replies");
    // The injector's transactions: one loop per response.
    assert_eq!(txi.stats.loops, rep);
    assert_eq!(txi.stats.wakeups, 1 + rep);
    // Each request woke exactly one worker, but the first: posted as
    // every thread starts, before either worker sleeps, it is taken
    // without sleeping. The last request may be in flight.
    let req = w0.stats.wakeups - 1 + w1.stats.wakeups - 1 + 1;
    assert!(
        req == rep || req == rep + 1,
        "{req} requests, {rep} replies"
    );
    assert_eq!(w0.stats.loops + w1.stats.loops, rep);
    assert!(w0.stats.loops.abs_diff(w1.stats.loops) <= 1, "turns");
    // Response time = the transaction's CPU plus the hand-offs' costs and
    // wakeups: never less than 1 ms, and the same path every time, so
    // within a few µs of one another (idle exit and tick aside).
    let m = preset("vm-2cpu").unwrap();
    let exit = m
        .idle_states
        .iter()
        .map(|s| s.exit_latency_ns)
        .max()
        .unwrap();
    for (k, &(s, e)) in resp.iter().enumerate() {
        let r = e - s;
        assert!(
            (MS..MS + 2 * exit + 100_000).contains(&r),
            "response {k}: {r} ns"
        );
    }
    // No GC: the VM thread only handed out the gate's tokens.
    assert!(sim.prog.probes[PROBE_PAUSE as usize].is_empty());
}

#[test]
fn a_pause_stops_every_worker_and_runs_the_gc_thread() {
    // GC every 10 ms, 1 ms of GC work, no polls (a transaction is one
    // 1 ms chunk): the VM thread waits for the running worker's
    // transaction to end (time to safepoint up to 1 ms), runs the GC
    // thread, releases.
    let sim = run(
        &format!("{TINY},gc_threads=1,gc_us=1000,gc_every_us=10000"),
        100,
    );
    let pauses = &sim.prog.probes[PROBE_PAUSE as usize];
    let ttsp = &sim.prog.probes[PROBE_TTSP as usize];
    let gc = thread(&sim, "jbb-gc-0");
    // By hand: 100 ms / (10 ms sleep + ~0.5 ms to safepoint + ~1 ms of
    // GC) = 8.7: 8 pauses done, the 9th under way or not started.
    assert_eq!(pauses.len(), 8, "{pauses:?}");
    assert!(ttsp.len() == 8 || ttsp.len() == 9);
    // The GC thread: one start-up wakeup plus one per pause started, one
    // loop per pause done (or the one under way).
    assert!(gc.stats.loops == 8 || gc.stats.loops == 9);
    assert_eq!(gc.stats.wakeups, 1 + ttsp.len() as u64);
    // It ran 1 ms per pause (plus its two semaphore calls).
    assert!(gc.stats.runtime_ns >= gc.stats.loops * MS);
    for (k, (&(s, stop), &(s2, end))) in ttsp.iter().zip(pauses).enumerate() {
        assert_eq!(s, s2, "pause {k}: one start");
        // Safepoint reached within one transaction; the pause holds the
        // GC work.
        assert!(stop - s <= MS + 100_000, "pause {k}: ttsp {} ns", stop - s);
        assert!(end - stop >= MS, "pause {k}: {} ns stopped", end - stop);
        // Stopped means stopped: after the reply of the transaction that
        // reached the safepoint (posted just after its mutex was handed
        // over), no reply until the release.
        let during = sim.prog.probes[PROBE_RESPONSE as usize]
            .iter()
            .filter(|&&(_, e)| e > stop + 50_000 && e < end)
            .count();
        assert_eq!(during, 0, "pause {k}: replies while stopped");
    }
    // Transactions still flow between pauses: ~90 ms of 1 ms each.
    let rep = sim.prog.probes[PROBE_RESPONSE as usize].len();
    assert!((70..=90).contains(&rep), "{rep} replies");
    // The VM thread: a timer wakeup per pause, a wakeup when the running
    // worker hands over its mutex, and at most one for the GC's done post.
    let vm = thread(&sim, "jbb-vm-0");
    let n = ttsp.len() as u64;
    assert!(
        (1 + 2 * n..=1 + 3 * n + 1).contains(&vm.stats.wakeups),
        "{} VM wakeups for {n} pauses",
        vm.stats.wakeups
    );
}

#[test]
fn polls_bound_the_time_to_safepoint() {
    // 1 ms transactions polled every 250 µs: a running worker stops within
    // one chunk; without polls it runs its transaction to the end. The two
    // workers may share a CPU at arming (one running, one waiting for
    // it): then they reach their polls one after the other, so the bound
    // is two chunks.
    let worst = |poll: u64| {
        let sim = run(
            &format!("injectors=2,workers=2,stage2=0,tx_us=1000,poll_us={poll},gc_threads=1,gc_us=500,gc_every_us=5000"),
            100,
        );
        let t = &sim.prog.probes[PROBE_TTSP as usize];
        assert!(t.len() >= 10, "{} pauses", t.len());
        t.iter().map(|&(s, e)| e - s).max().unwrap()
    };
    let polled = worst(250);
    let unpolled = worst(1000);
    assert!(polled <= 2 * 250_000 + 50_000, "polled ttsp {polled} ns");
    assert!(unpolled > 600_000, "unpolled ttsp {unpolled} ns");
}

#[test]
fn the_nested_hand_off_goes_through_the_stage2_pool() {
    // Every 2nd transaction of a worker hands off 300 µs to stage 2.
    let sim = run(
        "injectors=2,workers=2,stage2=1,stage2_every=2,stage2_us=300,tx_us=500,gc_every_us=0",
        50,
    );
    let s2 = thread(&sim, "jbb-stage2-0");
    let w: u64 = ["jbb-worker-0", "jbb-worker-1"]
        .iter()
        .map(|n| thread(&sim, n).stats.loops)
        .sum();
    // A worker's loops count its transactions (phase iterations): one
    // plain, one nested, in turn; the stage-2 thread served one request
    // per nested transaction, i.e. half of them.
    let responses = sim.prog.probes[PROBE_RESPONSE as usize].len() as u64;
    assert!(w.abs_diff(responses) <= 2, "{w} vs {responses}");
    assert!(
        s2.stats.loops.abs_diff(w / 2) <= 2,
        "{} stage-2 loops vs {w} worker loops, {responses} replies",
        s2.stats.loops,
    );
    assert!(s2.stats.runtime_ns >= s2.stats.loops * 300_000);
}

#[test]
fn cli_prints_the_table_under_check() {
    let dir = tempfile::tempdir().unwrap();
    let out = schedlab([
        "run",
        "specjbb:injectors=8,workers=6,stage2=2,gc_us=1000,gc_every_us=20000,warmup_us=20000",
        "--machine",
        "a7-octa",
        "--duration",
        "200ms",
        "--check",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let text = assert_success(&out);
    let at = text.find("specjbb: ").expect("no specjbb table");
    let l: Vec<&str> = text[at..].lines().collect();
    assert!(l[0].contains(" jOPS ("), "{}", l[0]);
    assert!(l[1].starts_with("response (us)") && l[1].contains("p99.9"));
    assert!(l[3].starts_with("responses within: 10 ms "));
    assert!(l[4].starts_with("GC: "), "{}", l[4]);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap())
            .unwrap();
    let j = &s["specjbb"];
    let n = j["transactions"].as_u64().unwrap();
    assert!(n > 100, "{n}");
    assert_eq!(s["throughput_per_s"], j["jops"]);
    // 180 ms measured.
    let jops = j["jops"].as_f64().unwrap();
    assert!((jops - n as f64 / 0.18).abs() < 1.0, "{jops} vs {n}");
    let r = &j["response_us"];
    let p: Vec<f64> = ["p50", "p90", "p99", "p99.9", "max"]
        .iter()
        .map(|k| r[*k].as_f64().unwrap())
        .collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{p:?}");
    assert!(j["gc"]["pauses"].as_u64().unwrap() >= 5);
}

#[test]
fn same_seed_same_bytes() {
    crate::common::assert_same_bytes_twice(&[
        "specjbb:injectors=4,workers=3,stage2=1,gc_us=500,gc_every_us=10000",
        "--machine",
        "a7-octa",
        "--duration",
        "100ms",
    ]);
}

#[test]
fn broken_specs_are_one_line_exit_2() {
    for (spec, needle) in [
        ("specjbb:workers=0", "key 'workers'"),
        ("specjbb:tx_us=0", "key 'tx_us'"),
        ("specjbb:tx_us=10000001", "key 'tx_us'"),
        ("specjbb:stage2=0,stage2_every=3", "stage2=0"),
        ("specjbb:gc_threads=0", "gc_threads"),
        ("specjbb:worker=4", "unknown key 'worker'"),
        ("specjbb:workers=x", "not a non-negative integer"),
        ("specjbb:workers", "is not key=value"),
        ("specjbb:workers=1,workers=2", "twice"),
        ("specjbb:workers=18446744073709551615,injectors=1", "absurd"),
        ("specjbb:rate=18446744073709551615", "key 'rate'"),
        ("specjbb:warmup_us=99999999999999", "warmup_us"),
        ("specjbb:cgroup=x", "key 'cgroup'"),
    ] {
        let out = schedlab(["run", spec, "--machine", "a7-octa", "--duration", "10ms"]);
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{spec}: {err}");
        assert!(err.contains(needle), "{spec}: {err}");
        assert!(err.contains(spec), "{spec}: the place is named: {err}");
        assert!(out.stdout.is_empty(), "{spec}");
    }
}

#[test]
fn a_program_too_big_for_memory_is_refused_before_it_is_built() {
    // 10 s transactions polled every µs: 10 million chunks, ~50 million
    // ops per worker, ~190 GiB for 64 workers. Refused at once (sized
    // from the op counts, nothing built), one line, exit 2, nothing
    // written.
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let spec = "specjbb:workers=64,tx_us=10000000,poll_us=1";
    let out = schedlab([
        "run",
        spec,
        "--machine",
        "a7-octa",
        "--duration",
        "1ms",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for want in [spec, "GiB of memory", "10000000 CPU chunks", "available"] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    assert!(out.stdout.is_empty());
    assert!(!out_dir.exists(), "nothing written");
}

#[test]
fn rate_mode_issues_the_requested_rate() {
    // 400 requests/s from 2 injectors: one every 5 ms each, 1 ms of CPU
    // per transaction, no GC: the pool keeps up, so ~400 in 1 s (the
    // first period starts after the threads' start-up).
    let sim = run(
        "injectors=2,workers=2,stage2=0,tx_us=1000,rate=400,gc_every_us=0",
        1000,
    );
    let reqs = &sim.prog.probes[PROBE_RESPONSE as usize];
    // Responses; at most one request per injector is still in flight.
    let req = reqs.len() as u64 + 1;
    // Each injector: one request per 5 ms from its first one (after the
    // threads' start-up) to the end of the run.
    let first = reqs[0].0;
    let per = (sim.t_start + 1000 * MS - first).div_ceil(5 * MS);
    assert!(
        req.abs_diff(2 * per) <= 2,
        "{req} requests, {per} periods each"
    );
    assert!((380..=400).contains(&req), "{req} requests");
    // The grid is kept: every request starts on a 5 ms tick of the first
    // one, late only by its timer's wakeup (timer slack, idle exit, the
    // switch), never drifting.
    let late = reqs
        .iter()
        .map(|&(s, _)| (s - first) % (5 * MS))
        .max()
        .unwrap();
    assert!(late < 200_000, "a request {late} ns after its tick");
}

#[test]
fn replies_go_to_the_thread_that_asked() {
    // Four injectors, two workers, nested hand-offs to one stage-2 thread
    // (every 2nd transaction): requests finish out of order. Each
    // injector waits on its own reply semaphore, so every response it
    // measures spans its own request's transaction: at least 500 µs of
    // CPU. A shared reply semaphore let an injector take another's reply
    // token and read a response of a few µs.
    let sim = run(
        "injectors=4,workers=2,stage2=1,stage2_every=2,stage2_us=300,tx_us=500,gc_every_us=0",
        100,
    );
    let resp = &sim.prog.probes[PROBE_RESPONSE as usize];
    assert!(resp.len() > 100, "{} responses", resp.len());
    let shortest = resp.iter().map(|&(s, e)| e - s).min().unwrap();
    assert!(shortest >= 500_000, "a response of {shortest} ns");
    // Every injector is answered: loops = responses, each one at a time.
    let per: Vec<u64> = (0..4)
        .map(|i| thread(&sim, &format!("jbb-txi-{i}")).stats.loops)
        .collect();
    assert_eq!(per.iter().sum::<u64>(), resp.len() as u64, "{per:?}");
    assert!(per.iter().all(|&n| n > 20), "{per:?}");
    // A nested transaction's worker is answered by the stage-2 thread:
    // the stage-2 thread served one request per nested transaction.
    let s2 = thread(&sim, "jbb-stage2-0");
    let w: u64 = (0..2)
        .map(|i| thread(&sim, &format!("jbb-worker-{i}")).stats.loops)
        .sum();
    assert!(s2.stats.loops.abs_diff(w / 2) <= 2);
}

/// A two-task workload: `a` runs `a_ops`, `b` runs `b_ops`, 2 semaphores.
fn two_tasks(a_ops: Vec<Op>, b_ops: Vec<Op>) -> Workload {
    Workload {
        sems: 2,
        tasks: vec![
            TaskSpec::looping("a", 0, Policy::Normal, a_ops),
            TaskSpec::looping("b", 1, Policy::Normal, b_ops),
        ],
        duration_ns: Some(MS),
        ..Default::default()
    }
}

#[test]
fn addressed_semaphores_are_checked_before_the_run() {
    let m = || preset("vm-2cpu").unwrap();
    let refuse = |w: Workload, needle: &str| {
        let e = Sim::new(m(), &w, SimConfig::default(), NullSink)
            .err()
            .unwrap_or_else(|| panic!("accepted; wanted {needle}"))
            .to_string();
        assert!(e.contains(needle), "{e}");
        assert!(!e.contains('\n'));
    };
    // Posted with and without an address: tokens and addresses would no
    // longer pair.
    refuse(
        two_tasks(
            vec![Op::SemSend { sem: 0, reply: 1 }, Op::SemWait { sem: 1 }],
            vec![Op::SemPost { sem: 0 }, Op::SemWait { sem: 0 }, Op::SemReply],
        ),
        "both with a reply address",
    );
    // A reply address out of range.
    refuse(
        two_tasks(
            vec![Op::SemSend { sem: 0, reply: 2 }],
            vec![Op::SemWait { sem: 0 }, Op::SemReply],
        ),
        "replies to semaphore 2",
    );
    // A reply with only plain-posted semaphores to take from.
    refuse(
        two_tasks(
            vec![Op::SemPost { sem: 0 }],
            vec![Op::SemWait { sem: 0 }, Op::SemReply],
        ),
        "no reply address",
    );
    // A server whose queue nobody posts is accepted (it never replies):
    // the specjbb generator's stage-2 pool with stage2_every=0.
    Sim::new(
        m(),
        &two_tasks(
            vec![Op::SemPost { sem: 1 }],
            vec![Op::SemWait { sem: 0 }, Op::SemReply],
        ),
        SimConfig::default(),
        NullSink,
    )
    .expect("an idle server is accepted");
    // The well-formed pair runs under the checker: `a` asks, `b` answers
    // to `a`'s semaphore, `a` wakes once per answer.
    let w = two_tasks(
        vec![Op::SemSend { sem: 0, reply: 1 }, Op::SemWait { sem: 1 }],
        vec![Op::SemWait { sem: 0 }, Op::SemReply],
    );
    let cfg = SimConfig {
        check: true,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(m(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let (a, b) = (thread(&sim, "a"), thread(&sim, "b"));
    // Each round trip is two cross-CPU wakeups (~20 µs on vm-2cpu).
    assert!(a.stats.loops > 20, "{} round trips", a.stats.loops);
    assert!(a.stats.loops.abs_diff(b.stats.loops) <= 1);
}
