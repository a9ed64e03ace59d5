//! The size budget: the HTML report of a run shaped like the default study
//! (thirteen targets, four routes) stays under 1 MB, so it opens fast and
//! can be mailed.

mod common;

#[test]
fn a_default_study_report_stays_under_one_megabyte() {
    let db = common::temp_dir("size").join("shootout.db");
    let id =
        shootout_report_fixtures::default_like::write_default_like_run(&db, false).expect("run");
    let html = shootout_report::html(&common::load(&db, id));
    eprintln!("report of a default-shaped run: {} bytes", html.len());
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
}
