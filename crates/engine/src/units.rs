//! The one parser for the human-friendly numbers that flags and study files
//! share: durations (`250us`, `500ms`, `5s`, `2m`, `2min`, `1h`, or a bare
//! number of seconds) and counts and rates (`1000`, `10k`, `1.5k`, `1m` for a
//! million, `1_000`). One set of suffixes and one set of bounds, so a value
//! means the same thing on the command line and in a study file. Sizes in
//! bytes (`64`, `4k`, `1MiB`) are binary: a `k` of bytes is 1024, as a
//! size always is. Errors name the value and say what would have been
//! accepted.

use std::time::Duration;

/// The longest duration anything accepts: 30 days. Longer is a typo (and
/// `1e30` seconds would overflow every clock it is added to).
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// A value that is not a duration, count or rate, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not a duration (e.g. 500ms, 10s, 2m; units us, ms, s, m or min, h)")]
    Duration(String),
    #[error("'{0}' is a negative duration")]
    NegativeDuration(String),
    #[error("'{0}' is longer than the 30-day limit")]
    DurationTooLong(String),
    #[error("'{0}' is not a count (e.g. 1000, 10k, 1m)")]
    Count(String),
    #[error("'{0}' is not a whole, non-negative count")]
    FractionalCount(String),
    #[error("'{0}' is too large a count (at most 18446744073709551615)")]
    CountTooLarge(String),
    #[error("'{0}' is not a positive rate (e.g. 100, 2.5k)")]
    Rate(String),
    #[error("'{0}' is not a size in bytes (e.g. 64, 4k, 1MiB; units B, k or KiB, m or MiB)")]
    Size(String),
}

/// Parses `250us`, `500ms`, `5s`, `1.5m`, `2min`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let t = s.trim();
    // A bare number of seconds may have an exponent ('1e30'), whose 'e'
    // would otherwise be taken for a unit and reported as "not a duration".
    if let Ok(v) = t.replace('_', "").parse::<f64>() {
        return seconds(v, s);
    }
    let split = t
        .find(|c: char| c.is_alphabetic() || c.is_whitespace())
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || UnitError::Duration(s.to_string());
    let v: f64 = num.replace('_', "").parse().map_err(|_| bad())?;
    let scale = match unit.trim_start() {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    seconds(v * scale, s)
}

