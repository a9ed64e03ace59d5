//! What every response of a load must look like, per route of SPEC.md, as
//! the engine's [`Expect`]: `shootout run` sets it on every level, so a
//! wrong answer counts as a `mismatch` instead of a request served. Static
//! and echo routes get their exact body (the request body is known);
//! routes whose body varies (bcrypt's salted hash, the database rows) get
//! status 200, the media type and a cheap shape (how the body starts and
//! ends). Every rule is implied by what the verifier accepts, so a verified
//! target never mismatches on a correct answer: the fortunes page's doctype
//! case and leading whitespace are free there, so its shape checks only the
//! end.

use crate::spec::{Answer, Route, ScenarioName, GREETING, PAYLOAD_CLOSE, PAYLOAD_OPEN};
use shootout_engine::{BodyMatch, Expect, StatusMatch};

/// How every row of `world` starts in the JSON routes (SPEC.md: compact,
/// keys in order).
const ROW_OPEN: &str = r#"{"id":"#;
/// How a bcrypt hash starts, whatever its version (`$2a`, `$2b`, `$2y`).
const BCRYPT_OPEN: &str = "$2";
/// How the fortunes page ends; whitespace between tags is free, so only
/// its last tag is fixed.
const HTML_CLOSE: &str = "</html>";

impl Route {
    /// What a correct server answers to this route when the request
    /// carries `request_body` (ignored by the GET routes). A POST body
    /// without a string `payload` must be refused with a 4xx (SPEC.md
    /// "Errors"), so only the status class is expected then.
    pub fn expect(&self, request_body: &[u8]) -> Expect {
        let payload = || sent_payload(request_body);
        let body = match self.answer {
            Answer::Exact(body) => BodyMatch::Exact(body.as_bytes().to_vec()),
            Answer::Greet => match payload() {
                Some(p) if renders_alike(&p) => {
                    let body = self.expected_body(&p).unwrap_or_default();
                    BodyMatch::Exact(body.into_bytes())
                }
                Some(_) => shape(&format!("{PAYLOAD_OPEN}{GREETING}"), PAYLOAD_CLOSE),
                None => return refused(),
            },
            Answer::Bcrypt => match payload() {
                Some(_) => shape(&format!("{PAYLOAD_OPEN}{BCRYPT_OPEN}"), PAYLOAD_CLOSE),
                None => return refused(),
            },
            Answer::Database => self.rows_shape(),
        };
        Expect {
            status: vec![StatusMatch::Code(200)],
            media_type: Some(self.media_type.to_owned()),
            body: Some(body),
        }
    }

    /// The shape of a database route's body.
    fn rows_shape(&self) -> BodyMatch {
        match self.name {
            ScenarioName::Fortunes => shape("", HTML_CLOSE),
            ScenarioName::Db => shape(ROW_OPEN, "}"),
            _ => shape(&format!("[{ROW_OPEN}"), "}]"),
        }
    }
}

/// The expectation of a request a study sends, found by its method and
/// path (the query aside, so `/queries?queries=20` is the queries route).
/// A request SPEC.md has no route for gets no expectation: nothing is
/// known about its answer.
pub fn expect_request(method: &str, path: &str, body: &[u8]) -> Expect {
    let bare = path.split_once('?').map_or(path, |(p, _)| p);
    Route::find(&method.to_ascii_uppercase(), bare).map_or_else(Expect::default, |r| r.expect(body))
}

/// The string `payload` of a JSON request body, if it has one.
fn sent_payload(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    Some(v.get("payload")?.as_str()?.to_owned())
}

/// Whether every JSON library writes `payload` the same way, so that the
/// echo's exact bytes are known: printable ASCII, less what some escape
/// (quotes and backslash always; `/` by some; `<`, `>`, `&` and `'` by Go's
/// HTML-safe encoder and others). Anything else gets the echo's shape.
fn renders_alike(payload: &str) -> bool {
    payload
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && !br#""\/<>&'"#.contains(&b))
}

fn shape(prefix: &str, suffix: &str) -> BodyMatch {
    BodyMatch::Shape {
        prefix: prefix.as_bytes().to_vec(),
        suffix: suffix.as_bytes().to_vec(),
    }
}

/// A refused request: any 4xx, whatever its type and body.
fn refused() -> Expect {
    Expect {
        status: vec![StatusMatch::Class(4)],
        ..Expect::default()
    }
}

#[cfg(test)]
#[path = "expect_tests.rs"]
mod tests;
