//! Simulated time.
//!
//! All model state uses integer nanoseconds ([`Nanos`]); there is no `f64` in
//! the simulator's state, so a run is reproducible bit for bit.

/// Simulated time or a duration, in nanoseconds.
pub type Nanos = u64;

/// One microsecond in nanoseconds.
pub const NSEC_PER_USEC: Nanos = 1_000;
/// One millisecond in nanoseconds.
pub const NSEC_PER_MSEC: Nanos = 1_000_000;
/// One second in nanoseconds.
pub const NSEC_PER_SEC: Nanos = 1_000_000_000;

/// Parses a duration with a unit (`250us`, `500ms`, `0.5s`, `10s`, `100ns`,
/// `2m` or `2min`, `1h`);
/// a bare number is seconds, as in rt-app's `duration`.
///
/// Returns a message suitable for a one-line error on failure.
pub fn parse_duration(text: &str) -> Result<Nanos, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u128 = match unit.trim() {
        "" | "s" => NSEC_PER_SEC as u128,
        "ms" => NSEC_PER_MSEC as u128,
        "us" | "µs" => NSEC_PER_USEC as u128,
        "ns" => 1,
        "m" | "min" => 60 * NSEC_PER_SEC as u128,
        "h" => 3600 * NSEC_PER_SEC as u128,
        other => {
            return Err(format!(
                "unknown time unit '{other}' in '{t}' (use ns, us, ms, s, m or h)"
            ))
        }
    };
    if num.is_empty() || num.matches('.').count() > 1 || num == "." {
        return Err(format!("'{t}' is not a duration"));
    }
    // Exact decimal arithmetic: integer part and up to 9 fraction digits.
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    let int: u128 = if int_part.is_empty() {
        0
    } else {
        int_part
            .parse()
            .map_err(|_| format!("'{t}' is not a duration"))?
    };
    let mut frac_ns: u128 = 0;
    let mut denom: u128 = 1;
    for (i, c) in frac_part.chars().enumerate() {
        if i >= 12 {
            break;
        }
        frac_ns = frac_ns * 10 + c.to_digit(10).unwrap() as u128;
        denom *= 10;
    }
    let total = int
        .checked_mul(scale)
        .and_then(|v| v.checked_add(frac_ns * scale / denom))
        .ok_or_else(|| format!("duration '{t}' is too large"))?;
    if total > u64::MAX as u128 / 4 {
        return Err(format!("duration '{t}' is too large"));
    }
    Ok(total as Nanos)
}

/// Formats nanoseconds as seconds, exactly and without trailing zeros:
/// `86400`, `2.5`, `0.000001`.
pub fn fmt_secs_exact(ns: Nanos) -> String {
    let whole = ns / NSEC_PER_SEC;
    match ns % NSEC_PER_SEC {
        0 => whole.to_string(),
        frac => format!("{whole}.{}", format!("{frac:09}").trim_end_matches('0')),
    }
}

/// Formats nanoseconds as seconds with six decimals (ftrace style).
pub fn fmt_secs_us(ns: Nanos) -> String {
    format!(
        "{}.{:06}",
        ns / NSEC_PER_SEC,
        (ns % NSEC_PER_SEC) / NSEC_PER_USEC
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration("0.5s"), Ok(500_000_000));
        assert_eq!(parse_duration("10"), Ok(10_000_000_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("7ns"), Ok(7));
        assert_eq!(parse_duration("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1.5min"), Ok(90_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
    }

    #[test]
    fn seconds_are_printed_exactly() {
        assert_eq!(fmt_secs_exact(86_400 * NSEC_PER_SEC), "86400");
        assert_eq!(fmt_secs_exact(2_500_000_000), "2.5");
        assert_eq!(fmt_secs_exact(1_000), "0.000001");
        assert_eq!(fmt_secs_exact(0), "0");
    }

    #[test]
    fn bad_durations_are_rejected() {
        assert!(parse_duration("").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-5s").is_err());
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("99999999999999999999s").is_err());
    }
}
