//! A generated case as the workload the simulator runs.

use super::*;

/// The `nice` field for a policy: nice for fair ones, an RT priority
/// (1..=91) for FIFO/RR.
pub(super) fn prio_for(policy: Policy, nice: i32) -> i32 {
    match policy {
        Policy::Fifo | Policy::Rr => 1 + (nice + 5) * 9,
        _ => nice,
    }
}

/// Deadline parameters small enough that any 12 tasks pass admission on
/// one CPU: 1 ms every 20..=31 ms (at most 5 %), constrained deadline for
/// odd `k`.
pub(super) fn dl_for(k: usize) -> DlParams {
    let period = (20 + (k % 12) as u64) * NSEC_PER_MSEC;
    DlParams {
        runtime_ns: NSEC_PER_MSEC,
        deadline_ns: if k % 2 == 1 { period / 2 } else { period },
        period_ns: period,
    }
}

/// A non-empty CPU list of an `n`-CPU machine from random bits.
pub(super) fn cpu_set(bits: u32, n: usize) -> Vec<u32> {
    let v: Vec<u32> = (0..n as u32)
        .filter(|c| bits >> (c % 32) & 1 == 1)
        .collect();
    if v.is_empty() {
        vec![bits % n as u32]
    } else {
        v
    }
}

pub(super) fn build(c: &GenCase, n: usize) -> Workload {
    let mut w = Workload {
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    };
    for s in 0..SHARED_TIMERS {
        w.timers.push(TimerSpec {
            name: format!("shared{s}"),
            absolute: s == 1,
        });
    }
    let mut paths = vec!["/".to_string()];
    for (k, g) in c.groups.iter().enumerate() {
        let parent = &paths[g.parent as usize % paths.len()];
        let path = if parent == "/" {
            format!("/g{k}")
        } else {
            format!("{parent}/g{k}")
        };
        let mut spec = schedlab_core::program::GroupSpec::new(path.clone());
        spec.shares = g.shares;
        spec.idle = g.idle;
        if let Some((q, p, b)) = g.max {
            spec.quota_ns = Some(q * NSEC_PER_USEC);
            spec.period_ns = p * NSEC_PER_USEC;
            spec.burst_ns = b * NSEC_PER_USEC;
        }
        w.groups.push(spec);
        paths.push(path);
    }
    let group_of = |sel: u32| paths[sel as usize % paths.len()].clone();
    let mut barrier_users = vec![0u32; SYNC_OBJECTS as usize];
    for (i, t) in c.tasks.iter().enumerate() {
        let name = format!("t{i}-{i}");
        let mut unique: Option<TimerRef> = None;
        let mut phases = Vec::new();
        for (pi, p) in t.phases.iter().enumerate() {
            let run = |ns: u64| Op::Run {
                work_ns: ns,
                config_us: ns / NSEC_PER_USEC,
                perf: ns / 100 / 1000,
            };
            // Each task suspends on its own condition and mutex, after the
            // shared ones.
            let own = |k: u32| SYNC_OBJECTS + k;
            let ops = p
                .ops
                .iter()
                .flat_map(|o| match *o {
                    GenOp::Critical(m, ns) => {
                        vec![Op::Lock { mutex: m }, run(ns), Op::Unlock { mutex: m }]
                    }
                    GenOp::CondWait(c, m) => vec![
                        Op::Lock { mutex: m },
                        Op::Wait { cond: c, mutex: m },
                        Op::Unlock { mutex: m },
                    ],
                    GenOp::Signal(c, all) => vec![Op::Signal { cond: c, all }],
                    GenOp::SemPost(sem) => vec![Op::SemPost { sem }],
                    GenOp::SemWait(sem) => vec![Op::SemWait { sem }],
                    GenOp::Barrier(b) => {
                        barrier_users[b as usize] += 1;
                        vec![Op::Barrier { barrier: b }]
                    }
                    GenOp::Suspend => vec![Op::Suspend {
                        cond: own(i as u32),
                        mutex: own(i as u32),
                    }],
                    GenOp::Resume(k) => {
                        let k = own(k % c.tasks.len() as u32);
                        vec![Op::Resume { cond: k, mutex: k }]
                    }
                    GenOp::LockUnlock(m) => {
                        vec![Op::Lock { mutex: m }, Op::Unlock { mutex: m }]
                    }
                    GenOp::IoMem(bytes) => vec![
                        Op::Work {
                            work_ns: bytes / 10,
                        };
                        2
                    ],
                    other => vec![match other {
                        GenOp::Run(ns) => run(ns),
                        GenOp::Runtime(ns) => Op::Runtime {
                            wall_ns: ns,
                            config_us: ns / NSEC_PER_USEC,
                        },
                        GenOp::Sleep(ns) => Op::Sleep { ns },
                        GenOp::Yield => Op::Yield,
                        GenOp::Timer(k, period_ns) => {
                            let timer = if k < SHARED_TIMERS {
                                TimerRef(k)
                            } else {
                                *unique.get_or_insert_with(|| {
                                    w.timers.push(TimerSpec {
                                        name: format!("unique@{name}"),
                                        absolute: k % 2 == 1,
                                    });
                                    TimerRef(w.timers.len() as u32 - 1)
                                })
                            };
                            Op::Timer { timer, period_ns }
                        }
                        _ => unreachable!("expanded above"),
                    }],
                })
                .collect();
            phases.push(Phase {
                name: format!("p{pi}"),
                loops: p.loops,
                ops,
                cpus: p.cpus.map(|b| cpu_set(b, n)),
                sched: p.sched.map(|(pol, nice)| (pol, prio_for(pol, nice))),
                // rt-app ignores a custom slice for SCHED_IDLE (see lower.rs)
                // and reads dl-runtime as a budget for SCHED_DEADLINE.
                slice_ns: match p.sched {
                    Some((Policy::Normal | Policy::Batch, _)) => {
                        p.slice_us.map(|us| us * NSEC_PER_USEC)
                    }
                    _ => None,
                },
                uclamp: Default::default(),
                dl: match p.sched {
                    Some((Policy::Deadline, _)) => Some(dl_for(i + pi)),
                    _ => None,
                },
                group: None,
                marks: Vec::new(),
            });
        }
        w.tasks.push(TaskSpec {
            name,
            index: i as u32,
            policy: t.policy,
            nice: prio_for(t.policy, t.nice),
            cpus: t.cpus.map(|b| cpu_set(b, n)),
            delay_ns: t.delay_ns,
            custom_slice_ns: t.custom_slice_ns.filter(|_| t.policy.is_fair()),
            dl: (t.policy == Policy::Deadline).then(|| dl_for(i)),
            uclamp: Default::default(),
            forked: false,
            log_rows: true,
            group: group_of(c.placement[i].0),
            program: Program {
                phases,
                loops: t.loops,
            },
        });
        let last = w.tasks.last_mut().unwrap();
        for (pi, ph) in last.program.phases.iter_mut().enumerate() {
            ph.group = c.placement[i].1[pi].map(group_of);
        }
    }
    // Forked threads: run, sleep, twice; started by a fork op put at the
    // head of the forking task's first phase.
    for (k, &(parent, size)) in c.forks.iter().enumerate() {
        let parent = parent as usize % c.tasks.len();
        let mut pool = Vec::new();
        for j in 0..size {
            let index = w.tasks.len() as u32;
            let mut t = crate::common::task(
                &format!("f{k}-{index}-{:04}", j + 1),
                index,
                Policy::Normal,
                0,
                vec![
                    Op::Run {
                        work_ns: NSEC_PER_MSEC,
                        config_us: 1000,
                        perf: 10,
                    },
                    Op::Sleep { ns: NSEC_PER_MSEC },
                ],
            );
            t.forked = true;
            t.program.loops = Some(2);
            pool.push(index);
            w.tasks.push(t);
        }
        w.tasks[parent].program.phases[0]
            .ops
            .insert(0, Op::Fork { pool: k as u32 });
        w.fork_pools.push(pool);
    }
    w.mutexes = SYNC_OBJECTS + c.tasks.len() as u32;
    // PI mutexes (hand-off and priority inheritance) in half the cases.
    w.pi_mutexes = c.seed & 1 == 1;
    w.conds = SYNC_OBJECTS + c.tasks.len() as u32;
    w.sems = SYNC_OBJECTS;
    // rt-app counts one participant per referencing event at parse time.
    w.barriers = barrier_users;
    w
}
