//! rt-app's own example files (`doc/examples` of scheduler-tools/rt-app,
//! kept in `../shared/fixtures/rt-app-examples/` beside the repository)
//! and hand-checked lowerings.
//!
//! Those files belong to rt-app and are not copied into this repository:
//! each test here that reads them is `#[ignore]`d, so the runner reports
//! it as ignored, and scripts/test.sh runs them (`-- --ignored`) where that
//! folder exists (CI). The project's own corpus, `examples/rt-app/`, is
//! checked in `corpus.rs`.
//!
//! Outcome of every example file (machine of 4 CPUs):
//!
//! | file | outcome |
//! |---|---|
//! | browser-long.json, browser-short.json | loads |
//! | cpufreq_governor_efficiency/calibration.json | loads (SCHED_FIFO from `default_policy`, priority 10) |
//! | cpufreq_governor_efficiency/dvfs.json | loads (SCHED_FIFO, priority 10) |
//! | custom-slice.json | loads (a custom slice; SCHED_DEADLINE 200/200/200 ms) |
//! | mp3-long.json, mp3-short.json | loads |
//! | spreading-tasks.json | loads (warning: phase `heavy1` repeated, json-c rule) |
//! | template.json | loads (warning: `sleep` 0) |
//! | tutorial/example1.json | loads |
//! | tutorial/example2.json | loads |
//! | tutorial/example3.json | loads (warning: no calibration) |
//! | tutorial/example4.json | loads |
//! | tutorial/example5.json | loads |
//! | tutorial/example6.json | loads |
//! | tutorial/example7.json | loads |
//! | tutorial/example8.json | loads |
//! | tutorial/example9.json | loads |
//! | tutorial/example10.json | loads (thread in task group /tg1) |
//! | tutorial/example11.json | loads (phases in /tg1/tg11, then unchanged, then /) |
//! | video-long.json, video-short.json | loads (warnings: bare `suspend`, the old workgen's form) |
//! | merge/*.json | not an rt-app workload |

use std::path::{Path, PathBuf};

use schedlab_core::program::{Op, Phase, Policy, TimerRef};
use schedlab_workload::{load_rtapp, ErrorKind, Loaded};

/// `../shared/fixtures/rt-app-examples` beside the repository; the tests
/// that read it are ignored (`--ignored` runs them), and fail here, saying
/// so, when run without it.
fn examples(test: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/rt-app-examples");
    assert!(
        dir.is_dir(),
        "{test} needs {}: leave it ignored where it is absent",
        dir.display()
    );
    dir
}

fn load(root: &Path, rel: &str) -> Loaded {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    load_rtapp(rel, &text, 4).unwrap_or_else(|e| panic!("{e}"))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    out
}

const LOADS: [&str; 22] = [
    "browser-long.json",
    "browser-short.json",
    "custom-slice.json",
    "mp3-long.json",
    "mp3-short.json",
    "spreading-tasks.json",
    "template.json",
    "video-long.json",
    "video-short.json",
    "tutorial/example1.json",
    "tutorial/example10.json",
    "tutorial/example11.json",
    "tutorial/example2.json",
    "tutorial/example3.json",
    "tutorial/example4.json",
    "tutorial/example5.json",
    "tutorial/example6.json",
    "tutorial/example7.json",
    "tutorial/example8.json",
    "tutorial/example9.json",
    "cpufreq_governor_efficiency/calibration.json",
    "cpufreq_governor_efficiency/dvfs.json",
];

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn every_example_loads_or_is_not_supported_yet() {
    let root = examples("every_example_loads_or_is_not_supported_yet");
    let mut files = json_files(&root);
    files.extend(json_files(&root.join("tutorial")));
    files.extend(json_files(&root.join("cpufreq_governor_efficiency")));
    assert_eq!(files.len(), 22, "fixture set changed");
    let mut loaded = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(&root).unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        match load_rtapp(rel, &text, 4) {
            Ok(_) => loaded.push(rel.to_string()),
            Err(e) => {
                let line = e.to_string();
                assert!(e.is_unsupported(), "{line}");
                assert!(line.starts_with(&format!("{rel}:")), "{line}");
                assert!(line.contains("not supported yet"), "{line}");
                assert!(line.contains("key \""), "{line}");
                assert!(!line.contains('\n'), "{line}");
            }
        }
    }
    assert_eq!(loaded, LOADS);
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn merge_fragments_are_not_workloads() {
    let root = examples("merge_fragments_are_not_workloads");
    let files = json_files(&root.join("merge"));
    assert_eq!(files.len(), 6);
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let e = load_rtapp("frag.json", &text, 4).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotAWorkload, "{e}");
        let line = e.to_string();
        assert!(line.contains("not an rt-app workload"), "{line}");
        assert!(line.contains("merge"), "{line}");
    }
}

