//! A deterministic run shaped like the `default` study, for the report's
//! size budget and the browser test: thirteen targets in five languages
//! (Rust to Python, so throughput spans more than 20× and the bars get a
//! log axis), plaintext, json, simple and file_read at 64 connections for
//! 3 s, one repetition. With `floors`, also the timed and wait_time routes,
//! whose charts show the latency above the route's floor.

use crate::{measurement, new_run, target_record, Rng};
use shootout_store::{RunStatus, Store, StoreError, TargetStatus};
use std::path::Path;

/// (target, language, framework, plaintext req/s).
pub const TARGETS: [(&str, &str, &str, f64); 13] = [
    ("rust-actix", "rust", "actix", 117_000.0),
    ("rust-axum", "rust", "axum", 102_000.0),
    ("rust-rocket", "rust", "rocket", 61_000.0),
    ("go-nethttp", "go", "net/http", 74_000.0),
    ("go-gin", "go", "gin", 66_000.0),
    ("node-fastify", "javascript", "fastify", 31_000.0),
    ("node-express", "javascript", "express", 12_500.0),
    ("java-spring", "java", "spring", 24_000.0),
    ("python-falcon", "python", "falcon", 6_800.0),
    ("python-fastapi-uvloop", "python", "fastapi", 5_900.0),
    ("python-fastapi", "python", "fastapi", 4_100.0),
    ("python-robyn", "python", "robyn", 9_300.0),
    ("python-django", "python", "django", 2_000.0),
];

fn study_text(floors: bool) -> String {
    let mut s = String::from(
        "name = \"default\"\ndescription = \"A synthetic run shaped like the default study.\"\n\
         source = \"a synthetic fixture\"\ntargets = \"all\"\nrepetitions = 1\n",
    );
    let mut scenarios = vec!["plaintext", "json", "simple", "file_read"];
    if floors {
        scenarios.extend(["timed", "wait_time"]);
    }
    for sc in scenarios {
        s.push_str(&format!(
            "\n[[scenario]]\nname = \"{sc}\"\nload = {{ mode = \"closed\", connections = 64, duration = \"3s\" }}\n"
        ));
    }
    s
}

/// Writes the default-shaped run into the database at `path`; its id.
pub fn write_default_like_run(path: &Path, floors: bool) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "default".into();
    header.study_text = study_text(floors);
    let id = store.begin_run(&header)?;
    let mut rng = Rng(4242);
    // (scenario, share of the plaintext rate, latency floor in ms)
    let mut plan = vec![
        ("plaintext", 1.0, 0.0),
        ("json", 0.9, 0.0),
        ("simple", 0.7, 0.0),
        ("file_read", 0.35, 0.0),
    ];
    if floors {
        plan.extend([("timed", 0.02, 20.0), ("wait_time", 0.0005, 1000.0)]);
    }
    for (name, language, framework, rps) in TARGETS {
        let mut t = target_record(name, framework, TargetStatus::Ok);
        t.language = language.into();
        store.record_target(id, &t)?;
        for &(scenario, share, floor) in &plan {
            // Slow routes are bound by their floor, not the framework.
            let r = if floor > 0.0 {
                64_000.0 / floor * (0.97 + 0.02 * rng.next())
            } else {
                rps * share * (1.0 + 0.01 * rng.noise())
            };
            let mut m = measurement(name, scenario, 0, "c=64 3s", 0, r, false, &mut rng);
            if floor > 0.0 {
                let extra = 100_000.0 / rps * (1.0 + 0.1 * rng.next());
                let l = &mut m.summary.latency_ms;
                l.p50 = floor + extra;
                l.p99 = floor + 6.0 * extra;
            }
            store.record_measurement(id, &m)?;
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}
