//! Snapshot tests of the findings text for fixed fixture runs: the plain
//! fixture (a clear winner, a generator-bound row, wrong answers, a failed
//! target, an article whose ranking reproduces), one where two targets tie,
//! and one where the article's ranking flips.

mod common;

use shootout_report::findings::{findings, text};
use shootout_report_fixtures::FixtureOptions;

fn findings_of(tag: &str, opts: FixtureOptions) -> String {
    let (db, ids) = common::fixture_db(tag, &[opts]);
    let data = common::load(&db, ids[0]);
    text(&findings(&shootout_report::Context::new(&data)))
}

#[test]
fn a_clear_winner_a_bound_row_a_failed_target_and_a_reproduced_article() {
    let t = findings_of("findings-plain", FixtureOptions::default());
    assert!(t.contains("Throughput: rust-actix "), "{t}");
    assert!(t.contains("Failed, not measured: python-django"), "{t}");
    assert!(t.contains("Generator-bound: rust-actix"), "{t}");
    assert!(t.contains("The article's conclusion reproduced"), "{t}");
    insta::assert_snapshot!("findings_plain", t);
}

#[test]
fn two_targets_within_noise_are_named_a_tie() {
    // rust-axum's base rate raised to rust-actix's: 12000 / (12000/12400).
    let t = findings_of(
        "findings-tie",
        FixtureOptions {
            slow: Some(("rust-axum".into(), 12000.0 / 12400.0)),
            ..Default::default()
        },
    );
    assert!(t.contains("Tie: "), "{t}");
    insta::assert_snapshot!("findings_tie", t);
}

#[test]
fn an_article_whose_ranking_flips_is_said_not_to_reproduce() {
    let t = findings_of(
        "findings-flip",
        FixtureOptions {
            slow: Some(("rust-actix".into(), 1.1)),
            ..Default::default()
        },
    );
    assert!(t.contains("did not fully reproduce"), "{t}");
    assert!(t.contains("flipped rust-actix/rust-axum"), "{t}");
    insta::assert_snapshot!("findings_flip", t);
}

#[test]
fn a_start_far_from_the_others_is_named_between_starts() {
    let (db, ids) = common::fixture_db("findings-noisy", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    let m = data
        .measurements
        .iter_mut()
        .find(|m| m.target == "rust-rocket" && m.scenario == "simple" && m.repetition == 0)
        .expect("a rocket repetition");
    m.summary.rps *= 1.3;
    let t = text(&findings(&shootout_report::Context::new(&data)));
    // Said once for the run, of rust-rocket only (pooled over its cells).
    assert!(t.contains("Between starts: rust-rocket "), "{t}");
    assert_eq!(t.matches("Between starts:").count(), 1, "{t}");
    let line = t
        .lines()
        .find(|l| l.starts_with("Between starts:"))
        .unwrap_or("");
    assert!(
        !line.contains("rust-actix") && !line.contains("rust-axum"),
        "{line}"
    );
    // Without that start nobody is named.
    let (db, ids) = common::fixture_db("findings-quiet", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    let t = text(&findings(&shootout_report::Context::new(&data)));
    assert!(!t.contains("Between starts"), "{t}");
}

#[test]
fn a_disturbed_run_puts_its_floor_on_others_cpu_not_on_the_servers() {
    let (db, ids) = common::fixture_db("findings-disturbed", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    for m in data
        .measurements
        .iter_mut()
        .filter(|m| m.target == "rust-rocket")
    {
        m.disturbed = true;
        if m.scenario == "simple" && m.repetition == 0 {
            m.summary.rps *= 1.3;
        }
    }
    let t = text(&findings(&shootout_report::Context::new(&data)));
    let floor = floor_line(&t);
    assert!(floor.contains("measurements were disturbed"), "{t}");
    assert!(floor.contains("so much of it is their CPU"), "{floor}");
    // rust-rocket's spread is others' CPU (its ※ note), not its starts.
    assert!(!t.contains("Between starts: rust-rocket"), "{t}");
}

/// One disturbed measurement does not take the blame for a floor the
/// servers' own starts set: the floor without its pairs is as high.
#[test]
fn a_floor_the_disturbed_do_not_explain_is_not_put_on_them() {
    let (db, ids) = common::fixture_db("findings-undisturbed", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    for m in data.measurements.iter_mut() {
        if m.repetition == 0 {
            m.summary.rps *= 1.4;
        }
    }
    if let Some(m) = data
        .measurements
        .iter_mut()
        .find(|m| m.target == "rust-rocket" && m.scenario == "simple")
    {
        m.disturbed = true;
    }
    let t = text(&findings(&shootout_report::Context::new(&data)));
    let floor = floor_line(&t);
    assert!(floor.contains("1 of the"), "{floor}");
    assert!(floor.contains("so they do not explain it"), "{floor}");
    assert!(!floor.contains("their CPU"), "{floor}");
}

/// The findings' A/A floor sentence ("" when there is none).
fn floor_line(findings: &str) -> &str {
    findings
        .lines()
        .find(|l| l.starts_with("Noise floor (A/A)"))
        .unwrap_or("")
}

/// A run of one start per cell on a calibrated host: the throughput
/// ranking is tested on the host's figure and says so. With a 1% host
/// noise the default-shaped run's neighbours 14% apart (rust-actix,
/// rust-axum) are told apart; its timed route's contestants, 0.1% apart,
/// are tied. Without a calibration nothing is tested.
#[test]
fn a_single_start_run_on_a_calibrated_host_is_tested_on_the_hosts_noise() {
    let db = common::temp_dir("findings-calibrated").join("shootout.db");
    // With the timed and wait_time routes.
    shootout_report_fixtures::default_like::write_default_like_run(&db, true).expect("run");
    let mut data = common::load(&db, 1);
    let plain = text(&findings(&shootout_report::Context::new(&data)));
    assert!(
        plain.contains("the order is not tested for ties"),
        "{plain}"
    );
    data.calibration = Some(shootout_store::Calibration {
        run_id: 7,
        started_at: "2026-11-29T07:00:00Z".into(),
        targets: vec!["go-nethttp".into()],
        starts: 6,
        // sd 1% of ln(req/s) over 5 df.
        var_log: 0.01f64.ln_1p().powi(2),
        df: 5.0,
    });
    let t = text(&findings(&shootout_report::Context::new(&data)));
    assert!(
        t.contains("tested on this host's calibrated noise instead (run #7"),
        "{t}"
    );
    assert!(t.contains("differed by 1.0%"), "{t}");
    let groups = shootout_report::group::groups(&data);
    let plaintext = groups
        .iter()
        .find(|g| g.scenario == "plaintext")
        .expect("plaintext");
    let ranked = shootout_report::ranking::rank(
        plaintext,
        shootout_report::ranking::Measure::Metric(shootout_report::metric::Metric::Rps),
    );
    let v = ranked[1].vs_above.expect("tested on the calibration");
    assert_eq!(v.test, shootout_report::stats::TestKind::Calibrated);
    assert_ne!(v.label, shootout_report::stats::Label::Tie, "{v:?}");
    let timed = groups
        .iter()
        .find(|g| g.scenario == "timed")
        .expect("timed");
    let ranked = shootout_report::ranking::rank(
        timed,
        shootout_report::ranking::Measure::Metric(shootout_report::metric::Metric::Rps),
    );
    assert!(ranked[1].tied_above(), "{:?}", ranked[1].vs_above);
}
