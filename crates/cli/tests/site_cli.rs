//! `shootout site DIR` on a fixture history of twelve runs, rust-axum 25%
//! slower in runs 5 to 8 (report-fixtures' `write_twelve_runs`): the
//! index, a page per target and a page per run are written; the index
//! draws every scenario's ranking of the latest run, each target linking
//! to its page;
//! rust-axum's page draws change points at runs 5 and 9 and nowhere else,
//! and the other targets' pages none; every link resolves to a file of
//! the site and no page refers to anything on the network. An absent or
//! empty store and a folder that cannot be written are exit 2, named.

mod common;

use common::{shootout, stderr, Tmp};
use shootout_report_fixtures::{write_fixture_run, write_twelve_runs, FixtureOptions};
use std::path::{Path, PathBuf};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every value of `attr="…"` in `html`.
fn attrs<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let key = format!("{attr}=\"");
    html.match_indices(&key)
        .filter_map(|(i, _)| {
            let rest = &html[i + key.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

/// Every page of the site, recursively.
fn pages(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(pages(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_site_has_an_index_target_pages_and_run_pages_that_link_up() {
    let tmp = Tmp::new("site-cli");
    let db = tmp.0.join("shootout.db");
    write_twelve_runs(&db).expect("fixture runs");
    let dir = tmp.0.join("site");
    let out = shootout(&[
        "site",
        &dir.to_string_lossy(),
        "--db",
        &db.to_string_lossy(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    // The index, four targets (one failed to build) and twelve runs.
    assert!(
        err.contains(&format!("wrote 17 pages to {}", dir.display())),
        "{err}"
    );
    for id in 1..=12 {
        assert!(dir.join(format!("runs/{id}.html")).is_file(), "run {id}");
    }

    // The index: the latest run's ranking of each scenario, every
    // measured target in it linking to its page.
    let index = read(&dir.join("index.html"));
    let ids: Vec<&str> = attrs(&index, "id")
        .into_iter()
        .filter(|i| i.starts_with("glance-r12-"))
        .collect();
    assert_eq!(
        ids.len(),
        2,
        "a ranking per scenario (a sweep's last level): {ids:?}"
    );
    for slug in ["simple", "plaintext"] {
        let at = index
            .find(&format!("id=\"glance-r12-{slug}"))
            .unwrap_or_else(|| panic!("no ranking of {slug} in the index: {ids:?}"));
        let fig = &index[at..at + index[at..].find("</figure>").expect("figure end")];
        assert!(fig.contains("href=\"runs/12.html#s-"), "{fig}");
        for t in ["rust-axum", "rust-actix", "rust-rocket"] {
            assert!(
                fig.contains(&format!("href=\"targets/{t}.html\"")),
                "{slug}: {t}: {fig}"
            );
        }
    }
    // Results from the fixture's host are stale here (another host).
    assert!(
        index.contains("<p class=\"stale\">Stale: ")
            && index.contains("another host: fixture-host"),
        "stale results marked"
    );

    // rust-axum's page: change points at runs 5 and 9, drawn and said.
    let axum = read(&dir.join("targets/rust-axum.html"));
    let drawn: Vec<&str> = attrs(&axum, "data-run");
    assert!(!drawn.is_empty(), "no change point on rust-axum's page");
    assert!(
        drawn.iter().all(|r| *r == "5" || *r == "9")
            && drawn.contains(&"5")
            && drawn.contains(&"9"),
        "{drawn:?}"
    );
    assert!(
        axum.contains("<g class=\"change\" data-run=\"5\">"),
        "drawn on a chart"
    );
    assert!(axum.contains("▼ 0.80×") && axum.contains("nothing recorded changed"));
    assert!(axum.contains("<h2>Versions</h2>") && axum.contains("rustc 1.91.0"));
    for t in ["rust-actix", "rust-rocket"] {
        let page = read(&dir.join(format!("targets/{t}.html")));
        assert!(attrs(&page, "data-run").is_empty(), "{t}: a change point");
        assert!(page.contains("No change point in this series."), "{t}");
    }

    every_link_resolves_and_nothing_is_fetched(&dir);
}

/// Every link of every page resolves to a file of the site; nothing is
/// fetched from elsewhere.
fn every_link_resolves_and_nothing_is_fetched(dir: &Path) {
    let all = pages(dir);
    assert_eq!(all.len(), 17, "{all:?}");
    for page in &all {
        let html = read(page);
        let base = page.parent().expect("page's folder");
        for link in attrs(&html, "href").into_iter().chain(attrs(&html, "src")) {
            let file = link.split('#').next().unwrap_or("");
            if file.is_empty() {
                continue;
            }
            assert!(
                !file.contains("://") && base.join(file).is_file(),
                "{}: the link {link} does not resolve in the site",
                page.display()
            );
        }
        for net in ["http://", "https://", "//cdn", "@import"] {
            let refs = attrs(&html, "src")
                .into_iter()
                .chain(attrs(&html, "href"))
                .filter(|v| v.contains(net))
                .count();
            assert_eq!(refs, 0, "{}: refers to {net}", page.display());
            assert!(
                !html.contains(&format!("url({net}")) && !html.contains(&format!("url(\"{net}")),
                "{}: a style fetches {net}",
                page.display()
            );
        }
    }
}

#[test]
fn an_absent_or_empty_store_or_an_unwritable_folder_is_exit_2() {
    let tmp = Tmp::new("site-cli-errors");
    let dir = tmp.0.join("site");
    let d = dir.to_string_lossy().into_owned();

    let absent = tmp.0.join("absent.db");
    let out = shootout(&["site", &d, "--db", &absent.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("no results store at {}", absent.display())),
        "{}",
        stderr(&out)
    );

    let empty = tmp.0.join("empty.db");
    drop(shootout_store::Store::open(&empty).expect("empty store"));
    let out = shootout(&["site", &d, "--db", &empty.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!("no runs in {}", empty.display())),
        "{}",
        stderr(&out)
    );
    assert!(!dir.exists(), "nothing written for an empty store");

    let db = tmp.0.join("shootout.db");
    write_fixture_run(&db, &FixtureOptions::default()).expect("fixture run");
    let file = tmp.0.join("a-file");
    std::fs::write(&file, "not a folder").expect("file");
    let under_file = file.join("site");
    let out = shootout(&[
        "site",
        &under_file.to_string_lossy(),
        "--db",
        &db.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!(
            "cannot write the site to {}",
            under_file.display()
        )),
        "{}",
        stderr(&out)
    );
}
