//! The seed of a random target order is in every output of a run, as
//! docs/statistics.md says: the Markdown and HTML headers (the one
//! `order_line`), the JSON's `run.order_seed` and the CSV's `order_seed`;
//! a run with another order has no seed column.

mod common;

use shootout_report::RunData;
use shootout_report_fixtures::{FixtureOptions, STUDY_TEXT};

/// The fixture run as if its study had `order = "random"` and drew `seed`.
pub fn random_run(tag: &str, seed: u64) -> RunData {
    let (db, ids) = common::fixture_db(tag, &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    data.run.study_text = format!("order = \"random\"\n{STUDY_TEXT}");
    data.run.order_seed = Some(seed);
    data
}

#[test]
fn the_seed_is_in_every_output() {
    let data = random_run("seed", 4_242_424_242);
    let line = "order random (seed 4242424242)";
    let md = shootout_report::markdown(&data);
    assert!(md.contains(line), "report.md:\n{md}");
    let html = shootout_report::html(&data);
    assert!(html.contains(line), "report.html");
    let json: serde_json::Value =
        serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(json["run"]["order_seed"], 4_242_424_242_u64);
    let csv = shootout_report::csv(&data);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let at = header
        .iter()
        .position(|h| *h == "order_seed")
        .expect("an order_seed column");
    for row in lines {
        assert_eq!(row.split(',').nth(at), Some("4242424242"), "{row}");
    }
}

#[test]
fn another_order_has_no_seed_but_says_its_order() {
    let (db, ids) = common::fixture_db("no-seed", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    assert!(!shootout_report::csv(&data).contains("order_seed"));
    let json: serde_json::Value =
        serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert!(json["run"]["order_seed"].is_null());
    let md = shootout_report::markdown(&data);
    assert!(md.contains("order rotated"), "{md}");
}
