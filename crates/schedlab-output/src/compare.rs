//! The `schedlab compare` table: mmtests-style A/B statistics.
//!
//! What it owns: pure functions (no I/O) from per-variant samples to the
//! comparison table that scheduler patch postings use (architecture.md
//! section 2), as text ([`render_table`]) and as JSON ([`render_json`]),
//! plus the statistics ([`Stats::of`]), the signed percentage ([`pct_delta`])
//! and the significance test ([`significant`]) behind them, and the
//! metrics `schedlab compare` shows ([`compare_metrics`]), built from
//! each run's [`RunFigures`]: its [`Headline`](crate::results::Headline)
//! totals, the wakeup-latency percentiles of its timer rows
//! ([`TimerLatencyRows`]), its benchmark's own figures
//! ([`benchmark_figures`]) and, with [`PerTask`], per task name or thread.
//!
//! Format source: `docs/formats.md` section 7 (mmtests `compare-kernels.sh` /
//! `compare-mmtests.pl`, `MMTests::Stat`). Nothing is copied from mmtests;
//! the rules are implemented from that description.
//!
//! ```text
//! demo                                              <- title
//!                                base                    new   <- header: 23 chars per variant
//! Min     time        1.00 (   0.00%)        0.50 (  50.00%)
//! AMean   time        2.33 (   0.00%)        1.17 (  50.00%)
//! AMean   ops        10.00 (   0.00%)       20.00 * 100.00%*   <- significant (7.4)
//! ```
//!
//! 1. Rows: the eight statistics (outer loop, in [`StatKind::ALL`] order) ×
//!    the metrics (inner loop, in the given order). The label is the
//!    statistic left-aligned to the longest statistic label (7, `CoefVar`),
//!    a space, then the metric name left-aligned to the longest metric name
//!    (formats-spec.md 7.1).
//! 2. Columns: one per variant, the first is the baseline and always shows
//!    `(   0.00%)`. Each cell is `%12.<p>f` then ` (%7.2f%%)`, i.e. 23
//!    characters; on the AMean row a significant difference replaces the
//!    parentheses by `*`: ` *%7.2f%%*`.
//! 3. Percentages ([`pct_delta`], formats-spec.md 7.3): positive always means
//!    better. Stddev and CoefVar are always "lower is better".
//! 4. Significance ([`significant`], formats-spec.md 7.4): the `mean ± 1.96·σ`
//!    bands of base and new do not overlap (σ is the sample standard
//!    deviation, not the standard error).
//!
//! # Deviations from mmtests
//!
//! * **Rows.** mmtests prints `Min, Amean, Stddev, CoeffVar, Max, BAmean-95`
//!   (and `Hmean` instead of `Amean` when higher is better). We print the
//!   eight rows of the published target table (the THROTTLE experiment):
//!   `Min, Max, Median, AMean, GMean, HMean, Stddev, CoefVar`, with those
//!   spellings, for every metric whatever its [`Better`].
//! * **Median** is the middle sample of the sorted values, and for an even
//!   count the mean of the two middle samples. mmtests has no median row;
//!   its `2nd-qrtle` is the sample at 1-based position `max(1, floor(n/2))`
//!   in best-first order, never interpolated, so for even n it differs.
//! * **Stddev** is the sample standard deviation (divide by n−1) for every
//!   metric; for n == 1 it is **0** (mmtests: NaN), so CoefVar is 0 and the
//!   significance band has zero width. mmtests uses the harmonic `HStddev`
//!   for higher-is-better benchmarks; we do not.
//! * **GMean** is `exp(mean(ln x))` (mathematically `(Πx)^(1/n)`, but it
//!   cannot overflow); GMean and HMean are NaN if any sample is ≤ 0.
//! * **Significance** always marks the AMean row and uses the arithmetic
//!   Stddev; mmtests marks `Hmean` (with `HStddev`) for higher-is-better.
//! * **Header** is one line: each variant name right-aligned in 23
//!   characters, not split at its first `-` over two lines (variant names
//!   here are feature sets such as `THROTTLE=per-task`, where that split
//!   would be wrong). Like printf, a name longer than 23 characters is not
//!   truncated and pushes the rest of the line right.
//! * **Undefined values** (NaN: no samples, or GMean/HMean of non-positive
//!   samples) print as `nan`, exactly what C's `printf("%12.2f")` prints, and
//!   a percentage that involves one prints as `    nan` in its `%7.2f` slot
//!   (the baseline column still shows `0.00`). In JSON they are `null`.
//! * Samples are not sorted best-first before the sums are taken (every
//!   statistic here is order-independent), so a mean may differ from
//!   mmtests' in the last bit of the float.
//! * No second `Duration User/System/Elapsed` table.

