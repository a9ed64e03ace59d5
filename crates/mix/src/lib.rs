//! The mix file of `shootout load --mix FILE`: the request kinds a load
//! draws from by weight, each `[[request]]` with a `name`, a `weight`, a
//! `method` (GET unless given), a `path` whose `{a..b}` ranges draw a
//! uniform integer per request, `headers`, a `body` or `body_file`, and
//! its own response checks (`expect_status`, `expect_body`, `expect_type`,
//! as the `--expect-*` flags, which check the kinds that have none).
//! Parsing is strict (an unknown key is an error) and every error names the
//! file, the line and the key ([`FileError`]). The rules of a mix itself
//! (weights, names, templates) are the engine's ([`Mix::new`],
//! [`Template::parse`]); this crate reads the file and says where a broken
//! rule was written. The format is described in docs/mix.md.

#![deny(clippy::print_stdout, clippy::print_stderr)]

use serde::Deserialize;
use shootout_contract::located::{key_at, line_at, FileError};
use shootout_engine::{BodyMatch, Expect, Mix, RequestKind, RequestSpec, StatusMatch, Template};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

/// The file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    request: Vec<Spanned<RawRequest>>,
}

/// One `[[request]]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequest {
    name: Spanned<String>,
    weight: Spanned<i64>,
    method: Option<Spanned<String>>,
    path: Spanned<String>,
    #[serde(default)]
    headers: BTreeMap<String, Spanned<String>>,
    body: Option<Spanned<String>>,
    body_file: Option<Spanned<String>>,
    expect_status: Option<Spanned<Vec<StatusText>>>,
    expect_body: Option<Spanned<String>>,
    expect_type: Option<Spanned<String>>,
}

/// An allowed status as written: `200` or `"2xx"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum StatusText {
    Code(i64),
    Text(String),
}

/// Reads and checks the mix file at `path`.
pub fn load(path: &Path) -> Result<Mix, FileError> {
    let text = std::fs::read_to_string(path).map_err(|e| FileError {
        file: path.to_path_buf(),
        key: None,
        line: None,
        message: format!("cannot read: {e}"),
    })?;
    parse(path, &text)
}

/// Checks a mix file's text; `path` names it in errors and anchors a
/// relative `body_file`.
pub fn parse(path: &Path, text: &str) -> Result<Mix, FileError> {
    let at = Locator { path, text };
    let raw: RawFile = toml::from_str(text).map_err(|e| at.toml_error(&e))?;
    let mut spans = Vec::new();
    let mut kinds = Vec::new();
    for r in &raw.request {
        kinds.push(kind(&at, r.get_ref())?);
        spans.push(r);
    }
    Mix::new(kinds).map_err(|e| {
        let request = e.index.and_then(|i| spans.get(i)).map(|r| r.get_ref());
        let span = match (request, e.key) {
            (Some(r), "weight") => Some(r.weight.span()),
            (Some(r), _) => Some(r.name.span()),
            (None, _) => None,
        };
        at.error(span, e.key, e.reason)
    })
}

/// One request kind from its table.
fn kind(at: &Locator<'_>, r: &RawRequest) -> Result<RequestKind, FileError> {
    let weight = u32::try_from(*r.weight.get_ref()).map_err(|_| {
        at.at(
            &r.weight,
            "weight",
            "must be a whole number from 1 to 4294967295",
        )
    })?;
    let path = Template::parse(r.path.get_ref()).map_err(|e| at.at(&r.path, "path", e))?;
    let method = match &r.method {
        None => "GET".to_string(),
        Some(m)
            if !m.get_ref().is_empty() && m.get_ref().bytes().all(|b| b.is_ascii_alphabetic()) =>
        {
            m.get_ref().to_ascii_uppercase()
        }
        Some(m) => {
            return Err(at.at(
                m,
                "method",
                format!("'{}' is not an HTTP method", m.get_ref()),
            ))
        }
    };
    let mut headers = Vec::new();
    for (name, value) in &r.headers {
        let name_ok = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
        if !name_ok || value.get_ref().contains(['\r', '\n']) {
            let why = format!("'{name}' is not a header name with a one-line value");
            return Err(at.at(value, "headers", why));
        }
        headers.push((name.clone(), value.get_ref().trim().to_string()));
    }
    let body = match (&r.body, &r.body_file) {
        (Some(_), Some(f)) => {
            return Err(at.at(f, "body_file", "give body or body_file, not both"));
        }
        (Some(b), None) => b.get_ref().as_bytes().to_vec(),
        (None, Some(f)) => {
            let file = at.path.parent().unwrap_or(Path::new(".")).join(f.get_ref());
            std::fs::read(&file).map_err(|e| {
                at.at(
                    f,
                    "body_file",
                    format!("cannot read {}: {e}", file.display()),
                )
            })?
        }
        (None, None) => Vec::new(),
    };
    Ok(RequestKind {
        name: r.name.get_ref().clone(),
        weight,
        path,
        request: RequestSpec {
            method,
            headers,
            body,
        },
        expect: expect(at, r)?,
    })
}

/// The kind's own checks; None when it has none (the run's then apply).
fn expect(at: &Locator<'_>, r: &RawRequest) -> Result<Option<Expect>, FileError> {
    if r.expect_status.is_none() && r.expect_body.is_none() && r.expect_type.is_none() {
        return Ok(None);
    }
    let mut status = Vec::new();
    if let Some(list) = &r.expect_status {
        for s in list.get_ref() {
            let text = match s {
                StatusText::Code(c) => c.to_string(),
                StatusText::Text(t) => t.clone(),
            };
            let parsed = StatusMatch::parse(&text);
            status.push(parsed.map_err(|e| at.at(list, "expect_status", e))?);
        }
    }
    let media_type = match &r.expect_type {
        Some(t) => Some(
            shootout_engine::expect::parse_media_type(t.get_ref())
                .map_err(|e| at.at(t, "expect_type", e))?,
        ),
        None => None,
    };
    Ok(Some(Expect {
        status,
        media_type,
        body: r
            .expect_body
            .as_ref()
            .map(|b| BodyMatch::Exact(b.get_ref().as_bytes().to_vec())),
    }))
}

/// Turns a byte span of the mix text into file:line:key errors.
struct Locator<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Locator<'_> {
    fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> FileError {
        FileError {
            file: self.path.to_path_buf(),
            line: span.map(|s| line_at(self.text, s.start)),
            key: Some(key.to_string()),
            message,
        }
    }

    fn at<T>(&self, v: &Spanned<T>, key: &str, message: impl ToString) -> FileError {
        self.error(Some(v.span()), key, message.to_string())
    }

    /// A TOML or serde error, naming an unknown or missing key.
    fn toml_error(&self, e: &toml::de::Error) -> FileError {
        let message = e.message().trim().to_string();
        let named = ["unknown field `", "missing field `"]
            .iter()
            .find_map(|p| message.strip_prefix(p))
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        let span = e.span();
        FileError {
            file: self.path.to_path_buf(),
            line: span.as_ref().map(|s| line_at(self.text, s.start)),
            key: named.or_else(|| span.and_then(|s| key_at(self.text, s.start))),
            message,
        }
    }
}

#[cfg(test)]
mod tests;
