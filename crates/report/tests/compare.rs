//! `compare` on fixture runs: runs drawn from the same distribution tie on
//! most rows; a run with one target slowed down shows it "slower" (and the
//! reverse comparison "faster"), and `--fail-if-slower` catches it.

mod common;

use shootout_report::compare::{compare, Basis};
use shootout_report::stats::{Label, Margin, TestKind};
use shootout_report_fixtures::FixtureOptions;

fn seeded(seed: u64) -> FixtureOptions {
    FixtureOptions {
        seed,
        ..Default::default()
    }
}

fn slowed(seed: u64, target: &str, factor: f64) -> FixtureOptions {
    FixtureOptions {
        seed,
        slow: Some((target.into(), factor)),
        ..Default::default()
    }
}

#[test]
fn equal_distributions_tie_on_most_rows() {
    let (db, ids) = common::fixture_db("tie", &[seeded(1), seeded(2)]);
    let cmp = compare(
        &common::load(&db, ids[0]),
        &common::load(&db, ids[1]),
        Margin::default(),
    );
    assert_eq!(cmp.rows.len(), 9);
    let ties = cmp
        .rows
        .iter()
        .filter(|r| r.rps_verdict.label == Label::Tie)
        .count();
    assert!(
        ties * 10 >= cmp.rows.len() * 7,
        "only {ties} of {} rows tie",
        cmp.rows.len()
    );
    assert!(cmp.slower_than(5.0).is_empty());
    assert!(cmp.render().contains("tie (not significant)"));
}

#[test]
fn a_slowed_target_is_slower_and_the_reverse_is_faster() {
    let (db, ids) = common::fixture_db("slow", &[seeded(1), slowed(2, "rust-rocket", 1.25)]);
    let (a, b) = (common::load(&db, ids[0]), common::load(&db, ids[1]));
    let cmp = compare(&a, &b, Margin::default());
    for r in cmp.rows.iter().filter(|r| r.target == "rust-rocket") {
        assert_eq!(r.rps_verdict.label, Label::Slower, "{r:?}");
        assert!(r.rps_verdict.change_pct < -15.0);
        assert_eq!(r.p99_verdict.label, Label::Slower, "{r:?}");
    }
    assert_eq!(cmp.slower_than(10.0).len(), 3);
    assert!(cmp.slower_than(30.0).is_empty());
    let back = compare(&b, &a, Margin::default());
    assert!(back
        .rows
        .iter()
        .filter(|r| r.target == "rust-rocket")
        .all(|r| r.rps_verdict.label == Label::Faster));
    assert!(back.render().contains("| faster |"));
}

#[test]
fn single_repetitions_are_compared_per_second() {
    let (db, ids) = common::fixture_db("seconds", &[seeded(1), slowed(2, "rust-rocket", 1.25)]);
    let one_rep = |id| {
        let mut data = common::load(&db, id);
        data.measurements.retain(|m| m.repetition == 0);
        data
    };
    let cmp = compare(&one_rep(ids[0]), &one_rep(ids[1]), Margin::default());
    assert!(cmp.rows.iter().all(|r| r.basis == Basis::Seconds));
    let rocket: Vec<_> = cmp
        .rows
        .iter()
        .filter(|r| r.target == "rust-rocket")
        .collect();
    assert!(
        rocket.iter().all(|r| r.rps_verdict.label == Label::Slower),
        "{rocket:?}"
    );
    assert!(cmp.render().contains("per-second"));

    // On a calibrated host (1% between starts) the throughput of a target
    // measured once is tested on the host's figure: rust-rocket's 20% is
    // slower, and the others' few percent are within the 5% margin.
    let mut b = one_rep(ids[1]);
    b.calibration = Some(shootout_store::Calibration {
        run_id: 9,
        started_at: "2026-11-29T07:00:00Z".into(),
        targets: vec!["go-nethttp".into()],
        starts: 6,
        var_log: 0.01f64.ln_1p().powi(2),
        df: 5.0,
    });
    let cmp = compare(&one_rep(ids[0]), &b, Margin::default());
    for r in &cmp.rows {
        assert_eq!(r.rps_verdict.test, TestKind::Calibrated, "{r:?}");
        let want = if r.target == "rust-rocket" {
            Label::Slower
        } else {
            Label::Tie
        };
        assert_eq!(r.rps_verdict.label, want, "{r:?}");
    }
    assert!(cmp
        .render()
        .contains("t on the host's calibrated noise, p="));
}
