//! `out_all_pinned`: a balance pass whose busiest queue holds only tasks
//! that affinity keeps off the balancing CPU ends as a balanced pass
//! (`lb_balanced`, `nr_balance_failed = 0`), and the domain's
//! `balance_interval` keeps doubling up to `MAX_PINNED_INTERVAL` (512 ms)
//! instead of `max_interval` (kernel-model.md §7.2, §7.4 steps 7 and 10).

use crate::common::{release_config, rtapp_workload, run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Policy, TaskSpec};
use schedlab_core::time::NSEC_PER_SEC;
use schedlab_core::Sim;

fn hog(index: u32, cpu: u32) -> TaskSpec {
    let mut t = task(
        &format!("hog{index}"),
        index,
        Policy::Normal,
        0,
        vec![run_op(100 * NSEC_PER_SEC)],
    );
    t.cpus = Some(vec![cpu]);
    t
}

/// vm-2cpu for 2 s: three hogs pinned to CPU 0, one to CPU 1. CPU 1 is
/// busy, finds CPU 0 overloaded and every task there pinned. Its MC domain
/// (2 CPUs: min_interval 2 ms, max_interval 4 ms, busy_factor 16) then
/// balances after 2 x 16 = 32 ms (8 jiffies at HZ 250, less one: 7), and
/// the interval doubles per pass: 4, 8, 16 ms x 16 = 15, 31, 63 jiffies,
/// the last clamped to max_load_balance_interval (HZ x 2 CPUs / 10 = 50
/// jiffies = 200 ms), where it stays (32 .. 512 ms all clamp). Passes
/// start at 7 + 15 + 31 = 53 jiffies (212 ms), then every 200 ms: about
/// 10 in 2 s, all balanced. Counting each pass as failed and resetting
/// the interval to min_interval, as the model did before, gives one pass
/// per 7 jiffies: about 70.
#[test]
fn all_pinned_passes_back_off_to_max_pinned_interval() {
    let tasks = vec![hog(0, 0), hog(1, 0), hog(2, 0), hog(3, 1)];
    let w = rtapp_workload(tasks, 0);
    let mut cfg = release_config("6.18", 2 * NSEC_PER_SEC);
    cfg.check = true;
    let mut sim = Sim::new(preset("vm-2cpu").unwrap(), &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let lb = &sim.sched.sd_state[1][0].lb;
    let passes: u64 = lb.count.iter().sum();
    let balanced: u64 = lb.balanced.iter().sum();
    let failed: u64 = lb.failed.iter().sum();
    assert!((8..=14).contains(&passes), "CPU 1: {passes} passes");
    assert_eq!(
        (balanced, failed),
        (passes, 0),
        "CPU 1: all pinned is a balanced pass"
    );
    assert_eq!(sim.sched.sd_state[1][0].nr_balance_failed, 0);
    assert!(sim.sched.sd_state[1][0].balance_interval_ms >= 512);
}
