//! The human tables printed on stdout after a run.
//!
//! What it owns: pure functions from data to `String`: the per-task table,
//! the wakeup-latency table, the one-line latency form in which the
//! published result we compare against is written (`N 4710 min 0 max 67664
//! sum 5.25956e+06 mean 1116.68 stddev 2315.09`, i.e. C++ stream / printf
//! `%g` output), and the C `%g` formatting that line needs ([`fmt_g`]).
//!
//! `%g` (C99 7.19.6.1): with precision P (6 by default) and X the decimal
//! exponent of the value rounded to P significant digits, use `%.(P-1-X)f`
//! if `P > X >= -4`, else `%.(P-1)e`; then drop trailing zeros and a
//! trailing decimal point. The exponent has a sign and at least two digits.
//!
//! Deviations: none known. Rust's float formatting rounds the exact binary
//! value like glibc's printf does.

use schedlab_core::stats::SampleStats;

use crate::summary::TaskSummary;

/// Formats `x` like C's `printf("%.*g", precision, x)`.
pub fn fmt_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Scientific with P significant digits gives the rounded exponent.
    let sci = format!("{:.*e}", p - 1, x);
    let (mant, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("exponent is an integer");
    if exp < -4 || exp >= p as i32 {
        let mant = strip_zeros(mant);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exp) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The one-line latency form: `N n min a max b sum s mean m stddev d`, with
/// sum, mean and stddev in `%g`.
pub fn latency_line(s: &SampleStats) -> String {
    format!(
        "N {} min {} max {} sum {} mean {} stddev {}",
        s.n,
        s.min,
        s.max,
        fmt_g(s.sum as f64, 6),
        fmt_g(s.mean, 6),
        fmt_g(s.stddev, 6)
    )
}

pub use crate::results::by_name::merge_sample_stats;

/// Column alignment.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// Renders rows under a header with two spaces between columns and no
/// trailing blanks.
fn render(header: &[&str], align: &[Align], rows: &[Vec<String>]) -> String {
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            // Padding by hand: `format!`'s width is a u16 and panics past
            // 65 535 ("Formatting argument out of range"), and a task name
            // may be that long.
            let pad = width[i].saturating_sub(c.chars().count());
            match align[i] {
                Align::Left => {
                    l.push_str(c);
                    l.extend(std::iter::repeat(' ').take(pad));
                }
                Align::Right => {
                    l.extend(std::iter::repeat(' ').take(pad));
                    l.push_str(c);
                }
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

/// ns as milliseconds with 3 decimals (integer arithmetic, truncated).
fn ms3(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, (ns % 1_000_000) / 1_000)
}

/// The per-task table: name, policy, nice, runtime ms, wait ms, switches,
/// migrations, wakeups, loops.
pub fn task_table(tasks: &[TaskSummary]) -> String {
    use Align::{Left as L, Right as R};
    let header = [
        "task",
        "policy",
        "nice",
        "runtime_ms",
        "wait_ms",
        "switches",
        "migrations",
        "wakeups",
        "loops",
    ];
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.policy.clone(),
                t.nice.to_string(),
                ms3(t.runtime_ns),
                ms3(t.wait_ns),
                t.switches.to_string(),
                t.migrations.to_string(),
                t.wakeups.to_string(),
                t.loops.to_string(),
            ]
        })
        .collect();
    render(&header, &[L, L, R, R, R, R, R, R, R], &rows)
}

/// The per-task-name table (threads of one rt-app task summed, see
/// [`crate::results::by_name`]): name, threads, policy, nice, then the
/// sums of [`task_table`]'s columns.
pub fn name_table(rows: &[crate::results::by_name::NameRow]) -> String {
    use Align::{Left as L, Right as R};
    let header = [
        "task",
        "threads",
        "policy",
        "nice",
        "runtime_ms",
        "wait_ms",
        "switches",
        "migrations",
        "wakeups",
        "loops",
    ];
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|t| {
            vec![
                t.name.clone(),
                t.threads.to_string(),
                t.policy.clone(),
                t.nice.clone(),
                ms3(t.runtime_ns),
                ms3(t.wait_ns),
                t.switches.to_string(),
                t.migrations.to_string(),
                t.wakeups.to_string(),
                t.loops.to_string(),
            ]
        })
        .collect();
    render(&header, &[L, R, L, R, R, R, R, R, R, R], &rows)
}

/// The task groups' cpu.stat figures: one row per group (usage and
/// bandwidth counters as cgroupfs shows them, µs).
pub fn group_table(groups: &[crate::summary::GroupSummary]) -> String {
    use Align::{Left as L, Right as R};
    let header = [
        "group",
        "cpu.max",
        "usage_usec",
        "nr_periods",
        "nr_throttled",
        "throttled_usec",
        "nr_bursts",
    ];
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let max = g
                .extra
                .get("cpu.max")
                .and_then(|v| v.as_str())
                .unwrap_or("max")
                .to_string();
            vec![
                g.path.clone(),
                max,
                g.cpu_stat.usage_usec.to_string(),
                g.cpu_stat.nr_periods.to_string(),
                g.cpu_stat.nr_throttled.to_string(),
                g.cpu_stat.throttled_usec.to_string(),
                g.cpu_stat.get("nr_bursts").to_string(),
            ]
        })
        .collect();
    render(&header, &[L, L, R, R, R, R, R], &rows)
}

/// The wakeup-latency table (µs): one row per labelled set (a task, or a
/// group of tasks merged with [`merge_sample_stats`]): N, min, max, sum,
/// mean, stddev. Mean and stddev have 2 decimals; sum is an integer.
pub fn latency_table(rows: &[(&str, &SampleStats)]) -> String {
    use Align::{Left as L, Right as R};
    let header = ["wu_lat_us", "N", "min", "max", "sum", "mean", "stddev"];
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(label, s)| {
            vec![
                label.to_string(),
                s.n.to_string(),
                s.min.to_string(),
                s.max.to_string(),
                s.sum.to_string(),
                format!("{:.2}", s.mean),
                format!("{:.2}", s.stddev),
            ]
        })
        .collect();
    render(&header, &[L, R, R, R, R, R, R], &rows)
}

/// Latency table rows for each task of a summary, in order.
pub fn task_latency_table(tasks: &[TaskSummary]) -> String {
    let stats: Vec<SampleStats> = tasks
        .iter()
        .map(|t| t.wakeup_latency_us.to_stats())
        .collect();
    let rows: Vec<(&str, &SampleStats)> = tasks
        .iter()
        .zip(&stats)
        .map(|(t, s)| (t.name.as_str(), s))
        .collect();
    latency_table(&rows)
}

#[cfg(test)]
mod long_cell_tests {
    use super::*;

    #[test]
    fn cells_longer_than_a_format_width_do_not_panic() {
        let long = "x".repeat(70_000);
        let out = render(
            &["name", "n"],
            &[Align::Left, Align::Right],
            &[vec![long.clone(), "1".into()]],
        );
        assert!(out.contains(&long));
        assert!(out.lines().nth(1).unwrap().ends_with("  1"));
    }
}
