//! `--max-output` on the bytes really written, counted while the run goes:
//! iterations that take no simulated time (the preflight estimate assumes
//! some) and `--trace` output stop at the limit with one line naming it,
//! exit 2, and leave nothing (no DIR, no stage beside it).

use crate::common::{describe, outputs, schedlab_in};
use std::path::Path;

fn assert_stopped_at_limit(p: &Path, args: &[&str], what: &str) {
    let o = schedlab_in(p, args);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "schedlab: error: {what}: the run reached the --max-output limit of 1.0 MiB"
        )),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(outputs(p), Vec::<String>::new(), "{err}");
}

#[test]
fn zero_time_iterations_stop_at_the_output_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    std::fs::write(
        p.join("z.json"),
        r#"{"tasks": {"t": {"loop": -1, "lock": "m", "unlock": "m"}}, "global": {"calibration": 100}}"#,
    )
    .unwrap();
    // The estimate (10 us an iteration) lets 50 ms through under 1M; the
    // iterations take no time and write far more.
    assert_stopped_at_limit(
        p,
        &[
            "run",
            "z.json",
            "--duration",
            "50ms",
            "--out",
            "D",
            "--max-output",
            "1M",
        ],
        "z.json",
    );
    // Above the real size the same run writes its logs.
    let o = schedlab_in(
        p,
        ["run", "z.json", "--duration", "1ms", "--out", "D", "-q"],
    );
    assert!(o.status.success(), "{}", describe(&o));
    assert_eq!(outputs(p), ["D"]);
}

#[test]
fn trace_output_stops_at_the_output_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path();
    let w = "hackbench:groups=8,loops=20000";
    assert_stopped_at_limit(
        p,
        &[
            "run",
            w,
            "--trace",
            "--out",
            "D",
            "--max-output",
            "1M",
            "-q",
        ],
        w,
    );
}
