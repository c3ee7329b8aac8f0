//! Welch's two-sided t-test, with the incomplete beta function its
//! p-value needs.

/// The mean and the sample variance (0 for one value).
pub(super) fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 coefficients).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b), by its continued
/// fraction (modified Lentz), with the symmetry relation for convergence.
fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - inc_beta(1.0 - x, b, a);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    if d.abs() < tiny {
        d = tiny;
    }
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        // Even step.
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        d = if d.abs() < tiny { 1.0 / tiny } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < tiny {
            c = tiny;
        }
        f *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        d = if d.abs() < tiny { 1.0 / tiny } else { 1.0 / d };
        c = 1.0 + num / c;
        if c.abs() < tiny {
            c = tiny;
        }
        let delta = d * c;
        f *= delta;
        if (delta - 1.0).abs() < 1e-14 {
            break;
        }
    }
    front * f / a
}

/// Welch's two-sided t-test: (t, degrees of freedom, p). Two constant
/// samples give p = 0 when their means differ and 1 when they do not.
pub fn welch(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let se2 = va / na + vb / nb;
    if se2 <= 0.0 {
        return if ma == mb {
            (0.0, na + nb - 2.0, 1.0)
        } else {
            (f64::INFINITY.copysign(mb - ma), na + nb - 2.0, 0.0)
        };
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / ((va / na).powi(2) / (na - 1.0) + (vb / nb).powi(2) / (nb - 1.0));
    let p = inc_beta(df / (df + t * t), df / 2.0, 0.5);
    (t, df, p.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_known_values() {
        // Direct check of the p-value routine against the t distribution:
        // P(|T| > 2.306) = 0.05 at df = 8.
        let p = inc_beta(8.0 / (8.0 + 2.306 * 2.306), 4.0, 0.5);
        assert!((p - 0.05).abs() < 5e-4, "{p}");
        // P(|T| > 12.706) = 0.05 at df = 1.
        let p = inc_beta(1.0 / (1.0 + 12.706 * 12.706), 0.5, 0.5);
        assert!((p - 0.05).abs() < 5e-4, "{p}");
        let (_, _, p) = welch(&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]);
        assert!((p - 1.0).abs() < 1e-9);
        let (_, _, p) = welch(&[1.0, 1.0], &[2.0, 2.0]);
        assert_eq!(p, 0.0);
        let (t, df, p) = welch(&[10.0, 11.0, 12.0, 10.5], &[20.0, 21.0, 19.0, 20.5]);
        assert!(t > 10.0 && df > 5.0 && p < 1e-4, "{t} {df} {p}");
    }
}
