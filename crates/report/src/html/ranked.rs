//! A scenario's ranked charts: throughput, efficiency (req per CPU-second,
//! req per MiB; messages for a WebSocket echo), latency overhead above a
//! route's floor, and the grouped memory and CPU bars; a WebSocket hold's
//! memory per idle connection instead of its rates. Each is ordered by [`crate::ranking::rank`], the
//! rule the findings use, and each bar's tooltip holds the exact value,
//! its interval, the repetitions and the load's settings.

use super::bars::{self, Row};
use super::figure::figure_html;
use crate::context::Context;
use crate::group::{Column, Group};
use crate::metric::{num, Metric};
use crate::ranking::{rank, Entry, Measure};
use crate::traffic::Traffic;
use std::time::Duration;

/// The floor a route puts under every response (timed: 20 ms, wait_time:
/// 1 s), from SPEC.md's route table; None for routes without one.
pub fn floor_ms(scenario: &str) -> Option<f64> {
    shootout_contract::spec::ScenarioName::ALL
        .into_iter()
        .find(|s| s.as_str() == scenario)
        .and_then(|s| s.route().min_duration)
        .map(|d: Duration| d.as_secs_f64() * 1000.0)
}

/// The load's settings in words, from the first repetition.
pub fn settings(c: &Column) -> String {
    let s = &c.reps[0].summary;
    let rate = s.rate.map_or(String::new(), |r| {
        let rate = crate::traffic::Traffic::of_measurement(c.reps[0]).rate();
        format!(", {} {rate} offered", num(r))
    });
    format!(
        "{} loop, {} connections{}, {} s measured{}",
        s.mode,
        s.connections,
        if s.keepalive { " (keep-alive)" } else { "" },
        num(s.duration_s),
        rate
    )
}

/// The tooltip of one ranked bar.
fn tip(e: &Entry, measure: Measure, traffic: Traffic) -> Vec<String> {
    let unit = measure.unit(traffic);
    let s = &e.spread;
    let mut t = vec![format!("{}: {} {unit}", e.target(), num(s.median))];
    match s.half_ci {
        Some(_) => t.push(format!(
            "95% CI {}–{} · CV {:.1}%",
            num(s.ci_low()),
            num(s.ci_high()),
            s.cv.unwrap_or(0.0) * 100.0
        )),
        None => t.push("one repetition: no interval".into()),
    }
    let reps: Vec<String> = e
        .column
        .reps
        .iter()
        .map(|m| num(measure.value(m)))
        .collect();
    t.push(format!("{} repetitions: {}", reps.len(), reps.join(", ")));
    if e.ratio.value != 1.0 {
        t.push(format!(
            "the best is {} this",
            crate::ranking::ratio_text(&e.ratio)
        ));
    }
    t.push(settings(&e.column));
    t
}

/// Marks a bar tied with the one above it: the two are not told apart.
pub const TIE_MARK: &str = "≈";

/// Rows of a ranked chart for `measure`; a target tied with the one above
/// it is labelled `≈ name`, and its tooltip says with which.
pub fn rows(g: &Group, measure: Measure) -> Vec<Row> {
    let ranked = rank(g, measure);
    ranked
        .iter()
        .enumerate()
        .map(|(i, e)| Row {
            target: e.target().to_string(),
            label: if e.tied_above() {
                format!("{TIE_MARK} {}", e.column.marked_name())
            } else {
                e.column.marked_name()
            },
            value: e.spread.median,
            ci: e
                .spread
                .half_ci
                .map(|_| (e.spread.ci_low(), e.spread.ci_high())),
            tip: {
                let mut t = tip(e, measure, g.traffic);
                if e.tied_above() {
                    t.insert(
                        1,
                        format!("tied with {}: not told apart", ranked[i - 1].target()),
                    );
                }
                t
            },
        })
        .collect()
}

/// A ranked figure of one measure.
#[allow(clippy::too_many_arguments)]
pub fn figure(
    out: &mut String,
    ctx: &Context,
    g: &Group,
    kind: &str,
    title: &str,
    caption: &str,
    measure: Measure,
) {
    let body = bars::ranked(
        &ctx.colours,
        title,
        &measure.unit(g.traffic),
        &rows(g, measure),
    );
    figure_html(out, &g.slug(), kind, caption, &body, "hbars");
}

