//! The `schbench:` generator: the request and wakeup latencies on cases
//! small enough to check by hand, rate mode, the CLI's percentile table
//! under `--check` on two presets, determinism, and broken specs.

use crate::common::{assert_success, describe, schedlab};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::sched::syscall_cost::{scale_host_ns, SyscallCosts};
use schedlab_core::{Sim, SimConfig};
use schedlab_workload::schbench::{schbench, PROBE_REQUEST, PROBE_WAKEUP};

/// Runs `schbench:REST` on `machine` under the invariant checker, every
/// thread pinned to CPU 0 when `one_cpu`.
fn run(rest: &str, machine: &str, one_cpu: bool) -> Sim<NullSink> {
    let m = preset(machine).unwrap();
    let mut w = schbench("schbench:", rest, m.nr_cpus()).unwrap().workload;
    if one_cpu {
        for t in &mut w.tasks {
            t.cpus = Some(vec![0]);
        }
    }
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

/// The default request's CPU work on `machine` (5 × 104³ multiply-adds).
fn work_ns(machine: &str) -> u64 {
    scale_host_ns(
        &preset(machine).unwrap().costs,
        5 * 104 * 104 * 104 * 343 / 1000,
    )
}

#[test]
fn one_worker_on_one_cpu_without_sleep_requests_take_the_work() {
    // Nothing else runs while the worker computes (the message thread
    // sleeps until posted), so each request is the work and nothing else.
    let sim = run("m=1,t=1,r=1,s=0,L", "vm-2cpu", true);
    let w = work_ns("vm-2cpu");
    assert_eq!(w, 2_893_711, "1.929 ms on the host, x1.5 on vm-2cpu");
    let req = &sim.prog.probes[PROBE_REQUEST as usize];
    assert!(req.len() >= 300, "{} requests in 1 s", req.len());
    // Each request is the work plus whatever scheduler work (tick-time
    // balancing) stalled CPU 0 meanwhile: never less than the work, most
    // exactly the work, and the excess all of it CPU 0's overhead.
    assert!(req.iter().all(|&(s, e)| e - s >= w));
    let exact = req.iter().filter(|&&(s, e)| e - s == w).count();
    assert!(2 * exact > req.len(), "{exact} of {} exact", req.len());
    let excess: u64 = req.iter().map(|&(s, e)| e - s - w).sum();
    assert!(excess <= sim.acct.cpu_stats[0].sched_overhead_ns);
    // Wakeup: the message thread's post (cmpxchg + FUTEX_WAKE) and its own
    // wait (cmpxchg + FUTEX_WAIT), the wakeup and one context switch,
    // all on CPU 0; at least the two syscalls, at most everything.
    let c = SyscallCosts::for_machine(&preset("vm-2cpu").unwrap().costs);
    let costs = preset("vm-2cpu").unwrap().costs;
    let floor = 2 * (c.mutex + c.futex);
    let ceil = floor + costs.wakeup_ns + costs.context_switch_ns + c.mutex;
    let wake = &sim.prog.probes[PROBE_WAKEUP as usize];
    assert!(wake.len() >= req.len());
    for &(s, e) in wake.iter().skip(1) {
        assert!(
            (floor..=ceil).contains(&(e - s)),
            "wakeup {} ns not in {floor}..={ceil}",
            e - s
        );
    }
}

#[test]
fn one_worker_request_is_sleep_plus_work_plus_timer_costs() {
    let sim = run("m=1,t=1,r=1,s=100,L", "vm-2cpu", true);
    let m = preset("vm-2cpu").unwrap();
    let w = work_ns("vm-2cpu");
    let slack = SimConfig::default().tunables.timer_slack_ns;
    let exit = m
        .idle_states
        .iter()
        .map(|s| s.exit_latency_ns)
        .max()
        .unwrap();
    let lo = 100_000 + w;
    let hi = lo + slack + exit + m.costs.wakeup_ns + m.costs.context_switch_ns;
    let req = &sim.prog.probes[PROBE_REQUEST as usize];
    assert!(!req.is_empty());
    for &(s, e) in req {
        assert!(
            (lo..=hi).contains(&(e - s)),
            "request {} ns not in {lo}..={hi}",
            e - s
        );
    }
    // Every completed request is one worker loop.
    let worker = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "schbench-worker-0")
        .unwrap();
    assert_eq!(worker.stats.loops, req.len() as u64);
}

#[test]
fn rate_mode_serves_the_requested_rate() {
    // 200 requests/s over 2 message threads of 2 workers, 3 s: each
    // second's 100 + 100 requests are posted at its start and served.
    let sim = run("m=2,t=2,r=3,R=200,L", "a7-octa", false);
    let req = sim.prog.probes[PROBE_REQUEST as usize].len();
    assert!((590..=600).contains(&req), "{req} requests");
    // Workers sleep when their queue is empty and are woken by a post.
    assert!(!sim.prog.probes[PROBE_WAKEUP as usize].is_empty());
}

#[test]
fn many_workers_wake_and_every_worker_serves() {
    let sim = run("m=2,t=6,r=1,M=auto", "a7-octa", false);
    for t in sim.threads() {
        assert!(t.stats.loops > 0, "{} never looped", t.spec.name);
        if t.spec.name.starts_with("schbench-msg-") {
            // M=auto: message thread i on CPU i.
            let i: u32 = t.spec.name["schbench-msg-".len()..].parse().unwrap();
            assert_eq!(t.spec.cpus, Some(vec![i]));
        } else {
            assert_eq!(t.spec.cpus, None, "workers stay on every CPU");
        }
    }
}

