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
    run_cfg(spec_rest, machine, steal, fast_forward, true)
}

/// `run_ff`, with the invariant checks after every event on or off (off
/// for the longer runs).
fn run_cfg(
    spec_rest: &str,
    machine: &str,
    steal: bool,
    fast_forward: bool,
    check: bool,
) -> Sim<NullSink> {
    let w = hackbench("hackbench:", spec_rest).unwrap().workload;
    let mut cfg = SimConfig {
        check,
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
    // Two senders on the two CPUs write the same two pipes: each one's
    // write finds the lines on the other CPU or its own (the cross-CPU
    // channel cost). The lazily settled fold (sched/fold.rs) once kept the
    // price of its last write after the other sender took that pipe's
    // lines in between: on the EEVDF releases a sender came out 740 ns
    // short (5.15 and 6.1 happened to be exact on this case).
    for kernel in ["5.15", "6.1", "6.6", "6.12", "tip"] {
        same_outputs(
            "hackbench:groups=1,fds=2,loops=200,ipc=pipe",
            &["--machine", "vm-2cpu", "--seed", "3", "--kernel", kernel],
        );
    }
    same_outputs(
        "hackbench:groups=2,fds=3,loops=60",
        &["--machine", "a7-octa", "--seed", "2"],
    );
    same_outputs(
        "hackbench:groups=1,fds=4,loops=100",
        &["--machine", "a7-octa"],
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
    // (groups=2,fds=3,loops=60 on a7-octa folded until the tie rule of
    // event/order.rs: since then two of its senders run in lockstep 88 ns
    // apart, each landing between two of the other's, and nothing folds.)
    for (spec, m) in [
        ("groups=1,fds=2,loops=200,ipc=pipe", "vm-2cpu"),
        // (groups=2,fds=3,loops=60 on a7-octa folds nothing since its calls
        // pay cross-cluster line transfers: a different sequence of sleeps.)
        ("groups=1,fds=4,loops=100", "a7-octa"),
        ("groups=2,fds=2,loops=60", "a7-octa"),
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

/// A wider net than the hand-picked cases above: 132 hackbench runs whose
/// parameters come from a fixed-seed generator (group and fd counts,
/// loops, pipe or socket, thread or process mode, message size, machine,
/// release,
/// seed, and in some a cgroup per group or a quota that binds), each
/// compared byte for byte (trace, summary with its `events` count, every
/// other output) between the fast-forward and message by message.
#[test]
fn fast_forward_matches_message_by_message_over_seeded_cases() {
    let machines = ["vm-2cpu", "a7-octa", "icx-2s-80c-ht"];
    let mut x: u64 = 0x5eed_ff17;
    let mut next = |n: u64| {
        // Knuth's MMIX LCG; the high bits are the good ones.
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 33) % n
    };
    // Every release with every machine: the fold's exactness rests on the
    // release's pick rules (CFS or EEVDF: when a landing may reschedule).
    let kernels = [
        "5.4", "5.10", "5.15", "5.19", "6.1", "6.6", "6.12", "6.15", "6.18", "6.19", "tip",
    ];
    for case in 0..132u64 {
        let machine = machines[(case % 3) as usize];
        let kernel = kernels[((case / 3) % 11) as usize];
        let groups = 1 + next(if machine == "icx-2s-80c-ht" { 4 } else { 2 });
        let fds = 1 + next(5);
        let loops = 5 + next(120);
        let ipc = if next(2) == 0 { "pipe" } else { "socket" };
        let mode = if next(2) == 0 { "process" } else { "thread" };
        // 100-byte messages mostly; 4 KiB ones fill pipes and sockets fast.
        let datasize = if next(4) == 0 { 4096 } else { 100 };
        let mut spec = format!(
            "hackbench:groups={groups},fds={fds},loops={loops},ipc={ipc},mode={mode},datasize={datasize}"
        );
        let seed = (1 + next(1000)).to_string();
        let mut args: Vec<String> = vec![
            "--machine".into(),
            machine.into(),
            "--seed".into(),
            seed,
            "--kernel".into(),
            kernel.into(),
        ];
        match next(4) {
            0 => spec.push_str(",cgroup=/hb/g%g"),
            1 => {
                // A quota on the common parent that binds (0.5 CPU in 2 ms periods).
                spec.push_str(",cgroup=/q/g%g");
                args.extend(["--cgroup".into(), "/q:cpu.max=1000,2000".into()]);
            }
            _ => {}
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        same_outputs(&spec, &a);
    }
}

#[test]
fn fast_forward_keeps_the_event_count_of_a_longer_run() {
    // Folded syscalls count as the events they stand for: the count of a
    // run long enough to reach the steady state is the same both ways.
    // 8 x 4000 on icx-2s-80c-ht: the lazily settled fold (sched/fold.rs)
    // once missed a reader of the running task's queue there (the
    // balancer's eligibility test, 92 ms in): 36 269 events apart.
    for (spec, m) in [
        (
            "groups=8,loops=400,mode=process,ipc=socket",
            "icx-2s-80c-ht",
        ),
        (
            "groups=8,loops=4000,mode=process,ipc=socket",
            "icx-2s-80c-ht",
        ),
        ("groups=2,fds=8,loops=2000,ipc=pipe,mode=thread", "a7-octa"),
    ] {
        let ff = run_cfg(spec, m, false, true, false);
        let mbm = run_cfg(spec, m, false, false, false);
        assert_eq!(ff.events, mbm.events, "{spec} on {m}");
        assert_eq!(ff.now, mbm.now, "{spec} on {m}: end time");
    }
}

/// Runs `w` on `m` with `--check` (no violation) and returns the CPU time
/// of the thread named `name`.
fn checked_runtime(
    m: &schedlab_core::machine::Machine,
    w: &schedlab_core::program::Workload,
    name: &str,
) -> u64 {
    let cfg = SimConfig {
        check: true,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(m.clone(), w, cfg, NullSink).unwrap();
    assert!(sim.run().violation.is_none());
    sim.threads()
        .iter()
        .find(|t| t.spec.name == name)
        .unwrap()
        .stats
        .runtime_ns
}

/// hackbench `opts` (one group) with its receivers pinned to CPU 0 and
/// its senders to CPU `senders_on`; the role whose names start with `late`
/// (`hb-r` or `hb-s`) starts 1 ms after the other.
fn pinned_hackbench(opts: &str, senders_on: u32, late: &str) -> schedlab_core::program::Workload {
    let mut w = hackbench("hackbench:", opts).unwrap().workload;
    for t in &mut w.tasks {
        let on = if t.name.starts_with("hb-r") {
            0
        } else {
            senders_on
        };
        t.cpus = Some(vec![on]);
        if t.name.starts_with(late) {
            t.delay_ns = 1_000_000;
        }
    }
    w
}

/// Hand-worked cross-CPU channel cost (`sched/syscall_cost.rs`): one
/// socket message, the receiver pinned to CPU 0 and the sender to CPU
/// `s`. The receiver reads first and sleeps on the empty socket (its read
/// is paid then, on a never-used socket: no transfer), leaving the socket's
/// lines on CPU 0; the sender's one write then pays the write plus the
/// transfer from CPU 0 to its own CPU, by distance class, and nothing on
/// CPU 0 itself.
#[test]
fn a_write_after_a_read_elsewhere_pays_the_line_transfer() {
    use schedlab_core::machine::{make_test_machine, Distance};
    use schedlab_core::sched::syscall_cost::SyscallCosts;
    // 2 nodes (packages) x 1 LLC x 2 cores x 2 threads: CPU 1 is CPU 0's
    // SMT sibling, CPU 2 shares its LLC, CPU 4 is on the other package.
    let m = make_test_machine(2, 1, 2, 2);
    let c = SyscallCosts::for_machine(&m.costs);
    // The receiver reads first: the sender starts 1 ms later.
    let sender_runtime = |cpu: u32| {
        let w = pinned_hackbench("groups=1,fds=1,loops=1", cpu, "hb-s");
        checked_runtime(&m, &w, "hb-s0-0")
    };
    let same = sender_runtime(0);
    for (cpu, d) in [
        (1, Distance::SameCore),
        (2, Distance::SameLlc),
        (4, Distance::OtherPackage),
    ] {
        assert_eq!(
            m.distance(schedlab_core::ids::CpuId(0), schedlab_core::ids::CpuId(cpu)),
            d
        );
        let x = c.xcpu_ns(d, 2);
        assert!(x > 0);
        assert_eq!(sender_runtime(cpu), same + x, "sender on CPU {cpu} ({d:?})");
    }
    // The classes are the machine's line latencies times the host's lines
    // per unix write (1.66): 10 ns SMT, 50 ns LLC, 200 ns across packages
    // on the test machine's default costs.
    assert_eq!(m.costs.line_transfer_ns, [5, 10, 30, 50, 120, 120, 200]);
    assert_eq!(
        [
            c.xcpu_ns(Distance::SameCore, 2),
            c.xcpu_ns(Distance::SameLlc, 2),
            c.xcpu_ns(Distance::OtherPackage, 2)
        ],
        [16, 83, 332]
    );
}

/// Hand-worked message origin (`sched/msg_origin.rs`,
/// `SyscallCosts::xmsg`): one socket, the sender pinned to CPU `s` writes
/// three messages, then (1 ms later) the receiver on CPU 0 drains them.
/// Its first read pulls the socket's shared state from CPU `s` and its
/// message; the next two find the state on CPU 0 and still pull their
/// messages from CPU `s`. Against the sender on CPU 0 (nothing moves):
/// one state part and three message parts, by distance class.
#[test]
fn a_read_of_a_backlog_pays_for_each_message_from_its_writer() {
    use schedlab_core::ids::CpuId;
    use schedlab_core::machine::{make_test_machine, Distance};
    use schedlab_core::sched::syscall_cost::SyscallCosts;
    let m = make_test_machine(2, 1, 2, 2);
    let c = SyscallCosts::for_machine(&m.costs);
    let receiver_runtime = |cpu: u32| {
        let w = pinned_hackbench("groups=1,fds=1,loops=3", cpu, "hb-r");
        checked_runtime(&m, &w, "hb-r0-0")
    };
    let same = receiver_runtime(0);
    for (cpu, d) in [(2, Distance::SameLlc), (4, Distance::OtherPackage)] {
        assert_eq!(m.distance(CpuId(0), CpuId(cpu)), d);
        let (state, msg) = (c.xcpu_ns(d, 3), c.xmsg_ns(d, 3));
        assert!(msg > state && state > 0);
        assert_eq!(
            receiver_runtime(cpu),
            same + state + 3 * msg,
            "sender on CPU {cpu} ({d:?})"
        );
    }
    // A unix read's 5.02 lines: 4.83 its message's, 0.19 the state's, at
    // the test machine's 50 ns (LLC) and 200 ns (packages).
    assert_eq!(
        [
            c.xcpu_ns(Distance::SameLlc, 3),
            c.xmsg_ns(Distance::SameLlc, 3),
            c.xcpu_ns(Distance::OtherPackage, 3),
            c.xmsg_ns(Distance::OtherPackage, 3)
        ],
        [9, 241, 38, 966]
    );
}

/// Hand-worked woken read (`Sim::chan_retry_price`): one message, the
/// receiver pinned to CPU 0 reads first and sleeps on the empty channel
/// (its first pass, on a never-used channel, pays no lines); the sender,
/// pinned to CPU `s`, writes 1 ms later and wakes it. The woken read's
/// second pass takes the channel's lock again and pulls what the writer
/// left on CPU `s`: the shared state (`xcpu`) and the message (`xmsg`),
/// by distance class, against the sender on CPU 0 (nothing moves). Before
/// the second pass was priced the difference was 0: a woken read paid no
/// lines at all.
#[test]
fn a_woken_read_pays_for_the_state_and_the_message_its_waker_left() {
    use schedlab_core::ids::CpuId;
    use schedlab_core::machine::{make_test_machine, Distance};
    use schedlab_core::sched::syscall_cost::SyscallCosts;
    let m = make_test_machine(2, 1, 2, 2);
    let c = SyscallCosts::for_machine(&m.costs);
    for (ipc, kind) in [("pipe", 1), ("socket", 3)] {
        let receiver_runtime = |cpu: u32| {
            let opts = format!("groups=1,fds=1,loops=1,ipc={ipc}");
            let w = pinned_hackbench(&opts, cpu, "hb-s");
            checked_runtime(&m, &w, "hb-r0-0")
        };
        let same = receiver_runtime(0);
        for (cpu, d) in [(2, Distance::SameLlc), (4, Distance::OtherPackage)] {
            assert_eq!(m.distance(CpuId(0), CpuId(cpu)), d);
            let (state, msg) = (c.xcpu_ns(d, kind), c.xmsg_ns(d, kind));
            assert!(msg > 0 && state > 0);
            assert_eq!(
                receiver_runtime(cpu),
                same + state + msg,
                "{ipc}: sender on CPU {cpu} ({d:?})"
            );
        }
    }
}

/// Hand-worked sleep path (`SyscallCosts::chan_sleep`): one message, the
/// receiver on CPU 0 and the sender on CPU 2. When the receiver starts
/// first it reads the empty channel and sleeps; woken, its call pays the
/// sleep path once, so its runtime grows by exactly the figure set on the
/// machine. When the sender starts first the message waits for the read,
/// which never sleeps and pays nothing of it.
#[test]
fn a_read_that_slept_pays_its_sleep_path_once() {
    use schedlab_core::machine::make_test_machine;
    let mut m = make_test_machine(2, 1, 2, 2);
    for (ipc, k) in [("pipe", 0), ("socket", 1)] {
        let mut runtime = |sleep: [u64; 2], late: &str| {
            m.costs.chan_sleep_ns = Some(sleep);
            let w = pinned_hackbench(&format!("groups=1,fds=1,loops=1,ipc={ipc}"), 2, late);
            checked_runtime(&m, &w, "hb-r0-0")
        };
        let mut s = [0, 0];
        s[k] = 777;
        assert_eq!(
            runtime(s, "hb-s"),
            runtime([0, 0], "hb-s") + 777,
            "{ipc}: slept"
        );
        assert_eq!(
            runtime(s, "hb-r"),
            runtime([0, 0], "hb-r"),
            "{ipc}: never slept"
        );
    }
}

/// Hand-worked: two writers on two CPUs into one pipe
/// (`sched/chan_lock.rs`). hackbench groups=1, fds=2, loops=1, ipc=pipe:
/// senders A (CPU 0) and B (CPU 2, the same LLC) each write once to
/// receiver 0's pipe, then once to receiver 1's; the receivers start 10 ms
/// later, so nobody reads meanwhile. A starts at 1 ms, B `delta` later.
/// A's first write (156 ns) holds the pipe's mutex for its time under the
/// lock (82 ns; no lines, the pipe never used) from its start. B's, 40 ns
/// in, waits the 42 ns left of that hold plus the handoff from CPU 0
/// (60 ns) and pays no lines (A's write lands at 156). B's second write
/// starts at 40 + 156 + 102 = 298 ns: A's second hold (156-238) is over and
/// A's second write (landing at 312) has not taken the pipe's lines yet:
/// 156 ns, nothing more. At 100 ns B's first write finds the mutex free
/// (A's hold ended at 82), at 20 µs both its writes find the pipes free and
/// their lines on CPU 0.
#[test]
fn a_second_writer_waits_the_rest_of_the_first_ones_hold() {
    use schedlab_core::ids::CpuId;
    use schedlab_core::machine::{make_test_machine, Distance};
    use schedlab_core::sched::syscall_cost::SyscallCosts;
    let m = make_test_machine(2, 1, 2, 2);
    let c = SyscallCosts::for_machine(&m.costs);
    assert_eq!(m.distance(CpuId(0), CpuId(2)), Distance::SameLlc);
    let runtime_b = |delta: u64| {
        let mut w = hackbench("hackbench:", "groups=1,fds=2,loops=1,ipc=pipe")
            .unwrap()
            .workload;
        for t in &mut w.tasks {
            let (on, delay) = match t.name.as_str() {
                "hb-s0-0" => (0, 1_000_000),
                "hb-s0-1" => (2, 1_000_000 + delta),
                "hb-r0-0" => (4, 10_000_000),
                _ => (6, 10_000_000),
            };
            t.cpus = Some(vec![on]);
            t.delay_ns = delay;
        }
        checked_runtime(&m, &w, "hb-s0-1")
    };
    let hold = c.in_lock[0];
    let handoff = c.handoff[Distance::SameLlc as usize];
    let lines = c.xcpu_ns(Distance::SameLlc, 0);
    // 0.15 x 156; 2.0 and 1.40 lines at the test machine's 50 ns.
    assert_eq!((c.pipe_write, hold, handoff, lines), (156, 23, 100, 70));
    let far = runtime_b(20_000);
    let free = runtime_b(100);
    // Both calls plain at 100 ns; at 20 µs each also pays its lines.
    assert_eq!(far, free + 2 * lines);
    // At 10 ns the first call waits the 13 ns left and the handoff; at
    // 0 ns the whole hold.
    assert_eq!(runtime_b(10), free + (hold - 10) + handoff);
    assert_eq!(runtime_b(0), free + hold + handoff);
}

#[test]
fn folds_do_not_start_where_another_sender_is_about_to_write() {
    // The per-channel fold horizon (sched/fold.rs): on 8 groups of 20
    // senders writing the same 20 channels in the same order, a fold
    // begun past a channel another sender is about to use is split there,
    // its calls not started priced for nothing. Without the horizon a
    // socket run split a fold for every 3 syscalls it fast-forwarded;
    // with it, one for every 20 or more.
    for ipc in ["socket", "pipe"] {
        let spec = format!("groups=8,loops=200,mode=process,ipc={ipc}");
        let sim = run_cfg(&spec, "icx-2s-80c-ht", false, true, false);
        eprintln!(
            "{ipc}: {} splits, {} fast-forwarded, {} events",
            sim.fold_splits, sim.fast_forwarded, sim.events
        );
        assert!(sim.fast_forwarded > sim.events / 10, "{ipc}: few folds");
        assert!(
            sim.fold_splits * 10 < sim.fast_forwarded,
            "{ipc}: {} splits for {} syscalls fast-forwarded",
            sim.fold_splits,
            sim.fast_forwarded
        );
    }
}
