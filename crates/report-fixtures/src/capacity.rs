//! A deterministic capacity run for tests and snapshots: the `capacity`
//! study's shape (plaintext and json under `p99<=10ms, error_rate<=0.1%`)
//! with two repetitions, three targets (one of which meets the SLO at no
//! rate, one unstable once), every level and the curve drawn from a simple
//! latency model (p99 reaches 10 ms at the capacity).

use crate::{new_run, target_record};
use shootout_capacity::{
    CapacityResult, KindRecord, LevelRecord, LevelVerdict, Phase, SearchRecord, Verdict,
};
use shootout_engine::{ErrorCounts, LatencySummary, Threshold};
use shootout_store::{CapacitySearch, RunStatus, Store, StoreError, TargetStatus};
use std::path::Path;

/// The study text of the capacity fixture.
pub const CAPACITY_STUDY_TEXT: &str = r#"name = "capacity"
description = "A synthetic capacity fixture."
source = "a synthetic fixture"
targets = ["rust-actix", "rust-axum", "python-django"]
repetitions = 2

[[scenario]]
name = "plaintext"
capacity = { slo = ["p99<=10ms", "error_rate<=0.1%"], step = "1s", warmup = "0.5s", precision = "5%" }

[[scenario]]
name = "json"
capacity = { slo = ["p99<=10ms", "error_rate<=0.1%"], step = "1s", warmup = "0.5s", precision = "5%" }
"#;

/// (target, capacity per repetition of plaintext; None: no rate met the SLO).
const TARGETS: [(&str, [Option<f64>; 2]); 3] = [
    ("rust-actix", [Some(9000.0), Some(9400.0)]),
    ("rust-axum", [Some(8000.0), Some(8200.0)]),
    ("python-django", [None, None]),
];

