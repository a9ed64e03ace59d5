//! The checks of one response that every route shares: status, media type
//! (with TechEmpower's pattern for its test types), framing and
//! TechEmpower's required headers; plus a GET whose transport error is a
//! failure and the shortened body that failure messages show.

use std::net::SocketAddr;
use std::time::Duration;

use super::failure::Failure;
use super::headers::{self, TfbType};
use super::model::{Aspect, Check, Column};
use crate::http::{self, Framing, Request, Response};
use shootout_contract::spec::ScenarioName;

pub(super) fn verdict(column: Column, aspect: Aspect, result: Result<(), Failure>) -> Check {
    Check {
        column,
        aspect,
        result,
        note: None,
        request: None,
    }
}

/// Status 200, media type, framing, `Server` and `Date` of one answer of
/// the SPEC route `name`.
pub(super) fn basics(name: ScenarioName, resp: &Response) -> Vec<Check> {
    let column = Column::Route(name);
    let media = name.route().media_type;
    let mut checks = vec![
        verdict(column, Aspect::Status, status_is(resp, 200)),
        verdict(
            column,
            Aspect::ContentType,
            headers::content_type(resp, media, TfbType::of(name)),
        ),
        verdict(column, Aspect::Framing, framed(resp)),
    ];
    checks.extend(headers::general(column, resp));
    checks
}

pub(super) fn status_is(resp: &Response, expected: u16) -> Result<(), Failure> {
    match resp.status == expected {
        true => Ok(()),
        false => Err(Failure::Status {
            expected: status_name(expected),
            got: resp.status,
        }),
    }
}

fn status_name(status: u16) -> &'static str {
    match status {
        200 => "200",
        404 => "404",
        _ => "another status",
    }
}

pub(super) fn framed(resp: &Response) -> Result<(), Failure> {
    match resp.framing {
        Framing::Close => Err(Failure::NoFraming),
        Framing::ContentLength(_) | Framing::Chunked => Ok(()),
    }
}

/// The body, lossily decoded and cut short for messages.
pub(super) fn shown(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match text.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.into_owned(),
    }
}

/// GETs `path`; a transport error is a failure.
pub(super) fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Response, Failure> {
    http::send(addr, &Request::get(path), timeout)
        .map_err(|e| Failure::Transport(format!("GET {path}: {e}")))
}
