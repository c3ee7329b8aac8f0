//! Lowering rules checked on small hand-written files (formats-spec.md 1.3–1.8).

use schedlab_core::program::{DlParams, Op, Policy, TimerRef};
use schedlab_workload::{load_rtapp, Loaded};

fn ok(text: &str) -> Loaded {
    load_rtapp("w.json", text, 4).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn repeated_event_keys_are_separate_events_in_text_order() {
    // json-c alone would see: run 2000, sleep 500 (formats-spec.md 1.2).
    let l = ok(
        r#"{"tasks": {"t": {"run": 1000, "sleep": 500, "run": 2000}}, "global": {"calibration": 10}}"#,
    );
    let ops = &l.workload.tasks[0].program.phases[0].ops;
    assert_eq!(
        ops,
        &vec![
            Op::Run {
                work_ns: 1_000_000,
                config_us: 1000,
                perf: 100
            },
            Op::Sleep { ns: 500_000 },
            Op::Run {
                work_ns: 2_000_000,
                config_us: 2000,
                perf: 200
            },
        ]
    );
    assert!(l.warnings.is_empty());
}

#[test]
fn repeated_loop_last_value_wins_with_warning() {
    let l = ok("{\"tasks\": {\"t\": {\"loop\": 2, \"run\": 5,\n \"loop\": 7}}}");
    let t = &l.workload.tasks[0];
    assert_eq!(t.program.loops, Some(1));
    assert_eq!(t.program.phases[0].loops, 7);
    let w: Vec<_> = l
        .warnings
        .iter()
        .filter(|w| w.contains("\"loop\""))
        .collect();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].starts_with("w.json:2:2: warning: key \"loop\" appears 2 times"),
        "{}",
        w[0]
    );
}

#[test]
fn run_truncates_to_whole_loops() {
    // pLoad 128 ns (dvfs.json's value): 900 µs = 7031 loops = 899968 ns, perf 7.
    let l = ok(r#"{"tasks": {"t": {"run": 900}}, "global": {"calibration": 128}}"#);
    let op = &l.workload.tasks[0].program.phases[0].ops[0];
    assert_eq!(
        op,
        &Op::Run {
            work_ns: 899_968,
            config_us: 900,
            perf: 7
        }
    );
    assert_eq!(l.workload.calibration_ns, 128);
}

#[test]
fn shared_timer_is_absolute_if_any_use_says_so() {
    let l = ok(r#"{"tasks": {
        "a": {"instance": 2, "run": 5, "timer": {"ref": "tick", "period": 100}},
        "b": {"run": 5, "timer1": {"ref": "tick", "period": 200, "mode": "absolute"}},
        "c": {"instance": 0, "run": 5, "timer": {"ref": "uniqueX", "period": 50}}
    }}"#);
    let w = &l.workload;
    // Template task c creates no thread and no timer.
    let names: Vec<_> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a-0", "a-1", "b-2"]);
    assert_eq!(w.timers.len(), 1);
    assert_eq!(
        (w.timers[0].name.as_str(), w.timers[0].absolute),
        ("tick", true)
    );
    for t in &w.tasks {
        let op = t.program.phases[0].ops[1].clone();
        assert!(
            matches!(
                op,
                Op::Timer {
                    timer: TimerRef(0),
                    ..
                }
            ),
            "{op:?}"
        );
    }
}

#[test]
fn custom_slice_is_clamped_and_priority_is_nice() {
    let l = ok(r#"{"tasks": {
        "a": {"run": 5, "priority": -19, "dl-runtime": 100000},
        "b": {"run": 5, "policy": "SCHED_BATCH", "priority": 7, "dl-runtime": 50},
        "c": {"run": 5, "policy": "SCHED_IDLE", "priority": 7}
    }}"#);
    let t = &l.workload.tasks;
    assert_eq!(
        (t[0].policy, t[0].nice, t[0].custom_slice_ns),
        (Policy::Normal, -19, Some(100_000_000))
    );
    assert_eq!(
        (t[1].policy, t[1].nice, t[1].custom_slice_ns),
        (Policy::Batch, 7, Some(100_000))
    );
    assert_eq!(
        (t[2].policy, t[2].nice, t[2].custom_slice_ns),
        (Policy::Idle, 0, None)
    );
    assert!(l
        .warnings
        .iter()
        .any(|w| w.contains("custom slice 50 µs clamped to 100 µs")));
    assert!(l
        .warnings
        .iter()
        .any(|w| w.contains("ignored for SCHED_IDLE")));
}

