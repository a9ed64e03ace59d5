//! Shared by the report tests: fixture databases in fresh temporary folders,
//! a scrubber for timestamps, and the JSON report's check against its
//! committed schema.
#![allow(dead_code)]

use shootout_report::RunData;
use shootout_report_fixtures::{write_fixture_run, FixtureOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty folder under the system temp dir.
pub fn temp_dir(tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::SeqCst);
    let dir =
        std::env::temp_dir().join(format!("shootout-report-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A database holding one fixture run per option set, and the run ids.
pub fn fixture_db(tag: &str, runs: &[FixtureOptions]) -> (PathBuf, Vec<i64>) {
    let db = temp_dir(tag).join("shootout.db");
    let ids = runs
        .iter()
        .map(|o| write_fixture_run(&db, o).expect("fixture run"))
        .collect();
    (db, ids)
}

/// Loads one run of a database.
pub fn load(db: &std::path::Path, id: i64) -> RunData {
    shootout_report::load(db, &id.to_string()).expect("load run")
}

/// Replaces RFC 3339 timestamps (`2026-01-02T03:04:05Z`) with a placeholder.
pub fn scrub_times(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if b.len() >= i + 20 && is_timestamp(&b[i..i + 20]) {
            out.push_str("[timestamp]");
            i += 20;
        } else {
            let c = s[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn is_timestamp(w: &[u8]) -> bool {
    let pattern = b"dddd-dd-ddTdd:dd:ddZ";
    w.iter().zip(pattern).all(|(c, p)| {
        if *p == b'd' {
            c.is_ascii_digit()
        } else {
            c == p
        }
    })
}

/// A database with five runs of the rust trio, the fourth with rust-axum
/// slowed by 1.3× (the trend page's fixture).
pub fn five_runs(tag: &str) -> PathBuf {
    let db = temp_dir(tag).join("shootout.db");
    for seed in 1..=5 {
        let opts = FixtureOptions {
            seed,
            slow: (seed == 4).then(|| ("rust-axum".to_string(), 1.3)),
            ..Default::default()
        };
        write_fixture_run(&db, &opts).expect("fixture run");
    }
    db
}

/// The committed JSON report schema.
const SCHEMA: &str = include_str!("../../../../docs/report.schema.json");

/// Where `doc` breaks docs/report.schema.json, each "error at path";
/// empty when it conforms.
pub fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema is valid");
    validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}