fn run(us: u64, pload: u64) -> Op {
    Op::Run {
        work_ns: us * 1000 / pload * pload,
        config_us: us,
        perf: us / pload,
    }
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn example3_twelve_threads_with_private_timers() {
    let root = examples("example3_twelve_threads_with_private_timers");
    let w = load(&root, "tutorial/example3.json").workload;
    assert_eq!(w.calibration_ns, 100);
    assert_eq!(w.duration_ns, None);
    assert_eq!(w.log_basename, "rt-app");
    assert_eq!(w.tasks.len(), 12);
    assert_eq!(w.timers.len(), 12);
    for (i, t) in w.tasks.iter().enumerate() {
        assert_eq!(t.name, format!("thread0-{i}"));
        assert_eq!(t.index, i as u32);
        assert_eq!(
            (t.policy, t.nice, t.cpus.clone()),
            (Policy::Normal, 0, None)
        );
        // "loop": 1 with phases: one pass over light×10, heavy×10.
        assert_eq!(t.program.loops, Some(1));
        let p = &t.program.phases;
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].name.as_str(), p[0].loops), ("light", 10));
        assert_eq!((p[1].name.as_str(), p[1].loops), ("heavy", 10));
        // Both phases share this thread's "unique" timer: the grid carries on.
        let tid = TimerRef(i as u32);
        assert_eq!(w.timers[i].name, format!("unique@thread0-{i}"));
        assert!(!w.timers[i].absolute);
        let timer = Op::Timer {
            timer: tid,
            period_ns: 30_000_000,
        };
        assert_eq!(p[0].ops, vec![run(3000, 100), timer.clone()]);
        assert_eq!(p[1].ops, vec![run(27000, 100), timer]);
        assert_eq!(
            p[0].ops[0],
            Op::Run {
                work_ns: 3_000_000,
                config_us: 3000,
                perf: 30
            }
        );
    }
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn example8_phase_affinity_falls_back_to_task_cpus() {
    let root = examples("example8_phase_affinity_falls_back_to_task_cpus");
    let w = load(&root, "tutorial/example8.json").workload;
    assert_eq!(w.duration_ns, Some(2_000_000_000));
    assert_eq!(w.log_basename, "rt-app1");
    let t = &w.tasks[0];
    assert_eq!(t.name, "thread0-0");
    assert_eq!(t.cpus, Some(vec![2]));
    // No task loop with phases: for ever.
    assert_eq!(t.program.loops, None);
    let cpus: Vec<_> = t.program.phases.iter().map(|p| p.cpus.clone()).collect();
    assert_eq!(cpus, vec![Some(vec![0]), Some(vec![1]), Some(vec![2])]);
    assert!(t
        .program
        .phases
        .iter()
        .all(|p| p.loops == 1 && p.sched.is_none()));
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn spreading_tasks_collapses_repeated_phase_names() {
    let root = examples("spreading_tasks_collapses_repeated_phase_names");
    let l = load(&root, "spreading-tasks.json");
    let w = &l.workload;
    assert_eq!(w.tasks.len(), 2);
    assert_eq!(w.tasks[0].name, "thread1-0");
    assert_eq!(w.tasks[1].name, "thread2-1");
    let names: Vec<_> = w.tasks[1]
        .program
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.loops))
        .collect();
    // json-c: the second "heavy1" replaces the first, at the first position.
    assert_eq!(names, [("light1", 900), ("heavy1", 600), ("light2", 300)]);
    assert_eq!(l.warnings.len(), 1);
    assert!(l.warnings[0].starts_with("spreading-tasks.json:38:33: warning: key \"heavy1\""));
    let timers: Vec<_> = w.timers.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(timers, ["unique@thread1-0", "unique@thread2-1"]);
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn template_and_example1_single_phase_tasks() {
    let root = examples("template_and_example1_single_phase_tasks");
    let w = load(&root, "template.json").workload;
    let t = &w.tasks[0];
    assert_eq!((t.program.loops, t.program.phases.len()), (None, 1));
    let p: &Phase = &t.program.phases[0];
    assert_eq!((p.name.as_str(), p.loops), ("thread0", 1));
    assert_eq!(p.ops[1], Op::Sleep { ns: 0 });
    assert_eq!(
        p.ops[2],
        Op::Timer {
            timer: TimerRef(0),
            period_ns: 100_000_000
        }
    );
    assert_eq!(w.timers[0].name, "unique@thread0-0");

    let w = load(&root, "tutorial/example1.json").workload;
    let p = &w.tasks[0].program.phases[0];
    assert_eq!(p.ops, vec![run(20000, 100), Op::Sleep { ns: 80_000_000 }]);
}