#[test]
fn phase_sched_and_delay() {
    let l = ok(r#"{"tasks": {"t": {"delay": 1500, "loop": 2, "phases": {
        "a": {"policy": "SCHED_BATCH", "run": 5},
        "b": {"priority": 3, "sleep": 5},
        "c": {"loop": 4, "yield": true}
    }}}, "global": {"default_policy": "SCHED_IDLE"}}"#);
    let t = &l.workload.tasks[0];
    assert_eq!(t.policy, Policy::Idle);
    assert_eq!(t.delay_ns, 1_500_000);
    assert_eq!(t.program.loops, Some(2));
    let p = &t.program.phases;
    assert_eq!(p[0].sched, Some((Policy::Batch, 0)));
    // Priority alone keeps the policy set by the earlier phase.
    assert_eq!(p[1].sched, Some((Policy::Batch, 3)));
    assert_eq!((p[2].sched, p[2].loops), (None, 4));
    assert_eq!(p[2].ops, vec![Op::Yield]);
}

#[test]
fn legacy_runtime_is_an_event_and_a_slice() {
    let l = ok(r#"{"tasks": {"t": {"runtime": 2000, "sleep": 10}}}"#);
    let t = &l.workload.tasks[0];
    assert_eq!(
        t.program.phases[0].ops[0],
        Op::Runtime {
            wall_ns: 2_000_000,
            config_us: 2000
        }
    );
    assert_eq!(t.custom_slice_ns, Some(2_000_000));
    assert!(l
        .warnings
        .iter()
        .any(|w| w.contains("legacy scheduling runtime")));
}

#[test]
fn comments_single_quotes_and_frag() {
    let l = ok("{ /* c */ 'tasks': { 't': { 'run': 5, }, }, // x\n 'global': { 'frag': 1, 'gnuplot': TRUE, }, }");
    assert_eq!(l.workload.tasks[0].name, "t-0");
    assert!(l.warnings.iter().any(|w| w.contains("\"frag\"")));
}

#[test]
fn phase_dl_runtime_is_a_per_phase_slice() {
    let l = ok(r#"{"tasks": {"t": {"dl-runtime": 3000, "phases": {
        "a": {"dl-runtime": 20000, "run": 5},
        "b": {"run": 5},
        "c": {"priority": 2, "run": 5},
        "d": {"dl-runtime": 200000, "run": 5}
    }}}, "global": {"calibration": 100}}"#);
    let t = &l.workload.tasks[0];
    assert_eq!(t.custom_slice_ns, Some(3_000_000));
    let p = &t.program.phases;
    assert_eq!(
        (p[0].sched, p[0].slice_ns),
        (Some((Policy::Normal, 0)), Some(20_000_000))
    );
    // No scheduling keys: nothing changes at this phase.
    assert_eq!((p[1].sched, p[1].slice_ns), (None, None));
    // Scheduling keys without dl-runtime: sched_setattr with runtime 0,
    // back to the base slice.
    assert_eq!(
        (p[2].sched, p[2].slice_ns),
        (Some((Policy::Normal, 2)), None)
    );
    assert_eq!(p[3].slice_ns, Some(100_000_000));
    assert!(l
        .warnings
        .iter()
        .any(|w| w.contains("custom slice 200000 µs clamped to 100000 µs")));
}

