//! The HTML sections of capacity scenarios: per scenario, the capacity bars
//! (req/s meeting the SLO, best first, the SLO in the chart's title, 95% CI
//! whiskers with repetitions) and the latency-vs-offered-load curves; for
//! a mix, a table of each kind's p99 at the capacity and the kind that
//! broke the SLO first.

use super::bars::{self as hbars, Row};
use super::charts::{self, Line, SloLine};
use super::figure::{figure, figure_html, rgb, tag_series};
use crate::capacity::{sections, Section};
use crate::context::Context;
use crate::escape::html as esc;
use crate::metric::num;
use std::fmt::Write;

/// Every capacity scenario of the run (nothing without any).
pub fn render(out: &mut String, ctx: &Context) {
    for sec in sections(ctx.data) {
        let slug = format!("capacity-{}", sec.scenario);
        let _ = writeln!(
            out,
            "<section id=\"s-{}\">\n<h2>{} — capacity under {}</h2>",
            esc(&slug),
            esc(sec.scenario),
            esc(&sec.slo)
        );
        out.push_str("<div class=\"charts\">\n");
        let body = hbars::ranked(
            &ctx.colours,
            &format!("{}: req/s meeting {}", sec.scenario, sec.slo),
            "req/s at the SLO",
            &bars(&sec),
        );
        figure_html(
            out,
            &slug,
            "bars",
            "Capacity: the highest confirmed constant rate meeting every SLO (median, 95% CI \
             whiskers with 2+ repetitions), best first; targets without one are left out",
            &body,
            "hbars",
        );
        let (p50, p99) = curves(ctx, &sec);
        figure(
            out,
            &slug,
            "curves",
            "Latency against offered load at 25, 50, 75, 90 and 100% of each target's capacity \
             (intended-start latency); dashed: the SLO",
            charts::latency_curves(
                &format!("{}: p50 latency against the offered rate", sec.scenario),
                &p50,
                &p99,
                &slo_lines(ctx, &sec),
            )
            .map(|svg| tag_series(ctx, &svg)),
        );
        out.push_str("</div>\n");
        kinds_table(out, &sec);
        out.push_str("</section>\n");
    }
}

/// A mix's ranking: each target's capacity, each kind's p99 at it, and
/// the kind that broke the SLO first (nothing without a mix).
fn kinds_table(out: &mut String, sec: &Section) {
    if sec.kinds.is_empty() {
        return;
    }
    out.push_str(
        "<p>Each kind's p99 at the capacity (the curve's level at that rate); <em>broke first</em>: \
         the kind whose rule was furthest past its bound at the lowest failing rate.</p>\n\
         <div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>Target</th>\
         <th>Capacity (req/s)</th><th>CPUs per 1k req/s</th>",
    );
    for k in &sec.kinds {
        let _ = write!(out, "<th>{} p99 (ms)</th>", esc(k));
    }
    out.push_str("<th>Broke first</th></tr></thead>\n<tbody>\n");
    for r in &sec.rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            esc(r.target),
            esc(&r.capacity_cell()),
            esc(&sec.cpus_per_1k_cell(r))
        );
        for k in &sec.kinds {
            let cell = r.kind_p99_at_capacity(k).map_or("—".to_string(), num);
            let _ = write!(out, "<td>{}</td>", esc(&cell));
        }
        let broke = r.broke_first().unwrap_or_else(|| "—".to_string());
        let _ = writeln!(out, "<td>{}</td></tr>", esc(&broke));
    }
    out.push_str("</tbody></table></div>\n");
}

fn bars(sec: &Section) -> Vec<Row> {
    let mut rows: Vec<Row> = sec
        .rows
        .iter()
        .filter_map(|r| {
            let s = r.capacity?;
            let ci = s.half_ci.map(|_| (s.ci_low(), s.ci_high()));
            let mut tip = vec![format!(
                "{}: {} req/s at {}",
                r.target,
                num(s.median),
                sec.slo
            )];
            if let Some((lo, hi)) = ci {
                tip.push(format!("95% CI {}–{}", num(lo), num(hi)));
            }
            tip.push(format!("{} repetition(s)", s.n));
            if let Some(c) = sec.cpus_per_1k(r) {
                tip.push(format!("{} CPUs per 1k req/s", num(c)));
            }
            Some(Row {
                target: r.target.to_string(),
                label: r.target.to_string(),
                value: s.median,
                ci,
                tip,
            })
        })
        .collect();
    // Best first, as every ranked chart of the page.
    rows.sort_by(|a, b| b.value.total_cmp(&a.value));
    rows
}

fn curves(ctx: &Context, sec: &Section) -> (Vec<Line>, Vec<Line>) {
    let line = |r: &crate::capacity::Row, f: fn(&shootout_engine::LatencySummary) -> f64| Line {
        label: r.target.to_string(),
        color: rgb(ctx, r.target),
        points: r
            .curve
            .iter()
            .map(|l| (l.target_rps, f(&l.latency_ms)))
            .collect(),
    };
    let rows = sec.rows.iter().filter(|r| !r.curve.is_empty());
    (
        rows.clone().map(|r| line(r, |l| l.p50)).collect(),
        rows.map(|r| line(r, |l| l.p99)).collect(),
    )
}

/// The latency rules of the scenario's SLO (error-rate rules have no line).
fn slo_lines(ctx: &Context, sec: &Section) -> Vec<SloLine> {
    let Some(search) = ctx
        .data
        .capacity
        .iter()
        .find(|s| s.scenario == sec.scenario)
    else {
        return Vec::new();
    };
    search
        .result
        .slo
        .iter()
        .filter(|t| t.is_latency())
        .map(|t| SloLine {
            ms: t.value(),
            text: t.text().to_string(),
            median: matches!(t.metric(), "p50" | "median" | "mean"),
        })
        .collect()
}
