//! The frame every HTML page of this crate shares: the doctype, the
//! Content-Security-Policy that forbids any network request ([`super::csp`]),
//! the title and the inline style sheet (`style.css`, plus what a page adds,
//! such as the target switches' hide rules). The run report (`mod.rs`) and
//! the trend page ([`super::trend`]) both open with it.

use super::csp;
use crate::escape::html as esc;
use std::fmt::Write;

const STYLE: &str = include_str!("style.css");

/// The page's head: title, viewport, CSP, style (plus `extra_style`).
pub(crate) fn head(out: &mut String, title: &str, extra_style: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <title>{}</title>\n<style>\n{STYLE}{extra_style}</style>\n</head>\n<body>\n",
        csp::policy(),
        esc(title)
    );
}
