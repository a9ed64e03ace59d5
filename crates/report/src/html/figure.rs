//! How a chart sits in the page: a `<figure>` with its id and caption
//! around ready HTML or an SVG (or the reason it is unavailable), and the
//! target colours that tie plotters' SVG to the "hide" switches. Shared by
//! the scenario sections, their ranked bars and the capacity section.

use super::charts::ChartError;
use crate::context::Context;
use crate::escape::html as esc;
use std::fmt::Write;

pub(super) fn figure(
    out: &mut String,
    slug: &str,
    kind: &str,
    caption: &str,
    svg: Result<String, ChartError>,
) {
    let body = match svg {
        Ok(s) => s,
        Err(e) => format!(
            "<p class=\"note\">chart unavailable: {}</p>",
            esc(&e.to_string())
        ),
    };
    figure_html(out, slug, kind, caption, &body, "svg");
}

/// A figure around ready HTML; `class` says how it is drawn (`svg`, `hbars`).
pub(super) fn figure_html(
    out: &mut String,
    slug: &str,
    kind: &str,
    caption: &str,
    body: &str,
    class: &str,
) {
    let _ = writeln!(
        out,
        "<figure class=\"chart {class}\" id=\"chart-{}-{}\">\n{body}\n<figcaption>{}</figcaption>\n</figure>",
        esc(slug),
        esc(kind),
        esc(caption)
    );
}

/// Tags each element drawn in a target's colour with its `tN` class, so
/// that the "hide" switches reach plotters' SVG too: plotters cannot attach
/// classes, but every target has its own colour ([`crate::colour`]), so the
/// colour names the series unambiguously.
pub(super) fn tag_series(ctx: &Context, svg: &str) -> String {
    let mut out = svg.to_string();
    for (i, sw) in ctx.colours.swatches().iter().enumerate() {
        let (r, g, b) = sw.rgb;
        for attr in ["stroke", "fill"] {
            let from = format!("{attr}=\"#{r:02X}{g:02X}{b:02X}\"");
            out = out.replace(&from, &format!("class=\"t{i}\" {from}"));
        }
    }
    out
}

/// The target's colour for plotters.
pub(super) fn rgb(ctx: &Context, target: &str) -> plotters::style::RGBColor {
    let (r, g, b) = ctx.colours.of(target).rgb;
    plotters::style::RGBColor(r, g, b)
}
