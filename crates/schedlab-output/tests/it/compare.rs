//! `compare`: statistics, percentages, significance and the mmtests-style
//! table (formats-spec.md section 7). Expected values are worked by hand in the
//! comments.

use schedlab_output::compare::*;

use crate::assert_text_eq;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

macro_rules! assert_close {
    ($a:expr, $b:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!(close(a, b), "{} = {a}, expected {b}", stringify!($a));
    }};
}

// ---------------------------------------------------------------- Stats

#[test]
fn stats_of_1_2_4() {
    let s = Stats::of(&[1.0, 2.0, 4.0]);
    assert_eq!(s.n, 3);
    assert_eq!(s.min, 1.0);
    assert_eq!(s.max, 4.0);
    // sorted 1, 2, 4: the middle one.
    assert_eq!(s.median, 2.0);
    // (1 + 2 + 4) / 3 = 7/3.
    assert_close!(s.amean, 7.0 / 3.0);
    // exp((ln 1 + ln 2 + ln 4) / 3) = exp(3 ln 2 / 3) = 2.
    assert_close!(s.gmean, 2.0);
    // 3 / (1 + 1/2 + 1/4) = 3 / (7/4) = 12/7 ≈ 1.7143.
    assert_close!(s.hmean, 12.0 / 7.0);
    // deviations from 7/3: −4/3, −1/3, 5/3; squares 16/9 + 1/9 + 25/9 = 42/9
    // = 14/3; / (n − 1) = 7/3; sqrt(7/3) ≈ 1.527525.
    assert_close!(s.stddev, (7.0f64 / 3.0).sqrt());
    assert!((s.stddev - 1.527525).abs() < 1e-6);
    // 100 · 1.527525 / 2.333333 ≈ 65.4654 %.
    assert_close!(s.coefvar, 100.0 * (7.0f64 / 3.0).sqrt() / (7.0 / 3.0));
    assert!((s.coefvar - 65.4654).abs() < 1e-4);
}

#[test]
fn stats_do_not_depend_on_sample_order() {
    let a = Stats::of(&[4.0, 1.0, 2.0]);
    let b = Stats::of(&[1.0, 2.0, 4.0]);
    assert_eq!(a.min, b.min);
    assert_eq!(a.max, b.max);
    assert_eq!(a.median, b.median);
    assert_close!(a.amean, b.amean);
    assert_close!(a.stddev, b.stddev);
}

#[test]
fn even_n_median_is_mean_of_the_two_middle_samples() {
    // sorted 1, 2, 3, 4: (2 + 3) / 2 = 2.5 (mmtests' 2nd-qrtle would pick a
    // single sample, not interpolate).
    let s = Stats::of(&[4.0, 1.0, 3.0, 2.0]);
    assert_eq!(s.median, 2.5);
    // amean 2.5; squares 2.25 + 0.25 + 0.25 + 2.25 = 5; / 3; sqrt ≈ 1.29099.
    assert_close!(s.stddev, (5.0f64 / 3.0).sqrt());
    // sorted 10, 20: 15.
    assert_eq!(Stats::of(&[20.0, 10.0]).median, 15.0);
}

#[test]
fn single_sample_has_zero_stddev_and_coefvar() {
    // n == 1: mmtests says NaN; we say 0 (module doc).
    let s = Stats::of(&[5.0]);
    assert_eq!(s.n, 1);
    for v in [s.min, s.max, s.median, s.amean, s.gmean, s.hmean] {
        assert_close!(v, 5.0);
    }
    assert_eq!(s.stddev, 0.0);
    assert_eq!(s.coefvar, 0.0);
}

#[test]
fn non_positive_samples_make_gmean_and_hmean_nan() {
    // 0 present: ln 0 and 1/0 undefined for these means.
    let s = Stats::of(&[0.0, 1.0, 2.0]);
    assert!(s.gmean.is_nan());
    assert!(s.hmean.is_nan());
    assert_eq!(s.min, 0.0);
    assert_close!(s.amean, 1.0);
    // negative present.
    let s = Stats::of(&[-1.0, 2.0, 3.0]);
    assert!(s.gmean.is_nan() && s.hmean.is_nan());
}

#[test]
fn zero_mean_gives_zero_coefvar() {
    // amean (−1 + 1) / 2 = 0 -> CoefVar 0; stddev sqrt((1 + 1) / 1) = √2.
    let s = Stats::of(&[-1.0, 1.0]);
    assert_eq!(s.amean, 0.0);
    assert_close!(s.stddev, 2.0f64.sqrt());
    assert_eq!(s.coefvar, 0.0);
}

