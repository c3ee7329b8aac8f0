//! `--counters-every`: counters.csv samples the run without changing it;
//! its CPU times add up to the CPUs' elapsed time at every row; its last
//! row agrees with summary.json; bad periods are refused.

use crate::common::{assert_success, list_files, schedlab};
use serde_json::Value;
use std::path::Path;

const WORKLOAD: &str = "hackbench:groups=4,loops=300";

fn run_into(out: &Path, extra: &[&str]) {
    let mut args: Vec<String> = [
        "run",
        WORKLOAD,
        "--machine",
        "icx-2s-80c-ht",
        "--seed",
        "3",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(out.to_string_lossy().into_owned());
    args.extend(extra.iter().map(|s| s.to_string()));
    assert_success(&schedlab(&args));
}

fn rows(dir: &Path) -> Vec<Vec<u64>> {
    let text = std::fs::read_to_string(dir.join("counters.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "time_ns,switches,involuntary_switches,migrations,helper_switches,sched_goidle,busy_ns,idle_ns,sched_overhead_ns"
    );
    lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect()
}

#[test]
fn sampling_leaves_every_other_output_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    run_into(&a, &["--counters-every", "100us", "--trace"]);
    run_into(&b, &["--trace"]);
    let mut fa = list_files(&a);
    let fb = list_files(&b);
    let at = fa
        .iter()
        .position(|f| f == Path::new("counters.csv"))
        .unwrap();
    fa.remove(at);
    assert_eq!(fa, fb);
    for f in &fb {
        assert!(
            std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(),
            "{} differs with --counters-every",
            f.display()
        );
    }
}

#[test]
fn rows_are_periodic_monotone_and_add_up_to_the_cpus_time() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("r");
    run_into(&d, &["--counters-every", "250us"]);
    let r = rows(&d);
    assert!(r.len() > 10, "{} rows", r.len());
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("summary.json")).unwrap()).unwrap();
    let ncpu = s["cpus"].as_array().unwrap().len() as u64;
    for (i, row) in r.iter().enumerate() {
        assert_eq!(row[0], 250_000 * i as u64, "row {i}: time");
        // busy + idle + scheduler time = every CPU's elapsed time.
        assert_eq!(row[6] + row[7] + row[8], ncpu * row[0], "row {i}");
        if i > 0 {
            for c in 1..9 {
                assert!(row[c] >= r[i - 1][c], "row {i}, column {c} went down");
            }
        }
    }
    // The last sample is before the end; the run's totals are at least it.
    let last = r.last().unwrap();
    let tasks = s["tasks"].as_array().unwrap();
    let sum = |k: &str| tasks.iter().map(|t| t[k].as_u64().unwrap()).sum::<u64>();
    assert!(last[1] <= sum("switches") && last[1] > 0);
    assert!(last[2] <= sum("involuntary_switches"));
    assert!(last[3] <= sum("migrations"));
    let goidle: u64 = s["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sched_goidle"].as_u64().unwrap())
        .sum();
    assert!(last[5] <= goidle);
}

#[test]
fn bad_periods_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    for (extra, what) in [
        (vec!["--counters-every", "1us"], "below the shortest period"),
        (vec!["--counters-every", "soon"], "--counters-every:"),
        (vec!["--counters-every", "-1ms"], "--counters-every:"),
    ] {
        let out = tmp.path().join("x");
        let mut args = vec!["run", WORKLOAD, "--out", out.to_str().unwrap()];
        args.extend(extra.iter().copied());
        let o = schedlab(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(what), "{err}");
        assert!(!out.exists());
    }
    let o = schedlab(["run", WORKLOAD, "--counters-every", "1ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("needs --out DIR"));
}
