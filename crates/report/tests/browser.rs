//! The browser test: headless Chromium (driven by `playwright-core` from
//! `tests/browser/check.mjs`) opens HTML reports of fixture runs (the rust
//! trio, a hostile target name, a default-study-shaped run of thirteen
//! targets with the timed and wait_time routes), the trend page and the
//! results site's index, a target page and a run page, at 1400 and 390 px,
//! and fails on console errors, dialogs, network requests, overlapping text
//! in a chart, sideways scrolling, a bar without a tooltip, a table that
//! does not sort or a target that does not hide. Screenshots of the first
//! screen (`NAME-1400.png` at 1400 x 900, `NAME-390.png` at 390 x 844) go
//! to `target/artifacts/`; with `SHOOTOUT_SCREENSHOT_DB=PATH` the latest
//! run of that database is checked too, with whole pages
//! (`report-real-full-*.png`) and the README's picture
//! (`report-real-top.png`). Without Chromium, Node or the npm package, the
//! test is counted as skipped (shootout-testkit), and fails under
//! `CI=true`.

mod common;

use shootout_report_fixtures::{FixtureOptions, HOSTILE};
use std::path::{Path, PathBuf};
use std::process::Command;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../target"));
    let dir = target.join("artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

/// Why the browser test cannot run here, if it cannot.
fn missing_prerequisite(browser_dir: &Path) -> Option<String> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).exists() {
        return Some(format!(
            "no Chromium at {chromium} (apt-get install -y chromium chromium-driver)"
        ));
    }
    if Command::new("node").arg("--version").output().is_err() {
        return Some("no node on PATH".into());
    }
    if !browser_dir.join("node_modules/playwright-core").exists() {
        return Some(format!(
            "playwright-core is not installed (npm ci --prefix {})",
            browser_dir.display()
        ));
    }
    None
}

fn check_page(browser_dir: &Path, html: &str, name: &str, charts: usize, must_show: Option<&str>) {
    check_page_with(browser_dir, html, name, charts, must_show, false)
}

fn check_page_with(
    browser_dir: &Path,
    html: &str,
    name: &str,
    charts: usize,
    must_show: Option<&str>,
    full_page: bool,
) {
    let page = artifacts().join(format!("{name}.html"));
    std::fs::write(&page, html).expect("write page");
    check_file(browser_dir, &page, name, charts, must_show, full_page);
}

/// Checks the page at `page`; screenshots `NAME-WIDTH.png` in the artifacts.
fn check_file(
    browser_dir: &Path,
    page: &Path,
    name: &str,
    charts: usize,
    must_show: Option<&str>,
    full_page: bool,
) {
    let dir = artifacts();
    let prefix = dir.join(name);
    let mut cmd = Command::new("node");
    cmd.arg(browser_dir.join("check.mjs"))
        .arg(page)
        .arg(&prefix)
        .arg(charts.to_string());
    if let Some(text) = must_show {
        cmd.arg(text);
    }
    if full_page {
        cmd.env("SHOOTOUT_FULL_PAGE", "1");
    }
    let out = cmd.output().expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "browser check of {name} failed:\n{stdout}"
    );
    for width in [1400, 390] {
        let png = dir.join(format!("{name}-{width}.png"));
        assert!(png.exists(), "no screenshot at {}", png.display());
        eprintln!("screenshot: {}", png.display());
    }
}

/// The charts a report of `data` must show: per scenario × level six
/// (throughput, efficiency, per MiB, memory, latency spectrum, timeline),
/// two more (p50 and p99 overhead) on routes with a floor, one more (CPU
/// beside the database's) on database routes, two per capacity scenario.
fn expected_charts(data: &shootout_report::RunData) -> usize {
    let groups = shootout_report::group::groups(data);
    let floors = groups
        .iter()
        .filter(|g| matches!(g.scenario, "timed" | "wait_time"))
        .count();
    let db = groups
        .iter()
        .filter(|g| {
            g.metrics()
                .contains(&shootout_report::metric::Metric::DbCpuS)
        })
        .count();
    6 * groups.len() + 2 * floors + db + 2 * shootout_report::capacity::sections(data).len()
}

fn skip_without_browser() -> Option<PathBuf> {
    let browser_dir = manifest_dir().join("tests/browser");
    if let Some(why) = missing_prerequisite(&browser_dir) {
        shootout_testkit::missing(why);
        return None;
    }
    Some(browser_dir)
}

/// The three report pages of one fixture database, each its own test so
/// that nextest runs them side by side.
fn check_report(page: usize) {
    let Some(browser_dir) = skip_without_browser() else {
        return;
    };
    let plain = FixtureOptions::default();
    let hostile = FixtureOptions {
        hostile_name: true,
        ..Default::default()
    };
    let name = ["report", "report-xss", "report-default"][page];
    let (db, ids) = common::fixture_db(&format!("browser-{name}"), &[plain, hostile]);
    shootout_report_fixtures::default_like::write_default_like_run(&db, true).expect("default run");
    let (id, must_show) = [(ids[0], None), (ids[1], Some(HOSTILE)), (3, None)][page];
    let data = common::load(&db, id);
    check_page(
        &browser_dir,
        &shootout_report::html(&data),
        name,
        expected_charts(&data),
        must_show,
    );
}

