//! The menu cpuidle governor's repeating-pattern detection
//! (`drivers/cpuidle/governors/menu.c`, `get_typical_interval`): besides
//! the distance to the next timer, menu predicts the coming idle period
//! from the last `INTERVALS` (8) measured ones. When they agree (standard
//! deviation at most 20 µs, or the average above six standard deviations,
//! with at least 3/4 of the samples kept), the prediction is their
//! average; otherwise the outlier farthest from the average is dropped and
//! the test repeated while at least 3/4 of the samples remain. The
//! governor's prediction is the smaller of the two, so a CPU that keeps
//! sleeping for a few µs (a hackbench wakeup pattern) picks a shallow
//! state although no timer is pending.
//!
//! Left out: the correction factor menu applies to the timer distance
//! (its `bucket` statistics), the PM QoS latency limit, and the
//! "tick was stopped" special cases.

use crate::time::{Nanos, NSEC_PER_USEC};

/// `INTERVALS`: idle periods remembered per CPU.
pub const INTERVALS: usize = 8;

/// One CPU's recent idle periods, in µs (as menu keeps them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MenuState {
    intervals: [u64; INTERVALS],
    next: usize,
}

impl MenuState {
    /// Records a finished idle period (`menu_update`: the measured
    /// residency, less the state's exit latency when it is longer).
    pub fn record(&mut self, measured_ns: Nanos, exit_latency_ns: Nanos) {
        let m = if measured_ns > exit_latency_ns {
            measured_ns - exit_latency_ns
        } else {
            measured_ns
        };
        self.intervals[self.next] = (m / NSEC_PER_USEC).min(u32::MAX as u64);
        self.next = (self.next + 1) % INTERVALS;
    }

    /// `get_typical_interval`, in ns; `None` when there is no pattern.
    pub fn typical_interval_ns(&self) -> Option<Nanos> {
        let (mut min_thresh, mut max_thresh) = (None::<u64>, u64::from(u32::MAX));
        loop {
            let (mut max, mut min, mut sum, mut sum_sq, mut n) =
                (0u64, u64::MAX, 0u128, 0u128, 0u64);
            for &v in &self.intervals {
                if min_thresh.is_some_and(|m| v <= m) || v >= max_thresh {
                    continue;
                }
                n += 1;
                sum += v as u128;
                sum_sq += (v as u128) * (v as u128);
                max = max.max(v);
                min = min.min(v);
            }
            if max == 0 {
                return None;
            }
            let avg = sum / n as u128;
            let variance = (sum_sq / n as u128).saturating_sub(avg * avg);
            let enough = n as usize * 4 >= INTERVALS * 3;
            if (avg * avg > variance * 36 && enough) || variance <= 400 {
                return Some(avg as u64 * NSEC_PER_USEC);
            }
            if n as usize * 4 <= INTERVALS * 3 {
                return None;
            }
            if avg as u64 - min > max - avg as u64 {
                min_thresh = Some(min);
            } else {
                max_thresh = max;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_pattern_is_predicted_and_noise_is_not() {
        let mut m = MenuState::default();
        assert_eq!(m.typical_interval_ns(), None, "no history");
        for _ in 0..8 {
            m.record(30_000, 1_000);
        }
        assert_eq!(m.typical_interval_ns(), Some(29_000));
        // One long outlier is dropped.
        m.record(5_000_000, 0);
        assert_eq!(m.typical_interval_ns(), Some(29_000));
        // Widely spread periods: no pattern.
        for (i, v) in [10, 900, 40, 3000, 7, 600, 200, 9000]
            .into_iter()
            .enumerate()
        {
            let _ = i;
            m.record(v * 1000, 0);
        }
        assert_eq!(m.typical_interval_ns(), None);
    }
}
