//! The proptest strategies: random machines, settings, tasks and programs.

use super::*;

pub(super) fn gen_group() -> impl Strategy<Value = GenGroup> {
    (
        any::<u32>(),
        prop_oneof![Just(1024u64), 2u64..=10240],
        prop::bool::weighted(0.15),
        prop::option::weighted(
            0.6,
            (
                1000u64..=60_000,
                1000u64..=100_000,
                prop_oneof![3 => Just(0u64), 1 => 0u64..=20_000],
            ),
        ),
    )
        .prop_map(|(parent, shares, idle, max)| GenGroup {
            parent,
            shares,
            idle,
            max: max.map(|(q, p, b)| (q, p.max(1000), b.min(q))),
        })
}

/// 50 µs .. 20 ms, log-uniform (short ops make many events).
pub(super) fn dur() -> impl Strategy<Value = u64> {
    (0.0f64..=1.0).prop_map(|u| {
        let ns = (50 * NSEC_PER_USEC) as f64 * 400f64.powf(u);
        (ns as u64).clamp(50 * NSEC_PER_USEC, 20 * NSEC_PER_MSEC)
    })
}

pub(super) fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        6 => Just(Policy::Normal),
        2 => Just(Policy::Batch),
        2 => Just(Policy::Idle),
        1 => Just(Policy::Fifo),
        1 => Just(Policy::Rr),
        1 => Just(Policy::Deadline),
    ]
}

pub(super) fn op() -> impl Strategy<Value = GenOp> {
    prop_oneof![
        4 => dur().prop_map(GenOp::Run),
        1 => dur().prop_map(GenOp::Runtime),
        2 => dur().prop_map(GenOp::Sleep),
        2 => (0..SHARED_TIMERS + 2, dur()).prop_map(|(t, p)| GenOp::Timer(t, p)),
        1 => Just(GenOp::Yield),
        1 => (0..SYNC_OBJECTS, dur()).prop_map(|(m, ns)| GenOp::Critical(m, ns)),
        1 => (0..SYNC_OBJECTS, 0..SYNC_OBJECTS).prop_map(|(c, m)| GenOp::CondWait(c, m)),
        1 => (0..SYNC_OBJECTS, any::<bool>()).prop_map(|(c, all)| GenOp::Signal(c, all)),
        1 => (0..SYNC_OBJECTS).prop_map(GenOp::SemPost),
        1 => (0..SYNC_OBJECTS).prop_map(GenOp::SemWait),
        1 => (0..SYNC_OBJECTS).prop_map(GenOp::Barrier),
        1 => Just(GenOp::Suspend),
        1 => (0u32..8).prop_map(GenOp::Resume),
    ]
}

/// An op that takes no time in the workload's own terms (no run, sleep
/// or timer): only the syscall it stands for costs CPU time (resume,
/// sem_post, signal, lock+unlock, yield, iorun+mem).
pub(super) fn time_free_op() -> impl Strategy<Value = GenOp> {
    prop_oneof![
        (0u32..8).prop_map(GenOp::Resume),
        (0..SYNC_OBJECTS).prop_map(GenOp::SemPost),
        (0..SYNC_OBJECTS, any::<bool>()).prop_map(|(c, all)| GenOp::Signal(c, all)),
        (0..SYNC_OBJECTS).prop_map(GenOp::LockUnlock),
        Just(GenOp::Yield),
        (1u64..=64).prop_map(GenOp::IoMem),
    ]
}

/// A loop body of 1-4 time-free ops.
pub(super) fn time_free_body() -> impl Strategy<Value = Vec<GenOp>> {
    prop::collection::vec(time_free_op(), 1..=4)
}

/// An op that always takes time (so that no loop of a phase can spin
/// without time passing: yields and synchronisation alone could).
pub(super) fn timed_op() -> impl Strategy<Value = GenOp> {
    op().prop_filter("takes time", |o| {
        matches!(
            o,
            GenOp::Run(_)
                | GenOp::Runtime(_)
                | GenOp::Sleep(_)
                | GenOp::Timer(..)
                | GenOp::Critical(..)
        )
    })
}

/// 1-4 ops, at least one of which takes time: a loop of bare yields
/// never advances time (see `yield_only_loop_ends`).
pub(super) fn phase_ops() -> impl Strategy<Value = Vec<GenOp>> {
    (
        timed_op(),
        prop::collection::vec(op(), 0..=3),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(t, mut rest, at)| {
            let i = at.index(rest.len() + 1);
            rest.insert(i, t);
            rest
        })
}

pub(super) fn phase() -> impl Strategy<Value = GenPhase> {
    (
        1u64..=3,
        phase_ops(),
        prop::option::weighted(0.2, any::<u32>()),
        prop::option::weighted(0.1, (policy(), -5i32..=5)),
        prop::option::weighted(0.5, 100u64..=100_000),
    )
        .prop_map(|(loops, ops, cpus, sched, slice_us)| GenPhase {
            loops,
            ops,
            cpus,
            sched,
            slice_us,
        })
}

