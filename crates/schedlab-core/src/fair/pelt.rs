//! PELT: per-entity load tracking (`sched_avg` arithmetic).
//!
//! Kernel reference: kernel/sched/pelt.c `decay_load`, `__accumulate_pelt_segments`,
//! `accumulate_sum`, `___update_load_sum`, `___update_load_avg`, and the
//! generated table of sched-pelt.h (kernel-model.md §4).
//!
//! Time is measured in PELT units of 1024 ns; a *period* is 1024 units
//! (1.048576 ms). A signal's sum decays by `y` per period with `y^32 = 1/2`:
//!
//! ```text
//!        d1          d2 (p-1 full periods)           d3
//!   |<---------->|<--------------------------->|<------>|
//!   +------------+-------+------ ... ----------+--------+----->
//!   last_update  period boundary              boundary  now
//!
//!   contrib = d1·y^p + 1024·Σ_{k=1}^{p-1} y^k + d3
//!           = d1·y^p + (LOAD_AVG_MAX − LOAD_AVG_MAX·y^p − 1024) + d3
//! ```
//!
//! Deviations: the clock is `clock_task` (no capacity or frequency scaling:
//! every preset CPU runs at a fixed frequency).

use crate::time::Nanos;

/// Half-life of the signals in periods (`LOAD_AVG_PERIOD`).
pub const LOAD_AVG_PERIOD: u32 = 32;
/// Saturated value of a sum (`LOAD_AVG_MAX`), the largest value reached by
/// `1024 × Σ y^k` in the kernel's integer arithmetic.
pub const LOAD_AVG_MAX: u64 = 47742;
/// `PELT_MIN_DIVIDER`.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;

/// `runnable_avg_yN_inv[k] = ⌊(2^32 − 1) · y^k⌋`, the generated table of
/// sched-pelt.h (recomputed in a test from its definition).
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `decay_load(val, n)`: `val · y^n`.
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n > (LOAD_AVG_PERIOD as u64) * 63 {
        return 0;
    }
    if n >= LOAD_AVG_PERIOD as u64 {
        val >>= n / LOAD_AVG_PERIOD as u64;
    }
    let k = (n % LOAD_AVG_PERIOD as u64) as usize;
    ((val as u128 * RUNNABLE_AVG_YN_INV[k] as u128) >> 32) as u64
}

/// The three-segment contribution of `p` crossed periods (see module doc).
fn accumulate_pelt_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c3 = d3;
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - 1024;
    c1 + c2 + c3
}

/// One `sched_avg`: load, runnable and util signals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SchedAvg {
    /// Time of the last update, in ns (a multiple of 1024).
    pub last_update_time: Nanos,
    /// Decayed sum of weighted queued time.
    pub load_sum: u64,
    /// Decayed sum of runnable time × 1024 (× count for queues).
    pub runnable_sum: u64,
    /// Decayed sum of running time × 1024.
    pub util_sum: u64,
    /// Position inside the current period, in PELT units.
    pub period_contrib: u32,
    /// `load_sum / divider` (× weight for entities).
    pub load_avg: u64,
    /// `runnable_sum / divider`.
    pub runnable_avg: u64,
    /// `util_sum / divider`.
    pub util_avg: u64,
}

