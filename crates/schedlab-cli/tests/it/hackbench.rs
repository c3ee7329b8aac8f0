//! hackbench semantics on tiny cases: every receiver gets fds × loops
//! messages, senders block on full channels and are woken when space is
//! freed, and the run ends (no lost wakeup) under --check; the closed-form
//! fast-forward gives exactly the message-by-message outputs.

use crate::common::{assert_success, list_files, schedlab};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::task::TaskState;
use schedlab_core::{Sim, SimConfig};
use schedlab_workload::generators::hackbench;

fn run(spec_rest: &str, machine: &str, steal: bool) -> Sim<NullSink> {
    run_ff(spec_rest, machine, steal, true)
}

fn run_ff(spec_rest: &str, machine: &str, steal: bool, fast_forward: bool) -> Sim<NullSink> {
    let w = hackbench("hackbench:", spec_rest).unwrap().workload;
    let mut cfg = SimConfig {
        check: true,
        fast_forward,
        ..SimConfig::default()
    };
    cfg.features.steal = steal;
    let mut sim = Sim::new(preset(machine).unwrap(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    assert!(!sim.deadlock, "deadlock");
    sim
}

#[test]
fn every_receiver_gets_fds_times_loops_messages() {
    // 2 groups × 3 fds × 50 loops on 2 CPUs: 6 receivers, 6 senders.
    let sim = run("groups=2,fds=3,loops=50,ipc=pipe", "vm-2cpu", false);
    for t in sim.threads() {
        assert_eq!(t.state, TaskState::Dead, "{} did not finish", t.spec.name);
        if t.spec.name.starts_with("hb-r") {
            assert_eq!(t.chan_pos, 0, "{}: messages left unread", t.spec.name);
        } else {
            assert_eq!(t.stats.loops, 50, "{}: rounds written", t.spec.name);
        }
    }
    // Each receiver paid for fds × loops reads, each sender for as many
    // writes, at the machine's measured syscall costs.
    let c = schedlab_core::sched::syscall_cost::SyscallCosts::for_machine(
        &preset("vm-2cpu").unwrap().costs,
    );
    for t in sim.threads() {
        let per_msg = if t.spec.name.starts_with("hb-r") {
            c.pipe_read
        } else {
            c.pipe_write
        };
        assert!(
            t.stats.runtime_ns >= 150 * per_msg,
            "{}: {} ns",
            t.spec.name,
            t.stats.runtime_ns
        );
    }
    assert!(sim.t_release.is_some() && sim.last_exit > sim.t_release.unwrap());
}

#[test]
fn senders_block_on_full_channels_and_are_woken() {
    // datasize 16384: a 64 KiB pipe holds 4 messages, so 3 senders × 40
    // rounds must block again and again on each receiver's channel.
    let sim = run(
        "groups=1,fds=3,loops=40,ipc=pipe,datasize=16384",
        "a7-octa",
        false,
    );
    let sender_wakeups: u64 = sim
        .threads()
        .iter()
        .filter(|t| t.spec.name.starts_with("hb-s"))
        .map(|t| t.stats.wakeups)
        .sum();
    // One wakeup each from the start barrier; the rest are "space freed".
    assert!(
        sender_wakeups > 3 * 5,
        "senders woken only {sender_wakeups} times"
    );
    for t in sim.threads() {
        assert_eq!(t.state, TaskState::Dead);
    }
}

#[test]
fn steal_moves_work_only_when_switched_on() {
    let base = run("groups=4,fds=10,loops=30", "a7-octa", false);
    let stolen: u64 = base.acct.cpu_stats.iter().map(|c| c.steal).sum();
    assert_eq!(stolen, 0, "steals without STEAL");
    let steal = run("groups=4,fds=10,loops=30", "a7-octa", true);
    let stolen: u64 = steal.acct.cpu_stats.iter().map(|c| c.steal).sum();
    assert!(stolen > 0, "an overloaded 8-CPU box never stole");
}

/// Runs `schedlab run SPEC ARGS --trace --check` with and without the
/// fast-forward and compares every output file byte for byte.
fn same_outputs(spec: &str, args: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let (ff, mbm) = (tmp.path().join("ff"), tmp.path().join("mbm"));
    for (dir, extra) in [(&ff, None), (&mbm, Some("--message-by-message"))] {
        let mut a = vec!["run", spec, "--trace", "--check", "--quiet", "--out"];
        a.push(dir.to_str().unwrap());
        a.extend_from_slice(args);
        a.extend(extra);
        assert_success(&schedlab(&a));
    }
    let files = list_files(&ff);
    assert_eq!(files, list_files(&mbm), "{spec}: different files");
    assert!(files.iter().any(|f| f.ends_with("trace.txt")));
    for f in files {
        let (a, b) = (
            std::fs::read(ff.join(&f)).unwrap(),
            std::fs::read(mbm.join(&f)).unwrap(),
        );
        assert!(
            a == b,
            "{spec} {args:?}: {} differs between fast-forward and message by message",
            f.display()
        );
    }
}

#[test]
fn fast_forward_gives_the_message_by_message_outputs() {
    // Pipes and sockets, a full pipe (datasize 16384), an idle-heavy
    // small machine, SMT and two LLCs, a cgroup hierarchy (the
    // fast-forward then stands aside: group weights are not NICE_0_LOAD),
    // a run cut by --duration.
    same_outputs(
        "hackbench:groups=1,fds=2,loops=200,ipc=pipe",
        &["--machine", "vm-2cpu", "--seed", "3"],
    );
    same_outputs(
        "hackbench:groups=2,fds=3,loops=60",
        &["--machine", "a7-octa", "--seed", "2"],
    );
    same_outputs(
        "hackbench:groups=1,fds=3,loops=20,ipc=pipe,datasize=16384",
        &["--machine", "a7-octa"],
    );
    same_outputs(
        "hackbench:groups=3,fds=4,loops=30",
        &["--machine", "icx-2s-80c-ht", "--features", "STEAL"],
    );
    same_outputs(
        "hackbench:groups=2,fds=2,loops=40,cgroup=/hb/g%g",
        &["--machine", "vm-2cpu"],
    );
    same_outputs(
        "hackbench:groups=2,fds=4,loops=2000",
        &["--machine", "vm-2cpu", "--duration", "3ms"],
    );
    // Two instances, one per leaf of a tree with quotas that bind
    // (0.3 CPUs per leaf, 0.4 under /t, 5 ms periods: throttling inside the run).
    same_outputs(
        "hackbench:instances=2,groups=1,fds=2,loops=150,ipc=pipe,mode=thread,cgroup=/t/l0;/t/l1",
        &[
            "--machine",
            "a7-octa",
            "--cgroup",
            "/t:cpu.max=2000,5000",
            "--cgroup",
            "/t/l0:cpu.max=1500,5000",
            "--cgroup",
            "/t/l1:cpu.max=1500,5000",
        ],
    );
}

#[test]
fn the_fast_forward_really_folds_syscalls() {
    // The equality above would be empty if nothing were ever folded.
    for (spec, m) in [
        ("groups=1,fds=2,loops=200,ipc=pipe", "vm-2cpu"),
        ("groups=2,fds=3,loops=60", "a7-octa"),
    ] {
        let ff = run_ff(spec, m, false, true);
        let mbm = run_ff(spec, m, false, false);
        assert_eq!(mbm.fast_forwarded, 0);
        assert!(
            ff.fast_forwarded > 0,
            "{spec} on {m}: nothing fast-forwarded"
        );
        assert_eq!(ff.events, mbm.events);
    }
}

#[test]
fn every_message_is_a_syscall_pair_and_sleeps_follow_the_kernel() {
    // One group of 1+1 on a socket with 600 messages: the receiver's
    // runtime covers 600 reads, the sender's 600 writes.
    let sim = run("groups=1,fds=1,loops=600", "vm-2cpu", false);
    let c = schedlab_core::sched::syscall_cost::SyscallCosts::for_machine(
        &preset("vm-2cpu").unwrap().costs,
    );
    let r = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "hb-r0-0")
        .unwrap();
    let s = sim
        .threads()
        .iter()
        .find(|t| t.spec.name == "hb-s0-0")
        .unwrap();
    assert!(r.stats.runtime_ns >= 600 * c.unix_read);
    assert!(s.stats.runtime_ns >= 600 * c.unix_write);
    // 600 messages > 278 in flight: unless the reader kept up, the
    // sender slept on a full socket and was woken (at a quarter full).
    assert!(r.stats.wakeups + s.stats.wakeups >= 2);
}
