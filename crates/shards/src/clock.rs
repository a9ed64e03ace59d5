//! Wall-clock instants as people write them: `--start-at` takes Unix
//! milliseconds or RFC 3339 (`2025-06-01T12:00:00Z`, `...T14:00:00.250+02:00`),
//! and reports print RFC 3339 in UTC with milliseconds. A start more than
//! [`MAX_START_AHEAD`] away is refused: it is a slip (microseconds given for
//! milliseconds, a wrong year), and would sleep silently for that long.

use std::time::{Duration, SystemTime, UNIX_EPOCH};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Text that is not a wall-clock instant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a time: give Unix milliseconds (1735689600000) or RFC 3339 (2025-01-01T00:00:00Z)"
)]
pub struct TimeError(pub String);

/// How far ahead a `--start-at` may be.
pub const MAX_START_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// A `--start-at` that is not a time, or too far ahead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    NotATime(#[from] TimeError),
    #[error("'{given}' is {days:.1} days from now; a start may be at most a day ahead{hint}")]
    TooFar {
        given: String,
        days: f64,
        /// What the likely slip was, for a number.
        hint: &'static str,
    },
}

/// Parses a `--start-at`: a time as [`parse_time`] reads it, at most
/// [`MAX_START_AHEAD`] from now (any time past starts at once, late).
pub fn parse_start_at(s: &str) -> Result<SystemTime, StartError> {
    start_at_from(s, SystemTime::now())
}

fn start_at_from(s: &str, now: SystemTime) -> Result<SystemTime, StartError> {
    let at = parse_time(s)?;
    match at.duration_since(now) {
        Ok(ahead) if ahead > MAX_START_AHEAD => Err(StartError::TooFar {
            given: s.to_string(),
            days: ahead.as_secs_f64() / 86_400.0,
            hint: if s.trim().bytes().all(|b| b.is_ascii_digit()) {
                " (in Unix milliseconds, not microseconds)"
            } else {
                ""
            },
        }),
        _ => Ok(at),
    }
}

/// Parses Unix milliseconds or an RFC 3339 date-time with a zone.
pub fn parse_time(s: &str) -> Result<SystemTime, TimeError> {
    let t = s.trim();
    let bad = || TimeError(s.to_string());
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let ms: u64 = t.parse().map_err(|_| bad())?;
        return Ok(UNIX_EPOCH + Duration::from_millis(ms));
    }
    rfc3339(t).ok_or_else(bad)
}

/// An RFC 3339 date-time with its zone (a space for the `T`, as RFC 3339
/// allows, is read too), by the `time` crate.
fn rfc3339(t: &str) -> Option<SystemTime> {
    let mut text = t.to_string();
    if text.as_bytes().get(10) == Some(&b' ') {
        text.replace_range(10..11, "T");
    }
    let at = OffsetDateTime::parse(&text, &Rfc3339).ok()?;
    // Seconds and nanoseconds apart: nanoseconds alone pass u64 in 2554.
    let secs = u64::try_from(at.unix_timestamp()).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, at.nanosecond()))
}

/// `2025-01-01T00:00:00.250Z`.
pub fn format_time(t: SystemTime) -> String {
    let at = OffsetDateTime::from(t);
    let whole = at
        .replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .unwrap_or_default();
    format!(
        "{}.{:03}Z",
        whole.trim_end_matches('Z'),
        at.nanosecond() / 1_000_000
    )
}

/// Seconds since the Unix epoch, as the interval log writes them.
pub fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_forms_and_round_trips() {
        let t = parse_time("1735689600250").unwrap();
        assert_eq!(format_time(t), "2025-01-01T00:00:00.250Z");
        assert_eq!(parse_time("2025-01-01T00:00:00.250Z").unwrap(), t);
        assert_eq!(parse_time("2025-01-01T02:00:00.25+02:00").unwrap(), t);
        assert_eq!(
            format_time(parse_time("2024-02-29T23:59:59Z").unwrap()),
            "2024-02-29T23:59:59.000Z"
        );
        for bad in [
            "",
            "soon",
            "2025-01-01",
            "2025-13-01T00:00:00Z",
            "2025-01-01T00:00:00",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_start_more_than_a_day_ahead_is_refused() {
        let now = parse_time("2026-01-01T00:00:00Z").unwrap();
        let ok = |s| start_at_from(s, now).is_ok();
        assert!(ok("2026-01-01T23:59:59Z"), "within a day");
        assert!(ok("2026-01-02T00:00:00Z"), "exactly a day");
        assert!(ok("2025-06-01T00:00:00Z"), "past: starts at once, late");
        let e = start_at_from("2026-01-02T00:00:01Z", now).unwrap_err();
        assert!(matches!(e, StartError::TooFar { .. }), "{e}");
        // Microseconds for milliseconds: about 56,000 years ahead.
        let e = start_at_from("1767225600000000", now).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("(in Unix milliseconds, not microseconds)"),
            "{e}"
        );
        let e = start_at_from("2999-01-01T00:00:00Z", now).unwrap_err();
        assert!(e.to_string().ends_with("at most a day ahead"), "{e}");
        let e = start_at_from("soon", now).unwrap_err();
        assert_eq!(e, StartError::NotATime(TimeError("soon".into())));
    }
}
