//! A run that did not finish says which of its planned levels it never
//! measured, in the Markdown and HTML headers; a complete run says nothing.

mod common;

use shootout_report::RunData;
use shootout_report_fixtures::{FixtureOptions, STUDY_TEXT};
use shootout_store::RunStatus;

/// The fixture run (3 starts of each target in each level) planned with 3
/// repetitions, `status`, and the starts `drop` selects removed.
fn run(
    tag: &str,
    status: RunStatus,
    drop: impl Fn(&shootout_store::Measurement) -> bool,
) -> RunData {
    let (db, ids) = common::fixture_db(tag, &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    data.run.study_text = format!("repetitions = 3\n{STUDY_TEXT}");
    data.run.status = status;
    data.measurements.retain(|m| !drop(m));
    data
}

#[test]
fn an_interrupted_run_names_the_levels_it_did_not_measure() {
    let probe = run("planned-probe", RunStatus::Complete, |_| false);
    let first = probe.measurements[0].target.clone();
    let last = probe.measurements.last().expect("measured").target.clone();
    let plaintext_2 = probe
        .measurements
        .iter()
        .find(|m| m.scenario == "plaintext" && m.level == 1)
        .expect("a second plaintext level")
        .level_label
        .clone();
    let data = run("planned", RunStatus::Interrupted, |m| {
        (m.scenario == "plaintext" && m.level == 1 && m.target == last)
            || (m.scenario == "simple" && m.target == first && m.repetition == 2)
    });
    let md = shootout_report::markdown(&data);
    let want = format!("plaintext ({plaintext_2}): {last} (3 of 3 starts)");
    assert!(
        md.contains("The run was interrupted before these planned levels"),
        "{md}"
    );
    assert!(md.contains(&want), "{want} in\n{md}");
    assert!(md.contains(&format!("{first} (1 of 3 starts)")), "{md}");
    let note = md
        .lines()
        .find(|l| l.contains("planned levels"))
        .expect("the note");
    assert_eq!(note.matches(" of 3 starts)").count(), 2, "{note}");
    let html = shootout_report::html(&data);
    assert!(html.contains(&want), "the HTML header says it too");
}

#[test]
fn a_complete_run_has_no_such_note() {
    let data = run("planned-complete", RunStatus::Complete, |m| {
        m.repetition == 2
    });
    let md = shootout_report::markdown(&data);
    assert!(!md.contains("planned levels"), "{md}");
}
