//! Runs without a duration (neither `--duration` nor `global.duration`)
//! are held to the duration limit (`--max-duration`, default one day):
//! one whose threads need longer by their own loops is refused before it
//! starts, with one line saying to pass --duration; one that goes past
//! the limit anyway (threads waiting on one another) is stopped there.
//! Exit 2, nothing written, no stage left.

use crate::common::{describe, outputs, schedlab_in};
use std::path::Path;

fn one_line_error(p: &Path, args: &[&str]) -> String {
    let o = schedlab_in(p, args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(outputs(p), Vec::<String>::new(), "{err}");
    err.trim_end().to_string()
}

#[test]
fn runs_without_a_duration_longer_than_the_limit_are_refused_before_they_start() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    let cases = [
        // A 2-day run.
        (
            r#"{"tasks": {"t": {"loop": 1, "run": 172800000000}}, "global": {"calibration": 100}}"#,
            "without a duration the run lasts at least 172800 s (2 days) of simulated time (thread 't-0') and cannot end within the 86400 s (1 day) limit: pass --duration, or --max-duration to raise the limit",
        ),
        // The largest `run` the reader takes.
        (
            r#"{"tasks": {"t": {"loop": 1, "run": 9223372036854775}}, "global": {"calibration": 100}}"#,
            "without a duration the run lasts at least 9223372036.854775 s (106751.99 days) of simulated time (thread 't-0') and cannot end within the 86400 s (1 day) limit: pass --duration, or --max-duration to raise the limit",
        ),
        // The largest loop count, 1 ms each (the figure stops at 2^64 ns).
        (
            r#"{"tasks": {"t": {"loop": 9223372036854775807, "run": 1000}}, "global": {"calibration": 100}}"#,
            "without a duration the run lasts at least 18446744073.709551615 s (213503.98 days) of simulated time (thread 't-0') and cannot end within the 86400 s (1 day) limit: pass --duration, or --max-duration to raise the limit",
        ),
        // Timers count too: a day of 1 s periods, the limit exactly (the
        // start-up takes time too, so it cannot end within it).
        (
            r#"{"tasks": {"t": {"loop": 86400, "run": 10, "timer": {"ref": "tick", "period": 1000000}}}, "global": {"calibration": 100}}"#,
            "without a duration the run lasts at least 86400 s (1 day) of simulated time (thread 't-0') and cannot end within the 86400 s (1 day) limit: pass --duration, or --max-duration to raise the limit",
        ),
        // Four threads of 14 h each share 2 CPUs: 28 h.
        (
            r#"{"tasks": {"t": {"instance": 4, "loop": 1, "run": 50400000000}}, "global": {"calibration": 100}}"#,
            "without a duration the run lasts at least 100800 s (1.17 days) of simulated time (the threads' CPU work over 2 CPU(s)) and cannot end within the 86400 s (1 day) limit: pass --duration, or --max-duration to raise the limit",
        ),
    ];
    for (json, msg) in cases {
        std::fs::write(p.join("w.json"), json).unwrap();
        let err = one_line_error(p, &["run", "w.json", "--out", "D"]);
        assert_eq!(err, format!("schedlab: error: w.json: {msg}"));
        // compare runs the same workload and is held the same way.
        let err = one_line_error(
            p,
            &["compare", "w.json", "--new", "NO_PLACE_LAG", "--runs", "1"],
        );
        assert_eq!(err, format!("schedlab: error: w.json: {msg}"));
    }
    // The limit is --max-duration's: 2 s refuses 3 s of run; a duration
    // bounds the run, so the same file runs with one.
    std::fs::write(
        p.join("w.json"),
        r#"{"tasks": {"t": {"loop": 1, "run": 3000000}}, "global": {"calibration": 100}}"#,
    )
    .unwrap();
    let err = one_line_error(p, &["run", "w.json", "--max-duration", "2s"]);
    assert!(err.ends_with("at least 3 s of simulated time (thread 't-0') and cannot end within the 2 s limit: pass --duration, or --max-duration to raise the limit"), "{err}");
    let o = schedlab_in(
        p,
        [
            "run",
            "w.json",
            "--max-duration",
            "2s",
            "--duration",
            "1s",
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    let o = schedlab_in(p, ["run", "w.json", "-q"]);
    assert!(o.status.success(), "{}", describe(&o));
}

#[test]
fn a_run_without_a_duration_that_goes_past_the_limit_is_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    // Two threads take turns on one mutex: each needs 100 s by itself,
    // 200 s together, which no bound before the run sees.
    std::fs::write(
        p.join("w.json"),
        r#"{"tasks": {"t": {"instance": 2, "loop": 100000, "lock": "m", "run": 1000, "unlock": "m"}}, "global": {"calibration": 100}}"#,
    )
    .unwrap();
    let msg = "schedlab: error: w.json: without a duration the run went past the 150 s limit of simulated time; nothing was written: pass --duration, or --max-duration to raise the limit";
    let err = one_line_error(
        p,
        &["run", "w.json", "--max-duration", "150s", "--out", "D"],
    );
    assert_eq!(err, msg);
    let err = one_line_error(
        p,
        &[
            "compare",
            "w.json",
            "--new",
            "NO_PLACE_LAG",
            "--runs",
            "1",
            "--max-duration",
            "150s",
        ],
    );
    assert_eq!(err, msg);
    // Short of the limit it runs to its end. (Fewer loops: 2 x 2 s.)
    std::fs::write(
        p.join("w.json"),
        r#"{"tasks": {"t": {"instance": 2, "loop": 2000, "lock": "m", "run": 1000, "unlock": "m"}}, "global": {"calibration": 100}}"#,
    )
    .unwrap();
    let err = one_line_error(p, &["run", "w.json", "--max-duration", "3s", "--out", "D"]);
    assert_eq!(err, msg.replace("150 s", "3 s"));
    let o = schedlab_in(
        p,
        ["run", "w.json", "--max-duration", "5s", "--out", "D", "-q"],
    );
    assert!(o.status.success(), "{}", describe(&o));
    assert_eq!(outputs(p), ["D"]);
}
