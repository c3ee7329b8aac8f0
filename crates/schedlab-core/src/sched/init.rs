//! Set-up (`sched_init`, `sched_fork`, `sched_create_group`): builds a
//! [`Sim`] from a [`Workload`] on a [`Machine`]. It validates the
//! workload against the machine (affinities, groups, fork pools, programs
//! that could never advance time, SCHED_DEADLINE admission control),
//! creates the tasks and their entities, the task-group hierarchy and its
//! queues, rt-app's main thread (which creates the other threads one after
//! the other), the sched domains' run-time state, and queues the first
//! events.

use crate::config::{NoiseSetting, SimConfig};
use crate::event::queue::EventQueue;
use crate::event::Event;
use crate::fair::bandwidth::CfsBandwidth;
use crate::fair::eevdf::EevdfParams;
use crate::fair::group::TaskGroup;
use crate::fair::pelt::SchedAvg;
use crate::fair::weight::task_weight;
use crate::ids::{CfsRqId, CpuId, EntityId, GroupId, TaskId};
use crate::machine::domains::SchedDomains;
use crate::machine::{CpuMask, Machine};
use crate::observe::Sink;
use crate::program::{check_dl_params, DlParams, Op, Policy, TaskSpec, Workload};
use crate::rng;
use crate::rq::{CfsRq, LlcState, Rq, SchedEntity};
use crate::runtime::Runtime;
use crate::sched::group::MAX_GROUP_DEPTH;
use crate::sim::{SchedState, Sim, SimError};
use crate::stats::{Accounting, CpuStats, Profile};
use crate::task::{ChanRetry, Pc, Task, TaskState};
use crate::time::{Nanos, NSEC_PER_MSEC};
use rand::Rng;

/// Longest run accepted (one simulated year; anything near u64 overflows).
pub const MAX_DURATION_NS: Nanos = 365 * 24 * 3600 * crate::time::NSEC_PER_SEC;

/// Time rt-app's main thread takes to create one thread (`pthread_create`
/// of a thread with its own stack and attributes). A guess of the order of
/// tens of µs; it only spaces the creations so that each new thread is
/// placed while the previous ones already sleep at the start barrier, as in
/// the real tool.
pub const RTAPP_THREAD_CREATE_NS: Nanos = 30_000;

/// pid of the first task; rt-app's main thread is `FIRST_PID - 1`.
pub const FIRST_PID: u32 = 1001;