#[test]
fn the_rust_trio_report_opens_cleanly_in_chromium() {
    check_report(0);
}

#[test]
fn a_hostile_target_name_stays_text_in_chromium() {
    check_report(1);
}

#[test]
fn a_default_study_report_opens_cleanly_in_chromium() {
    check_report(2);
}

/// The WebSocket run (issue #48): six charts per echo level, four for the
/// hold (memory per idle connection, RSS, handshake latency, timeline),
/// one cost chart of the open-loop echo.
#[test]
fn a_websocket_report_opens_cleanly_in_chromium() {
    let Some(browser_dir) = skip_without_browser() else {
        return;
    };
    let db = common::temp_dir("browser-ws").join("shootout.db");
    let id = shootout_report_fixtures::ws::write_ws_run(&db).expect("ws run");
    let data = common::load(&db, id);
    check_page(
        &browser_dir,
        &shootout_report::html(&data),
        "report-ws",
        6 + 6 + 4 + 1,
        None,
    );
}

#[test]
fn trend_pages_open_cleanly_in_chromium() {
    let Some(browser_dir) = skip_without_browser() else {
        return;
    };
    // The trend page of five runs, one slower.
    let trend_db = common::five_runs("browser-trend");
    let (study, runs) = shootout_report::trend::load(&trend_db, None).expect("trend");
    let t = shootout_report::trend::trend(&study, &runs);
    check_page(
        &browser_dir,
        &shootout_report::html::trend::render(&t),
        "trend",
        t.scenarios.len(),
        Some("run 4 is"),
    );
    // And of two default-shaped runs: thirteen targets in its legends.
    let wide = common::temp_dir("browser-trend-wide").join("shootout.db");
    for _ in 0..2 {
        shootout_report_fixtures::default_like::write_default_like_run(&wide, false).expect("run");
    }
    let (study, runs) = shootout_report::trend::load(&wide, None).expect("trend");
    let t = shootout_report::trend::trend(&study, &runs);
    check_page(
        &browser_dir,
        &shootout_report::html::trend::render(&t),
        "trend-default",
        t.scenarios.len(),
        None,
    );
}

/// The results site of twelve runs, rust-axum 25% slower in runs 5 to 8:
/// its index (every scenario's ranking, linked), rust-axum's page (its
/// series with the change points drawn) and the newest run's page, written where `shootout site`
/// writes them and opened from there, as a visitor would.
#[test]
fn the_results_site_opens_cleanly_in_chromium() {
    let Some(browser_dir) = skip_without_browser() else {
        return;
    };
    let db = common::temp_dir("browser-site").join("shootout.db");
    shootout_report_fixtures::write_twelve_runs(&db).expect("fixture runs");
    let store = shootout_store::Store::open_existing(&db).expect("store");
    let runs = shootout_report::site::load(&store).expect("runs");
    let dir = artifacts().join("site");
    let _ = std::fs::remove_dir_all(&dir);
    shootout_report::site::write(&runs, &dir, &Default::default()).expect("site");
    check_file(
        &browser_dir,
        &dir.join("index.html"),
        "site-index",
        0,
        Some("rust-axum"),
        false,
    );
    let query = shootout_report::changes::Query {
        target: Some("rust-axum".into()),
        ..Default::default()
    };
    let series = shootout_report::changes::history(&runs, &query).len();
    check_file(
        &browser_dir,
        &dir.join(shootout_report::site::target_page("rust-axum")),
        "site-target",
        series,
        Some("nothing recorded changed"),
        false,
    );
    // The newest run's page, which the index's ranking links to: the
    // run's whole report, opened from the site's folder.
    let latest = runs.iter().max_by_key(|r| r.run.id).expect("a run");
    let page = shootout_report::site::run_page(latest.run.id);
    let index = std::fs::read_to_string(dir.join("index.html")).expect("index");
    assert!(
        index.contains(&format!("href=\"{page}\"")),
        "the index links to {page}"
    );
    check_file(
        &browser_dir,
        &dir.join(&page),
        "site-run",
        expected_charts(latest),
        None,
        false,
    );
}

/// With `SHOOTOUT_SCREENSHOT_DB=PATH`, the latest run of that database,
/// with whole-page screenshots and the README's picture.
#[test]
fn a_real_database_report_opens_cleanly_in_chromium() {
    let Some(real) = std::env::var_os("SHOOTOUT_SCREENSHOT_DB").map(PathBuf::from) else {
        return;
    };
    let Some(browser_dir) = skip_without_browser() else {
        return;
    };
    let data = shootout_report::load(&real, "latest").expect("the screenshot database");
    check_page_with(
        &browser_dir,
        &shootout_report::html(&data),
        "report-real",
        expected_charts(&data),
        None,
        true,
    );
}
