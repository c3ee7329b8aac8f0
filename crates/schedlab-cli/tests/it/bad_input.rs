//! Bad input (architecture.md §4): every user error ends with exactly one
//! line on stderr, `schedlab: error: ...`, naming the file and the place
//! where there is one, exit status 2, no panic, and nothing written: the
//! `--out` directory is not created and no staging directory is left.

use crate::common::{describe, entries, schedlab_in};

/// A workload that is fine (finite, calibrated so it warns about nothing).
const OK: &str = r#"{"tasks": {"t": {"run": 100, "loop": 3}}, "global": {"calibration": 100}}"#;

/// A global section that makes a workload valid and quiet.
const GLOBAL: &str = r#""global": {"duration": 1, "calibration": 100}"#;

struct Case {
    /// What kind of bad input.
    kind: &'static str,
    /// Files to create in the working directory (a name ending in `/` is
    /// an empty directory).
    files: Vec<(&'static str, Vec<u8>)>,
    /// Arguments after `run` (`--out out` is appended unless `no_out`).
    args: Vec<String>,
    /// Substrings the message must contain.
    want: Vec<String>,
    no_out: bool,
}

/// `FILE:LINE:COL:` of the first occurrence of `needle` in `text`
/// (1-based, columns in characters).
fn loc(file: &str, text: &str, needle: &str) -> String {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} not in {text}"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap().chars().count() + 1;
    format!("{file}:{line}:{col}:")
}

/// A case whose workload is `text`, in `bad.json`, with the error at `needle`.
fn json_case(kind: &'static str, text: &str, needle: &str, more: &[&str]) -> Case {
    let mut want = vec![loc("bad.json", text, needle)];
    want.extend(more.iter().map(|s| s.to_string()));
    Case {
        kind,
        files: vec![("bad.json", text.as_bytes().to_vec())],
        args: vec!["bad.json".into()],
        want,
        no_out: false,
    }
}

/// A case with a good workload and bad options.
fn flag_case(kind: &'static str, flags: &[&str], want: &[&str]) -> Case {
    let mut args = vec!["ok.json".to_string()];
    args.extend(flags.iter().map(|s| s.to_string()));
    Case {
        kind,
        files: vec![("ok.json", OK.as_bytes().to_vec())],
        args,
        want: want.iter().map(|s| s.to_string()).collect(),
        no_out: false,
    }
}

/// A one-task workload whose task has `keys` (after `"run": 100,` on the
/// line below it, so errors in `keys` are on lines 4 and later).
fn rt_task(keys: &str) -> String {
    format!("{{\n  \"tasks\": {{\n    \"t\": {{ \"run\": 100,\n      {keys}\n    }}\n  }},\n  {GLOBAL}\n}}\n")
}

/// A task in the old grammar of rt-app's `doc/examples/merge/` fragments
/// (`exec`, `lock_order`, `resources`), written for this test.
const MERGE_FRAGMENT: &[u8] = br#"{
  "tasks": {
    "worker": {
      "exec": 4000,
      "period": 10000,
      "lock_order": ["m0"],
      "resources": { "m0": { "duration": 500 } }
    }
  }
}
"#;

