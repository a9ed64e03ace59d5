//! The top of the page: the findings ([`crate::findings`]) with links to
//! each scenario's section, then what varied (once, after the rankings),
//! the switches that hide a target from every chart, and, for a study with
//! `[published]` figures, the article beside this run (per scenario ×
//! metric: the published value, ours, and which pair flipped).

use crate::agreement::{agreements, Agreement};
use crate::context::Context;
use crate::escape::html as esc;
use crate::findings::Findings;
use crate::group::groups;
use crate::metric::num;
use std::fmt::Write;

pub fn render(out: &mut String, ctx: &Context, f: &Findings) {
    out.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n");
    for l in &f.run {
        let _ = writeln!(out, "<p class=\"headline\">{}</p>", esc(l));
    }
    // The rankings are drawn above (`glance`); their sentences, folded.
    let _ = write!(
        out,
        "<details class=\"in-words\"><summary>Each scenario in words ({} scenarios: the \
         ranking with its intervals, ties with the pair's p and interval, latency)</summary>\n\
         <div class=\"findings\">\n",
        f.scenarios.len()
    );
    for s in &f.scenarios {
        let _ = write!(
            out,
            "<div class=\"finding\"><h3><a href=\"#s-{}\">{}</a></h3><ul>",
            esc(&s.slug),
            esc(&s.title)
        );
        for l in &s.lines {
            let _ = write!(out, "<li>{}</li>", esc(l));
        }
        out.push_str("</ul></div>\n");
    }
    out.push_str("</div>\n</details>\n");
    if !f.noise.is_empty() {
        let _ = write!(
            out,
            "<div class=\"noise\"><h3>{}</h3>",
            esc(crate::findings::NOISE_TITLE)
        );
        for l in &f.noise {
            let _ = write!(out, "<p>{}</p>", esc(l));
        }
        out.push_str("</div>\n");
    }
    switches(out, ctx);
    out.push_str("</section>\n");
    published(out, ctx);
}

/// One checkbox per target that has something to hide.
fn switches(out: &mut String, ctx: &Context) {
    let measured = |t: &str| {
        ctx.data.measurements.iter().any(|m| m.target == t)
            || ctx.data.capacity.iter().any(|c| c.target == t)
    };
    super::switches::fieldset(out, &ctx.colours, measured);
}

/// The article side by side, for every scenario × metric it published.
fn published(out: &mut String, ctx: &Context) {
    let all: Vec<(String, String, Vec<Agreement>)> = groups(ctx.data)
        .iter()
        .map(|g| (g.title(), g.slug(), agreements(ctx, g)))
        .filter(|(_, _, a)| !a.is_empty())
        .collect();
    if all.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"article\">\n<h2>The article beside this run</h2>\n<div class=\"side\">\n",
    );
    for (title, slug, agreements) in &all {
        for a in agreements {
            let name = a.metric.name();
            let verdict = if a.reproduced() {
                "<span class=\"badge ok\">same order</span>".to_string()
            } else {
                let pairs: Vec<String> =
                    a.flipped.iter().map(|(x, y)| format!("{x}/{y}")).collect();
                format!(
                    "<span class=\"badge fail\">flipped: {}</span>",
                    esc(&pairs.join(", "))
                )
            };
            let _ = write!(
                out,
                "<div class=\"pair\"><h3><a href=\"#s-{}\">{}</a> · {} {verdict}</h3>\
                 <div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>Target</th><th>Article</th>\
                 <th>Ours</th><th>Rank: article → ours</th><th>Ours ÷ article</th></tr></thead><tbody>",
                esc(slug),
                esc(title),
                esc(name)
            );
            for (i, (t, p, ours)) in a.rows.iter().enumerate() {
                let our_rank = a.ours.iter().position(|o| o == t).map_or(0, |r| r + 1);
                let _ = write!(
                    out,
                    "<tr class=\"t{}\"><td>{}</td><td>{}</td><td>{}</td><td>{} → {}</td><td>{}</td></tr>",
                    ctx.colours.index(t),
                    esc(t),
                    num(*p),
                    num(*ours),
                    i + 1,
                    our_rank,
                    num(ours / p)
                );
            }
            out.push_str("</tbody></table></div></div>\n");
        }
    }
    out.push_str(
        "</div>\n<p class=\"note\">The article's figures come from another machine, so only \
         the order is compared; \"flipped\" names pairs measured the other way round here \
         (significantly, or with one repetition untested).</p>\n</section>\n",
    );
}
