//! The parts of the HTML page: header, target badges, one section per
//! scenario × level (charts and the metric table) and the environment table.

use super::charts::{self, ChartError, Line};
use super::figure::{figure, rgb, tag_series};
use crate::context::Context;
use crate::escape::html as esc;
use crate::group::{disturbed_note, mismatch_note, not_steady_note, Column, Group};
use crate::markdown::{cell_text, spread_decimals};
use crate::metric::{num, second_rate, second_span, Metric};
use shootout_store::TargetRecord;
use std::fmt::Write;

/// The study's description: its first sentence, the rest folded under it
/// (the default study's is twenty lines of method that no one needs
/// before the results).
fn description(out: &mut String, text: &str) {
    let cut = text
        .char_indices()
        .find(|&(i, c)| c == '.' && text[i + 1..].starts_with(char::is_whitespace))
        .map(|(i, _)| i + 1);
    match cut {
        Some(i) if !text[i..].trim().is_empty() => {
            let _ = writeln!(
                out,
                "<details class=\"description\"><summary>{}</summary><p>{}</p></details>",
                esc(&text[..i]),
                esc(text[i..].trim())
            );
        }
        _ => {
            let _ = writeln!(out, "<p class=\"description\">{}</p>", esc(text));
        }
    }
}

/// The page's title and when the run was: all that comes before the
/// rankings at a glance ([`super::glance`]).
pub fn header(out: &mut String, ctx: &Context) {
    let r = &ctx.data.run;
    let _ = write!(
        out,
        "<header>\n<h1>{} — run {}</h1>\n\
         <p class=\"meta\">Started {} · status {} · scale {}</p>\n</header>\n",
        esc(&r.study),
        r.id,
        esc(&r.started_at),
        esc(r.status.as_str()),
        num(r.scale),
    );
}

/// Where and how the run was made (host, pinning, the study, the
/// database), after the rankings at a glance.
pub fn run_meta(out: &mut String, ctx: &Context) {
    let r = &ctx.data.run;
    let h = &r.host;
    let _ = write!(
        out,
        "<section id=\"run\" class=\"run-meta\">\n\
         <p class=\"meta\">Host {} · {} ({} cores, {} MiB) · kernel {}</p>\n\
         <p class=\"meta\">Pinning: server CPUs {} · generator CPUs {} · shootout {}</p>\n",
        esc(&h.hostname),
        esc(&h.cpu_model),
        h.cores,
        h.mem_total_mib,
        esc(&h.kernel),
        esc(&crate::cpus::cpu_list(&r.pinning.server_cpus)),
        esc(&crate::cpus::cpu_list(&r.pinning.generator_cpus)),
        esc(&r.tool_version),
    );
    if let Ok(study) = &ctx.study {
        description(out, &study.description);
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            esc(&crate::context::order_line(study, r.order_seed))
        );
    }
    if let Some(db) = crate::database::line(r) {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&db));
    }
    if let Some(line) = ctx.pipelining_line() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", esc(&line));
    }
    if let Some(note) = crate::database::sharing_note(r) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = ctx.study_note() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = ctx.unmeasured_note() {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    out.push_str("</section>\n");
}

pub fn targets(out: &mut String, ctx: &Context) {
    out.push_str(
        "<section id=\"targets\">\n<h2>Targets</h2>\n<div class=\"scroll\"><table class=\"text sortable\">\n<thead><tr><th>Target</th>\
         <th>Language / framework</th><th>Status</th><th>Footprint</th><th>Build</th><th>Ran as</th></tr></thead>\n<tbody>\n",
    );
    for t in &ctx.data.targets {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{} / {}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.target),
            esc(&t.language),
            esc(&t.framework),
            t.description
                .as_deref()
                .map_or(String::new(), |d| format!("<br><small>{}</small>", esc(d))),
            badge(t),
            t.footprint_bytes
                .map_or("—".into(), |b| format!("{:.1} MB", b as f64 / 1e6)),
            t.build_s.map_or("—".into(), |s| format!("{s:.1} s")),
            t.run_command
                .as_deref()
                .map_or("—".into(), |c| format!("<code>{}</code>", esc(c))),
        );
    }
    out.push_str("</tbody>\n</table></div>\n</section>\n");
}

