//! `collect` against the CLI's golden tiny run, the headline figures
//! against the summary, and the error paths.

use super::*;
use crate::rtapp_log::write_log;
use crate::tee::{TraceSinks, TRACE_FILES};
use schedlab_core::features::PreemptModel;
use schedlab_core::machine::preset;
use schedlab_core::observe::NullSink;
use std::path::{Path, PathBuf};

/// The CLI's golden tiny run (`schedlab run workload.json --machine
/// vm-2cpu --duration 30ms --seed 7 --trace --check`).
fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schedlab-cli/tests/golden/tiny")
}

fn load(path: &str, text: &str) -> Workload {
    schedlab_workload::load_rtapp(path, text, 2)
        .expect("workload loads")
        .workload
}

fn tiny_config() -> SimConfig {
    SimConfig {
        seed: 7,
        hz: 250,
        preempt: PreemptModel::parse("full").unwrap(),
        duration_ns: Some(30_000_000),
        check: true,
        ..SimConfig::default()
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(golden_dir().join(name)).unwrap()
}

#[test]
fn collect_gives_the_files_the_cli_writes() {
    let path = golden_dir().join("workload.json");
    let w = load(path.to_str().unwrap(), &golden("workload.json"));
    let sink = TraceSinks::new(2).unwrap();
    let (sim, res) = simulate(preset("vm-2cpu").unwrap(), &w, tiny_config(), sink).unwrap();
    check_outcome(&sim, &res).unwrap();
    let r = RunResults::collect(&sim, &res, &w);

    assert_eq!(r.summary.to_json_string(), golden("summary.json"));
    for name in ["rt-app-periodic-0.log", "rt-app-background-3.log"] {
        let log = r.logs.iter().find(|l| l.file_name == name).unwrap();
        let mut text = Vec::new();
        write_log(&mut text, &log.rows).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), golden(name), "{name}");
    }
    assert_eq!(r.schedstat.len(), 2);
    assert_eq!(r.schedstat_jiffies, res.end_ns / 4_000_000);
    assert!(r.cgroup_cpu_stat.is_empty());
    // The periodic task's two threads merge into one latency row.
    assert_eq!(r.wakeup_latency.len(), 1);
    assert_eq!(r.wakeup_latency[0].name, "periodic");
    // By default one row per task name; per thread with `per_task`.
    let text = r.text_report();
    assert!(
        text.contains("periodic ")
            && !text.contains("periodic-0")
            && text.contains("wakeup latency"),
        "{text}"
    );
    let per_task = r.text_report_with(&crate::results::TextOptions {
        per_task: true,
        ..Default::default()
    });
    assert!(per_task.contains("periodic-0"), "{per_task}");
    // Missed periods: the name row sums its threads' deadlines, the
    // per-thread rows are each thread's.
    let dl = |t: &crate::summary::TaskSummary, k: &str| {
        t.extra
            .get("deadlines")
            .map_or(0, |d| d[k].as_u64().unwrap())
    };
    let periodic: Vec<_> = r
        .summary
        .tasks
        .iter()
        .filter(|t| t.name.starts_with("periodic-"))
        .collect();
    let (p, m) = periodic.iter().fold((0, 0), |(p, m), t| {
        (p + dl(t, "periods"), m + dl(t, "missed"))
    });
    assert!(p > 0);
    let pct = 100.0 * m as f64 / p as f64;
    assert!(
        text.contains("missed periods")
            && text
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == [
                        "periodic",
                        &p.to_string(),
                        &m.to_string(),
                        &format!("{pct:.1}%")
                    ]),
        "{text}"
    );
    let t0 = periodic[0];
    let want0 = dl(t0, "periods").to_string();
    assert!(
        per_task
            .lines()
            .any(|l| l.starts_with(&format!("{} ", t0.name))
                && l.split_whitespace().nth(1) == Some(want0.as_str())),
        "{per_task}"
    );

    // The whole directory, traces included.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let stage = StagedOutDir::stage(&out).unwrap();
    write_run(stage, &r, sim.into_sink()).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("trace.txt")).unwrap(),
        golden("trace.txt")
    );
    assert_eq!(
        std::fs::read_to_string(out.join("summary.json")).unwrap(),
        golden("summary.json")
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = ["summary.json", "profile", "schedstat"]
        .into_iter()
        .chain(TRACE_FILES)
        .map(String::from)
        .chain(r.logs.iter().map(|l| l.file_name.clone()))
        .collect();
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn headline_figures_agree_with_the_summary() {
    let w = load(
        "hier.json",
        r#"{
        "taskgroups": { "/capped": { "cpu.max": "2000 10000" } },
        "tasks": {
            "a": { "instance": 2, "taskgroup": "/capped", "loop": -1, "run": 3000, "sleep": 1000 },
            "b": { "loop": -1, "run": 500, "timer": { "ref": "unique", "period": 2000 } }
        },
        "global": { "duration": 1, "calibration": 100 }
    }"#,
    );
    let cfg = SimConfig {
        duration_ns: Some(50_000_000),
        ..SimConfig::default()
    };
    let (sim, res) = simulate(preset("vm-2cpu").unwrap(), &w, cfg, NullSink).unwrap();
    let r = RunResults::collect(&sim, &res, &w);
    let h = &r.headline;
    assert_eq!(h, &Headline::of(&sim, &res));
    let s = &r.summary;
    assert_eq!(h.duration_ns, s.duration_ns);
    assert_eq!(
        h.runtime_ns,
        s.tasks.iter().map(|t| t.runtime_ns).sum::<u64>()
    );
    assert_eq!(h.switches, s.tasks.iter().map(|t| t.switches).sum::<u64>());
    assert_eq!(h.loops, s.tasks.iter().map(|t| t.loops).sum::<u64>());
    assert_eq!(h.workload_time_us, None);
    let g = &s.groups[0];
    assert_eq!(g.path, "/capped");
    assert_eq!(h.nr_throttled, Some(g.cpu_stat.nr_throttled));
    assert!(g.cpu_stat.nr_throttled > 0);
    assert_eq!(
        h.throttled_ns.map(|ns| ns / 1000),
        Some(g.cpu_stat.throttled_usec)
    );
    assert_eq!(
        r.cgroup_cpu_stat,
        vec![("cgroup/capped/cpu.stat".to_string(), g.cpu_stat.clone())]
    );
    let n: u64 = s.tasks.iter().map(|t| t.wakeup_latency_us.n).sum();
    assert_eq!(h.wakeup_latency.n, n);
    assert!(n > 0);
    // Periods and missed periods: Σ of the threads' `deadlines`.
    let dl = |k: &str| -> u64 {
        s.tasks
            .iter()
            .filter_map(|t| t.extra.get("deadlines")?[k].as_u64())
            .sum()
    };
    assert_eq!((h.periods, h.missed_periods), (dl("periods"), dl("missed")));
    assert_eq!(h.periods, n, "one period per timer row");
}

