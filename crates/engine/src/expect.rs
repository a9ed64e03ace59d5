//! What a correct response looks like during a load: allowed statuses, the
//! media type, and the body (exact bytes, or a cheap shape for bodies that
//! vary). A response that fails is counted under the `mismatch` error class,
//! never as completed. [`Expect::check`] is the reference definition over a
//! whole response; the workers apply the same rules as bytes stream in
//! (without buffering a body beyond what the rule needs), and the tests hold
//! the two to the same verdicts.

use serde::Serialize;
use std::fmt;

/// An allowed status: one code, or a class (`2xx` is `Class(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum StatusMatch {
    Code(u16),
    Class(u8),
}

impl StatusMatch {
    /// Parses `200` or `2xx`.
    pub fn parse(s: &str) -> Result<StatusMatch, StatusMatchError> {
        let t = s.trim();
        let bad = || StatusMatchError(s.to_string());
        if let Some(d) = t.strip_suffix("xx").or_else(|| t.strip_suffix("XX")) {
            return match d.parse::<u8>() {
                Ok(c @ 1..=5) if d.len() == 1 => Ok(StatusMatch::Class(c)),
                _ => Err(bad()),
            };
        }
        match t.parse::<u16>() {
            Ok(c @ 100..=599) => Ok(StatusMatch::Code(c)),
            _ => Err(bad()),
        }
    }

    pub fn matches(self, status: u16) -> bool {
        match self {
            StatusMatch::Code(c) => c == status,
            StatusMatch::Class(c) => status / 100 == u16::from(c),
        }
    }
}

/// Text that is neither a status code nor a status class.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a status code (100-599) or a class such as 2xx")]
pub struct StatusMatchError(pub String);

impl fmt::Display for StatusMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatusMatch::Code(c) => write!(f, "{c}"),
            StatusMatch::Class(c) => write!(f, "{c}xx"),
        }
    }
}

/// What the body must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum BodyMatch {
    /// Exactly these bytes (after de-chunking).
    Exact(Vec<u8>),
    /// A body that varies: it starts with `prefix` and, ignoring trailing
    /// ASCII whitespace, ends with `suffix`.
    Shape { prefix: Vec<u8>, suffix: Vec<u8> },
}

/// The expectations of a load. The default expects nothing: every whole
/// response counts as completed, as before expectations existed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Expect {
    /// Allowed statuses; empty allows any.
    pub status: Vec<StatusMatch>,
    /// The `Content-Type` must start with this (ASCII case-insensitive),
    /// e.g. `application/json` also accepts `application/json; charset=utf-8`.
    pub media_type: Option<String>,
    pub body: Option<BodyMatch>,
}

/// Why one response failed its expectations: shown as the first mismatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Mismatch {
    pub status: u16,
    /// e.g. `status 500, expected 2xx` or `body differs at byte 7`.
    pub reason: String,
    /// What was expected there (lossy UTF-8, at most 64 bytes).
    pub expected: String,
    /// What arrived there (lossy UTF-8, at most 64 bytes).
    pub got: String,
}

/// How many bytes of a differing body a [`Mismatch`] shows.
pub const SHOWN_BYTES: usize = 64;

impl Expect {
    /// True when nothing is checked.
    pub fn is_empty(&self) -> bool {
        self.status.is_empty() && self.media_type.is_none() && self.body.is_none()
    }

    /// Whether a status is allowed.
    pub fn status_ok(&self, status: u16) -> bool {
        self.status.is_empty() || self.status.iter().any(|m| m.matches(status))
    }

    /// Whether a `Content-Type` value (None: absent) is allowed.
    pub fn media_type_ok(&self, content_type: Option<&[u8]>) -> bool {
        let Some(want) = &self.media_type else {
            return true;
        };
        content_type.is_some_and(|v| {
            let v = v.trim_ascii_start();
            v.len() >= want.len() && v[..want.len()].eq_ignore_ascii_case(want.as_bytes())
        })
    }

