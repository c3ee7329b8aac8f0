//! schbench's own report (the `schbench:` generator, `schedlab-workload`
//! `schbench.rs`): its wakeup-latency, request-latency and RPS
//! percentile tables, average RPS and scheduling delays, computed from
//! the samples the simulated threads recorded (probes `wakeup` and
//! `request`) the way schbench computes them from its own clock reads:
//!
//! * a latency is the difference of two `gettimeofday` readings in µs
//!   (each truncated to the µs), kept only when above 0;
//! * samples go into fio's latency histogram as schbench keeps it (exact
//!   below 512 µs; above, 256 buckets per power of two, a bucket reported
//!   as its midpoint), and a percentile is the first bucket where the
//!   running count reaches p% of the samples; the "samples" of a row are
//!   the samples between the previous listed percentile (20th first) and
//!   this one;
//! * RPS: schbench's main thread reads the completed-request count at the
//!   start and then every second until the runtime is up; each reading
//!   adds (requests since the last reading) / (seconds since it) to the
//!   RPS histogram, the first one 0. The warmup (`-w`) reading resets
//!   every histogram instead of adding a sample;
//! * average RPS: every completed request (warmup included) over the run's
//!   length; sched delay: per thread, time waiting on a runqueue over the
//!   times it got a CPU (schbench reads `/proc/PID/schedstat`), averaged
//!   over message threads and over workers.
//!
//! The text is schbench's final report, byte for byte in layout.

use schedlab_core::observe::Sink;
use schedlab_core::program::Workload;
use schedlab_core::time::NSEC_PER_SEC;
use schedlab_core::{RunResult, Sim};
use serde_json::{json, Value};

const PLAT_BITS: u32 = 8;
const PLAT_VAL: u32 = 1 << PLAT_BITS;
const PLAT_NR: u32 = 19 * PLAT_VAL;
/// The percentiles schbench computes (it prints a subset per table).
const PLIST: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
/// Rows of the latency tables (indices into `PLIST`) and the starred one.
const LAT_ROWS: ([usize; 4], usize) = ([1, 2, 3, 4], 3);
/// Rows of the RPS table and the starred one.
const RPS_ROWS: ([usize; 3], usize) = ([0, 1, 2], 1);

fn val_to_idx(v: u32) -> u32 {
    let msb = if v == 0 { 0 } else { 31 - v.leading_zeros() };
    if msb <= PLAT_BITS {
        return v;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (v >> error_bits);
    (base + offset).min(PLAT_NR - 1)
}

fn idx_to_val(idx: u32) -> u32 {
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    (base as f64 + (k as f64 + 0.5) * (1u64 << error_bits) as f64) as u32
}

/// One of schbench's histograms (`struct stats`).
#[derive(Clone, Debug)]
pub struct Hist {
    plat: Vec<u64>,
    /// Samples.
    pub n: u64,
    /// Largest sample.
    pub max: u32,
    /// Smallest sample, as schbench keeps it (a 0 is replaced by the next).
    pub min: u32,
}

impl Default for Hist {
    fn default() -> Self {
        Hist {
            plat: vec![0; PLAT_NR as usize],
            n: 0,
            max: 0,
            min: 0,
        }
    }
}

impl Hist {
    /// `add_lat`.
    pub fn add(&mut self, v: u32) {
        if v > self.max {
            self.max = v;
        }
        if self.min == 0 || v < self.min {
            self.min = v;
        }
        self.plat[val_to_idx(v) as usize] += 1;
        self.n += 1;
    }

    /// Every percentile of `PLIST`: (value, samples since the previous).
    pub fn percentiles(&self) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = Vec::new();
        let mut sum = 0u64;
        let mut j = 0;
        'buckets: for (i, &c) in self.plat.iter().enumerate() {
            sum += c;
            while sum as f64 >= PLIST[j] / 100.0 * self.n as f64 {
                out.push((idx_to_val(i as u32), sum));
                if j == PLIST.len() - 1 {
                    break 'buckets;
                }
                j += 1;
            }
        }
        // Cumulative counts to counts since the previous percentile.
        let mut last = 0;
        for i in 1..out.len() {
            last += out[i - 1].1;
            out[i].1 -= last;
        }
        out
    }

    fn json(&self, rows: &[usize]) -> Value {
        let p = self.percentiles();
        let rows: Vec<Value> = rows
            .iter()
            .filter_map(|&i| {
                p.get(i)
                    .map(|&(v, c)| json!({"pct": PLIST[i], "value": v, "samples": c}))
            })
            .collect();
        json!({"samples": self.n, "percentiles": rows, "min": self.min, "max": self.max})
    }
}