#[test]
fn no_samples_gives_nan_everywhere() {
    let s = Stats::of(&[]);
    assert_eq!(s.n, 0);
    for k in StatKind::ALL {
        assert!(s.get(k).is_nan(), "{k:?}");
    }
}

#[test]
fn get_matches_fields_and_labels_are_the_published_ones() {
    let s = Stats::of(&[1.0, 2.0, 4.0]);
    let fields = [
        s.min, s.max, s.median, s.amean, s.gmean, s.hmean, s.stddev, s.coefvar,
    ];
    for (k, f) in StatKind::ALL.into_iter().zip(fields) {
        assert_eq!(s.get(k), f);
    }
    let labels: Vec<_> = StatKind::ALL.iter().map(|k| k.label()).collect();
    assert_eq!(
        labels,
        ["Min", "Max", "Median", "AMean", "GMean", "HMean", "Stddev", "CoefVar"]
    );
}

// ---------------------------------------------------------------- pct_delta

#[test]
fn lower_is_better_positive_when_new_is_smaller() {
    // pndiff = 100 − new·100/base: 100 − 95 = 5; 100 − 105 = −5.
    assert_close!(pct_delta(StatKind::AMean, 10.0, 9.5, Better::Lower), 5.0);
    assert_close!(pct_delta(StatKind::AMean, 10.0, 10.5, Better::Lower), -5.0);
    // The published table: tip AMean 208.29 vs series 215.36 ->
    // 100 − 21536/208.29 = 100 − 103.394... = −3.394...
    let p = pct_delta(StatKind::AMean, 208.29, 215.36, Better::Lower);
    assert_eq!(format!("{p:.2}"), "-3.39");
}

#[test]
fn higher_is_better_positive_when_new_is_larger() {
    // pdiff = new·100/base − 100: 105 − 100 = 5; 95 − 100 = −5.
    assert_close!(
        pct_delta(StatKind::AMean, 100.0, 105.0, Better::Higher),
        5.0
    );
    assert_close!(
        pct_delta(StatKind::AMean, 100.0, 95.0, Better::Higher),
        -5.0
    );
    // Min, Max, Median, GMean, HMean follow the metric too: 12/10 -> +20.
    for k in [
        StatKind::Min,
        StatKind::Max,
        StatKind::Median,
        StatKind::GMean,
        StatKind::HMean,
    ] {
        assert_close!(pct_delta(k, 10.0, 12.0, Better::Higher), 20.0);
        assert_close!(pct_delta(k, 10.0, 12.0, Better::Lower), -20.0);
    }
}

#[test]
fn stddev_and_coefvar_are_always_lower_is_better() {
    // Halving the spread is +50 % whatever the metric's direction.
    for better in [Better::Lower, Better::Higher] {
        assert_close!(pct_delta(StatKind::Stddev, 2.0, 1.0, better), 50.0);
        assert_close!(pct_delta(StatKind::CoefVar, 2.0, 1.0, better), 50.0);
        // Doubling it: 100 − 200 = −100.
        assert_close!(pct_delta(StatKind::Stddev, 1.0, 2.0, better), -100.0);
    }
}

#[test]
fn higher_is_better_special_cases() {
    let h = |b, n| pct_delta(StatKind::AMean, b, n, Better::Higher);
    assert_eq!(h(7.0, 7.0), 0.0); // equal
    assert_eq!(h(0.0, 0.0), 0.0); // equal, both zero
    assert_eq!(h(5.0, 0.0), 0.0); // new == 0 -> 0 (mmtests, not −100)
    assert_eq!(h(0.0, 5.0), 100.0); // base == 0, new != 0 -> 100
}

#[test]
fn lower_is_better_special_cases() {
    for k in [StatKind::AMean, StatKind::Stddev, StatKind::CoefVar] {
        let l = |b, n| pct_delta(k, b, n, Better::Lower);
        assert_eq!(l(7.0, 7.0), 0.0); // equal
        assert_eq!(l(0.0, 0.0), 0.0); // equal, both zero
        assert_eq!(l(5.0, 0.0), 100.0); // new == 0 -> 100
        assert_eq!(l(0.0, 5.0), -99.0); // base == 0, new != 0 -> −99
    }
    // Stddev with a higher-is-better metric takes the same path.
    assert_eq!(pct_delta(StatKind::Stddev, 0.0, 5.0, Better::Higher), -99.0);
    assert_eq!(pct_delta(StatKind::Stddev, 5.0, 0.0, Better::Higher), 100.0);
}