/// Checks a number of seconds (as a study file may write it) against the
/// same bounds as [`parse_duration`]; `shown` is the value as written.
pub fn seconds(secs: f64, shown: &str) -> Result<Duration, UnitError> {
    if secs.is_nan() {
        return Err(UnitError::Duration(shown.to_string()));
    }
    if secs < 0.0 {
        return Err(UnitError::NegativeDuration(shown.to_string()));
    }
    if secs > MAX_DURATION.as_secs_f64() {
        return Err(UnitError::DurationTooLong(shown.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses `10000`, `10k`, `1.5k`, `2m` (million) or `1_000`.
pub fn parse_count(s: &str) -> Result<u64, UnitError> {
    // Whole numbers are read as integers: through an f64 anything above
    // 2^53 would be silently rounded (9007199254740993 read as ...992).
    let (digits, scale) = split_scale(s.trim());
    let digits = digits.replace('_', "");
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(scale))
            .ok_or_else(|| UnitError::CountTooLarge(s.to_string()));
    }
    let v = parse_scaled(s).ok_or_else(|| UnitError::Count(s.to_string()))?;
    if v.fract() != 0.0 || v < 0.0 {
        return Err(UnitError::FractionalCount(s.to_string()));
    }
    // 2^64 is exactly representable; anything at or above it does not fit.
    if v >= u64::MAX as f64 {
        return Err(UnitError::CountTooLarge(s.to_string()));
    }
    Ok(v as u64)
}

/// A rate in requests per second: `500`, `2.5k`.
pub fn parse_rate(s: &str) -> Result<f64, UnitError> {
    match parse_scaled(s) {
        Some(v) if v > 0.0 => Ok(v),
        _ => Err(UnitError::Rate(s.to_string())),
    }
}

/// A size in bytes: `64`, `64B`, `4k`/`4KiB` (4096), `1m`/`1MiB`
/// (1,048,576), `1.5k` (1536); a whole number of bytes, 0 included (the
/// caller sets its bounds).
pub fn parse_size(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(s.to_string());
    let t = s.trim();
    let split = t.find(|c: char| c.is_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit {
        "" | "B" => 1,
        "k" | "K" | "KiB" => 1 << 10,
        "m" | "M" | "MiB" => 1 << 20,
        _ => return Err(bad()),
    };
    let num = num.trim().replace('_', "");
    if !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()) {
        return num
            .parse::<u64>()
            .ok()
            .and_then(|v| v.checked_mul(scale))
            .ok_or_else(bad);
    }
    let v: f64 = num.parse().map_err(|_| bad())?;
    let bytes = v * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes.fract() != 0.0 || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// A finite number with an optional `k` (thousand) or `m` (million) suffix.
pub fn parse_scaled(s: &str) -> Option<f64> {
    let (num, scale) = split_scale(s.trim());
    let v: f64 = num.replace('_', "").parse().ok()?;
    let v = v * scale as f64;
    v.is_finite().then_some(v)
}

/// Splits a `k` (thousand) or `m` (million) suffix off a trimmed value.
fn split_scale(s: &str) -> (&str, u64) {
    match s.char_indices().last() {
        Some((i, 'k' | 'K')) => (&s[..i], 1_000),
        Some((i, 'm' | 'M')) => (&s[..i], 1_000_000),
        _ => (s, 1),
    }
}

#[cfg(test)]
#[path = "units_props.rs"]
mod props;

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by `props::counts_read_back`: counts went through an f64, so
    /// any above 2^53 was silently rounded to a neighbour.
    #[test]
    fn large_counts_are_exact() {
        assert_eq!(parse_count("9007199254740993"), Ok(9_007_199_254_740_993));
        assert_eq!(parse_count("771549857714673k"), Ok(771_549_857_714_673_000));
        assert_eq!(
            parse_count("9_007_199_254_740_993"),
            Ok(9_007_199_254_740_993)
        );
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration(" 1.5s "), Ok(Duration::from_millis(1500)));
        assert!(matches!(
            parse_duration("5 parsecs"),
            Err(UnitError::Duration(_))
        ));
        assert!(matches!(
            parse_duration("-1s"),
            Err(UnitError::NegativeDuration(_))
        ));
        assert!(matches!(
            parse_duration("99999999h"),
            Err(UnitError::DurationTooLong(_))
        ));
        assert!(matches!(
            parse_duration("1e30"),
            Err(UnitError::DurationTooLong(_))
        ));
        assert_eq!(parse_duration("1e3"), Ok(Duration::from_secs(1000)));
        assert!(parse_duration("NaN").is_err());
        assert!(parse_duration("inf").is_err());
        assert!(parse_duration("30d")
            .unwrap_err()
            .to_string()
            .contains("'30d'"));
    }

    #[test]
    fn seconds_share_the_bounds() {
        assert_eq!(seconds(2.5, "2.5"), Ok(Duration::from_millis(2500)));
        assert!(matches!(
            seconds(1e30, "1e30"),
            Err(UnitError::DurationTooLong(_))
        ));
        assert!(matches!(
            seconds(-1.0, "-1"),
            Err(UnitError::NegativeDuration(_))
        ));
        assert!(seconds(f64::NAN, "nan").is_err());
    }

    #[test]
    fn sizes_are_binary_and_whole() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("64B"), Ok(64));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("16m"), Ok(16 << 20));
        assert_eq!(parse_size("0"), Ok(0));
        for bad in [
            "", "k", "-1", "1.5", "4kB", "4MB", "1GiB", "lots", "NaN", "1e30k",
        ] {
            assert_eq!(parse_size(bad), Err(UnitError::Size(bad.into())), "{bad}");
        }
    }

    #[test]
    fn counts_and_rates() {
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1m"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("1e20").is_err());
        assert!(parse_count("ten")
            .unwrap_err()
            .to_string()
            .contains("'ten'"));
        assert_eq!(parse_count("1.5k"), Ok(1500));
        assert_eq!(parse_count("18446744073709551615"), Ok(u64::MAX));
        assert!(matches!(
            parse_count("18446744073709551616"),
            Err(UnitError::CountTooLarge(_))
        ));
        assert!(parse_count("18446744073709552k").is_err());
        assert!(parse_count("_").is_err());
        assert_eq!(parse_rate("2.5k"), Ok(2500.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-5").is_err());
    }
}
