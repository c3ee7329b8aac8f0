//! `schedlab exec`, `record` and `validate` through the binary: bad
//! recordings give one line and exit status 2; on a root Linux host with
//! tracefs a 2 s periodic workload is recorded and validated.
//!
//! The tests that run on the host are `#[ignore]`d (a plain `cargo test`
//! reports them as ignored, with the reason); scripts/test.sh runs them
//! (`-- --ignored`) as root on Linux where tracefs is usable, and lists
//! the ones it left out and why otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// The host tests run one at a time (they share the host's CPUs).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn schedlab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run schedlab")
}

fn golden(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/baseline")
        .join(case)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// One line on stderr, `schedlab: error: ` first, exit status 2.
fn one_line_error(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("schedlab: error: "), "{err}");
    assert!(o.stdout.is_empty());
    err
}

/// Fails at once, saying why, when an ignored host test is run (`--ignored`)
/// where it cannot: not Linux, or not root.
fn require_host(test: &str, why_root: &str) {
    assert!(
        cfg!(target_os = "linux"),
        "{test} needs Linux: leave it ignored here"
    );
    assert!(
        unsafe { libc::geteuid() } == 0,
        "{test} needs root ({why_root}): run as root or leave it ignored"
    );
}

#[test]
fn bad_recordings_give_one_line_and_status_2() {
    let d = tempfile::tempdir().unwrap();
    let rec = d.path().join("rec");
    copy_dir(&golden("out/periodic-mix"), &rec);
    let r = rec.to_str().unwrap();
    // A run directory, but not a recording.
    let e = one_line_error(&schedlab(&["validate", r, "--seeds", "1"]));
    assert!(
        e.contains("host.json: missing") && e.contains("schedlab record"),
        "{e}"
    );
    // Not a directory at all.
    let e = one_line_error(&schedlab(&["validate", "/nonexistent/rec"]));
    assert!(e.contains("/nonexistent/rec: not a directory"), "{e}");
    // host.json broken on line 2.
    std::fs::write(rec.join("host.json"), "{\n  \"clock\": ,\n}\n").unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("host.json:2: "), "{e}");
    // A broken trace line: its number.
    std::fs::write(rec.join("host.json"), "{}\n").unwrap();
    let tp = rec.join("trace.txt");
    let mut t = std::fs::read_to_string(&tp).unwrap();
    let n = t.lines().count() + 1;
    t.push_str("  p-1001 [000] d..2. 1.5: sched_switch: nonsense\n");
    std::fs::write(&tp, &t).unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains(&format!("trace.txt:{n}: ")), "{e}");
    // A sound trace, but a host.json with no "host" object.
    t.truncate(t.len() - "  p-1001 [000] d..2. 1.5: sched_switch: nonsense\n".len());
    std::fs::write(&tp, &t).unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("host.json: no \"host\" object"), "{e}");
    std::fs::write(rec.join("host.json"), "{\"host\": {}}\n").unwrap();
    // A garbage record.json.
    std::fs::write(
        rec.join("record.json"),
        r#"{"workload": 5, "duration_ns": -1}"#,
    )
    .unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(
        e.contains("record.json: key 'workload' must be a string"),
        "{e}"
    );
    std::fs::write(
        rec.join("record.json"),
        r#"{"workload": "w.json", "duration_ns": -1}"#,
    )
    .unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("record.json: key 'duration_ns'"), "{e}");
    std::fs::remove_file(rec.join("record.json")).unwrap();
    // No machine and no workload recorded.
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("sysfs"), "{e}");
    // A broken noise.json (the host's measured noise) on line 2.
    std::fs::write(rec.join("noise.json"), "{\n  \"params\": ,\n}\n").unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("noise.json:2: "), "{e}");
    std::fs::write(
        rec.join("noise.json"),
        "{\"params\": {\"irq_len_q_ns\": [5, 1]}}",
    )
    .unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(
        e.contains("noise.json: ") && e.contains("must not decrease"),
        "{e}"
    );
    let e = one_line_error(&schedlab(&[
        "validate",
        r,
        "--noise",
        "/nonexistent/n.json",
    ]));
    assert!(e.contains("--noise: /nonexistent/n.json"), "{e}");
    std::fs::remove_file(rec.join("noise.json")).unwrap();
    // A broken costs.json (the host's measured machine costs).
    std::fs::write(rec.join("costs.json"), "{\n  \"version\": ,\n}\n").unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("costs.json:2: "), "{e}");
    std::fs::write(rec.join("costs.json"), r#"{"version": 1, "wakeup_ns": 5}"#).unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("costs.json: 'context_switch_ns' missing"), "{e}");
    std::fs::remove_file(rec.join("costs.json")).unwrap();
    // record without --out.
    let e = one_line_error(&schedlab(&["record", "hackbench:groups=1"]));
    assert!(e.contains("--out"), "{e}");
    // --cpus: at least one, and only CPUs this process may use; nothing written.
    let bad = rec.join("cpus");
    let b = bad.to_str().unwrap();
    let e = one_line_error(&schedlab(&[
        "record",
        "hackbench:groups=1",
        "--cpus",
        "0",
        "--out",
        b,
    ]));
    assert!(e.contains("--cpus 0: needs at least one CPU"), "{e}");
    let e = one_line_error(&schedlab(&[
        "record",
        "hackbench:groups=1",
        "--cpus",
        "100000",
        "--out",
        b,
    ]));
    assert!(
        e.contains("--cpus 100000: CPU ") && e.contains("is not available"),
        "{e}"
    );
    assert!(!bad.exists());
    let e = one_line_error(&schedlab(&["validate", r, "--seeds", "0"]));
    assert!(e.contains("--seeds"), "{e}");
}

