//! A remote wake-up's cache lines (`sched/ttwu_xcpu.rs`): a waker that
//! enqueues a task on another CPU's runqueue itself pays
//! `wakeup_xcpu_ns` as its own wake-up work, and the wakee's next switch
//! in pays `switch_xcpu_ns`; a task never enqueued from another CPU pays
//! neither.
//!
//! Scenario (vm-2cpu, 6.18, 20 µs wake-up, no IPI send cost, 100 ns
//! context switch, 3 µs and 5.003 µs remote extras): "waker" alone on CPU 0
//! runs 2 µs and posts a semaphore, again; "wakee" on CPU 1 waits on it
//! and runs 1 µs; "hog" (SCHED_IDLE, so the wakee preempts it at once
//! and sleeps again soon) on CPU 1 always runs. CPU 1 always has the hog
//! queued, so `ttwu_queue_cond` refuses the wakelist (6.0+: only for a
//! CPU with nothing to run) and every wake-up of the wakee is the
//! waker's remote enqueue.

use crate::common::{release_config, rtapp_workload, run_op, task};
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use schedlab_core::program::{Op, Policy};
use schedlab_core::time::NSEC_PER_MSEC;
use schedlab_core::Sim;

const WAKE_NS: u64 = 20_000;
const CSW_NS: u64 = 100;
const WAKER_X_NS: u64 = 3_000;
const WAKEE_X_NS: u64 = 5_003;

/// Hand-worked: the waker's charged work is its wake-ups of the wakee at
/// 20 µs + 3 µs and its own switches at 100 ns; the wakee's, its
/// switches at 100 ns plus 5.003 µs for each switch in after a wake-up (every
/// wake-up but possibly the last, if the run ends before the wakee ran);
/// the hog's, its switches (and re-picks) alone. Without the remote extras the waker's
/// sum would be 3 µs a wake-up short and the wakee's 5.003 µs.
#[test]
fn the_waker_and_the_wakees_switch_in_pay_the_remote_lines() {
    let mut m = preset("vm-2cpu").unwrap();
    m.costs.wakeup_ns = WAKE_NS;
    m.costs.ipi_send_ns = 0;
    m.costs.context_switch_ns = CSW_NS;
    m.costs.wakeup_xcpu_ns = Some(WAKER_X_NS);
    m.costs.switch_xcpu_ns = Some(WAKEE_X_NS);
    let mut waker = task(
        "waker",
        0,
        Policy::Normal,
        0,
        vec![run_op(2_000), Op::SemPost { sem: 0 }],
    );
    waker.cpus = Some(vec![0]);
    let mut wakee = task(
        "wakee",
        1,
        Policy::Normal,
        0,
        vec![Op::SemWait { sem: 0 }, run_op(1_000)],
    );
    wakee.cpus = Some(vec![1]);
    let mut hog = task(
        "hog",
        2,
        Policy::Idle,
        0,
        vec![run_op(10_000 * NSEC_PER_MSEC)],
    );
    hog.cpus = Some(vec![1]);
    let w = rtapp_workload(vec![waker, wakee, hog], 1);
    let cfg = release_config("6.18", 100 * NSEC_PER_MSEC);
    let mut sim = Sim::new(m, &w, cfg, NullSink).unwrap();
    let res = sim.run();
    assert!(res.violation.is_none(), "{:?}", res.violation);
    let by = |n: &str| {
        sim.sched
            .tasks
            .iter()
            .find(|t| t.spec.name == n)
            .unwrap()
            .stats
            .clone()
    };
    let (wr, we, hg) = (by("waker"), by("wakee"), by("hog"));
    assert!(we.wakeups > 100, "{we:?}");
    // The wakee's first counted wake-up is its start (wake_up_new, not
    // the waker's).
    let woken = we.wakeups - 1;
    // Less what of the last wake-up (and switch) lies past the end of the
    // run: work past the end did not happen within it.
    let want = woken * (WAKE_NS + WAKER_X_NS) + wr.switches * CSW_NS;
    assert!(
        wr.sched_work_ns <= want && wr.sched_work_ns + WAKE_NS + WAKER_X_NS + CSW_NS > want,
        "waker {wr:?} wakee {we:?}: want {want} less at most what crosses the end"
    );
    // Beyond its switches the wakee also pays half a switch for each
    // trip through __schedule that re-picked it (sched/core.rs): a
    // multiple of 50 ns, which 5 003 ns is not, so the count of remote
    // extras is exact.
    let extra = we.sched_work_ns - we.switches * CSW_NS;
    let paid = [woken, woken - 1]
        .into_iter()
        .find(|&k| extra >= k * WAKEE_X_NS && (extra - k * WAKEE_X_NS) % (CSW_NS / 2) == 0);
    assert!(
        paid.is_some(),
        "wakee {we:?}: {extra} ns beyond its switches"
    );
    // The hog, never enqueued from another CPU: switches and re-picks only.
    let h = hg.sched_work_ns - hg.switches * CSW_NS;
    assert_eq!(h % (CSW_NS / 2), 0, "hog {hg:?}");
}