#[test]
fn nan_input_gives_nan_delta() {
    assert!(pct_delta(StatKind::GMean, f64::NAN, 1.0, Better::Lower).is_nan());
    assert!(pct_delta(StatKind::HMean, 1.0, f64::NAN, Better::Higher).is_nan());
}

// ---------------------------------------------------------------- significance

#[test]
fn clearly_separated_means_are_significant() {
    // base 9.9, 10, 10.1: mean 10, σ 0.1. new 19.8, 20, 20.2: mean 20, σ 0.2.
    // d = (10 − 20) / (1.96·0.2 + 1.96·0.1) = −10 / 0.588 ≈ −17.0.
    let base = Stats::of(&[9.9, 10.0, 10.1]);
    let new = Stats::of(&[19.8, 20.0, 20.2]);
    assert!((significance_d(&base, &new) + 17.0068).abs() < 1e-3);
    assert!(significant(&base, &new));
    assert!(significant(&new, &base));
}

#[test]
fn overlapping_bands_are_not_significant() {
    // base 8, 10, 12: mean 10, σ 2. new 9, 11, 13: mean 11, σ 2.
    // d = −1 / (1.96·4) ≈ −0.128.
    let base = Stats::of(&[8.0, 10.0, 12.0]);
    let new = Stats::of(&[9.0, 11.0, 13.0]);
    assert!((significance_d(&base, &new) + 1.0 / 7.84).abs() < 1e-12);
    assert!(!significant(&base, &new));
}

#[test]
fn significance_threshold_is_band_overlap_not_standard_error() {
    // Both σ = √2 (samples m ± 1), so S = 1.96·2√2 ≈ 5.5437.
    // Mean gap 5.6 -> |d| ≈ 1.010 > 1: bands just apart.
    // Mean gap 5.5 -> |d| ≈ 0.992: bands just overlap. (With σ/√n the
    // second would be significant; mmtests does not divide by √n.)
    let base = Stats::of(&[9.0, 11.0]);
    assert!(significant(&base, &Stats::of(&[14.6, 16.6])));
    assert!(!significant(&base, &Stats::of(&[14.5, 16.5])));
}

#[test]
fn zero_spread_uses_the_raw_difference() {
    // S = 0: d = base − new. |5 − 5.5| = 0.5 ≤ 1; |5 − 7| = 2 > 1.
    let base = Stats::of(&[5.0]);
    assert_eq!(significance_d(&base, &Stats::of(&[5.5])), -0.5);
    assert!(!significant(&base, &Stats::of(&[5.5])));
    assert!(significant(&base, &Stats::of(&[7.0, 7.0])));
}

#[test]
fn undefined_means_are_never_significant() {
    assert!(!significant(&Stats::of(&[]), &Stats::of(&[1.0])));
}

// ---------------------------------------------------------------- rendering

/// Three variants, a lower-is-better and a higher-is-better metric.
fn demo_metrics() -> Vec<Metric> {
    vec![
        Metric {
            name: "time".into(),
            unit: "s".into(),
            better: Better::Lower,
            per_variant: vec![
                vec![1.0, 2.0, 4.0],
                vec![0.5, 1.0, 2.0],
                vec![2.0, 2.0, 2.0],
            ],
        },
        Metric {
            name: "ops".into(),
            unit: "ops/s".into(),
            better: Better::Higher,
            per_variant: vec![
                vec![8.0, 10.0, 12.0],
                vec![20.0, 20.2, 19.8],
                vec![0.0, 10.0, 12.0],
            ],
        },
    ]
}

const DEMO_VARIANTS: [&str; 3] = ["base", "new", "THROTTLE=unified"];