    /// The reference check of a whole response (body de-chunked).
    pub fn check(
        &self,
        status: u16,
        content_type: Option<&[u8]>,
        body: &[u8],
    ) -> Result<(), Mismatch> {
        let fail = |reason: String, expected: &[u8], got: &[u8]| Mismatch {
            status,
            reason,
            expected: shown(expected),
            got: shown(got),
        };
        if !self.status_ok(status) {
            let allowed: Vec<String> = self.status.iter().map(|m| m.to_string()).collect();
            return Err(fail(
                format!("status {status}, expected {}", allowed.join(" or ")),
                b"",
                b"",
            ));
        }
        if !self.media_type_ok(content_type) {
            let want = self.media_type.as_deref().unwrap_or_default();
            return Err(fail(
                "media type differs".into(),
                want.as_bytes(),
                content_type.unwrap_or(b"(none)"),
            ));
        }
        match &self.body {
            None => Ok(()),
            Some(BodyMatch::Exact(want)) => match first_difference(want, body) {
                None => Ok(()),
                Some(at) => Err(fail(
                    format!("body differs at byte {at}"),
                    &want[at.min(want.len())..],
                    &body[at.min(body.len())..],
                )),
            },
            Some(BodyMatch::Shape { prefix, suffix }) => {
                if let Some(at) = first_difference(prefix, &body[..body.len().min(prefix.len())]) {
                    return Err(fail(
                        format!("body does not start as expected (byte {at})"),
                        prefix,
                        &body[..body.len().min(SHOWN_BYTES)],
                    ));
                }
                let trimmed = body.trim_ascii_end();
                if !trimmed.ends_with(suffix) || trimmed.len() < prefix.len() + suffix.len() {
                    let tail = &trimmed[trimmed.len().saturating_sub(SHOWN_BYTES)..];
                    return Err(fail("body does not end as expected".into(), suffix, tail));
                }
                Ok(())
            }
        }
    }
}

/// A media type (prefix) for `Expect::media_type` (`--expect-type`, a mix
/// file's `expect_type`): `type/subtype`, visible ASCII.
pub fn parse_media_type(s: &str) -> Result<String, MediaTypeError> {
    let t = s.trim();
    let visible = t.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    match t.split_once('/') {
        Some((a, _)) if visible && !a.is_empty() => Ok(t.to_string()),
        _ => Err(MediaTypeError(s.to_string())),
    }
}

/// Text that is not a media type (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a media type such as text/plain or application/json")]
pub struct MediaTypeError(pub String);

/// The first index where `got` differs from `want`, counting a length
/// difference as a difference at the shorter length.
pub(crate) fn first_difference(want: &[u8], got: &[u8]) -> Option<usize> {
    match want.iter().zip(got).position(|(a, b)| a != b) {
        Some(i) => Some(i),
        None if want.len() != got.len() => Some(want.len().min(got.len())),
        None => None,
    }
}

pub(crate) fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(SHOWN_BYTES)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_and_match() {
        assert_eq!(StatusMatch::parse("2xx"), Ok(StatusMatch::Class(2)));
        assert_eq!(StatusMatch::parse("404"), Ok(StatusMatch::Code(404)));
        for bad in ["6xx", "0", "20", "abc", "2x", "1000"] {
            assert!(StatusMatch::parse(bad).is_err(), "{bad}");
        }
        assert!(StatusMatch::Class(2).matches(204));
        assert!(!StatusMatch::Class(2).matches(301));
    }

    #[test]
    fn exact_body_names_the_first_difference() {
        let e = Expect {
            status: vec![StatusMatch::Code(200)],
            media_type: Some("text/plain".into()),
            body: Some(BodyMatch::Exact(b"Hello, World!".to_vec())),
        };
        let ct = Some(&b"text/plain; charset=utf-8"[..]);
        assert_eq!(e.check(200, ct, b"Hello, World!"), Ok(()));
        let m = e.check(200, ct, b"Hello, world!").unwrap_err();
        assert_eq!(m.reason, "body differs at byte 7");
        assert_eq!((m.expected.as_str(), m.got.as_str()), ("World!", "world!"));
        assert!(e.check(200, ct, b"Hello, World!!").is_err(), "longer");
        assert!(e.check(200, ct, b"Hello").is_err(), "shorter");
        assert!(e
            .check(500, ct, b"Hello, World!")
            .unwrap_err()
            .reason
            .contains("500"));
        assert!(e
            .check(200, Some(b"application/json"), b"Hello, World!")
            .is_err());
        assert!(e.check(200, None, b"Hello, World!").is_err());
    }

    #[test]
    fn shapes_check_both_ends() {
        let e = Expect {
            body: Some(BodyMatch::Shape {
                prefix: b"[{\"id\":".to_vec(),
                suffix: b"}]".to_vec(),
            }),
            ..Expect::default()
        };
        assert_eq!(
            e.check(200, None, b"[{\"id\":1,\"randomNumber\":2}]\n"),
            Ok(())
        );
        assert!(e.check(200, None, b"{\"id\":1}").is_err());
        assert!(e
            .check(200, None, b"[{\"id\":1,\"randomNumber\":2}")
            .is_err());
        assert!(
            e.check(200, None, b"[{\"id\":").is_err(),
            "too short for both"
        );
        assert!(Expect::default().check(599, None, b"anything").is_ok());
    }
}