/// rt-app `delay`. Start delays break `check` (see
/// `start_delay_behind_busy_cpus_breaks_cpu_time_accounting`), so they are
/// only generated when `SCHEDLAB_PROPTEST_DELAY` is set, to keep this test
/// hunting for other bugs meanwhile.
pub(super) fn delay() -> BoxedStrategy<u64> {
    if std::env::var_os("SCHEDLAB_PROPTEST_DELAY").is_some() {
        prop_oneof![3 => Just(0u64), 1 => 0..5 * NSEC_PER_MSEC].boxed()
    } else {
        Just(0u64).boxed()
    }
}

pub(super) fn gen_task() -> impl Strategy<Value = GenTask> {
    (
        policy(),
        -5i32..=5,
        prop::option::weighted(0.4, any::<u32>()),
        delay(),
        prop::option::weighted(0.15, (100 * NSEC_PER_USEC)..=(5 * NSEC_PER_MSEC)),
        prop::collection::vec(phase(), 1..=3),
        prop::option::weighted(0.5, 1u64..=5),
    )
        .prop_map(
            |(policy, nice, cpus, delay_ns, custom_slice_ns, phases, loops)| GenTask {
                policy,
                nice,
                cpus,
                delay_ns,
                custom_slice_ns,
                phases,
                loops,
            },
        )
}

pub(super) fn machine() -> impl Strategy<Value = MachineChoice> {
    prop_oneof![
        Just(MachineChoice::Preset("vm-2cpu")),
        Just(MachineChoice::Preset("a7-octa")),
        // Every preset, the big ones included: balancing, NUMA levels and
        // SD_SERIALIZE run under --check too.
        Just(MachineChoice::Preset("icx-2s-80c-ht")),
        Just(MachineChoice::Preset("gnr-2s-snc3")),
        Just(MachineChoice::Preset("cwf-2s-240c")),
        Just(MachineChoice::Preset("epyc-2s-256c-smt")),
        (1u32..=2, 1u32..=2, 1u32..=3, 1u32..=2)
            .prop_map(|(a, b, c, d)| MachineChoice::Test(a, b, c, d)),
        // One CPU.
        Just(MachineChoice::Test(1, 1, 1, 1)),
        // Odd machines: 1-3 nodes of 1-4 cores of 1 or 2 threads each
        // (asymmetric nodes, lone CPUs beside SMT cores).
        prop::collection::vec(prop::collection::vec(1u32..=2, 1..=4), 1..=3)
            .prop_map(MachineChoice::Odd),
    ]
}

/// The machines of [`machine`] of at most 4 CPUs, and a7-octa (8 CPUs,
/// whose syscalls cost 4x the x86 ones): vm-2cpu, one CPU, the test
/// machines and odd machines of up to 4 CPUs (SMT, two LLCs, two nodes,
/// asymmetric nodes all among them).
pub(super) fn small_machine() -> impl Strategy<Value = MachineChoice> {
    let tests: Vec<MachineChoice> = (1u32..=2)
        .flat_map(|a| {
            (1u32..=2).flat_map(move |b| {
                (1u32..=3).flat_map(move |c| (1u32..=2).map(move |d| (a, b, c, d)))
            })
        })
        .filter(|&(a, b, c, d)| a * b * c * d <= 4)
        .map(|(a, b, c, d)| MachineChoice::Test(a, b, c, d))
        .collect();
    prop_oneof![
        Just(MachineChoice::Preset("vm-2cpu")),
        Just(MachineChoice::Preset("a7-octa")),
        prop::sample::select(tests),
        Just(MachineChoice::Test(1, 1, 1, 1)),
        prop::collection::vec(prop::collection::vec(1u32..=2, 1..=4), 1..=3)
            .prop_filter("at most 4 CPUs", |n| n.iter().flatten().sum::<u32>() <= 4)
            .prop_map(MachineChoice::Odd),
    ]
}

pub(super) fn preempt() -> impl Strategy<Value = PreemptModel> {
    prop_oneof![
        Just(PreemptModel::None),
        Just(PreemptModel::Voluntary),
        Just(PreemptModel::Full),
        Just(PreemptModel::Lazy),
    ]
}

pub(super) fn case() -> impl Strategy<Value = GenCase> {
    (
        machine(),
        prop::collection::vec(gen_task(), 1..=12),
        any::<u64>(),
        prop::sample::select(vec![100u32, 250, 1000]),
        preempt(),
        // Every boolean feature (DELAY_ZERO included), with THROTTLE and
        // LB_SERIALIZE below: every combination can be drawn.
        prop_oneof![3 => Just([true; 11]), 1 => any::<[bool; 11]>()],
        0u8..3,
        prop::collection::vec((0u32..12, 1u32..=4), 0..=2),
        prop_oneof![1 => Just(Vec::new()), 2 => prop::collection::vec(gen_group(), 1..=5)],
        prop::collection::vec(
            (
                any::<u32>(),
                prop::array::uniform3(prop::option::weighted(0.15, any::<u32>())),
            ),
            12,
        ),
        0u8..3,
    )
        .prop_map(
            |(
                machine,
                tasks,
                seed,
                hz,
                preempt,
                features,
                lb_serialize,
                forks,
                groups,
                placement,
                throttle,
            )| GenCase {
                machine,
                tasks,
                seed,
                hz,
                preempt,
                features,
                lb_serialize,
                forks,
                groups,
                placement,
                throttle,
            },
        )
}