fn us_between(start: u64, end: u64) -> u64 {
    (end / 1000).saturating_sub(start / 1000)
}

/// summary.json's `schbench` object, for a run of the `schbench:`
/// generator (`None` for other workloads).
pub fn report<S: Sink>(sim: &Sim<S>, res: &RunResult, w: &Workload) -> Option<Value> {
    if w.log_basename != "schbench" || w.probes.len() != 2 {
        return None;
    }
    let t0 = sim.t_start;
    let dur = res.end_ns - t0;
    let reset = w.probe_reset_ns.map(|r| t0 + r);
    let keep = |end: u64| reset.is_none_or(|r| end >= r);
    let (mut wake, mut req) = (Hist::default(), Hist::default());
    for (h, probe) in [(&mut wake, 0), (&mut req, 1)] {
        for &(s, e) in &sim.prog.probes[probe] {
            let us = us_between(s, e);
            if us > 0 && keep(e) {
                h.add(us.min(u32::MAX as u64) as u32);
            }
        }
    }
    // RPS readings at 0, 1, .., whole seconds of the run.
    let ends: Vec<u64> = sim.prog.probes[1].iter().map(|&(_, e)| e - t0).collect();
    let secs = dur / NSEC_PER_SEC;
    let warm_s = w.probe_reset_ns.map(|r| r / NSEC_PER_SEC);
    let mut rps = Hist::default();
    let (mut last_k, mut last_n) = (0u64, 0usize);
    for k in 0..=secs {
        let n = ends.partition_point(|&e| e <= k * NSEC_PER_SEC);
        if warm_s == Some(k) && k > 0 {
            rps = Hist::default();
            continue;
        }
        let per_s = if k == last_k {
            0.0
        } else {
            (n - last_n) as f64 / (k - last_k) as f64
        };
        rps.add(per_s as u32);
        (last_k, last_n) = (k, n);
    }
    let requests = ends.len() as u64;
    let avg = if dur > 0 {
        requests as f64 * NSEC_PER_SEC as f64 / dur as f64
    } else {
        0.0
    };
    let delay = |prefix: &str| {
        let v: Vec<u64> = sim
            .threads()
            .iter()
            .filter(|t| t.spec.name.starts_with(prefix))
            .map(|t| t.stats.wait_ns.checked_div(t.stats.switches).unwrap_or(0))
            .collect();
        (v.iter().sum::<u64>() / (v.len().max(1) as u64)) / 1000
    };
    Some(json!({
        "runtime_s": secs,
        "wakeup_latency_us": wake.json(&LAT_ROWS.0),
        "request_latency_us": req.json(&LAT_ROWS.0),
        "rps": rps.json(&RPS_ROWS.0),
        "average_rps": (avg * 100.0).round() / 100.0,
        "requests": requests,
        "sched_delay_us": {"message": delay("schbench-msg-"), "worker": delay("schbench-worker-")},
    }))
}

fn table(out: &mut String, label: &str, units: &str, runtime: u64, v: &Value, star: f64) {
    let n = v["samples"].as_u64().unwrap_or(0);
    out.push_str(&format!(
        "{label} percentiles ({units}) runtime {runtime} (s) ({n} total samples)\n"
    ));
    for r in v["percentiles"].as_array().into_iter().flatten() {
        let pct = r["pct"].as_f64().unwrap_or(0.0);
        let mark = if pct == star { "* " } else { "  " };
        out.push_str(&format!(
            "\t{mark}{pct:.1}th: {:<10} ({} samples)\n",
            r["value"].as_u64().unwrap_or(0),
            r["samples"].as_u64().unwrap_or(0)
        ));
    }
    out.push_str(&format!(
        "\t  min={}, max={}\n",
        v["min"].as_u64().unwrap_or(0),
        v["max"].as_u64().unwrap_or(0)
    ));
}

