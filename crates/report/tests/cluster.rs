//! A run made on Kubernetes shows its cluster (the API server's version,
//! the nodes, where each target's servers ran) in Markdown, HTML and JSON,
//! the JSON valid under the committed schema; a local run's reports have
//! no trace of it (their snapshots are unchanged).

mod common;

use serde_json::Value;
use shootout_report_fixtures::cluster::{cluster_record, write_cluster_run, SERVER_NODE};
use shootout_report_fixtures::FixtureOptions;

fn cluster_run(tag: &str) -> shootout_report::RunData {
    let db = common::temp_dir(tag).join("shootout.db");
    let id = write_cluster_run(&db).expect("cluster fixture");
    common::load(&db, id)
}

#[test]
fn markdown_report_of_the_cluster_fixture_run() {
    let data = cluster_run("cluster-md");
    insta::assert_snapshot!(
        "cluster_fixture_md",
        common::scrub_times(&shootout_report::markdown(&data))
    );
}

#[test]
fn the_html_report_has_a_cluster_section() {
    let html = shootout_report::html(&cluster_run("cluster-html"));
    for needle in [
        "<section id=\"cluster\">\n<h2>Cluster</h2>",
        "Kubernetes v1.34.4 · context shootout-local · namespace shootout-run · 2 nodes",
        "<th>Node</th><th>Address</th><th>Roles</th><th>CPUs</th><th>CPU model</th>",
        "<tr><td>127.0.0.1</td><td>127.0.0.1</td><td>client</td><td>2</td><td>AMD-EPYC</td>\
         <td>v1.34.4</td><td>Debian GNU/Linux 12 (bookworm)</td><td>6.18.44-fc-v782</td>\
         <td>containerd://1.6.20</td></tr>",
        "<td>server</td><td>2</td><td>not reported</td>",
        "<tr><td>go-nethttp</td><td>127.0.0.2</td><td>repetitions 1–3</td></tr>",
        "<tr><td>rust-actix</td><td>127.0.0.2</td><td>repetitions 1–2</td></tr>",
        "<tr><td>rust-actix</td><td>127.0.0.1</td><td>json: repetition 3</td></tr>",
        "<tr><td>rust-actix</td><td>not recorded</td><td>plaintext: repetition 3</td></tr>",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // Beside the environment, before the versions.
    let at = |s: &str| html.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("id=\"environment\"") < at("id=\"cluster\""));
    assert!(at("id=\"cluster\"") < at("id=\"versions\""));
}

#[test]
fn the_json_report_carries_the_cluster_and_each_results_node() {
    let data = cluster_run("cluster-json");
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    assert_eq!(
        doc["run"]["cluster"],
        serde_json::to_value(cluster_record()).expect("record")
    );
    assert!(doc["run"]["cluster"]["nodes"][1]["cpu_model"].is_null());
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 12);
    let node_of = |target: &str, scenario: &str, rep: u64| {
        results
            .iter()
            .find(|r| r["target"] == target && r["scenario"] == scenario && r["repetition"] == rep)
            .map(|r| r["placement"].clone())
            .expect("a result")
    };
    assert_eq!(node_of("go-nethttp", "json", 1), SERVER_NODE);
    assert_eq!(node_of("rust-actix", "json", 2), "127.0.0.1");
    assert!(node_of("rust-actix", "plaintext", 2).is_null());
    // The schema checks what it describes.
    let mut bad = doc.clone();
    bad["run"]["cluster"]["nodes"][0]["cpus"] = Value::from("two");
    bad["results"][0]["placement"] = Value::from(2);
    assert_eq!(
        common::schema_errors(&bad).len(),
        2,
        "{:?}",
        common::schema_errors(&bad)
    );
}

/// A local run's reports say nothing of a cluster, in any format.
#[test]
fn a_local_run_has_no_cluster_anywhere() {
    let (db, ids) = common::fixture_db("cluster-local", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    assert!(data.run.cluster.is_none() && data.placements.is_empty());
    let json: Value = serde_json::from_str(&shootout_report::json(&data)).expect("JSON");
    assert!(json["run"].get("cluster").is_none());
    assert!(json["results"][0].get("placement").is_none());
    assert!(!shootout_report::markdown(&data).contains("## Cluster"));
    assert!(!shootout_report::html(&data).contains("id=\"cluster\""));
}