#[test]
fn a_deadlock_is_a_typed_run_error() {
    let w = load(
        "stuck.json",
        r#"{
        "tasks": { "stuck": { "loop": 1, "run": 100, "suspend": "stuck" } },
        "global": { "calibration": 100 }
    }"#,
    );
    let (sim, res) = simulate(
        preset("vm-2cpu").unwrap(),
        &w,
        SimConfig::default(),
        NullSink,
    )
    .unwrap();
    let e = check_outcome(&sim, &res).unwrap_err();
    assert_eq!(e, RunError::Deadlock { at_ns: res.end_ns });
    assert!(e.to_string().starts_with("every remaining thread waits"));
}

#[test]
fn an_unwritable_output_names_the_file() {
    let w = load(
        "one.json",
        r#"{
        "tasks": { "one": { "loop": 3, "run": 100, "sleep": 100 } },
        "global": { "calibration": 100 }
    }"#,
    );
    let (sim, res) = simulate(
        preset("vm-2cpu").unwrap(),
        &w,
        SimConfig::default(),
        NullSink,
    )
    .unwrap();
    let r = RunResults::collect(&sim, &res, &w);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let stage = StagedOutDir::stage(&out).unwrap();
    // The stage becomes a plain file: nothing can be created in it.
    std::fs::remove_dir_all(stage.stage_dir()).unwrap();
    std::fs::write(stage.stage_dir(), b"").unwrap();
    let e = write_run(stage, &r, NullSink).unwrap_err();
    assert!(
        matches!(&e, OutputError::Write { file, .. } if file == "summary.json"),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("summary.json: cannot write: "),
        "{e}"
    );
    // Nothing appeared.
    assert!(!out.exists());
}