/// Every ranked figure of a scenario × level, best first: a hold's memory
/// per idle connection instead of its rates, which mean nothing there.
pub fn render(out: &mut String, ctx: &Context, g: &Group) {
    if g.traffic.is_hold() {
        hold(out, ctx, g);
        return;
    }
    let nouns = g.traffic.title_nouns();
    figure(
        out,
        ctx,
        g,
        "rps",
        &format!("{nouns} per second"),
        "Throughput, best first: median with 95% interval whiskers over server starts; \
         ≈ marks a target tied with the one above",
        Measure::Metric(Metric::Rps),
    );
    if let Some(floor) = floor_ms(g.scenario) {
        for (p99, kind, name) in [
            (false, "overhead-p50", "p50"),
            (true, "overhead-p99", "p99"),
        ] {
            figure(
                out,
                ctx,
                g,
                kind,
                &format!("{name} latency above the {} ms floor", num(floor)),
                &format!(
                    "The framework's share of the {name} latency: the route waits {} ms by \
                     design, so this is the {name} minus that floor; lowest first",
                    num(floor)
                ),
                Measure::Overhead {
                    p99,
                    floor_ms: floor,
                },
            );
        }
    }
    figure(
        out,
        ctx,
        g,
        "efficiency",
        &format!("{nouns} per server CPU-second"),
        &format!(
            "Efficiency, best first: completed {} per second of server CPU time",
            g.traffic.nouns()
        ),
        Measure::Metric(Metric::ReqPerCpuS),
    );
    figure(
        out,
        ctx,
        g,
        "per-mib",
        &format!("{nouns} per second per MiB of peak RSS"),
        "Throughput per MiB of peak resident memory, best first",
        Measure::ReqPerMib,
    );
    memory(out, ctx, g);
    if g.metrics().contains(&Metric::DbCpuS) {
        let groups = grouped(g, &[Metric::CpuS, Metric::DbCpuS], Metric::CpuS);
        let body = bars::grouped(
            &ctx.colours,
            "CPU seconds during the load",
            "s",
            &["server", "database"],
            &groups,
        );
        figure_html(
            out,
            &g.slug(),
            "cpu",
            "The server's CPU beside PostgreSQL's (medians), so that a framework that hands \
             work to the database does not look frugal",
            &body,
            "hbars",
        );
    }
}

/// A hold's figures: memory per idle connection, then the RSS bars.
fn hold(out: &mut String, ctx: &Context, g: &Group) {
    figure(
        out,
        ctx,
        g,
        "per-connection",
        "Memory per idle connection",
        "Memory per idle connection, lowest first: (RSS while held − RSS idle) / \
         connections held, median with 95% interval whiskers over server starts; ≈ marks a \
         target tied with the one above",
        Measure::Metric(Metric::KibPerIdleConnection),
    );
    memory(out, ctx, g);
}

/// Idle, peak and after RSS per target, lowest peak first.
fn memory(out: &mut String, ctx: &Context, g: &Group) {
    let groups = grouped(
        g,
        &[Metric::RssIdle, Metric::RssPeak, Metric::RssAfter],
        Metric::RssPeak,
    );
    let body = bars::grouped(
        &ctx.colours,
        "Resident memory (RSS)",
        "MiB",
        &["idle", "peak", "after"],
        &groups,
    );
    figure_html(
        out,
        &g.slug(),
        "memory",
        "Resident memory: idle before the load, peak under it, after it (medians); lowest peak first",
        &body,
        "hbars",
    );
}

/// Per target the median of each metric, ordered by the ranking of `by`.
fn grouped(g: &Group, metrics: &[Metric], by: Metric) -> Vec<bars::Group> {
    rank(g, Measure::Metric(by))
        .iter()
        .map(|e| {
            let c = &e.column;
            let values: Vec<f64> = metrics
                .iter()
                .map(|&m| c.spread(m).map_or(f64::NAN, |s| s.median))
                .collect();
            let mut tip = vec![c.target.to_string()];
            for (m, v) in metrics.iter().zip(&values) {
                tip.push(format!("{}: {}", g.traffic.label(*m), num(*v)));
            }
            tip.push(format!("{} repetitions · {}", c.reps.len(), settings(c)));
            bars::Group {
                target: c.target.to_string(),
                values,
                tip,
            }
        })
        .collect()
}
