//! Store tests against a throw-away database file per test.

use super::*;
use hdrhistogram::Histogram;
use shootout_engine::Second;
use std::collections::BTreeMap;

/// A run row as every older schema took it, for the migration tests.
pub(crate) const OLD_RUN: &str =
    "INSERT INTO runs (study, started_at, status, tool_version, host_cpu_model,
    host_cores, host_mem_total_mib, host_kernel, host_hostname, server_cpus,
    generator_cpus, scale, study_text)
 VALUES ('old', '2026-01-01T00:00:00Z', 'complete', '0.1.0', 'CPU', 2, 4096,
    '6.1', 'box', '[0]', '[1]', 1.0, '')";

pub(crate) struct TempDb(PathBuf);

impl TempDb {
    pub(crate) fn new(name: &str) -> TempDb {
        let dir = std::env::temp_dir().join(format!(
            "shootout-store-{}-{}-{}",
            name,
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        TempDb(dir)
    }
    pub(crate) fn path(&self) -> PathBuf {
        self.0.join("nested").join("t.db")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(crate) fn new_run() -> NewRun {
    NewRun {
        study: "default".into(),
        started_at: now_rfc3339(),
        tool_version: "0.1.0".into(),
        git_commit: Some("abc123".into()),
        host: Host {
            cpu_model: "Test CPU".into(),
            cores: 2,
            mem_total_mib: 4096,
            kernel: "6.1.0".into(),
            hostname: "box".into(),
        },
        pinning: Pinning {
            server_cpus: vec![0],
            generator_cpus: vec![1],
        },
        scale: 1.0,
        study_text: "name = \"default\"\n".into(),
        database: None,
        order_seed: None,
    }
}

pub(crate) fn measurement(target: &str, rep: u32, values: &[u64]) -> Measurement {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    for v in values {
        h.record(*v).unwrap();
    }
    Measurement {
        target: target.into(),
        scenario: "plaintext".into(),
        level: 0,
        level_label: "c=64".into(),
        repetition: rep,
        started_at: now_rfc3339(),
        summary: shootout_testkit::summary::summary(1000.0 + rep as f64),
        histogram: h,
        histogram_uncorrected: None,
        timeline: vec![Second {
            t: 0,
            completed: 10,
            errors: 0,
            p50_ms: 1.0,
            p99_ms: 2.0,
        }],
        rss_idle_mib: 5.0,
        rss_peak_mib: 9.5,
        rss_after_mib: 7.0,
        pss_peak_mib: Some(8.0),
        server_cpu_s: 1.25,
        req_per_cpu_s: 800.0,
        generator_bound: rep == 1,
        startup_s: 0.05,
        db_cpu_s: None,
        db_rss_peak_mib: None,
        resources_cpus: None,
        resources_memory_mib: None,
        throttled_s: None,
        throttled_periods: None,
        oom_killed: None,
        memory_peak_mib: None,
        db_memory_peak_mib: None,
        warmup_s: None,
        steady: None,
        warmup_cv: None,
        others_cpu_share: None,
        steal_share: None,
        disturbed: false,
        parts: Default::default(),
    }
}

#[test]
// Every field of a run written and read back in one place.
#[allow(clippy::too_many_lines)]
fn round_trips_a_run() {
    let tmp = TempDb::new("roundtrip");
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let id = store.begin_run(&new_run()).unwrap();
    store
        .record_target(
            id,
            &TargetRecord {
                target: "rust-actix".into(),
                language: "rust".into(),
                framework: "actix-web 4".into(),
                status: TargetStatus::Ok,
                reason: None,
                log_tail: None,
                verify: Some(serde_json::json!([{"check": "plaintext", "ok": true}])),
                footprint_bytes: Some(12_345),
                build_s: Some(1.5),
                description: Some("one JVM, -Xmx256m".into()),
                run_command: Some("exec java -Xmx256m -jar app.jar".into()),
                provenance: None,
            },
        )
        .unwrap();
    store
        .record_target(
            id,
            &TargetRecord {
                target: "broken".into(),
                language: "python".into(),
                framework: "none".into(),
                status: TargetStatus::StartFailed,
                reason: Some("exited at once".into()),
                log_tail: Some("boom".into()),
                verify: None,
                footprint_bytes: None,
                build_s: None,
                description: None,
                run_command: None,
                provenance: None,
            },
        )
        .unwrap();
    store
        .record_measurement(id, &measurement("rust-actix", 1, &[100, 200]))
        .unwrap();
    let mut m0 = measurement("rust-actix", 0, &[100, 200, 300]);
    let mut unc = Histogram::<u64>::new(3).unwrap();
    unc.record(42).unwrap();
    m0.histogram_uncorrected = Some(unc);
    m0.summary.pipeline = 16;
    store.record_measurement(id, &m0).unwrap();

    let listing = store.runs().unwrap();
    assert_eq!(listing.len(), 1);
    assert_eq!(listing[0].status, RunStatus::Running);
    assert_eq!(listing[0].measurements, 2);
    assert_eq!((listing[0].targets, listing[0].targets_ok), (2, 1));

    store.finish_run(id, RunStatus::Interrupted).unwrap();
    let data = store.load_run(store.resolve("latest").unwrap()).unwrap();
    assert_eq!(data.run.status, RunStatus::Interrupted);
    assert!(data.run.finished_at.is_some());
    assert_eq!(data.run.pinning.generator_cpus, vec![1]);
    assert_eq!(data.run.host.cores, 2);
    assert_eq!(data.targets.len(), 2);
    assert_eq!(data.targets[0].target, "broken");
    assert_eq!(data.targets[0].status, TargetStatus::StartFailed);
    assert_eq!(data.targets[1].footprint_bytes, Some(12_345));
    let run_command = data.targets[1].run_command.as_deref();
    assert_eq!(run_command, Some("exec java -Xmx256m -jar app.jar"));
    assert_eq!(data.targets[0].description, None);
    let ms = &data.measurements;
    assert_eq!(ms.len(), 2);
    let mut depths: Vec<usize> = ms.iter().map(|m| m.summary.pipeline).collect();
    depths.sort_unstable();
    assert_eq!(depths, [1, 16], "each measurement keeps its pipeline depth");
    assert_eq!(ms[0].repetition, 0, "ordered by repetition");
    assert_eq!(ms[0].histogram.len(), 3);
    assert_eq!(ms[0].histogram_uncorrected.as_ref().unwrap().len(), 1);
    assert!(ms[1].generator_bound);
    assert_eq!(ms[1].summary, shootout_testkit::summary::summary(1001.0));
    assert_eq!(ms[0].pss_peak_mib, Some(8.0));
    assert_eq!(ms[0].timeline[0].completed, 10);

    // Histograms merge exactly after the round trip.
    let mut merged = ms[0].histogram.clone();
    merged.add(&ms[1].histogram).unwrap();
    assert_eq!(merged.len(), 5);

    // And the model serialises to JSON and back.
    let json = serde_json::to_string(&data).unwrap();
    let back: RunData = serde_json::from_str(&json).unwrap();
    assert_eq!(back.measurements[0].histogram.len(), 3);
}

#[test]
fn resolves_ids_and_reopens() {
    let tmp = TempDb::new("resolve");
    let a;
    let b;
    {
        let store = Store::open(tmp.path()).unwrap();
        assert!(matches!(
            store.resolve("latest"),
            Err(StoreError::NoSuchRun(_))
        ));
        a = store.begin_run(&new_run()).unwrap();
        b = store.begin_run(&new_run()).unwrap();
        store.finish_run(a, RunStatus::Complete).unwrap();
    }
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(store.resolve("latest").unwrap(), b);
    assert_eq!(store.resolve(&a.to_string()).unwrap(), a);
    assert!(store.resolve("9999").is_err());
    assert!(store.resolve("nope").is_err());
    let runs = store.runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
    assert_eq!(runs[1].status, RunStatus::Complete);
    assert!(store.finish_run(9999, RunStatus::Failed).is_err());
}

#[test]
fn refuses_a_newer_schema() {
    let tmp = TempDb::new("newer");
    drop(Store::open(tmp.path()).unwrap());
    let conn = Connection::open(tmp.path()).unwrap();
    conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(conn);
    assert!(matches!(
        Store::open(tmp.path()),
        Err(StoreError::TooNew { .. })
    ));
}

#[test]
fn uses_wal() {
    let tmp = TempDb::new("wal");
    let store = Store::open(tmp.path()).unwrap();
    let mode: String = store
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

fn database_record() -> DatabaseRecord {
    DatabaseRecord {
        version: "16.4 (Debian 16.4-1.pgdg120+1)".into(),
        settings: BTreeMap::from([
            ("max_connections".to_string(), "200".to_string()),
            ("shared_buffers".to_string(), "128MB".to_string()),
            ("synchronous_commit".to_string(), "off".to_string()),
        ]),
        cpus: vec![0],
        pool_size: 16,
    }
}

#[test]
fn round_trips_the_order_seed() {
    let tmp = TempDb::new("seed");
    let store = Store::open(tmp.path()).unwrap();
    // 2^53 − 1, the largest seed a study or a run picks.
    let seed = (1u64 << 53) - 1;
    let id = store
        .begin_run(&NewRun {
            order_seed: Some(seed),
            ..new_run()
        })
        .unwrap();
    assert_eq!(store.load_run(id).unwrap().run.order_seed, Some(seed));
    let id = store.begin_run(&new_run()).unwrap();
    assert_eq!(store.load_run(id).unwrap().run.order_seed, None);
}

#[test]
fn round_trips_the_database_and_its_cost() {
    let tmp = TempDb::new("database");
    let store = Store::open(tmp.path()).unwrap();
    let with = store
        .begin_run(&NewRun {
            database: Some(database_record()),
            ..new_run()
        })
        .unwrap();
    let without = store.begin_run(&new_run()).unwrap();
    let mut m = measurement("rust-actix", 0, &[100]);
    m.scenario = "db".into();
    m.db_cpu_s = Some(0.75);
    m.db_rss_peak_mib = Some(41.5);
    store.record_measurement(with, &m).unwrap();
    store
        .record_measurement(without, &measurement("rust-actix", 0, &[100]))
        .unwrap();

    let data = store.load_run(with).unwrap();
    assert_eq!(data.run.database, Some(database_record()));
    assert_eq!(data.measurements[0].db_cpu_s, Some(0.75));
    assert_eq!(data.measurements[0].db_rss_peak_mib, Some(41.5));
    let data = store.load_run(without).unwrap();
    assert_eq!(data.run.database, None);
    assert_eq!(data.measurements[0].db_cpu_s, None);
    assert_eq!(data.measurements[0].db_rss_peak_mib, None);
}

/// A file written by the first schema (before the database columns) opens,
/// migrates, and reads its old rows with no database and no database cost.
#[test]
fn migrates_a_version_1_database() {
    let tmp = TempDb::new("v1");
    std::fs::create_dir_all(tmp.path().parent().unwrap()).unwrap();
    {
        let conn = Connection::open(tmp.path()).unwrap();
        conn.execute_batch(schema::MIGRATIONS[0]).unwrap();
        conn.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (1, 'then')",
            [],
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(OLD_RUN, []).unwrap();
        let m = measurement("rust-actix", 0, &[100]);
        conn.execute(
            "INSERT INTO measurements (run_id, target, scenario, level, level_label,
                repetition, started_at, summary, histogram, timeline, rss_idle_mib,
                rss_peak_mib, rss_after_mib, server_cpu_s, req_per_cpu_s, generator_bound,
                startup_s)
             VALUES (1, 'rust-actix', 'plaintext', 0, 'c=64', 0, 'then', ?1, ?2, '[]',
                5.0, 9.5, 7.0, 1.25, 800.0, 0, 0.05)",
            params![
                serde_json::to_string(&m.summary).unwrap(),
                encode_histogram(&m.histogram).unwrap()
            ],
        )
        .unwrap();
    }
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let data = store.load_run(1).unwrap();
    assert_eq!(data.run.study, "old");
    assert_eq!(data.run.database, None);
    assert_eq!(data.measurements.len(), 1);
    assert_eq!(data.measurements[0].server_cpu_s, 1.25);
    assert_eq!(data.measurements[0].db_cpu_s, None);
    assert_eq!(data.measurements[0].db_rss_peak_mib, None);
    assert_eq!(data.measurements[0].warmup_s, None, "not kept then");
    assert_eq!(data.measurements[0].steady, None);
}

/// Each warm-up's time and steadiness is written and read back: a fixed
/// warm-up (no verdict), a steady and a capped auto warm-up.
#[test]
fn round_trips_the_warm_up() {
    let tmp = TempDb::new("warmup");
    let store = Store::open(tmp.path()).unwrap();
    let run = store.begin_run(&new_run()).unwrap();
    let cases = [
        (Some(2.0), None),
        (Some(2.5), Some(true)),
        (Some(30.2), Some(false)),
    ];
    for (rep, (warmup_s, steady)) in cases.iter().enumerate() {
        let mut m = measurement("rust-actix", rep as u32, &[100]);
        m.warmup_s = *warmup_s;
        m.steady = *steady;
        store.record_measurement(run, &m).unwrap();
    }
    let data = store.load_run(run).unwrap();
    let read: Vec<_> = data
        .measurements
        .iter()
        .map(|m| (m.warmup_s, m.steady))
        .collect();
    assert_eq!(read, cases);
}

#[test]
fn a_target_failed_during_measurement_keeps_its_status() {
    let tmp = TempDb::new("budget-failed");
    let store = Store::open(tmp.path()).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    let rec = TargetRecord {
        target: "java-spring".into(),
        language: "java".into(),
        framework: "spring".into(),
        status: TargetStatus::Failed,
        reason: Some("killed: out of memory (limit 16 MiB)".into()),
        log_tail: None,
        verify: None,
        footprint_bytes: None,
        build_s: None,
        description: None,
        run_command: None,
        provenance: None,
    };
    store.record_target(id, &rec).unwrap();
    let data = store.load_run(id).unwrap();
    assert_eq!(data.targets[0].status, TargetStatus::Failed);
    assert_eq!(data.targets[0].reason, rec.reason);
}

#[test]
fn a_measurements_parts_round_trip_and_none_reads_as_empty() {
    use crate::parts::{Cost, Derived, Hold, Overload, OverloadSecond, Parts, Standing};
    let tmp = TempDb::new("parts");
    let store = Store::open(tmp.path()).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    let plain = measurement("a", 0, &[100, 200]);
    let mut costed = measurement("a", 1, &[100, 200]);
    costed.parts = Parts {
        cost: Some(Cost {
            offered_rps: 500.0,
            achieved_rps: 499.5,
            us_per_request: 42.5,
            generator_share: 0.3,
            invalid: Some("carried 400 of the 500 req/s offered".into()),
            not_offered: false,
        }),
        standing: Some(Standing {
            seconds: 10.0,
            cpu_s: 0.02,
            rss_mib: 16.5,
        }),
        overload: Some(Overload {
            factor: 2.0,
            capacity_rps: 200.0,
            deadline_ms: 10.0,
            overload_s: 3.0,
            recover_s: 6.0,
            offered_rps: 400.0,
            throughput_rps: 199.0,
            goodput_rps: 12.0,
            errors: shootout_engine::ErrorCounts::default(),
            unsent: 3,
            recovery_s: Some(4.0),
            seconds: vec![OverloadSecond {
                t: 0,
                completed: 199,
                good: 12,
                errors: 0,
                p99_ms: 800.0,
            }],
        }),
        derived: Some(Derived {
            capacity_rps: 200.0,
            fraction: Some(2.0),
        }),
        hold: Some(Hold {
            connections: 50,
            seconds: 2.0,
            rss_idle_mib: 10.0,
            rss_held_mib: 11.0,
            cpu_s: 0.004,
            kib_per_connection: Hold::kib_per(10.0, 11.0, 50),
        }),
    };
    store.record_measurement(id, &plain).unwrap();
    store.record_measurement(id, &costed).unwrap();
    let back = store.measurements(id).unwrap();
    assert!(back[0].parts.is_empty(), "a level without parts has none");
    assert_eq!(back[1].parts, costed.parts);
    // Stored as NULL when empty, so older readers and rows agree.
    let nulls: i64 = rusqlite::Connection::open(tmp.path())
        .unwrap()
        .query_row(
            "SELECT COUNT(*) FROM measurements WHERE parts IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(nulls, 1);
}

fn provenance() -> Provenance {
    Provenance {
        packages: vec![
            PackageVersion {
                name: "actix-web".into(),
                recorded: Recorded::Found {
                    version: "4.12.0".into(),
                    source: "targets/Cargo.lock".into(),
                },
            },
            PackageVersion {
                name: "tokio".into(),
                recorded: Recorded::Missing {
                    not_recorded: "not recorded: targets/Cargo.lock has no package \"tokio\""
                        .into(),
                },
            },
        ],
        runtime: Recorded::Found {
            version: "rustc 1.91.0".into(),
            source: "rustc -vV".into(),
        },
        build: None,
    }
}

/// A database of schema 11 (before provenance) migrates: its
/// target rows read with no provenance, and new rows keep theirs.
#[test]
fn migrates_a_version_11_database_and_keeps_provenance() {
    let tmp = TempDb::new("v11");
    std::fs::create_dir_all(tmp.path().parent().unwrap()).unwrap();
    {
        let conn = Connection::open(tmp.path()).unwrap();
        for (i, sql) in schema::MIGRATIONS[..11].iter().enumerate() {
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?1, 'then')",
                [i as i64 + 1],
            )
            .unwrap();
        }
        conn.pragma_update(None, "user_version", 11).unwrap();
        conn.execute(OLD_RUN, []).unwrap();
        conn.execute(
            "INSERT INTO run_targets (run_id, target, language, framework, status)
             VALUES (1, 'rust-actix', 'rust', 'actix-web 4', 'ok')",
            [],
        )
        .unwrap();
    }
    let store = Store::open(tmp.path()).unwrap();
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    let old = store.load_run(1).unwrap();
    assert_eq!(old.targets[0].provenance, None, "not recorded then");
    assert_eq!(old.run.cluster, None, "a local run, as every run then");
    assert!(old.placements.is_empty());
    // Opening again applies nothing (the migration is not run twice).
    drop(store);
    let store = Store::open(tmp.path()).unwrap();
    let id = store.begin_run(&new_run()).unwrap();
    let mut rec = old.targets[0].clone();
    rec.provenance = Some(provenance());
    store.record_target(id, &rec).unwrap();
    let back = store.load_run(id).unwrap();
    assert_eq!(back.targets[0].provenance, Some(provenance()));
}

#[test]
fn memory_per_idle_connection_is_the_rise_over_the_connections_held() {
    use crate::parts::Hold;
    // 1 MiB more for 50 connections: 20.48 KiB each.
    let kib = Hold::kib_per(10.0, 11.0, 50).unwrap();
    assert!((kib - 20.48).abs() < 1e-9, "{kib}");
    assert_eq!(Hold::kib_per(10.0, 11.0, 0), None, "none held");
    let h = Hold {
        connections: 50,
        seconds: 2.0,
        rss_idle_mib: 10.0,
        rss_held_mib: 11.0,
        cpu_s: 0.004,
        kib_per_connection: Some(kib),
    };
    assert!((h.cpu_ms_per_s() - 2.0).abs() < 1e-9);
}
