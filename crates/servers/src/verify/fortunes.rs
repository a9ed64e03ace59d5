//! The `/fortunes` checks of SPEC.md: `text/html; charset=utf-8` (as
//! TechEmpower's pattern spells it) and its required headers, exactly
//! the table's rows plus the one added at request time, sorted by message in
//! byte order, and HTML-escaped. Bodies are compared after a normalisation
//! that frees what SPEC.md leaves free (whitespace between tags, the choice
//! of entity, the doctype's case) and nothing else.

use std::net::SocketAddr;
use std::time::Duration;

use postgres::Client;

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use super::response::{basics, get, shown, verdict};
use shootout_contract::spec::ScenarioName;

/// The row every server adds in memory before sorting.
pub(super) const ADDED: (i32, &str) = (0, "Additional fortune added at request time.");
const HEAD: &str = "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table><tr><th>id</th><th>message</th></tr>";
const TAIL: &str = "</table></body></html>";

pub(super) fn check_fortunes(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
) -> Vec<Check> {
    let col = Column::Route(ScenarioName::Fortunes);
    let path = ScenarioName::Fortunes.route().path;
    let resp = match get(addr, path, timeout) {
        Ok(resp) => resp,
        Err(f) => return vec![Check::fail(col, Aspect::Request, f)],
    };
    let expected = match table_rows(client) {
        Ok(rows) => render(&rows),
        Err(f) => return vec![Check::fail(col, Aspect::Body, f)],
    };
    let mut checks = basics(ScenarioName::Fortunes, &resp);
    checks.extend([
        verdict(col, Aspect::Body, body_matches(&resp.body, &expected)),
        verdict(col, Aspect::Escape, escaped(&resp.body)),
    ]);
    checks.into_iter().map(|c| c.on("GET", path)).collect()
}

/// The table's rows plus the added one, in byte order of message (Rust's
/// `str` order is byte order, which is what SPEC.md asks for).
fn table_rows(client: &mut Client) -> Result<Vec<(i32, String)>, Failure> {
    let rows = client
        .query("SELECT id, message FROM fortune", &[])
        .map_err(|e| Failure::Database(format!("reading fortune: {e}")))?;
    let mut rows: Vec<(i32, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    rows.push((ADDED.0, ADDED.1.to_owned()));
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(rows)
}

/// The page in normal form: no whitespace between tags, canonical entities.
pub(super) fn render(rows: &[(i32, String)]) -> String {
    let mut page = HEAD.to_owned();
    for (id, message) in rows {
        page.push_str(&format!(
            "<tr><td>{id}</td><td>{}</td></tr>",
            escape(message)
        ));
    }
    page.push_str(TAIL);
    page
}

/// The canonical escaping: only `&`, `<` and `>` as named entities, since
/// quotes may be escaped or not and normalise to themselves.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

fn body_matches(body: &[u8], expected: &str) -> Result<(), Failure> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Err(Failure::Body {
            expected: "UTF-8 HTML".into(),
            got: shown(body),
        });
    };
    let got = normalise(text);
    match got == expected {
        true => Ok(()),
        false => {
            let (expected, got) = around_difference(expected, &got);
            Err(Failure::Body { expected, got })
        }
    }
}

/// A message is escaped when the raw body holds no `<script` tag.
fn escaped(body: &[u8]) -> Result<(), Failure> {
    let lower = String::from_utf8_lossy(body).to_ascii_lowercase();
    match lower.contains("<script") {
        true => Err(Failure::Unescaped),
        false => Ok(()),
    }
}

/// `html` with whitespace between tags removed, every entity decoded and
/// `&`, `<`, `>` of text re-escaped canonically, and the doctype upper-case.
pub(super) fn normalise(html: &str) -> String {
    let tight = between_tags_removed(html.trim());
    let canonical = canonical_entities(&tight);
    match canonical.get(..15) {
        Some(d) if d.eq_ignore_ascii_case("<!doctype html>") => {
            format!("<!DOCTYPE html>{}", &canonical[15..])
        }
        _ => canonical,
    }
}

fn between_tags_removed(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find('>') {
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let trimmed = rest.trim_start();
        if trimmed.starts_with('<') {
            rest = trimmed;
        }
    }
    out.push_str(rest);
    out
}