/// Writes the capacity fixture run into the database at `path`; its id.
pub fn write_capacity_run(path: &Path) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "capacity".into();
    header.study_text = CAPACITY_STUDY_TEXT.into();
    let id = store.begin_run(&header)?;
    for (target, caps) in TARGETS {
        store.record_target(id, &target_record(target, target, TargetStatus::Ok))?;
        for (scenario, share) in [("plaintext", 1.0), ("json", 0.8)] {
            for (rep, cap) in caps.iter().enumerate() {
                let result = search(scenario, cap.map(|c| c * share), rep == 1);
                store.record_capacity(
                    id,
                    &CapacitySearch {
                        target: target.into(),
                        scenario: scenario.into(),
                        repetition: rep as u32,
                        started_at: "2026-01-02T03:04:05Z".into(),
                        result,
                    },
                )?;
            }
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}

/// The study text of the service (mix) fixture.
pub const SERVICE_STUDY_TEXT: &str = r#"name = "service"
description = "A synthetic mix capacity fixture."
source = "a synthetic fixture"
targets = ["rust-actix", "go-gin", "python-django"]

[[scenario]]
mix = "mixes/service.toml"
arrival = "poisson"
capacity = { slo = ["p99<=10ms", "db.p99<=10ms", "updates.p99<=10ms"] }
"#;

/// (target, capacity of the mix; its `updates` kind's p99 as a share of
/// the total's, `db`'s being 0.9, so targets differ in which breaks first).
const SERVICE: [(&str, Option<f64>, f64); 3] = [
    ("go-gin", Some(4200.0), 0.98),
    ("rust-actix", Some(5100.0), 0.7),
    ("python-django", Some(900.0), 0.95),
];

/// Writes a capacity run of a mix (`db` and `updates` kinds) into the
/// database at `path`; its id. Each level's kinds are drawn from the
/// total's latency, and which kind broke first is found from them.
pub fn write_service_run(path: &Path) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "service".into();
    header.study_text = SERVICE_STUDY_TEXT.into();
    let id = store.begin_run(&header)?;
    for (target, cap, updates) in SERVICE {
        store.record_target(id, &target_record(target, target, TargetStatus::Ok))?;
        let mut result = search("service", cap, false);
        result.slo = ["p99<=10ms", "db.p99<=10ms", "updates.p99<=10ms"]
            .iter()
            .filter_map(|t| Threshold::parse(t).ok())
            .collect();
        for l in result.levels.iter_mut().chain(result.curve.iter_mut()) {
            l.routes = vec![kind("db", l, 0.9), kind("updates", l, updates)];
        }
        result.broke_first = shootout_capacity::broke_first(&result.levels, result.capacity_rps);
        store.record_capacity(
            id,
            &CapacitySearch {
                target: target.into(),
                scenario: "service".into(),
                repetition: 0,
                started_at: "2026-01-02T03:04:05Z".into(),
                result,
            },
        )?;
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}

/// A kind at a level: `share` of its sends, its p99 `factor` times the
/// total's, past its 10 ms bound when the level failed and it is over.
fn kind(name: &str, l: &LevelRecord, factor: f64) -> KindRecord {
    let p99 = l.latency_ms.p99 * factor;
    KindRecord {
        name: name.into(),
        sent: l.sent / 2,
        completed: l.completed / 2,
        errors: 0,
        latency_ms: LatencySummary {
            p99,
            ..l.latency_ms.clone()
        },
        over: (!l.pass && p99 > 10.0).then_some(p99 / 10.0),
    }
}

/// One search: probe, a few search levels around the capacity, the
/// confirmation and the curve; `cap` None fails from the lowest rate.
fn search(scenario: &str, cap: Option<f64>, unstable: bool) -> CapacityResult {
    let slo = ["p99<=10ms", "error_rate<=0.1%"]
        .iter()
        .filter_map(|t| Threshold::parse(t).ok())
        .collect();
    let knee = cap.unwrap_or(50.0);
    let mut levels = vec![level(Phase::Probe, knee * 1.5, knee, None)];
    for f in [0.5, 1.0, 2.0, 1.5, 1.02] {
        levels.push(level(Phase::Search, knee * f, knee, None));
    }
    let mut curve = Vec::new();
    if let Some(c) = cap {
        levels.push(level(Phase::Confirm, c, knee, None));
        curve = shootout_capacity::CURVE
            .iter()
            .map(|&f| level(Phase::Curve, c * f, knee, Some(f)))
            .collect();
    }
    CapacityResult {
        url: format!("http://127.0.0.1:1/{scenario}"),
        method: "GET".into(),
        slo,
        capacity_rps: cap,
        verdict: if cap.is_some() {
            Verdict::Found
        } else {
            Verdict::None
        },
        unstable: unstable && cap.is_some_and(|c| c < 8500.0),
        probe_rps: knee * 1.5,
        lower_bound_rps: None,
        search: SearchRecord {
            warmup_s: 0.5,
            step_s: 1.0,
            precision: 0.05,
            threads: 1,
            protocol: Default::default(),
            streams: None,
        },
        levels,
        curve,
        broke_first: None,
    }
}

/// A level at `rate` against a server whose p99 is 10 ms at `knee`.
fn level(phase: Phase, rate: f64, knee: f64, fraction: Option<f64>) -> LevelRecord {
    let load = rate / knee;
    let p99 = 1.0 + 9.0 * load.powi(4);
    let pass = p99 <= 10.0 + 1e-9;
    let sent = rate.round() as u64;
    LevelRecord {
        phase,
        target_rps: rate,
        achieved_rps: rate * if pass { 0.998 } else { 0.93 },
        connections: 16,
        latency_ms: LatencySummary {
            min: 0.05,
            mean: p99 / 4.0,
            stdev: p99 / 8.0,
            p50: p99 / 5.0,
            p90: p99 / 2.0,
            p99,
            p999: p99 * 1.4,
            max: p99 * 2.0,
        },
        sent,
        completed: sent,
        errors: ErrorCounts::default(),
        error_rate: 0.0,
        all_busy: 0,
        send_lag_p99_ms: 0.1,
        generator_cpu: 0.3,
        pass,
        verdict: if pass {
            LevelVerdict::Pass
        } else {
            LevelVerdict::Fail
        },
        reason: format!("p99 was {p99:.1} ms (p99<=10ms)"),
        fraction,
        routes: Vec::new(),
    }
}
