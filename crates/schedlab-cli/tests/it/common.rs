//! Helpers shared by the test modules.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use schedlab_core::program::{Op, Phase, Policy, Program, TaskSpec};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// The repository's example SCHED_IDLE workload.
pub fn example_workload() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sched-idle-a7.json")
}

/// The project's own rt-app corpus, `examples/rt-app/` (every key and
/// event the loader accepts; see `schedlab-workload/tests/corpus.rs`).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rt-app")
}

/// The corpus's rt-app files, sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "corpus too small: {v:?}");
    v
}

/// rt-app's own example files, `../shared/fixtures/rt-app-examples` beside
/// the repository (CI has them). They belong to rt-app and are not copied
/// into the repository, so every test that reads them is
/// `#[ignore = "needs ../shared/fixtures ..."]`: the runner reports it as
/// ignored, and scripts/test.sh runs the ignored tests of this binary
/// (`-- --ignored`) where the folder exists. Run without it, the test fails
/// here, saying so. Tests that do not need rt-app's exact files run over
/// [`corpus_dir`] instead.
pub fn rt_app_examples(test: &str) -> PathBuf {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/rt-app-examples");
    assert!(
        dir.is_dir(),
        "{test} needs {}: leave it ignored where it is absent",
        dir.display()
    );
    dir
}

/// Runs `schedlab ARGS...` and returns its output.
pub fn schedlab<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(BIN)
        .args(args)
        .output()
        .expect("cannot start the schedlab binary")
}

/// Runs `schedlab ARGS...` in `dir` (for relative paths).
pub fn schedlab_in<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("cannot start the schedlab binary")
}

/// A readable dump of a finished command, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Asserts a successful exit and returns stdout.
pub fn assert_success(out: &Output) -> String {
    assert!(out.status.success(), "schedlab failed:\n{}", describe(out));
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// Every regular file under `dir`, as sorted relative paths.
pub fn list_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// Names directly inside `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// [`entries`] but the workload files (`*.json`): what a run left.
pub fn outputs(dir: &Path) -> Vec<String> {
    entries(dir)
        .into_iter()
        .filter(|n| !n.ends_with(".json"))
        .collect()
}

/// Relative paths of every file under `dir`, sorted as strings (an
/// absent `dir` has none).
pub fn list_tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// A task with one phase of `ops`, repeated forever (`loops: None`).
pub fn task(name: &str, index: u32, policy: Policy, nice: i32, ops: Vec<Op>) -> TaskSpec {
    TaskSpec {
        name: name.to_string(),
        index,
        policy,
        nice,
        cpus: None,
        delay_ns: 0,
        custom_slice_ns: None,
        dl: None,
        uclamp: Default::default(),
        forked: false,
        log_rows: true,
        group: "/".into(),
        program: Program {
            phases: vec![Phase::once("p", ops)],
            loops: None,
        },
    }
}

/// A workload of `tasks` sharing `sems` semaphores, logged as rt-app's
/// (calibration 100 ns).
pub fn rtapp_workload(tasks: Vec<TaskSpec>, sems: u32) -> schedlab_core::program::Workload {
    schedlab_core::program::Workload {
        tasks,
        sems,
        log_basename: "rt-app".into(),
        calibration_ns: 100,
        ..Default::default()
    }
}

/// The configuration of release `kernel` (its features and tunables) at
/// HZ 250 for `duration_ns`.
pub fn release_config(kernel: &str, duration_ns: u64) -> schedlab_core::SimConfig {
    let k = schedlab_core::kernels::canonical(kernel).unwrap();
    let (features, tunables) = schedlab_core::kernels::defaults(k).unwrap();
    schedlab_core::SimConfig {
        hz: 250,
        kernel: k,
        features,
        tunables,
        duration_ns: Some(duration_ns),
        ..schedlab_core::SimConfig::default()
    }
}

/// One `Run` op of `ns` of work.
/// A summary.json task's program time: `runtime_ns` (its
/// sum_exec_runtime) less the scheduler work charged to it
/// (`sched_work_ns`), as `TaskStats::program_ns`.
pub fn summary_program_ns(t: &serde_json::Value) -> u64 {
    t["runtime_ns"].as_u64().unwrap() - t["sched_work_ns"].as_u64().unwrap()
}

pub fn run_op(ns: u64) -> Op {
    Op::Run {
        work_ns: ns,
        config_us: ns / 1000,
        perf: 0,
    }
}

/// Runs `schedlab run FILE --machine MACHINE --quiet --out DIR/out
/// EXTRA...` with DIR a fresh temporary directory; it must succeed.
/// Returns the directory (keep it alive) and `out`.
pub fn run_file(file: &Path, machine: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = vec![
        "run".to_string(),
        file.to_string_lossy().into_owned(),
        "--machine".into(),
        machine.into(),
        "--quiet".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_success(&schedlab(&args));
    (tmp, out)
}

/// [`run_file`] on `json` written to a temporary `w.json`.
pub fn run_json(json: &str, machine: &str, extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let src = tempfile::tempdir().unwrap();
    let w = src.path().join("w.json");
    std::fs::write(&w, json).unwrap();
    run_file(&w, machine, extra)
}

/// Runs `schedlab run ARGS --out DIR` twice, each in a fresh directory,
/// and asserts the printed text and summary.json are the same bytes.
pub fn assert_same_bytes_twice(args: &[&str]) {
    let go = || {
        let dir = tempfile::tempdir().unwrap();
        let mut a: Vec<&str> = vec!["run"];
        a.extend_from_slice(args);
        a.extend(["--out", dir.path().to_str().unwrap()]);
        let text = assert_success(&schedlab(&a));
        (
            text,
            std::fs::read(dir.path().join("summary.json")).unwrap(),
        )
    };
    assert_eq!(go(), go());
}

/// Runs every case of `base/cases.txt` (one `NAME ARGS...` a line, `#`
/// comments and blank lines skipped) as `schedlab run ARGS EXTRA --out
/// TMP/NAME` with `base` as the working directory, each word of ARGS
/// passed through `word`; asserts each run succeeds and returns (name,
/// output directory) in file order. The golden and identical-outputs
/// tests share it.
pub fn run_case_file(
    base: &Path,
    tmp: &Path,
    extra: &[&str],
    word: impl Fn(&str) -> String,
) -> Vec<(String, PathBuf)> {
    let cases = std::fs::read_to_string(base.join("cases.txt")).unwrap();
    let mut done = Vec::new();
    for line in cases
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap();
        let args: Vec<String> = words.map(&word).collect();
        let out = tmp.join(name);
        let st = Command::new(BIN)
            .current_dir(base)
            .arg("run")
            .args(&args)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        done.push((name.to_string(), out));
    }
    done
}
