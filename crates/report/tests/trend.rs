//! The trend page of a fixture database with five runs of the rust trio,
//! the fourth with rust-axum 30% slower: the slowdown is found by the
//! compare test and named, every run is dated with its version and commit,
//! and the page is snapshot-tested (the browser test opens it too).

mod common;

use common::five_runs;

#[test]
fn the_trend_of_five_runs_names_the_slower_one() {
    let db = five_runs("trend");
    let (study, runs) = shootout_report::trend::load(&db, None).expect("load");
    assert_eq!((study.as_str(), runs.len()), ("rust-trio", 5));
    let t = shootout_report::trend::trend(&study, &runs);
    let regressions = t.regressions();
    assert!(!regressions.is_empty(), "no regression found");
    assert!(
        regressions
            .iter()
            .all(|r| r.starts_with("rust-axum on ") && r.contains("run 4 is")),
        "{regressions:?}"
    );
    let (path, n) = shootout_report::write_trend(&db, Some("rust-trio"), None).expect("write");
    assert_eq!(n, 5);
    assert_eq!(
        path,
        shootout_report::reports_dir(&db).join("trend-rust-trio.html")
    );
    let html = std::fs::read_to_string(&path).expect("page");
    for id in 1..=5 {
        assert!(html.contains(&format!("<th>run {id}</th>")), "run {id}");
    }
    assert!(html.contains("abc1234"), "the commit of each run");
    assert_eq!(html.matches("class=\"slower\"").count(), regressions.len());
    // The page's body: the style sheet and the sorting script are the
    // report's, tested with it.
    let body = html.split_once("<body>").expect("body").1;
    let body = body.replace(&shootout_report::html::csp::script_element(), "");
    insta::assert_snapshot!("trend_five_runs", common::scrub_times(&body));
}

#[test]
fn an_unknown_study_has_no_trend() {
    let db = five_runs("trend-none");
    let (_, runs) = shootout_report::trend::load(&db, Some("nope")).expect("load");
    assert!(runs.is_empty());
}
