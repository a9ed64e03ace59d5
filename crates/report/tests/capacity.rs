//! The capacity sections of the reports, from the capacity fixture stored
//! through the real SQLite store and read back: the Markdown snapshot, the
//! HTML bars and curves, and the JSON against the committed schema.

mod common;

use serde_json::{json, Value};
use shootout_report_fixtures::capacity::write_capacity_run;

fn capacity_run(tag: &str) -> shootout_report::RunData {
    let db = common::temp_dir(tag).join("shootout.db");
    let id = write_capacity_run(&db).expect("capacity fixture");
    common::load(&db, id)
}

#[test]
fn markdown_has_a_capacity_table_and_curve_per_scenario() {
    let data = capacity_run("cap-md");
    let md = shootout_report::markdown(&data);
    insta::assert_snapshot!("capacity_fixture_md", common::scrub_times(&md));
    let plain = md
        .find("## plaintext — capacity under p99<=10ms, error\\_rate<=0.1%")
        .or_else(|| md.find("## plaintext — capacity under"))
        .expect("plaintext section");
    let section = &md[plain..];
    // Best first: actix (9200 median) before axum, django (none) last.
    let (actix, axum, django) = (
        section
            .find("| rust-actix | 9200 ±")
            .expect("actix row with a CI"),
        section.find("| rust-axum |").expect("axum"),
        section
            .find("| python-django | none | — | none |")
            .expect("django"),
    );
    assert!(actix < axum && axum < django, "{section}");
    // One pinned server CPU over 9.2k req/s: 0.109 CPUs per 1k req/s.
    let row = &section[actix
        ..section[actix..]
            .find('\n')
            .map_or(section.len(), |e| actix + e)];
    assert!(row.contains("| 0.109 |"), "{row}");
    assert!(section.contains("found, unstable"), "{section}");
    assert!(
        section.contains("| 25% | 50% | 75% | 90% | 100% |"),
        "{section}"
    );
}

#[test]
fn html_has_capacity_bars_and_latency_curves_with_the_slo() {
    let data = capacity_run("cap-html");
    let html = shootout_report::html(&data);
    for scenario in ["plaintext", "json"] {
        for kind in ["bars", "curves"] {
            let id = format!("id=\"chart-capacity-{scenario}-{kind}\"");
            assert!(html.contains(&id), "no {id}");
        }
    }
    let start = html.find("chart-capacity-plaintext-bars").expect("bars");
    let bars = &html[start..html[start..].find("</figure>").expect("end") + start];
    assert!(
        bars.contains("req/s meeting p99&lt;=10ms"),
        "SLO not on the bars"
    );
    let (a, b) = (
        bars.find(">rust-actix</span>").expect("actix bar"),
        bars.find(">rust-axum</span>").expect("axum bar"),
    );
    assert!(a < b, "bars are not sorted best first");
    assert!(
        !bars.contains(">python-django<"),
        "a target with no capacity has no bar"
    );
    let start = html
        .find("chart-capacity-plaintext-curves")
        .expect("curves");
    let curves = &html[start..html[start..].find("</figure>").expect("end") + start];
    assert!(curves.contains("SLO p99&lt;=10ms"), "no SLO line label");
    assert!(curves.contains("offered rate (req/s)"));
    assert!(curves.contains("rust-actix") && curves.contains("rust-axum"));
    // One script, the table sorter, admitted by its hash and nothing else.
    assert_eq!(html.matches("<script").count(), 1);
    assert!(html.contains("default-src 'none'"), "the CSP stays");
    assert!(html.contains("script-src 'sha256-"), "{}", &html[..600]);
}

#[test]
fn capacity_json_matches_the_committed_schema() {
    let data = capacity_run("cap-json");
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let cap = &doc["capacity"];
    assert_eq!(cap["searches"].as_array().map(Vec::len), Some(12));
    assert_eq!(cap["summary"].as_array().map(Vec::len), Some(6));
    // Scenarios in stored order (json, plaintext), targets best first.
    let best = &cap["summary"][3];
    assert_eq!(
        (&best["scenario"], &best["target"]),
        (&json!("plaintext"), &json!("rust-actix"))
    );
    assert_eq!(cap["summary"][5]["verdict"], "none");
    assert_eq!(best["capacity_rps"]["median"], 9200.0);
    assert!(best["capacity_rps"]["ci_low"].as_f64() < Some(9200.0));
    let search = cap["searches"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["target"] == "rust-actix"))
        .map(|s| &s["result"])
        .expect("an actix search");
    assert_eq!(search["slo"][0]["text"], "p99<=10ms");
    assert_eq!(search["curve"].as_array().map(Vec::len), Some(5));
    // A report without capacity searches has no `capacity` key.
    let plain: Value = serde_json::from_str(&shootout_report::json(&shootout_report::RunData {
        capacity: Vec::new(),
        ..data
    }))
    .expect("JSON");
    assert!(plain.get("capacity").is_none());
}

/// A mix's capacity (the `service` study's shape): targets ranked by
/// capacity, each kind's p99 at the capacity and at every step of the
/// curve, and the kind that broke the SLO first, in Markdown, HTML and JSON.
#[test]
fn a_mixs_capacity_shows_each_kind_and_which_broke_first() {
    let db = common::temp_dir("cap-mix").join("shootout.db");
    let id = shootout_report_fixtures::capacity::write_service_run(&db).expect("service fixture");
    let data = common::load(&db, id);
    let md = shootout_report::markdown(&data);
    insta::assert_snapshot!("service_fixture_md", common::scrub_times(&md));
    let section = &md[md
        .find("## service — capacity under")
        .expect("service section")..];
    assert!(
        section.contains("| Target | Capacity (req/s) | CPUs per 1k req/s | Verdict | db p99 (ms) | updates p99 (ms) | Broke first | SLO |"),
        "{section}"
    );
    // Ranked by capacity: actix, gin, django.
    let at = |t: &str| {
        section
            .find(&format!("| {t} |"))
            .unwrap_or_else(|| panic!("{t}: {section}"))
    };
    assert!(at("rust-actix") < at("go-gin") && at("go-gin") < at("python-django"));
    // gin's updates are 1.3x slower than the total and break first; actix's
    // are faster, so its db kind does.
    let row = |t: &str| {
        section[at(t)..]
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        row("go-gin").contains("| updates (p99"),
        "{}",
        row("go-gin")
    );
    assert!(
        row("rust-actix").contains("| db (p99"),
        "{}",
        row("rust-actix")
    );
    assert!(section.contains("Per-kind p99 (ms) at every step of the curve"));
    let html = shootout_report::html(&data);
    assert!(
        html.contains("<th>updates p99 (ms)</th>"),
        "no per-kind HTML table"
    );
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let gin = doc["capacity"]["summary"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["target"] == "go-gin"))
        .expect("gin's summary");
    assert_eq!(gin["broke_first"]["kind"], "updates");
    assert!(gin["p99_ms_by_kind"]["db"]
        .as_f64()
        .is_some_and(|v| v > 0.0));
}
