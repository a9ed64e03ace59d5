//! The cost sections of a run (a scenario's `cost` table, docs/cost.md),
//! read from the parts its probes stored: per fixed rate, each target's
//! server CPU microseconds per request (median over starts, 95% interval
//! from the target's start variance pooled over its cost points), or
//! "cannot sustain N req/s" with what it carried and why; each target's
//! standing cost (CPU and RSS with no load); and per overload multiple the
//! goodput within the deadline against what was offered, errors by class
//! and the recovery time. Cheapest first; a point that is not valid never
//! ranks. The Markdown and HTML reports and the findings read this one view.

use crate::escape::md;
use crate::metric::num;
use crate::stats::{decide_starts, Margin, Pooled, Spread};
use crate::traffic::Traffic;
use shootout_store::parts::{Overload, Standing};
use shootout_store::{Measurement, RunData};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One scenario's cost figures.
#[derive(Debug, Clone)]
pub struct Section<'a> {
    pub scenario: &'a str,
    /// What its load counts: the words of its costs (`µs per message`,
    /// `msg/s` for a WebSocket echo).
    pub traffic: Traffic,
    /// Each fixed rate (common rates first, then fractions of capacity).
    pub points: Vec<Point<'a>>,
    pub standing: Vec<(&'a str, Standing)>,
    pub overloads: Vec<OverloadRow<'a>>,
    /// Below the knee, for the goodput curve: each fixed fraction of a
    /// target's capacity and its goodput within the overloads' deadline,
    /// both as multiples of its capacity (one point per start).
    pub below_knee: Vec<(&'a str, f64, f64)>,
}

/// One fixed rate and every target's cost there.
#[derive(Debug, Clone)]
pub struct Point<'a> {
    /// `1000 req/s` or `25% of capacity`.
    pub title: String,
    /// Valid costs, cheapest first.
    pub costs: Vec<CostRow<'a>>,
    /// Targets that could not carry the rate: what they did and why.
    pub unsustained: Vec<(&'a str, String)>,
    /// Targets with a start at this point that other processes disturbed
    /// (the measurement's ※ flag, docs/columns.md).
    pub disturbed: Vec<&'a str>,
}

/// A target's cost at one rate.
#[derive(Debug, Clone)]
pub struct CostRow<'a> {
    pub target: &'a str,
    /// µs per request over its valid starts (interval from the target's
    /// pooled start variance).
    pub us: Spread,
    pub offered_rps: f64,
    /// Against the row above (cheaper): the verdict on starts (Welch's t on
    /// the pooled variances and the study's practical margin,
    /// docs/statistics.md); None for the cheapest, or with one start each
    /// (not tested).
    pub vs_above: Option<crate::stats::Verdict>,
}

impl CostRow<'_> {
    /// Not told apart from the cheaper row above it.
    pub fn tied_above(&self) -> bool {
        self.vs_above
            .is_some_and(|v| v.label == crate::stats::Label::Tie)
    }
}

/// A target at one overload multiple (median start by goodput).
#[derive(Debug, Clone)]
pub struct OverloadRow<'a> {
    pub target: &'a str,
    pub overload: &'a Overload,
}

/// The key a fixed-rate level is grouped by across targets: its common
/// rate, or its fraction of capacity (the rates then differ by target).
/// Every open-loop level has a cost part (a study's own rates, as
/// fastapi-vs-falcon's, count as common rates); an overload level is not a
/// fixed rate.
fn point_title(m: &Measurement) -> Option<String> {
    let cost = m.parts.cost.as_ref()?;
    if m.parts.overload.is_some() {
        return None;
    }
    Some(match m.parts.derived.as_ref().and_then(|d| d.fraction) {
        None => format!(
            "{} {}",
            num(cost.offered_rps),
            Traffic::of_measurement(m).rate()
        ),
        Some(f) => format!("{}% of capacity", num(f * 100.0)),
    })
}

/// Every cost scenario of the run, in the order first measured.
pub fn sections(data: &RunData) -> Vec<Section<'_>> {
    let mut scenarios: Vec<&str> = Vec::new();
    for m in &data.measurements {
        let has =
            m.parts.cost.is_some() || m.parts.standing.is_some() || m.parts.overload.is_some();
        if has && !scenarios.contains(&m.scenario.as_str()) {
            scenarios.push(&m.scenario);
        }
    }
    scenarios.into_iter().map(|sc| section(data, sc)).collect()
}

