//! `shootout history`, `report` and `compare` end to end: the binary reads a
//! fixture database written through the store and honours --db, --format,
//! -o and --fail-if-slower, with the documented exit codes.

mod common;

use common::{shootout_db, stdout, temp_db};
use shootout_report_fixtures::{write_fixture_run, FixtureOptions};
use std::path::PathBuf;
use std::process::Output;

fn two_runs(tag: &str, slow: Option<&str>) -> PathBuf {
    let db = temp_db(tag);
    write_fixture_run(
        &db,
        &FixtureOptions {
            seed: 1,
            ..Default::default()
        },
    )
    .expect("run 1");
    let b = FixtureOptions {
        seed: 2,
        slow: slow.map(|t| (t.to_string(), 1.25)),
        ..Default::default()
    };
    write_fixture_run(&db, &b).expect("run 2");
    db
}

#[test]
fn history_lists_runs_with_their_measurement_counts() {
    let db = two_runs("history", None);
    let out = shootout_db(&["history"], &db);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("measurements"), "{text}");
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("rust-trio") && l.contains("| 27 "))
            .count(),
        2,
        "{text}"
    );
}

#[test]
fn report_writes_every_format() {
    let db = two_runs("formats", None);
    let md = stdout(&shootout_db(&["report", "latest"], &db));
    assert!(md.starts_with("# rust-trio — run 2"), "{md}");
    let csv = stdout(&shootout_db(&["report", "1", "--format", "csv"], &db));
    assert_eq!(csv.lines().count(), 28);
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&shootout_db(&["report", "--format", "json"], &db)))
            .expect("json");
    assert_eq!(json["run"]["id"], 2);
    let file = db.with_file_name("out.html");
    let out = shootout_db(
        &[
            "report",
            "latest",
            "--format",
            "html",
            "-o",
            file.to_str().expect("utf-8"),
        ],
        &db,
    );
    assert!(out.status.success());
    assert!(std::fs::read_to_string(file)
        .expect("html")
        .contains("<figure class=\"chart "));
}

#[test]
fn unknown_runs_and_databases_are_usage_errors() {
    let db = two_runs("errors", None);
    assert_eq!(shootout_db(&["report", "99"], &db).status.code(), Some(2));
    let missing = db.with_file_name("missing.db");
    assert_eq!(shootout_db(&["history"], &missing).status.code(), Some(2));
    assert!(
        !missing.exists(),
        "a read-only command must not create a database"
    );
    assert_eq!(
        shootout_db(&["compare", "1", "2", "--fail-if-slower", "x"], &db)
            .status
            .code(),
        Some(2)
    );
    // A gate that can never fire, and a margin that would tie anything,
    // are refused rather than passing silently.
    for bad in [
        &["--fail-if-slower", "100"][..],
        &["--fail-if-slower", "1e3"],
        &["--margin", "0"],
        &["--margin", "60%"],
    ] {
        let mut args = vec!["compare", "1", "2"];
        args.extend_from_slice(bad);
        let out = shootout_db(&args, &db);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("could never fire") || err.contains("at most 50"),
            "{bad:?}: {err}"
        );
    }
    let ok = shootout_db(&["compare", "1", "2", "--margin", "3%"], &db);
    assert_eq!(ok.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&ok.stdout).contains("beyond the 3% margin"),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
}

/// Each bad input names what is wrong, once, and exits 2.
#[test]
fn bad_runs_databases_and_outputs_say_what_is_wrong() {
    let db = two_runs("bad-input", None);
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let out = shootout_db(&["report", "999"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no run matches '999'"),
        "{}",
        stderr(&out)
    );
    let out = shootout_db(&["report", "abc"], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no run matches 'abc'"),
        "{}",
        stderr(&out)
    );
    // A file under a regular file cannot be created, even by root.
    let blocked = db.join("report.md");
    let out = shootout_db(&["report", "-o", blocked.to_str().unwrap()], &db);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("report.md"), "{}", stderr(&out));
    let corrupt = db.with_file_name("corrupt.db");
    std::fs::write(&corrupt, "not a database").unwrap();
    let out = shootout_db(&["history"], &corrupt);
    assert_eq!(out.status.code(), Some(2));
    let msg = stderr(&out);
    assert_eq!(
        msg.matches("is not a shootout results store (not a SQLite file); left untouched")
            .count(),
        1,
        "{msg}"
    );
    assert_eq!(std::fs::read(&corrupt).unwrap(), b"not a database");
}

