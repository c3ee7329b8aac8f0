//! Load-balancing rules that changed between releases, checked on runs:
//! a CPU running only SCHED_IDLE tasks balances at the idle intervals from
//! 5.6 (323af6deaf70) and at the busy ones (with 5.4's busy_factor of 32)
//! before.

use crate::common::{release_config, rtapp_workload, run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy, TaskSpec};
use schedlab_core::time::{NSEC_PER_MSEC, NSEC_PER_SEC};
use schedlab_core::Sim;

fn pinned(name: &str, index: u32, policy: Policy, ops: Vec<Op>, cpu: u32) -> TaskSpec {
    let mut t = task(name, index, policy, 0, ops);
    t.cpus = Some(vec![cpu]);
    t
}

fn run(machine: &str, kernel: &str, tasks: Vec<TaskSpec>, ms: u64) -> Sim<NullSink> {
    let w = rtapp_workload(tasks, 0);
    let mut cfg = release_config(kernel, ms * NSEC_PER_MSEC);
    cfg.check = true;
    let mut sim = Sim::new(preset(machine).unwrap(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{kernel}: {:?}", res.violation);
    sim
}

/// Periodic balance passes of CPU 0's lowest domain (all idle types).
fn lowest_domain_passes(sim: &Sim<NullSink>, cpu: usize) -> u64 {
    sim.sched.sd_state[cpu][0].lb.count.iter().sum()
}

/// a7-octa with a pinned SCHED_IDLE hog on every CPU for 2 s: nothing can
/// move, so every pass of CPU 0's MC domain (4 CPUs: interval 4-8 ms,
/// doubling to 8 ms as passes find it balanced) is a periodic one.
/// 6.18 treats the CPU as idle: one pass per 8 ms = 2 jiffies at HZ 250,
/// about 250 in 2 s. 5.4 uses the busy interval, 8 ms x 32 = 256 ms = 64
/// jiffies: about 8.
#[test]
fn a_sched_idle_cpu_balances_at_the_idle_interval_from_5_6_only() {
    let hogs = |_| {
        (0..8)
            .map(|c| {
                pinned(
                    &format!("idle{c}"),
                    c,
                    Policy::Idle,
                    vec![run_op(100 * NSEC_PER_SEC)],
                    c,
                )
            })
            .collect::<Vec<_>>()
    };
    let old = lowest_domain_passes(&run("a7-octa", "5.4", hogs(()), 2000), 0);
    let new = lowest_domain_passes(&run("a7-octa", "6.18", hogs(()), 2000), 0);
    assert!((4..=16).contains(&old), "5.4: {old} passes");
    assert!((200..=300).contains(&new), "6.18: {new} passes");
}