impl SchedAvg {
    /// `get_pelt_divider`.
    #[inline]
    pub fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib as u64
    }

    /// `___update_load_sum` followed by `___update_load_avg`.
    ///
    /// * `load`: 1 while an entity is queued (its weight is applied in the
    ///   average), or the queue's weight for a cfs_rq (`weight_for_avg` 1).
    /// * `runnable`: number of runnable tasks (1 for a task entity).
    /// * `running`: whether the entity / queue's curr is running.
    ///
    /// Returns whether a period boundary was crossed (averages refreshed).
    pub fn update(
        &mut self,
        now: Nanos,
        load: u64,
        runnable: u64,
        running: bool,
        weight_for_avg: u64,
    ) -> bool {
        if now < self.last_update_time {
            // Clocks never go backwards in the simulator; treat as no time.
            return false;
        }
        let mut delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 {
            (0, false)
        } else {
            (runnable, running)
        };

        // accumulate_sum
        let mut contrib = delta;
        delta += self.period_contrib as u64;
        let periods = delta / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            delta %= 1024;
            if load != 0 {
                contrib =
                    accumulate_pelt_segments(periods, 1024 - self.period_contrib as u64, delta);
            }
        }
        self.period_contrib = delta as u32;
        if load != 0 {
            self.load_sum += load * contrib;
        }
        if runnable != 0 {
            self.runnable_sum += runnable * contrib * 1024;
        }
        if running {
            self.util_sum += contrib * 1024;
        }
        if periods == 0 {
            return false;
        }
        // ___update_load_avg
        let div = self.divider();
        self.load_avg = weight_for_avg * self.load_sum / div;
        self.runnable_avg = self.runnable_sum / div;
        self.util_avg = self.util_sum / div;
        true
    }

    /// `attach_entity_load_avg`-style addition of an entity's sums.
    pub fn attach(&mut self, se: &SchedAvg) {
        self.load_sum += se.load_sum;
        self.runnable_sum += se.runnable_sum;
        self.util_sum += se.util_sum;
        self.load_avg += se.load_avg;
        self.runnable_avg += se.runnable_avg;
        self.util_avg += se.util_avg;
    }

    /// `detach_entity_load_avg` / `removed` fold: subtract, clamping at 0.
    pub fn detach(&mut self, se: &SchedAvg) {
        self.load_sum = self.load_sum.saturating_sub(se.load_sum);
        self.runnable_sum = self.runnable_sum.saturating_sub(se.runnable_sum);
        self.util_sum = self.util_sum.saturating_sub(se.util_sum);
        self.load_avg = self.load_avg.saturating_sub(se.load_avg);
        self.runnable_avg = self.runnable_avg.saturating_sub(se.runnable_avg);
        self.util_avg = self.util_avg.saturating_sub(se.util_avg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generator's definition: y = 0.5^(1/32), inv[k] = ⌊(2^32−1)·y^k⌋.
    #[test]
    fn yn_inv_table_matches_its_definition() {
        let y = 0.5f64.powf(1.0 / 32.0);
        for (k, &v) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
            let want = (((1u64 << 32) - 1) as f64 * y.powi(k as i32)) as u64;
            assert!(
                (want as i64 - v as i64).abs() <= 1,
                "k={k}: table {v:#x}, computed {want:#x}"
            );
        }
    }

    /// LOAD_AVG_MAX is the fixed point of `sum = decay(sum, 1) + 1024` in the
    /// kernel's integer arithmetic.
    #[test]
    fn load_avg_max_is_the_saturated_sum() {
        let mut sum = 0u64;
        for _ in 0..10_000 {
            sum = decay_load(sum, 1) + 1024;
        }
        // The integer recurrence settles 1 below or at the constant.
        assert!((LOAD_AVG_MAX as i64 - sum as i64).abs() <= 1, "sum {sum}");
    }

    #[test]
    fn a_signal_halves_after_32_periods() {
        // y^32 = 1/2: decay_load(1000, 32) = 1000 >> 1 times inv[0] ≈ 499.
        assert_eq!(decay_load(1000, 32), 499);
        assert_eq!(decay_load(1 << 20, 64), (1u64 << 18) - 1);
        assert_eq!(decay_load(12345, 32 * 64), 0);
    }

    #[test]
    fn always_running_entity_saturates_at_1024_util() {
        let mut a = SchedAvg::default();
        let period = 1024 * 1024;
        for i in 1..=2000u64 {
            a.update(i * period, 1, 1, true, 1024);
        }
        assert!(
            a.util_avg >= 1020 && a.util_avg <= 1024,
            "util {}",
            a.util_avg
        );
        assert!(
            a.load_avg >= 1020 && a.load_avg <= 1024,
            "load {}",
            a.load_avg
        );
        // Blocked for 32 periods: util halves.
        let before = a.util_avg;
        a.update(2032 * period, 0, 0, false, 1024);
        let ratio = a.util_avg as f64 / before as f64;
        assert!((0.49..0.51).contains(&ratio), "ratio {ratio}");
    }

    #[test]
    fn half_duty_cycle_converges_near_half() {
        // Running 50 % of every period (on for 512 units, off for 512).
        let mut a = SchedAvg::default();
        let unit = 1024;
        let mut t = 0;
        for _ in 0..3000 {
            t += 512 * unit;
            a.update(t, 1, 1, true, 1024);
            t += 512 * unit;
            a.update(t, 0, 0, false, 1024);
        }
        assert!((480..=545).contains(&a.util_avg), "util {}", a.util_avg);
    }
}