#[test]
fn uclamp_is_recorded_per_task_and_phase() {
    let l = ok(
        r#"{"tasks": {"t": {"util_min": 128, "util_max": 512, "phases": {
        "a": {"run": 5},
        "b": {"util_max": 1024, "run": 5}
    }}}, "global": {"calibration": 100}}"#,
    );
    let t = &l.workload.tasks[0];
    assert_eq!((t.uclamp.min, t.uclamp.max), (Some(128), Some(512)));
    let p = &t.program.phases;
    assert!(p[0].uclamp.is_empty());
    assert_eq!((p[1].uclamp.min, p[1].uclamp.max), (None, Some(1024)));
    // Recording a clamp is not a scheduling change.
    assert_eq!((p[1].sched, p[1].slice_ns), (None, None));
}

#[test]
fn fork_pools_hold_one_thread_per_possible_fork() {
    // a: 2 passes x phase loop 3 = 6 forks of b; c loops for ever: 1024
    // (rt-app's cap) forks of b. b (instance 0) has no start-up thread.
    let l = ok(r#"{"tasks": {
        "a": {"loop": 2, "phases": {"p": {"loop": 3, "fork": "b", "run": 5}}},
        "b": {"instance": 0, "timer": {"ref": "unique", "period": 1000}, "run": 5},
        "c": {"fork": "b", "sleep": 5}
    }, "global": {"calibration": 100}}"#);
    let w = &l.workload;
    let started: Vec<&str> = w
        .tasks
        .iter()
        .filter(|t| !t.forked)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(started, ["a-0", "c-1"]);
    assert_eq!(w.fork_pools.len(), 2);
    assert_eq!(w.fork_pools[0].len(), 6);
    assert_eq!(w.fork_pools[1].len(), 1024);
    let first = &w.tasks[w.fork_pools[0][0] as usize];
    assert!(first.forked);
    assert_eq!(first.name, "b-2-0001");
    assert_eq!(w.tasks[w.fork_pools[0][5] as usize].name, "b-7-0006");
    assert_eq!(w.tasks[w.fork_pools[1][1023] as usize].name, "b-1031-1024");
    assert_eq!(w.tasks[0].program.phases[0].ops[0], Op::Fork { pool: 0 });
    // Each forked thread has its own unique timer.
    let timer_of = |i: u32| match w.tasks[i as usize].program.phases[0].ops[0] {
        Op::Timer { timer, .. } => timer,
        ref o => panic!("{o:?}"),
    };
    assert_ne!(timer_of(w.fork_pools[0][0]), timer_of(w.fork_pools[0][1]));
}

#[test]
fn taskgroups_configure_groups_and_taskgroup_places_threads() {
    use schedlab_core::program::GroupSpec;
    let l = ok(r#"{
  "tasks": {
    "a": {"instance": 2, "run": 5, "taskgroup": "/capped/leaf", "loop": 1},
    "b": {"loop": 1, "phases": {
      "p0": {"run": 5, "taskgroup": "/other"},
      "p1": {"run": 5},
      "p2": {"run": 5, "taskgroup": ""}
    }}
  },
  "taskgroups": {
    "/capped": {"cpu.max": "20000 100000", "cpu.max.burst": 0, "cpu.weight": 50},
    "/empty": {"cpu.idle": 1, "cpu.shares": 2048},
    "/v1": {"cpu.cfs_quota_us": 5000, "cpu.cfs_period_us": 10000, "cpu.cfs_burst_us": "1000"}
  },
  "global": {"calibration": 10}
}"#);
    let w = &l.workload;
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(w.tasks[0].group, "/capped/leaf");
    assert_eq!(w.tasks[1].group, "/capped/leaf");
    assert_eq!(w.tasks[2].group, "/");
    let phase_groups: Vec<Option<&str>> = w.tasks[2]
        .program
        .phases
        .iter()
        .map(|p| p.group.as_deref())
        .collect();
    assert_eq!(
        phase_groups,
        [Some("/other"), None, None],
        "\"\" is rt-app's none"
    );
    let paths: Vec<&str> = w.groups.iter().map(|g| g.path.as_str()).collect();
    assert_eq!(
        paths,
        ["/capped", "/capped/leaf", "/empty", "/other", "/v1"]
    );
    let capped = &w.groups[0];
    assert_eq!(capped.quota_ns, Some(20_000_000));
    assert_eq!(capped.period_ns, 100_000_000);
    assert_eq!(capped.burst_ns, 0);
    assert_eq!(capped.shares, 512);
    assert_eq!(w.groups[1], GroupSpec::new("/capped/leaf"));
    assert!(w.groups[2].idle);
    assert_eq!(w.groups[2].shares, 2048);
    let v1 = &w.groups[4];
    assert_eq!(
        (v1.quota_ns, v1.period_ns, v1.burst_ns),
        (Some(5_000_000), 10_000_000, 1_000_000)
    );
}