fn cases() -> Vec<Case> {
    vec![
        json_case(
            "JSON syntax error",
            "{\n  \"tasks\": {\n    \"t\": { \"run\": 1000,, }\n  }\n}\n",
            ", }",
            &["','"],
        ),
        json_case(
            "wrong type",
            &format!("{{\n  \"tasks\": {{\n    \"t\": {{\n      \"run\": 1000.0\n    }}\n  }},\n  {GLOBAL}\n}}\n"),
            "1000.0",
            &["\"run\""],
        ),
        json_case(
            "negative run",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": -5}}}}, {GLOBAL}}}"),
            "-5",
            &["\"run\""],
        ),
        json_case(
            "zero timer period",
            &format!(
                "{{\"tasks\": {{\"t\": {{\"run\": 100,\n \"timer\": {{\"ref\": \"a\", \"period\": 0 }}}}}}, {GLOBAL}}}"
            ),
            "0 }",
            &["\"period\""],
        ),
        json_case(
            "unknown policy",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100, \"policy\": \"SCHED_FOO\"}}}}, {GLOBAL}}}"),
            "\"SCHED_FOO\"",
            &["SCHED_FOO"],
        ),
        json_case(
            "memrun without count",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100,\n \"memrun\": {{\"type\": \"read\", \"size\": 64}}}}}}, {GLOBAL}}}"),
            "{\"type\"",
            &["key \"memrun\"", "no \"count\""],
        ),
        json_case(
            "SCHED_FIFO priority 0",
            &rt_task(r#""policy": "SCHED_FIFO", "priority": 0"#),
            "0\n",
            &["key \"priority\"", "priority 0 is out of range for SCHED_FIFO (expected 1..=99)"],
        ),
        json_case(
            "SCHED_FIFO priority 100",
            &rt_task(r#""policy": "SCHED_FIFO", "priority": 100"#),
            "100\n",
            &["key \"priority\"", "priority 100 is out of range for SCHED_FIFO (expected 1..=99)"],
        ),
        json_case(
            "SCHED_DEADLINE without dl-runtime",
            &rt_task(r#""policy": "SCHED_DEADLINE""#),
            "\"policy\"",
            &["key \"policy\"", "SCHED_DEADLINE needs dl-runtime"],
        ),
        json_case(
            "dl-deadline shorter than dl-runtime",
            &rt_task(r#""policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000,
      "dl-deadline": 1000"#),
            "1000\n",
            &["key \"dl-deadline\"", "shorter than dl-runtime", "EINVAL"],
        ),
        json_case(
            "dl-period shorter than dl-deadline",
            &rt_task(r#""policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-deadline": 5000,
      "dl-period": 3000"#),
            "3000\n",
            &["key \"dl-period\"", "shorter than dl-deadline", "EINVAL"],
        ),
        json_case(
            "negative dl-period",
            &rt_task(r#""policy": "SCHED_DEADLINE", "dl-runtime": 1000,
      "dl-period": -10000"#),
            "-10000",
            &["key \"dl-period\"", "negative"],
        ),
        json_case(
            "taskgroup with SCHED_FIFO",
            &rt_task(r#""policy": "SCHED_FIFO",
      "taskgroup": "/rt""#),
            "\"/rt\"",
            &["key \"taskgroup\"", "SCHED_FIFO"],
        ),
        json_case("empty task list", "{\"tasks\": {}}", "\"tasks\"", &["no tasks"]),
        json_case(
            "absurd instance count",
            &format!("{{\"tasks\": {{\"t\": {{\"instance\": 100000000, \"run\": 100}}}}, {GLOBAL}}}"),
            "100000000",
            &["\"instance\""],
        ),
        json_case(
            "unknown key",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100,\n   \"frobnicate\": 3}}}}, {GLOBAL}}}"),
            "\"frobnicate\"",
            &["frobnicate"],
        ),
        json_case(
            "not-supported-yet event",
            &format!(
                "{{\"tasks\": {{\"t\": {{\"run\": 100, \"fork\": \"t\"}}}}, {GLOBAL}}}"
            ),
            "\"fork\"",
            &["not supported yet"],
        ),
        json_case(
            "cpus beyond the machine",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100, \"cpus\": [0, 9]}}}}, {GLOBAL}}}"),
            "[0, 9]",
            &["9"],
        ),
        json_case(
            "integer out of range",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 99999999999999999999}}}}, {GLOBAL}}}"),
            "99999999999999999999",
            &["range"],
        ),
        Case {
            // `{` is level 1, so the 128th `[` (column 10 + 128) is one too deep.
            kind: "nesting too deep",
            files: vec![(
                "bad.json",
                format!("{{\"tasks\": {}", "[".repeat(100_000)).into_bytes(),
            )],
            args: vec!["bad.json".into()],
            want: vec!["bad.json:1:138:".into(), "nesting".into()],
            no_out: false,
        },
        json_case(
            "trailing garbage",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100}}}}, {GLOBAL}}}\nxyz"),
            "xyz",
            &["end of file"],
        ),
        json_case("empty file", "", "", &["empty"]),
        json_case("not an object", "[1, 2]", "[1", &["tasks"]),
        json_case(
            "loop 0",
            &format!("{{\"tasks\": {{\"t\": {{\"loop\": 0, \"run\": 100}}}}, {GLOBAL}}}"),
            "0,",
            &["\"loop\""],
        ),
        json_case(
            "nice out of range",
            &format!("{{\"tasks\": {{\"t\": {{\"run\": 100, \"priority\": 50}}}}, {GLOBAL}}}"),
            "50",
            &["nice"],
        ),
        Case {
            kind: "not UTF-8",
            files: vec![("bad.json", b"{\"tasks\": \xff\xfe}".to_vec())],
            args: vec!["bad.json".into()],
            want: vec!["bad.json".into(), "UTF-8".into()],
            no_out: false,
        },
        Case {
            kind: "missing file",
            files: vec![],
            args: vec!["nonexistent.json".into()],
            want: vec!["nonexistent.json".into(), "cannot read".into()],
            no_out: false,
        },
        Case {
            kind: "a directory as workload",
            files: vec![("adir/", vec![])],
            args: vec!["adir".into()],
            want: vec!["adir".into(), "cannot read".into()],
            no_out: false,
        },
        Case {
            kind: "merge/ fragment",
            files: vec![("thread0.json", MERGE_FRAGMENT.to_vec())],
            args: vec!["thread0.json".into()],
            want: vec!["thread0.json:4:7:".into(), "not an rt-app workload".into(), "merge".into()],
            no_out: false,
        },
        Case {
            kind: "forever-looping workload without duration",
            files: vec![("bad.json", br#"{"tasks": {"t": {"run": 100, "loop": -1}}, "global": {"calibration": 100}}"#.to_vec())],
            args: vec!["bad.json".into()],
            want: vec!["duration".into()],
            no_out: false,
        },
        flag_case("unknown preset", &["--machine", "nope"], &["'nope'", "vm-2cpu"]),
        flag_case(
            "sysfs dir that does not exist",
            &["--machine", "sysfs:no/such/dir"],
            &["no/such/dir"],
        ),
        Case {
            kind: "sysfs dir without CPUs",
            files: vec![("ok.json", OK.as_bytes().to_vec()), ("emptysys/", vec![])],
            args: vec!["ok.json".into(), "--machine".into(), "sysfs:emptysys".into()],
            want: vec!["emptysys".into()],
            no_out: false,
        },
        flag_case("bad --duration unit", &["--duration", "5 parsecs"], &["--duration", "parsecs"]),
        flag_case("bad --duration number", &["--duration", "1.2.3s"], &["--duration"]),
        flag_case("zero --duration", &["--duration", "0ms"], &["--duration", "zero"]),
        flag_case("huge --duration", &["--duration", "99999999999999s"], &["--duration", "too large"]),
        flag_case("unknown --features name", &["--features", "BOGUS"], &["--features", "BOGUS"]),
        flag_case(
            "contradictory --features",
            &["--features", "PLACE_LAG,NO_PLACE_LAG"],
            &["--features", "PLACE_LAG"],
        ),
        flag_case("--features with a bad value", &["--features", "PLACE_LAG=maybe"], &["--features", "PLACE_LAG", "maybe"]),
        flag_case("bad --preempt", &["--preempt", "sometimes"], &["--preempt", "sometimes"]),
        flag_case("--hz too low", &["--hz", "50"], &["--hz", "50"]),
        flag_case("--hz too high", &["--hz", "20000"], &["--hz", "20000"]),
        Case {
            kind: "--trace without --out",
            files: vec![("ok.json", OK.as_bytes().to_vec())],
            args: vec!["ok.json".into(), "--trace".into()],
            want: vec!["--trace".into(), "--out".into()],
            no_out: true,
        },
    ]
}

