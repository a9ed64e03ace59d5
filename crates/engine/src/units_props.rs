//! Property tests of the one duration/count/rate parser (a child module of
//! `units`): any string or number never panics, only errors; what is
//! accepted respects the bounds (a duration never exceeds the 30-day
//! limit, a rate is finite and positive); and values written the ordinary
//! ways read back as what was written. Each bug found has a named test in
//! `units::tests`.

use super::*;
use proptest::prelude::*;

use crate::props::config;

const UNITS: &[&str] = &[
    "", "s", "ms", "us", "µs", "m", "min", "h", "k", "K", "M", "d", "ns", "sec", "e", "_", "S",
];

/// Numbers written the ways a person (or a fuzzer) might.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<f64>().prop_map(|v| format!("{v}")),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        (0u32..1_000_000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        "[-+]?[0-9_.eE]{0,12}",
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-0".to_string()),
    ]
}

/// A number, optional whitespace, a unit (real or not), more whitespace.
fn written() -> impl Strategy<Value = String> {
    (
        number(),
        "[ \t]{0,2}",
        prop::sample::select(UNITS),
        "[ \t]{0,2}",
    )
        .prop_map(|(n, sp, u, sp2)| format!("{sp2}{n}{sp}{u}{sp2}"))
}

fn anything() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "\\PC{0,24}", written()]
}

/// Checks every parser on `s`: no panic, and what is accepted is in bounds.
fn check_all(s: &str) {
    if let Ok(d) = parse_duration(s) {
        assert!(d <= MAX_DURATION, "{s:?} gave {d:?}, over the 30-day limit");
    }
    if let Ok(r) = parse_rate(s) {
        assert!(r.is_finite() && r > 0.0, "{s:?} gave the rate {r}");
    }
    if let Some(v) = parse_scaled(s) {
        assert!(v.is_finite(), "{s:?} scaled to {v}");
    }
    let _ = parse_count(s);
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn any_string_never_panics_and_stays_in_bounds(s in anything()) {
        check_all(&s);
    }

    #[test]
    fn any_number_of_seconds_is_bounded(
        secs in prop_oneof![any::<f64>(), -1e3..1e8f64, Just(MAX_DURATION.as_secs_f64())]
    ) {
        match seconds(secs, "x") {
            Ok(d) => prop_assert!((0.0..=MAX_DURATION.as_secs_f64()).contains(&secs) && d <= MAX_DURATION),
            Err(_) => prop_assert!(secs.is_nan() || secs < 0.0 || secs > MAX_DURATION.as_secs_f64()),
        }
    }

    /// Every duration within the limit, in every unit, is accepted and read
    /// back to within rounding; one past the limit is refused.
    #[test]
    fn durations_read_back(micros in 0u64..=MAX_DURATION.as_micros() as u64, unit in 0usize..5) {
        let (suffix, per) = [("us", 1u64), ("ms", 1_000), ("s", 1_000_000), ("m", 60_000_000), ("h", 3_600_000_000)][unit];
        let shown = format!("{}{suffix}", micros as f64 / per as f64);
        let d = parse_duration(&shown).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let diff = d.as_micros().abs_diff(u128::from(micros));
        prop_assert!(diff <= 1, "{} gave {:?}", shown, d);
        let over = format!("{}{suffix}", (MAX_DURATION.as_micros() as f64 / per as f64) * 1.000001);
        prop_assert!(matches!(parse_duration(&over), Err(UnitError::DurationTooLong(_))));
    }

    /// Whole counts read back exactly, with or without '_' separators and a k suffix.
    #[test]
    fn counts_read_back(n in any::<u64>(), k in 0u64..(u64::MAX / 1000)) {
        prop_assert_eq!(parse_count(&n.to_string()), Ok(n));
        let grouped = n
            .to_string()
            .as_bytes()
            .rchunks(3)
            .rev()
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("_");
        prop_assert_eq!(parse_count(&grouped), Ok(n));
        prop_assert_eq!(parse_count(&format!("{k}k")), Ok(k * 1000));
    }
}
