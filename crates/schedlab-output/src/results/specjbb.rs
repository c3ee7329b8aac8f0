//! What an engineer reads from SPECjbb2015, for a run of the `specjbb:`
//! generator (`schedlab-workload` `specjbb.rs`), from the samples the
//! simulated injectors and VM thread recorded:
//!
//! * **jOPS**: completed transactions (responses the injectors received)
//!   per simulated second: what SPECjbb counts at one injection-rate step
//!   (max-jOPS is the highest rate a backend sustains; one run of the
//!   generator is one step, not the search);
//! * **response time** percentiles p50, p90, p99, p99.9 and the maximum,
//!   in µs, nearest-rank over every transaction answered in the
//!   measurement (after `warmup_us`), each as its injector measured it:
//!   from the clock read before posting the request to the clock read
//!   once its own reply woke it (replies are addressed, see the
//!   generator's docs) (SPECjbb's critical-jOPS uses
//!   the 99th percentile against SLAs of 10, 25, 50, 75 and 100 ms: the
//!   share of responses within each is listed too);
//! * **GC**: pauses, their length and time to safepoint (mean and max),
//!   and the share of the run spent in pauses.
//!
//! summary.json's `throughput_per_s` is the jOPS for this workload.

use schedlab_core::observe::Sink;
use schedlab_core::program::Workload;
use schedlab_core::{RunResult, Sim};
use serde_json::{json, Value};

/// The percentiles reported, in tenths of a percent.
const PCTS: [(&str, u64); 4] = [("p50", 500), ("p90", 900), ("p99", 990), ("p99.9", 999)];
/// SPECjbb2015's critical-jOPS response-time SLAs, ms.
const SLAS_MS: [u64; 5] = [10, 25, 50, 75, 100];

/// Nearest-rank percentile of sorted `v`, `p` in tenths of a percent
/// (0 when empty): the ⌈p·n/1000⌉-th smallest, in integers.
fn pct(v: &[u64], p: u64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (p as u128 * v.len() as u128).div_ceil(1000) as usize;
    v[rank.clamp(1, v.len()) - 1]
}

fn us(ns: u64) -> f64 {
    (ns as f64 / 100.0).round() / 10.0
}

fn mean_max(v: &[u64]) -> Value {
    let mean = if v.is_empty() {
        0
    } else {
        v.iter().sum::<u64>() / v.len() as u64
    };
    json!({"n": v.len(), "mean": us(mean), "max": us(v.iter().copied().max().unwrap_or(0))})
}

/// summary.json's `specjbb` object (`None` for other workloads).
pub fn report<S: Sink>(sim: &Sim<S>, res: &RunResult, w: &Workload) -> Option<Value> {
    if w.log_basename != "specjbb" || w.probes.len() != 3 {
        return None;
    }
    let from = sim.t_start + w.probe_reset_ns.unwrap_or(0);
    let dur = res.end_ns.saturating_sub(from);
    let lat = |probe: usize| -> Vec<u64> {
        let mut v: Vec<u64> = sim.prog.probes[probe]
            .iter()
            .filter(|&&(_, e)| e >= from)
            .map(|&(s, e)| e - s)
            .collect();
        v.sort_unstable();
        v
    };
    let (resp, ttsp, pause) = (lat(0), lat(1), lat(2));
    let n = resp.len() as u64;
    let jops = if dur > 0 {
        n as f64 * 1e9 / dur as f64
    } else {
        0.0
    };
    let mut pcts = serde_json::Map::new();
    for (k, p) in PCTS {
        pcts.insert(k.into(), json!(us(pct(&resp, p))));
    }
    pcts.insert("max".into(), json!(us(resp.last().copied().unwrap_or(0))));
    let mut sla = serde_json::Map::new();
    for ms in SLAS_MS {
        let within = resp.partition_point(|&x| x <= ms * 1_000_000);
        let share = if n == 0 {
            0.0
        } else {
            (10_000.0 * within as f64 / n as f64).round() / 100.0
        };
        sla.insert(format!("{ms}ms"), json!(share));
    }
    let paused: u64 = pause.iter().sum();
    let gc_pct = if dur > 0 {
        (10_000.0 * paused as f64 / dur as f64).round() / 100.0
    } else {
        0.0
    };
    Some(json!({
        "jops": (jops * 100.0).round() / 100.0,
        "transactions": n,
        "measured_s": dur as f64 / 1e9,
        "response_us": Value::Object(pcts),
        "sla_within_pct": Value::Object(sla),
        "gc": {"pauses": pause.len(), "pause_us": mean_max(&pause), "ttsp_us": mean_max(&ttsp), "time_pct": gc_pct},
    }))
}