fn table_lines(out: &str) -> Vec<&str> {
    let start = out.find("Wakeup Latencies").expect("no schbench table");
    out[start..].lines().collect()
}

#[test]
fn cli_prints_schbench_tables_under_check_on_icx_and_a7() {
    for (machine, spec) in [
        ("icx-2s-80c-ht", "schbench:m=2,t=8,r=1"),
        ("a7-octa", "schbench:r=1,L"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = schedlab([
            "run",
            spec,
            "--machine",
            machine,
            "--check",
            "--out",
            dir.path().to_str().unwrap(),
        ]);
        let text = assert_success(&out);
        let l = table_lines(&text);
        assert!(
            l[0].starts_with("Wakeup Latencies percentiles (usec) runtime 1 (s) ("),
            "{}",
            l[0]
        );
        assert!(l[1].starts_with("\t  50.0th: "), "{:?}", l[1]);
        assert!(l[3].starts_with("\t* 99.0th: "), "{:?}", l[3]);
        assert!(l[4].starts_with("\t  99.9th: "), "{:?}", l[4]);
        assert!(l[5].starts_with("\t  min="), "{:?}", l[5]);
        assert!(l[6].starts_with("Request Latencies percentiles (usec) runtime 1 (s) ("));
        assert!(
            l[12].starts_with("RPS percentiles (requests) runtime 1 (s) (2 total samples)"),
            "{}",
            l[12]
        );
        assert!(l[17].starts_with("average rps: "));
        assert!(l[18].starts_with("sched delay: message "));
        let s: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("summary.json")).unwrap(),
        )
        .unwrap();
        let sb = &s["schbench"];
        let n = sb["request_latency_us"]["samples"].as_u64().unwrap();
        assert!(n > 0 && sb["requests"].as_u64().unwrap() >= n);
        let p = sb["wakeup_latency_us"]["percentiles"].as_array().unwrap();
        let pcts: Vec<f64> = p.iter().map(|r| r["pct"].as_f64().unwrap()).collect();
        assert_eq!(pcts, [50.0, 90.0, 99.0, 99.9]);
        // The printed 99th is the summary's.
        assert!(l[3].contains(&format!(" {} ", p[2]["value"])));
    }
}

#[test]
fn same_seed_same_bytes() {
    crate::common::assert_same_bytes_twice(&[
        "schbench:m=2,t=3,r=1,s=50,n=2",
        "--machine",
        "a7-octa",
    ]);
}

#[test]
fn broken_specs_are_one_line_exit_2() {
    for (spec, needle) in [
        ("schbench:m=0", "key 'm'"),
        ("schbench:r=0", "key 'r'"),
        ("schbench:f=64", "unknown key 'f'"),
        ("schbench:t=x", "not a non-negative integer"),
        ("schbench:m", "is not key=value"),
        ("schbench:L=2", "key 'L'"),
        ("schbench:M=9-3", "key 'M'"),
        ("schbench:M=99", "not on the machine"),
        ("schbench:m=9,M=auto", "more than the machine"),
        ("schbench:m=1,m=2", "twice"),
        ("schbench:t=1000000,m=1000", "absurd"),
        ("schbench:R=1000000000", "key 'R'"),
        ("schbench:cgroup=x", "key 'cgroup'"),
    ] {
        let out = schedlab(["run", spec, "--machine", "a7-octa"]);
        assert_eq!(out.status.code(), Some(2), "{spec}: {}", describe(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{spec}: {err}");
        assert!(err.contains(needle), "{spec}: {err}");
        assert!(out.stdout.is_empty(), "{spec}");
    }
}

#[test]
fn per_cpu_lock_makes_preempted_work_cost_spinning() {
    // Two workers on one CPU, requests of 10 multiplies (longer than a
    // slice): a worker preempted while holding CPU 0's lock makes the
    // other spin. With the lock the workers burn CPU beyond their
    // requests' work; with L they burn exactly the work done.
    let spent = |rest: &str| {
        let sim = run(rest, "vm-2cpu", true);
        let w = 2 * work_ns("vm-2cpu");
        let req = sim.prog.probes[PROBE_REQUEST as usize].len() as u64;
        let cpu: u64 = sim
            .threads()
            .iter()
            .filter(|t| t.spec.name.starts_with("schbench-worker"))
            .map(|t| t.stats.runtime_ns)
            .sum();
        (cpu, req * w, req)
    };
    let (cpu_l, work_l, req_l) = spent("m=1,t=2,r=1,s=0,n=10,L");
    let (cpu, work, req) = spent("m=1,t=2,r=1,s=0,n=10");
    // Without the lock: the work done, plus at most the one request in
    // flight per worker and the futex calls.
    assert!(
        cpu_l >= work_l && cpu_l <= work_l + 2 * w_of(10) + 1_000_000,
        "{cpu_l} vs {work_l}"
    );
    // With it: spinning on top, and fewer requests.
    assert!(cpu > work + w_of(10), "{cpu} vs {work}: no spinning");
    assert!(req < req_l, "{req} requests with the lock, {req_l} without");
}

fn w_of(n: u64) -> u64 {
    scale_host_ns(
        &preset("vm-2cpu").unwrap().costs,
        n * 104 * 104 * 104 * 343 / 1000,
    )
}
