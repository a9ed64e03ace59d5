//! `shootout history` and `compare` on a fixture history of twelve runs,
//! rust-axum 25% slower in runs 5 to 8: the series of a target shows the
//! change points where the slowdown began and ended and nowhere else,
//! with what changed ("nothing recorded changed" here: the fixture runs
//! differ in nothing they record), the default listing names them under
//! the runs, the JSON carries them, and `compare` refuses runs from two
//! hosts unless forced.

mod common;

use common::{shootout, stderr, stdout, Tmp};
use shootout_report_fixtures::{new_run, write_fixture_run, write_twelve_runs, FixtureOptions};
use shootout_store::{RunStatus, Store};
use std::path::Path;

fn db_arg(db: &Path) -> String {
    db.to_string_lossy().into_owned()
}

#[test]
fn a_series_shows_its_change_points_and_what_changed() {
    let tmp = Tmp::new("history-series");
    let db = tmp.0.join("shootout.db");
    write_twelve_runs(&db).expect("fixture runs");
    let d = db_arg(&db);
    let out = shootout(&[
        "history",
        "--db",
        &d,
        "--target",
        "rust-axum",
        "--scenario",
        "simple",
    ]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}{}", stderr(&out));
    assert!(text.starts_with("## rust-axum · simple"), "{text}");
    let marked: Vec<&str> = text.lines().filter(|l| l.contains('×')).collect();
    assert_eq!(marked.len(), 2, "{text}");
    assert!(
        marked[0].starts_with("| 5 ") && marked[0].contains("▼ 0.80×"),
        "{text}"
    );
    assert!(
        marked[1].starts_with("| 9 ") && marked[1].contains("▲ 1.2"),
        "{text}"
    );
    assert!(
        marked
            .iter()
            .all(|l| l.contains("nothing recorded changed")),
        "{text}"
    );

    // Unchanged targets: no change point in the whole listing.
    let out = shootout(&["history", "--db", &d]);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let points: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(
        !points.is_empty() && points.iter().all(|l| l.starts_with("- rust-axum")),
        "{text}"
    );
    assert!(text.contains("| 12 "), "the runs table: {text}");

    let out = shootout(&[
        "history",
        "--db",
        &d,
        "--target",
        "rust-axum",
        "--format",
        "json",
    ]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let series = json.as_array().expect("an array of series");
    assert!(!series.is_empty());
    for s in series {
        let runs: Vec<i64> = s["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["run"].as_i64().unwrap())
            .collect();
        assert_eq!(runs, [5, 9], "{s}");
    }

    let out = shootout(&["history", "--db", &d, "--target", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no series"), "{}", stderr(&out));
    let out = shootout(&["history", "--db", &d, "--max-age", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("'soon' is not an age"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compare_refuses_two_hosts_unless_forced() {
    let tmp = Tmp::new("history-hosts");
    let db = tmp.0.join("shootout.db");
    let scratch = tmp.0.join("scratch.db");
    write_fixture_run(&db, &FixtureOptions::default()).expect("run 1");
    let id = write_fixture_run(&scratch, &FixtureOptions::default()).expect("scratch");
    let data = Store::open(&scratch)
        .and_then(|s| s.load_run(id))
        .expect("load");
    let store = Store::open(&db).expect("store");
    let mut header = new_run();
    header.host.hostname = "another-box".into();
    let run = store.begin_run(&header).expect("begin");
    for t in &data.targets {
        store.record_target(run, t).expect("target");
    }
    for m in data.measurements {
        store.record_measurement(run, &m).expect("measurement");
    }
    store.finish_run(run, RunStatus::Complete).expect("finish");
    drop(store);
    let d = db_arg(&db);
    let out = shootout(&["compare", "1", "2", "--db", &d]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let why = stderr(&out);
    assert!(
        why.contains("different hosts") && why.contains("another-box") && why.contains("--force"),
        "{why}"
    );
    assert!(
        stdout(&out).is_empty(),
        "nothing compared: {}",
        stdout(&out)
    );
    let out = shootout(&["compare", "1", "2", "--db", &d, "--force"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("rust-axum"));
}

/// The history lists throughput, never latency: it reads each run's
/// figures without decoding its histograms (issue #49), so a run whose
/// histograms no longer decode is listed exactly as before.
#[test]
fn history_reads_no_histogram() {
    let tmp = Tmp::new("history-no-histogram");
    let db = tmp.0.join("shootout.db");
    write_twelve_runs(&db).expect("fixture runs");
    let d = db_arg(&db);
    let args = ["history", "--db", &d, "--target", "rust-axum"];
    let json = |out: &std::process::Output| {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        stdout(out)
    };
    let whole = json(&shootout(&[&args[..], &["--format", "json"]].concat()));
    let listing = json(&shootout(&["history", "--db", &d]));
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute("UPDATE measurements SET histogram = x'00'", [])
        .unwrap();
    let out = shootout(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(json(&out), whole);
    assert_eq!(json(&shootout(&["history", "--db", &d])), listing);
}