#[test]
fn compare_fails_only_when_a_target_got_slower() {
    let db = two_runs("slower", Some("rust-rocket"));
    let out = shootout_db(&["compare", "1", "2", "--fail-if-slower", "10"], &db);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("| rust-rocket") && l.contains("| slower |")),
        "{text}"
    );
    assert_eq!(
        shootout_db(&["compare", "1", "2", "--fail-if-slower", "30"], &db)
            .status
            .code(),
        Some(0)
    );
    let back = shootout_db(&["compare", "2", "1", "--fail-if-slower", "10"], &db);
    assert_eq!(back.status.code(), Some(0));
    assert!(stdout(&back).contains("| faster |"));
}

#[test]
fn compare_of_equal_runs_is_mostly_ties() {
    let db = two_runs("ties", None);
    let out = shootout_db(&["compare", "1", "latest", "--fail-if-slower", "5"], &db);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| rust-")).collect();
    assert_eq!(rows.len(), 9);
    // Columns: target, scenario, RPS A, RPS B, ΔRPS, RPS test, RPS label, ...
    let rps_label = |l: &&&str| l.split('|').nth(7).map(str::trim) == Some("tie (not significant)");
    let ties = rows.iter().filter(rps_label).count();
    assert!(ties >= 7, "{text}");
}

#[test]
fn report_trend_writes_one_page_of_every_run_and_compare_points_to_it() {
    let db = two_runs("trend", Some("rust-axum"));
    let out = shootout_db(&["report", "--trend", "rust-trio"], &db);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = shootout_report::reports_dir(&db).join("trend-rust-trio.html");
    let html = std::fs::read_to_string(&page).expect("trend page in the reports folder");
    assert!(html.contains("<th>run 1</th>") && html.contains("<th>run 2</th>"));
    assert!(
        html.contains("rust-axum on simple"),
        "the slower run is named"
    );
    // Without a study: the latest run's; -o chooses the file.
    let file = db.with_file_name("t.html");
    let out = shootout_db(
        &["report", "--trend", "-o", file.to_str().expect("utf-8")],
        &db,
    );
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&file)
        .expect("-o")
        .contains("rust-trio — trend over 2 run(s)"));
    let none = shootout_db(&["report", "--trend", "nope"], &db);
    assert!(!none.status.success(), "a study without runs is an error");
    let cmp = stdout(&shootout_db(&["compare", "1", "2"], &db));
    assert!(cmp.contains("`shootout report --trend rust-trio`"), "{cmp}");
    assert!(cmp.contains("trend-rust-trio.html"), "{cmp}");
}

/// `-o` into a folder that does not exist: one message naming the file and
/// the missing folder, the OS error said once, exit 2; for a run's report
/// and for the trend page alike.
#[test]
fn output_into_a_missing_folder_is_one_clear_message() {
    let db = two_runs("missing-folder", None);
    let file = db.with_file_name("no-such-folder").join("page.html");
    let path = file.to_str().expect("utf-8");
    for args in [
        &["report", "--trend", "-o", path][..],
        &["report", "latest", "--format", "html", "-o", path][..],
    ] {
        let out = shootout_db(args, &db);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line\n{err}");
        assert!(err.contains(path), "{args:?}: names the file\n{err}");
        assert!(
            err.contains("the folder") && err.contains("does not exist"),
            "{args:?}: says why\n{err}"
        );
        assert!(err.matches("os error").count() <= 1, "{args:?}: {err}");
    }
}
