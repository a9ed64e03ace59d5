//! `shootout compare` as a framework's CI gates on it, on real stores
//! written through the store: cells pair by what they measured (never by a
//! level's position), a pair with nothing to test is "not tested" and
//! keeps `--fail-if-slower` from passing, cost points get verdicts, and
//! runs of different studies or runs not complete are named and refused
//! by a gate unless forced. Also `report RUN --trend` and `history` of a
//! failed run.

mod common;

use common::{shootout_db, temp_db};
use shootout_report_fixtures::{new_run, write_fixture_run, FixtureOptions, STUDY_TEXT};
use shootout_store::parts::{Cost, Derived, Parts};
use shootout_store::{Measurement, RunStatus, Store};
use std::path::Path;
use std::process::Output;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The fixture run of `seed` (rust-rocket slowed by `slow`), written again
/// as a new run of study `study` with its measurements passed through
/// `edit` (None drops one), finished as `status`; returns its id.
fn derived_run(
    db: &Path,
    seed: u64,
    slow: f64,
    study: &str,
    status: RunStatus,
    edit: impl Fn(Measurement) -> Option<Measurement>,
) -> i64 {
    let scratch = db.with_file_name(format!("scratch-{study}-{seed}-{slow}.db"));
    let _ = std::fs::remove_file(&scratch);
    let opts = FixtureOptions {
        seed,
        slow: (slow != 1.0).then(|| ("rust-rocket".to_string(), slow)),
        ..Default::default()
    };
    let id = write_fixture_run(&scratch, &opts).expect("fixture");
    let data = Store::open(&scratch)
        .and_then(|s| s.load_run(id))
        .expect("load");
    let store = Store::open(db).expect("store");
    let mut header = new_run();
    header.study = study.into();
    header.study_text = STUDY_TEXT.replace("name = \"rust-trio\"", &format!("name = \"{study}\""));
    let run = store.begin_run(&header).expect("begin");
    for t in &data.targets {
        store.record_target(run, t).expect("target");
    }
    for m in data.measurements {
        if let Some(m) = edit(m) {
            store.record_measurement(run, &m).expect("measurement");
        }
    }
    store.finish_run(run, status).expect("finish");
    run
}

/// One start of one second: the first second of repetition 0 alone.
fn one_second(mut m: Measurement) -> Option<Measurement> {
    if m.repetition != 0 {
        return None;
    }
    m.timeline.truncate(1);
    m.summary.duration_s = 1.0;
    Some(m)
}

#[test]
fn cells_pair_by_what_they_measured_and_other_studies_are_refused() {
    let db = temp_db("compare-studies");
    derived_run(&db, 1, 1.0, "r2", RunStatus::Complete, Some);
    // Study ov: simple at 32 connections (the fixture's are 100), the
    // rest as in r2.
    derived_run(&db, 2, 1.0, "ov", RunStatus::Complete, |mut m| {
        if m.scenario == "simple" {
            m.summary.connections = 32;
        }
        Some(m)
    });
    let out = shootout_db(&["compare", "1", "2"], &db);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("**Different studies.**"), "{stdout}");
    // simple differs in load: never a row, listed in each run alone.
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("| rust-") && l.contains("| simple")),
        "{stdout}"
    );
    assert!(stdout.contains("Only in A (run 1):"), "{stdout}");
    assert!(
        stdout.contains("- rust-axum on simple (n=10000 c=100): closed c=100"),
        "{stdout}"
    );
    assert!(
        stdout.contains("- rust-axum on simple (n=10000 c=100): closed c=32"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("| rust-")).count(),
        6,
        "plaintext's two levels of three targets: {stdout}"
    );
    let gate = shootout_db(&["compare", "1", "2", "--fail-if-slower", "5"], &db);
    let (_, stderr) = text(&gate);
    assert_eq!(gate.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("different studies (r2 and ov)"), "{stderr}");
    let forced = shootout_db(
        &["compare", "1", "2", "--fail-if-slower", "5", "--force"],
        &db,
    );
    assert_eq!(forced.status.code(), Some(0), "{}", text(&forced).1);

    // No cell in common: said, and a gate cannot pass on nothing.
    derived_run(&db, 3, 1.0, "other", RunStatus::Complete, |mut m| {
        m.summary.connections = 16;
        Some(m)
    });
    let (stdout, _) = text(&shootout_db(&["compare", "1", "3"], &db));
    assert!(stdout.contains("No cell (target, scenario, load and resources) is in both runs."));
    let none = shootout_db(
        &[
            "compare",
            "1",
            "3",
            "--fail-if-slower",
            "--force",
            "--allow-untested",
        ],
        &db,
    );
    let (_, stderr) = text(&none);
    assert_eq!(none.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nothing to gate on"), "{stderr}");
}