use std::fmt::Write as _;

use serde_json::{json, Map, Value};

mod figures;
mod metrics;

pub use figures::{
    benchmark_figures, task_figures, BenchFigure, LatencyCounts, PerTask, RunFigures, TaskFigures,
    TimerLatency, TimerLatencyRows, WAKEUP_PCTS,
};
pub use metrics::{compare_metrics, headline_metrics, runtime_better, task_metrics};

/// Which direction of a metric is an improvement (formats-spec.md 7.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Better {
    /// Smaller values are better (hackbench time, latency).
    Lower,
    /// Larger values are better (throughput).
    Higher,
}

impl Better {
    /// `"lower"` or `"higher"`, as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Better::Lower => "lower",
            Better::Higher => "higher",
        }
    }
}

/// One of the eight statistics of the table, in printing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatKind {
    /// Smallest sample.
    Min,
    /// Largest sample.
    Max,
    /// Middle sample (mean of the two middle ones for even n).
    Median,
    /// Arithmetic mean.
    AMean,
    /// Geometric mean.
    GMean,
    /// Harmonic mean.
    HMean,
    /// Sample standard deviation.
    Stddev,
    /// Coefficient of variation, percent.
    CoefVar,
}

impl StatKind {
    /// All statistics, in the order the table prints them.
    pub const ALL: [StatKind; 8] = [
        StatKind::Min,
        StatKind::Max,
        StatKind::Median,
        StatKind::AMean,
        StatKind::GMean,
        StatKind::HMean,
        StatKind::Stddev,
        StatKind::CoefVar,
    ];

    /// Row label in the text table (`AMean`, `CoefVar`, ...).
    pub fn label(self) -> &'static str {
        match self {
            StatKind::Min => "Min",
            StatKind::Max => "Max",
            StatKind::Median => "Median",
            StatKind::AMean => "AMean",
            StatKind::GMean => "GMean",
            StatKind::HMean => "HMean",
            StatKind::Stddev => "Stddev",
            StatKind::CoefVar => "CoefVar",
        }
    }

    /// Key in JSON (`amean`, `coefvar`, ...).
    pub fn key(self) -> &'static str {
        match self {
            StatKind::Min => "min",
            StatKind::Max => "max",
            StatKind::Median => "median",
            StatKind::AMean => "amean",
            StatKind::GMean => "gmean",
            StatKind::HMean => "hmean",
            StatKind::Stddev => "stddev",
            StatKind::CoefVar => "coefvar",
        }
    }

    /// The direction used for this statistic's percentage: Stddev and
    /// CoefVar are always "lower is better" (less variation), the others
    /// follow the metric (formats-spec.md 7.3).
    pub fn better(self, metric: Better) -> Better {
        match self {
            StatKind::Stddev | StatKind::CoefVar => Better::Lower,
            _ => metric,
        }
    }
}

/// Width of the longest [`StatKind::label`] (`CoefVar`).
const STAT_LABEL_WIDTH: usize = 7;

/// Width of one variant column: `%12.<p>f` + ` (%7.2f%%)` = 12 + 7 + 4.
pub const COLUMN_WIDTH: usize = 23;

/// `qnorm(1 − 0.05/2)`, the half-width of the significance band in σ
/// (formats-spec.md 7.4; mmtests asks R, we use the usual rounded value).
pub const SIGNIFICANCE_Q: f64 = 1.96;

