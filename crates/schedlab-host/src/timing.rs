//! rt-app's timer algorithm and per-iteration accounting (formats-spec.md 1.8,
//! 2.3), as pure functions of CLOCK_MONOTONIC readings so they can be
//! tested without a clock. The arithmetic is the simulator's
//! (`schedlab_core::exec`), with the real clock in place of the model's.

use schedlab_core::stats::LogRow;

/// ns → µs, truncating (rt-app's `timespec_to_usec` of a difference).
pub fn us(ns: u64) -> u64 {
    ns / 1000
}

/// A timer object's state (shared by every thread naming it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimerState {
    /// The next expiry; `None` until first used.
    pub next: Option<u64>,
    /// Absolute timers keep their grid after overruns; relative re-anchor.
    pub absolute: bool,
}

/// What a timer op decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerStep {
    /// `next - now` in µs (signed, truncated toward zero).
    pub slack_us: i64,
    /// Sleep until this expiry (`None`: it has passed, an overrun).
    pub sleep_until: Option<u64>,
}

/// One timer op at `now` by a thread whose timers start at `t_first`
/// (T0 + delay): moves the timer on by `period` and says whether to sleep.
/// On an overrun a relative timer re-anchors to `now`.
pub fn timer_step(ts: &mut TimerState, t_first: u64, period: u64, now: u64) -> TimerStep {
    let next = ts.next.unwrap_or(t_first) + period;
    ts.next = Some(next);
    let slack_us = (next as i64 - now as i64) / 1000;
    if now < next {
        TimerStep {
            slack_us,
            sleep_until: Some(next),
        }
    } else {
        if !ts.absolute {
            ts.next = Some(now);
        }
        TimerStep {
            slack_us,
            sleep_until: None,
        }
    }
}

/// The accumulators of one iteration (one future log row).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Iteration {
    /// CLOCK_MONOTONIC at the iteration's start (ns).
    pub start: u64,
    /// Thousands of loops done by `run` ops.
    pub perf: u64,
    /// µs spent inside run/runtime ops.
    pub run_us: u64,
    /// Configured run time (µs).
    pub c_duration_us: u64,
    /// Configured periods (µs).
    pub c_period_us: u64,
    /// Slack at the last timer (or sum, cumulative).
    pub slack_us: i64,
    /// Wake-up latency (µs).
    pub wu_lat_us: u64,
}

impl Iteration {
    /// A fresh iteration starting at `start`.
    pub fn new(start: u64) -> Iteration {
        Iteration {
            start,
            ..Default::default()
        }
    }

    /// A `run`/`runtime` op from `t0` to `t1` (ns), configured `config_us`,
    /// `loops` calibrated loops done (0 for runtime: rt-app's runtime adds
    /// `32/pLoad` per chunk, 0 for any realistic pLoad).
    pub fn add_run(&mut self, t0: u64, t1: u64, config_us: u64, loops: u64) {
        self.run_us += us(t1.saturating_sub(t0));
        self.c_duration_us += config_us;
        self.perf += loops / 1000;
    }

    /// A timer op's bookkeeping before it sleeps: period and slack.
    pub fn add_timer(&mut self, period_ns: u64, step: TimerStep, cumulative: bool) {
        self.c_period_us += us(period_ns);
        self.slack_us = if cumulative {
            self.slack_us + step.slack_us
        } else {
            step.slack_us
        };
        if step.sleep_until.is_none() {
            self.wu_lat_us = 0; // an overrun resets it
        }
    }

    /// The timer's sleep ended at `woke` (first clock reading after the
    /// wait); `expiry` was its programmed expiry.
    pub fn add_wakeup(&mut self, expiry: u64, woke: u64) {
        self.wu_lat_us += us(woke.saturating_sub(expiry));
    }

