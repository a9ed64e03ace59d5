//! Budgets in reports: a run whose measurements ran under `resources`
//! shows the quota, the limit, the throttled time and the efficiency per
//! budget in its tables, says why in a note, writes every result's budget
//! fields in JSON valid against the committed schema, and lists a target
//! killed for memory as failed with its reason.

#![allow(clippy::unwrap_used)] // test setup: a failed step should panic

mod common;

use serde_json::Value;
use shootout_report::RunData;
use shootout_report_fixtures::FixtureOptions;
use shootout_store::TargetStatus;

fn budgeted() -> RunData {
    let (db, ids) = common::fixture_db("budget", &[FixtureOptions::default()]);
    let mut data = common::load(&db, ids[0]);
    for m in &mut data.measurements {
        m.resources_cpus = Some(0.5);
        m.resources_memory_mib = Some(512.0);
        m.throttled_s = Some(1.5);
        m.throttled_periods = Some(42);
        m.oom_killed = Some(0);
        m.memory_peak_mib = Some(64.0);
    }
    let t = &mut data.targets[0];
    t.status = TargetStatus::Failed;
    t.reason = Some("killed: out of memory (limit 512 MiB)".into());
    data
}

#[test]
fn markdown_shows_the_budget_and_throttling_beside_p99() {
    let md = shootout_report::markdown(&budgeted());
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    let at = |label: &str| {
        rows.iter()
            .position(|l| l.starts_with(&format!("| {label} |")))
    };
    let p99 = at("p99 latency (ms)").expect("p99 row");
    assert_eq!(at("Throttled by the CPU quota (s)"), Some(p99 + 1), "{md}");
    assert!(at("CPU quota (CPUs)").is_some(), "{md}");
    assert!(at("Req per CPU-s of quota").is_some(), "{md}");
    assert!(at("RPS per GiB of limit (req/s per GiB)").is_some(), "{md}");
    assert!(md.contains("CPU quotas throttled the servers"), "{md}");
    assert!(
        md.contains("failed — killed: out of memory (limit 512 MiB)"),
        "{md}"
    );
    let html = shootout_report::html(&budgeted());
    assert!(html.contains("CPU quota (CPUs)") && html.contains("CPU quotas throttled"));
}

#[test]
fn without_budgets_the_rows_stay_out() {
    let (db, ids) = common::fixture_db("no-budget", &[FixtureOptions::default()]);
    let md = shootout_report::markdown(&common::load(&db, ids[0]));
    assert!(
        !md.contains("CPU quota") && !md.contains("Throttled"),
        "{md}"
    );
}

#[test]
fn csv_appends_the_budget_columns_only_to_budgeted_runs() {
    let csv = shootout_report::csv(&budgeted());
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.len(), row.len(), "{csv}");
    let cell = |name: &str| {
        let i = header.iter().position(|h| *h == name);
        row[i.unwrap_or_else(|| panic!("no {name} column: {csv}"))]
    };
    assert_eq!(cell("cpu_quota"), "0.5");
    assert_eq!(cell("memory_limit_mib"), "512");
    assert_eq!(cell("throttled_s"), "1.5");
    assert_eq!(cell("throttled_periods"), "42");
    assert_eq!(cell("oom_killed"), "0");
    let rps: f64 = cell("rps").parse().unwrap();
    let per_quota: f64 = cell("req_per_quota_cpu_s").parse().unwrap();
    assert!((per_quota - rps / 0.5).abs() < 1e-3 * rps, "{csv}");
    let (db, ids) = common::fixture_db("no-budget-csv", &[FixtureOptions::default()]);
    let plain = shootout_report::csv(&common::load(&db, ids[0]));
    assert!(
        !plain.lines().next().unwrap().contains("cpu_quota"),
        "{plain}"
    );
}

#[test]
fn json_carries_each_results_budget_and_counters() {
    let doc: Value = serde_json::from_str(&shootout_report::json(&budgeted())).unwrap();
    assert_eq!(common::schema_errors(&doc), Vec::<String>::new());
    assert_eq!(doc["schema"], "shootout-report/4");
    let r = &doc["results"][0];
    assert_eq!(r["resources"]["cpus"], 0.5);
    assert_eq!(r["resources"]["memory_mib"], 512.0);
    assert_eq!(
        (r["throttled_s"].as_f64(), r["throttled_periods"].as_u64()),
        (Some(1.5), Some(42))
    );
    assert_eq!(r["oom_killed"], 0);
    assert_eq!(doc["targets"][0]["status"], "failed");
    // Unset budgets are null, not missing.
    let (db, ids) = common::fixture_db("json-unset", &[FixtureOptions::default()]);
    let plain: Value =
        serde_json::from_str(&shootout_report::json(&common::load(&db, ids[0]))).unwrap();
    let r = &plain["results"][0];
    assert!(
        r["resources"]["cpus"].is_null() && r["throttled_s"].is_null(),
        "{r}"
    );
    assert_eq!(common::schema_errors(&plain), Vec::<String>::new());
}