/// The eight statistics of one set of samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample (NaN if n == 0).
    pub min: f64,
    /// Largest sample (NaN if n == 0).
    pub max: f64,
    /// Middle sample; mean of the two middle samples for even n.
    pub median: f64,
    /// Σx / n.
    pub amean: f64,
    /// exp(Σ ln x / n); NaN if any sample ≤ 0.
    pub gmean: f64,
    /// n / Σ(1/x); NaN if any sample ≤ 0.
    pub hmean: f64,
    /// sqrt(Σ(x − amean)² / (n − 1)); 0 for n == 1.
    pub stddev: f64,
    /// 100 · stddev / amean, in percent; 0 if amean == 0.
    pub coefvar: f64,
}

impl Stats {
    /// Computes the statistics of `samples` (any order; sums are taken in
    /// the given order, so the result is deterministic). With no samples
    /// every field except `n` is NaN.
    pub fn of(samples: &[f64]) -> Stats {
        let n = samples.len();
        if n == 0 {
            return Stats {
                n,
                min: f64::NAN,
                max: f64::NAN,
                median: f64::NAN,
                amean: f64::NAN,
                gmean: f64::NAN,
                hmean: f64::NAN,
                stddev: f64::NAN,
                coefvar: f64::NAN,
            };
        }
        let nf = n as f64;
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);

        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        // n odd: sorted[n/2]. n even: the two middle ones are n/2 − 1, n/2.
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };

        let amean = samples.iter().sum::<f64>() / nf;
        let positive = samples.iter().all(|&x| x > 0.0);
        let (gmean, hmean) = if positive {
            let ln_mean = samples.iter().map(|x| x.ln()).sum::<f64>() / nf;
            let inv_sum = samples.iter().map(|x| 1.0 / x).sum::<f64>();
            (ln_mean.exp(), nf / inv_sum)
        } else {
            (f64::NAN, f64::NAN)
        };
        // Two-pass sample variance; a single sample has no spread (0, not
        // mmtests' NaN; see the module doc).
        let stddev = if n == 1 {
            0.0
        } else {
            let ss = samples.iter().map(|x| (x - amean).powi(2)).sum::<f64>();
            (ss / (nf - 1.0)).sqrt()
        };
        let coefvar = if amean == 0.0 {
            0.0
        } else {
            100.0 * stddev / amean
        };
        Stats {
            n,
            min,
            max,
            median,
            amean,
            gmean,
            hmean,
            stddev,
            coefvar,
        }
    }

    /// The value of one statistic.
    pub fn get(&self, kind: StatKind) -> f64 {
        match kind {
            StatKind::Min => self.min,
            StatKind::Max => self.max,
            StatKind::Median => self.median,
            StatKind::AMean => self.amean,
            StatKind::GMean => self.gmean,
            StatKind::HMean => self.hmean,
            StatKind::Stddev => self.stddev,
            StatKind::CoefVar => self.coefvar,
        }
    }
}

/// The percentage column for `stat` (formats-spec.md 7.3): how much better `new`
/// is than `base`, positive meaning better.
///
/// With `d` = [`StatKind::better`]`(better)`:
///
/// * Higher is better (mmtests `pdiff`): `new·100/base − 100`; 0 if the
///   values are equal **or new == 0**; 100 if base == 0 (and new ≠ 0).
/// * Lower is better, and always for Stddev and CoefVar (mmtests
///   `pndiff`): `100 − new·100/base`; 0 if equal; 100 if new == 0; −99 if
///   base == 0 and new ≠ 0.
///
/// The special cases are mmtests' own, kept even where they look odd (a
/// higher-is-better value falling to 0 shows 0%). NaN in either input
/// gives NaN.
pub fn pct_delta(stat: StatKind, base: f64, new: f64, better: Better) -> f64 {
    if base.is_nan() || new.is_nan() {
        return f64::NAN;
    }
    match stat.better(better) {
        Better::Higher => {
            if new == base || new == 0.0 {
                0.0
            } else if base == 0.0 {
                100.0
            } else {
                new * 100.0 / base - 100.0
            }
        }
        Better::Lower => {
            if new == base {
                0.0
            } else if new == 0.0 {
                100.0
            } else if base == 0.0 {
                -99.0
            } else {
                100.0 - new * 100.0 / base
            }
        }
    }
}