impl<S: Sink> Sim<S> {
    /// Builds a simulation of `workload` on `machine`.
    pub fn new(
        machine: Machine,
        workload: &Workload,
        cfg: SimConfig,
        sink: S,
    ) -> Result<Self, SimError> {
        let n = machine.nr_cpus();
        if workload.tasks.is_empty() {
            return Err(SimError::Workload("the workload has no tasks".into()));
        }
        // The event queue's tie key holds CPU, task and group ids in 27
        // bits (event/order.rs); the main thread is one more task.
        let max = crate::event::order::MAX_ID;
        if n >= max || workload.tasks.len() + 1 >= max || workload.groups.len() + 1 >= max {
            return Err(SimError::Workload(format!(
                "{n} CPUs, {} tasks and {} task groups: each must be below {max}",
                workload.tasks.len(),
                workload.groups.len()
            )));
        }
        let p = EevdfParams {
            base_slice_ns: cfg.tunables.base_slice_ns(n),
            base_slice_normalized_ns: cfg.tunables.base_slice.normalized_ns,
            tick_ns: cfg.tick_ns(),
            place_lag: cfg.features.place_lag,
            place_deadline_initial: cfg.features.place_deadline_initial,
            run_to_parity: cfg.features.run_to_parity,
            preempt_short: cfg.features.preempt_short,
            delay_dequeue: cfg.features.delay_dequeue,
            delay_zero: cfg.features.delay_zero,
            curr_resched: crate::fair::eevdf::CurrResched::for_kernel(cfg.kernel),
            protect: crate::fair::eevdf::ProtectRule::for_kernel(cfg.kernel),
        };
        let cfs_p = crate::fair::cfs::CfsParams {
            active: cfg.features.fair_class == crate::features::FairClass::Cfs,
            latency_ns: cfg.tunables.latency_ns(n),
            min_granularity_ns: cfg.tunables.min_granularity_ns(n),
            wakeup_granularity_ns: cfg.tunables.wakeup_granularity_ns(n),
            nr_latency: cfg.tunables.nr_latency(n),
            gentle_fair_sleepers: cfg.features.gentle_fair_sleepers,
            start_debit: cfg.features.start_debit,
            next_buddy: cfg.features.next_buddy,
            last_buddy: cfg.features.last_buddy,
            alt_period: cfg.features.alt_period,
            base_slice: cfg.features.base_slice,
        };
        let mut cfs = Vec::with_capacity(n);
        let mut rqs = Vec::with_capacity(n);
        for c in 0..n {
            let cpu = CpuId(c as u32);
            cfs.push(CfsRq {
                cpu,
                ..Default::default()
            });
            rqs.push(Rq {
                cpu,
                avg_idle: 2 * cfg.tunables.migration_cost_ns,
                max_idle_balance_cost: cfg.tunables.migration_cost_ns,
                cfs: CfsRqId(c as u32),
                idle_since: Some(0),
                idle_state: Some(machine.idle_states.len() - 1),
                tick_stopped: true,
                ..Default::default()
            });
        }
        let mut ents = Vec::with_capacity(workload.tasks.len());
        let mut tasks = Vec::with_capacity(workload.tasks.len());
        let t = &cfg.tunables;
        let ratio = t
            .rt_runtime_ns()
            .map(|r| r as f64 / t.rt_period_ns() as f64);
        admit_ratio(workload, n, ratio)?;
        check_addressed_sems(workload)?;
        for (i, spec) in workload.tasks.iter().enumerate() {
            let cpus_allowed = match &spec.cpus {
                None => CpuMask::full(n),
                Some(list) => CpuMask::from_cpus(n, list).map_err(|c| {
                    SimError::Workload(format!(
                        "task '{}': CPU {c} is not on machine '{}' ({n} CPUs)",
                        spec.name, machine.name
                    ))
                })?,
            };
            if cpus_allowed.is_empty() {
                return Err(SimError::Workload(format!(
                    "task '{}': empty CPU affinity",
                    spec.name
                )));
            }
            for ph in &spec.program.phases {
                if let Some(list) = &ph.cpus {
                    CpuMask::from_cpus(n, list).map_err(|c| {
                        SimError::Workload(format!(
                            "task '{}', phase '{}': CPU {c} is not on machine '{}' ({n} CPUs)",
                            spec.name, ph.name, machine.name
                        ))
                    })?;
                }
            }
            let scaled;
            let spec = if workload.host_work {
                scaled = host_work_scaled(spec, &machine.costs);
                &scaled
            } else {
                spec
            };
            let (e, t) = new_task(
                TaskId(i as u32),
                FIRST_PID + i as u32,
                spec,
                cpus_allowed,
                &p,
                false,
            );
            ents.push(e);
            tasks.push(t);
        }
        // rt-app's main thread: creates the threads one after the other
        // (each creation costs it CPU time), then waits for the end.
        let mut ops = Vec::with_capacity(2 * workload.tasks.len() + 1);
        for (i, spec) in workload.tasks.iter().enumerate() {
            if spec.forked {
                continue; // started by a fork op, not by the main thread
            }
            ops.push(Op::Run {
                work_ns: RTAPP_THREAD_CREATE_NS,
                config_us: 0,
                perf: 0,
            });
            ops.push(Op::Spawn { task: i as u32 });
        }
        ops.push(Op::Park);
        let mut main_spec = TaskSpec::looping("rt-app", u32::MAX, Policy::Normal, ops);
        main_spec.program.loops = Some(1);
        let main = TaskId(tasks.len() as u32);
        let (e, mut t) = new_task(main, FIRST_PID - 1, &main_spec, CpuMask::full(n), &p, true);
        t.barrier_done = true;
        ents.push(e);
        tasks.push(t);
        // Task groups: queues and group entities after the root queues and
        // the task entities.
        let groups = build_groups(workload, n, p.base_slice_ns, &mut cfs, &mut ents)?;
        let lookup = |path: &str, what: String| {
            crate::sched::group::group_by_path(&groups, path).ok_or_else(|| {
                SimError::Workload(format!("{what}: task group '{path}' is not defined"))
            })
        };
        for (i, spec) in workload.tasks.iter().enumerate() {
            let g = lookup(&spec.group, format!("task '{}'", spec.name))?;
            tasks[i].group = g;
            let grp = &groups[g.idx()];
            let e = &mut ents[tasks[i].se.idx()];
            e.cfs_rq = grp.cfs_rq[0];
            e.parent = grp.se.first().copied();
            e.depth = grp.depth;
            for ph in &spec.program.phases {
                if let Some(path) = &ph.group {
                    lookup(path, format!("task '{}', phase '{}'", spec.name, ph.name))?;
                }
            }
        }
        // Boot-to-boot variation: where the run starts relative to the tick
        // grid, and a start-up time of 1-2 ms, both drawn from the seed.
        let tick = cfg.tick_ns();
        let tick_offset = rng::stream(cfg.seed, "tick-phase").random_range(0..tick);
        let t_start = NSEC_PER_MSEC + rng::stream(cfg.seed, "start").random_range(0..NSEC_PER_MSEC);
        let duration = cfg.duration_ns.or(workload.duration_ns);
        if duration.is_some_and(|d| d > MAX_DURATION_NS) {
            return Err(SimError::Workload(format!(
                "the run length is more than the {} s the simulator accepts",
                MAX_DURATION_NS / crate::time::NSEC_PER_SEC
            )));
        }
        for spec in &workload.tasks {
            // A program that repeats for ever and whose every op takes no
            // time would spin at one instant (rt-app `mem: 1`, `run: 0`, a
            // fork pool used up). Every synchronisation op and yield costs
            // its calls' CPU time (sched/syscall_cost.rs), so only these
            // remain; this guard is the backstop.
            let instant = |o: &crate::program::Op| {
                use crate::program::Op;
                matches!(
                    o,
                    Op::Sleep { ns: 0 }
                        | Op::Run { work_ns: 0, .. }
                        | Op::Work { work_ns: 0 }
                        | Op::Runtime { wall_ns: 0, .. }
                        | Op::Fork { .. }
                )
            };
            if spec.program.loops.is_none()
                && spec
                    .program
                    .phases
                    .iter()
                    .all(|ph| ph.ops.iter().all(instant))
            {
                return Err(SimError::Workload(format!(
                    "task '{}': loops for ever and none of its ops takes any time, so it would spin without end",
                    spec.name
                )));
            }
            for ph in &spec.program.phases {
                if ph
                    .ops
                    .iter()
                    .all(|o| matches!(o, crate::program::Op::Sleep { ns: 0 }))
                {
                    return Err(SimError::Workload(format!(
                        "task '{}', phase '{}': every op takes no time (sleep 0), so it would loop without end",
                        spec.name, ph.name
                    )));
                }
                for op in &ph.ops {
                    if let crate::program::Op::Fork { pool } = op {
                        let ok = workload.fork_pools.get(*pool as usize).is_some_and(|p| {
                            p.iter()
                                .all(|&c| workload.tasks.get(c as usize).is_some_and(|c| c.forked))
                        });
                        if !ok {
                            return Err(SimError::Workload(format!(
                                "task '{}', phase '{}': fork pool {pool} is not a pool of forked threads",
                                spec.name, ph.name
                            )));
                        }
                    }
                }
            }
        }
        let trace = sink.wants_trace();
        let domains = SchedDomains::for_release(&machine, cfg.hz, cfg.kernel);
        let mut sim = Sim {
            sched: SchedState {
                p,
                cfs_p,
                rqs,
                lb_cpus: Vec::new(),
                nohz_idle: CpuMask::new(n),
                all_cpus: CpuMask::full(n),
                lb_stale_read: Default::default(),
                lb_sums: Vec::new(),
                lb_sum_kept: Vec::new(),
                lb_sums_any: false,
                lb_sum_start: Vec::new(),
                lb_sum_ids: Vec::new(),
                lb_stale_sum: Default::default(),
                ents,
                rd_overloaded: false,
                cfs_tasks_seq: 0,
                cfs_tasks: crate::cfs_tasks::CfsTasks::new(n, tasks.len()),
                in_newidle: false,
                rt_seq: 0,
                ni_rng: rng::stream(cfg.seed, "ni_random"),
                nohz_next_balance: 0,
                nohz_kick_pending: false,
                ilb_cpu: None,
                llc_state: vec![
                    LlcState {
                        has_idle_cores: true,
                        nr_idle_scan: u32::MAX,
                        scan_jiffy: u64::MAX,
                        avg_scan_cost: 0,
                        overload: CpuMask::new(n),
                    };
                    domains.llc_shared.len()
                ],
                tick_offset,
                cfs,
                groups,
                tasks,
                sd_state: domains
                    .per_cpu
                    .iter()
                    .map(|doms| {
                        doms.iter()
                            .map(|sd| crate::rq::SdState {
                                balance_interval_ms: sd.balance_interval_ms,
                                // NI_RANDOM's statistics start at a 50 %
                                // success rate, as `sd_init` sets them in
                                // the proportional newidle balance change
                                // (tip, 2025-11): call 512, success 256,
                                // ratio 512.
                                newidle_call: 512,
                                newidle_success: 256,
                                newidle_ratio: 512,
                                ..Default::default()
                            })
                            .collect()
                    })
                    .collect(),
                balance_flag: Default::default(),
                flag_clock_base: vec![(Nanos::MAX, 0); n],
                domains,
            },
            prog: Runtime::new(workload, cfg.kernel),
            acct: Accounting {
                newidle_cost: 0,
                newidle_atomic_cost: 0,
                steal_cost: 0,
                throttle_cost: vec![0; n],
                cpu_stats: vec![CpuStats::default(); n],
                profile: Profile::default(),
                waste: Default::default(),
                waste_spans: Default::default(),
                counters: Default::default(),
            },
            now: 0,
            queue: EventQueue::new(),
            t_start,
            t0: None,
            t_release: None,
            last_exit: 0,
            deadlock: false,
            end: duration.map(|d| t_start + d),
            events: 0,
            fast_forwarded: 0,
            fold_splits: 0,
            folds: crate::folds::Folds::new(n, workload.channels.len()),
            swapper_names: (0..n).map(|c| format!("swapper/{c}")).collect(),
            idle_traced: vec![None; n],
            idle_trace_started: false,
            sink,
            violation: None,
            trace,
            stat_quiet: false,
            exec_ctx: None,
            noise: None,
            rows: None,
            numa_fork_rule: crate::fair::select::NumaForkRule::for_kernel(cfg.kernel),
            numa_lb_rule: crate::fair::select::NumaLbRule::for_kernel(cfg.kernel),
            sys: crate::sched::syscall_cost::SyscallCosts::for_machine(&machine.costs),
            machine,
            cfg,
        };
        sim.noise = match &sim.cfg.noise {
            NoiseSetting::Off => None,
            NoiseSetting::Machine => sim.machine.noise.clone(),
            NoiseSetting::Given(p) => Some(p.clone()),
        }
        .and_then(|p| crate::noise::NoiseState::new(p, sim.cfg.seed));
        sim.lb_init();
        sim.queue.push(t_start, Event::TaskStart { task: main });
        let realtime = |p: Policy| matches!(p, Policy::Fifo | Policy::Rr | Policy::Deadline);
        if workload.tasks.iter().any(|t| {
            realtime(t.policy)
                || t.program
                    .phases
                    .iter()
                    .any(|ph| ph.sched.is_some_and(|(p, _)| realtime(p)))
        }) {
            sim.start_rt_period();
        }
        sim.queue
            .push(t_start + crate::stats::WASTE_SAMPLE_NS, Event::WasteSample);
        sim.noise_init();
        if let Some(e) = sim.end {
            sim.queue.push(e, Event::End);
        }
        Ok(sim)
    }
}