    /// The log row of the iteration ending at `end`.
    pub fn row(&self, idx: u32, end: u64, t_start: u64) -> LogRow {
        LogRow {
            idx,
            perf: self.perf,
            run: self.run_us,
            period: us(end.saturating_sub(self.start)),
            start: us(self.start),
            end: us(end),
            rel_st: us(self.start.saturating_sub(t_start)),
            slack: self.slack_us,
            c_duration: self.c_duration_us,
            c_period: self.c_period_us,
            wu_lat: self.wu_lat_us,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn first_expiry_is_t_first_plus_period() {
        let mut ts = TimerState::default();
        let s = timer_step(&mut ts, 100 * MS, 10 * MS, 102 * MS);
        assert_eq!(s.sleep_until, Some(110 * MS));
        assert_eq!(s.slack_us, 8000);
        let s = timer_step(&mut ts, 100 * MS, 10 * MS, 112 * MS);
        assert_eq!(s.sleep_until, Some(120 * MS));
    }

    #[test]
    fn relative_timer_reanchors_after_overrun() {
        let mut ts = TimerState::default();
        let s = timer_step(&mut ts, 0, 10 * MS, 25 * MS);
        assert_eq!(s.sleep_until, None);
        assert_eq!(s.slack_us, -15_000);
        assert_eq!(ts.next, Some(25 * MS));
        let s = timer_step(&mut ts, 0, 10 * MS, 26 * MS);
        assert_eq!(s.sleep_until, Some(35 * MS));
    }

    #[test]
    fn absolute_timer_keeps_grid() {
        let mut ts = TimerState {
            next: None,
            absolute: true,
        };
        assert_eq!(timer_step(&mut ts, 0, 10 * MS, 25 * MS).sleep_until, None);
        assert_eq!(ts.next, Some(10 * MS));
        assert_eq!(timer_step(&mut ts, 0, 10 * MS, 25 * MS).sleep_until, None);
        assert_eq!(
            timer_step(&mut ts, 0, 10 * MS, 25 * MS).sleep_until,
            Some(30 * MS)
        );
    }

    #[test]
    fn slack_truncates_toward_zero() {
        let mut ts = TimerState::default();
        let s = timer_step(&mut ts, 0, 1000, 2500); // next 1000, now 2500: -1.5 µs
        assert_eq!(s.slack_us, -1);
    }

    /// formats-spec.md 2.3's worked example: run 2000 µs, 16 ms unique timer,
    /// pLoad 100 ns, t_start = 871200000000 µs, T0 = t_start + 5 µs.
    #[test]
    fn worked_example_row() {
        let t_start = 871_200_000_000_000u64;
        let t0 = t_start + 5_000;
        let start = t_start + 12_000;
        let mut it = Iteration::new(start);
        it.add_run(start, start + 2_012_000, 2000, 20_000);
        let mut ts = TimerState::default();
        let now = start + 2_012_000;
        let step = timer_step(&mut ts, t0, 16_000_000, now);
        it.add_timer(16_000_000, step, false);
        assert_eq!(step.sleep_until, Some(t0 + 16_000_000));
        let woke = t_start + 16_016_000;
        it.add_wakeup(step.sleep_until.unwrap(), woke);
        let row = it.row(0, woke, t_start);
        assert_eq!(
            row,
            LogRow {
                idx: 0,
                perf: 20,
                run: 2012,
                period: 16004,
                start: 871_200_000_012,
                end: 871_200_016_016,
                rel_st: 12,
                slack: 13981,
                c_duration: 2000,
                c_period: 16000,
                wu_lat: 11,
            }
        );
    }

    #[test]
    fn overrun_resets_wu_lat_and_cumulative_slack_sums() {
        let mut it = Iteration::new(0);
        it.add_wakeup(0, 7000);
        assert_eq!(it.wu_lat_us, 7);
        it.add_timer(
            1000,
            TimerStep {
                slack_us: -3,
                sleep_until: None,
            },
            true,
        );
        it.add_timer(
            1000,
            TimerStep {
                slack_us: 5,
                sleep_until: Some(9),
            },
            true,
        );
        assert_eq!((it.wu_lat_us, it.slack_us, it.c_period_us), (0, 2, 2));
    }
}