/// The signed distance between two means in units of their facing band
/// half-widths (formats-spec.md 7.4):
///
/// ```text
///   d = (base.amean − new.amean) / S,   S = q·σ_new + q·σ_base,  q = 1.96
///   d = base.amean − new.amean           if S == 0
/// ```
///
/// `|d| > 1` means the `mean ± q·σ` bands do not overlap.
pub fn significance_d(base: &Stats, new: &Stats) -> f64 {
    let diff = base.amean - new.amean;
    let s = SIGNIFICANCE_Q * new.stddev + SIGNIFICANCE_Q * base.stddev;
    if s == 0.0 {
        diff
    } else {
        diff / s
    }
}

/// Whether `new`'s AMean differs significantly from `base`'s: the two
/// `amean ± 1.96·stddev` bands do not overlap (formats-spec.md 7.4). False when
/// either mean is NaN.
pub fn significant(base: &Stats, new: &Stats) -> bool {
    // NaN compares false, so undefined inputs are never significant.
    significance_d(base, new).abs() > 1.0
}

/// One measured quantity, sampled for every variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Row name in the table (`time`, `1`, `throughput`, ...).
    pub name: String,
    /// Unit of the samples (`s`, `us`, `ops/s`); carried into JSON only.
    pub unit: String,
    /// Which direction is an improvement.
    pub better: Better,
    /// Samples, one vector per variant, in the order of `variant_names`.
    pub per_variant: Vec<Vec<f64>>,
}

/// The numbers of one metric: per variant, its statistics, the percentage
/// of each against the first variant, and whether AMean is significant.
struct MetricCells {
    stats: Vec<Stats>,
    /// `[variant][StatKind::ALL index]`; all zero for the baseline.
    delta: Vec<[f64; 8]>,
    /// `None` for the baseline.
    d: Vec<Option<f64>>,
}

fn compute_cells(metric: &Metric, nvariants: usize) -> MetricCells {
    assert_eq!(
        metric.per_variant.len(),
        nvariants,
        "metric {:?} has samples for {} variants, expected {}",
        metric.name,
        metric.per_variant.len(),
        nvariants
    );
    let stats: Vec<Stats> = metric.per_variant.iter().map(|s| Stats::of(s)).collect();
    let mut delta = Vec::with_capacity(nvariants);
    let mut d = Vec::with_capacity(nvariants);
    for (i, st) in stats.iter().enumerate() {
        if i == 0 {
            delta.push([0.0; 8]);
            d.push(None);
            continue;
        }
        let base = &stats[0];
        let mut row = [0.0; 8];
        for (slot, kind) in row.iter_mut().zip(StatKind::ALL) {
            *slot = pct_delta(kind, base.get(kind), st.get(kind), metric.better);
        }
        delta.push(row);
        d.push(Some(significance_d(base, st)));
    }
    MetricCells { stats, delta, d }
}

/// C `printf("%<width>.<prec>f")`, including its `nan`/`inf` spellings.
fn fmt_fixed(x: f64, width: usize, prec: usize) -> String {
    if x.is_nan() {
        format!("{:>width$}", "nan")
    } else if x.is_infinite() {
        format!("{:>width$}", if x < 0.0 { "-inf" } else { "inf" })
    } else {
        format!("{x:>width$.prec$}")
    }
}