/// Builds a task and its scheduling entity.
/// A task whose `Run` / `Work` amounts are host-measured figures
/// (`Workload::host_work`), scaled to the machine by the syscall costs'
/// rule (`sched/syscall_cost.rs`).
fn host_work_scaled(spec: &TaskSpec, c: &crate::machine::MachineCosts) -> TaskSpec {
    let s = |ns: Nanos| crate::sched::syscall_cost::scale_host_ns(c, ns);
    let mut spec = spec.clone();
    for ph in &mut spec.program.phases {
        for op in &mut ph.ops {
            match op {
                crate::program::Op::Run { work_ns, .. } | crate::program::Op::Work { work_ns } => {
                    *work_ns = s(*work_ns)
                }
                _ => {}
            }
        }
    }
    spec
}

fn new_task(
    id: TaskId,
    pid: u32,
    spec: &TaskSpec,
    cpus_allowed: CpuMask,
    p: &EevdfParams,
    internal: bool,
) -> (SchedEntity, Task) {
    let w = task_weight(spec.policy, spec.nice);
    let se = SchedEntity {
        weight: w,
        slice: spec.custom_slice_ns.unwrap_or(p.base_slice_ns),
        custom_slice: spec.custom_slice_ns.is_some(),
        idle: spec.policy == Policy::Idle,
        task: Some(id),
        avg: SchedAvg::default(),
        ..Default::default()
    };
    let task = Task {
        id,
        pid,
        spec: spec.clone(),
        policy: spec.policy,
        nice: spec.nice,
        nr_cpus_allowed: cpus_allowed.weight() as u32,
        cpus_allowed,
        se: EntityId(id.0),
        state: TaskState::New,
        cpu: CpuId(0),
        wait_since: None,
        pc: Pc::default(),
        work_left: 0,
        stat_unreported: 0,
        sched_work_pending: 0,
        op_start: 0,
        runtime_end: 0,
        wake_expiry: None,
        wake_is_timer: false,
        timer_gen: 0,
        timer_cpu: CpuId(0),
        timer_expiry: 0,
        iter: Default::default(),
        log: Vec::new(),
        latency: Default::default(),
        slack: Default::default(),
        stats: Default::default(),
        resume: crate::task::Resume::Continue,
        delay_done: spec.delay_ns == 0,
        barrier_done: spec.forked,
        fork_time: None,
        internal,
        recent_used_cpu: CpuId(0),
        wakee: Default::default(),
        cfs_tasks_stamp: 0,
        on_cpu_until: 0,
        enqueued_from: None,
        chan_pos: 0,
        paid: 0,
        chan_waited: false,
        chan_retry: ChanRetry::Paid,
        sync_stage: 0,
        stamps: [0; 2],
        batch: 0,
        spin_lock: 0,
        rr_next: 0,
        wake_batch: Vec::new(),
        wake_now: 0,
        group: crate::ids::GroupId(0),
        throttle_work: false,
        prio: crate::fair::weight::kernel_prio(spec.policy, spec.nice),
        normal_prio: crate::fair::weight::kernel_prio(spec.policy, spec.nice),
        rt_seq: 0,
        rr_left: 0,
        dl: crate::task::DlState {
            params: if spec.policy == Policy::Deadline {
                spec.dl
            } else {
                None
            },
            ..Default::default()
        },
    };
    (se, task)
}