fn section<'a>(data: &'a RunData, scenario: &'a str) -> Section<'a> {
    let ms: Vec<&Measurement> = data
        .measurements
        .iter()
        .filter(|m| m.scenario == scenario)
        .collect();
    let order = crate::group::target_order(data);
    let overloads = overloads(&ms, &order);
    let below_knee = overloads
        .first()
        .map(|o| below_knee(&ms, o.overload.deadline_ms))
        .unwrap_or_default();
    Section {
        scenario,
        traffic: ms
            .first()
            .map_or(Traffic::Requests, |m| Traffic::of_measurement(m)),
        points: points(&ms, &order, crate::group::run_margin(data)),
        standing: standing(&ms, &order),
        overloads,
        below_knee,
    }
}

/// The fixed fractions of capacity as goodput points: responses within
/// `deadline_ms` per second, over the capacity.
fn below_knee<'a>(ms: &[&'a Measurement], deadline_ms: f64) -> Vec<(&'a str, f64, f64)> {
    ms.iter()
        .filter(|m| m.parts.overload.is_none() && m.summary.duration_s > 0.0)
        .filter_map(|m| {
            let d = m.parts.derived.as_ref()?;
            let f = d.fraction?;
            let good = m.histogram.count_between(0, (deadline_ms * 1e3) as u64) as f64;
            let share = good / m.summary.duration_s / d.capacity_rps.max(1e-9);
            Some((m.target.as_str(), f, share))
        })
        .collect()
}

/// Valid costs by target and point: the cells of the start variance.
type Cells<'a> = BTreeMap<(&'a str, String), Vec<f64>>;

/// Every fixed-rate point, in level order, each target ranked or not.
fn points<'a>(ms: &[&'a Measurement], order: &[&'a str], margin: Margin) -> Vec<Point<'a>> {
    let mut cells: Cells<'a> = BTreeMap::new();
    for m in ms {
        if let (Some(c), Some(t)) = (&m.parts.cost, point_title(m)) {
            if c.valid() && c.us_per_request > 0.0 {
                cells
                    .entry((m.target.as_str(), t))
                    .or_default()
                    .push(c.us_per_request);
            }
        }
    }
    let mut titles: Vec<(u32, String)> = Vec::new();
    for m in ms {
        if let Some(t) = point_title(m) {
            if !titles.iter().any(|(_, x)| *x == t) {
                titles.push((m.level, t));
            }
        }
    }
    titles.sort_by_key(|(l, _)| *l);
    titles
        .into_iter()
        .map(|(_, title)| point(ms, order, &cells, title, margin))
        .collect()
}

/// One point: a target is ranked when every one of its starts carried the
/// rate; otherwise it is said with what it carried and why.
fn point<'a>(
    ms: &[&'a Measurement],
    order: &[&'a str],
    cells: &Cells<'a>,
    title: String,
    margin: Margin,
) -> Point<'a> {
    // The start variance of each target's cost, pooled over its points.
    let pooled = |target: &str| {
        Pooled::of(
            cells
                .iter()
                .filter(|((t, _), _)| *t == target)
                .map(|(_, v)| &v[..]),
        )
    };
    let mut costs = Vec::new();
    let mut unsustained = Vec::new();
    let mut disturbed = Vec::new();
    for &t in order {
        let here: Vec<&Measurement> = of(ms, t)
            .filter(|m| point_title(m).as_deref() == Some(&title))
            .collect();
        if here.is_empty() {
            continue;
        }
        if here.iter().any(|m| m.disturbed) {
            disturbed.push(t);
        }
        match cells.get(&(t, title.clone())) {
            Some(v) if v.len() == here.len() => {
                if let Some(us) = Spread::of_starts(v, pooled(t)) {
                    let offered = here[0].parts.cost.as_ref().map_or(0.0, |c| c.offered_rps);
                    costs.push(CostRow {
                        target: t,
                        us,
                        offered_rps: offered,
                        vs_above: None,
                    });
                }
            }
            _ => {
                let bad = here
                    .iter()
                    .filter_map(|m| m.parts.cost.as_ref())
                    .find(|c| !c.valid());
                if let Some(c) = bad {
                    // The generator's shortfall is never the server's.
                    let what = if c.not_offered {
                        "was not offered"
                    } else {
                        "cannot sustain"
                    };
                    unsustained.push((
                        t,
                        format!(
                            "{what} {} {}: {}",
                            num(c.offered_rps),
                            Traffic::of_measurement(here[0]).rate(),
                            c.invalid.as_deref().unwrap_or("not carried")
                        ),
                    ));
                }
            }
        }
    }
    costs.sort_by(|a, b| a.us.median.total_cmp(&b.us.median));
    // Ties: each row against the cheaper one above it, on its starts.
    for i in 1..costs.len() {
        let (a, b) = (costs[i - 1].target, costs[i].target);
        let values = |t: &str| cells.get(&(t, title.clone())).cloned().unwrap_or_default();
        costs[i].vs_above =
            decide_starts(&values(a), pooled(a), &values(b), pooled(b), margin, false);
    }
    Point {
        title,
        costs,
        unsustained,
        disturbed,
    }
}

/// The measurements of `target`.
fn of<'a, 'm>(
    ms: &'m [&'a Measurement],
    target: &'m str,
) -> impl Iterator<Item = &'a Measurement> + 'm {
    ms.iter().copied().filter(move |m| m.target == target)
}

