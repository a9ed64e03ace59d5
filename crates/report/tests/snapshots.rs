//! Snapshot tests of the Markdown and CSV reports of a fixed fixture run,
//! stored through the real SQLite store and read back, timestamps scrubbed.

mod common;

use shootout_report_fixtures::FixtureOptions;

#[test]
fn markdown_report_of_the_fixture_run() {
    let (db, ids) = common::fixture_db("md", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    insta::assert_snapshot!(
        "fixture_md",
        common::scrub_times(&shootout_report::markdown(&data))
    );
}

#[test]
fn csv_report_of_the_fixture_run() {
    let (db, ids) = common::fixture_db("csv", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    let csv = shootout_report::csv(&data);
    assert_eq!(csv.lines().count(), 1 + data.measurements.len());
    insta::assert_snapshot!("fixture_csv", common::scrub_times(&csv));
}

#[test]
fn run_reports_are_written_beside_the_database() {
    let (db, ids) = common::fixture_db("write", &[FixtureOptions::default()]);
    let dir = db.parent().expect("parent").join("reports");
    let (md, html) = shootout_report::write_run_reports(&db, ids[0], &dir).expect("write");
    assert_eq!(md, dir.join("report.md"));
    assert_eq!(html, dir.join("report.html"));
    let page = std::fs::read_to_string(html).expect("html");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(std::fs::read_to_string(md)
        .expect("md")
        .contains("## simple"));
}

#[test]
fn the_fixture_study_parses_strictly_and_its_figures_are_shown() {
    let (db, ids) = common::fixture_db("published", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    let ctx = shootout_report::context::Context::new(&data);
    assert!(ctx.study.is_ok(), "{:?}", ctx.study);
    assert!(ctx.study_note().is_none());
    assert!(ctx.published.has_any("plaintext", 1));
    let md = shootout_report::markdown(&data);
    assert!(md.contains("published |"), "{md}");
}

#[test]
fn a_stored_study_that_no_longer_parses_is_reported_not_hidden() {
    let (db, ids) = common::fixture_db("stale", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    // A key this version does not know, as an older or newer study might have.
    data.run.study_text = data.run.study_text.replace(
        "[published.simple]\n",
        "[published.simple]\nrequests_per_second = { rust-axum = 1 }\n",
    );
    let ctx = shootout_report::context::Context::new(&data);
    assert!(ctx.study.is_err());
    assert!(ctx.published.is_empty());
    let md = shootout_report::markdown(&data);
    assert!(
        md.contains("Published figures are not shown") && md.contains("unknown metric"),
        "{md}"
    );
    let html = shootout_report::html(&data);
    assert!(html.contains("Published figures are not shown"));
}

fn database_run(tag: &str) -> shootout_report::RunData {
    let opts = FixtureOptions {
        database: true,
        ..FixtureOptions::default()
    };
    let (db, ids) = common::fixture_db(tag, &[opts]);
    common::load(&db, ids[0])
}

#[test]
fn markdown_report_of_the_database_fixture_run() {
    let data = database_run("db-md");
    insta::assert_snapshot!(
        "database_fixture_md",
        common::scrub_times(&shootout_report::markdown(&data))
    );
}

#[test]
fn csv_report_of_the_database_fixture_run() {
    let data = database_run("db-csv");
    let csv = shootout_report::csv(&data);
    assert_eq!(csv.lines().count(), 1 + data.measurements.len());
    insta::assert_snapshot!("database_fixture_csv", common::scrub_times(&csv));
}

#[test]
fn the_html_report_states_the_database_and_its_cost() {
    let html = shootout_report::html(&database_run("db-html"));
    for needle in [
        "PostgreSQL 16.4",
        "max_connections=200, shared_buffers=128MB, synchronous_commit=off",
        "The database shares CPU 0 with the server: database time competes with the framework&#39;s.",
        "<td>DB CPU (s)</td>",
        "<td>DB RSS peak (MiB)</td>",
        "<th>Database CPUs</th><td>0</td>",
        "id=\"chart-db-l0-cpu\"",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
}

#[test]
fn reports_without_a_database_have_no_database_rows() {
    let (db, ids) = common::fixture_db("no-db", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    for text in [
        shootout_report::markdown(&data),
        shootout_report::html(&data),
        shootout_report::csv(&data),
        shootout_report::json(&data),
    ] {
        assert!(!text.contains("DB CPU") && !text.contains("db_cpu_s"));
        assert!(!text.contains("PostgreSQL") && !text.contains("-cpu\""));
    }
}

#[test]
fn wrong_answers_are_flagged_in_every_format() {
    use shootout_report_fixtures::WRONG_ANSWERS;
    let (db, ids) = common::fixture_db("mismatch", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    let note = format!("rust-rocket {WRONG_ANSWERS} of ");
    let md = shootout_report::markdown(&data);
    assert!(
        md.contains("| rust-rocket≠ |") && md.contains(&note),
        "{md}"
    );
    assert_eq!(
        md.matches("≠ Wrong answers (").count(),
        1,
        "only under simple"
    );
    let html = shootout_report::html(&data);
    assert!(html.contains("<th>rust-rocket ≠</th>") && html.contains(&note));
    let json: serde_json::Value =
        serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    let flagged: Vec<_> = json["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .filter(|s| s["mismatches"].as_u64() != Some(0))
        .map(|s| {
            (
                s["target"].clone(),
                s["scenario"].clone(),
                s["mismatches"].clone(),
            )
        })
        .collect();
    assert_eq!(
        flagged,
        vec![("rust-rocket".into(), "simple".into(), WRONG_ANSWERS.into())]
    );
    let clean = database_run("no-mismatch");
    assert!(!shootout_report::markdown(&clean).contains('≠'));
    assert!(!shootout_report::html(&clean).contains('≠'));
}

/// A study whose level pipelines says so in the Markdown and HTML headers,
/// and its JSON results carry the depth of every measurement.
#[test]
fn a_pipelined_level_is_named_in_the_header_and_the_json() {
    let (db, ids) = common::fixture_db("pipeline", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    assert!(!shootout_report::markdown(&data).contains("pipelining"));
    let mut label = String::new();
    for m in &mut data.measurements {
        if m.scenario == "plaintext" && m.level == 1 {
            m.summary.pipeline = 16;
            label = m.level_label.clone();
        }
    }
    let line = format!(
        "HTTP/1.1 pipelining (requests in flight per connection, answered in order): \
         plaintext ({label}) at depth 16"
    );
    let md = shootout_report::markdown(&data);
    assert!(md.contains(&line), "{md}");
    assert!(shootout_report::html(&data).contains(&line));
    let json: serde_json::Value = serde_json::from_str(&shootout_report::json(&data)).unwrap();
    let depths: Vec<u64> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["scenario"] == "plaintext")
        .map(|r| r["pipeline"].as_u64().unwrap())
        .collect();
    assert!(depths.contains(&16) && depths.contains(&1), "{depths:?}");
}
