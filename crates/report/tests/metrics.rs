//! A study's `metrics` decides the rows of its report's tables: the listed
//! metrics in the study's order, the catalogue's default rows when it lists
//! none. Names that had no report row before (`rps_max`, `footprint_mib`)
//! get values.

mod common;

use shootout_report_fixtures::FixtureOptions;

/// The row labels of the Markdown table under `## {title}`.
fn rows(md: &str, title: &str) -> Vec<String> {
    md.split(&format!("\n## {title}\n"))
        .nth(1)
        .expect("the table")
        .lines()
        .skip_while(|l| !l.starts_with("| Metric"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap_or_default().trim().to_string())
        .collect()
}

#[test]
fn listed_metrics_are_the_rows_in_the_studys_order() {
    let (db, ids) = common::fixture_db("listed", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    let default_rows = rows(&shootout_report::markdown(&data), "simple (n=10000 c=100)");
    assert_eq!(default_rows.len(), 12, "{default_rows:?}");
    data.run.study_text = data.run.study_text.replacen(
        "source = ",
        "metrics = [\"p99_ms\", \"rps\", \"rps_max\", \"footprint_mib\"]\nsource = ",
        1,
    );
    let md = shootout_report::markdown(&data);
    assert_eq!(
        rows(&md, "simple (n=10000 c=100)"),
        [
            "p99 latency (ms)",
            "RPS (req/s)",
            "RPS best second (req/s)",
            "Footprint (MiB)"
        ]
    );
    let table = md
        .split("\n## simple (n=10000 c=100)\n")
        .nth(1)
        .expect("table");
    for label in ["RPS best second (req/s)", "Footprint (MiB)"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .expect("row");
        assert!(
            row.split('|')
                .skip(2)
                .any(|c| c.trim().trim_matches('*').parse::<f64>().is_ok()),
            "{label} has values: {row}"
        );
    }
    let html = shootout_report::html(&data);
    assert!(html.contains("<td>RPS best second (req/s)</td>"));
    assert!(!html.contains("<td>Mean latency (ms)</td>"));
}