/// Entities become their characters, then the text is escaped again the
/// one canonical way. Tags are copied as they are: only text between them
/// can hold entities.
fn canonical_entities(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        let (text, used) = match c {
            '<' if !in_tag => {
                in_tag = true;
                ("<".to_owned(), 1)
            }
            '>' if in_tag => {
                in_tag = false;
                (">".to_owned(), 1)
            }
            _ if in_tag => (c.to_string(), c.len_utf8()),
            '&' => match entity(rest) {
                Some((decoded, used)) => (escape(&decoded.to_string()), used),
                None => ("&amp;".to_owned(), 1),
            },
            c => (escape(&c.to_string()), c.len_utf8()),
        };
        out.push_str(&text);
        rest = &rest[used..];
    }
    out
}

/// The character of the entity `text` starts with, and its length.
fn entity(text: &str) -> Option<(char, usize)> {
    let end = text.get(..12).unwrap_or(text).find(';')?;
    let name = &text[1..end];
    let c = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((c, end + 1))
}

/// Both texts from a little before their first difference, for a readable
/// failure instead of two whole pages.
fn around_difference(expected: &str, got: &str) -> (String, String) {
    let same = expected
        .char_indices()
        .zip(got.chars())
        .find(|((_, a), b)| a != b)
        .map_or(expected.len().min(got.len()), |((i, _), _)| i);
    let mut start = same.saturating_sub(40);
    while !expected.is_char_boundary(start) {
        start -= 1;
    }
    let cut = |s: &str| {
        s.get(start..)
            .unwrap_or("")
            .chars()
            .take(120)
            .collect::<String>()
    };
    (format!("...{}", cut(expected)), format!("...{}", cut(got)))
}

#[cfg(test)]
mod unit {
    use super::*;

    fn rows() -> Vec<(i32, String)> {
        vec![
            (11, r#"<script>alert("x");</script>"#.into()),
            (2, "A & B — 'ü'".into()),
        ]
    }

    #[test]
    fn equivalent_pages_normalise_to_the_rendering() {
        let expected = render(&rows());
        let page = "<!doctype html>\n<html>\n <head><title>Fortunes</title></head>\n<body>\n<table>\n<tr><th>id</th><th>message</th></tr>\n<tr><td>11</td><td>&lt;script&gt;alert(&#34;x&quot;);&#x3C;/script&gt;</td></tr>\n<tr><td>2</td><td>A &amp; B &#8212; &#39;&#xfc;&#x27;</td></tr>\n</table>\n</body>\n</html>\n";
        assert_eq!(normalise(page), expected);
        assert_eq!(body_matches(page.as_bytes(), &expected), Ok(()));
        assert_eq!(escaped(page.as_bytes()), Ok(()));
    }

    #[test]
    fn raw_script_and_changed_text_fail() {
        let expected = render(&rows());
        let raw = expected.replace("&lt;script&gt;", "<script>");
        assert!(body_matches(raw.as_bytes(), &expected).is_err());
        assert_eq!(escaped(raw.as_bytes()), Err(Failure::Unescaped));
        let spaced = expected.replace("<td>2</td>", "<td> 2 </td>");
        assert!(body_matches(spaced.as_bytes(), &expected).is_err());
    }

    #[test]
    fn charset_is_required_as_techempower_spells_it() {
        use crate::http::{Framing, Response};
        let with = |ct: &str| Response {
            status: 200,
            headers: vec![("Content-Type".into(), ct.into())],
            body: vec![],
            framing: Framing::ContentLength(0),
            elapsed: Duration::ZERO,
        };
        let html = |ct| {
            super::super::headers::content_type(
                &with(ct),
                shootout_contract::spec::HTML,
                Some(super::super::headers::TfbType::Html),
            )
        };
        assert_eq!(html("text/html; charset=UTF-8"), Ok(()));
        assert_eq!(html("text/html;charset=utf-8"), Ok(()));
        // SPEC.md let a quoted charset pass; TechEmpower's pattern does not.
        assert!(html("text/html;charset=\"utf-8\"").is_err());
        assert!(html("text/html").is_err());
        assert!(html("text/plain; charset=utf-8").is_err());
    }
}