#[test]
fn table_snapshot() {
    // Hand checks of some cells:
    // * time, new = base / 2: every statistic but CoefVar halves -> 50.00 %
    //   (lower is better); CoefVar unchanged -> 0.00 %.
    // * AMean time, THROTTLE=unified: 100 − 2·100/(7/3) = 14.29.
    // * HMean time, THROTTLE=unified: 100 − 2·100/(12/7) = −16.67.
    // * Min ops, new: 19.8·100/8 − 100 = 147.50 (higher is better).
    // * Min ops, THROTTLE=unified: new == 0 -> 0.00 (mmtests' pdiff rule).
    // * GMean ops, base: cbrt(8·10·12) = cbrt(960) = 9.86.
    // * AMean ops, new: d = (10 − 20) / (1.96·(2 + 0.2)) = −2.32 -> marked.
    // * AMean time, new: d = (7/3 − 7/6) / (1.96·(1.5275 + 0.7638)) = 0.26.
    // * GMean/HMean ops, THROTTLE=unified: a 0 sample -> nan.
    // * Stddev ops, THROTTLE=unified: σ([0, 10, 12]) = sqrt(124/3) = 6.43;
    //   100 − 6.43·100/2 = −221.46.
    let want = "\
demo
                               base                    new       THROTTLE=unified
Min     time        1.00 (   0.00%)        0.50 (  50.00%)        2.00 (-100.00%)
Min     ops         8.00 (   0.00%)       19.80 ( 147.50%)        0.00 (   0.00%)
Max     time        4.00 (   0.00%)        2.00 (  50.00%)        2.00 (  50.00%)
Max     ops        12.00 (   0.00%)       20.20 (  68.33%)       12.00 (   0.00%)
Median  time        2.00 (   0.00%)        1.00 (  50.00%)        2.00 (   0.00%)
Median  ops        10.00 (   0.00%)       20.00 ( 100.00%)       10.00 (   0.00%)
AMean   time        2.33 (   0.00%)        1.17 (  50.00%)        2.00 (  14.29%)
AMean   ops        10.00 (   0.00%)       20.00 * 100.00%*        7.33 ( -26.67%)
GMean   time        2.00 (   0.00%)        1.00 (  50.00%)        2.00 (   0.00%)
GMean   ops         9.86 (   0.00%)       20.00 ( 102.73%)         nan (    nan%)
HMean   time        1.71 (   0.00%)        0.86 (  50.00%)        2.00 ( -16.67%)
HMean   ops         9.73 (   0.00%)       20.00 ( 105.54%)         nan (    nan%)
Stddev  time        1.53 (   0.00%)        0.76 (  50.00%)        0.00 ( 100.00%)
Stddev  ops         2.00 (   0.00%)        0.20 (  90.00%)        6.43 (-221.46%)
CoefVar time       65.47 (   0.00%)       65.47 (   0.00%)        0.00 ( 100.00%)
CoefVar ops        20.00 (   0.00%)        1.00 (  95.00%)       87.67 (-338.35%)
";
    let got = render_table("demo", &DEMO_VARIANTS, &demo_metrics(), 2);
    assert_text_eq!(got, want);
}

#[test]
fn table_column_widths() {
    let got = render_table("demo", &DEMO_VARIANTS, &demo_metrics(), 2);
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines.len(), 2 + 8 * 2);
    // Label column: "CoefVar" (7) + space + "time" (4) = 12.
    let label = 12;
    // Header: label-wide blank, then each name right-aligned in 23.
    let header = lines[1];
    assert_eq!(header.len(), label + 3 * COLUMN_WIDTH);
    assert!(header[..label].chars().all(|c| c == ' '));
    for (i, name) in DEMO_VARIANTS.iter().enumerate() {
        let cell = &header[label + i * COLUMN_WIDTH..label + (i + 1) * COLUMN_WIDTH];
        assert_eq!(cell, format!("{name:>23}"));
    }
    // Rows: label, then per variant %12.2f (12) + " (%7.2f%)" (11) = 23.
    for row in &lines[2..] {
        assert_eq!(row.len(), label + 3 * COLUMN_WIDTH, "{row:?}");
        for v in 0..3 {
            let cell = &row[label + v * COLUMN_WIDTH..label + (v + 1) * COLUMN_WIDTH];
            let (value, pct) = cell.split_at(12);
            assert!(value.trim().parse::<f64>().is_ok() || value.trim() == "nan");
            assert_eq!(pct.len(), 11);
            assert!(
                pct.starts_with(" (") && pct.ends_with("%)")
                    || pct.starts_with(" *") && pct.ends_with("%*"),
                "{pct:?}"
            );
        }
        // The baseline column always shows 0.00 %.
        assert_eq!(&row[label + 12..label + COLUMN_WIDTH], " (   0.00%)");
    }
}

