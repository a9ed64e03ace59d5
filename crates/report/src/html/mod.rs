//! The HTML report: one self-contained file with inline CSS, ranked HTML
//! bars ([`bars`]), inline SVG line charts ([`charts`]) and one small inline
//! script that sorts tables ([`csp`]); no network request of any kind (a
//! Content-Security-Policy forbids them). It opens with every scenario's
//! ranking drawn ([`glance`]), then the findings ([`findings`]); hover tooltips, the log/linear toggle and the switches
//! that hide a target from every chart ([`switches`]) are CSS alone. Every
//! string from data goes through [`crate::escape::html`].

mod bars;
mod capacity;
mod charts;
mod cost;
pub mod csp;
mod figure;
mod findings;
pub(crate) mod glance;
pub(crate) mod page;
mod ranked;
mod sections;
mod switches;
pub mod trend;

use crate::context::Context;
use crate::escape::html as esc;
use crate::group::groups;
use std::fmt::Write;

pub use charts::spectrum_points;

/// Renders the whole HTML page.
pub fn render(ctx: &Context) -> String {
    let run = &ctx.data.run;
    let title = format!("shootout — {} — run {}", run.study, run.id);
    let mut out = String::with_capacity(256 * 1024);
    page::head(&mut out, &title, &switches::hide_rules(&ctx.colours));
    sections::header(&mut out, ctx);
    out.push_str("<main>\n");
    let all = groups(ctx.data);
    glance::render(&mut out, ctx, &all);
    sections::run_meta(&mut out, ctx);
    findings::render(&mut out, ctx, &crate::findings::findings(ctx));
    tls_cost(&mut out, &crate::tls_cost::costs(&all));
    for g in &all {
        sections::group(&mut out, ctx, g);
    }
    capacity::render(&mut out, ctx);
    cost::render(&mut out, ctx);
    sections::targets(&mut out, ctx);
    sections::environment(&mut out, ctx);
    sections::cluster(&mut out, ctx);
    sections::versions(&mut out, ctx);
    out.push_str("</main>\n");
    let _ = write!(
        out,
        "<footer>Made by shootout {} from the stored run alone. Bars show the median over \
         repetitions (each its own server start) with 95% intervals from each target's start \
         variance pooled over its scenarios; a tie (≈) is a difference not significant at \
         p &lt; 0.05 on the pair's own variation or within the study's margin \
         (docs/statistics.md).</footer>\n{}</body>\n</html>\n",
        esc(&run.tool_version),
        csp::script_element()
    );
    out
}

/// The TLS-cost section, when some scenario has the same load in
/// cleartext and over TLS.
fn tls_cost(out: &mut String, costs: &[crate::tls_cost::TlsCost]) {
    if costs.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"s-tls-cost\">\n<h2>TLS cost</h2>\n<div class=\"scroll\"><table class=\"metrics\">\n<thead><tr>",
    );
    for h in crate::tls_cost::HEADER {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for c in costs {
        out.push_str("<tr>");
        for cell in crate::tls_cost::cells(c) {
            let _ = write!(out, "<td>{}</td>", esc(&cell));
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table></div>\n<p class=\"note\">{}</p>\n</section>",
        esc(crate::tls_cost::NOTE)
    );
}