#[test]
fn no_taskgroup_means_no_groups() {
    let l = ok(r#"{"tasks": {"t": {"run": 5, "loop": 1}}, "global": {"calibration": 10}}"#);
    assert!(l.workload.groups.is_empty());
    assert_eq!(l.workload.tasks[0].group, "/");
}

#[test]
fn rt_policies_take_the_priority_default_10() {
    let l = ok(r#"{"tasks": {
        "a": {"run": 5, "policy": "SCHED_FIFO", "priority": 99},
        "b": {"run": 5, "policy": "SCHED_RR"},
        "c": {"run": 5, "policy": "SCHED_FIFO", "priority": 1, "dl-runtime": 1000, "dl-period": 5000},
        "d": {"run": 5}
    }, "global": {"default_policy": "SCHED_RR", "calibration": 100}}"#);
    let t = &l.workload.tasks;
    let got: Vec<_> = t
        .iter()
        .map(|t| (t.policy, t.nice, t.custom_slice_ns, t.dl))
        .collect();
    assert_eq!(
        got,
        vec![
            (Policy::Fifo, 99, None, None),
            (Policy::Rr, 10, None, None),
            (Policy::Fifo, 1, None, None),
            (Policy::Rr, 10, None, None),
        ]
    );
    for key in ["dl-runtime", "dl-period"] {
        let w = format!(
            "warning: key \"{key}\": ignored for SCHED_FIFO (it is a SCHED_DEADLINE parameter)"
        );
        assert!(
            l.warnings.iter().any(|x| x.ends_with(&w)),
            "{key}: {:?}",
            l.warnings
        );
    }
    assert_eq!(l.warnings.len(), 2, "{:?}", l.warnings);
}

