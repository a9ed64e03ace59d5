//! Wall-clock instants as people write them: `--start-at` takes Unix
//! milliseconds or RFC 3339 (`2025-06-01T12:00:00Z`, `...T14:00:00.250+02:00`),
//! and reports print RFC 3339 in UTC with milliseconds. A start more than
//! [`MAX_START_AHEAD`] away is refused: it is a slip (microseconds given for
//! milliseconds, a wrong year), and would sleep silently for that long.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

fn rfc3339(t: &str) -> Option<SystemTime> {
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = t.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut rest = &t[19..];
    let mut nanos = 0u64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos = frac[..digits].parse::<u64>().ok()? * 10u64.pow(9 - digits as u32);
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (h, m) = (num_in(rest, 1..3)?, num_in(rest, 4..6)?);
            sign * (h * 3600 + m * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_nanos(nanos))
}

fn num_in(s: &str, r: std::ops::Range<usize>) -> Option<i64> {
    let part = s.get(r)?;
    if part.bytes().all(|c| c.is_ascii_digit()) {
        part.parse().ok()
    } else {
        None
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `2025-01-01T00:00:00.250Z`.
pub fn format_time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60,
        d.subsec_millis()
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
