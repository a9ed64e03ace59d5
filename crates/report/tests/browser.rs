//! The browser test: headless Chromium (driven by `playwright-core` from
//! `tests/browser/check.mjs`) opens the HTML report of a fixture run and
//! checks there are no console errors, dialogs, network requests or script
//! elements, and that every chart is present and non-empty. Screenshots go
//! to `target/artifacts/`. Without Chromium, Node or the npm package, the
//! test prints a visible SKIP line and passes; set SHOOTOUT_REQUIRE_BROWSER=1
//! to make that a failure instead.

mod common;

use shootout_report::fixture::{FixtureOptions, HOSTILE};
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
    let dir = artifacts();
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).expect("write page");
    let png = dir.join(format!("{name}.png"));
    let mut cmd = Command::new("node");
    cmd.arg(browser_dir.join("check.mjs"))
        .arg(&page)
        .arg(&png)
        .arg(charts.to_string());
    if let Some(text) = must_show {
        cmd.arg(text);
    }
    let out = cmd.output().expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "browser check of {name} failed:\n{stdout}"
    );
    assert!(png.exists(), "no screenshot at {}", png.display());
    eprintln!("screenshot: {}", png.display());
}

#[test]
fn html_report_opens_cleanly_in_chromium() {
    let browser_dir = manifest_dir().join("tests/browser");
    if let Some(why) = missing_prerequisite(&browser_dir) {
        assert!(
            std::env::var_os("SHOOTOUT_REQUIRE_BROWSER").is_none(),
            "browser test required: {why}"
        );
        eprintln!("SKIP browser test: {why}");
        println!("SKIP browser test: {why}");
        return;
    }
    let plain = FixtureOptions::default();
    let hostile = FixtureOptions {
        hostile_name: true,
        ..Default::default()
    };
    let (db, ids) = common::fixture_db("browser", &[plain, hostile]);
    for (id, name, must_show) in [
        (ids[0], "report", None),
        (ids[1], "report-xss", Some(HOSTILE)),
    ] {
        let data = common::load(&db, id);
        let charts = 5 * shootout_report::group::groups(&data).len();
        check_page(
            &browser_dir,
            &shootout_report::html(&data),
            name,
            charts,
            must_show,
        );
    }
}
