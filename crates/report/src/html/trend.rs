//! The trend page (`shootout report --trend STUDY`): per scenario × level,
//! a line per target of the median throughput in each run with its 95%
//! whiskers, a point ringed red where `compare` finds the run significantly
//! slower than the one before, and a sortable table of the same figures;
//! runs are dated and carry the shootout version and commit. The SVG is
//! written by hand (not plotters) so that each point can carry its own
//! tooltip and each line its target's `tN` class for the hide switches.

use super::bars::nice_step;
use super::switches;
use crate::colour::Palette;
use crate::escape::html as esc;
use crate::metric::{axis_num, num};
use crate::stats::Label;
use crate::trend::{Point, Scenario, Series, Trend, TrendRun};
use std::fmt::Write;

pub(crate) const W: f64 = 820.0;
pub(crate) const H: f64 = 300.0;
pub(crate) const LEFT: f64 = 64.0;
pub(crate) const RIGHT: f64 = 20.0;
pub(crate) const TOP: f64 = 16.0;
pub(crate) const BOTTOM: f64 = 44.0;

/// Renders the whole trend page.
pub fn render(t: &Trend) -> String {
    let pairs: Vec<(&str, &str)> = t
        .targets
        .iter()
        .map(|(n, l)| (n.as_str(), l.as_str()))
        .collect();
    let palette = Palette::new(&pairs);
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("shootout — trend of {}", t.study);
    super::page::head(&mut out, &title, &switches::hide_rules(&palette));
    header(&mut out, t);
    regressions(&mut out, t, &palette);
    for sc in &t.scenarios {
        scenario(&mut out, t, sc, &palette);
    }
    runs_table(&mut out, t);
    let _ = write!(
        out,
        "</main>\n<footer>Made by shootout from the stored runs alone.</footer>\n{}</body>\n</html>\n",
        super::csp::script_element()
    );
    out
}

/// The study, how many runs, the first and the last; opens `<main>`.
fn header(out: &mut String, t: &Trend) {
    let (first, last) = (t.runs.first(), t.runs.last());
    let _ = writeln!(
        out,
        "<header>\n<h1>{} — trend over {} run(s)</h1>\n<p class=\"meta\">{}</p>\n</header>\n<main class=\"trend\">",
        esc(&t.study),
        t.runs.len(),
        esc(&match (first, last) {
            (Some(a), Some(b)) => format!("From run {} ({}) to run {} ({})", a.id, a.started_at, b.id, b.started_at),
            _ => "No runs of this study in the results store.".into(),
        })
    );
}

/// The page's findings: every regression as a sentence, then the switches
/// for the targets that appear in some chart.
fn regressions(out: &mut String, t: &Trend, palette: &Palette) {
    out.push_str("<section id=\"findings\">\n<h2>Regressions</h2>\n");
    let regressions = t.regressions();
    if regressions.is_empty() {
        out.push_str(
            "<p class=\"headline\">No run is significantly slower than the run before it.</p>\n",
        );
    }
    for r in &regressions {
        let _ = writeln!(out, "<p class=\"headline\">▼ {}</p>", esc(r));
    }
    let measured = |n: &str| {
        t.scenarios
            .iter()
            .any(|sc| sc.series.iter().any(|s| s.target == n))
    };
    switches::fieldset(out, palette, measured);
    out.push_str("</section>\n");
}

/// One scenario × level: its chart and its table.
fn scenario(out: &mut String, t: &Trend, sc: &Scenario, palette: &Palette) {
    let _ = writeln!(
        out,
        "<section id=\"s-{}\">\n<h2>{}</h2>",
        esc(&sc.slug),
        esc(&sc.title)
    );
    let _ = writeln!(
        out,
        "<figure class=\"chart svg\" id=\"chart-{}-trend\">\n{}\n<figcaption>Median {} per \
         second in each run, 95% CI whiskers with 2+ repetitions; a red ring: significantly slower \
         than the run before, by more than {}% (the test of <code>shootout compare</code>)</figcaption>\n</figure>",
        esc(&sc.slug),
        chart(t, sc, palette),
        sc.traffic.nouns(),
        crate::trend::REGRESSION_PCT
    );
    table(out, t, sc, palette);
    out.push_str("</section>\n");
}