#[test]
fn deadline_parameters_and_their_defaults() {
    let l = ok(r#"{"tasks": {
        "a": {"run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000, "dl-deadline": 5000},
        "b": {"run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000},
        "c": {"run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000},
        "d": {"run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 0, "period": 8000, "deadline": 6000, "priority": 3},
        "e": {"policy": "SCHED_DEADLINE", "phases": {"p": {"run": 5}}, "runtime": 1000, "period": 4000},
        "f": {"run": 5, "dl-period": 4000, "dl-deadline": 3000, "period": 5}
    }, "global": {"calibration": 100, "duration": 1}}"#);
    let dl = |r: u64, d: u64, p: u64| {
        Some(DlParams {
            runtime_ns: r * 1000,
            deadline_ns: d * 1000,
            period_ns: p * 1000,
        })
    };
    let t = &l.workload.tasks;
    let got: Vec<_> = t.iter().map(|t| (t.policy, t.nice, t.dl)).collect();
    assert_eq!(
        got,
        vec![
            (Policy::Deadline, 0, dl(2000, 5000, 10000)),
            (Policy::Deadline, 0, dl(2000, 10000, 10000)),
            (Policy::Deadline, 0, dl(2000, 2000, 2000)),
            (Policy::Deadline, 0, dl(2000, 6000, 8000)),
            (Policy::Deadline, 0, dl(1000, 4000, 4000)),
            (Policy::Normal, 0, None),
        ]
    );
    assert!(t.iter().all(|t| t.custom_slice_ns.is_none()));
    let has = |w: &str| l.warnings.iter().any(|x| x.ends_with(w));
    assert!(has(
        "warning: key \"priority\": ignored for SCHED_DEADLINE (its tasks have no priority)"
    ));
    assert!(has("warning: key \"runtime\": at task level rt-app also reads it as the legacy SCHED_DEADLINE runtime"));
    for key in ["dl-period", "dl-deadline", "period"] {
        let w = format!(
            "warning: key \"{key}\": ignored for SCHED_NORMAL (it is a SCHED_DEADLINE parameter)"
        );
        assert!(has(&w), "{key}: {:?}", l.warnings);
    }
}

#[test]
fn phase_level_rt_and_deadline() {
    let l = ok(
        r#"{"tasks": {"t": {"policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000, "phases": {
        "a": {"run": 5},
        "b": {"dl-runtime": 3000, "dl-period": 20000, "dl-deadline": 15000, "run": 5},
        "c": {"policy": "SCHED_DEADLINE", "run": 5},
        "d": {"policy": "SCHED_FIFO", "priority": 50, "run": 5},
        "e": {"policy": "SCHED_RR", "dl-runtime": 500, "run": 5},
        "f": {"policy": "SCHED_OTHER", "priority": -5, "dl-runtime": 500, "run": 5},
        "g": {"policy": "SCHED_DEADLINE", "priority": 4, "run": 5}
    }}}, "global": {"calibration": 100, "duration": 1}}"#,
    );
    let dl = |r: u64, d: u64, p: u64| {
        Some(DlParams {
            runtime_ns: r * 1000,
            deadline_ns: d * 1000,
            period_ns: p * 1000,
        })
    };
    let t = &l.workload.tasks[0];
    assert_eq!((t.policy, t.dl), (Policy::Deadline, dl(1000, 10000, 10000)));
    let got: Vec<_> = t
        .program
        .phases
        .iter()
        .map(|p| (p.sched, p.slice_ns, p.dl))
        .collect();
    assert_eq!(
        got,
        vec![
            (None, None, None),
            (Some((Policy::Deadline, 0)), None, dl(3000, 15000, 20000)),
            // Without its own dl-runtime: the parameters in force (phase b's).
            (Some((Policy::Deadline, 0)), None, dl(3000, 15000, 20000)),
            (Some((Policy::Fifo, 50)), None, None),
            (Some((Policy::Rr, 10)), None, None),
            (Some((Policy::Normal, -5)), Some(500_000), None),
            (Some((Policy::Deadline, 0)), None, dl(3000, 15000, 20000)),
        ]
    );
    assert!(l.warnings.iter().any(|w| w.ends_with(
        "warning: key \"dl-runtime\": ignored for SCHED_RR (it is a SCHED_DEADLINE parameter)"
    )));
    // A fair task whose phase is SCHED_DEADLINE with its own parameters;
    // a later phase keeps them.
    let l = ok(r#"{"tasks": {"t": {"phases": {
        "a": {"run": 5},
        "b": {"policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "run": 5},
        "c": {"priority": 1, "run": 5}
    }}}, "global": {"calibration": 100, "duration": 1}}"#);
    let t = &l.workload.tasks[0];
    assert_eq!((t.policy, t.dl), (Policy::Normal, None));
    let p = &t.program.phases;
    assert_eq!(p[1].dl, dl(100, 1000, 1000));
    assert_eq!(
        (p[2].sched, p[2].dl),
        (Some((Policy::Deadline, 0)), dl(100, 1000, 1000))
    );
}

