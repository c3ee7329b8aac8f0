//! rt-app `memrun`: CPU work whose amount comes from the cost model of
//! `schedlab_workload::rtapp::memcost` (guessed per-byte and per-hop costs
//! by the cache level the buffer fits in). Like `mem`, it is not a `run`
//! event for rt-app's log: no perf, run or c_duration.

use crate::common::{run_json, summary_program_ns};
use serde_json::Value;

fn summary(out: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn task<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name} in {s}"))
}

#[test]
fn memrun_runtime_follows_the_cost_model() {
    // chase: 64 MiB does not fit the 32 MiB LLC, random order: 90 ns a
    // hop, 100000 hops = 9 ms. seq: the same chain in address order,
    // 1.5 + (90 - 1.5) / 8 = 12.5625 ns a hop, 80000 hops = 1.005 ms.
    // rw: a 4 KiB buffer (L1) shared by two events, 10^6 byte reads at
    // 0.1 ns and 10^6 byte writes at 0.15 ns, plus run 1000 µs, twice:
    // 2 x (100 + 150 + 1000) µs = 2.5 ms. Each thread has a CPU to itself
    // on a7-octa, so its runtime is exactly its work.
    let (_tmp, out) = run_json(
        r#"{"tasks": {
            "chase": {"loop": 1, "memrun": {"type": "chase", "size": 67108864, "count": 100000}},
            "seq": {"loop": 1, "memrun": {"type": "chase", "size": 67108864, "count": 80000,
                                          "pattern": "sequential", "stride": 4096}},
            "rw": {"loop": 2,
                   "memrun": {"type": "read", "size": 4096, "count": 1000000, "ref": "b"},
                   "memrun2": {"type": "write", "size": 4096, "count": 1000000, "ref": "b"},
                   "run": 1000, "sleep": 1000}
        }, "global": {"calibration": 100}}"#,
        "a7-octa",
        &["--check"],
    );
    let s = summary(&out);
    // Program time (runtime_ns also holds the scheduler work).
    let runtime = |name: &str| summary_program_ns(task(&s, name));
    assert_eq!(runtime("chase-0"), 9_000_000);
    assert_eq!(runtime("seq-1"), 1_005_000);
    assert_eq!(runtime("rw-2"), 2_500_000);
    assert_eq!(task(&s, "rw-2")["loops"], 2);
    // The log counts only the run event: perf 10 (1000 µs / 100 ns), run
    // 1000 µs, c_duration 1000 µs; the iteration's period includes the
    // memrun work (250 µs) and the sleep.
    let log = std::fs::read_to_string(out.join("rt-app-rw-2.log")).unwrap();
    let rows: Vec<Vec<i64>> = log
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{log}");
    for r in &rows {
        assert_eq!((r[1], r[2], r[8]), (10, 1000, 1000), "{log}");
        assert!(r[3] >= 2250, "{log}");
    }
    let chase_log = std::fs::read_to_string(out.join("rt-app-chase-0.log")).unwrap();
    let row: Vec<i64> = chase_log
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!((row[1], row[2], row[8]), (0, 0, 0), "{chase_log}");
    assert!(row[3] >= 9000, "{chase_log}");
}
