//! The tables of `shootout history`: one row per stored run, as the store
//! lists them, and per series ([`crate::changes`]) its runs over time with
//! their figure, interval, staleness and change points. Returned as
//! Strings; the CLI prints them. A run that failed says so beside its
//! targets: their records may all be `ok` (they built and answered) while
//! the run itself stopped on an error.

use crate::changes::{ChangeAt, SeriesHistory};
use shootout_store::{RunListing, RunStatus};

/// The runs as a Markdown-style table, one row per run, in the order given.
pub fn render(runs: &[RunListing]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_preset(comfy_table::presets::ASCII_MARKDOWN);
    table.set_header([
        "id",
        "study",
        "when",
        "status",
        "host",
        "targets ok",
        "measurements",
    ]);
    for r in runs {
        table.add_row(row(r));
    }
    table.to_string()
}

fn row(r: &RunListing) -> Vec<String> {
    vec![
        r.id.to_string(),
        r.study.clone(),
        r.started_at.clone(),
        r.status.to_string(),
        format!("{} ({} cores)", r.host.hostname, r.host.cores),
        targets_ok(r),
        r.measurements.to_string(),
    ]
}

/// `3/3`; for a failed run `1/1 built, run failed`: the targets may all
/// be ready while the run stopped before measuring them all.
fn targets_ok(r: &RunListing) -> String {
    match r.status {
        RunStatus::Failed => format!("{}/{} built, run failed", r.targets_ok, r.targets),
        _ => format!("{}/{}", r.targets_ok, r.targets),
    }
}

/// Each series as a heading and a table of its runs, a change point
/// marked on the run it starts at with its size, interval, p and what
/// changed ("nothing recorded changed" when nothing did).
pub fn render_series(series: &[SeriesHistory]) -> String {
    let mut out = String::new();
    for s in series {
        out.push_str(&format!(
            "## {} · {} · study {} · {}\n\n",
            s.target, s.scenario, s.study, s.host
        ));
        let mut table = comfy_table::Table::new();
        table.load_preset(comfy_table::presets::ASCII_MARKDOWN);
        table.set_header(["run", "when", "req/s", "95% interval", "change", "stale"]);
        for (i, r) in s.rows.iter().enumerate() {
            let change = s
                .changes
                .iter()
                .find(|c| c.row == i)
                .map_or(String::new(), change_text);
            table.add_row([
                r.run.to_string(),
                r.started_at.clone(),
                format!("{:.0}", r.rps),
                r.interval.map_or("one start".to_string(), |(lo, hi)| {
                    format!("{lo:.0}–{hi:.0}")
                }),
                change,
                r.stale.join("; "),
            ]);
        }
        out.push_str(&table.to_string());
        out.push_str("\n\n");
    }
    out
}

/// The change points of every series that has one, a line each.
pub fn render_changes(series: &[SeriesHistory]) -> String {
    let mut out = String::new();
    for s in series {
        for c in &s.changes {
            out.push_str(&format!(
                "- {} · {} (study {}, {}): run {}: {}\n",
                s.target,
                s.scenario,
                s.study,
                s.host,
                c.run,
                change_text(c)
            ));
        }
    }
    if out.is_empty() {
        out.push_str("no change points\n");
    }
    out
}

/// `▼ 0.80×`: a change point's direction and size (the results site's
/// label on a chart).
pub fn change_size(c: &ChangeAt) -> String {
    let arrow = if c.ratio < 1.0 { "▼" } else { "▲" };
    format!("{arrow} {:.2}×", c.ratio)
}

/// `▼ 0.80× [0.78–0.82], p = 0.005: axum 0.8.4 → 0.8.1`.
pub fn change_text(c: &ChangeAt) -> String {
    let interval = c.interval.map_or(
        " (no interval: one run on a side)".to_string(),
        |(lo, hi)| format!(" [{lo:.2}–{hi:.2}]"),
    );
    let causes = if c.causes.is_empty() {
        "nothing recorded changed".to_string()
    } else {
        c.causes.join(", ")
    };
    format!(
        "{}{interval}, p = {}: {causes}",
        change_size(c),
        crate::compare::p_text(c.p_value)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_store::Host;

    fn listing(id: i64, status: RunStatus, ok: u64) -> RunListing {
        RunListing {
            id,
            study: "baseline".into(),
            started_at: "2026-11-25T03:00:00Z".into(),
            finished_at: None,
            status,
            tool_version: "0.1.0".into(),
            git_commit: None,
            host: Host {
                cpu_model: "cpu".into(),
                cores: 2,
                mem_total_mib: 1024,
                kernel: "6.1".into(),
                hostname: "box".into(),
            },
            scale: 1.0,
            targets: 3,
            targets_ok: ok,
            measurements: 12,
        }
    }

    #[test]
    fn one_row_per_run_with_host_and_targets_ok() {
        let text = render(&[
            listing(1, RunStatus::Complete, 3),
            listing(2, RunStatus::Interrupted, 1),
        ]);
        let expected = "\
| id | study    | when                 | status      | host          | targets ok | measurements |
|----|----------|----------------------|-------------|---------------|------------|--------------|
| 1  | baseline | 2026-11-25T03:00:00Z | complete    | box (2 cores) | 3/3        | 12           |
| 2  | baseline | 2026-11-25T03:00:00Z | interrupted | box (2 cores) | 1/3        | 12           |";
        assert_eq!(text, expected);
        // A different run gives a different table: the comparison can fail.
        assert_ne!(render(&[listing(1, RunStatus::Failed, 0)]), expected);
    }

    #[test]
    fn a_failed_run_is_not_shown_as_all_targets_ok() {
        let mut run = listing(4, RunStatus::Failed, 1);
        run.targets = 1;
        let text = render(&[run]);
        assert!(text.contains("| 1/1 built, run failed |"), "{text}");
    }
}