/// schbench's final report from summary.json's `schbench` object.
pub fn text(v: &Value) -> String {
    let rt = v["runtime_s"].as_u64().unwrap_or(0);
    let mut out = String::new();
    let star_lat = PLIST[LAT_ROWS.1];
    table(
        &mut out,
        "Wakeup Latencies",
        "usec",
        rt,
        &v["wakeup_latency_us"],
        star_lat,
    );
    table(
        &mut out,
        "Request Latencies",
        "usec",
        rt,
        &v["request_latency_us"],
        star_lat,
    );
    table(
        &mut out,
        "RPS",
        "requests",
        rt,
        &v["rps"],
        PLIST[RPS_ROWS.1],
    );
    out.push_str(&format!(
        "average rps: {:.2}\n",
        v["average_rps"].as_f64().unwrap_or(0.0)
    ));
    out.push_str(&format!(
        "sched delay: message {} (usec) worker {} (usec)\n",
        v["sched_delay_us"]["message"].as_u64().unwrap_or(0),
        v["sched_delay_us"]["worker"].as_u64().unwrap_or(0)
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets() {
        // Exact below 512; above, 8 significant bits, midpoint reported.
        assert_eq!(idx_to_val(val_to_idx(7)), 7);
        assert_eq!(idx_to_val(val_to_idx(511)), 511);
        assert_eq!(val_to_idx(512), 512);
        assert_eq!(idx_to_val(val_to_idx(512)), 513);
        // 17000 µs: msb 14, 6 error bits, buckets of 64 µs.
        let v = idx_to_val(val_to_idx(17_000));
        assert!((16_960..17_024).contains(&v), "{v}");
        assert_eq!(v % 64, 32);
    }

    #[test]
    fn percentiles_and_row_counts() {
        let mut h = Hist::default();
        for v in 1..=1000u32 {
            h.add(v.min(400));
        }
        let p = h.percentiles();
        assert_eq!(p.len(), 5);
        assert_eq!(p[0], (200, 200));
        assert_eq!(
            p[1],
            (400, 800),
            "50th lands in the bucket of 400 (601 samples)"
        );
        // 90th, 99th, 99.9th in the same bucket: no samples of their own.
        assert_eq!((p[2].1, p[3].1, p[4].1), (0, 0, 0));
        assert_eq!((h.min, h.max, h.n), (1, 400, 1000));
        // Empty: every percentile 0, as schbench prints it.
        let e = Hist::default().percentiles();
        assert!(e.iter().all(|&(v, c)| v == 0 && c == 0) && e.len() == 5);
    }

    #[test]
    fn zero_min_is_replaced() {
        let mut h = Hist::default();
        h.add(0);
        h.add(30);
        h.add(20);
        assert_eq!((h.min, h.max), (20, 30));
    }

    #[test]
    fn text_layout() {
        let mut h = Hist::default();
        for v in [5u32, 7, 9, 11] {
            h.add(v);
        }
        let v = json!({"runtime_s": 2, "wakeup_latency_us": h.json(&LAT_ROWS.0),
            "request_latency_us": h.json(&LAT_ROWS.0), "rps": h.json(&RPS_ROWS.0),
            "average_rps": 12.5, "sched_delay_us": {"message": 1, "worker": 2}});
        let t = text(&v);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "Wakeup Latencies percentiles (usec) runtime 2 (s) (4 total samples)"
        );
        assert_eq!(lines[1], "\t  50.0th: 7          (1 samples)");
        assert_eq!(lines[2], "\t  90.0th: 11         (2 samples)");
        assert_eq!(lines[3], "\t* 99.0th: 11         (0 samples)");
        assert_eq!(lines[5], "\t  min=5, max=11");
        assert_eq!(
            lines[12],
            "RPS percentiles (requests) runtime 2 (s) (4 total samples)"
        );
        assert_eq!(lines[13], "\t  20.0th: 5          (1 samples)");
        assert_eq!(lines[14], "\t* 50.0th: 7          (1 samples)");
        assert_eq!(lines[17], "average rps: 12.50");
        assert_eq!(lines[18], "sched delay: message 1 (usec) worker 2 (usec)");
    }
}
