//! Disturbed measurements in every output: a repetition during which other
//! processes (or the hypervisor) took the measured CPUs is flagged
//! "disturbed" in the Markdown and HTML tables and notes, the findings,
//! the JSON (per result and per summary) and the CSV; a quiet run has none.

mod common;

use serde_json::Value;
use shootout_report::findings::{findings, text};
use shootout_report_fixtures::FixtureOptions;
use shootout_store::RunData;

fn run(tag: &str) -> RunData {
    let (db, ids) = common::fixture_db(tag, &[FixtureOptions::default()]);
    common::load(&db, ids[0])
}

/// The fixture with one repetition of its first measured target disturbed;
/// returns that target.
fn disturb(data: &mut RunData) -> String {
    let m = &mut data.measurements[0];
    m.others_cpu_share = Some(0.34);
    m.steal_share = Some(0.01);
    m.disturbed = true;
    m.target.clone()
}

#[test]
fn a_disturbed_measurement_is_flagged_everywhere() {
    let mut data = run("disturbed");
    let target = disturb(&mut data);
    let note = format!("※ Disturbed: {target} (other processes 34%, steal 1%)");
    let md = shootout_report::markdown(&data);
    assert!(md.contains(&note), "{md}");
    assert!(
        md.contains(&format!("{target} ※")) || md.contains(&format!("{target}※")),
        "the column mark: {md}"
    );
    // The findings and the one table with the disturbed repetition.
    assert_eq!(md.matches("Disturbed:").count(), 2, "{md}");

    let html = shootout_report::html(&data);
    assert!(html.contains(&note), "the HTML note");

    let f = text(&findings(&shootout_report::Context::new(&data)));
    assert!(f.contains(&format!("Disturbed: {target}")), "{f}");

    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    let results = json["results"].as_array().expect("results");
    let flagged: Vec<&Value> = results.iter().filter(|r| r["disturbed"] == true).collect();
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!(flagged[0]["others_cpu_share"], 0.34);
    assert_eq!(flagged[0]["steal_share"], 0.01);
    let summary = json["summary"].as_array().expect("summary");
    assert_eq!(summary.iter().filter(|s| s["disturbed"] == true).count(), 1);

    let csv = shootout_report::csv(&data);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "disturbed")
        .expect("column");
    let rows = csv
        .lines()
        .skip(1)
        .filter(|l| l.split(',').nth(col) == Some("true"));
    assert_eq!(rows.count(), 1, "{csv}");
}

#[test]
fn a_quiet_run_has_no_disturbed_flag() {
    let data = run("quiet");
    let md = shootout_report::markdown(&data);
    assert!(!md.contains("Disturbed") && !md.contains('※'), "{md}");
    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    let results = json["results"].as_array().expect("results");
    assert!(results.iter().all(|r| r["disturbed"] == false));
    assert!(results.iter().all(|r| r["others_cpu_share"].is_null()));
}