/// Builds the groups of a workload: the root group over the CPUs' root
/// queues, then, per listed group and CPU, a queue and a group entity.
/// Returns the groups; queues and entities are appended to the arenas.
pub(crate) fn build_groups(
    workload: &Workload,
    n: usize,
    base_slice: crate::time::Nanos,
    cfs: &mut Vec<CfsRq>,
    ents: &mut Vec<SchedEntity>,
) -> Result<Vec<TaskGroup>, SimError> {
    let mut groups = vec![TaskGroup {
        path: "/".into(),
        parent: None,
        depth: 0,
        shares: 1024,
        idle: false,
        cfs_rq: (0..n).map(|c| CfsRqId(c as u32)).collect(),
        se: Vec::new(),
        load_avg: 0,
        bw: None,
        usage_ns: 0,
        system_ns: 0,
        children: Vec::new(),
    }];
    for spec in &workload.groups {
        if groups.iter().any(|g| g.path == spec.path) {
            return Err(SimError::Workload(format!(
                "task group '{}' is listed twice",
                spec.path
            )));
        }
        let parent_path = spec.parent_path();
        let Some(parent) = groups.iter().position(|g| g.path == parent_path) else {
            return Err(SimError::Workload(format!(
                "task group '{}': its parent '{parent_path}' is not listed before it",
                spec.path
            )));
        };
        let depth = groups[parent].depth + 1;
        if depth as usize > MAX_GROUP_DEPTH {
            return Err(SimError::Workload(format!(
                "task group '{}': more than {MAX_GROUP_DEPTH} levels deep",
                spec.path
            )));
        }
        let id = GroupId(groups.len() as u32);
        let mut g = TaskGroup {
            path: spec.path.clone(),
            parent: Some(GroupId(parent as u32)),
            depth,
            shares: spec.shares,
            idle: spec.idle,
            cfs_rq: Vec::with_capacity(n),
            se: Vec::with_capacity(n),
            load_avg: 0,
            bw: spec
                .quota_ns
                .map(|q| CfsBandwidth::new(q, spec.period_ns, spec.burst_ns)),
            usage_ns: 0,
            system_ns: 0,
            children: Vec::new(),
        };
        let w = g.effective_shares();
        for c in 0..n {
            let q = CfsRqId(cfs.len() as u32);
            let e = EntityId(ents.len() as u32);
            let parent_q = groups[parent].cfs_rq[c];
            let parent_se = groups[parent].se.get(c).copied();
            cfs.push(CfsRq {
                cpu: CpuId(c as u32),
                tg: id,
                se: Some(e),
                bw: crate::rq::CfsRqBandwidth {
                    enabled: g.bw.is_some(),
                    ..Default::default()
                },
                ..Default::default()
            });
            ents.push(SchedEntity {
                weight: w,
                slice: base_slice,
                cfs_rq: parent_q,
                my_q: Some(q),
                parent: parent_se,
                depth: depth - 1,
                idle: g.idle,
                ..Default::default()
            });
            g.cfs_rq.push(q);
            g.se.push(e);
        }
        groups[parent].children.push(id);
        groups.push(g);
    }
    Ok(groups)
}

