//! Measures this host's noise, the parameters of the simulator's noise
//! model (`schedlab_core::sched::noise`), before a recording:
//!
//! * **Interrupts and kernel activity** (osnoise's method): one thread per
//!   CPU, pinned, at SCHED_FIFO 99 (so no ordinary task can take the CPU
//!   from it), reads CLOCK_MONOTONIC in a tight loop for `spin_ns`; every
//!   gap between two readings longer than [`GAP_NS`] is time the CPU did
//!   something else: an interrupt, a softirq, a kernel thread of higher
//!   priority, or (in a VM) the host running something else on the vCPU's
//!   physical CPU. Gaps of at least [`STEAL_MIN_NS`] are counted as host
//!   preemption (steal): a guest's interrupt handlers take microseconds,
//!   a host scheduling the vCPU out takes at least one of its own slices.
//! * **Timer expiry**: the same threads then sleep to 1 ms absolute
//!   deadlines (`clock_nanosleep(TIMER_ABSTIME)`, timer slack 1 ns) and
//!   note how late they woke (its distribution, as quantiles; the model
//!   subtracts the wake-up and switch costs it charges itself).
//! * **Steal share**: `/proc/stat`'s steal column over the measurement.
//!
//! The result is `noise.json` in the recording (format in
//! [`NoiseMeasurement::to_json`]); `schedlab validate` feeds it to the
//! model. Every figure is a measurement of this host at that moment.

use crate::sys;
pub use schedlab_core::noise::NoiseParams;
use serde_json::{json, Value};

/// A reading gap longer than this is noise (the loop itself takes < 100 ns).
pub const GAP_NS: u64 = 1_000;
/// A gap this long or longer is host preemption (steal), not an interrupt.
pub const STEAL_MIN_NS: u64 = 100_000;
/// Longest uninterrupted spin (below RT throttling's 950 ms per second).
pub const SPIN_BLOCK_NS: u64 = 200_000_000;
/// Quantiles kept of each distribution: 0, 5, ..., 100 %.
pub const QUANTILES: usize = 21;

/// What one measurement found, all CPUs pooled.
#[derive(Clone, Debug, Default)]
pub struct NoiseMeasurement {
    /// CPUs measured.
    pub cpus: Vec<u32>,
    /// Spin time per CPU (ns).
    pub spin_ns: u64,
    /// Interrupt-like gaps (GAP_NS..STEAL_MIN_NS), ns.
    pub irq_gaps: Vec<u64>,
    /// Steal-like gaps (>= STEAL_MIN_NS), ns.
    pub steal_gaps: Vec<u64>,
    /// Timer lateness samples (ns).
    pub timer_late: Vec<u64>,
    /// Whether the threads got SCHED_FIFO 99.
    pub fifo: bool,
    /// /proc/stat steal share over the measurement (all CPUs).
    pub steal_share: Option<f64>,
}

fn steal_ticks() -> Option<(u64, u64)> {
    let t = std::fs::read_to_string("/proc/stat").ok()?;
    let l = t.lines().next()?;
    let v: Vec<u64> = l
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 8 {
        return None;
    }
    Some((v[7], v.iter().take(8).sum()))
}