/// The short table printed after a run.
pub fn text(v: &Value) -> String {
    let f = |x: &Value| x.as_f64().unwrap_or(0.0);
    let r = &v["response_us"];
    let mut out = format!(
        "specjbb: {:.2} jOPS ({} transactions completed; summary.json specjbb, throughput_per_s)\n",
        f(&v["jops"]),
        v["transactions"].as_u64().unwrap_or(0)
    );
    out.push_str(&format!(
        "{:<18}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
        "response (us)", "p50", "p90", "p99", "p99.9", "max"
    ));
    out.push_str(&format!(
        "{:<18}{:>10.1}{:>10.1}{:>10.1}{:>10.1}{:>10.1}\n",
        "",
        f(&r["p50"]),
        f(&r["p90"]),
        f(&r["p99"]),
        f(&r["p99.9"]),
        f(&r["max"])
    ));
    let sla: Vec<String> = SLAS_MS
        .iter()
        .map(|ms| format!("{ms} ms {:.2}%", f(&v["sla_within_pct"][format!("{ms}ms")])))
        .collect();
    out.push_str(&format!("responses within: {}\n", sla.join(", ")));
    let g = &v["gc"];
    out.push_str(&format!(
        "GC: {} pauses, {:.2}% of the run; pause mean {:.1} us, max {:.1} us; time to safepoint mean {:.1} us, max {:.1} us\n",
        g["pauses"].as_u64().unwrap_or(0),
        f(&g["time_pct"]),
        f(&g["pause_us"]["mean"]),
        f(&g["pause_us"]["max"]),
        f(&g["ttsp_us"]["mean"]),
        f(&g["ttsp_us"]["max"])
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(pct(&v, 500), 500);
        assert_eq!(pct(&v, 990), 990);
        assert_eq!(pct(&v, 999), 999);
        assert_eq!(pct(&v, 1000), 1000);
        let w: Vec<u64> = (1..=1001).collect();
        assert_eq!(pct(&w, 500), 501);
        assert_eq!(pct(&[7], 999), 7);
        assert_eq!(pct(&[], 500), 0);
        assert_eq!(us(1_234_567), 1234.6);
    }

    #[test]
    fn text_layout() {
        let v = json!({"jops": 1234.5, "transactions": 617,
            "response_us": {"p50": 10.0, "p90": 20.5, "p99": 30.0, "p99.9": 40.0, "max": 50.0},
            "sla_within_pct": {"10ms": 100.0, "25ms": 100.0, "50ms": 100.0, "75ms": 100.0, "100ms": 100.0},
            "gc": {"pauses": 2, "time_pct": 1.5, "pause_us": {"n": 2, "mean": 100.0, "max": 120.0},
                   "ttsp_us": {"n": 2, "mean": 5.0, "max": 6.0}}});
        let t = text(&v);
        let l: Vec<&str> = t.lines().collect();
        assert_eq!(l[0], "specjbb: 1234.50 jOPS (617 transactions completed; summary.json specjbb, throughput_per_s)");
        assert_eq!(
            l[1],
            "response (us)            p50       p90       p99     p99.9       max"
        );
        assert_eq!(
            l[2],
            "                        10.0      20.5      30.0      40.0      50.0"
        );
        assert!(l[3].starts_with("responses within: 10 ms 100.00%, 25 ms"));
        assert!(l[4].starts_with("GC: 2 pauses, 1.50% of the run; pause mean 100.0 us"));
    }
}