/// Addressed semaphores (`Op::SemSend`): indices in range, and no
/// semaphore posted both with an address and without one (its tokens and
/// addresses would no longer pair first in, first out).
pub fn check_addressed_sems(w: &Workload) -> Result<(), SimError> {
    use crate::program::Op;
    let mut sent = vec![false; w.sems as usize];
    let mut posted = vec![false; w.sems as usize];
    for t in &w.tasks {
        for op in t.program.phases.iter().flat_map(|p| &p.ops) {
            let (sem, by_send) = match *op {
                Op::SemSend { sem, reply } => {
                    if reply >= w.sems {
                        return Err(SimError::Workload(format!(
                            "task '{}': SemSend replies to semaphore {reply}, the workload has {}",
                            t.name, w.sems
                        )));
                    }
                    (sem, true)
                }
                Op::SemPost { sem } => (sem, false),
                _ => continue,
            };
            let Some(slot) = sent.get_mut(sem as usize) else {
                return Err(SimError::Workload(format!(
                    "task '{}': semaphore {sem} posted, the workload has {}",
                    t.name, w.sems
                )));
            };
            *slot |= by_send;
            posted[sem as usize] |= !by_send;
            if sent[sem as usize] && posted[sem as usize] {
                return Err(SimError::Workload(format!(
                    "task '{}': semaphore {sem} is posted both with a reply address (SemSend) and without (SemPost)",
                    t.name
                )));
            }
        }
    }
    // A reply needs an address: its task must wait on a semaphore that is
    // never posted without one (addressed, or never posted at all: then
    // the reply is never reached).
    for t in &w.tasks {
        let ops = || t.program.phases.iter().flat_map(|p| &p.ops);
        let replies = ops().any(|op| *op == Op::SemReply);
        let takes = ops().any(
            |op| matches!(*op, Op::SemWait { sem } if posted.get(sem as usize) == Some(&false)),
        );
        if replies && !takes {
            return Err(SimError::Workload(format!(
                "task '{}': SemReply, but it never waits on a semaphore SemSend posts (no reply address)",
                t.name
            )));
        }
    }
    Ok(())
}

