//! Calibrated busy work (rt-app's `run`), and its calibration.
//!
//! One *loop* is [`INNER`] rounds of a dependent integer hash: no memory
//! traffic, no syscalls, and the compiler cannot fold it. Calibration times
//! batches of loops on one CPU and keeps the fastest batch (the one least
//! disturbed by interrupts and preemption), like rt-app's `calibrate_cpu_cycles`
//! keeps its minimum. Unlike rt-app, the result is kept as a float (rt-app
//! rounds pLoad to whole ns).

use crate::sys;
use std::hint::black_box;

/// Hash rounds per loop (makes one loop take tens of ns).
pub const INNER: u32 = 64;

/// Burns `loops` calibrated loops; returns a value that depends on them.
#[inline(never)]
pub fn burn(loops: u64, seed: u64) -> u64 {
    let mut x = black_box(seed) | 1;
    for _ in 0..loops {
        for _ in 0..INNER {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ 0x2545_F491_4F6C_DD1D;
        }
        x = black_box(x);
    }
    x
}

/// What calibration measured.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Calibration {
    /// Nanoseconds per loop (rt-app's pLoad, unrounded).
    pub ns_per_loop: f64,
    /// CPU the calibration ran on (None: given, not measured).
    pub cpu: Option<u32>,
    /// Loops per timed batch.
    pub batch_loops: u64,
    /// ns per loop of every batch, in order (the minimum is kept).
    pub samples: Vec<f64>,
}

impl Calibration {
    /// A fixed pLoad, not measured.
    pub fn fixed(ns_per_loop: f64) -> Calibration {
        Calibration {
            ns_per_loop,
            cpu: None,
            batch_loops: 0,
            samples: Vec::new(),
        }
    }

    /// Loops that make `work_ns` of work (at least one for positive work).
    pub fn loops_for(&self, work_ns: u64) -> u64 {
        if work_ns == 0 {
            return 0;
        }
        ((work_ns as f64 / self.ns_per_loop).round() as u64).max(1)
    }
}

/// Picks pLoad from batch timings: the fastest batch.
pub fn pick(samples: &[f64]) -> Option<f64> {
    samples
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x > 0.0)
        .min_by(|a, b| a.total_cmp(b))
}

/// Measures pLoad on `cpu` in a helper thread pinned there (at SCHED_FIFO
/// 99 when permitted, so the batches are not preempted by fair tasks):
/// `batches` batches of about `batch_ns` each.
pub fn calibrate(cpu: u32, batches: usize, batch_ns: u64) -> Calibration {
    std::thread::spawn(move || {
        let _ = sys::set_affinity(0, &[cpu]);
        let _ = sys::sched_setattr(
            0,
            &sys::SchedRequest {
                policy: schedlab_core::program::Policy::Fifo,
                nice: 99,
                slice_ns: None,
                dl: None,
                uclamp: Default::default(),
            },
        );
        // A first rough estimate sizes the batches.
        let t = sys::now_ns();
        black_box(burn(10_000, 1));
        let rough = ((sys::now_ns() - t) as f64 / 10_000.0).max(0.1);
        let batch_loops = ((batch_ns as f64 / rough) as u64).max(100);
        let mut samples = Vec::with_capacity(batches);
        for i in 0..batches {
            let t = sys::now_ns();
            black_box(burn(batch_loops, i as u64));
            samples.push((sys::now_ns() - t) as f64 / batch_loops as f64);
        }
        Calibration {
            ns_per_loop: pick(&samples).unwrap_or(rough),
            cpu: Some(cpu),
            batch_loops,
            samples,
        }
    })
    .join()
    .expect("calibration thread")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_is_min_of_valid() {
        assert_eq!(pick(&[3.0, 2.5, 4.0]), Some(2.5));
        assert_eq!(pick(&[f64::NAN, 0.0, 7.0]), Some(7.0));
        assert_eq!(pick(&[]), None);
    }

    #[test]
    fn loops_for_rounds() {
        let c = Calibration::fixed(40.0);
        assert_eq!(c.loops_for(0), 0);
        assert_eq!(c.loops_for(10), 1);
        assert_eq!(c.loops_for(1_000_000), 25_000);
    }

    #[test]
    fn calibration_is_consistent() {
        // Burning the loops for 5 ms takes at least ~5 ms (the minimum
        // batch is kept, so the work can only take longer, not shorter,
        // up to clock granularity).
        let c = calibrate(0, 5, 1_000_000);
        assert!(c.ns_per_loop > 0.5 && c.ns_per_loop < 10_000.0, "{c:?}");
        assert_eq!(c.samples.len(), 5);
        let n = c.loops_for(5_000_000);
        let t = sys::now_ns();
        black_box(burn(n, 3));
        let took = sys::now_ns() - t;
        assert!(took >= 4_000_000, "5 ms of work took {took} ns ({c:?})");
    }
}
