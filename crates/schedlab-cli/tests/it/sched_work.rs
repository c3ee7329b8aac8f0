//! Scheduler work done in a task's own context is that task's time to the
//! fair class: `update_curr` charges `rq_clock_task`, which runs through
//! the `try_to_wake_up` a task calls (and the IPI it sends) and through
//! the `__schedule` that switched to it; only interrupt time (with
//! IRQ_TIME_ACCOUNTING) and steal time are taken out. A task that wakes
//! others often therefore pays for those wake-ups in vruntime, and a
//! CPU hog beside it gets its fair half of the CPU's whole time, not half
//! of the time left after the wake-ups.

use crate::common::{release_config, rtapp_workload, run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy};
use schedlab_core::time::NSEC_PER_MSEC;
use schedlab_core::Sim;

/// On vm-2cpu with a 4 µs wake-up, no IPI send cost and a 100 ns context
/// switch: "hog" (always runnable) and "waker" (runs 2 µs, posts a
/// semaphore, again) share CPU 0; "wakee", alone on CPU 1, waits on the
/// semaphore and runs 1 µs, so nearly every post wakes it. Simulated on
/// `kernel` for 400 ms. Returns (hog's run time, waker's run time, the
/// wake-up work the waker did), in ns.
fn hog_beside_a_waker(kernel: &str) -> (u64, u64, u64) {
    let mut m = preset("vm-2cpu").unwrap();
    m.costs.wakeup_ns = 4_000;
    m.costs.ipi_send_ns = 0;
    m.costs.context_switch_ns = 100;
    let mut hog = task(
        "hog",
        0,
        Policy::Normal,
        0,
        vec![run_op(10_000 * NSEC_PER_MSEC)],
    );
    hog.cpus = Some(vec![0]);
    let mut waker = task(
        "waker",
        1,
        Policy::Normal,
        0,
        vec![run_op(2_000), Op::SemPost { sem: 0 }],
    );
    waker.cpus = Some(vec![0]);
    let mut wakee = task(
        "wakee",
        2,
        Policy::Normal,
        0,
        vec![Op::SemWait { sem: 0 }, run_op(1_000)],
    );
    wakee.cpus = Some(vec![1]);
    let w = rtapp_workload(vec![hog, waker, wakee], 1);
    let cfg = release_config(kernel, 400 * NSEC_PER_MSEC);
    let wake_ns = m.costs.wakeup_ns;
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let t = &sim.sched.tasks;
    (
        t[0].stats.runtime_ns,
        t[1].stats.runtime_ns,
        t[2].stats.wakeups * wake_ns,
    )
}

/// Hand-worked: the two tasks on CPU 0 get equal charged time, so the
/// hog's run time is the waker's run time plus its wake-up work (about
/// 4 µs of wake-up per 2.4 µs of running: the waker's program gets about
/// 3/8 of CPU 0, the hog 1/2), within a few slices of EEVDF lag. If the
/// wake-ups were not charged to the waker, the waker's program would get
/// as much CPU as the hog and the wake-ups on top (hog about 3/8 of CPU 0).
#[test]
fn a_wakers_own_wakeup_work_counts_against_its_fair_share() {
    for kernel in ["6.18", "5.15"] {
        let (hog, waker, wake) = hog_beside_a_waker(kernel);
        // Nearly every post woke the wakee: a large share of CPU 0.
        assert!(wake > 50 * NSEC_PER_MSEC, "{kernel}: {hog} {waker} {wake}");
        let charged_waker = waker + wake;
        let tol = 10 * NSEC_PER_MSEC;
        assert!(
            hog.abs_diff(charged_waker) < tol,
            "{kernel}: hog {hog} ns, waker {waker} ns + wake-ups {wake} ns"
        );
        // And far from the uncharged split (hog ≈ waker's program).
        assert!(hog > waker + 5 * tol, "{kernel}: {hog} {waker} {wake}");
    }
}