/// Each target's standing cost (its median start by CPU).
fn standing<'a>(ms: &[&'a Measurement], order: &[&'a str]) -> Vec<(&'a str, Standing)> {
    order
        .iter()
        .filter_map(|&t| {
            let s: Vec<&Standing> = of(ms, t)
                .filter_map(|m| m.parts.standing.as_ref())
                .collect();
            median_by(&s, Standing::cpu_ms_per_s).map(|mid| (t, mid.clone()))
        })
        .collect()
}

/// Each overload multiple, each target's median start by goodput share.
fn overloads<'a>(ms: &[&'a Measurement], order: &[&'a str]) -> Vec<OverloadRow<'a>> {
    let mut factors: Vec<f64> = ms
        .iter()
        .filter_map(|m| m.parts.overload.as_ref().map(|o| o.factor))
        .collect();
    factors.sort_by(f64::total_cmp);
    factors.dedup();
    let mut out = Vec::new();
    for f in factors {
        for &t in order {
            let o: Vec<&Overload> = of(ms, t)
                .filter_map(|m| m.parts.overload.as_ref())
                .filter(|o| o.factor == f)
                .collect();
            if let Some(mid) = median_by(&o, goodput_share) {
                out.push(OverloadRow {
                    target: t,
                    overload: mid,
                });
            }
        }
    }
    out
}

/// Goodput over what was offered.
fn goodput_share(o: &Overload) -> f64 {
    o.goodput_rps / o.offered_rps.max(1e-9)
}

/// The element with the median `key` (the lower middle of an even count).
fn median_by<'a, T>(xs: &[&'a T], key: impl Fn(&T) -> f64) -> Option<&'a T> {
    let mut v: Vec<&'a T> = xs.to_vec();
    v.sort_by(|a, b| key(a).total_cmp(&key(b)));
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// `4.2 s`, or `did not recover within 10 s`.
pub fn recovery_text(o: &Overload) -> String {
    match o.recovery_s {
        Some(s) => format!("{} s", num(s)),
        None => format!("did not recover within {} s", num(o.recover_s)),
    }
}

/// Goodput as a share of what was offered, in percent.
pub fn goodput_pct(o: &Overload) -> f64 {
    100.0 * goodput_share(o)
}

