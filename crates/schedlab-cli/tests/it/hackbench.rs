//! hackbench semantics on tiny cases: every receiver gets fds × loops
//! messages, senders block on full channels and are woken when space is
//! freed, and the run ends (no lost wakeup) under --check.

use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::task::TaskState;
use schedlab_core::{Sim, SimConfig};
use schedlab_workload::generators::hackbench;

fn run(spec_rest: &str, machine: &str, steal: bool) -> Sim<NullSink> {
    let w = hackbench("hackbench:", spec_rest).unwrap().workload;
    let mut cfg = SimConfig {
        check: true,
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
    // Each receiver paid for fds × loops reads, each sender for as many writes.
    let per_msg = preset("vm-2cpu").unwrap().costs.pipe_msg_ns;
    for t in sim.threads() {
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
