//! What a run found, in sentences a reader can quote: per scenario × level
//! the throughput ranking with ratios to the best and their 95% intervals
//! (from [`crate::ranking`], the same rule the charts use), ties named as
//! ties, the p99 spread, and every flag (generator-bound, wrong answers,
//! not steady, disturbed); per run what varied and why ([`crate::noise`]:
//! the A/A floor, variation between starts, noisy warm-ups with their
//! cause), the targets that failed, the largest and
//! smallest TLS cost ([`crate::tls_cost`]) and whether the article's
//! conclusion reproduced. The HTML report opens with this and the
//! Markdown report starts with [`text`]; both render these same strings:
//! the run's headlines, then the rankings, then what varied (the noise
//! sentences qualify every ranking, so they follow them once instead of
//! standing between the reader and the results).

use crate::agreement::{agreements, Agreement};
use crate::context::Context;
use crate::group::{disturbed_note, groups, not_steady_note, Group, BOUND_MARK, MISMATCH_MARK};
use crate::metric::{num, Metric};
use crate::ranking::{rank, ratio_num, ratio_text, ties, Entry, Measure};
use crate::stats::Spread;

/// The findings of one run.
#[derive(Debug, Clone, Default)]
pub struct Findings {
    /// Run-wide sentences: failed targets, one start only, the TLS cost,
    /// the article's verdict.
    pub run: Vec<String>,
    pub scenarios: Vec<Scenario>,
    /// What varied and why, once for the run ([`crate::noise`], the
    /// `precision` stop rule): after the rankings it qualifies.
    pub noise: Vec<String>,
}

/// The findings of one scenario × level.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub title: String,
    /// The section it summarises (`s-<slug>`).
    pub slug: String,
    pub lines: Vec<String>,
}

/// Works out the findings of a run.
pub fn findings(ctx: &Context) -> Findings {
    let mut run = Vec::new();
    let failed: Vec<String> = ctx
        .data
        .targets
        .iter()
        .filter(|t| t.status.as_str() != "ok")
        .map(|t| format!("{} ({})", t.target, t.status.as_str().replace('_', " ")))
        .collect();
    if !failed.is_empty() {
        run.push(format!("✗ Failed, not measured: {}.", failed.join(", ")));
    }
    let all = groups(ctx.data);
    run.extend(crate::tls_cost::finding(&crate::tls_cost::costs(&all)));
    // Said once for the run when no target anywhere has two repetitions.
    let single = !all.is_empty()
        && all
            .iter()
            .all(|g| g.columns.iter().all(|c| c.reps.len() < 2));
    if single {
        run.push(match &ctx.data.calibration {
            Some(c) => calibrated_line(c),
            None => SINGLE.to_string(),
        });
    }
    // What varied and why, once for the run.
    let order = crate::group::target_order(ctx.data);
    let mut noise = Vec::new();
    noise.extend(crate::noise::floor_line(ctx.data));
    noise.extend(crate::noise::starts_line(ctx.data, &order));
    if let Ok(study) = &ctx.study {
        noise.extend(crate::precision::precision_line(ctx.data, study));
        noise.extend(crate::precision::resolve_line(ctx.data, study));
    }
    noise.extend(crate::noise::warmup_line(&all));
    let mut all_agreements = Vec::new();
    let mut scenarios = Vec::new();
    for g in all {
        let agreements = agreements(ctx, &g);
        scenarios.push(Scenario {
            title: g.title(),
            slug: g.slug(),
            lines: group_lines(&g, &agreements, !single),
        });
        all_agreements.extend(agreements.into_iter().map(|a| (g.title(), a)));
    }
    let costs = crate::cost::findings(ctx.data);
    if !costs.is_empty() {
        scenarios.push(Scenario {
            title: crate::cost::title(&crate::cost::sections(ctx.data)).to_lowercase(),
            slug: "cost".to_string(),
            lines: costs,
        });
    }
    for sec in crate::capacity::sections(ctx.data) {
        scenarios.push(Scenario {
            title: format!("{} — capacity under {}", sec.scenario, sec.slo),
            slug: format!("capacity-{}", sec.scenario),
            lines: vec![capacity_line(&sec)],
        });
    }
    if let Some(v) = verdict(&all_agreements) {
        run.push(v);
    }
    Findings {
        run,
        scenarios,
        noise,
    }
}