/// Where a chart puts runs and rates: runs evenly along x, requests per
/// second on y from 0 to a round maximum above every whisker. The results
/// site's target pages ([`crate::site`]) draw in it too.
pub(crate) struct Frame {
    /// The number of runs (at least 1).
    runs: usize,
    /// The x of the first and the last run.
    x0: f64,
    x1: f64,
    y_max: f64,
    /// The distance between grid lines, a round number.
    step: f64,
}

impl Frame {
    fn new(runs: usize, sc: &Scenario) -> Frame {
        let top = sc
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.rps.ci_high()))
            .fold(0.0_f64, f64::max);
        Frame::spanning(runs, top)
    }

    /// `runs` runs, up to `top` requests per second.
    pub(crate) fn spanning(runs: usize, top: f64) -> Frame {
        let step = nice_step(top / 4.0);
        // Points start a little right of the y axis, so that the first
        // run's label clears the axis's "0".
        Frame {
            runs: runs.max(1),
            x0: LEFT + 36.0,
            x1: W - RIGHT - 36.0,
            y_max: ((top * 1.05) / step).ceil().max(1.0) * step,
            step,
        }
    }

    pub(crate) fn x(&self, run: usize) -> f64 {
        if self.runs == 1 {
            (self.x0 + self.x1) / 2.0
        } else {
            self.x0 + (self.x1 - self.x0) * run as f64 / (self.runs - 1) as f64
        }
    }

    pub(crate) fn y(&self, rps: f64) -> f64 {
        TOP + (H - TOP - BOTTOM) * (1.0 - rps / self.y_max)
    }
}

/// The SVG of one scenario × level (a line per target) and its legend.
fn chart(t: &Trend, sc: &Scenario, palette: &Palette) -> String {
    let frame = Frame::new(t.runs.len(), sc);
    let mut s = format!(
        "<svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    grid(&mut s, &frame);
    run_labels(&mut s, t, &frame);
    for series in &sc.series {
        line(&mut s, t, series, palette, &frame, sc.traffic.rate());
    }
    s.push_str("</svg>");
    s + &legend(sc, palette)
}

/// Horizontal grid lines with their req/s on the y axis.
pub(crate) fn grid(s: &mut String, frame: &Frame) {
    let mut v = 0.0;
    while v <= frame.y_max * 1.000_001 {
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e3e3e3\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            frame.y(v) + 4.0,
            esc(&axis_num(v)),
            y = frame.y(v)
        );
        v += frame.step;
    }
}

/// Each run's id and date under the x axis; at most eight of them, so
/// that they never overlap.
fn run_labels(s: &mut String, t: &Trend, frame: &Frame) {
    let runs: Vec<(i64, &str)> = t
        .runs
        .iter()
        .map(|r| (r.id, r.started_at.as_str()))
        .collect();
    run_axis(s, &runs, frame);
}

/// Under the x axis, each run's id and the date of its start time; at most
/// eight of them.
pub(crate) fn run_axis(s: &mut String, runs: &[(i64, &str)], frame: &Frame) {
    let n = frame.runs;
    let every = n.div_ceil(8);
    for (i, (id, started_at)) in runs.iter().enumerate() {
        if i % every == 0 || i == n - 1 && n <= 8 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">run {}</text>\
                 <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#777\" font-size=\"10\">{}</text>",
                frame.x(i),
                H - BOTTOM + 16.0,
                id,
                frame.x(i),
                H - BOTTOM + 30.0,
                esc(started_at.get(..10).unwrap_or(started_at))
            );
        }
    }
}

/// One target's line and points, grouped under its `tN` class so that its
/// switch hides them.
fn line(s: &mut String, t: &Trend, series: &Series, palette: &Palette, frame: &Frame, rate: &str) {
    let hex = palette.of(&series.target).hex();
    let pts: Vec<String> = series
        .points
        .iter()
        .map(|p| format!("{:.1},{:.1}", frame.x(p.run), frame.y(p.rps.median)))
        .collect();
    let _ = write!(
        s,
        "<g class=\"t{}\"><polyline fill=\"none\" stroke=\"{hex}\" stroke-width=\"2\" points=\"{}\"/>",
        palette.index(&series.target),
        pts.join(" ")
    );
    for p in &series.points {
        point(s, &series.target, p, &t.runs[p.run], (&hex, rate), frame);
    }
    s.push_str("</g>");
}