#[test]
fn eight_cfs_and_five_idle_threads() {
    let text = r#"{"tasks": {"cfs_thread": {"instance": 8, "loop": -1, "run": 5333, "timer": {"ref": "unique", "period": 7777}}, "idle_thread": {"instance": 5, "loop": -1, "policy": "SCHED_IDLE", "run": 3000}}, "global": {"duration": 5, "calibration": "CPU0", "default_policy": "SCHED_OTHER", "log_size": "file"}}"#;
    let l = load_rtapp("thirteen.json", text, 4).unwrap();
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    let w = l.workload;
    assert_eq!(w.duration_ns, Some(5_000_000_000));
    assert_eq!(w.calibration_ns, schedlab_workload::DEFAULT_PLOAD_NS);
    let names: Vec<_> = w.tasks.iter().map(|t| t.name.clone()).collect();
    let mut want: Vec<_> = (0..8).map(|i| format!("cfs_thread-{i}")).collect();
    want.extend((8..13).map(|i| format!("idle_thread-{i}")));
    assert_eq!(names, want);
    for (i, t) in w.tasks.iter().enumerate() {
        assert_eq!(t.index, i as u32);
        assert_eq!(t.program.loops, None);
        assert_eq!(t.program.phases[0].loops, 1);
        if i < 8 {
            assert_eq!(t.policy, Policy::Normal);
            assert_eq!(w.timers[i].name, format!("unique@cfs_thread-{i}"));
            let ops = &t.program.phases[0].ops;
            // 5333 µs at 100 ns/loop: 53330 loops, perf 53.
            assert_eq!(
                ops[0],
                Op::Run {
                    work_ns: 5_333_000,
                    config_us: 5333,
                    perf: 53
                }
            );
            assert_eq!(
                ops[1],
                Op::Timer {
                    timer: TimerRef(i as u32),
                    period_ns: 7_777_000
                }
            );
        } else {
            assert_eq!(t.policy, Policy::Idle);
            assert_eq!(t.program.phases[0].ops, vec![run(3000, 100)]);
        }
    }
    assert_eq!(w.timers.len(), 8);
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn example10_and_11_place_threads_in_task_groups() {
    let root = examples("example10_and_11_place_threads_in_task_groups");
    use schedlab_core::program::GroupSpec;
    let w = load(&root, "tutorial/example10.json").workload;
    assert_eq!(w.tasks.len(), 1);
    assert_eq!(w.tasks[0].group, "/tg1");
    assert_eq!(w.tasks[0].program.phases[0].group, None);
    assert_eq!(w.groups, vec![GroupSpec::new("/tg1")]);

    let w = load(&root, "tutorial/example11.json").workload;
    let t = &w.tasks[0];
    assert_eq!(t.group, "/", "no task-level taskgroup: starts in the root");
    let groups: Vec<Option<&str>> = t
        .program
        .phases
        .iter()
        .map(|p| p.group.as_deref())
        .collect();
    assert_eq!(groups, [Some("/tg1/tg11"), None, Some("/")]);
    assert_eq!(
        w.groups,
        vec![GroupSpec::new("/tg1"), GroupSpec::new("/tg1/tg11")],
        "the intermediate group is listed, parent first"
    );
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn rt_and_deadline_examples() {
    let root = examples("rt_and_deadline_examples");
    use schedlab_core::program::DlParams;
    let w = load(&root, "custom-slice.json").workload;
    let t = &w.tasks;
    assert_eq!(
        (t[0].policy, t[0].nice, t[0].custom_slice_ns, t[0].dl),
        (Policy::Normal, -19, Some(100_000_000), None)
    );
    let dl = DlParams {
        runtime_ns: 200_000_000,
        deadline_ns: 200_000_000,
        period_ns: 200_000_000,
    };
    assert_eq!(
        (t[1].policy, t[1].nice, t[1].custom_slice_ns, t[1].dl),
        (Policy::Deadline, 0, None, Some(dl))
    );
    for f in [
        "cpufreq_governor_efficiency/calibration.json",
        "cpufreq_governor_efficiency/dvfs.json",
    ] {
        let t = &load(&root, f).workload.tasks[0];
        assert_eq!((t.policy, t.nice, t.dl), (Policy::Fifo, 10, None), "{f}");
    }
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn video_bare_suspends_are_suspends_of_their_own_thread() {
    let root = examples("video_bare_suspends_are_suspends_of_their_own_thread");
    let l = load(&root, "video-short.json");
    let bare = l.warnings.iter().filter(|w| w.contains("bare key")).count();
    assert!(bare >= 10, "{:?}", l.warnings);
    let sf = &l.workload.tasks[0];
    assert_eq!(sf.name, "surfaceflinger-0");
    assert!(matches!(sf.program.phases[0].ops[0], Op::Suspend { .. }));
}
