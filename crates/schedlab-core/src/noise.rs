//! Host noise as plain data: the measured parameters, a run's noise state
//! and the draws. The mechanism (what a burst or a late timer interrupt
//! does to the simulation) is `sched/noise.rs`, which documents both.

use crate::time::Nanos;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The measured noise of a host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NoiseParams {
    /// Mean gap between interrupt/kernel-thread bursts on one CPU (ns); 0: none.
    pub irq_interval_ns: Nanos,
    /// Quantiles (0, 5, ..., 100 %) of a burst's length (ns).
    pub irq_len_q_ns: Vec<Nanos>,
    /// Mean gap between host preemptions of one vCPU (ns); 0: none.
    pub steal_interval_ns: Nanos,
    /// Quantiles of a host preemption's length (ns).
    pub steal_len_q_ns: Vec<Nanos>,
    /// Quantiles of a zero-slack timer's measured lateness, from expiry to
    /// the woken thread running (ns); empty: none.
    pub timer_late_q_ns: Vec<Nanos>,
}

impl NoiseParams {
    /// Whether any source is on.
    pub fn is_active(&self) -> bool {
        (self.irq_interval_ns > 0 && !self.irq_len_q_ns.is_empty())
            || (self.steal_interval_ns > 0 && !self.steal_len_q_ns.is_empty())
            || self.timer_late_q_ns.iter().any(|&x| x > 0)
    }

    /// Checks the tables: each non-decreasing; an interval needs its table.
    pub fn check(&self) -> Result<(), String> {
        for (name, q) in [
            ("irq_len_q_ns", &self.irq_len_q_ns),
            ("steal_len_q_ns", &self.steal_len_q_ns),
            ("timer_late_q_ns", &self.timer_late_q_ns),
        ] {
            if q.windows(2).any(|w| w[1] < w[0]) {
                return Err(format!("{name}: quantiles must not decrease"));
            }
        }
        if self.irq_interval_ns > 0 && self.irq_len_q_ns.is_empty() {
            return Err("irq_interval_ns without irq_len_q_ns".into());
        }
        if self.steal_interval_ns > 0 && self.steal_len_q_ns.is_empty() {
            return Err("steal_interval_ns without steal_len_q_ns".into());
        }
        Ok(())
    }
}

/// A run's noise: its parameters and random stream.
#[derive(Clone, Debug)]
pub struct NoiseState {
    pub(crate) params: NoiseParams,
    pub(crate) rng: ChaCha8Rng,
    /// Per CPU, the latest hrtimer interrupt: (when it was due, when it
    /// runs). Timers due in between expire in it.
    pub(crate) irq: Vec<(Nanos, Nanos)>,
}

/// A draw from a quantile table (linear between neighbours); 0 when empty.
pub fn draw_quantile(q: &[Nanos], u: f64) -> Nanos {
    match q.len() {
        0 => 0,
        1 => q[0],
        n => {
            let x = u.clamp(0.0, 1.0) * (n - 1) as f64;
            let i = (x.floor() as usize).min(n - 2);
            let f = x - i as f64;
            let (a, b) = (q[i] as f64, q[i + 1] as f64);
            (a + (b - a) * f).round() as Nanos
        }
    }
}

/// An exponential gap with mean `mean` (at least 1 ns).
pub(crate) fn draw_exp(rng: &mut ChaCha8Rng, mean: Nanos) -> Nanos {
    let u: f64 = rng.random();
    ((-(1.0 - u).ln()) * mean as f64).max(1.0) as Nanos
}

impl NoiseState {
    /// The state for `params` under `seed`; None when nothing is on.
    pub fn new(params: NoiseParams, seed: u64) -> Option<NoiseState> {
        params.is_active().then(|| NoiseState {
            params,
            rng: crate::rng::stream(seed, "noise"),
            irq: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_draws_interpolate() {
        let q = [0, 10, 30];
        assert_eq!(draw_quantile(&q, 0.0), 0);
        assert_eq!(draw_quantile(&q, 0.25), 5);
        assert_eq!(draw_quantile(&q, 0.5), 10);
        assert_eq!(draw_quantile(&q, 0.75), 20);
        assert_eq!(draw_quantile(&q, 1.0), 30);
        assert_eq!(draw_quantile(&[], 0.5), 0);
        assert_eq!(draw_quantile(&[7], 0.9), 7);
    }

    #[test]
    fn exponential_gaps_have_the_mean() {
        let mut r = crate::rng::stream(1, "noise");
        let n = 20_000;
        let s: u64 = (0..n).map(|_| draw_exp(&mut r, 1_000_000)).sum();
        let mean = s as f64 / n as f64;
        assert!((mean - 1e6).abs() < 0.03e6, "{mean}");
    }

    #[test]
    fn params_are_checked() {
        let mut p = NoiseParams::default();
        assert!(!p.is_active() && p.check().is_ok());
        p.irq_interval_ns = 1000;
        assert!(p.check().is_err());
        p.irq_len_q_ns = vec![5, 3];
        assert!(p.check().unwrap_err().contains("must not decrease"));
        p.irq_len_q_ns = vec![3, 5];
        assert!(p.check().is_ok() && p.is_active());
        assert!(NoiseState::new(NoiseParams::default(), 1).is_none());
    }
}
