//! The HTML cost sections (`crate::cost`): per fixed rate, ranked bars of
//! server CPU microseconds per request or message (cheapest first, log axis, 95%
//! interval whiskers) with the targets that could not carry the rate said
//! under them; the standing cost; and past the knee, goodput against the
//! offered rate (both as multiples of each target's capacity, the diagonal
//! drawn: a server on it serves everything in time) with a table of
//! errors, unsent requests and recovery times.

use super::bars::{self as hbars, Row};
use super::charts::{self, Line};
use super::figure::{figure, figure_html, rgb, tag_series};
use crate::context::Context;
use crate::cost::{errors_text, goodput_pct, recovery_text, sections, Section};
use crate::escape::html as esc;
use crate::metric::num;
use std::fmt::Write;

/// Every cost scenario of the run (nothing without any).
pub fn render(out: &mut String, ctx: &Context) {
    let all = sections(ctx.data);
    if all.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section id=\"s-cost\">\n<h2>{}</h2>",
        esc(&crate::cost::title(&all))
    );
    for sec in &all {
        let noun = sec.traffic.noun();
        let slug = format!("cost-{}", sec.scenario);
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<div class=\"charts\">",
            esc(sec.scenario)
        );
        for p in sec.points.iter().filter(|p| !p.costs.is_empty()) {
            let body = hbars::ranked(
                &ctx.colours,
                &format!("{} at {}: server CPU µs per {noun}", sec.scenario, p.title),
                &format!("µs per {noun}"),
                &bars(sec, p),
            );
            figure_html(
                out,
                &slug,
                "bars",
                &format!(
                    "Server CPU per completed {noun} at a constant offered rate (median over \
                     starts, 95% interval), cheapest first; only points where the rate was carried"
                ),
                &body,
                "hbars",
            );
        }
        if !sec.overloads.is_empty() {
            figure(
                out,
                &slug,
                "goodput",
                "Goodput (responses within the deadline, per second of the overload) against \
                 the offered rate, both in multiples of each target's capacity; dashed: the \
                 diagonal, where everything offered is served in time",
                charts::goodput_curves(
                    &format!("{}: goodput against the offered rate", sec.scenario),
                    &goodput_lines(ctx, sec),
                )
                .map(|svg| tag_series(ctx, &svg)),
            );
        }
        out.push_str("</div>\n");
        notes(out, sec);
        tables(out, sec);
    }
    out.push_str("</section>\n");
}

/// Per fixed rate, one line naming the targets not ranked there and why.
fn notes(out: &mut String, sec: &Section<'_>) {
    for p in sec.points.iter().filter(|p| !p.unsustained.is_empty()) {
        let who: Vec<String> = p
            .unsustained
            .iter()
            .map(|(t, why)| format!("<b>{}</b> {}", esc(t), esc(why)))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">Not ranked at {}: {}.</p>",
            esc(&p.title),
            who.join("; ")
        );
    }
}

fn tables(out: &mut String, sec: &Section<'_>) {
    if !sec.standing.is_empty() {
        out.push_str(
            "<div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>Standing cost</th>\
             <th>CPU (ms per s, no load)</th><th>RSS (MiB)</th></tr></thead><tbody>\n",
        );
        for (t, s) in &sec.standing {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(t),
                esc(&num(s.cpu_ms_per_s())),
                esc(&num(s.rss_mib))
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if sec.overloads.is_empty() {
        return;
    }
    let rate = sec.traffic.rate();
    let _ = writeln!(
        out,
        "<div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>Past the knee</th>\
         <th>offered</th><th>served ({rate})</th><th>goodput ({rate})</th><th>goodput</th>\
         <th>errors</th><th>unsent</th><th>recovery</th></tr></thead><tbody>",
    );
    for r in &sec.overloads {
        let o = r.overload;
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}% ({} {rate})</td><td>{}</td><td>{}</td><td>{:.1}%</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(r.target),
            esc(&num(o.factor * 100.0)),
            esc(&num(o.offered_rps)),
            esc(&num(o.throughput_rps)),
            esc(&num(o.goodput_rps)),
            goodput_pct(o),
            esc(&errors_text(o)),
            o.unsent,
            esc(&recovery_text(o))
        );
    }
    out.push_str("</tbody></table></div>\n");
}

fn bars(sec: &Section<'_>, p: &crate::cost::Point<'_>) -> Vec<Row> {
    p.costs
        .iter()
        .map(|c| {
            let ci = c.us.half_ci.map(|_| (c.us.ci_low(), c.us.ci_high()));
            let mut tip = vec![format!(
                "{}: {} µs per {} at {} {}",
                c.target,
                num(c.us.median),
                sec.traffic.noun(),
                num(c.offered_rps),
                sec.traffic.rate()
            )];
            if let Some((lo, hi)) = ci {
                tip.push(format!("95% interval {}–{}", num(lo), num(hi)));
            }
            tip.push(format!("{} start(s)", c.us.n));
            if c.tied_above() {
                tip.push("tied with the cheaper one above: not told apart".into());
            }
            Row {
                target: c.target.to_string(),
                label: if c.tied_above() {
                    format!("{} {}", super::ranked::TIE_MARK, c.target)
                } else {
                    c.target.to_string()
                },
                value: c.us.median,
                ci,
                tip,
            }
        })
        .collect()
}

/// Each target's goodput against the offered rate, as multiples of its
/// capacity: its fixed fractions below the knee and its overloads.
fn goodput_lines(ctx: &Context, sec: &Section<'_>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let below = sec.below_knee.iter().map(|&(t, f, g)| (t, (f, g)));
    let over = sec.overloads.iter().map(|r| {
        let o = r.overload;
        (
            r.target,
            (o.factor, o.goodput_rps / o.capacity_rps.max(1e-9)),
        )
    });
    for (target, point) in below.chain(over) {
        match out.iter_mut().find(|l| l.label == target) {
            Some(l) => l.points.push(point),
            None => out.push(Line {
                label: target.to_string(),
                color: rgb(ctx, target),
                points: vec![point],
            }),
        }
    }
    for l in &mut out {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    out
}