#[test]
fn a_pair_with_nothing_to_test_is_not_a_tie_and_keeps_the_gate_from_passing() {
    let db = temp_db("compare-untested");
    derived_run(&db, 1, 1.0, "rust-trio", RunStatus::Complete, one_second);
    // rust-rocket at half its throughput, one second each.
    derived_run(&db, 2, 2.0, "rust-trio", RunStatus::Complete, one_second);
    let out = shootout_db(&["compare", "1", "2", "--fail-if-slower", "5"], &db);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    let rocket: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| rust-rocket"))
        .collect();
    assert_eq!(rocket.len(), 3, "{stdout}");
    for l in &rocket {
        assert_eq!(
            l.split('|').nth(7).map(str::trim),
            Some("not tested"),
            "{l}"
        );
        assert!(!l.contains("tie"), "{l}");
    }
    assert!(stdout.contains("pair(s) not tested"), "{stdout}");
    assert!(
        stderr.lines().any(|l| l
            .starts_with("not tested: rust-rocket on simple (n=10000 c=100) throughput (4")
            && l.contains("% worse)")),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-untested"), "{stderr}");
    // Also with no percentage.
    let plain = shootout_db(&["compare", "1", "2", "--fail-if-slower"], &db);
    assert_eq!(plain.status.code(), Some(2));
    // Passing over them takes the flag, which says so.
    let allowed = shootout_db(
        &[
            "compare",
            "1",
            "2",
            "--fail-if-slower",
            "5",
            "--allow-untested",
        ],
        &db,
    );
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed).1);
    // Without a gate it is a report: exit 0.
    assert_eq!(
        shootout_db(&["compare", "1", "2"], &db).status.code(),
        Some(0)
    );
    // --allow-untested belongs to a gate (--force also lets runs of two
    // hosts be compared at all).
    assert_eq!(
        shootout_db(&["compare", "1", "2", "--allow-untested"], &db)
            .status
            .code(),
        Some(2)
    );
}

/// rust-axum's plaintext level 1 made a cost point at 1000 req/s costing
/// `us` µs per request (times 1 + 1% per repetition).
fn with_cost(us: f64) -> impl Fn(Measurement) -> Option<Measurement> {
    move |mut m| {
        if m.target == "rust-axum" && m.scenario == "plaintext" && m.level == 1 {
            m.parts = Parts {
                cost: Some(Cost {
                    offered_rps: 1000.0,
                    achieved_rps: 1000.0,
                    us_per_request: us * (1.0 + 0.01 * m.repetition as f64),
                    generator_share: 0.2,
                    invalid: None,
                    not_offered: false,
                }),
                derived: Some(Derived {
                    capacity_rps: 12000.0,
                    fraction: None,
                }),
                ..Parts::default()
            };
        }
        Some(m)
    }
}

#[test]
fn cost_points_get_verdicts_and_incomplete_runs_are_named() {
    let db = temp_db("compare-cost");
    derived_run(
        &db,
        1,
        1.0,
        "rust-trio",
        RunStatus::Complete,
        with_cost(50.0),
    );
    derived_run(
        &db,
        1,
        1.0,
        "rust-trio",
        RunStatus::Complete,
        with_cost(80.0),
    );
    let out = shootout_db(&["compare", "1", "2", "--fail-if-slower"], &db);
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("## Cost points"), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| rust-axum | plaintext | µs per request | 1000 req/s |"))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(row.ends_with("| slower |"), "{row}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("slower: rust-axum µs per request on plaintext at 1000 req/s by 60.0%"),
        "{stderr}"
    );

    // An interrupted run is named; a gate on it refuses unless forced.
    derived_run(&db, 2, 1.0, "rust-trio", RunStatus::Interrupted, Some);
    let out = shootout_db(&["compare", "1", "3", "--fail-if-slower", "5"], &db);
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("**Run 3 is interrupted, not complete**"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("run 3 is interrupted, not complete"),
        "{stderr}"
    );
}

#[test]
fn report_trend_of_a_run_is_its_study_and_history_names_a_failed_run() {
    let db = temp_db("compare-trend");
    derived_run(&db, 1, 1.0, "r2", RunStatus::Complete, Some);
    derived_run(&db, 2, 1.0, "ov", RunStatus::Failed, Some);
    let page = db.with_file_name("t.html");
    let out = shootout_db(
        &[
            "report",
            "1",
            "--trend",
            "-o",
            page.to_str().expect("utf-8"),
        ],
        &db,
    );
    assert!(out.status.success(), "{}", text(&out).1);
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(
        html.contains("r2 — trend over 1 run(s)"),
        "the run's study, not the latest's"
    );
    let both = shootout_db(&["report", "1", "--trend", "ov"], &db);
    assert_eq!(both.status.code(), Some(2));
    assert!(text(&both).1.contains("not both"), "{}", text(&both).1);
    let (history, _) = text(&shootout_db(&["history"], &db));
    let failed = history
        .lines()
        .find(|l| l.contains("| ov "))
        .unwrap_or_else(|| panic!("{history}"));
    assert!(failed.contains("built, run failed"), "{failed}");
}
