//! TechEmpower's general response rules, from `verify_headers` in its
//! `toolset/test_types/verifications.py`: every response of a test type
//! carries `Server`, `Date` and `Content-Type` and a size header; `Date` is
//! fresh, not one value cached for good (TechEmpower asks again 3 s later);
//! and each test type's `Content-Type` matches TechEmpower's pattern, which
//! is stricter than SPEC.md's media type (only a UTF-8 charset, spelled
//! `utf-8` or `UTF-8`). A malformed `Date` is only a warning there, so it
//! is a note here.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use super::failure::{Failure, Tfb};
use super::model::{Aspect, Check, Column};
use crate::http::{self, Request, Response};
use shootout_contract::spec::ScenarioName;

/// How long TechEmpower waits before asking again to see `Date` change.
pub(super) const DATE_RECHECK: Duration = Duration::from_secs(3);
/// The route asked twice for the `Date` check.
const DATE_PATH: &str = "/plaintext";

/// TechEmpower's three `Content-Type` patterns (`should_be` in its code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TfbType {
    Json,
    Plaintext,
    Html,
}

impl TfbType {
    /// The TechEmpower test type a SPEC route is, if it is one.
    pub(super) fn of(name: ScenarioName) -> Option<TfbType> {
        match name {
            ScenarioName::Json
            | ScenarioName::Db
            | ScenarioName::Queries
            | ScenarioName::Updates => Some(TfbType::Json),
            ScenarioName::Plaintext => Some(TfbType::Plaintext),
            ScenarioName::Fortunes => Some(TfbType::Html),
            _ => None,
        }
    }

    /// The pattern as TechEmpower writes it, for the failure's wording.
    pub(super) fn pattern(self) -> &'static str {
        match self {
            TfbType::Json => "^application/json(; ?charset=(UTF|utf)-8)?$",
            TfbType::Plaintext => "^text/plain(; ?charset=(UTF|utf)-8)?$",
            TfbType::Html => "^text/html; ?charset=(UTF|utf)-8$",
        }
    }

    /// The pattern, matched by hand (case-sensitive, as TechEmpower's is).
    fn matches(self, content_type: &str) -> bool {
        let (media, charset_required) = match self {
            TfbType::Json => ("application/json", false),
            TfbType::Plaintext => ("text/plain", false),
            TfbType::Html => ("text/html", true),
        };
        let Some(rest) = content_type.strip_prefix(media) else {
            return false;
        };
        if rest.is_empty() {
            return !charset_required;
        }
        let rest = rest.strip_prefix(';').unwrap_or("!");
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        matches!(rest, "charset=UTF-8" | "charset=utf-8")
    }
}

/// SPEC.md's media type, then (for TechEmpower's test types) its pattern.
pub(super) fn content_type(
    resp: &Response,
    media: &'static str,
    tfb: Option<TfbType>,
) -> Result<(), Failure> {
    let got = resp.header("content-type");
    let wrong = |expected| Failure::ContentType {
        expected,
        got: got.map(str::to_owned),
    };
    if resp.media_type().as_deref() != Some(media) {
        return Err(wrong(media));
    }
    match tfb {
        Some(t) if !t.matches(got.unwrap_or_default()) => Err(wrong(t.pattern())),
        _ => Ok(()),
    }
}

/// `Server` and `Date` are present; a `Date` TechEmpower cannot parse
/// passes with its warning as a note.
pub(super) fn general(column: Column, resp: &Response) -> Vec<Check> {
    let present = |name: &'static str| match resp.header(name) {
        Some(_) => Ok(()),
        None => Err(Failure::Tfb(Tfb::MissingHeader(name))),
    };
    let mut date = Check {
        result: present("Date"),
        ..Check::pass(column, Aspect::Date)
    };
    if let Some(value) = resp.header("date").filter(|d| !http_date_ok(d)) {
        date.note = Some(format!(
            "Invalid Date header, found \"{value}\", did not match \"%a, %d %b %Y %H:%M:%S %Z\"."
        ));
    }
    let server = Check {
        result: present("Server"),
        ..Check::pass(column, Aspect::Server)
    };
    vec![server, date]
}

/// The first answer's `Date`, kept to compare with one 3 s later.
#[derive(Debug, Clone)]
pub(super) struct FirstDate {
    date: Result<Option<String>, Failure>,
    at: Instant,
}

