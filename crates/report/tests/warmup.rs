//! Auto warm-ups in every output: a measurement whose warm-up hit its cap
//! is flagged "not steady" (Markdown, HTML, findings, JSON, CSV) and the
//! time to steady state is a row of the tables; a run with fixed warm-ups
//! has neither.

mod common;

use serde_json::Value;
use shootout_report::findings::{findings, text};
use shootout_report_fixtures::FixtureOptions;
use shootout_store::RunData;

fn run(tag: &str, auto_warmup: bool) -> RunData {
    let opts = FixtureOptions {
        auto_warmup,
        ..FixtureOptions::default()
    };
    let (db, ids) = common::fixture_db(tag, &[opts]);
    common::load(&db, ids[0])
}

#[test]
fn a_capped_warm_up_is_flagged_not_steady_everywhere() {
    let data = run("warmup-auto", true);
    let md = shootout_report::markdown(&data);
    assert!(
        md.contains("∿ Not steady: rust-rocket (warm-up capped at 30.0 s)"),
        "{md}"
    );
    assert!(
        md.contains("rust-rocket ∿") || md.contains("rust-rocket∿"),
        "{md}"
    );
    // The findings and the one table with the capped repetition.
    assert_eq!(md.matches("Not steady:").count(), 2, "{md}");
    assert!(md.contains("| Warm-up to steady (s) |"), "{md}");

    let html = shootout_report::html(&data);
    assert!(html.contains("∿ Not steady: rust-rocket"), "the HTML note");
    assert!(html.contains("rust-rocket ∿"), "the HTML column mark");

    let f = text(&findings(&shootout_report::Context::new(&data)));
    assert!(f.contains("Not steady: rust-rocket"), "{f}");

    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(json["schema"], "shootout-report/4");
    let results = json["results"].as_array().expect("results");
    let capped: Vec<&Value> = results.iter().filter(|r| r["steady"] == false).collect();
    assert_eq!(capped.len(), 1, "{capped:?}");
    assert_eq!(capped[0]["target"], "rust-rocket");
    assert_eq!(capped[0]["warmup_s"], 30.0);
    assert!(results.iter().all(|r| r["warmup_s"].as_f64().is_some()));
    let flagged: Vec<&Value> = json["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .filter(|s| s["not_steady"] == true)
        .collect();
    assert_eq!(flagged.len(), 1);

    let csv = shootout_report::csv(&data);
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let (w, s) = (
        header
            .iter()
            .position(|h| *h == "warmup_s")
            .expect("warmup_s"),
        header.iter().position(|h| *h == "steady").expect("steady"),
    );
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let unsteady: Vec<&Vec<&str>> = rows.iter().filter(|r| r[s] == "false").collect();
    assert_eq!(unsteady.len(), 1);
    assert_eq!(unsteady[0][w], "30");
}

#[test]
fn fixed_warm_ups_show_no_flag_and_no_warm_up_row() {
    let data = run("warmup-fixed", false);
    let md = shootout_report::markdown(&data);
    assert!(!md.contains("Not steady"), "{md}");
    assert!(!md.contains("∿"), "{md}");
    assert!(!md.contains("Warm-up to steady"), "{md}");
    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert!(json["results"]
        .as_array()
        .expect("results")
        .iter()
        .all(|r| r["steady"].is_null() && r["warmup_s"].is_null() && r["warmup_cv"].is_null()));
}

#[test]
fn a_noisy_warm_up_is_noted_for_its_target_only() {
    let data = run("warmup-noisy", true);
    let md = shootout_report::markdown(&data);
    let note = "Warm-up windows varied over the steady-state rule's 3%";
    // Once, in the run's findings, with its cause: on a quiet machine the
    // server's own variation, never the machine's.
    assert_eq!(md.matches(note).count(), 1, "{md}");
    assert!(
        md.contains(
            "in 1 cell by more than counting explains, on CPUs no other process took \
             (rust-actix simple 12%) — the server's own variation"
        ),
        "{md}"
    );
    assert!(!md.contains("machine varied"), "{md}");
    let line = md.lines().find(|l| l.contains(note)).unwrap_or("");
    assert!(!line.contains("rust-axum"), "{line}");
    let html = shootout_report::html(&data);
    assert_eq!(
        html.matches("Warm-up windows varied over the steady-state rule")
            .count(),
        1,
        "the HTML says it once"
    );
    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    let noisy: Vec<&Value> = json["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["warmup_cv"].as_f64().is_some_and(|cv| cv > 0.03))
        .collect();
    assert_eq!(noisy.len(), 1, "{noisy:?}");
    assert_eq!(noisy[0]["target"], "rust-actix");

    let fixed = shootout_report::markdown(&run("warmup-noisy-fixed", false));
    assert!(!fixed.contains("Warm-up windows varied"), "{fixed}");
}