/// "✓ verified", or the failure with its reason and log tail.
fn badge(t: &TargetRecord) -> String {
    if t.status.as_str() == "ok" {
        return "<span class=\"badge ok\">✓ verified</span>".into();
    }
    let mut s = format!(
        "<span class=\"badge fail\">✗ {}</span> {}",
        esc(&t.status.as_str().replace('_', " ")),
        esc(t.reason.as_deref().unwrap_or(""))
    );
    if let Some(log) = &t.log_tail {
        let _ = write!(
            s,
            "<details><summary>log tail</summary><pre>{}</pre></details>",
            esc(log)
        );
    }
    s
}

pub fn group(out: &mut String, ctx: &Context, g: &Group) {
    let slug = g.slug();
    let _ = writeln!(
        out,
        "<section id=\"s-{slug}\">\n<h2>{}</h2>",
        esc(&g.title())
    );
    if g.columns.iter().any(|c| c.generator_bound()) {
        out.push_str(
            "<p class=\"note\">‡ marks a generator-bound target: the load generator used 90% or more \
             of its cores, so its numbers are a floor for the server, not its limit.</p>\n",
        );
    }
    if let Some(note) = mismatch_note(g) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = crate::budget::note(g.columns.iter().flat_map(|c| c.reps.iter().copied())) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = not_steady_note(g) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = disturbed_note(g) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    if let Some(note) = crate::group::short_note(g) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
    }
    out.push_str("<div class=\"charts\">\n");
    super::ranked::render(out, ctx, g);
    figure(
        out,
        &slug,
        "latency",
        &format!(
            "{} percentile spectrum of the merged histograms",
            g.traffic.latency_word()
        ),
        spectrum(ctx, g).map(|svg| tag_series(ctx, &svg)),
    );
    figure(
        out,
        &slug,
        "timeline",
        "Per second, for the median repetition of each target",
        timeline(ctx, g).map(|svg| tag_series(ctx, &svg)),
    );
    out.push_str("</div>\n");
    table(out, ctx, g);
    out.push_str("</section>\n");
}

fn spectrum(ctx: &Context, g: &Group) -> Result<String, ChartError> {
    let lines: Vec<Line> = g
        .columns
        .iter()
        .map(|c| {
            let mut merged = c.reps[0].histogram.clone();
            for m in &c.reps[1..] {
                let _ = merged.add(&m.histogram);
            }
            Line {
                label: c.target.to_string(),
                color: rgb(ctx, c.target),
                points: charts::spectrum_points(&merged),
            }
        })
        .collect();
    charts::spectrum(
        &format!("{} by percentile", g.traffic.latency_word()),
        &lines,
    )
}

/// The repetition whose RPS is closest to the median.
fn median_rep<'a>(c: &Column<'a>) -> &'a shootout_store::Measurement {
    let med = c.spread(Metric::Rps).map_or(0.0, |s| s.median);
    let mut best = c.reps[0];
    for m in &c.reps {
        if (m.summary.rps - med).abs() < (best.summary.rps - med).abs() {
            best = m;
        }
    }
    best
}

fn timeline(ctx: &Context, g: &Group) -> Result<String, ChartError> {
    let (mut rps, mut p99) = (Vec::new(), Vec::new());
    for c in &g.columns {
        let m = median_rep(c);
        let label = format!("{} (rep {})", c.target, m.repetition + 1);
        let measured = || m.timeline.iter().filter(|s| second_span(m, s.t) >= 0.05);
        let rate = measured().filter_map(|s| Some((f64::from(s.t), second_rate(m, s, 0.05)?)));
        rps.push(Line {
            label: label.clone(),
            color: rgb(ctx, c.target),
            points: rate.collect(),
        });
        let tail = measured().map(|s| (f64::from(s.t), s.p99_ms));
        p99.push(Line {
            label,
            color: rgb(ctx, c.target),
            points: tail.collect(),
        });
    }
    let t = g.traffic;
    charts::timeline(
        &format!("{} per second", t.per_second()),
        t.rate(),
        &format!("p99 {} per second", t.latency_word().to_lowercase()),
        &rps,
        &p99,
    )
}