/// Failed requests by class, `refused 3, reset 2`; `none`.
pub fn errors_text(o: &Overload) -> String {
    let e = &o.errors;
    let parts: Vec<String> = [
        ("refused", e.connect),
        ("write", e.write),
        ("reset/read", e.read),
        ("timeout", e.timeout),
        ("bad status or body", e.mismatch),
        ("parse", e.parse),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{k} {n}"))
    .collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// One fixed rate in a sentence: the cheapest and how many times less it
/// costs than the dearest, then the targets not ranked there and why.
fn point_line(sec: &Section<'_>, p: &Point<'_>) -> Option<String> {
    let mut line = format!("{} at {}:", sec.scenario, p.title);
    if let (Some(best), Some(worst)) = (p.costs.first(), p.costs.last()) {
        let _ = write!(
            line,
            " {} costs {} µs of server CPU per {}",
            best.target,
            num(best.us.median),
            sec.traffic.noun()
        );
        match p.costs.get(1) {
            Some(next) if next.tied_above() => {
                let _ = write!(line, " (tied with {})", next.target);
            }
            Some(next) if next.vs_above.is_none() => {
                line.push_str(" (one start each: not tested for ties)");
            }
            _ => {}
        }
        if p.costs.len() > 1 && best.us.median > 0.0 {
            let _ = write!(
                line,
                ", {}× less than {} ({} µs)",
                num(worst.us.median / best.us.median),
                worst.target,
                num(worst.us.median)
            );
        }
        line.push('.');
    } else if p.unsustained.is_empty() {
        return None;
    }
    if !p.unsustained.is_empty() {
        let _ = write!(
            line,
            " Not ranked: {}.",
            p.unsustained
                .iter()
                .map(|(t, why)| format!("{t} {why}"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !p.disturbed.is_empty() {
        let _ = write!(
            line,
            " ※ Disturbed: {} (other processes took the measured CPUs; docs/columns.md).",
            p.disturbed.join(", ")
        );
    }
    Some(line)
}

/// The title of the cost sections together (the findings' and the
/// HTML's): `Cost per request and past the knee`, per message for
/// WebSocket echoes, `per request or message` when the run has both.
pub fn title(sections: &[Section<'_>]) -> String {
    let mut nouns: Vec<&str> = Vec::new();
    for sec in sections {
        if !nouns.contains(&sec.traffic.noun()) {
            nouns.push(sec.traffic.noun());
        }
    }
    if nouns.is_empty() {
        nouns.push(Traffic::Requests.noun());
    }
    format!("Cost per {} and past the knee", nouns.join(" or "))
}

/// The findings of the cost sections, in sentences.
pub fn findings(data: &RunData) -> Vec<String> {
    let mut out = Vec::new();
    for sec in sections(data) {
        for p in &sec.points {
            out.extend(point_line(&sec, p));
        }
        out.extend(overload_lines(&sec));
    }
    out
}

/// One sentence per overload multiple: the best and worst goodput, who
/// recovered and how fast, who did not, who failed requests, and where the
/// generator fell behind (goodput is then of a rate not fully offered).
fn overload_lines(sec: &Section<'_>) -> Vec<String> {
    let rows = &sec.overloads;
    let mut factors: Vec<f64> = rows.iter().map(|r| r.overload.factor).collect();
    factors.dedup();
    factors
        .into_iter()
        .filter_map(|f| {
            let mut here: Vec<&OverloadRow<'_>> =
                rows.iter().filter(|r| r.overload.factor == f).collect();
            here.sort_by(|a, b| goodput_share(b.overload).total_cmp(&goodput_share(a.overload)));
            overload_line(sec, f, &here)
        })
        .collect()
}

/// The sentence of one multiple, its rows best goodput first.
fn overload_line(sec: &Section<'_>, f: f64, here: &[&OverloadRow<'_>]) -> Option<String> {
    let (best, worst) = (here.first()?, here.last()?);
    let o = best.overload;
    let nouns = sec.traffic.nouns();
    let mut line = format!(
        "{} at {}% of each target's capacity for {} s, then 50%: goodput within {} ms \
         {} {:.1}% of the rate offered",
        sec.scenario,
        num(f * 100.0),
        num(o.overload_s),
        num(o.deadline_ms),
        best.target,
        goodput_pct(o)
    );
    if here.len() > 1 {
        let _ = write!(
            line,
            " down to {} {:.1}%",
            worst.target,
            goodput_pct(worst.overload)
        );
    }
    let mut recovered: Vec<(&str, f64)> = here
        .iter()
        .filter_map(|r| r.overload.recovery_s.map(|s| (r.target, s)))
        .collect();
    recovered.sort_by(|a, b| a.1.total_cmp(&b.1));
    let clauses = [
        (
            "recovered after",
            recovered
                .iter()
                .map(|(t, s)| format!("{t} {} s", num(*s)))
                .collect::<Vec<_>>(),
        ),
        (
            &*format!("did not recover within {} s:", num(o.recover_s)),
            here.iter()
                .filter(|r| r.overload.recovery_s.is_none())
                .map(|r| r.target.to_string())
                .collect(),
        ),
        (
            &*format!("failed {nouns}:"),
            here.iter()
                .filter(|r| r.overload.errors.total() > 0)
                .map(|r| format!("{} ({})", r.target, errors_text(r.overload)))
                .collect(),
        ),
        (
            "the rate was not fully offered to",
            here.iter()
                .filter(|r| unsent_share(r.overload) > 0.01)
                .map(|r| {
                    format!(
                        "{} ({:.0}% of the {nouns} due never sent)",
                        r.target,
                        unsent_share(r.overload) * 100.0
                    )
                })
                .collect(),
        ),
    ];
    for (head, who) in clauses.iter().filter(|(_, who)| !who.is_empty()) {
        let _ = write!(line, "; {head} {}", who.join(", "));
    }
    line.push('.');
    Some(line)
}

/// Requests due but never sent, over those due in the whole level (the
/// overload, then the recovery at half the capacity).
fn unsent_share(o: &Overload) -> f64 {
    let due = o.offered_rps * o.overload_s + 0.5 * o.capacity_rps * o.recover_s;
    o.unsent as f64 / due.max(1.0)
}

/// The Markdown cost sections.
pub fn markdown(out: &mut String, data: &RunData) {
    for sec in sections(data) {
        let (noun, rate) = (sec.traffic.noun(), sec.traffic.rate());
        let _ = writeln!(out, "\n## {} — cost per {noun}\n", md(sec.scenario));
        let _ = write!(
            out,
            "Server CPU per completed {noun} (its own cgroup) at a constant offered rate \
             (open loop), cheapest first: median over starts `± half-width of the 95% interval`. \
             A point counts only when the rate was carried (achieved ≥ 99% of offered, send lag \
             p99 ≤ 50 ms, the generator under 90% of its CPUs, errors ≤ 0.1%).\n\n",
        );
        for p in &sec.points {
            let _ = writeln!(
                out,
                "**{}**\n\n| Target | µs per {noun} | offered ({rate}) |\n|---|---:|---:|",
                md(&p.title)
            );
            for c in &p.costs {
                let ci =
                    c.us.half_ci
                        .map_or(String::new(), |h| format!(" ± {}", num(h)));
                let _ = writeln!(
                    out,
                    "| {} | {}{ci} | {} |",
                    md(c.target),
                    num(c.us.median),
                    num(c.offered_rps)
                );
            }
            for (t, why) in &p.unsustained {
                let _ = writeln!(out, "| {} | {} | |", md(t), md(why));
            }
            out.push('\n');
        }
        if !sec.standing.is_empty() {
            out.push_str("**Standing cost** (no load, after the warm closed loop)\n\n| Target | CPU (ms per s) | RSS (MiB) |\n|---|---:|---:|\n");
            for (t, s) in &sec.standing {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |",
                    md(t),
                    num(s.cpu_ms_per_s()),
                    num(s.rss_mib)
                );
            }
            out.push('\n');
        }
        if !sec.overloads.is_empty() {
            let _ = write!(
                out,
                "**Past the knee**: the overload for its time, then half the capacity. Goodput: \
                 responses within the deadline (from the intended send time) per second of the \
                 overload; recovery: seconds after it ends until p99 stays within the deadline \
                 for 3 seconds in a row with no error.\n\n\
                 | Target | offered | served ({rate}) | goodput ({rate}) | goodput | errors | unsent | recovery |\n\
                 |---|---:|---:|---:|---:|---|---:|---|\n",
            );
            for r in &sec.overloads {
                let o = r.overload;
                let _ = writeln!(
                    out,
                    "| {} | {}% ({} {rate}) | {} | {} | {:.1}% | {} | {} | {} |",
                    md(r.target),
                    num(o.factor * 100.0),
                    num(o.offered_rps),
                    num(o.throughput_rps),
                    num(o.goodput_rps),
                    goodput_pct(o),
                    errors_text(o),
                    o.unsent,
                    recovery_text(o)
                );
            }
            out.push('\n');
        }
    }
}