const PERIODIC_HOG: &str = r#"{ "tasks": {
    "p": { "instance": 2, "run": 2000, "timer": { "ref": "unique", "period": 10000 } },
    "hog": { "policy": "SCHED_IDLE", "run": 20000 } },
  "global": { "duration": 2, "calibration": "CPU0" } }"#;

#[test]
#[ignore = "needs root on Linux and tracefs; scripts/test.sh runs it where both hold"]
fn record_and_validate_a_periodic_workload_on_this_host() {
    const T: &str = "record_and_validate_a_periodic_workload_on_this_host";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host(T, "recording needs tracefs, policies and cgroups");
    let d = tempfile::tempdir().unwrap();
    let wl = d.path().join("periodic-hog.json");
    std::fs::write(&wl, PERIODIC_HOG).unwrap();
    let rec = d.path().join("rec");
    let t0 = std::time::Instant::now();
    let o = schedlab(&[
        "record",
        wl.to_str().unwrap(),
        "--out",
        rec.to_str().unwrap(),
        "--duration",
        "2s",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && (err.contains("tracefs") || err.contains("trace instance")) {
        panic!(
            "this host cannot trace ({}): leave {T} ignored here",
            err.trim()
        );
    }
    assert!(o.status.success(), "record: {err}");
    for f in [
        "host.json",
        "trace.txt",
        "summary.json",
        "workload.json",
        "rt-app-p-0.log",
        "rt-app-p-1.log",
        "rt-app-hog-2.log",
        "noise.json",
    ] {
        assert!(rec.join(f).exists(), "{f} missing");
    }
    // The host's noise was measured and is usable by the model.
    let n: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("noise.json")).unwrap()).unwrap();
    assert!(
        n["params"]["timer_late_q_ns"].as_array().unwrap().len() == 21,
        "{n}"
    );
    assert!(n["measured"]["timer_samples"].as_u64().unwrap() > 0, "{n}");
    let json = d.path().join("v.json");
    let o = schedlab(&[
        "validate",
        rec.to_str().unwrap(),
        "--seeds",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "validate: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("fidelity score"), "{text}");
    assert!(text.contains("note: model noise: recorded"), "{text}");
    assert!(
        rec.join("sim-seed1/summary.json").exists() && rec.join("sim-seed2/trace.txt").exists()
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let score = v["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score), "{score}");
    let fams: Vec<&str> = v["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["family"].as_str().unwrap())
        .collect();
    for f in [
        "wakeup_latency",
        "missed_periods",
        "run_period",
        "switching",
        "cpu_util",
    ] {
        assert!(fams.contains(&f), "family {f} missing: {fams:?}\n{text}");
    }
    let metrics = v["metrics"].as_array().unwrap();
    for (m, subject) in [
        ("p50", "p SCHED_NORMAL"),
        ("p90", "p SCHED_NORMAL"),
        ("p99", "p SCHED_NORMAL"),
        ("max", "p SCHED_NORMAL"),
        ("ks", "p SCHED_NORMAL"),
        ("run_mean", "p-0"),
        ("period_mean", "p-1"),
        ("switches_per_s", ""),
        ("migrations_per_s", ""),
        ("util", "rank0"),
    ] {
        assert!(
            metrics
                .iter()
                .any(|x| x["metric"] == m && x["subject"] == subject && x["distance"].is_number()),
            "{m} {subject} missing\n{text}"
        );
    }
    // The two seeds each give their own value.
    assert!(metrics
        .iter()
        .all(|x| x["sim_seeds"].as_array().unwrap().len() == 2));
    let _ = writeln!(
        std::io::stderr(),
        "{T}: score {score:.3} in {:?}",
        t0.elapsed()
    );
}

#[test]
#[ignore = "needs root on Linux; scripts/test.sh runs it as root where tracefs is usable"]
fn exec_writes_a_run_directory_that_is_not_a_recording() {
    const T: &str = "exec_writes_a_run_directory_that_is_not_a_recording";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host(T, "the workload sets SCHED_IDLE");
    let d = tempfile::tempdir().unwrap();
    let wl = d.path().join("w.json");
    std::fs::write(&wl, PERIODIC_HOG).unwrap();
    let out = d.path().join("run");
    let o = schedlab(&[
        "exec",
        wl.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--duration",
        "300ms",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("p-0") && text.contains("SCHED_IDLE"),
        "{text}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["source"], "host");
    assert_eq!(s["tasks"][2]["policy"], "SCHED_IDLE");
    assert!(out.join("rt-app-p-1.log").exists());
    let e = one_line_error(&schedlab(&["validate", out.to_str().unwrap()]));
    assert!(e.contains("host.json: missing"), "{e}");
}

/// A recording made from pieces: the golden periodic mix's run directory
/// (trace, logs, summary), its workload, a sysfs tree, and a host.json
/// whose `uname -r` is `release` (none: the field is left out).
fn recording_fixture(dir: &Path, release: Option<&str>) -> PathBuf {
    let rec = dir.join("rec");
    copy_dir(&golden("out/periodic-mix"), &rec);
    std::fs::copy(golden("periodic-mix.json"), rec.join("workload.json")).unwrap();
    let sysfs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schedlab-core/tests/data/sysfs-2s4c2t");
    copy_dir(&sysfs, &rec.join("sysfs"));
    let kernel = release.map_or(String::new(), |r| {
        format!("\"kernel\": {{\"sysname\": \"Linux\", \"release\": \"{r}\"}}, ")
    });
    std::fs::write(
        rec.join("host.json"),
        format!("{{\"version\": 1, \"host\": {{{kernel}\"hz\": {{\"value\": 250}}, \"preempt\": {{\"value\": \"none\"}}}}}}\n"),
    )
    .unwrap();
    rec
}

/// Validates `rec` with one seed: (stdout, the simulated run's kernel, the
/// report's kernel object).
fn validate_kernel_of(rec: &Path, extra: &[&str]) -> (String, String, serde_json::Value) {
    let json = rec.join("v.json");
    let mut args = vec![
        "validate",
        rec.to_str().unwrap(),
        "--seeds",
        "1",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = schedlab(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("sim-seed1/summary.json")).unwrap())
            .unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        s["kernel"].as_str().unwrap().to_string(),
        v["kernel"].clone(),
    )
}

#[test]
fn validate_simulates_the_recorded_hosts_kernel() {
    let d = tempfile::tempdir().unwrap();
    // This VM's release: 6.18, said in the report and in its JSON.
    let rec = recording_fixture(d.path(), Some("6.18.44-fc-v657"));
    let (text, k, j) = validate_kernel_of(&rec, &[]);
    assert_eq!(k, "6.18");
    assert!(
        text.contains("note: model kernel: 6.18 (the recorded host's release 6.18.44-fc-v657)"),
        "{text}"
    );
    assert_eq!(j["release"], "6.18");
    // --kernel overrides it.
    let (text, k, j) = validate_kernel_of(&rec, &["--kernel", "5.15"]);
    assert_eq!((k.as_str(), j["release"].as_str()), ("5.15", Some("5.15")));
    assert!(text.contains("model kernel: 5.15 (--kernel)"), "{text}");
    // A release between two listed ones runs the older, with a note.
    let d2 = tempfile::tempdir().unwrap();
    let rec = recording_fixture(d2.path(), Some("6.8.0-45-generic"));
    let (text, k, _) = validate_kernel_of(&rec, &[]);
    assert_eq!(k, "6.6");
    assert!(text.contains("not a listed release"), "{text}");
    // Newer than every numbered release: tip.
    let d3 = tempfile::tempdir().unwrap();
    let rec = recording_fixture(d3.path(), Some("7.1.0"));
    let (text, k, _) = validate_kernel_of(&rec, &[]);
    assert_eq!(k, "tip");
    assert!(text.contains("newer than 6.19"), "{text}");
    // No release recorded: the default, said so.
    let d4 = tempfile::tempdir().unwrap();
    let rec = recording_fixture(d4.path(), None);
    let (text, k, _) = validate_kernel_of(&rec, &[]);
    assert_eq!(k, "tip");
    assert!(text.contains("no host.kernel.release"), "{text}");
}

#[test]
fn validate_takes_the_recorded_vcpu_placement() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording_fixture(d.path(), Some("6.18.44-fc-v657"));
    let (text, _, _) = validate_kernel_of(&rec, &[]);
    assert!(
        text.contains(
            "model line latency: the sysfs import's guess (the recording has no c2c.json)"
        ),
        "{text}"
    );
    // CPUs 0 and 8 of sysfs-2s4c2t are one core's two threads.
    std::fs::write(
        rec.join("c2c.json"),
        r#"{"tool": "scripts/host/c2c.c", "cpus": [0, 8], "before_ns": 23.7, "before_range_ns": [23, 24], "after_ns": 122.4, "after_range_ns": [121, 123]}"#,
    )
    .unwrap();
    let (text, _, _) = validate_kernel_of(&rec, &[]);
    assert!(
        text.contains("model line latency: measured (the recording's c2c.json: CPUs 0-8 23.7 ns before, 122.4 ns after; 73 ns at distance SameCore, the import's guess 10 ns)"),
        "{text}"
    );
    // With costs.json's stream extras for the channel calls: the lines at
    // the measured latency take their place, and the note says so.
    std::fs::write(
        rec.join("costs.json"),
        r#"{"version": 1, "context_switch_ns": 1768, "wakeup_ns": 1199, "ipi_send_ns": 2716, "ipi_latency_ns": 4355, "pipe_write_xcpu_ns": 29, "pipe_read_xcpu_ns": 86, "unix_write_xcpu_ns": 0, "unix_read_xcpu_ns": 0}"#,
    )
    .unwrap();
    let (text, _, _) = validate_kernel_of(&rec, &[]);
    assert!(
        text.contains("the import's guess 10 ns); channel cross-CPU extras: the host lines at it, not costs.json's stream figures [29, 86, 0, 0]"),
        "{text}"
    );
    std::fs::remove_file(rec.join("costs.json")).unwrap();
    let r = rec.to_str().unwrap();
    // A broken c2c.json (the recording's measured vCPU placement).
    std::fs::write(rec.join("c2c.json"), "{\n  \"cpus\": ,\n}\n").unwrap();
    let e = one_line_error(&schedlab(&["validate", r]));
    assert!(e.contains("c2c.json:2: "), "{e}");
    std::fs::write(
        rec.join("c2c.json"),
        r#"{"cpus": [0, 4096], "before_ns": 30, "after_ns": 30}"#,
    )
    .unwrap();
    let (text, _, _) = validate_kernel_of(&rec, &[]);
    assert!(
        text.contains(
            "c2c.json measured CPUs 0-4096, not both on the recorded machine of 16 CPU(s))"
        ),
        "{text}"
    );
}

#[test]
fn validate_refuses_a_kernel_it_cannot_model() {
    let d = tempfile::tempdir().unwrap();
    // Older than the oldest release the model has: one line, status 2,
    // and --kernel picks one anyway.
    let rec = recording_fixture(d.path(), Some("4.19.0-27-amd64"));
    let r = rec.to_str().unwrap();
    let e = one_line_error(&schedlab(&["validate", r, "--seeds", "1"]));
    assert!(
        e.contains(
            "host.json: host.kernel.release: kernel release 4.19.0-27-amd64 is older than 5.4"
        ) && e.contains("--kernel"),
        "{e}"
    );
    let (_, k, _) = validate_kernel_of(&rec, &["--kernel", "5.4"]);
    assert_eq!(k, "5.4");
    // Not a release at all.
    std::fs::write(
        rec.join("host.json"),
        "{\"host\": {\"kernel\": {\"release\": \"banana\"}}}\n",
    )
    .unwrap();
    let e = one_line_error(&schedlab(&["validate", r, "--seeds", "1"]));
    assert!(e.contains("'banana' is not MAJOR.MINOR"), "{e}");
    // A --kernel the model does not know.
    let e = one_line_error(&schedlab(&["validate", r, "--kernel", "3.10"]));
    assert!(e.contains("--kernel: unknown release '3.10'"), "{e}");
}

#[test]
#[ignore = "needs root on Linux and tracefs; scripts/test.sh runs it where both hold"]
fn record_on_cpu_0_describes_a_one_cpu_machine() {
    const T: &str = "record_on_cpu_0_describes_a_one_cpu_machine";
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    require_host(T, "recording needs tracefs");
    let d = tempfile::tempdir().unwrap();
    let rec = d.path().join("rec");
    let o = schedlab(&[
        "record",
        "hackbench:groups=1,loops=20,ipc=pipe",
        "--cpus",
        "1",
        "--out",
        rec.to_str().unwrap(),
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    if !o.status.success() && (err.contains("tracefs") || err.contains("trace instance")) {
        panic!(
            "this host cannot trace ({}): leave {T} ignored here",
            err.trim()
        );
    }
    assert!(o.status.success(), "record: {err}");
    let read = |p: &str| std::fs::read_to_string(rec.join(p)).unwrap();
    assert_eq!(read("sysfs/devices/system/cpu/online"), "0\n");
    assert!(!rec.join("sysfs/devices/system/cpu/cpu1").exists());
    let host: serde_json::Value = serde_json::from_str(&read("host.json")).unwrap();
    assert_eq!(host["host"]["cpus_recorded"], "0", "{}", host["host"]);
    let r: serde_json::Value = serde_json::from_str(&read("record.json")).unwrap();
    assert_eq!(r["cpus"], 1);
    // Every hackbench thread ran on CPU 0 only.
    let trace = read("trace.txt");
    let mut n = 0;
    for l in trace
        .lines()
        .filter(|l| l.contains("sched_switch: prev_comm=hb-"))
    {
        n += 1;
        assert!(l.contains("[000]"), "{l}");
    }
    assert!(n > 0, "no hackbench switches traced");
    // validate simulates one CPU.
    let o = schedlab(&["validate", rec.to_str().unwrap(), "--seeds", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("sim-seed1/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        s["cpus"].as_array().map(|c| c.len()),
        Some(1),
        "{}",
        s["cpus"]
    );
}

/// Names in `dir`, sorted (hidden ones too: a stage left behind shows).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// validate's per-seed folders count against --max-output as they are
/// written: past it, one line, status 2, and the recording is as it was
/// (the folders of an earlier validate untouched, no stage left). More
/// than 1000 seeds are refused before anything runs.
#[test]
fn validate_stops_at_the_output_limit_and_refuses_absurd_seed_counts() {
    let d = tempfile::tempdir().unwrap();
    let rec = recording_fixture(d.path(), None);
    let r = rec.to_str().unwrap();
    // One seed's folder (logs, summary, three traces) is about 4.1 MiB.
    let o = schedlab(&["validate", r, "--seeds", "2", "--max-output", "20M"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = names(&rec);
    assert!(before.contains(&"sim-seed2".to_string()), "{before:?}");
    let summary = std::fs::read(rec.join("sim-seed1/summary.json")).unwrap();
    let e = one_line_error(&schedlab(&[
        "validate",
        r,
        "--seeds",
        "3",
        "--max-output",
        "10M",
    ]));
    assert_eq!(
        e.trim_end(),
        format!("schedlab: error: {r}: the simulated runs reached the --max-output limit of 10.0 MiB at seed 3 of 3; nothing was written (--max-output raises the limit)")
    );
    assert_eq!(names(&rec), before);
    assert_eq!(
        std::fs::read(rec.join("sim-seed1/summary.json")).unwrap(),
        summary
    );
    // At seed 1: its trace text alone (2.2 MiB) passes the limit as it runs.
    let e = one_line_error(&schedlab(&["validate", r, "--max-output", "1M"]));
    assert!(
        e.contains("reached the --max-output limit of 1.0 MiB at seed 1 of 3"),
        "{e}"
    );
    assert_eq!(names(&rec), before);
    let e = one_line_error(&schedlab(&["validate", r, "--max-output", "lots"]));
    assert!(e.contains("--max-output: 'lots' is not a size"), "{e}");
    for n in ["1001", "18446744073709551615"] {
        let e = one_line_error(&schedlab(&["validate", r, "--seeds", n]));
        assert_eq!(
            e.trim_end(),
            format!("schedlab: error: --seeds: {n} is more than 1000, the most validate simulates (as compare's --runs): each seed is a whole run written with its traces")
        );
    }
    assert_eq!(names(&rec), before);
}