fn table(out: &mut String, ctx: &Context, g: &Group) {
    let published = ctx.published.has_any(g.scenario, g.level);
    out.push_str("<div class=\"scroll\"><table class=\"metrics\">\n<thead><tr><th>Metric</th>");
    for c in &g.columns {
        let _ = write!(out, "<th>{}</th>", esc(&c.marked_name()));
        if published {
            let _ = write!(out, "<th>{} published</th>", esc(c.target));
        }
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for m in g.rows() {
        let spreads: Vec<_> = g.columns.iter().map(|c| c.spread(m)).collect();
        let (best, worst) = crate::ranking::best_and_worst(g, m);
        let digits = spread_decimals(&spreads);
        let _ = write!(out, "<tr><td>{}</td>", esc(&g.traffic.label(m)));
        for (i, (c, s)) in g.columns.iter().zip(&spreads).enumerate() {
            let class = match (best.contains(&i), worst.contains(&i)) {
                (true, _) => " class=\"best\"",
                (_, true) => " class=\"worst\"",
                _ => "",
            };
            let text = s.as_ref().map_or("—".to_string(), |s| cell_text(s, digits));
            let _ = write!(out, "<td{class}>{}</td>", esc(&text));
            if published {
                let p = ctx
                    .target(c.target)
                    .and_then(|t| ctx.published.get(t, g.scenario, g.level, m));
                let _ = write!(
                    out,
                    "<td class=\"published\">{}</td>",
                    p.map_or("—".into(), num)
                );
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n<p class=\"note\">Bold: best of the row; italic: worst. Cells are the median ± the 95% CI half-width.</p>\n");
}

/// The Versions table (crate::provenance), after the environment.
pub fn versions(out: &mut String, ctx: &Context) {
    let head: Vec<String> = crate::provenance::HEADER
        .iter()
        .map(|h| format!("<th>{}</th>", esc(h)))
        .collect();
    let _ = writeln!(
        out,
        "<section id=\"versions\">\n<h2>Versions</h2>\n<div class=\"scroll\"><table class=\"text\">\n\
         <thead><tr>{}</tr></thead>\n<tbody>",
        head.concat()
    );
    for row in crate::provenance::rows(&ctx.data.targets) {
        let cells: Vec<String> = row.iter().map(|c| format!("<td>{}</td>", esc(c))).collect();
        let _ = writeln!(out, "<tr>{}</tr>", cells.concat());
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table></div>\n<p class=\"note\">Run: {}.</p>\n</section>",
        esc(&crate::provenance::run_line(&ctx.data.run))
    );
}

/// The Cluster section of a run on Kubernetes (crate::cluster), after
/// the environment; nothing for a local run.
pub fn cluster(out: &mut String, ctx: &Context) {
    use crate::cluster::{NODE_HEADER, PLACEMENT_HEADER};
    let data = ctx.data;
    if !crate::cluster::present(data) {
        return;
    }
    out.push_str("<section id=\"cluster\">\n<h2>Cluster</h2>\n");
    let table = |out: &mut String, head: &[&str], rows: Vec<Vec<String>>| {
        let head: Vec<String> = head
            .iter()
            .map(|h| format!("<th>{}</th>", esc(h)))
            .collect();
        let _ = writeln!(
            out,
            "<div class=\"scroll\"><table class=\"text\">\n<thead><tr>{}</tr></thead>\n<tbody>",
            head.concat()
        );
        for row in rows {
            let cells: Vec<String> = row.iter().map(|c| format!("<td>{}</td>", esc(c))).collect();
            let _ = writeln!(out, "<tr>{}</tr>", cells.concat());
        }
        out.push_str("</tbody>\n</table></div>\n");
    };
    if let Some(c) = &data.run.cluster {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            esc(&crate::cluster::line(c))
        );
        let _ = writeln!(
            out,
            "<p class=\"meta\">{}</p>",
            esc(crate::cluster::SOURCES)
        );
        let rows = crate::cluster::node_rows(c)
            .into_iter()
            .map(Vec::from)
            .collect();
        table(out, &NODE_HEADER, rows);
    }
    out.push_str("<p class=\"meta\">Where each target&#39;s servers ran:</p>\n");
    let rows = crate::cluster::placement_rows(data)
        .into_iter()
        .map(Vec::from)
        .collect();
    table(out, &PLACEMENT_HEADER, rows);
    out.push_str("</section>\n");
}

pub fn environment(out: &mut String, ctx: &Context) {
    out.push_str(
        "<section id=\"environment\">\n<h2>Environment</h2>\n<table class=\"text\">\n<tbody>\n",
    );
    for (k, v) in ctx.environment() {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v));
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}
