//! The site's `index.html`: per study, newest first, its latest run that
//! measured something, with that run's ranking of every scenario drawn
//! as the report's first screen draws it ([`crate::html::glance`]: bars
//! with intervals, ties banded), each target's name linking to its page
//! and each scenario's title to its section in the run's report; a run
//! whose results are stale says why. Then every target, with its change
//! points counted, and every run, each linking to its report.

use super::links::{run_page, stale_reasons, target_page};
use crate::changes::{host_label, SeriesHistory};
use crate::context::Context;
use crate::escape::html as esc;
use crate::group::groups;
use crate::html::glance::{render_linked, Links};
use crate::html::{csp, page};
use shootout_store::RunData;
use std::fmt::Write;

/// Renders the index of `runs` (oldest first).
pub(crate) fn render(
    runs: &[&RunData],
    series: &[SeriesHistory],
    targets: &[(String, String)],
) -> String {
    let mut out = String::with_capacity(64 * 1024);
    page::head(&mut out, "shootout — results", "");
    header(&mut out, runs);
    out.push_str("<main class=\"site\">\n");
    let all: Vec<&SeriesHistory> = series.iter().collect();
    for data in latest_per_study(runs) {
        study(&mut out, data, &all);
    }
    target_list(&mut out, series, targets);
    run_table(&mut out, runs, &all);
    let _ = write!(
        out,
        "</main>\n<footer>Made by shootout from the results store alone; every page works \
         offline. Bars show the median over repetitions with 95% intervals; ≈ groups targets \
         not told apart (docs/statistics.md). Change points: E-Divisive means, 5% false-alarm \
         rate per series, as <code>shootout history</code> finds them.</footer>\n{}</body>\n</html>\n",
        csp::script_element()
    );
    out
}

fn header(out: &mut String, runs: &[&RunData]) {
    let mut studies: Vec<&str> = runs.iter().map(|r| r.run.study.as_str()).collect();
    studies.sort_unstable();
    studies.dedup();
    let span = match (runs.first(), runs.last()) {
        (Some(a), Some(b)) => format!(
            "{} run(s) of {} study(ies), from run {} ({}) to run {} ({}).",
            runs.len(),
            studies.len(),
            a.run.id,
            a.run.started_at,
            b.run.id,
            b.run.started_at
        ),
        _ => "No runs in the results store.".into(),
    };
    let _ = writeln!(
        out,
        "<header>\n<h1>shootout results</h1>\n<p class=\"meta\">{}</p>\n</header>",
        esc(&span)
    );
}

/// Per study, the latest run that measured something, the newest first.
fn latest_per_study<'a>(runs: &[&'a RunData]) -> Vec<&'a RunData> {
    let mut out: Vec<&RunData> = Vec::new();
    for r in runs.iter().rev() {
        if r.measurements.is_empty() || out.iter().any(|o| o.run.study == r.run.study) {
            continue;
        }
        out.push(r);
    }
    out
}

/// One study: its latest run, why it is stale if it is, its rankings.
fn study(out: &mut String, data: &RunData, series: &[&SeriesHistory]) {
    let run = &data.run;
    let id = run.id;
    let _ = writeln!(
        out,
        "<section class=\"study\" id=\"study-{id}\">\n<h2>{}</h2>\n<p class=\"meta\">Latest run: \
         <a href=\"{}\">run {id}</a> · {} · {} · {}</p>",
        esc(&run.study),
        run_page(id),
        esc(&run.started_at),
        esc(&host_label(&run.host)),
        esc(&crate::provenance::run_line(run)),
    );
    let stale = stale_reasons(series, id);
    if !stale.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"stale\">Stale: {}.</p>",
            esc(&stale.join("; "))
        );
    }
    let ctx = Context::new(data);
    let key = format!("r{id}");
    let page = run_page(id);
    let links = Links {
        key: &key,
        run_page: &page,
        target_page: &|t: &str| target_page(t),
    };
    let before = out.len();
    render_linked(out, &ctx, &groups(data), Some(&links));
    if out.len() == before {
        out.push_str("<p class=\"note\">No throughput was measured in this run.</p>\n");
    }
    out.push_str("</section>\n");
}

/// Every target, linking to its page, with its change points counted.
fn target_list(out: &mut String, series: &[SeriesHistory], targets: &[(String, String)]) {
    out.push_str("<section id=\"targets\">\n<h2>Targets</h2>\n<ul class=\"site-targets\">\n");
    for (name, _) in targets {
        let mine: Vec<&SeriesHistory> = series.iter().filter(|s| s.target == *name).collect();
        let changes: usize = mine.iter().map(|s| s.changes.len()).sum();
        let what = match (mine.is_empty(), changes) {
            (true, _) => "nothing measured".to_string(),
            (false, 0) => format!("{} series, no change point", mine.len()),
            (false, n) => format!("{} series, {n} change point(s)", mine.len()),
        };
        let _ = writeln!(
            out,
            "<li><a href=\"{}\">{}</a> <span class=\"note\">{}</span></li>",
            esc(&target_page(name)),
            esc(name),
            esc(&what)
        );
    }
    out.push_str("</ul>\n</section>\n");
}

/// Every run, newest first, linking to its report.
fn run_table(out: &mut String, runs: &[&RunData], series: &[&SeriesHistory]) {
    out.push_str(
        "<section id=\"runs\">\n<h2>Runs</h2>\n<div class=\"scroll\"><table class=\"text sortable\">\
         <thead><tr><th>Study</th><th>Run</th><th>Started</th><th>Status</th><th>Host</th>\
         <th>shootout</th><th>Stale</th></tr></thead><tbody>\n",
    );
    for r in runs.iter().rev() {
        let run = &r.run;
        let stale = stale_reasons(series, run.id);
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td data-v=\"{}\"><a href=\"{}\">run {}</a></td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td></tr>",
            if stale.is_empty() { "" } else { " class=\"stale\"" },
            esc(&run.study),
            run.id,
            run_page(run.id),
            run.id,
            esc(&run.started_at),
            esc(run.status.as_str()),
            esc(&host_label(&run.host)),
            esc(&crate::provenance::run_line(run)),
            esc(&if stale.is_empty() {
                "—".to_string()
            } else {
                stale.join("; ")
            }),
        );
    }
    out.push_str("</tbody></table></div>\n</section>\n");
}