/// One run's median with its whisker, a red ring when it regressed, and a
/// tooltip with the figures and the run.
/// `look` is the target's colour and the rate's unit.
fn point(s: &mut String, target: &str, p: &Point, r: &TrendRun, look: (&str, &str), frame: &Frame) {
    let (hex, rate) = look;
    let (cx, cy) = (frame.x(p.run), frame.y(p.rps.median));
    if p.rps.half_ci.is_some() {
        let _ = write!(
            s,
            "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{hex}\" stroke-width=\"1.5\"/>",
            frame.y(p.rps.ci_low()),
            frame.y(p.rps.ci_high()),
        );
    }
    let ring = if p.regressed() {
        "<circle r=\"8\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2.5\"/>"
    } else {
        ""
    };
    let _ = write!(
        s,
        "<g class=\"pt\" transform=\"translate({cx:.1},{cy:.1})\">{ring}<circle r=\"4\" fill=\"{hex}\"/>\
         <title>{}</title></g>",
        esc(&tooltip(target, p, r, rate))
    );
}

/// `target · run N (date) · median req/s [CI] · repetitions · version (commit)`.
fn tooltip(target: &str, p: &Point, r: &TrendRun, rate: &str) -> String {
    let ci = p.rps.half_ci.map_or(String::new(), |_| {
        format!(" [{}–{}]", num(p.rps.ci_low()), num(p.rps.ci_high()))
    });
    format!(
        "{} · run {} ({}) · {} {rate}{} · {} repetition(s) · shootout {}{}",
        target,
        r.id,
        r.started_at,
        num(p.rps.median),
        ci,
        p.rps.n,
        r.tool_version,
        r.git_commit
            .as_deref()
            .map_or(String::new(), |c| format!(" ({c})")),
    )
}

/// The chart's key: each target's name in its colour.
fn legend(sc: &Scenario, palette: &Palette) -> String {
    let mut legend = String::from("<p class=\"legend\">");
    for series in &sc.series {
        let sw = palette.of(&series.target);
        let _ = write!(
            legend,
            "<span class=\"key t{}\" style=\"--c:{}\"><i style=\"background:var(--c)\"></i>{}</span> ",
            palette.index(&series.target),
            sw.hex(),
            esc(&series.target)
        );
    }
    legend.push_str("</p>");
    legend
}

fn table(out: &mut String, t: &Trend, sc: &Scenario, palette: &Palette) {
    out.push_str("<div class=\"scroll\"><table class=\"sortable\"><thead><tr><th>Target</th>");
    for r in &t.runs {
        let _ = write!(out, "<th>run {}</th>", r.id);
    }
    out.push_str("</tr></thead><tbody>\n");
    for series in &sc.series {
        let _ = write!(
            out,
            "<tr class=\"t{}\"><td>{}</td>",
            palette.index(&series.target),
            esc(&series.target)
        );
        for i in 0..t.runs.len() {
            match series.points.iter().find(|p| p.run == i) {
                None => out.push_str("<td>—</td>"),
                Some(p) => {
                    let class = match p.vs_previous.map(|v| v.label) {
                        _ if p.regressed() => " class=\"slower\"",
                        Some(Label::Faster) => " class=\"faster\"",
                        _ => "",
                    };
                    let change = p
                        .vs_previous
                        .filter(|v| v.change_pct.is_finite())
                        .map_or(String::new(), |v| format!(" ({:+.1}%)", v.change_pct));
                    let _ = write!(
                        out,
                        "<td{class} data-v=\"{}\">{}{}</td>",
                        p.rps.median,
                        esc(&crate::markdown::cell_text(&p.rps, 0)),
                        esc(&change)
                    );
                }
            }
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</tbody></table></div>\n<p class=\"note\">{}: median ± 95% CI half-width; in brackets the \
         change from the run before, bold red where significantly slower by more than {}%.</p>",
        sc.traffic.rate(),
        crate::trend::REGRESSION_PCT
    );
}

fn runs_table(out: &mut String, t: &Trend) {
    out.push_str(
        "<section id=\"runs\">\n<h2>Runs</h2>\n<div class=\"scroll\"><table class=\"text sortable\"><thead><tr>\
         <th>Run</th><th>Started</th><th>Status</th><th>shootout</th><th>Commit</th></tr></thead><tbody>\n",
    );
    for r in &t.runs {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            r.id,
            esc(&r.started_at),
            esc(&r.status),
            esc(&r.tool_version),
            esc(r.git_commit.as_deref().unwrap_or("—"))
        );
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}