/// Quantiles 0, 5, ..., 100 % (nearest rank) of `v`; empty when `v` is.
pub fn quantiles(v: &[u64]) -> Vec<u64> {
    if v.is_empty() {
        return Vec::new();
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    (0..QUANTILES)
        .map(|i| {
            let p = i as f64 / (QUANTILES - 1) as f64;
            let r = (p * s.len() as f64).ceil() as usize;
            s[r.clamp(1, s.len()) - 1]
        })
        .collect()
}

fn per_cpu(cpu: u32, spin_ns: u64, timer_n: usize) -> (Vec<u64>, Vec<u64>, bool) {
    let tid = sys::gettid();
    let _ = sys::set_affinity(tid, &[cpu]);
    // SAFETY: a sched_param for the calling thread.
    let fifo = unsafe {
        let p = libc::sched_param { sched_priority: 99 };
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    };
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    // Spin in blocks of at most SPIN_BLOCK_NS with a short sleep between:
    // RT throttling (sched_rt_runtime_us, 950 ms per 1 s) would otherwise
    // stop a SCHED_FIFO spinner for 50 ms a second and look like steal.
    let mut gaps = Vec::new();
    let mut left = spin_ns;
    while left > 0 {
        let block = left.min(SPIN_BLOCK_NS);
        let start = sys::now_ns();
        let mut prev = start;
        while prev - start < block {
            let t = sys::now_ns();
            if t - prev > GAP_NS {
                gaps.push(t - prev);
            }
            prev = t;
        }
        left -= block;
        if left > 0 {
            sys::sleep_for(50_000_000);
        }
    }
    let mut late = Vec::with_capacity(timer_n);
    let mut next = sys::now_ns() + 1_000_000;
    for _ in 0..timer_n {
        sys::sleep_until(next);
        let t = sys::now_ns();
        late.push(t.saturating_sub(next));
        next += 1_000_000;
        if next < t {
            next = t + 1_000_000;
        }
    }
    (gaps, late, fifo)
}

/// Measures every online CPU at once: `spin_ns` of spinning, then
/// `timer_n` 1 ms timer waits each.
pub fn measure(spin_ns: u64, timer_n: usize) -> NoiseMeasurement {
    let cpus = sys::online_cpus();
    let s0 = steal_ticks();
    let hs: Vec<_> = cpus
        .iter()
        .map(|&c| std::thread::spawn(move || per_cpu(c, spin_ns, timer_n)))
        .collect();
    let mut m = NoiseMeasurement {
        cpus: cpus.clone(),
        spin_ns,
        fifo: true,
        ..Default::default()
    };
    for h in hs {
        if let Ok((gaps, late, fifo)) = h.join() {
            for g in gaps {
                if g >= STEAL_MIN_NS {
                    m.steal_gaps.push(g);
                } else {
                    m.irq_gaps.push(g);
                }
            }
            m.timer_late.extend(late);
            m.fifo &= fifo;
        }
    }
    if let (Some(a), Some(b)) = (s0, steal_ticks()) {
        if b.1 > a.1 {
            m.steal_share = Some((b.0 - a.0) as f64 / (b.1 - a.1) as f64);
        }
    }
    m
}

impl NoiseMeasurement {
    /// The model's parameters (`schedlab_core::noise::NoiseParams`
    /// as JSON) and the raw figures behind them.
    ///
    /// ```text
    /// irq_interval_ns    = spin time of all CPUs / interrupt-like gaps
    /// irq_len_q_ns       = quantiles of their lengths
    /// steal_interval_ns  = spin time of all CPUs / steal-like gaps (0: none seen)
    /// steal_len_q_ns     = quantiles of their lengths
    /// timer_late_q_ns    = quantiles of the timer lateness
    /// ```
    pub fn to_json(&self) -> Value {
        let total = self.spin_ns * self.cpus.len() as u64;
        let interval = |n: usize| if n == 0 { 0 } else { total / n as u64 };
        let min_late = self.timer_late.iter().copied().min().unwrap_or(0);
        json!({
            "params": {
                "irq_interval_ns": interval(self.irq_gaps.len()),
                "irq_len_q_ns": quantiles(&self.irq_gaps),
                "steal_interval_ns": interval(self.steal_gaps.len()),
                "steal_len_q_ns": quantiles(&self.steal_gaps),
                "timer_late_q_ns": quantiles(&self.timer_late),
            },
            "measured": {
                "method": "per CPU: SCHED_FIFO 99 pinned thread reading CLOCK_MONOTONIC in a loop (gaps > 1 us are noise, >= 100 us steal), then 1 ms TIMER_ABSTIME sleeps (timer slack 1 ns)",
                "cpus": self.cpus,
                "spin_ns_per_cpu": self.spin_ns,
                "fifo99": self.fifo,
                "irq_gaps": self.irq_gaps.len(),
                "irq_gap_total_ns": self.irq_gaps.iter().sum::<u64>(),
                "steal_gaps": self.steal_gaps.len(),
                "steal_gap_total_ns": self.steal_gaps.iter().sum::<u64>(),
                "timer_samples": self.timer_late.len(),
                "timer_late_min_ns": min_late,
                "proc_stat_steal_share": self.steal_share,
                "loadavg": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
            }
        })
    }
}

/// Reads the model's parameters from a `noise.json` (its `params`
/// object). Errors: `(line, problem)`, line 0 when it is not about one line.
pub fn params_from_json(text: &str) -> Result<NoiseParams, (usize, String)> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| (e.line(), format!("not valid JSON: {e}")))?;
    let p = v.get("params").and_then(Value::as_object).ok_or((
        0,
        "no \"params\" object: not a noise.json of `schedlab record`".to_string(),
    ))?;
    let int = |k: &str| -> Result<u64, (usize, String)> {
        match p.get(k) {
            None => Ok(0),
            Some(x) => x
                .as_u64()
                .ok_or((0, format!("params.{k}: not a non-negative integer (ns)"))),
        }
    };
    let table = |k: &str| -> Result<Vec<u64>, (usize, String)> {
        match p.get(k) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| {
                    x.as_u64()
                        .ok_or((0, format!("params.{k}: not a list of ns")))
                })
                .collect(),
            Some(_) => Err((0, format!("params.{k}: not a list of ns"))),
        }
    };
    let np = NoiseParams {
        irq_interval_ns: int("irq_interval_ns")?,
        irq_len_q_ns: table("irq_len_q_ns")?,
        steal_interval_ns: int("steal_interval_ns")?,
        steal_len_q_ns: table("steal_len_q_ns")?,
        timer_late_q_ns: table("timer_late_q_ns")?,
    };
    np.check().map_err(|e| (0, format!("params.{e}")))?;
    Ok(np)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        let q = quantiles(&v);
        assert_eq!(q.len(), QUANTILES);
        assert_eq!(q[0], 1);
        assert_eq!(q[10], 50);
        assert_eq!(q[20], 100);
        assert!(quantiles(&[]).is_empty());
    }

    #[test]
    fn params_from_figures() {
        let m = NoiseMeasurement {
            cpus: vec![0, 1],
            spin_ns: 1_000_000,
            irq_gaps: vec![2_000, 4_000],
            steal_gaps: vec![],
            timer_late: vec![50_000, 60_000, 70_000],
            fifo: true,
            steal_share: None,
        };
        let j = m.to_json();
        assert_eq!(j["params"]["irq_interval_ns"], 1_000_000);
        assert_eq!(j["params"]["steal_interval_ns"], 0);
        assert_eq!(j["params"]["timer_late_q_ns"][0], 50_000);
        assert_eq!(j["params"]["timer_late_q_ns"][20], 70_000);
        let p = params_from_json(&j.to_string()).unwrap();
        assert_eq!(p.irq_interval_ns, 1_000_000);
        assert_eq!(p.timer_late_q_ns.len(), QUANTILES);
    }

    #[test]
    fn bad_noise_files_say_where() {
        assert_eq!(params_from_json("{\n\"params\": ,\n}").unwrap_err().0, 2);
        assert!(params_from_json("{}")
            .unwrap_err()
            .1
            .contains("no \"params\""));
        let e = params_from_json(r#"{"params": {"irq_interval_ns": -1}}"#).unwrap_err();
        assert!(e.1.contains("params.irq_interval_ns"), "{e:?}");
        let e = params_from_json(r#"{"params": {"irq_interval_ns": 5, "irq_len_q_ns": [3, 1]}}"#)
            .unwrap_err();
        assert!(e.1.contains("must not decrease"), "{e:?}");
        let e = params_from_json(r#"{"params": {"timer_late_q_ns": "x"}}"#).unwrap_err();
        assert!(e.1.contains("timer_late_q_ns"), "{e:?}");
    }
}

/// Prints a longer measurement (2 s spin, 1000 timer waits per CPU), the
/// figures behind the `vm-2cpu` preset's noise defaults:
/// `cargo test --release -p schedlab-host --lib noise::measure_for_preset -- --ignored --nocapture`
#[cfg(test)]
#[test]
#[ignore]
fn measure_for_preset() {
    let m = measure(2_000_000_000, 1000);
    println!("{}", serde_json::to_string(&m.to_json()).unwrap());
}
