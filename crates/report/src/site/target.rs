//! A target's page of the site (`targets/NAME.html`): per series of
//! [`crate::changes`] (study × host × scenario), a chart of its median
//! throughput in each run with the 95% whiskers, drawn in the trend page's
//! frame ([`crate::html::trend::Frame`]); each change point a dashed line
//! at the run it starts at, labelled with its size (`▼ 0.80×`) and, on
//! hover, its interval, p and what changed; a stale run a hollow point
//! whose tooltip says why. Under each chart the change points in words,
//! each linking to its run. Then the target's versions in every run that
//! recorded it ([`crate::provenance`], the report's one rendering), a
//! row whose versions differ from the run before marked.

use super::links::{run_page, stale_reasons};
use crate::changes::{ChangeAt, SeriesHistory};
use crate::colour::Palette;
use crate::escape::html as esc;
use crate::html::trend::{grid, run_axis, Frame, H, TOP, W};
use crate::html::{csp, page};
use crate::metric::num;
use crate::output::history::{change_size, change_text};
use shootout_store::RunData;
use std::fmt::Write;

/// Renders the page of `target`; `series` are its own.
pub(crate) fn render(
    target: &str,
    runs: &[&RunData],
    series: &[&SeriesHistory],
    targets: &[(String, String)],
) -> String {
    let pairs: Vec<(&str, &str)> = targets
        .iter()
        .map(|(n, l)| (n.as_str(), l.as_str()))
        .collect();
    let hex = Palette::new(&pairs).of(target).hex();
    let mut out = String::with_capacity(64 * 1024);
    page::head(&mut out, &format!("shootout — {target}"), "");
    let record = runs
        .iter()
        .rev()
        .find_map(|r| r.targets.iter().find(|t| t.target == target));
    let _ = writeln!(
        out,
        "<header>\n<p class=\"meta\"><a href=\"../index.html\">All results</a></p>\n<h1>{}</h1>\n\
         <p class=\"meta\">{}</p>\n</header>\n<main class=\"site\">\n<section id=\"trends\">\n<h2>Throughput over the runs</h2>",
        esc(target),
        esc(&record.map_or(String::new(), |t| format!("{} · {}", t.framework, t.language))),
    );
    if series.is_empty() {
        out.push_str("<p class=\"note\">No run measured this target's throughput.</p>\n");
    }
    for (i, s) in series.iter().enumerate() {
        chart(&mut out, i, s, &hex);
    }
    out.push_str("</section>\n");
    versions(&mut out, target, runs, series);
    let _ = write!(
        out,
        "</main>\n<footer>Made by shootout from the results store alone. Points: the median \
         over a run's server starts with its 95% interval; a hollow point is stale; a dashed \
         line is a change point (E-Divisive means, 5% false-alarm rate per series, \
         as <code>shootout history</code> finds them).</footer>\n{}</body>\n</html>\n",
        csp::script_element()
    );
    out
}

/// One series: its chart and its change points in words.
fn chart(out: &mut String, i: usize, s: &SeriesHistory, hex: &str) {
    let top = s
        .rows
        .iter()
        .map(|r| r.interval.map_or(r.rps, |(_, hi)| hi.max(r.rps)))
        .fold(0.0_f64, f64::max);
    let frame = Frame::spanning(s.rows.len(), top);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" \
         font-family=\"sans-serif\" font-size=\"12\">"
    );
    grid(&mut svg, &frame);
    let labels: Vec<(i64, &str)> = s
        .rows
        .iter()
        .map(|r| (r.run, r.started_at.as_str()))
        .collect();
    run_axis(&mut svg, &labels, &frame);
    markers(&mut svg, s, &frame);
    line(&mut svg, s, &frame, hex);
    svg.push_str("</svg>");
    let stale = s.rows.iter().filter(|r| !r.stale.is_empty()).count();
    let _ = writeln!(
        out,
        "<figure class=\"chart svg\" id=\"chart-{i}\" data-changes=\"{}\" data-stale=\"{stale}\">\n\
         <div class=\"chart-head\"><span class=\"chart-title\">{}</span><span class=\"legend\">study {} · {}</span></div>\n\
         {svg}\n<figcaption>Median requests per second in each run, 95% whiskers with 2+ \
         server starts; dashed: a change point, the first run of a new level{}</figcaption>\n</figure>",
        s.changes.len(),
        esc(&s.scenario),
        esc(&s.study),
        esc(&s.host),
        if stale > 0 {
            "; hollow: a stale result (hover for why)"
        } else {
            ""
        }
    );
    if s.changes.is_empty() {
        out.push_str("<p class=\"note\">No change point in this series.</p>\n");
    } else {
        out.push_str("<ul class=\"changes\">\n");
        for c in &s.changes {
            let _ = writeln!(
                out,
                "<li data-run=\"{}\"><a href=\"../{}\">run {}</a>: {}</li>",
                c.run,
                run_page(c.run),
                c.run,
                esc(&change_text(c))
            );
        }
        out.push_str("</ul>\n");
    }
}