#[test]
fn table_decimals_apply_to_values_not_percentages() {
    let m = [Metric {
        name: "1".into(),
        unit: "s".into(),
        better: Better::Lower,
        per_variant: vec![vec![0.2380], vec![0.2250]],
    }];
    let got = render_table("hackbench-process-pipes", &["vanilla", "patched"], &m, 4);
    // 100 − 0.2250·100/0.2380 = 5.46 (formats-spec.md 7.1, Min row).
    // n == 1 -> σ = 0 -> d = 0.013 raw difference, not significant.
    let min_row = got.lines().nth(2).unwrap();
    assert_eq!(
        min_row,
        "Min     1      0.2380 (   0.00%)      0.2250 (   5.46%)"
    );
    let stddev_row = got.lines().nth(8).unwrap();
    assert_eq!(
        stddev_row,
        "Stddev  1      0.0000 (   0.00%)      0.0000 (   0.00%)"
    );
}

#[test]
fn published_target_amean_and_stddev_rows() {
    // Two samples m ± σ/√2 have mean m and sample σ (|a − b| / √2), so this
    // rebuilds the posted tip (208.29, σ 1.02) and series (215.36, σ 7.37).
    // AMean: 100 − 21536/208.29 = −3.39 (series slower); d = −7.07 /
    // (1.96·(1.02 + 7.37)) = −0.43 -> bands overlap, not marked.
    // Stddev: 100 − 737/1.02 = −622.55.
    let pair = |m: f64, sd: f64| vec![m - sd / 2f64.sqrt(), m + sd / 2f64.sqrt()];
    let m = [Metric {
        name: "time".into(),
        unit: "s".into(),
        better: Better::Lower,
        per_variant: vec![pair(208.29, 1.02), pair(215.36, 7.37)],
    }];
    let got = render_table("hackbench", &["tip", "series"], &m, 2);
    let row = |label: &str| got.lines().find(|l| l.starts_with(label)).unwrap();
    assert_eq!(
        row("AMean"),
        "AMean   time      208.29 (   0.00%)      215.36 (  -3.39%)"
    );
    assert_eq!(
        row("Stddev"),
        "Stddev  time        1.02 (   0.00%)        7.37 (-622.55%)"
    );
}

#[test]
#[should_panic(expected = "expected 2")]
fn table_rejects_missing_variant_samples() {
    let m = [Metric {
        name: "t".into(),
        unit: "s".into(),
        better: Better::Lower,
        per_variant: vec![vec![1.0]],
    }];
    render_table("x", &["a", "b"], &m, 2);
}

#[test]
fn json_has_the_same_numbers() {
    let v = render_json("demo", &DEMO_VARIANTS, &demo_metrics());
    assert_eq!(v["title"], "demo");
    assert_eq!(v["variants"][2], "THROTTLE=unified");
    let time = &v["metrics"][0];
    assert_eq!(time["name"], "time");
    assert_eq!(time["unit"], "s");
    assert_eq!(time["better"], "lower");
    let base = &time["variants"][0];
    assert_eq!(base["variant"], "base");
    assert_eq!(base["n"], 3);
    assert_close!(base["stats"]["amean"].as_f64().unwrap(), 7.0 / 3.0);
    assert_close!(base["stats"]["hmean"].as_f64().unwrap(), 12.0 / 7.0);
    assert_eq!(base["delta_pct"]["amean"], 0.0);
    assert_eq!(base["significant"], false);
    assert!(base["significance_d"].is_null());
    // AMean time, THROTTLE=unified: 100 − 200/(7/3) = 100/7 ≈ 14.2857.
    let third = &time["variants"][2];
    assert_close!(third["delta_pct"]["amean"].as_f64().unwrap(), 100.0 / 7.0);
    let ops = &v["metrics"][1];
    assert_eq!(ops["better"], "higher");
    assert_eq!(ops["variants"][1]["significant"], true);
    // NaN -> null.
    assert!(ops["variants"][2]["stats"]["gmean"].is_null());
    assert!(ops["variants"][2]["delta_pct"]["hmean"].is_null());
    // Every statistic key is present, in table order.
    let keys: Vec<&str> = base["stats"]
        .as_object()
        .unwrap()
        .keys()
        .map(|s| s.as_str())
        .collect();
    assert_eq!(
        keys,
        ["min", "max", "median", "amean", "gmean", "hmean", "stddev", "coefvar"]
    );
}
