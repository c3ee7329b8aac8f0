//! The real rt-app example workloads (scheduler-tools/rt-app doc/examples):
//! each one runs to completion under `--check` on a7-octa and vm-2cpu
//! (SCHED_FIFO, SCHED_DEADLINE and the old bare `"suspend",` included),
//! except where it pins a CPU the small machine lacks.
//! `merge/` holds fragments, not workloads (see bad_input).
//!
//! rt-app's files are not part of this repository: these tests are
//! `#[ignore]`d, and scripts/test.sh runs them (`-- --ignored`) where
//! `../shared/fixtures` exists beside it (CI). The project's own corpus
//! (`examples/rt-app/`) always runs, in `corpus`.

use crate::common::{describe, rt_app_examples, schedlab};
use std::path::{Path, PathBuf};

fn workloads(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                if p.file_name().unwrap() != "merge" {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(root, &mut v);
    v.sort();
    v
}

/// A workload pinned to CPUs a small machine lacks is refused there with
/// the loader's "CPU n does not exist" (tutorial/example8 pins to CPU 2).
fn is_missing_cpu(msg: &str) -> bool {
    msg.contains("key \"cpus\"") && msg.contains("does not exist")
}

#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn rt_app_examples_run_under_check() {
    let root = rt_app_examples("fixtures::rt_app_examples_run_under_check");
    let files = workloads(&root);
    assert!(
        files.len() >= 10,
        "only {} example files found",
        files.len()
    );
    let mut ran = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        let mut outcome = Vec::new();
        for machine in ["a7-octa", "vm-2cpu"] {
            let out = schedlab([
                "run",
                &f.to_string_lossy(),
                "--machine",
                machine,
                "--check",
                "--duration",
                "1s",
                "--quiet",
            ]);
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            let ctx = format!("{} on {machine}:\n{}", f.display(), describe(&out));
            let ok = match out.status.code() {
                Some(0) => {
                    // --quiet: success prints nothing (warnings are suppressed too).
                    if !stderr.is_empty() {
                        problems.push(format!("exit 0 but stderr not empty: {ctx}"));
                    }
                    true
                }
                Some(2) => {
                    let lines: Vec<&str> = stderr.lines().collect();
                    let good = lines.len() == 1
                        && lines[0].starts_with("schedlab: error: ")
                        && lines[0].contains(&*f.to_string_lossy())
                        && machine == "vm-2cpu"
                        && is_missing_cpu(lines[0]);
                    if !good {
                        problems.push(format!("refused: {ctx}"));
                    }
                    false
                }
                _ => {
                    problems.push(format!("neither success nor a user error: {ctx}"));
                    false
                }
            };
            outcome.push((machine, ok, stderr));
        }
        // Support does not depend on the machine, except for pinned CPUs.
        match (&outcome[0], &outcome[1]) {
            ((_, true, _), (_, true, _)) => ran.push(f.clone()),
            ((_, true, _), (_, false, e)) if is_missing_cpu(e) => ran.push(f.clone()),
            _ => problems.push(format!(
                "{}: runs on one machine but not the other: {outcome:?}",
                f.display()
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    // Task groups (`taskgroup` at task and phase level), SCHED_FIFO (also
    // as default_policy), SCHED_DEADLINE and the bare "suspend" run.
    for f in [
        "tutorial/example10.json",
        "tutorial/example11.json",
        "custom-slice.json",
        "cpufreq_governor_efficiency/calibration.json",
        "cpufreq_governor_efficiency/dvfs.json",
        "video-short.json",
        "video-long.json",
    ] {
        assert!(
            ran.iter().any(|p| p.ends_with(f)),
            "{f} did not run: {ran:?}"
        );
    }
    assert_eq!(ran.len(), files.len(), "{ran:?}");
}

/// The supported examples also run with the other preemption models and a
/// 1000 Hz tick, still under --check.
#[test]
#[ignore = "needs ../shared/fixtures beside the repository; scripts/test.sh runs it where present"]
fn supported_examples_pass_check_with_every_preempt_model() {
    let supported = [
        "spreading-tasks.json",
        "template.json",
        "tutorial/example1.json",
        "tutorial/example2.json",
        "tutorial/example3.json",
        "tutorial/example10.json",
        "tutorial/example11.json",
        "custom-slice.json",
        "cpufreq_governor_efficiency/calibration.json",
        "cpufreq_governor_efficiency/dvfs.json",
        "video-short.json",
        "video-long.json",
    ];
    let dir = rt_app_examples("fixtures::supported_examples_pass_check_with_every_preempt_model");
    for f in supported {
        for (preempt, hz) in [("none", "100"), ("voluntary", "1000"), ("lazy", "250")] {
            let path = dir.join(f);
            let out = schedlab([
                "run",
                &path.to_string_lossy(),
                "--machine",
                "a7-octa",
                "--check",
                "--duration",
                "500ms",
                "--preempt",
                preempt,
                "--hz",
                hz,
                "--quiet",
            ]);
            assert!(
                out.status.success(),
                "{f} --preempt {preempt} --hz {hz}:\n{}",
                describe(&out)
            );
        }
    }
}
