//! RFC3339 UTC timestamps (`2026-01-02T03:04:05Z`), formatted by the
//! `time` crate: the one date arithmetic of the workspace (the shards'
//! `--start-at` and the engine's certificate dates read it too).

use ::time::format_description::well_known::Rfc3339;
use ::time::OffsetDateTime;
use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as RFC3339 UTC with second precision.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    rfc3339_from_unix(secs)
}

/// The current time as RFC3339 UTC with milliseconds, so that events in
/// the same second still sort in order.
pub fn now_rfc3339_millis() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let secs = rfc3339_from_unix(ms.div_euclid(1000));
    format!("{}.{:03}Z", secs.trim_end_matches('Z'), ms.rem_euclid(1000))
}

/// Formats seconds since the Unix epoch as RFC3339 UTC (the epoch itself
/// for an instant outside the years -9999 to 9999, which no clock gives).
pub fn rfc3339_from_unix(secs: i64) -> String {
    OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// Seconds since the Unix epoch of an RFC3339 timestamp (with or without
/// fractions of a second); None when it is not one.
pub fn unix_from_rfc3339(text: &str) -> Option<i64> {
    OffsetDateTime::parse(text, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_back_what_it_formats() {
        for secs in [0, 951_782_400, 1_700_000_000] {
            assert_eq!(unix_from_rfc3339(&rfc3339_from_unix(secs)), Some(secs));
        }
        assert_eq!(
            unix_from_rfc3339("2023-11-14T22:13:20.250Z"),
            Some(1_700_000_000)
        );
        assert_eq!(unix_from_rfc3339("yesterday"), None);
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_from_unix(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_from_unix(-1), "1969-12-31T23:59:59Z");
        let now = now_rfc3339_millis();
        assert_eq!(now.len(), "2026-01-02T03:04:05.678Z".len(), "{now}");
    }
}