#[test]
fn memrun_is_work_by_the_cost_model() {
    // Figures of rtapp::memcost: read 4 KiB (L1) 0.1 ns/byte, write 4 MiB
    // (LLC) 0.45 ns/byte, chase 64 MiB (DRAM) random 90 ns/hop,
    // sequential 1.5 + 88.5/8 = 12.5625 ns/hop, chase 512 KiB (L2)
    // sequential 1.9375 ns/hop (rounded up), and a count of 0.
    let l = ok(r#"{"tasks": {"t": {"loop": 1,
        "memrun": {"type": "read", "size": 4096, "count": 10000},
        "memrun1": {"type": "write", "size": 4194304, "count": 1000},
        "memrun2": {"type": "chase", "size": 67108864, "count": 1000, "pattern": "random"},
        "memrun3": {"type": "chase", "size": 67108864, "count": 1000, "pattern": "sequential", "stride": 4096},
        "memrun4": {"type": "chase", "size": 524288, "count": 1000, "pattern": "sequential", "ref": "b"},
        "memrun5": {"size": 64, "count": 0},
        "mem": 1000
    }}, "global": {"calibration": 100}}"#);
    let ops = &l.workload.tasks[0].program.phases[0].ops;
    let work: Vec<u64> = ops
        .iter()
        .map(|o| match o {
            Op::Work { work_ns } => *work_ns,
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(work, [1_000, 450, 90_000, 12_563, 1_938, 0, 100]);
    assert_eq!(
        l.warnings,
        ["w.json:7:20: warning: key \"memrun5\": a memrun with \"count\" 0 does no work"]
    );
}

#[test]
fn memrun_defaults_and_shared_buffers() {
    // type "read", pattern "random", stride 64 (or the size when smaller);
    // a shared buffer whose users agree on size, stride and pattern.
    let l = ok(r#"{"tasks": {
        "a": {"memrun": {"size": 16, "count": 100, "ref": "s"}, "sleep": 10},
        "b": {"instance": 3, "memrun": {"type": "chase", "size": 16, "count": 10, "stride": 16, "ref": "s"}, "sleep": 10}
    }, "global": {"calibration": 100}}"#);
    let w = &l.workload;
    assert_eq!(w.tasks.len(), 4);
    assert_eq!(
        w.tasks[0].program.phases[0].ops[0],
        Op::Work { work_ns: 10 }
    );
    for t in &w.tasks[1..] {
        assert_eq!(t.program.phases[0].ops[0], Op::Work { work_ns: 15 });
    }
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn nested_forks_get_pools_of_their_own() {
    // Two levels: root (2 passes) forks mid twice; each mid forks leaf 3
    // times (phase loop 3, task loop 1). Pools are made breadth first:
    // root's pool, then one pool per forked mid.
    let l = ok(r#"{"tasks": {
        "root": {"loop": 2, "fork": "mid", "run": 100},
        "mid": {"instance": 0, "loop": 1, "phases": {
            "p": {"loop": 3, "fork": "leaf", "run": 10},
            "q": {"run": 5}}},
        "leaf": {"instance": 0, "loop": 1, "run": 5}
    }, "global": {"calibration": 100}}"#);
    let w = &l.workload;
    let names: Vec<&str> = w.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "root-0",
            "mid-1-0001",
            "mid-2-0002",
            "leaf-3-0001",
            "leaf-4-0002",
            "leaf-5-0003",
            "leaf-6-0001",
            "leaf-7-0002",
            "leaf-8-0003",
        ]
    );
    assert_eq!(w.fork_pools, [vec![1, 2], vec![3, 4, 5], vec![6, 7, 8]]);
    assert_eq!(w.tasks[0].program.phases[0].ops[0], Op::Fork { pool: 0 });
    assert_eq!(w.tasks[1].program.phases[0].ops[0], Op::Fork { pool: 1 });
    assert_eq!(w.tasks[2].program.phases[0].ops[0], Op::Fork { pool: 2 });
    assert!(w.tasks[1..].iter().all(|t| t.forked));
    // Indexes follow the names.
    for (i, t) in w.tasks.iter().enumerate() {
        assert_eq!(t.index as usize, i);
    }
}

#[test]
fn a_start_up_task_may_also_be_forked_and_fork() {
    // b runs from the start and is also a fork template of a; both copies
    // of b fork c.
    let l = ok(r#"{"tasks": {
        "a": {"loop": 1, "fork": "b", "run": 10},
        "b": {"loop": 1, "fork": "c", "run": 10},
        "c": {"instance": 0, "loop": 1, "run": 5}
    }, "global": {"calibration": 100}}"#);
    let names: Vec<&str> = l.workload.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a-0", "b-1", "b-2-0001", "c-3-0001", "c-4-0001"]);
    assert_eq!(l.workload.fork_pools, [vec![2], vec![3], vec![4]]);
}