/// Renders the comparison table (formats-spec.md 7.1, with the deviations in the
/// module doc): a title line, one header line, then for each statistic in
/// [`StatKind::ALL`] order one row per metric. Every line ends in `\n`.
/// `decimals` is the `%12.<p>f` precision of the values; percentages always
/// have two decimals.
///
/// # Panics
///
/// If a metric's `per_variant` does not have one entry per variant name.
pub fn render_table(
    title: &str,
    variant_names: &[&str],
    metrics: &[Metric],
    decimals: usize,
) -> String {
    let cells: Vec<MetricCells> = metrics
        .iter()
        .map(|m| compute_cells(m, variant_names.len()))
        .collect();
    let name_width = metrics.iter().map(|m| m.name.len()).max().unwrap_or(0);
    let label_width = STAT_LABEL_WIDTH + 1 + name_width;

    let mut out = String::new();
    out.push_str(title);
    out.push('\n');
    out.push_str(&" ".repeat(label_width));
    for name in variant_names {
        let _ = write!(out, "{name:>COLUMN_WIDTH$}");
    }
    out.push('\n');

    for (k, kind) in StatKind::ALL.into_iter().enumerate() {
        for (metric, c) in metrics.iter().zip(&cells) {
            let _ = write!(
                out,
                "{:<STAT_LABEL_WIDTH$} {:<name_width$}",
                kind.label(),
                metric.name
            );
            for (v, st) in c.stats.iter().enumerate() {
                out.push_str(&fmt_fixed(st.get(kind), 12, decimals));
                let pct = fmt_fixed(c.delta[v][k], 7, 2);
                let marked = kind == StatKind::AMean && c.d[v].is_some_and(|d| d.abs() > 1.0);
                if marked {
                    let _ = write!(out, " *{pct}%*");
                } else {
                    let _ = write!(out, " ({pct}%)");
                }
            }
            out.push('\n');
        }
    }
    out
}

/// A float as JSON; NaN and infinities become `null`.
fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// The same numbers as [`render_table`], unrounded, as JSON:
///
/// ```text
/// { "title": .., "variants": [names..],
///   "metrics": [ { "name", "unit", "better": "lower"|"higher",
///                  "variants": [ { "variant", "n",
///                                  "stats":     {"min", "max", "median", "amean",
///                                                "gmean", "hmean", "stddev", "coefvar"},
///                                  "delta_pct": {same keys; all 0 for the baseline},
///                                  "significant": bool,
///                                  "significance_d": number|null (null for the baseline) } ] } ] }
/// ```
///
/// Undefined values (NaN) are `null`.
///
/// # Panics
///
/// As [`render_table`].
pub fn render_json(title: &str, variant_names: &[&str], metrics: &[Metric]) -> Value {
    let mut out_metrics = Vec::with_capacity(metrics.len());
    for metric in metrics {
        let c = compute_cells(metric, variant_names.len());
        let mut variants = Vec::with_capacity(variant_names.len());
        for (v, name) in variant_names.iter().enumerate() {
            let st = &c.stats[v];
            let mut stats = Map::new();
            let mut delta = Map::new();
            for (k, kind) in StatKind::ALL.into_iter().enumerate() {
                stats.insert(kind.key().into(), num(st.get(kind)));
                delta.insert(kind.key().into(), num(c.delta[v][k]));
            }
            variants.push(json!({
                "variant": name,
                "n": st.n,
                "stats": stats,
                "delta_pct": delta,
                "significant": c.d[v].is_some_and(|d| d.abs() > 1.0),
                "significance_d": c.d[v].map_or(Value::Null, num),
            }));
        }
        out_metrics.push(json!({
            "name": metric.name,
            "unit": metric.unit,
            "better": metric.better.as_str(),
            "variants": variants,
        }));
    }
    json!({
        "title": title,
        "variants": variant_names,
        "metrics": out_metrics,
    })
}

/// The `%12.<p>f` precision of a metric in [`render_posting_table`]: four
/// significant digits of its smallest non-zero statistic (at least 2
/// decimals, at most 6), so that a 0.021 s time prints as `0.02100`, not
/// `0.02`.
pub fn metric_decimals(metric: &Metric) -> usize {
    let smallest = metric
        .per_variant
        .iter()
        .map(|s| Stats::of(s))
        .flat_map(|st| [st.min, st.median, st.amean])
        .filter(|x| x.is_finite() && *x != 0.0)
        .map(f64::abs)
        .fold(f64::INFINITY, f64::min);
    if !smallest.is_finite() {
        return 2;
    }
    let exp = smallest.log10().floor() as i32;
    (3 - exp).clamp(2, 6) as usize
}

/// Whether every variant shows the same value (NaN equals NaN here).
fn same(values: &[f64]) -> bool {
    values
        .iter()
        .all(|v| v == &values[0] || (v.is_nan() && values[0].is_nan()))
}

