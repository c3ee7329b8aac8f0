//! Broken rt-app inputs: each must fail with one exact line,
//! `FILE:LINE:COL: <problem>`, naming the key where there is one.

use schedlab_workload::{load_rtapp, ErrorKind};

/// Loads `text` as `w.json` on a 4-CPU machine and returns the error line.
fn fail(text: &str) -> (String, ErrorKind) {
    let e = load_rtapp("w.json", text, 4).expect_err("should fail");
    let line = e.to_string();
    assert!(!line.contains('\n'), "{line}");
    (line, e.kind)
}

fn task(body: &str) -> String {
    format!("{{\n  \"tasks\": {{\n    \"t\": {{\n      {body}\n    }}\n  }}\n}}\n")
}

#[test]
fn bad_forks() {
    // A thread that forks its own task: the child would fork again, and so
    // on without end.
    let (line, kind) = fail(&task(r#""run": 10, "fork": "t""#));
    assert_eq!(line, "w.json:4:18: key \"fork\": task \"t\" forks itself (t -> t), so forks would nest without end: not supported yet (schedlab makes every forked thread at load time)");
    assert_eq!(kind, ErrorKind::Unsupported);
    let (line, kind) = fail(&task(r#""run": 10, "fork": "nobody""#));
    assert_eq!(
        line,
        "w.json:4:18: key \"fork\": there is no task \"nobody\" to fork"
    );
    assert_eq!(kind, ErrorKind::Invalid);
    let text = "{\"tasks\": {\"t\": {\"loop\": 1, \"run\": 10, \"fork1\": \"u\"},\n \"u\": {\"instance\": 0, \"run\": 5, \"barrier\": \"b\"}}}";
    let (line, kind) = fail(text);
    assert_eq!(line, "w.json:2:33: key \"barrier\": task \"u\" is forked: barrier cannot be combined with fork (rt-app counts barrier participants at start-up)");
    assert_eq!(kind, ErrorKind::Invalid);
}

#[test]
fn run_as_double_is_rejected() {
    let (line, kind) = fail(&task(r#""run": 1000.0"#));
    assert_eq!(
        line,
        "w.json:4:14: key \"run\": expected an int, found a double"
    );
    assert_eq!(kind, ErrorKind::Invalid);
}

#[test]
fn run_as_string_is_rejected() {
    let (line, _) = fail(&task(r#""run2": "x""#));
    assert_eq!(
        line,
        "w.json:4:15: key \"run2\": expected an int, found a string"
    );
}

#[test]
fn zero_run_and_negative_sleep() {
    let (line, _) = fail(&task(r#""run": 0"#));
    assert_eq!(
        line,
        "w.json:4:14: key \"run\": 0 must be greater than 0 (µs)"
    );
    let (line, _) = fail(&task(r#""run": 5, "sleep": -3"#));
    assert_eq!(
        line,
        "w.json:4:26: key \"sleep\": -3 must not be negative (µs)"
    );
}

#[test]
fn timer_without_period_and_zero_period() {
    let (line, _) = fail(&task(r#""run": 5, "timer": { "ref": "a" }"#));
    assert_eq!(
        line,
        "w.json:4:26: key \"timer\": timer has no \"period\" (rt-app's default 0 never sleeps)"
    );
    let (line, _) = fail(&task(r#""run": 5, "timer": { "period": 0 }"#));
    assert_eq!(
        line,
        "w.json:4:38: key \"period\": 0 must be greater than 0 (µs)"
    );
}

#[test]
fn timer_bad_mode() {
    let (line, _) = fail(&task(
        r#""run": 5, "timer": { "period": 10, "mode": "abs" }"#,
    ));
    assert!(
        line.starts_with("w.json:4:50: key \"mode\": unknown timer mode \"abs\""),
        "{line}"
    );
}

#[test]
fn unknown_task_key_is_a_typo() {
    let (line, kind) = fail(&task(r#""run": 5, "prioriry": 3"#));
    assert_eq!(line, "w.json:4:17: unknown key \"prioriry\" in a task (rt-app would ignore it; schedlab rejects it to catch typos)");
    assert_eq!(kind, ErrorKind::UnknownKey);
}

#[test]
fn unknown_global_key() {
    let (line, _) = fail("{\"tasks\": {\"t\": {\"run\": 1}},\n \"global\": {\"durration\": 3}}");
    assert_eq!(line, "w.json:2:13: unknown key \"durration\" in \"global\" (rt-app would ignore it; schedlab rejects it to catch typos)");
}

#[test]
fn negative_instance_and_absurd_instance() {
    let (line, _) = fail(&task(r#""instance": -1, "run": 5"#));
    assert_eq!(
        line,
        "w.json:4:19: key \"instance\": -1 must not be negative (0 makes a fork template)"
    );
    let (line, _) = fail(&task(r#""instance": 100001, "run": 5"#));
    assert_eq!(line, "w.json:4:19: key \"instance\": 100001 instances bring the file to more than 100000 threads, which is absurd (--max-tasks raises the limit)");
}

#[test]
fn cpu_beyond_machine() {
    let (line, _) = fail(&task(r#""run": 5, "cpus": [0, 4]"#));
    assert_eq!(
        line,
        "w.json:4:25: key \"cpus\": CPU 4 does not exist (the machine has CPUs 0..=3)"
    );
}

#[test]
fn nice_out_of_range() {
    let (line, _) = fail(&task(r#""run": 5, "priority": -21"#));
    assert_eq!(line, "w.json:4:29: key \"priority\": nice -21 is out of range for SCHED_NORMAL (expected -20..=19)");
}

#[test]
fn rt_priority_out_of_range() {
    for (body, needle, msg) in [
        (
            r#""run": 5, "policy": "SCHED_FIFO", "priority": 0"#,
            "0",
            "priority 0 is out of range for SCHED_FIFO (expected 1..=99)",
        ),
        (
            r#""run": 5, "policy": "SCHED_FIFO", "priority": 100"#,
            "100",
            "priority 100 is out of range for SCHED_FIFO (expected 1..=99)",
        ),
        (
            r#""run": 5, "policy": "SCHED_RR", "priority": -3"#,
            "-3",
            "priority -3 is out of range for SCHED_RR (expected 1..=99)",
        ),
    ] {
        let (line, kind) = fail(&task(body));
        assert_eq!(
            line,
            format!("{} key \"priority\": {msg}", at_body(body, needle))
        );
        assert_eq!(kind, ErrorKind::Invalid);
    }
}

/// SCHED_DEADLINE parameters the kernel refuses (EINVAL), each reported at
/// the key to blame.
#[test]
fn bad_deadline_parameters() {
    const E: &str = " (sched_setattr would fail with EINVAL)";
    for (body, needle, key, msg) in [
        (
            r#""run": 5, "policy": "SCHED_DEADLINE""#,
            "\"policy\"",
            "policy",
            "SCHED_DEADLINE needs dl-runtime, a runtime above 0 µs".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 0, "dl-period": 1000"#,
            "0,",
            "dl-runtime",
            "SCHED_DEADLINE needs dl-runtime, a runtime above 0 µs".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 1"#,
            "1",
            "dl-runtime",
            "dl-runtime 1000 ns is below 1024 ns".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-deadline": 1000, "dl-period": 10000"#,
            "1000,",
            "dl-deadline",
            "dl-deadline 1000 µs is shorter than dl-runtime 2000 µs".to_string(),
        ),
        (
            // dl-deadline defaults to dl-period: the period is to blame.
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 1000"#,
            "1000",
            "dl-period",
            "dl-deadline 1000 µs is shorter than dl-runtime 2000 µs".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-deadline": 5000, "dl-period": 3000"#,
            "3000",
            "dl-period",
            "dl-period 3000 µs is shorter than dl-deadline 5000 µs".to_string(),
        ),
        (
            // dl-period defaults to dl-runtime: the deadline is to blame.
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-deadline": 5000"#,
            "5000",
            "dl-deadline",
            "dl-period 1000 µs is shorter than dl-deadline 5000 µs".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 10, "dl-period": 50"#,
            "50",
            "dl-period",
            "dl-period 50 µs is outside 100 µs..4 s".to_string(),
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 5000000"#,
            "5000000",
            "dl-period",
            "dl-period 5000000 µs is outside 100 µs..4 s".to_string(),
        ),
        (
            // The legacy names are read when the dl-* key is absent.
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 2000, "deadline": 1000, "period": 3000"#,
            "1000,",
            "deadline",
            "dl-deadline 1000 µs is shorter than dl-runtime 2000 µs".to_string(),
        ),
    ] {
        let (line, kind) = fail(&task(body));
        assert_eq!(
            line,
            format!("{} key \"{key}\": {msg}{E}", at_body(body, needle)),
            "{body}"
        );
        assert_eq!(kind, ErrorKind::Invalid);
    }
}

#[test]
fn negative_deadline_parameters() {
    for (body, needle, key) in [
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": -5"#,
            "-5",
            "dl-period",
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": -1000"#,
            "-1000",
            "dl-runtime",
        ),
        (
            r#""run": 5, "policy": "SCHED_FIFO", "dl-deadline": -7"#,
            "-7",
            "dl-deadline",
        ),
        (r#""run": 5, "dl-period": -7"#, "-7", "dl-period"),
    ] {
        let (line, kind) = fail(&task(body));
        let n = needle;
        assert_eq!(
            line,
            format!(
                "{} key \"{key}\": {n} must not be negative (µs)",
                at_body(body, needle)
            )
        );
        assert_eq!(kind, ErrorKind::Invalid);
    }
}

#[test]
fn deadline_default_policy_without_runtime_names_the_task() {
    let text = "{\"tasks\": {\"t\": {\"run\": 5}},\n \"global\": {\"default_policy\": \"SCHED_DEADLINE\"}}";
    let (line, _) = fail(text);
    assert_eq!(line, "w.json:2:13: key \"default_policy\": SCHED_DEADLINE (the default policy of task \"t\") needs dl-runtime, a runtime above 0 µs (sched_setattr would fail with EINVAL)");
}

#[test]
fn phase_level_deadline_needs_parameters() {
    // A fair task: nothing to keep.
    let body = r#""phases": { "p": { "policy": "SCHED_DEADLINE", "run": 5 } }"#;
    let (line, kind) = fail(&task(body));
    assert_eq!(
        line,
        format!("{} key \"policy\": SCHED_DEADLINE (phase \"p\") needs dl-runtime, a runtime above 0 µs, and there are no earlier SCHED_DEADLINE parameters to keep (sched_setattr would fail with EINVAL)", at_body(body, "\"policy\""))
    );
    assert_eq!(kind, ErrorKind::Invalid);
    // dl-period without dl-runtime in a phase.
    let body = r#""policy": "SCHED_DEADLINE", "dl-runtime": 1000, "phases": { "p": { "dl-period": 5000, "run": 5 } }"#;
    let (line, _) = fail(&task(body));
    assert_eq!(
        line,
        format!("{} key \"dl-period\": a phase that sets dl-period must set dl-runtime too (sched_setattr takes the SCHED_DEADLINE parameters together)", at_body(body, "5000"))
    );
    // A phase's own parameters are checked like the task's.
    let body = r#""phases": { "p": { "policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 2000, "run": 5 } }"#;
    let (line, _) = fail(&task(body));
    assert_eq!(
        line,
        format!("{} key \"dl-period\": dl-deadline 2000 µs is shorter than dl-runtime 3000 µs (sched_setattr would fail with EINVAL)", at_body(body, "2000"))
    );
}

#[test]
fn taskgroup_only_with_fair_policies() {
    const MSG: &str = "a task group is allowed only with SCHED_OTHER, SCHED_BATCH or SCHED_IDLE";
    for (body, policy) in [
        (
            r#""run": 5, "policy": "SCHED_FIFO", "taskgroup": "/g""#,
            "SCHED_FIFO",
        ),
        (
            r#""run": 5, "taskgroup": "/g", "policy": "SCHED_RR""#,
            "SCHED_RR",
        ),
        (
            r#""run": 5, "policy": "SCHED_DEADLINE", "dl-runtime": 100, "dl-period": 1000, "taskgroup": "/g""#,
            "SCHED_DEADLINE",
        ),
        (
            r#""phases": { "p": { "policy": "SCHED_FIFO", "taskgroup": "/g", "run": 5 } }"#,
            "SCHED_FIFO",
        ),
        (
            // The phase's policy in force comes from an earlier phase.
            r#""phases": { "a": { "policy": "SCHED_RR", "run": 5 }, "b": { "taskgroup": "/g", "run": 5 } }"#,
            "SCHED_RR",
        ),
    ] {
        let (line, kind) = fail(&task(body));
        assert_eq!(
            line,
            format!("{} key \"taskgroup\": \"/g\": {MSG}, not {policy} (rt-app refuses the combination)", at_body(body, "\"/g\"")),
            "{body}"
        );
        assert_eq!(kind, ErrorKind::Invalid);
    }
    // Through global.default_policy.
    let text = "{\"tasks\": {\"t\": {\"run\": 5,\n \"taskgroup\": \"/g\"}}, \"global\": {\"default_policy\": \"SCHED_FIFO\"}}";
    let (line, _) = fail(text);
    assert!(
        line.starts_with("w.json:2:15: key \"taskgroup\": \"/g\": a task group"),
        "{line}"
    );
}

#[test]
fn unknown_policy_name() {
    let (line, _) = fail(&task(r#""run": 5, "policy": "SCHED_FAIR""#));
    assert!(
        line.starts_with("w.json:4:27: key \"policy\": unknown policy \"SCHED_FAIR\""),
        "{line}"
    );
}

/// `w.json:4:COL:` of `needle` in a [`task`] body (the body starts at column 7).
fn at_body(body: &str, needle: &str) -> String {
    format!(
        "w.json:4:{}:",
        7 + body.find(needle).expect("needle in body")
    )
}

#[test]
fn bad_taskgroup_paths() {
    for (body, needle, msg) in [
        (
            r#""run": 5, "taskgroup": "a/b""#,
            "\"a/b",
            r#"key "taskgroup": cgroup path "a/b" must start with '/' (it is absolute in the cpu hierarchy)"#,
        ),
        (
            r#""run": 5, "taskgroup": "/a/../b""#,
            "\"/a/..",
            r#"key "taskgroup": cgroup path "/a/../b" must not contain '..' components"#,
        ),
        (
            r#""run": 5, "taskgroup": "/a/""#,
            "\"/a/",
            r#"key "taskgroup": cgroup path "/a/" must not end with '/'"#,
        ),
        (
            r#""run": 5, "taskgroup": 3"#,
            "3",
            r#"key "taskgroup": expected a string, found an int"#,
        ),
        (
            r#""phases": {"p": {"run": 5, "taskgroup": "/x y"}}"#,
            "\"/x y",
            r#"key "taskgroup": cgroup path "/x y": character ' ' is not allowed (use letters, digits, '_', '-', '.', '+', '@')"#,
        ),
    ] {
        let (line, kind) = fail(&task(body));
        assert_eq!(line, format!("{} {msg}", at_body(body, needle)));
        assert_eq!(kind, ErrorKind::Invalid);
    }
}

#[test]
fn too_many_taskgroups() {
    let phases: Vec<String> = (0..33)
        .map(|i| format!(r#""p{i}": {{"run": 5, "taskgroup": "/g{i}"}}"#))
        .collect();
    let body = format!(r#""phases": {{{}}}"#, phases.join(", "));
    let (line, _) = fail(&task(&body));
    assert_eq!(
        line,
        format!(
            "{} key \"taskgroup\": \"/g32\" makes more than 32 distinct task groups, rt-app's limit",
            at_body(&body, "\"/g32")
        )
    );
}

/// A file with `taskgroups` = `groups` (on line 3, from column 17) and one task.
fn with_groups(groups: &str) -> String {
    format!("{{\n  \"tasks\": {{ \"t\": {{ \"run\": 5 }} }},\n  \"taskgroups\": {groups}\n}}\n")
}

#[test]
fn bad_taskgroups_settings() {
    for (groups, needle, msg) in [
        (
            r#"{"/c": {"cpu.max": "500 100000"}}"#,
            "\"500",
            r#"key "cpu.max": quota 500 µs is below the kernel's minimum of 1000 µs (1 ms) (taskgroup "/c")"#,
        ),
        (
            r#"{"/c": {"cpu.max": "20000 2000000"}}"#,
            "\"20000",
            r#"key "cpu.max": period 2000000 µs is out of range (the kernel allows 1000..=1000000 µs, 1 ms to 1 s) (taskgroup "/c")"#,
        ),
        (
            r#"{"/c": {"cpu.weight": -5}}"#,
            "-5",
            r#"key "cpu.weight": -5 is negative (taskgroup "/c")"#,
        ),
        (
            r#"{"/c": {"cpu.weight": 0}}"#,
            "0}",
            r#"key "cpu.weight": weight 0 is out of range (expected 1..=10000) (taskgroup "/c")"#,
        ),
        (
            r#"{"/c": {"cpu.weight": 1.5}}"#,
            "1.5",
            r#"key "cpu.weight": expected an int or a string, found a double"#,
        ),
        (
            r#"{"/c": {"cpu.max": "20000", "cpu.max.burst": 30000}}"#,
            "\"/c",
            r#"key "/c": cgroup "/c": cpu.max.burst 30000 µs is more than the quota 20000 µs (the kernel refuses a burst above the quota)"#,
        ),
        (
            r#"{"/": {"cpu.weight": 50}}"#,
            "\"/\"",
            r#"key "/": the root group "/" cannot be configured (cgroupfs has no cpu.max, cpu.weight, ... in the root)"#,
        ),
        (
            r#"{"c": {"cpu.weight": 50}}"#,
            "\"c\"",
            r#"key "c": cgroup path "c" must start with '/' (it is absolute in the cpu hierarchy)"#,
        ),
        (
            r#"{"/c": {"cpu.wieght": 50}}"#,
            "\"cpu.wieght",
            r#"key "cpu.wieght": unknown cpu controller file (known: cpu.max, cpu.max.burst, cpu.weight, cpu.weight.nice, cpu.idle, cpu.shares, cpu.cfs_quota_us, cpu.cfs_period_us, cpu.cfs_burst_us) (taskgroup "/c")"#,
        ),
        (
            r#"{"/c": 50}"#,
            "50",
            r#"key "/c": expected an object, found an int"#,
        ),
        (
            r#"["/c"]"#,
            "[",
            r#"key "taskgroups": expected an object, found an array"#,
        ),
    ] {
        let (line, kind) = fail(&with_groups(groups));
        let col = 17 + groups.find(needle).expect("needle in groups");
        assert_eq!(line, format!("w.json:3:{col}: {msg}"), "{groups}");
        assert_eq!(kind, ErrorKind::Invalid, "{groups}");
    }
}

#[test]
fn bad_uclamp() {
    let (line, kind) = fail(&task(r#""run": 5, "util_max": 2048"#));
    assert_eq!(
        line,
        "w.json:4:29: key \"util_max\": 2048 is out of range (expected 0..=1024)"
    );
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, _) = fail(&task(r#""run": 5, "util_min": -1"#));
    assert_eq!(
        line,
        "w.json:4:29: key \"util_min\": -1 is out of range (expected 0..=1024)"
    );
    let (line, _) = fail(&task(r#""run": 5, "util_min": 600, "util_max": 500"#));
    assert_eq!(
        line,
        "w.json:4:46: key \"util_max\": 500 is below util_min 600 (sched_setattr would fail with EINVAL)"
    );
}

#[test]
fn resources_section_must_be_an_object() {
    let (line, kind) = fail("{\"tasks\": {\"t\": {\"run\": 1}}, \"resources\": 3}");
    assert!(
        line.starts_with("w.json:1:43: key \"resources\": expected an object"),
        "{line}"
    );
    assert_eq!(kind, ErrorKind::Invalid);
}

#[test]
fn phase_without_events() {
    let (line, _) = fail(&task(r#""phases": { "p1": { "loop": 3 } }"#));
    assert_eq!(
        line,
        "w.json:4:19: phase \"p1\" has no events (rt-app requires at least one)"
    );
}

#[test]
fn event_at_task_level_next_to_phases() {
    let (line, _) = fail(&task(r#""run": 3, "phases": { "p1": { "run": 3 } }"#));
    assert!(line.starts_with("w.json:4:7: key \"run\": events at task level are ignored when the task has \"phases\""), "{line}");
}

#[test]
fn no_tasks_is_not_a_workload() {
    let (line, kind) = fail("{ \"global\": { \"duration\": 5 } }");
    assert!(
        line.starts_with("w.json:1:1: this is not an rt-app workload: it has no \"tasks\" object"),
        "{line}"
    );
    assert!(line.contains("merge/"), "{line}");
    assert_eq!(kind, ErrorKind::NotAWorkload);
}

#[test]
fn bad_loops() {
    let (line, _) = fail(&task(r#""loop": 0, "run": 3"#));
    assert_eq!(
        line,
        "w.json:4:15: key \"loop\": 0 is not a loop count (use -1 for ever, or 1 or more)"
    );
    let (line, _) = fail(&task(r#""phases": { "p": { "loop": -1, "run": 3 } }"#));
    assert_eq!(
        line,
        "w.json:4:34: key \"loop\": -1 is not a phase loop count (expected 1 or more)"
    );
}

#[test]
fn syntax_error_has_position() {
    let (line, kind) = fail("{\n  \"tasks\": {\n    \"t\": { \"run\" 5 }\n  }\n}");
    assert_eq!(
        line,
        "w.json:3:18: expected ':' after key \"run\", found '5'"
    );
    assert_eq!(kind, ErrorKind::Syntax);
}

#[test]
fn bare_non_event_key_has_no_value() {
    let (line, _) = fail(&task(r#""run": 3, "loop""#));
    assert_eq!(
        line,
        "w.json:4:17: key \"loop\": has no value (json-c needs ': value')"
    );
}

#[test]
fn bad_calibration() {
    let (line, _) =
        fail("{\"tasks\": {\"t\": {\"run\": 1}}, \"global\": {\"calibration\": \"GPU0\"}}");
    assert!(
        line.starts_with("w.json:1:56: key \"calibration\": expected \"CPU<n>\""),
        "{line}"
    );
    let (line, _) = fail("{\"tasks\": {\"t\": {\"run\": 1}}, \"global\": {\"calibration\": 0}}");
    assert_eq!(
        line,
        "w.json:1:56: key \"calibration\": pLoad 0 ns must be greater than 0"
    );
}

#[test]
fn broken_sync_events() {
    let (line, kind) = fail(&task(r#""lock": 3, "run": 5"#));
    assert_eq!(
        line,
        "w.json:4:15: key \"lock\": expected a string, found an int"
    );
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, kind) = fail(&task(r#""wait": { "ref": "c", "lock": "m" }"#));
    assert_eq!(
        line,
        "w.json:4:29: key \"lock\": unknown key \"lock\" in a wait event (valid: ref, mutex)"
    );
    assert_eq!(kind, ErrorKind::UnknownKey);
    let (line, kind) = fail(&task(r#""mem": -4, "run": 5"#));
    assert_eq!(
        line,
        "w.json:4:14: key \"mem\": -4 must be greater than 0 (bytes)"
    );
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, kind) = fail(&task(r#""barrier": ["b"], "run": 5"#));
    assert_eq!(
        line,
        "w.json:4:18: key \"barrier\": expected a string, found an array"
    );
    assert_eq!(kind, ErrorKind::Invalid);
}

/// Two tasks: `t` with `body`, and `u`, which signals `c` and posts `s`.
fn pair(body: &str) -> String {
    format!("{{\n  \"tasks\": {{\n    \"t\": {{\n      {body}\n    }},\n    \"u\": {{ \"signal\": \"c\", \"sem_post\": \"s\", \"run\": 5 }}\n  }}\n}}\n")
}

#[test]
fn lock_misuse_would_deadlock() {
    let (line, kind) = fail(&pair(r#""lock": "m", "run": 5"#));
    assert_eq!(line, "w.json:4:7: key \"lock\": mutex \"m\" is never unlocked in phase \"t\" (its next iteration, or any other thread, would deadlock)");
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, _) = fail(&pair(r#""run": 5, "unlock1": "m""#));
    assert_eq!(line, "w.json:4:17: key \"unlock1\": mutex \"m\" is not held at this point of phase \"t\" (no lock before it)");
    let (line, _) = fail(&pair(r#""lock": "m", "lock2": "m", "unlock": "m""#));
    assert_eq!(line, "w.json:4:20: key \"lock2\": mutex \"m\" is already held here (a second lock would deadlock: rt-app's mutexes do not recurse)");
    // held across the end of a phase that repeats
    let (line, _) = fail(&pair(
        r#""phases": { "a": { "loop": 2, "lock": "m", "run": 5 }, "b": { "unlock": "m" } }"#,
    ));
    assert_eq!(line, "w.json:4:37: key \"lock\": mutex \"m\" is never unlocked in phase \"a\" (its next iteration, or any other thread, would deadlock)");
}

#[test]
fn waits_that_could_never_return() {
    let (line, kind) = fail(&pair(r#""wait": { "ref": "c", "mutex": "m" }"#));
    assert_eq!(line, "w.json:4:7: key \"wait\": mutex \"m\" must be locked before waiting on \"c\" (lock it earlier in the phase)");
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, _) = fail(&pair(
        r#""lock": "m", "wait": { "ref": "nobody", "mutex": "m" }, "unlock": "m""#,
    ));
    assert_eq!(line, "w.json:4:20: key \"wait\": no task signals, broadcasts or syncs \"nobody\": this wait would never return");
    let (line, _) = fail(&pair(r#""sem_wait": "other", "run": 5"#));
    assert_eq!(line, "w.json:4:7: key \"sem_wait\": no task posts semaphore \"other\": this wait would never return");
}

#[test]
fn well_formed_sync_loads_and_a_lost_suspend_only_warns() {
    let text = pair(
        r#""lock": "m", "wait": { "ref": "c", "mutex": "m" }, "unlock": "m", "sem_wait": "s", "resume": "nobody", "suspend": "", "run": 5"#,
    );
    let loaded = load_rtapp("w.json", &text, 4).expect("loads");
    // The resume of a thread that does not exist only warns too.
    assert_eq!(
        loaded.warnings[0],
        "w.json:4:90: warning: key \"resume\": no thread is named \"nobody\", so this resume wakes nobody (rt-app loses such a wake-up too)"
    );
    assert_eq!(
        loaded.warnings[1],
        "w.json:4:110: warning: key \"suspend\": no task resumes \"t\", so this suspend never returns (rt-app hangs here too)"
    );
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
}

/// The old workgen's bare `"suspend",` (video-*.json) is a suspend of the
/// thread itself, like `"suspend": <anything>`, with a warning that current
/// rt-app refuses the form.
#[test]
fn bare_suspend_is_a_suspend_of_the_thread_itself() {
    let text = pair(r#""suspend", "run": 5"#)
        .replace(r#""sem_post": "s""#, r#""resume": "t", "sem_post": "s""#);
    let bare = load_rtapp("w.json", &text, 4).expect("loads");
    assert!(
        bare.warnings.contains(&"w.json:4:7: warning: key \"suspend\": bare key read as a suspend of the thread itself (the old workgen's form; current rt-app rejects it: write \"suspend\" : \"\")".to_string()),
        "{:?}",
        bare.warnings
    );
    let named = load_rtapp(
        "w.json",
        &text.replace(r#""suspend","#, r#""suspend": "x","#),
        4,
    )
    .expect("loads");
    assert_eq!(bare.workload, named.workload);
    assert!(!named.warnings.iter().any(|w| w.contains("bare")));
}

#[test]
fn fork_cycles_through_templates_are_refused() {
    // a (start-up) forks b, b forks c, c forks b: the error is at c's fork.
    let text = "{\"tasks\": {\"a\": {\"loop\": 1, \"run\": 10, \"fork\": \"b\"},\n \"b\": {\"instance\": 0, \"loop\": 1, \"fork\": \"c\"},\n \"c\": {\"instance\": 0, \"loop\": 1, \"run\": 5, \"fork2\": \"b\"}}}";
    let (line, kind) = fail(text);
    assert_eq!(line, "w.json:3:44: key \"fork2\": task \"b\" is forked again by a thread it forks (b -> c -> b), so forks would nest without end: not supported yet (schedlab makes every forked thread at load time)");
    assert_eq!(kind, ErrorKind::Unsupported);
    // A nested fork of a task that does not exist, and a barrier two
    // levels down.
    let text = "{\"tasks\": {\"a\": {\"loop\": 1, \"run\": 10, \"fork\": \"b\"},\n \"b\": {\"instance\": 0, \"loop\": 1, \"fork\": \"zz\"}}}";
    let (line, kind) = fail(text);
    assert_eq!(
        line,
        "w.json:2:34: key \"fork\": there is no task \"zz\" to fork"
    );
    assert_eq!(kind, ErrorKind::Invalid);
    let text = "{\"tasks\": {\"a\": {\"loop\": 1, \"run\": 10, \"fork\": \"b\"},\n \"b\": {\"instance\": 0, \"loop\": 1, \"fork\": \"c\"},\n \"c\": {\"instance\": 0, \"run\": 5, \"barrier\": \"x\"}}}";
    let (line, _) = fail(text);
    assert_eq!(line, "w.json:3:33: key \"barrier\": task \"c\" is forked: barrier cannot be combined with fork (rt-app counts barrier participants at start-up)");
    // A cycle among templates that no thread runs is harmless.
    let text = "{\"tasks\": {\"a\": {\"run\": 10},\n \"b\": {\"instance\": 0, \"fork\": \"b\"}}}";
    load_rtapp("w.json", text, 4).expect("b is never forked");
}

#[test]
fn nested_forks_beyond_the_thread_cap() {
    // a forks b 1024 times (it loops for ever); each b forks c 1024 times:
    // a million threads. The cap is hit while making the pools of the
    // first forked b's fork.
    let text = "{\"tasks\": {\"a\": {\"run\": 10, \"fork\": \"b\"},\n \"b\": {\"instance\": 0, \"fork1\": \"c\", \"run\": 5},\n \"c\": {\"instance\": 0, \"loop\": 1, \"run\": 5}}}";
    let (line, kind) = fail(text);
    assert_eq!(line, "w.json:2:23: key \"fork1\": the 1024 threads this fork can create bring the file to more than 100000 threads (this fork is made by every forked thread \"b\"; nested forks multiply)");
    assert_eq!(kind, ErrorKind::Invalid);
}

#[test]
fn bad_memrun_events() {
    let memrun = |obj: &str| fail(&task(&format!(r#""run": 5, "memrun": {obj}"#)));
    // "memrun" is at 4:17, its object at 4:27.
    let cases: &[(&str, &str, ErrorKind)] = &[
        (
            r#"{ "count": 8 }"#,
            "4:27: key \"memrun\": memrun has no \"size\" (the buffer size in bytes is required)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64 }"#,
            "4:27: key \"memrun\": memrun has no \"count\" (bytes to touch, or hops for \"chase\", is required)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 0, "count": 8 }"#,
            "4:37: key \"memrun\": \"size\" 0 must be greater than 0 (bytes)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": -64, "count": 8 }"#,
            "4:37: key \"memrun\": \"size\" -64 must be greater than 0 (bytes)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64, "count": -1 }"#,
            "4:50: key \"memrun\": \"count\" -1 must not be negative",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64, "count": 8, "stride": 0 }"#,
            "4:63: key \"memrun\": \"stride\" 0 must be at least 1 (bytes)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64, "count": 8, "stride": 128 }"#,
            "4:63: key \"memrun\": \"stride\" 128 is larger than \"size\" 64 (the chain needs at least one link)",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "type": "copy", "size": 64, "count": 8 }"#,
            "4:37: key \"memrun\": unknown \"type\" \"copy\" (expected \"read\", \"write\" or \"chase\")",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "pattern": "strided", "size": 64, "count": 8 }"#,
            "4:40: key \"memrun\": unknown \"pattern\" \"strided\" (expected \"random\" or \"sequential\")",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64, "count": 8, "sise": 64 }"#,
            "4:53: key \"memrun\": unknown key \"sise\" in a memrun event (valid: type, size, count, stride, pattern, ref)",
            ErrorKind::UnknownKey,
        ),
        (
            r#"{ "size": "64", "count": 8 }"#,
            "4:37: key \"memrun\": \"size\" expected an int, found a string",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "size": 64, "count": 8, "ref": 3 }"#,
            "4:60: key \"memrun\": \"ref\" expected a string, found an int",
            ErrorKind::Invalid,
        ),
        (
            r#"{ "type": "chase", "size": 99999999999, "count": 9223372036854775807 }"#,
            "4:76: key \"memrun\": \"count\" 9223372036854775807 costs more CPU work than the simulator accepts",
            ErrorKind::Invalid,
        ),
        (
            "64",
            "4:27: key \"memrun\": expected an object, found an int",
            ErrorKind::Invalid,
        ),
    ];
    for (obj, want, want_kind) in cases {
        let (line, kind) = memrun(obj);
        assert_eq!(line, format!("w.json:{want}"), "{obj}");
        assert_eq!(kind, *want_kind, "{obj}");
    }
}

#[test]
fn shared_memrun_buffers_must_agree() {
    let two = |a: &str, b: &str| {
        format!("{{\"tasks\": {{\"t\": {{\"memrun\": {a}}},\n \"u\": {{\"run\": 5, \"memrun2\": {b}}}}}}}")
    };
    let base = r#"{"ref": "buf", "size": 4096, "count": 10}"#;
    let (line, kind) = fail(&two(base, r#"{"ref": "buf", "size": 8192, "count": 10}"#));
    assert_eq!(line, "w.json:2:18: key \"memrun2\": buffer \"buf\" is shared, but its users disagree: \"size\" 8192 here, 4096 in the memrun at 1:18 (every user of a \"ref\" must give the same size, stride and pattern)");
    assert_eq!(kind, ErrorKind::Invalid);
    let (line, _) = fail(&two(
        base,
        r#"{"ref": "buf", "size": 4096, "count": 10, "stride": 128}"#,
    ));
    assert!(
        line.contains("disagree: \"stride\" 128 here, 64 in the memrun at 1:18"),
        "{line}"
    );
    let (line, _) = fail(&two(
        base,
        r#"{"ref": "buf", "size": 4096, "count": 1, "type": "chase", "pattern": "sequential"}"#,
    ));
    assert!(
        line.contains(
            "disagree: \"pattern\" \"sequential\" here, \"random\" in the memrun at 1:18"
        ),
        "{line}"
    );
    // The type and the count may differ; other names are other buffers.
    let ok = two(
        base,
        r#"{"ref": "buf", "size": 4096, "count": 99, "type": "chase"}"#,
    );
    load_rtapp("w.json", &ok, 4).expect("same buffer, different use");
    let ok = two(base, r#"{"ref": "other", "size": 8, "count": 1}"#);
    load_rtapp("w.json", &ok, 4).expect("another buffer");
}

#[test]
fn a_task_that_loops_for_ever_without_taking_time() {
    let (line, kind) = fail(&task(r#""memrun": { "size": 64, "count": 0 }"#));
    assert_eq!(line, "w.json:3:5: key \"t\": every event of the task takes no time (a memrun with count 0, a mem of under 10 bytes, a run shorter than one calibrated loop, sleep 0) and it loops for ever, so simulated time would stop");
    assert_eq!(kind, ErrorKind::Invalid);
    // With an end, or with one event that takes time, it is fine.
    load_rtapp(
        "w.json",
        &task(r#""loop": 3, "memrun": { "size": 64, "count": 0 }"#),
        4,
    )
    .expect("ends");
    load_rtapp(
        "w.json",
        &task(r#""memrun": { "size": 64, "count": 1 }"#),
        4,
    )
    .expect("1 ns per loop");
}

#[test]
fn ftrace_of_the_wrong_type_is_one_line() {
    let (line, kind) = fail(r#"{"tasks": {"t": {"run": 10}}, "global": {"ftrace": 5}}"#);
    assert!(line.starts_with("w.json:1:"), "{line}");
    assert!(line.contains("\"ftrace\""), "{line}");
    assert!(
        line.contains("a string of categories or a boolean"),
        "{line}"
    );
    assert_ne!(kind, ErrorKind::Unsupported);
}
