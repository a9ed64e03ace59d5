//! The HTML report: one self-contained file with inline CSS and inline SVG
//! charts, no scripts and no network requests (a Content-Security-Policy
//! forbids them). Every string from data goes through [`crate::escape::html`].

mod capacity;
mod charts;
mod sections;

use crate::context::Context;
use crate::escape::html as esc;
use crate::group::groups;
use std::fmt::Write;

pub use charts::spectrum_points;

const STYLE: &str = include_str!("style.css");

/// Renders the whole HTML page.
pub fn render(ctx: &Context) -> String {
    let run = &ctx.data.run;
    let title = format!("shootout — {} — run {}", run.study, run.id);
    let mut out = String::with_capacity(256 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    sections::header(&mut out, ctx);
    out.push_str("<main>\n");
    sections::targets(&mut out, ctx);
    for g in groups(ctx.data) {
        sections::group(&mut out, ctx, &g);
    }
    capacity::render(&mut out, ctx);
    sections::environment(&mut out, ctx);
    out.push_str("</main>\n");
    let _ = write!(
        out,
        "<footer>Made by shootout {} from the stored run alone. Cells and bars show the \
         median over repetitions with 95% Student-t confidence intervals.</footer>\n</body>\n</html>\n",
        esc(&run.tool_version)
    );
    out
}