/// The comparison table for a patch posting: [`render_table`]'s rows and
/// cells, with
///
/// * `legend` lines under the title (`base: ...`, `new: ...`) so that the
///   column headers can stay short (`base`, `new`);
/// * each metric's precision from its magnitude ([`metric_decimals`]);
/// * unless `all_rows`, rows whose value is the same for every variant
///   dropped, and a closing line listing the metrics that were constant in
///   every run (with their value) and how many other rows were dropped.
pub fn render_posting_table(
    title: &str,
    legend: &[String],
    variant_names: &[&str],
    metrics: &[Metric],
    all_rows: bool,
) -> String {
    let cells: Vec<MetricCells> = metrics
        .iter()
        .map(|m| compute_cells(m, variant_names.len()))
        .collect();
    let decimals: Vec<usize> = metrics.iter().map(metric_decimals).collect();
    // Metrics whose every sample of every variant is the same value.
    let constant: Vec<bool> = metrics
        .iter()
        .map(|m| {
            let all: Vec<f64> = m.per_variant.iter().flatten().copied().collect();
            !all.is_empty() && same(&all)
        })
        .collect();
    let shown = |mi: usize, kind: StatKind| -> bool {
        if all_rows {
            return true;
        }
        if constant[mi] {
            return false;
        }
        let values: Vec<f64> = cells[mi].stats.iter().map(|s| s.get(kind)).collect();
        !same(&values)
    };
    let name_width = metrics
        .iter()
        .enumerate()
        .filter(|(i, _)| StatKind::ALL.into_iter().any(|k| shown(*i, k)))
        .map(|(_, m)| m.name.len())
        .max()
        .unwrap_or(0);
    let label_width = STAT_LABEL_WIDTH + 1 + name_width;

    let mut out = String::new();
    out.push_str(title);
    out.push('\n');
    for l in legend {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&" ".repeat(label_width));
    for name in variant_names {
        let _ = write!(out, "{name:>COLUMN_WIDTH$}");
    }
    out.push('\n');
    let mut dropped = 0usize;
    for (k, kind) in StatKind::ALL.into_iter().enumerate() {
        for (mi, (metric, c)) in metrics.iter().zip(&cells).enumerate() {
            if !shown(mi, kind) {
                if !constant[mi] {
                    dropped += 1;
                }
                continue;
            }
            let _ = write!(
                out,
                "{:<STAT_LABEL_WIDTH$} {:<name_width$}",
                kind.label(),
                metric.name
            );
            for (v, st) in c.stats.iter().enumerate() {
                // CoefVar is a percentage: two decimals like the deltas.
                let p = if kind == StatKind::CoefVar {
                    2
                } else {
                    decimals[mi]
                };
                out.push_str(&fmt_fixed(st.get(kind), 12, p));
                let pct = fmt_fixed(c.delta[v][k], 7, 2);
                let marked = kind == StatKind::AMean && c.d[v].is_some_and(|d| d.abs() > 1.0);
                if marked {
                    let _ = write!(out, " *{pct}%*");
                } else {
                    let _ = write!(out, " ({pct}%)");
                }
            }
            out.push('\n');
        }
    }
    if !all_rows {
        let consts: Vec<String> = metrics
            .iter()
            .enumerate()
            .filter(|(i, _)| constant[*i])
            .map(|(i, m)| {
                let v = m
                    .per_variant
                    .iter()
                    .flatten()
                    .next()
                    .copied()
                    .unwrap_or(f64::NAN);
                format!("{} {}", m.name, fmt_fixed(v, 0, decimals[i]))
            })
            .collect();
        if !consts.is_empty() {
            let _ = writeln!(
                out,
                "Same in every run (rows left out): {}",
                consts.join(", ")
            );
        }
        if dropped > 0 {
            let _ = writeln!(
                out,
                "{dropped} more rows with the same value on every side left out; --all-rows prints every row"
            );
        } else if !consts.is_empty() {
            out.push_str("--all-rows prints every row\n");
        }
    }
    out
}