/// Runs one case in a fresh directory; returns a failure description.
fn check(case: &Case) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    for (name, data) in &case.files {
        let p = tmp.path().join(name);
        if name.ends_with('/') {
            std::fs::create_dir_all(&p).unwrap();
        } else {
            std::fs::write(&p, data).unwrap();
        }
    }
    let before = entries(tmp.path());
    let mut args = vec!["run".to_string()];
    args.extend(case.args.iter().cloned());
    if !case.no_out {
        args.extend(["--out".to_string(), "out".to_string()]);
    }
    let out = schedlab_in(tmp.path(), &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let fail = |why: String| {
        Err(format!(
            "[{}] {why}\nargs: {args:?}\n{}",
            case.kind,
            describe(&out)
        ))
    };
    if out.status.code() != Some(2) {
        return fail(format!("exit status {:?}, expected 2", out.status.code()));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        return fail("panic".into());
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 {
        return fail(format!(
            "{} lines on stderr, expected exactly 1",
            lines.len()
        ));
    }
    let msg = lines[0];
    if !msg.starts_with("schedlab: error: ") {
        return fail("stderr does not start with 'schedlab: error: '".into());
    }
    for w in &case.want {
        if !msg.contains(w.as_str()) {
            return fail(format!("message does not mention {w:?}"));
        }
    }
    if !out.stdout.is_empty() {
        return fail("something was printed on stdout".into());
    }
    let after = entries(tmp.path());
    if after != before {
        return fail(format!(
            "the working directory changed: {before:?} -> {after:?} (out dir or staging left behind)"
        ));
    }
    Ok(())
}

#[test]
fn every_kind_of_bad_input_is_one_line_exit_2_and_nothing_written() {
    let cases = cases();
    assert!(cases.len() >= 15);
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases misbehave:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

#[test]
fn the_good_workload_used_above_is_accepted() {
    // Guards the table: its flag cases fail because of the flag alone.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("ok.json"), OK).unwrap();
    let out = schedlab_in(tmp.path(), ["run", "ok.json", "--out", "out", "--trace"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        out.stderr.is_empty(),
        "warnings for the good workload: {}",
        describe(&out)
    );
    assert!(tmp.path().join("out/summary.json").is_file());
    assert!(tmp.path().join("out/trace.txt").is_file());
}

/// §4: the message names the file. These messages come from checks made
/// after the loader, which lose the file name.
#[test]

fn late_errors_name_the_file() {
    for (kind, text) in [
        (
            "forever without duration",
            r#"{"tasks": {"t": {"run": 100, "loop": -1}}, "global": {"calibration": 100}}"#,
        ),
        (
            "instance 0",
            r#"{"tasks": {"t": {"instance": 0, "run": 100}}, "global": {"duration": 1, "calibration": 100}}"#,
        ),
    ] {
        let case = Case {
            kind,
            files: vec![("bad.json", text.as_bytes().to_vec())],
            args: vec!["bad.json".into()],
            want: vec!["bad.json".into()],
            no_out: false,
        };
        check(&case).unwrap();
    }
}

/// A user error found after the workload's warnings were printed: stderr
/// gets the warning and the error, two lines.
#[test]

fn warnings_are_not_printed_before_a_late_error() {
    let case = Case {
        kind: "--trace without --out, uncalibrated workload",
        files: vec![(
            "w.json",
            br#"{"tasks": {"t": {"run": 100, "loop": 3}}}"#.to_vec(),
        )],
        args: vec!["w.json".into(), "--trace".into()],
        want: vec!["--trace".into()],
        no_out: true,
    };
    check(&case).unwrap();
}

/// §4: absurd sizes end with an error. `global.duration` of 2^63-1 s
/// saturates to u64::MAX ns, `t_start + duration` wraps in release builds
/// (and panics with overflow checks), and the run "succeeds" with an end
/// before its start: nothing runs and summary.json claims
/// duration_ns = 18446744073709551615.
#[test]

fn absurd_global_duration_is_refused() {
    let text = r#"{"tasks": {"t": {"run": 100}},
  "global": {"duration": 9223372036854775807, "calibration": 100}}"#;
    let case = Case {
        kind: "absurd global.duration",
        files: vec![("bad.json", text.as_bytes().to_vec())],
        args: vec!["bad.json".into()],
        want: vec![loc("bad.json", text, "9223372036854775807")],
        no_out: false,
    };
    check(&case).unwrap();
}

/// SCHED_DEADLINE admission control is the simulator's, at set-up: the
/// kernel admits deadline tasks while their total bandwidth stays within
/// 95 % of the CPUs (rt_runtime / rt_period). On vm-2cpu (limit 1.9 CPUs)
/// three tasks of 50 % (1.5) are admitted and four (2.0) are refused.
#[test]
fn deadline_admission_control_refuses_too_much_bandwidth() {
    let file = |n: u32| {
        let tasks: Vec<String> = (0..n)
            .map(|i| format!(r#""d{i}": {{"policy": "SCHED_DEADLINE", "dl-runtime": 5000, "dl-period": 10000, "run": 1000, "loop": 5}}"#))
            .collect();
        format!("{{\"tasks\": {{{}}}, {GLOBAL}}}", tasks.join(", "))
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("ok.json"), file(3)).unwrap();
    let out = schedlab_in(
        tmp.path(),
        [
            "run",
            "ok.json",
            "--machine",
            "vm-2cpu",
            "--check",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "three 50 % tasks: {}", describe(&out));
    let case = Case {
        kind: "SCHED_DEADLINE over the admission limit",
        files: vec![("bad.json", file(4).into_bytes())],
        args: vec!["bad.json".into(), "--machine".into(), "vm-2cpu".into()],
        want: vec!["bad.json".into(), "admission control".into()],
        no_out: false,
    };
    check(&case).unwrap();
}

/// Phases are not threads: one task of 1 000 phases runs under
/// `--max-tasks 500`.
#[test]
fn phases_are_not_counted_as_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let phases: Vec<String> = (0..1000)
        .map(|i| format!("\"p{i}\": {{\"run\": 10}}"))
        .collect();
    let text = format!(
        "{{\"tasks\": {{\"t\": {{\"loop\": 1, \"phases\": {{{}}}}}}}, \"global\": {{\"calibration\": 100}}}}",
        phases.join(", ")
    );
    std::fs::write(tmp.path().join("p.json"), text).unwrap();
    let o = schedlab_in(tmp.path(), ["run", "p.json", "--max-tasks", "500", "-q"]);
    assert!(o.status.success(), "{}", describe(&o));
}

/// A resume of a thread that does not exist runs (rt-app loses such a
/// wake-up too) with one warning line naming the place and the name.
#[test]
fn resume_of_an_unknown_thread_is_one_warning_line() {
    let tmp = tempfile::tempdir().unwrap();
    let text = r#"{"tasks": {"t": {"loop": 3, "run": 100, "resume": "nobody", "sleep": 100}}, "global": {"calibration": 100}}"#;
    std::fs::write(tmp.path().join("r.json"), text).unwrap();
    let o = schedlab_in(tmp.path(), ["run", "r.json"]);
    assert!(o.status.success(), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("schedlab: r.json:1:")
            && err.contains("warning: key \"resume\": no thread is named \"nobody\""),
        "{err}"
    );
}
