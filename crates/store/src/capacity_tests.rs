//! Capacity searches: recorded and read back whole, and a version-2
//! database (before the capacity tables) opens and migrates.

use super::*;
use crate::tests::{new_run, TempDb};
use rusqlite::Connection;
use shootout_capacity::{
    broke_first, CapacityResult, KindRecord, LevelRecord, LevelVerdict, Phase, SearchRecord,
    Verdict,
};
use shootout_engine::{ErrorCounts, LatencySummary, Threshold};

fn level(phase: Phase, rate: f64, p99: f64, verdict: LevelVerdict) -> LevelRecord {
    LevelRecord {
        phase,
        target_rps: rate,
        achieved_rps: rate * 0.995,
        connections: 16,
        latency_ms: LatencySummary {
            min: 0.1,
            mean: p99 / 4.0,
            stdev: 0.5,
            p50: p99 / 5.0,
            p90: p99 / 2.0,
            p99,
            p999: p99 * 1.5,
            max: p99 * 2.0,
        },
        sent: rate as u64,
        completed: rate as u64 - 3,
        errors: ErrorCounts {
            timeout: 1,
            mismatch: 2,
            ..ErrorCounts::default()
        },
        error_rate: 3.0 / rate,
        all_busy: 7,
        send_lag_p99_ms: 0.25,
        generator_cpu: 0.4,
        pass: verdict == LevelVerdict::Pass,
        verdict,
        reason: format!("p99 was {p99} ms (p99<=10ms)"),
        fraction: (phase == Phase::Curve).then_some(0.5),
        routes: Vec::new(),
    }
}

fn result() -> CapacityResult {
    CapacityResult {
        url: "http://127.0.0.1:1/plaintext".into(),
        method: "GET".into(),
        slo: vec![
            Threshold::parse("p99<=10ms").unwrap(),
            Threshold::parse("error_rate<=0.1%").unwrap(),
        ],
        capacity_rps: Some(8000.0),
        verdict: Verdict::Found,
        unstable: true,
        probe_rps: 12000.0,
        // Only generator-limited searches have one; any value must survive.
        lower_bound_rps: Some(7000.0),
        search: SearchRecord {
            warmup_s: 0.5,
            step_s: 1.0,
            precision: 0.05,
            threads: 1,
            protocol: Default::default(),
            streams: None,
        },
        levels: vec![
            level(Phase::Probe, 12000.0, 30.0, LevelVerdict::Fail),
            level(Phase::Search, 8000.0, 6.0, LevelVerdict::Pass),
            level(Phase::Search, 10000.0, 40.0, LevelVerdict::GeneratorLimited),
            level(Phase::Confirm, 8000.0, 7.0, LevelVerdict::Pass),
        ],
        curve: vec![
            level(Phase::Curve, 4000.0, 1.0, LevelVerdict::Pass),
            level(Phase::Curve, 8000.0, 7.5, LevelVerdict::Pass),
        ],
        broke_first: None,
    }
}

/// Two kinds of a mix at a level; `updates` is `over` its bound (if any).
fn kinds(p99: f64, over: Option<f64>) -> Vec<KindRecord> {
    let kind = |name: &str, p99: f64, over| KindRecord {
        name: name.into(),
        sent: 90,
        completed: 89,
        errors: 1,
        latency_ms: LatencySummary {
            p99,
            ..LatencySummary::default()
        },
        over,
    };
    vec![kind("db", p99 / 2.0, None), kind("updates", p99, over)]
}

/// A mix's kinds are kept at every level, and which kind broke the SLO
/// first is found again from them on reading.
#[test]
fn round_trips_a_mixs_kinds_and_which_broke_first() {
    let tmp = TempDb::new("kinds");
    let store = Store::open(tmp.path()).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    let mut r = result();
    r.levels[1].routes = kinds(6.0, None);
    let mut failed = level(Phase::Search, 9000.0, 14.0, LevelVerdict::Fail);
    failed.routes = kinds(14.0, Some(1.4));
    r.levels.push(failed);
    r.curve[1].routes = kinds(7.5, None);
    r.broke_first = broke_first(&r.levels, r.capacity_rps);
    let broke = r.broke_first.clone().expect("updates broke at 9000 req/s");
    assert_eq!((broke.kind.as_str(), broke.rate_rps), ("updates", 9000.0));
    let s = CapacitySearch {
        target: "t".into(),
        scenario: "service".into(),
        repetition: 0,
        started_at: now_rfc3339(),
        result: r,
    };
    store.record_capacity(id, &s).unwrap();
    assert_eq!(store.load_run(id).unwrap().capacity, [s]);
}

#[test]
fn round_trips_capacity_searches_in_order() {
    let tmp = TempDb::new("capacity");
    let store = Store::open(tmp.path()).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    let mut none = result();
    none.capacity_rps = None;
    none.verdict = Verdict::None;
    none.curve.clear();
    let searches = [
        CapacitySearch {
            target: "rust-axum".into(),
            scenario: "json".into(),
            repetition: 0,
            started_at: now_rfc3339(),
            result: none,
        },
        CapacitySearch {
            target: "go-nethttp".into(),
            scenario: "plaintext".into(),
            repetition: 1,
            started_at: now_rfc3339(),
            result: result(),
        },
    ];
    for s in &searches {
        store.record_capacity(id, s).unwrap();
    }
    // Recording the same search again replaces it.
    store.record_capacity(id, &searches[1]).unwrap();
    let data = store.load_run(id).unwrap();
    assert_eq!(data.capacity, [searches[1].clone(), searches[0].clone()]);
    assert!(data.measurements.is_empty());
    let other = store.begin_run(&new_run()).unwrap();
    assert!(store.load_run(other).unwrap().capacity.is_empty());
}

/// A file written before the capacity tables opens, migrates, reads as a
/// run without searches, and takes new ones.
#[test]
fn migrates_a_version_2_database() {
    let tmp = TempDb::new("v2");
    std::fs::create_dir_all(tmp.path().parent().unwrap()).unwrap();
    {
        let conn = Connection::open(tmp.path()).unwrap();
        for (i, sql) in schema::MIGRATIONS[..2].iter().enumerate() {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?1, 'then')",
                [i as i64 + 1],
            )
            .unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        conn.execute(crate::tests::OLD_RUN, []).unwrap();
    }
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(SCHEMA_VERSION, 13);
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let data = store.load_run(1).unwrap();
    assert_eq!(data.run.study, "old");
    assert!(data.capacity.is_empty());
    assert_eq!(
        data.run.order_seed, None,
        "older runs have no recorded order"
    );
    let s = CapacitySearch {
        target: "t".into(),
        scenario: "simple".into(),
        repetition: 0,
        started_at: now_rfc3339(),
        result: result(),
    };
    store.record_capacity(1, &s).unwrap();
    assert_eq!(store.load_run(1).unwrap().capacity, [s]);
}
