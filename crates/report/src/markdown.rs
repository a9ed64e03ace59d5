//! The Markdown report: the seed-shaped tables the articles pasted into
//! their posts, one per scenario (per level for sweeps). Rows are metrics,
//! columns are targets; the best value of a row is bold and the worst
//! italic; with repetitions each cell is `median ± half-CI`.

use crate::escape::md;
use crate::group::{groups, Column, Group};
use crate::metric::{num, num_like, Metric};
use crate::published::Published;
use crate::{context::Context, stats::Spread};
use std::fmt::Write;

const BOUND_MARK: &str = "‡";

/// Renders the whole Markdown report.
pub fn render(ctx: &Context) -> String {
    let mut out = header(ctx);
    for g in groups(ctx.data) {
        table(&mut out, ctx, &g);
    }
    failures(&mut out, ctx);
    out
}

fn header(ctx: &Context) -> String {
    let run = &ctx.data.run;
    let mut s = format!("# {} — run {}\n\n", md(&run.study), run.id);
    let _ = writeln!(s, "{}\n", md(&ctx.environment_line()));
    s.push_str(
        "Each cell is the median over the repetitions, `± half-width of the 95% CI` \
         (Student t) when there are two or more. **Bold** is the best value of a row, \
         *italic* the worst.\n",
    );
    s
}

fn table(out: &mut String, ctx: &Context, g: &Group) {
    let _ = writeln!(out, "\n## {}\n", md(&g.title()));
    let published = ctx.published.has_any(g.scenario, g.level);
    let mut head = String::from("| Metric |");
    let mut rule = String::from("|---|");
    for c in &g.columns {
        let mark = if c.generator_bound() { BOUND_MARK } else { "" };
        let _ = write!(head, " {}{mark} |", md(c.target));
        rule.push_str("---:|");
        if published {
            let _ = write!(head, " {} published |", md(c.target));
            rule.push_str("---:|");
        }
    }
    let _ = writeln!(out, "{head}\n{rule}");
    for metric in Metric::ALL {
        row(out, ctx, g, metric, published);
    }
    footnotes(out, g);
}

fn row(out: &mut String, ctx: &Context, g: &Group, metric: Metric, published: bool) {
    let spreads: Vec<Option<Spread>> = g.columns.iter().map(|c| c.spread(metric)).collect();
    let (best, worst) = extremes(&spreads, metric.higher_is_better());
    let _ = write!(out, "| {} |", metric.label());
    for (i, (c, s)) in g.columns.iter().zip(&spreads).enumerate() {
        let cell = s.as_ref().map_or("—".to_string(), cell_text);
        let cell = match (Some(i) == best, Some(i) == worst) {
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

/// `median ± h`, or the median alone for a single repetition.
pub fn cell_text(s: &Spread) -> String {
    match s.half_ci {
        Some(h) => format!("{} ± {}", num(s.median), num_like(h, s.median)),
        None => num(s.median),
    }
}

/// Indices of the best and worst medians; None when fewer than two differ.
pub fn extremes(
    spreads: &[Option<Spread>],
    higher_is_better: bool,
) -> (Option<usize>, Option<usize>) {
    let vals: Vec<(usize, f64)> = spreads
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s.median)))
        .collect();
    let cmp = |a: &&(usize, f64), b: &&(usize, f64)| a.1.total_cmp(&b.1);
    let (Some(lo), Some(hi)) = (vals.iter().min_by(cmp), vals.iter().max_by(cmp)) else {
        return (None, None);
    };
    if vals.len() < 2 || lo.1 == hi.1 {
        return (None, None);
    }
    if higher_is_better {
        (Some(hi.0), Some(lo.0))
    } else {
        (Some(lo.0), Some(hi.0))
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