/// Admission control over a whole workload: each deadline task counts
/// with the largest bandwidth it ever asks for.
///
/// The global limit `ratio` is `sched_rt_runtime_us / sched_rt_period_us`
/// (0.95 by default; None: `sched_rt_runtime_us = -1`, no limit).
pub fn admit_ratio(w: &Workload, ncpu: usize, ratio: Option<f64>) -> Result<(), SimError> {
    let mut total = 0.0f64;
    for t in &w.tasks {
        let mut sets: Vec<&DlParams> = Vec::new();
        if t.policy == Policy::Deadline {
            match &t.dl {
                Some(p) => sets.push(p),
                None => {
                    return Err(SimError::Workload(format!(
                        "task '{}': SCHED_DEADLINE without dl-runtime (sched_setattr would fail with EINVAL)",
                        t.name
                    )))
                }
            }
        }
        for ph in &t.program.phases {
            if let (Some((Policy::Deadline, _)), Some(p)) = (ph.sched, &ph.dl) {
                sets.push(p);
            }
        }
        let mut bw = 0.0f64;
        for p in sets {
            check_dl_params(p).map_err(|e| {
                SimError::Workload(format!(
                    "task '{}': {e} (sched_setattr would fail with EINVAL)",
                    t.name
                ))
            })?;
            bw = bw.max(p.runtime_ns as f64 / p.period_ns as f64);
        }
        total += bw;
    }
    let Some(ratio) = ratio else {
        return Ok(());
    };
    let cap = ratio * ncpu as f64;
    if total > cap + 1e-9 {
        let pct = (ratio * 100_000.0).round() / 1000.0;
        return Err(SimError::Workload(format!(
            "SCHED_DEADLINE admission control: the deadline tasks ask for {total:.3} CPUs of bandwidth, more than {pct} % of {ncpu} CPUs ({cap:.2}); sched_setattr would fail with EBUSY"
        )));
    }
    Ok(())
}