/// Asks once for the `Date` to compare later.
pub(super) fn first_date(addr: SocketAddr, timeout: Duration) -> FirstDate {
    let at = Instant::now();
    let date = http::send(addr, &Request::get(DATE_PATH), timeout)
        .map(|r| r.header("date").map(str::to_owned))
        .map_err(|e| Failure::Transport(format!("GET {DATE_PATH}: {e}")));
    FirstDate { date, at }
}

/// At least 3 s after `first`, asks again: the same `Date` fails. Without
/// a `Date` there is nothing to compare; the `Date` check fails instead.
pub(super) fn check_date_cached(addr: SocketAddr, timeout: Duration, first: &FirstDate) -> Check {
    let column = Column::Route(ScenarioName::Plaintext);
    let check = Check::pass(column, Aspect::CachedDate).on("GET", DATE_PATH);
    let before = match &first.date {
        Ok(Some(date)) => date,
        Ok(None) => return check,
        Err(f) => {
            return Check {
                result: Err(f.clone()),
                ..check
            }
        }
    };
    std::thread::sleep(DATE_RECHECK.saturating_sub(first.at.elapsed()));
    let result = match http::send(addr, &Request::get(DATE_PATH), timeout) {
        Ok(resp) => match resp.header("date") {
            Some(now) if now == before => Err(Failure::Tfb(Tfb::CachedDate {
                first: before.clone(),
                second: now.to_owned(),
            })),
            _ => Ok(()),
        },
        Err(e) => Err(Failure::Transport(format!("GET {DATE_PATH}: {e}"))),
    };
    Check { result, ..check }
}

/// TechEmpower's `%a, %d %b %Y %H:%M:%S %Z` as Python's `strptime` reads
/// it: a weekday and month by name (any case), a day of one or two digits,
/// and `GMT` or `UTC`.
pub(super) fn http_date_ok(date: &str) -> bool {
    const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let lower = date.to_ascii_lowercase();
    let Some((day_name, rest)) = lower.split_once(", ") else {
        return false;
    };
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, zone] = parts[..] else {
        return false;
    };
    let number = |s: &str, max: u32| {
        !s.is_empty() && s.len() <= 2 && s.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let clock: Vec<&str> = time.split(':').collect();
    DAYS.contains(&day_name)
        && number(day, 31)
        && day != "0"
        && MONTHS.contains(&month)
        && year.len() == 4
        && year.bytes().all(|b| b.is_ascii_digit())
        && clock.len() == 3
        && number(clock[0], 23)
        && number(clock[1], 59)
        && number(clock[2], 61)
        && matches!(zone, "gmt" | "utc")
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn content_type_patterns_are_techempowers() {
        let json = TfbType::Json;
        for ok in [
            "application/json",
            "application/json; charset=utf-8",
            "application/json;charset=UTF-8",
        ] {
            assert!(json.matches(ok), "{ok}");
        }
        for bad in [
            "application/json; charset=latin1",
            "application/json;  charset=utf-8",
            "application/json; charset=\"utf-8\"",
            "Application/json",
            "application/json; Charset=utf-8",
        ] {
            assert!(!json.matches(bad), "{bad}");
        }
        assert!(TfbType::Html.matches("text/html; charset=UTF-8"));
        assert!(TfbType::Html.matches("text/html;charset=utf-8"));
        assert!(!TfbType::Html.matches("text/html"));
        assert!(TfbType::Plaintext.matches("text/plain"));
        assert!(!TfbType::Plaintext.matches("text/plain; charset=us-ascii"));
    }

    #[test]
    fn http_dates_as_strptime_reads_them() {
        assert!(http_date_ok("Wed, 25 Nov 2026 01:54:06 GMT"));
        assert!(http_date_ok("wed, 5 Nov 2026 01:54:06 UTC"));
        assert!(!http_date_ok("Wednesday, 25 Nov 2026 01:54:06 GMT"));
        assert!(!http_date_ok("Wed, 25 Nov 2026 01:54 GMT"));
        assert!(!http_date_ok("Wed, 25 Nov 2026 01:54:06 +0000"));
        assert!(!http_date_ok("2026-11-25T01:54:06Z"));
    }
}
