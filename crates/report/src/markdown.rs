//! The Markdown report: the seed-shaped tables the articles pasted into
//! their posts, one per scenario (per level for sweeps). Rows are metrics,
//! columns are targets; the best value of a row is bold and the worst
//! italic; with repetitions each cell is `median ± half-CI`.

use crate::escape::md;
use crate::group::{
    disturbed_note, groups, mismatch_note, not_steady_note, Column, Group, BOUND_MARK,
};
use crate::metric::{fixed, num, row_decimals, Metric};
use crate::published::Published;
use crate::{context::Context, stats::Spread};
use std::fmt::Write;

/// Renders the whole Markdown report.
pub fn render(ctx: &Context) -> String {
    let mut out = header(ctx);
    out.push_str("\n## Findings\n\n");
    out.push_str(&crate::findings::markdown(&crate::findings::findings(ctx)));
    let all = groups(ctx.data);
    tls_cost(&mut out, &crate::tls_cost::costs(&all));
    for g in &all {
        table(&mut out, ctx, g);
    }
    crate::capacity::markdown(&mut out, ctx.data);
    crate::cost::markdown(&mut out, ctx.data);
    cluster(&mut out, ctx);
    versions(&mut out, ctx);
    failures(&mut out, ctx);
    out
}

/// The Cluster section of a run on Kubernetes (crate::cluster): its
/// version, nodes and where each target's servers ran; nothing for a
/// local run.
fn cluster(out: &mut String, ctx: &Context) {
    use crate::cluster::{NODE_HEADER, PLACEMENT_HEADER};
    let data = ctx.data;
    if !crate::cluster::present(data) {
        return;
    }
    out.push_str("\n## Cluster\n");
    if let Some(c) = &data.run.cluster {
        let _ = writeln!(out, "\n{}\n", md(&crate::cluster::line(c)));
        let _ = writeln!(out, "{}\n", md(crate::cluster::SOURCES));
        let _ = writeln!(
            out,
            "| {} |\n|---|---|---|---:|---|---|---|---|---|",
            NODE_HEADER.join(" | ")
        );
        for row in crate::cluster::node_rows(c) {
            let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(
        out,
        "\nWhere each target's servers ran:\n\n| {} |\n|---|---|---|",
        PLACEMENT_HEADER.join(" | ")
    );
    for row in crate::cluster::placement_rows(data) {
        let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// The Versions table: what each target's build resolved, and the run's
/// own versions under it.
fn versions(out: &mut String, ctx: &Context) {
    let head = crate::provenance::HEADER;
    let _ = writeln!(
        out,
        "\n## Versions\n\n| {} |\n|---|---|---|",
        head.join(" | ")
    );
    for row in crate::provenance::rows(&ctx.data.targets) {
        let cells: Vec<String> = row.iter().map(|c| md(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let line = crate::provenance::run_line(&ctx.data.run);
    let _ = writeln!(out, "\nRun: {}.", md(&line));
}

fn header(ctx: &Context) -> String {
    let run = &ctx.data.run;
    let mut s = format!("# {} — run {}\n\n", md(&run.study), run.id);
    let _ = writeln!(s, "{}\n", md(&ctx.environment_line()));
    if let Ok(study) = &ctx.study {
        let order = crate::context::order_line(study, run.order_seed);
        let _ = writeln!(s, "{}\n", md(&order));
    }
    if let Some(line) = ctx.pipelining_line() {
        let _ = writeln!(s, "{}\n", md(&line));
    }
    if let Some(db) = crate::database::line(run) {
        let _ = writeln!(s, "{}\n", md(&db));
    }
    if let Some(note) = crate::database::sharing_note(run) {
        let _ = writeln!(s, "> **{}**\n", md(&note));
    }
    if let Some(note) = ctx.study_note() {
        let _ = writeln!(s, "> {}\n", md(&note));
    }
    if let Some(note) = ctx.unmeasured_note() {
        let _ = writeln!(s, "> **{}**\n", md(&note));
    }
    s.push_str(
        "Each cell is the median over the repetitions, `± half-width of the 95% CI` \
         from the target's start variance pooled over its scenarios (docs/statistics.md) when \
         there are two or more starts. **Bold** is the best value of a row and every value \
         tied with it, *italic* the worst.\n",
    );
    s
}

/// The TLS-cost table, when some scenario has the same load in cleartext
/// and over TLS.
fn tls_cost(out: &mut String, costs: &[crate::tls_cost::TlsCost]) {
    if costs.is_empty() {
        return;
    }
    let head = crate::tls_cost::HEADER;
    let _ = writeln!(out, "\n## TLS cost\n\n| {} |", head.join(" | "));
    let _ = writeln!(out, "|---|---|---|---|{}", "---:|".repeat(head.len() - 4));
    for c in costs {
        let cells: Vec<String> = crate::tls_cost::cells(c).iter().map(|x| md(x)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    let _ = writeln!(out, "\n{}", crate::tls_cost::NOTE);
}

fn table(out: &mut String, ctx: &Context, g: &Group) {
    let _ = writeln!(out, "\n## {}\n", md(&g.title()));
    let published = ctx.published.has_any(g.scenario, g.level);
    let mut head = String::from("| Metric |");
    let mut rule = String::from("|---|");
    for c in &g.columns {
        let _ = write!(head, " {}{} |", md(c.target), c.marks(""));
        rule.push_str("---:|");
        if published {
            let _ = write!(head, " {} published |", md(c.target));
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(out, "{head}\n{rule}");
    for metric in g.rows() {
        row(out, ctx, g, metric, published);
    }
    footnotes(out, g);
}

fn row(out: &mut String, ctx: &Context, g: &Group, metric: Metric, published: bool) {
    let spreads: Vec<Option<Spread>> = g.columns.iter().map(|c| c.spread(metric)).collect();
    let (best, worst) = crate::ranking::best_and_worst(g, metric);
    let digits = spread_decimals(&spreads);
    let _ = write!(out, "| {} |", g.traffic.label(metric));
    for (i, (c, s)) in g.columns.iter().zip(&spreads).enumerate() {
        let cell = s.as_ref().map_or("—".to_string(), |s| cell_text(s, digits));
        let cell = match (best.contains(&i), worst.contains(&i)) {
            (true, _) => format!("**{cell}**"),
            (_, true) => format!("*{cell}*"),
            _ => cell,
        };
        let _ = write!(out, " {cell} |");
        if published {
            let p = published_value(&ctx.published, ctx, c, g, metric);
            let _ = write!(out, " {} |", p.map_or("—".to_string(), num));
        }
    }
    out.push('\n');
}

fn published_value(p: &Published, ctx: &Context, c: &Column, g: &Group, m: Metric) -> Option<f64> {
    let t = ctx.target(c.target)?;
    p.get(t, g.scenario, g.level, m)
}

/// Decimals shared by the cells of one row (see [`row_decimals`]).
pub fn spread_decimals(spreads: &[Option<Spread>]) -> usize {
    let medians: Vec<f64> = spreads.iter().flatten().map(|s| s.median).collect();
    row_decimals(&medians)
}

/// `median ± h` with `digits` decimals, or the median alone for a single repetition.
pub fn cell_text(s: &Spread, digits: usize) -> String {
    match s.half_ci {
        Some(h) => format!("{} ± {}", fixed(s.median, digits), fixed(h, digits)),
        None => fixed(s.median, digits),
    }
}

fn footnotes(out: &mut String, g: &Group) {
    if g.columns.iter().any(|c| c.generator_bound()) {
        let _ = writeln!(
            out,
            "\n{BOUND_MARK} Generator-bound: the load generator used 90% or more of its cores \
             in at least one repetition, so these numbers are a floor for the server, not its limit."
        );
    }
    if let Some(note) = mismatch_note(g) {
        let _ = writeln!(out, "\n{}", md(&note));
    }
    if let Some(note) = crate::budget::note(g.columns.iter().flat_map(|c| c.reps.iter().copied())) {
        let _ = writeln!(out, "\n{}", md(&note));
    }
    if let Some(note) = not_steady_note(g) {
        let _ = writeln!(out, "\n{}", md(&note));
    }
    if let Some(note) = disturbed_note(g) {
        let _ = writeln!(out, "\n{}", md(&note));
    }
    if let Some(note) = crate::group::short_note(g) {
        let _ = writeln!(out, "\n{}", md(&note));
    }
}

fn failures(out: &mut String, ctx: &Context) {
    let failed: Vec<_> = ctx
        .data
        .targets
        .iter()
        .filter(|t| t.status.as_str() != "ok")
        .collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("\n## Targets not measured\n\n");
    for t in failed {
        let reason = t.reason.as_deref().unwrap_or("no reason recorded");
        let _ = writeln!(out, "- {}: {} — {}", md(&t.target), t.status, md(reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranking::extremes;

    fn sp(median: f64) -> Option<Spread> {
        Spread::of(&[median])
    }

    #[test]
    fn ties_share_bold_and_italic() {
        let s = [sp(1.0), sp(3.0), sp(1.0), None, sp(3.0)];
        assert_eq!(extremes(&s, true), (vec![1, 4], vec![0, 2]));
        assert_eq!(extremes(&s, false), (vec![0, 2], vec![1, 4]));
        assert_eq!(extremes(&[sp(2.0), sp(2.0)], true), (vec![], vec![]));
        assert_eq!(extremes(&[sp(2.0), None], true), (vec![], vec![]));
    }

    #[test]
    fn cells_share_the_row_precision() {
        let s = [sp(2.04), sp(2.0)];
        let d = spread_decimals(&s);
        let texts: Vec<String> = s.iter().flatten().map(|s| cell_text(s, d)).collect();
        assert_eq!(texts, ["2.040", "2.000"]);
        let ci = Spread::of(&[10.0, 12.0, 14.0]).expect("spread");
        assert_eq!(cell_text(&ci, 1), "12.0 ± 5.0");
        assert_eq!(spread_decimals(&[sp(0.0), sp(3.0)]), 0);
    }
}
