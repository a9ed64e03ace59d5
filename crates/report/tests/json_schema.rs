//! The JSON report is checked against the committed `docs/report.schema.json`
//! with the `jsonschema` crate (a dev-only dependency, without its HTTP
//! resolver), the same validator the `load` schema test uses.

mod common;

use serde_json::Value;
use shootout_report_fixtures::FixtureOptions;

use common::schema_errors as errors_of;

fn fixture_json() -> Value {
    let (db, ids) = common::fixture_db("json", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON")
}

#[test]
fn json_report_matches_the_committed_schema() {
    let doc = fixture_json();
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["results"].as_array().map(Vec::len), Some(27));
    assert_eq!(doc["summary"].as_array().map(Vec::len), Some(9));
    let s = &doc["summary"][0]["rps"];
    let (lo, med, hi) = (
        s["ci_low"].as_f64(),
        s["median"].as_f64(),
        s["ci_high"].as_f64(),
    );
    assert!(lo < med && med < hi, "{s}");
}

#[test]
fn database_json_report_matches_the_committed_schema() {
    let opts = FixtureOptions {
        database: true,
        ..FixtureOptions::default()
    };
    let (db, ids) = common::fixture_db("json-db", &[opts]);
    let data = common::load(&db, ids[0]);
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON");
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["run"]["database"]["pool_size"], 16);
    assert_eq!(
        doc["run"]["database"]["settings"]["synchronous_commit"],
        "off"
    );
    let r = &doc["results"][0];
    let (server, db_cpu) = (r["server_cpu_s"].as_f64(), r["db_cpu_s"].as_f64());
    let total = r["req_per_total_cpu_s"].as_f64().expect("total");
    assert!(db_cpu.is_some_and(|d| d > 0.0) && r["db_rss_peak_mib"].as_f64().is_some());
    assert!(
        total < r["req_per_cpu_s"].as_f64().expect("rpc"),
        "{r} {server:?}"
    );
}

#[test]
fn the_validator_rejects_a_broken_report() {
    let mut doc = fixture_json();
    doc["results"][0]["rps"] = Value::String("fast".into());
    doc["run"].as_object_mut().expect("run").remove("study");
    doc["summary"][0]["extra"] = Value::Bool(true);
    let errors = errors_of(&doc);
    assert_eq!(errors.len(), 3, "{errors:?}");
}

#[test]
fn auto_warm_up_json_report_matches_the_committed_schema() {
    let opts = FixtureOptions {
        auto_warmup: true,
        ..FixtureOptions::default()
    };
    let (db, ids) = common::fixture_db("json-warmup", &[opts]);
    let data = common::load(&db, ids[0]);
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON");
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["results"][0]["steady"], true);
    let mut bad = doc.clone();
    bad["results"][0]["steady"] = Value::from("maybe");
    assert!(!errors_of(&bad).is_empty(), "the schema checks `steady`");
}

#[test]
fn a_levels_parts_match_the_committed_schema() {
    use shootout_store::parts::{Cost, Derived, Hold, Overload, Parts, Standing};
    let (db, ids) = common::fixture_db("json-parts", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    data.measurements[0].parts = Parts {
        cost: Some(Cost {
            offered_rps: 500.0,
            achieved_rps: 328.0,
            us_per_request: 700.0,
            generator_share: 0.3,
            invalid: Some("carried 328 of the 500 req/s offered".into()),
            not_offered: false,
        }),
        standing: Some(Standing {
            seconds: 10.0,
            cpu_s: 0.01,
            rss_mib: 150.0,
        }),
        overload: Some(Overload {
            factor: 2.0,
            capacity_rps: 171.0,
            deadline_ms: 100.0,
            overload_s: 2.0,
            recover_s: 10.0,
            offered_rps: 342.0,
            throughput_rps: 172.0,
            goodput_rps: 15.0,
            errors: shootout_engine::ErrorCounts::default(),
            unsent: 0,
            recovery_s: None,
            seconds: Vec::new(),
        }),
        derived: Some(Derived {
            capacity_rps: 171.0,
            fraction: Some(2.0),
        }),
        hold: Some(Hold {
            connections: 1000,
            seconds: 10.0,
            rss_idle_mib: 10.0,
            rss_held_mib: 30.0,
            cpu_s: 0.05,
            kib_per_connection: Hold::kib_per(10.0, 30.0, 1000),
        }),
    };
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON");
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["results"][0]["parts"]["cost"]["us_per_request"], 700.0);
    assert!(
        doc["results"][1].get("parts").is_none(),
        "only where a probe added one"
    );
}

/// A random order's seed is `run.order_seed`, valid under the schema.
#[test]
fn a_random_order_seed_matches_the_committed_schema() {
    let (db, ids) = common::fixture_db("json-seed", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    data.run.order_seed = Some(u64::MAX);
    let doc: Value = serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON");
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["run"]["order_seed"], u64::MAX);
}

/// Every result names its target's framework and runtime versions; a
/// target never built says why it has none; a version that is null
/// without its reason is refused by the schema.
#[test]
fn every_result_names_its_framework_and_runtime_versions() {
    let mut doc = fixture_json();
    for r in doc["results"].as_array().expect("results") {
        let p = &r["provenance"];
        assert_eq!(p["packages"][0]["version"], "1.2.3", "{r}");
        assert_eq!(p["runtime"]["version"], "rustc 1.91.0", "{r}");
        assert!(p["packages"][1]["version"].is_null());
        assert!(p["packages"][1]["not_recorded"]
            .as_str()
            .is_some_and(|s| s.starts_with("not recorded: targets/Cargo.lock has no")));
    }
    let failed = doc["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .find(|t| t["status"] == "build_failed")
        .expect("a failed target");
    assert_eq!(
        failed["provenance"]["not_recorded"],
        "not recorded: not built (build_failed)"
    );
    doc["results"][0]["provenance"]["runtime"]
        .as_object_mut()
        .expect("runtime")
        .remove("not_recorded");
    doc["results"][0]["provenance"]["runtime"]["version"] = Value::Null;
    let errors = errors_of(&doc);
    assert_eq!(errors.len(), 1, "{errors:?}");
}