/// Plain text of the findings (Markdown-safe apart from target names,
/// which the Markdown renderer escapes through [`crate::escape::md`]).
pub fn text(f: &Findings) -> String {
    let mut s = String::new();
    for l in &f.run {
        s.push_str(l);
        s.push('\n');
    }
    for sc in &f.scenarios {
        s.push_str(&format!("\n{}\n", sc.title));
        for l in &sc.lines {
            s.push_str(&format!("- {l}\n"));
        }
    }
    if !f.noise.is_empty() {
        s.push_str(&format!("\n{NOISE_TITLE}\n"));
        for l in &f.noise {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// The heading of the noise sentences, after the rankings.
pub const NOISE_TITLE: &str = "What varied, and how far apart is a tie";

/// The findings as Markdown: run-wide lines, a list per scenario, then
/// what varied.
pub fn markdown(f: &Findings) -> String {
    use crate::escape::md;
    let mut s = String::new();
    for l in &f.run {
        s.push_str(&format!("**{}**\n\n", md(l)));
    }
    for sc in &f.scenarios {
        s.push_str(&format!("*{}*\n\n", md(&sc.title)));
        for l in &sc.lines {
            s.push_str(&format!("- {}\n", md(l)));
        }
        s.push('\n');
    }
    if !f.noise.is_empty() {
        let paragraphs: Vec<String> = f.noise.iter().map(|l| md(l)).collect();
        s.push_str(&format!("*{NOISE_TITLE}*\n\n{}\n", paragraphs.join("\n\n")));
    }
    s
}

/// What one repetition means for the ranking.
const SINGLE: &str = "One start per cell (repetitions = 1): no interval includes the variation \
     between server starts, and the order is not tested for ties; run two or more repetitions \
     to have both.";

/// One repetition on a calibrated host: what stands in for the variation
/// between starts, and where it came from.
pub(crate) fn calibrated_line(c: &shootout_store::Calibration) -> String {
    format!(
        "One start per cell (repetitions = 1): no interval of its own; the throughput ranking \
         is tested on this host's calibrated noise instead (run #{} of `shootout calibrate`, {}: \
         {} over {} starts differed by {:.1}% (sd of ln req/s) between starts). Latency and \
         memory are not tested; run two or more repetitions to have them.",
        c.run_id,
        c.started_at,
        c.targets.join(", "),
        c.starts,
        c.sd_pct()
    )
}

/// The sentences of one scenario × level, in reading order: the ranking
/// (throughput, or a hold's memory per idle connection) and its ties, the
/// connections a hold kept, the p99 spread, every flag, the article's
/// orders.
fn group_lines(g: &Group, agreements: &[Agreement], note_single: bool) -> Vec<String> {
    let by = g.traffic.ranked_by();
    let ranked = rank(g, Measure::Metric(by));
    if ranked.is_empty() {
        return vec![format!(
            "No {} was measured.",
            g.traffic.ranking_head().to_lowercase()
        )];
    }
    let unit = g.traffic.symbol(by.unit());
    let mut lines = ranking_lines(&ranked, g.traffic.ranking_head(), unit, note_single);
    lines.extend(held_line(g));
    lines.extend(p99_line(g));
    lines.extend(generator_bound_line(g));
    lines.extend(wrong_answers_line(g));
    lines.extend(not_steady_note(g));
    lines.extend(disturbed_note(g));
    lines.extend(crate::group::short_note(g));
    lines.extend(agreements.iter().map(agreement_text));
    lines
}

/// The ranking headed `head` (`Throughput`) in `unit`, a sentence per run
/// of tied targets, and the one-repetition caveat when the run does not
/// say it once for all.
fn ranking_lines(ranked: &[Entry], head: &str, unit: &str, note_single: bool) -> Vec<String> {
    let mut lines = vec![format!("{head}: {}.", ranking_text(ranked, unit))];
    for run in ties(ranked) {
        let names: Vec<&str> = run.iter().map(|&i| ranked[i].target()).collect();
        let why: Vec<String> = run[1..]
            .iter()
            .filter_map(|&i| ranked[i].vs_above)
            .map(|v| {
                if v.test == crate::stats::TestKind::None {
                    return "too short to rank".to_string();
                }
                let mut w = format!(
                    "{:+.1}%, {} p {}",
                    v.change_pct,
                    v.test.as_str(),
                    match v.p_value.unwrap_or(1.0) {
                        p if p < 0.001 => "< 0.001".to_string(),
                        p => format!("= {p:.3}"),
                    }
                );
                w.push_str(&pair_margin(&v));
                w
            })
            .collect();
        lines.push(format!(
            "Tie: {} are not told apart ({}).",
            and_list(&names),
            why.join("; ")
        ));
    }
    if note_single && ranked.iter().any(|e| e.spread.n < 2) {
        lines.push(SINGLE.into());
    }
    lines
}

/// A hold's connections held of those asked, per target (the fewest over
/// its starts); None for every other level.
fn held_line(g: &Group) -> Option<String> {
    if !g.traffic.is_hold() {
        return None;
    }
    let reps = || g.columns.iter().flat_map(|c| c.reps.iter());
    let asked = reps().map(|m| m.summary.connections).max()?;
    let held = |m: &shootout_store::Measurement| {
        m.parts
            .hold
            .as_ref()
            .map(|h| h.connections)
            .or_else(|| m.summary.websocket.as_ref().and_then(|w| w.held_open))
    };
    let parts: Vec<String> = g
        .columns
        .iter()
        .filter_map(|c| {
            let fewest = c.reps.iter().filter_map(|m| held(m)).min()?;
            Some(format!("{} {fewest}", c.target))
        })
        .collect();
    let starts = if g.columns.iter().any(|c| c.reps.len() > 1) {
        " (each target's fewest over its starts)"
    } else {
        ""
    };
    (!parts.is_empty()).then(|| {
        format!(
            "Connections held of {asked} asked{starts}: {}.",
            parts.join("; ")
        )
    })
}

/// The lowest and highest p99 (a hold's: of its handshakes) and their
/// ratio; None with fewer than two.
fn p99_line(g: &Group) -> Option<String> {
    let p99 = rank(g, Measure::Metric(Metric::P99));
    let (best, worst) = (p99.first()?, p99.last()?);
    let label = g.traffic.label(Metric::P99);
    let what = label.trim_end_matches(" (ms)");
    (p99.len() > 1).then(|| {
        format!(
            "{what}: lowest {} {} ms, highest {} {} ms ({}×).",
            best.target(),
            num(best.spread.median),
            worst.target(),
            num(worst.spread.median),
            ratio_num(worst.ratio.value)
        )
    })
}

fn generator_bound_line(g: &Group) -> Option<String> {
    let bound: Vec<&str> = g
        .columns
        .iter()
        .filter(|c| c.generator_bound())
        .map(|c| c.target)
        .collect();
    (!bound.is_empty()).then(|| {
        format!(
            "{BOUND_MARK} Generator-bound: {} (the load generator used 90% or more of its \
             cores, so the figure is a floor for the server, not its limit).",
            and_list(&bound)
        )
    })
}

fn wrong_answers_line(g: &Group) -> Option<String> {
    let wrong: Vec<String> = g
        .columns
        .iter()
        .filter(|c| c.mismatches() > 0)
        .map(|c| format!("{} {} of {} responses", c.target, c.mismatches(), c.sent()))
        .collect();
    (!wrong.is_empty()).then(|| format!("{MISMATCH_MARK} Wrong answers: {}.", wrong.join("; ")))
}

/// `Capacity: a 9200 req/s [..]; 1.14× [..] b; none for c`: the rows of a
/// capacity section are already best first.
fn capacity_line(sec: &crate::capacity::Section) -> String {
    let mut parts = Vec::new();
    let mut best = None;
    let mut none = Vec::new();
    for r in &sec.rows {
        let Some(s) = r.capacity else {
            none.push(r.target);
            continue;
        };
        match best {
            None => {
                let ci = bracket(&s);
                parts.push(format!("{} {} req/s{ci}", r.target, num(s.median)));
                best = Some(s);
            }
            Some(b) => parts.push(format!(
                "{} {}",
                ratio_text(&crate::ranking::ratio(&b, &s, true)),
                r.target
            )),
        }
    }
    if !none.is_empty() {
        parts.push(format!("no rate met the SLO for {}", and_list(&none)));
    }
    format!("Capacity: {}.", parts.join("; "))
}

/// `a 117000 req/s [115000–119000]; 1.15× b [1.08–1.22]; 58× c`.
/// A cell's 95% interval as its bounds, ` [low–high]`: on the log scale
/// where the interval is one of starts (`Spread::log_bounds`, never below
/// zero however few the starts), else median ± half-width; empty without
/// an interval.
fn bracket(s: &Spread) -> String {
    if s.half_ci.is_none() {
        return String::new();
    }
    let (lo, hi) = s.log_bounds().unwrap_or((s.ci_low(), s.ci_high()));
    format!(" [{}–{}]", num(lo), num(hi))
}

pub fn ranking_text(ranked: &[Entry], unit: &str) -> String {
    let mut parts = Vec::new();
    for (i, e) in ranked.iter().enumerate() {
        if i == 0 {
            let ci = bracket(&e.spread);
            parts.push(format!(
                "{} {} {unit}{ci}",
                e.target(),
                num(e.spread.median)
            ));
        } else {
            let tie = if e.tied_above() {
                format!(" (tied with {})", ranked[i - 1].target())
            } else {
                String::new()
            };
            parts.push(format!("{} {}{tie}", ratio_text(&e.ratio), e.target()));
        }
    }
    parts.join("; ")
}

fn agreement_text(a: &Agreement) -> String {
    let metric = a.metric.name();
    let art = a.published_text();
    if a.reproduced() {
        let ties = if a.tied.is_empty() {
            String::new()
        } else {
            let pairs: Vec<String> = a.tied.iter().map(|(x, y)| format!("{x}/{y}")).collect();
            format!(" (here a tie: {})", pairs.join(", "))
        };
        format!("Article, {metric}: {art}; reproduced{ties}.")
    } else {
        let pairs: Vec<String> = a.flipped.iter().map(|(x, y)| format!("{x}/{y}")).collect();
        format!(
            "Article, {metric}: {art}; ours {}: flipped {}.",
            Agreement::order_text(&a.ours, a.metric),
            pairs.join(", ")
        )
    }
}

/// One sentence on whether the article's conclusion reproduced; None for
/// a study without published figures.
fn verdict(all: &[(String, Agreement)]) -> Option<String> {
    if all.is_empty() {
        return None;
    }
    let failed: Vec<String> = all
        .iter()
        .filter(|(_, a)| !a.reproduced())
        .map(|(title, a)| {
            let pairs: Vec<String> = a.flipped.iter().map(|(x, y)| format!("{x}/{y}")).collect();
            format!("{title} {}: {}", a.metric.name(), pairs.join(", "))
        })
        .collect();
    Some(if failed.is_empty() {
        format!(
            "The article's conclusion reproduced: every published ranking ({} of {}) came out \
             in the same order here.",
            all.len(),
            all.len()
        )
    } else {
        format!(
            "The article's conclusion did not fully reproduce: {} of {} published rankings \
             differ here ({}).",
            failed.len(),
            all.len(),
            failed.join("; ")
        )
    })
}

/// What a verdict on starts held the pair to, for its sentence: the 95%
/// interval of the difference from the pair's own variances, and the
/// margin when the difference was within it (`, 95% interval −9.0% to
/// +3.1%, within the 5% margin`). Empty for other tests.
pub(crate) fn pair_margin(v: &crate::stats::Verdict) -> String {
    let mut w = String::new();
    if let Some((lo, hi)) = v.interval_pct {
        w.push_str(&format!(", 95% interval {lo:+.1}% to {hi:+.1}%"));
    }
    if let (true, Some(m)) = (v.within_margin, v.margin_pct) {
        w.push_str(&format!(
            ", within the {} margin",
            crate::precision::pct(m / 100.0)
        ));
    }
    w
}

fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Pooled;

    /// Two starts of one cell (t = 12.7 on one degree of freedom): the
    /// symmetric half-width reaches far below zero, the bounds said do not
    /// (node-express's memory per idle connection, 5.368 and 3.344 KiB, in
    /// a websocket run once read "[-39.58–48.30]").
    #[test]
    fn a_wide_interval_of_starts_is_said_on_the_log_scale() {
        let xs = [5.368, 3.344];
        let s = Spread::of_starts(&xs, Pooled::of([&xs[..]])).expect("spread");
        assert!(s.ci_low() < 0.0);
        let text = bracket(&s);
        // By hand: ln values 1.6805 and 1.2072, var 0.1120 on 1 df,
        // h = 12.706·√(0.1120/2) = 3.007; 4.356·e^(∓3.007) = 0.2153, 88.1.
        assert_eq!(text, " [0.215–88.09]", "{s:?}");
        assert_eq!(bracket(&Spread::of(&[4.0]).expect("one")), "");
    }
}
