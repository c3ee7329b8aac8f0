use schedlab_core::stats::SampleStats;
use schedlab_output::summary::{TaskSummary, WakeupLatencyUs};
use schedlab_output::table::*;

use crate::assert_text_eq;

#[test]
fn fmt_g_matches_c_printf() {
    // Values checked against printf("%g") by hand.
    let cases: &[(f64, &str)] = &[
        (0.0, "0"),
        (1.0, "1"),
        (5259563.0, "5.25956e+06"),
        (1116.680467, "1116.68"),
        (2315.0912, "2315.09"),
        (100000.0, "100000"),
        (999999.4, "999999"),
        (999999.6, "1e+06"),
        (1e6, "1e+06"),
        (0.0001, "0.0001"),
        (0.00001234, "1.234e-05"),
        (-3.5, "-3.5"),
        (1.5e300, "1.5e+300"),
        (123.0, "123"),
        (0.1, "0.1"),
    ];
    for &(x, want) in cases {
        assert_eq!(fmt_g(x, 6), want, "{x}");
    }
    assert_eq!(fmt_g(2.0 / 3.0, 3), "0.667");
}

#[test]
fn latency_line_matches_the_published_form() {
    // N 4710, sum 5259563 -> mean 1116.680467..., printed 1116.68.
    let s = SampleStats {
        n: 4710,
        min: 0,
        max: 67664,
        sum: 5_259_563,
        mean: 5_259_563.0 / 4710.0,
        stddev: 2315.0912,
    };
    assert_eq!(
        latency_line(&s),
        "N 4710 min 0 max 67664 sum 5.25956e+06 mean 1116.68 stddev 2315.09"
    );
    assert_eq!(
        latency_line(&SampleStats::default()),
        "N 0 min 0 max 0 sum 0 mean 0 stddev 0"
    );
}

#[test]
fn merged_stats_equal_stats_of_the_concatenated_samples() {
    let a = [63u64, 57, 58, 60, 0, 1200];
    let b = [5u64, 7];
    let c: [u64; 0] = [];
    let m = merge_sample_stats(&[SampleStats::of(a), SampleStats::of(c), SampleStats::of(b)]);
    let all = SampleStats::of(a.iter().chain(&b).copied());
    assert_eq!(
        (m.n, m.min, m.max, m.sum),
        (all.n, all.min, all.max, all.sum)
    );
    assert!((m.mean - all.mean).abs() < 1e-9);
    assert!((m.stddev - all.stddev).abs() < 1e-9);
}

fn task(name: &str, policy: &str, nice: i32, runtime_ns: u64, lat: &[u64]) -> TaskSummary {
    TaskSummary {
        name: name.into(),
        pid: 1000,
        policy: policy.into(),
        nice,
        group: "/".into(),
        runtime_ns,
        wait_ns: 1_234_567,
        switches: 1245,
        migrations: 3,
        wakeups: 1244,
        loops: 1245,
        wakeup_latency_us: WakeupLatencyUs::from_stats(&SampleStats::of(lat.iter().copied())),
        extra: Default::default(),
    }
}

#[test]
fn task_table_is_aligned() {
    let tasks = [
        task("cfs_thread-0", "SCHED_NORMAL", 0, 6_859_000_123, &[63, 57]),
        task("idle_thread-12", "SCHED_IDLE", 19, 12_000, &[]),
    ];
    let want = "\
task            policy        nice  runtime_ms  wait_ms  switches  migrations  wakeups  loops
cfs_thread-0    SCHED_NORMAL     0    6859.000    1.234      1245           3     1244   1245
idle_thread-12  SCHED_IDLE      19       0.012    1.234      1245           3     1244   1245
";
    assert_text_eq!(task_table(&tasks), want);
    let want = "\
wu_lat_us       N  min  max  sum   mean  stddev
cfs_thread-0    2   57   63  120  60.00    3.00
idle_thread-12  0    0    0    0   0.00    0.00
";
    assert_text_eq!(task_latency_table(&tasks), want);
}
