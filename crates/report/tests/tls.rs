//! The reports of a run with TLS levels (the `tls`-shaped fixture: two
//! targets keeping 60% and 85% of their cleartext rate over TLS): tables
//! titled by protocol, the TLS-cost table in Markdown and HTML with its
//! ratios and intervals, the findings naming the largest and smallest
//! cost, handshake rows only where new connections shook hands, and the
//! protocol and handshakes in the CSV and in the JSON (checked against the
//! committed schema). A cleartext-only run keeps its titles and has none
//! of it.

mod common;

use serde_json::Value;
use shootout_report::RunData;
use shootout_report_fixtures::tls::write_tls_run;
use shootout_report_fixtures::FixtureOptions;

fn tls_run(tag: &str) -> RunData {
    let db = common::temp_dir(tag).join("shootout.db");
    let id = write_tls_run(&db).expect("tls fixture");
    common::load(&db, id)
}

/// The Markdown section under heading `title`, up to the next heading.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("no section {title} in\n{md}"));
    let rest = &md[start + 4..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn markdown_titles_by_protocol_and_shows_the_tls_cost() {
    let md = shootout_report::markdown(&tls_run("tls-md"));
    for title in [
        "plaintext · cleartext — level 1: c=64 3s",
        "plaintext · TLS 1.3 — level 2: c=64 3s tls",
        "plaintext · cleartext, new connections — level 3: c=16 3s",
        "plaintext · TLS 1.3, new connections, full handshakes — level 4: c=16 3s tls",
        "plaintext · TLS 1.3, new connections, resumed — level 5: c=16 3s tls resumed",
        "json · TLS 1.3 — level 2: c=64 3s tls",
    ] {
        assert!(md.contains(&format!("\n## {title}\n")), "{title}\n{md}");
    }
    let cost = section(&md, "TLS cost");
    assert!(
        cost.contains("| Scenario | Protocol | Load | Target |"),
        "{cost}"
    );
    let rows: Vec<&str> = cost
        .lines()
        .filter(|l| l.starts_with("| plaintext") || l.starts_with("| json"))
        .collect();
    assert_eq!(rows.len(), 8, "{cost}");
    assert!(
        rows[0].starts_with("| plaintext | TLS 1.3 | c=64 3s | go-nethttp |")
            && rows[0].contains("| 0.6"),
        "{}",
        rows[0]
    );
    // Three repetitions: every ratio has its interval (brackets escaped).
    assert!(
        rows.iter().all(|r| r.matches("× \\[").count() == 2),
        "{cost}"
    );
    let findings = section(&md, "Findings");
    assert!(
        findings.contains("largest for go-nethttp in plaintext · TLS 1.3")
            || findings.contains("largest for go-nethttp in json · TLS 1.3")
            || findings.contains("largest for go-nethttp in plaintext · TLS 1.3, new"),
        "{findings}"
    );
    assert!(findings.contains("smallest for rust-axum"), "{findings}");
}

#[test]
fn handshake_rows_are_shown_where_new_connections_shook_hands() {
    let md = shootout_report::markdown(&tls_run("tls-hs"));
    let full = section(
        &md,
        "plaintext · TLS 1.3, new connections, full handshakes — level 4: c=16 3s tls",
    );
    assert!(full.contains("| TLS handshakes |"), "{full}");
    assert!(full.contains("| TLS handshake p99 (ms) | 1.200"), "{full}");
    let resumed = section(
        &md,
        "plaintext · TLS 1.3, new connections, resumed — level 5: c=16 3s tls resumed",
    );
    let row = resumed
        .lines()
        .find(|l| l.starts_with("| TLS handshakes resumed |"))
        .unwrap_or_else(|| panic!("{resumed}"));
    assert!(!row.contains("| 0 |") && !row.contains("—"), "{row}");
    for keepalive in [
        "plaintext · TLS 1.3 — level 2: c=64 3s tls",
        "plaintext · cleartext, new connections — level 3: c=16 3s",
    ] {
        let s = section(&md, keepalive);
        assert!(!s.contains("TLS handshake"), "{keepalive}: {s}");
    }
}

#[test]
fn html_has_the_tls_cost_section_and_protocol_titles() {
    let html = shootout_report::html(&tls_run("tls-html"));
    let start = html
        .find("<section id=\"s-tls-cost\">")
        .expect("TLS cost section");
    let sec = &html[start..start + html[start..].find("</section>").expect("end")];
    assert_eq!(sec.matches("<tr><td>").count(), 8, "{sec}");
    assert!(
        sec.contains("<td>TLS 1.3, new connections, resumed</td>"),
        "{sec}"
    );
    assert!(html.contains("<h2>json · TLS 1.3 — level 2: c=64 3s tls</h2>"));
}

#[test]
fn csv_and_json_record_each_results_protocol_and_handshakes() {
    let data = tls_run("tls-csv");
    let csv = shootout_report::csv(&data);
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let at = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let (tls, hs, resumed) = (
        at("tls_version"),
        at("handshakes"),
        at("handshakes_resumed"),
    );
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let of = |label: &str| {
        rows.iter()
            .find(|r| r[4] == label && r[2] == "plaintext")
            .expect(label)
    };
    assert_eq!(of("c=64 3s")[tls], "");
    assert_eq!(of("c=64 3s tls")[tls], "1.3");
    assert_eq!(
        of("c=64 3s tls")[hs],
        "",
        "keep-alive: no handshake figures"
    );
    assert!(of("c=16 3s tls")[hs].parse::<u64>().expect("count") > 0);
    assert_eq!(of("c=16 3s tls")[resumed], "0");
    assert_eq!(
        of("c=16 3s tls resumed")[resumed],
        of("c=16 3s tls resumed")[hs]
    );

    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    let results = doc["results"].as_array().expect("results");
    let resumed = results
        .iter()
        .find(|r| r["level_label"] == "c=16 3s tls resumed")
        .expect("resumed result");
    assert_eq!(resumed["protocol"]["tls"], "1.3");
    assert!(resumed["handshakes"]["resumed"].as_u64() > Some(0));
    let clear = &results[0];
    assert_eq!(clear["protocol"]["tls"], Value::Null);
    assert!(clear.get("handshakes").is_none());
    let mut bad = doc.clone();
    bad["results"][0]["protocol"]["client_cert"] = Value::from("yes");
    assert!(
        !common::schema_errors(&bad).is_empty(),
        "the schema checks `protocol`"
    );
}

#[test]
fn a_cleartext_run_has_no_protocol_titles_or_tls_cost() {
    let (db, ids) = common::fixture_db("tls-none", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    let md = shootout_report::markdown(&data);
    assert!(
        !md.contains("TLS cost") && !md.contains(" · cleartext"),
        "{md}"
    );
    assert!(!shootout_report::csv(&data).contains("tls_version"));
}
