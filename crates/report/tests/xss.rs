//! A target named `<script>alert(1)</script>` must render as text in every
//! report, including the SVG text that plotters writes into the charts.

mod common;

use shootout_report_fixtures::{FixtureOptions, HOSTILE};

fn hostile_data() -> shootout_report::RunData {
    let opts = FixtureOptions {
        hostile_name: true,
        ..Default::default()
    };
    let (db, ids) = common::fixture_db("xss", &[opts]);
    common::load(&db, ids[0])
}

#[test]
fn html_shows_the_hostile_name_as_text() {
    let data = hostile_data();
    assert!(data.targets.iter().any(|t| t.target == HOSTILE));
    let page = without_our_script(&shootout_report::html(&data));
    assert!(
        !page.to_lowercase().contains("<script"),
        "raw script tag in the page"
    );
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // The charts name the target too, escaped by plotters' SVG backend.
    let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
    assert!(!svgs.is_empty());
    assert!(svgs
        .iter()
        .any(|s| s.contains("&lt;script&gt;alert(1)&lt;/script&gt;")));
}

#[test]
fn markdown_shows_the_hostile_name_as_text() {
    let md = shootout_report::markdown(&hostile_data());
    assert!(!md.contains("<script"));
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn csv_and_json_keep_the_name_as_data() {
    let data = hostile_data();
    let json: serde_json::Value =
        serde_json::from_str(&shootout_report::json(&data)).expect("json");
    let names: Vec<&str> = json["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter_map(|t| t["target"].as_str())
        .collect();
    assert!(names.contains(&HOSTILE));
    assert!(shootout_report::csv(&data).contains(HOSTILE));
}

/// The database's version and settings come from the PostgreSQL server;
/// they are data too, escaped in the header and the environment table.
#[test]
fn hostile_database_facts_render_as_text() {
    let opts = FixtureOptions {
        database: true,
        hostile_name: true,
        ..Default::default()
    };
    let (db, ids) = common::fixture_db("xss-db", &[opts]);
    let mut data = common::load(&db, ids[0]);
    let record = data.run.database.as_mut().expect("database run");
    record.version = HOSTILE.into();
    record.settings.insert(HOSTILE.into(), HOSTILE.into());
    let page = shootout_report::html(&data);
    let page = without_our_script(&page);
    assert!(!page.to_lowercase().contains("<script"), "raw script tag");
    assert!(page.contains("PostgreSQL &lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("Content-Security-Policy"));
    let md = shootout_report::markdown(&data);
    assert!(!md.contains("<script") && md.contains("&lt;script&gt;"));
}

/// The page less its one legitimate script (the table sorter, admitted by
/// the CSP's hash): what is left must hold no script tag at all.
fn without_our_script(page: &str) -> String {
    let ours = shootout_report::html::csp::script_element();
    assert_eq!(page.matches(&ours).count(), 1, "the sorting script");
    page.replace(&ours, "")
}

/// The results site: the hostile name is text on the index and on its own
/// page, whose file name is made safe.
#[test]
fn the_site_shows_the_hostile_name_as_text() {
    let data = hostile_data();
    let dir = common::temp_dir("xss-site");
    let pages = shootout_report::site::write(&[data], &dir, &Default::default()).expect("site");
    let page = shootout_report::site::target_page(HOSTILE);
    assert!(
        !page["targets/".len()..].contains(['<', '>', '/']),
        "{page}"
    );
    assert!(pages.contains(&dir.join(&page)), "{pages:?}");
    for p in [dir.join("index.html"), dir.join(&page)] {
        let html = without_our_script(&std::fs::read_to_string(&p).expect("page"));
        assert!(!html.to_lowercase().contains("<script"), "{}", p.display());
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{}",
            p.display()
        );
    }
}
