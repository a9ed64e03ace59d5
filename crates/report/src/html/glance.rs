//! The first screen: every scenario's throughput ranking drawn small, side
//! by side, before any sentence (a WebSocket hold's: its memory per idle
//! connection, lowest first, bars from zero to the most). Each is the ranking the findings and the
//! charts read ([`crate::ranking::rank`]): one row per target, best first,
//! a bar to scale from zero, the interval as a whisker, the figure and the
//! ratio to the best; a run of targets the rule cannot tell apart shares
//! one shaded band with a bracket and "≈ tied" at its side, so ties read
//! as groups, not as footnotes. The findings' sentences stay below, folded,
//! for those who read. HTML and CSS only, like [`super::bars`]: names and
//! figures are laid out by the browser and cannot overlap at 390 px. The
//! results site's index draws the same rankings, its names linked to the
//! targets' pages ([`Links`], [`crate::site`]).

use crate::context::Context;
use crate::escape::html as esc;
use crate::group::Group;
use crate::metric::num;
use crate::ranking::{rank, ratio_num, ratio_text, Entry, Measure};
use crate::traffic::Traffic;
use std::fmt::Write;

/// The groups drawn: every scenario's single level, and a sweep's last.
fn shown<'g, 'a>(all: &'g [Group<'a>]) -> Vec<&'g Group<'a>> {
    all.iter()
        .filter(|g| {
            !g.sweep
                || !all
                    .iter()
                    .any(|o| o.scenario == g.scenario && o.level > g.level)
        })
        .collect()
}

/// Where the results site's index points a ranking drawn from one run
/// ([`crate::site`]): the scenario's title to its section in the run's
/// report, each target's name to its own page; `key` keeps the ids of
/// several runs' rankings on one page apart. The report links within itself.
pub(crate) struct Links<'a> {
    pub key: &'a str,
    pub run_page: &'a str,
    pub target_page: &'a dyn Fn(&str) -> String,
}

/// Renders the section; nothing when no group has a throughput.
pub fn render(out: &mut String, ctx: &Context, all: &[Group]) {
    render_linked(out, ctx, all, None);
}

/// [`render`], with the links of the results site's index.
pub(crate) fn render_linked(out: &mut String, ctx: &Context, all: &[Group], links: Option<&Links>) {
    let drawn: Vec<String> = shown(all)
        .into_iter()
        .filter_map(|g| ranking(ctx, g, links))
        .collect();
    if drawn.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<section id=\"glance{}\" aria-label=\"Rankings at a glance\">\n<div class=\"glance\">\n",
        links.map_or(String::new(), |l| format!("-{}", esc(l.key)))
    );
    for d in drawn {
        out.push_str(&d);
    }
    out.push_str(
        "</div>\n<p class=\"glance-key\">Throughput, best first: bars from zero, whiskers the 95% \
         interval over server starts, the figure and how many times the best is faster; a \
         shaded band with a bracket groups targets that are not told apart (their own \
         variation and the study's margin, docs/statistics.md).",
    );
    if shown(all).iter().any(|g| g.traffic.is_hold()) {
        out.push_str(
            " A WebSocket hold is ranked by memory per idle connection instead, lowest \
             first, its bars from zero to the most, the ratio how many times the least \
             memory each uses.",
        );
    }
    out.push_str("</p>\n</section>\n");
}

/// One scenario's ranking (its throughput, or a hold's memory per idle
/// connection); None when no target has one.
fn ranking(ctx: &Context, g: &Group, links: Option<&Links>) -> Option<String> {
    let by = g.traffic.ranked_by();
    let ranked = rank(g, Measure::Metric(by));
    // Bars from zero to the largest figure: the best's when higher is
    // better, the worst's when lower is.
    let most = if by.higher_is_better() {
        ranked.first()?
    } else {
        ranked.last()?
    };
    let best = most.spread.median;
    if !(best > 0.0 && best.is_finite()) {
        return None;
    }
    let unit = if g.traffic.is_hold() {
        format!("{}/conn, lower is better", by.unit().symbol())
    } else {
        g.traffic.rate().to_string()
    };
    let ties = ranked.iter().filter(|e| e.tied_above()).count();
    let with_ci = ranked.iter().filter(|e| e.spread.half_ci.is_some()).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<figure class=\"glance-rank\" id=\"glance-{}{}\" data-rows=\"{}\" data-ties=\"{ties}\" \
         data-ci=\"{with_ci}\"><figcaption><a href=\"{}#s-{}\">{}</a> <span>{}</span></figcaption>",
        links.map_or(String::new(), |l| format!("{}-", esc(l.key))),
        esc(&g.slug()),
        ranked.len(),
        links.map_or(String::new(), |l| esc(l.run_page)),
        esc(&g.slug()),
        esc(&g.title()),
        esc(&unit),
    );
    // Runs of ties: each entry tied with the one above joins its band.
    let mut i = 0;
    while i < ranked.len() {
        let mut j = i + 1;
        while j < ranked.len() && ranked[j].tied_above() {
            j += 1;
        }
        let band = &ranked[i..j];
        if band.len() > 1 {
            out.push_str("<div class=\"band tied\" title=\"not told apart\"><span class=\"bracket\">≈ tied</span>");
        } else {
            out.push_str("<div class=\"band\">");
        }
        for e in band {
            row(&mut out, ctx, e, best, g.traffic, links);
        }
        out.push_str("</div>\n");
        i = j;
    }
    out.push_str("</figure>\n");
    Some(out)
}

fn row(
    out: &mut String,
    ctx: &Context,
    e: &Entry,
    best: f64,
    traffic: Traffic,
    links: Option<&Links>,
) {
    let s = &e.spread;
    let pct = |v: f64| (v / best * 100.0).clamp(0.0, 100.0);
    let whisker = match s.half_ci {
        Some(_) => format!(
            "<span class=\"gci\" style=\"left:{:.2}%;width:{:.2}%\"></span>",
            pct(s.ci_low()),
            (pct(s.ci_high()) - pct(s.ci_low())).max(0.3)
        ),
        None => String::new(),
    };
    let (ratio, title) = if e.ratio.value == 1.0 {
        ("best".to_string(), "the best".to_string())
    } else {
        (
            format!("{}×", ratio_num(e.ratio.value)),
            if traffic.is_hold() {
                format!("{} the least memory per connection", ratio_text(&e.ratio))
            } else {
                format!("the best is {} this", ratio_text(&e.ratio))
            },
        )
    };
    let name = esc(&e.column.marked_name());
    let name = match links {
        Some(l) => format!(
            "<a class=\"gname\" href=\"{}\">{name}</a>",
            esc(&(l.target_page)(e.target()))
        ),
        None => format!("<span class=\"gname\">{name}</span>"),
    };
    let _ = writeln!(
        out,
        "<div class=\"g t{}\" style=\"--c:{}\" title=\"{}\">{name}\
         <span class=\"gtrack\"><span class=\"gbar\" style=\"width:{:.2}%\"></span>{whisker}</span>\
         <span class=\"gval\">{}</span><span class=\"gratio\">{}</span></div>",
        ctx.colours.index(e.target()),
        ctx.colours.of(e.target()).hex(),
        esc(&title),
        pct(s.median),
        esc(&num(s.median)),
        esc(&ratio),
    );
}