/// The series' line, and each run's point with its whisker and tooltip;
/// a stale run's point hollow.
fn line(svg: &mut String, s: &SeriesHistory, frame: &Frame, hex: &str) {
    let pts: Vec<String> = s
        .rows
        .iter()
        .enumerate()
        .map(|(k, r)| format!("{:.1},{:.1}", frame.x(k), frame.y(r.rps)))
        .collect();
    let _ = write!(
        svg,
        "<polyline fill=\"none\" stroke=\"{hex}\" stroke-width=\"2\" points=\"{}\"/>",
        pts.join(" ")
    );
    for (k, r) in s.rows.iter().enumerate() {
        let (cx, cy) = (frame.x(k), frame.y(r.rps));
        let ci = r.interval.map_or(String::new(), |(lo, hi)| {
            let _ = write!(
                svg,
                "<line x1=\"{cx:.1}\" x2=\"{cx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{hex}\" stroke-width=\"1.5\"/>",
                frame.y(lo),
                frame.y(hi)
            );
            format!(" [{}–{}]", num(lo), num(hi))
        });
        let (fill, stale) = if r.stale.is_empty() {
            (hex.to_string(), String::new())
        } else {
            (
                "#fff".to_string(),
                format!(" · stale: {}", r.stale.join("; ")),
            )
        };
        let _ = write!(
            svg,
            "<g class=\"pt{}\" transform=\"translate({cx:.1},{cy:.1})\"><circle r=\"4\" fill=\"{fill}\" \
             stroke=\"{hex}\" stroke-width=\"1.5\"/><title>{}</title></g>",
            if r.stale.is_empty() { "" } else { " stale" },
            esc(&format!(
                "run {} ({}) · {} req/s{ci}{stale}",
                r.run,
                r.started_at,
                num(r.rps)
            ))
        );
    }
}

/// Each change point: a dashed line at its run, its size above the plot
/// (on a second lane when the first is taken there, left to the tooltip
/// when both are), and the whole sentence as the tooltip.
fn markers(svg: &mut String, s: &SeriesHistory, frame: &Frame) {
    // The right end of the last label on each lane.
    let mut lanes = [f64::NEG_INFINITY; 2];
    for c in &s.changes {
        let x = frame.x(c.row);
        let colour = colour(c);
        let label = change_size(c);
        let half = label.chars().count() as f64 * 3.6 + 4.0;
        let lane = lanes.iter().position(|&end| x - half > end + 4.0);
        let text = lane.map_or(String::new(), |l| {
            lanes[l] = x + half;
            format!(
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"{colour}\" \
                 font-weight=\"600\">{}</text>",
                [TOP - 4.0, TOP + 12.0][l],
                esc(&label)
            )
        });
        let _ = write!(
            svg,
            "<g class=\"change\" data-run=\"{}\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{:.1}\" \
             y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"5 4\"/>{text}\
             <title>{}</title></g>",
            c.run,
            TOP,
            frame.y(0.0),
            esc(&format!("change at run {}: {}", c.run, change_text(c)))
        );
    }
}

/// Red for a drop, green for a rise.
fn colour(c: &ChangeAt) -> &'static str {
    if c.ratio < 1.0 {
        "#b3261e"
    } else {
        "#0b6e2e"
    }
}

/// The target's versions in every run that recorded it, newest first.
fn versions(out: &mut String, target: &str, runs: &[&RunData], series: &[&SeriesHistory]) {
    out.push_str(
        "<section id=\"versions\">\n<h2>Versions</h2>\n<div class=\"scroll\"><table class=\"text\">\n\
         <thead><tr><th>Run</th><th>Study</th><th>Started</th><th>Framework versions</th>\
         <th>Runtime</th><th>shootout</th><th>Stale</th></tr></thead>\n<tbody>\n",
    );
    let mut rows: Vec<(i64, [String; 3], &RunData)> = Vec::new();
    for r in runs {
        if let Some(t) = r.targets.iter().find(|t| t.target == target) {
            let row = crate::provenance::rows(std::slice::from_ref(t)).remove(0);
            rows.push((r.run.id, row, r));
        }
    }
    for (k, (id, row, r)) in rows.iter().enumerate().rev() {
        let changed = k > 0 && rows[k - 1].1[1..] != row[1..];
        let stale = stale_reasons(series, *id);
        let _ = writeln!(
            out,
            "<tr{}><td><a href=\"../{}\">run {id}</a>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            if changed { " class=\"changed\"" } else { "" },
            run_page(*id),
            if changed { " (changed)" } else { "" },
            esc(&r.run.study),
            esc(&r.run.started_at),
            esc(&row[1]),
            esc(&row[2]),
            esc(&crate::provenance::run_line(&r.run)),
            esc(&if stale.is_empty() {
                "—".to_string()
            } else {
                stale.join("; ")
            }),
        );
    }
    out.push_str(
        "</tbody>\n</table></div>\n<p class=\"note\">As each run recorded them: the versions \
         its build resolved, or why they were not recorded; \"(changed)\": not the versions of \
         the run before.</p>\n</section>\n",
    );
}
