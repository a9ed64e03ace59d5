//! Proves each database check can fail: the fake serves the database
//! routes with one deliberate flaw at a time, and exactly the expected
//! checks must fail, while a correct fake passes everything. They need a
//! real, seeded PostgreSQL with `pg_stat_statements` ([`test_database`],
//! the runner's own cluster, one per test process) and SKIP on a machine
//! without PostgreSQL. Within a process they take turns: the query counts
//! reset shared statistics and the pool check counts every connection of
//! the app role.

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use postgres::{Client, NoTls};

use super::db::check_database;
use super::db_fake::{serve_db, DbFake, Flaw};
use super::*;
use crate::database::{Cluster, ClusterOptions, DatabaseAccess, DatabaseError, APP_USER};
use shootout_contract::spec::ScenarioName;

/// The connections each fake may open (`DB_POOL_SIZE`).
const POOL_SIZE: u32 = 4;

/// The database the tests check against: one runner-style cluster for the
/// whole test binary, started on first use and removed at exit; `None`,
/// with a SKIP line, on a machine without PostgreSQL.
fn test_database() -> Option<DatabaseAccess> {
    static CLUSTER: OnceLock<Result<Cluster, DatabaseError>> = OnceLock::new();
    let cluster = CLUSTER.get_or_init(|| {
        // Statics are never dropped: remove the cluster when the binary exits.
        extern "C" fn remove_clusters() {
            crate::database::stop_all_clusters();
        }
        // SAFETY: registers a plain function; atexit has no other effect.
        unsafe { libc::atexit(remove_clusters) };
        Cluster::start(&ClusterOptions::for_pool(POOL_SIZE, vec![]))
    });
    match cluster {
        Ok(c) => Some(c.access()),
        Err(e) if crate::database::find_bin_dir().is_none() => {
            shootout_testkit::missing(e);
            None
        }
        Err(e) => panic!("the test database did not start: {e}"),
    }
}

/// Held by every test that talks to the database.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fake with `flaw`, once the previous fake's connections are gone (a
/// closed connection's backend leaves `pg_stat_activity` a moment later).
fn start(access: &DatabaseAccess, flaw: Flaw) -> DbFake {
    let mut admin = Client::connect(&access.admin_url, NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let sql = "SELECT count(*) FROM pg_stat_activity WHERE usename = $1";
    while admin.query_one(sql, &[&APP_USER]).unwrap().get::<_, i64>(0) > 0 {
        assert!(Instant::now() < deadline, "app connections linger");
        std::thread::sleep(Duration::from_millis(20));
    }
    serve_db(&access.app_url, access.pool_size, flaw)
}

/// The failed checks of the database checks against a fake with `flaw`,
/// as (column, aspect, message); `None` when there is no database.
fn failures_with(flaw: Flaw) -> Option<Vec<(String, String, String)>> {
    let access = test_database()?;
    let _serial = one_at_a_time();
    let fake = start(&access, flaw);
    let checks = check_database(fake.addr, Some(&access), Duration::from_secs(10));
    let failed: Vec<_> = checks
        .iter()
        .filter_map(|c| c.result.as_ref().err().map(|f| (c, f)))
        .map(|(c, f)| {
            let aspect = format!("{:?}", c.aspect);
            (c.column.name().to_owned(), aspect, f.to_string())
        })
        .collect();
    for (column, aspect, f) in &failed {
        eprintln!("{flaw:?}: {column} {aspect}: {f}");
    }
    Some(failed)
}

/// The failed (column, aspect) pairs against a fake with `flaw`.
fn failed_with(flaw: Flaw) -> Option<BTreeSet<(String, String)>> {
    let failed = failures_with(flaw)?;
    Some(failed.into_iter().map(|(c, a, _)| (c, a)).collect())
}

#[test]
fn correct_database_server_passes_everything() {
    let Some(access) = test_database() else {
        return;
    };
    let _serial = one_at_a_time();
    let fake = start(&access, Flaw::None);
    let opts = CheckOptions {
        timeout: Duration::from_secs(10),
        database: Some(access.clone()),
        ..Default::default()
    };
    let checks = check_server(fake.addr, &opts);
    let failed: Vec<_> = checks.iter().filter(|c| c.result.is_err()).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert!(!checks.iter().any(Check::is_skipped));
    let pool_note = checks
        .iter()
        .find(|c| c.aspect == Aspect::Pool)
        .and_then(|c| c.note.clone());
    assert!(pool_note.is_some_and(|n| n.contains("DB_POOL_SIZE 4")));
}

/// Each flaw and the (column, aspect) pairs it must fail, exactly.
/// `PerRowUpdates` is not a flaw: TechEmpower's counts accept it.
/// `NoQueueing`'s 503s reach the counted load (64 clients) too: they are
/// TechEmpower's failed transactions, and their queries are missing.
const FLAWS: &[(Flaw, &[(&str, &str)])] = &[
    (Flaw::InQueries, &[("queries", "QueryCount")]),
    (Flaw::CachedDb, &[("db", "QueryCount")]),
    (Flaw::FixedId, &[("db", "Random")]),
    (Flaw::InventedValues, &[("db", "Rows")]),
    (Flaw::SpacedJson, &[("db", "Body")]),
    (Flaw::NoClamp, &[("queries", "Clamp"), ("updates", "Clamp")]),
    (Flaw::CachedFortunes, &[("fortunes", "QueryCount")]),
    (
        Flaw::UnescapedFortune,
        &[("fortunes", "Body"), ("fortunes", "Escape")],
    ),
    (Flaw::LocaleSort, &[("fortunes", "Body")]),
    (Flaw::NoCharset, &[("fortunes", "ContentType")]),
    (
        Flaw::UnwrittenUpdates,
        &[
            ("updates", "Persisted"),
            ("updates", "Changed"),
            ("updates", "Clamp"),
            ("updates", "QueryCount"),
        ],
    ),
    (Flaw::PerRowUpdates, &[]),
    (Flaw::PoolPerWorker, &[("db_pool", "Pool")]),
    (
        Flaw::NoQueueing,
        &[
            ("db_pool", "Status"),
            ("db", "Transactions"),
            ("db", "QueryCount"),
        ],
    ),
];

/// One test, one cluster, one flaw after another: a cluster of its own for
/// each flaw cost 8 s alone and 20 to 32 s four at a time in the test
/// loop, and four counted loads at once could miss TechEmpower's 20 s
/// limit. Every mismatch is listed before the test fails.
#[test]
fn each_database_flaw_fails_exactly_its_checks() {
    let mut wrong = Vec::new();
    for (flaw, expected) in FLAWS {
        let Some(failed) = failed_with(*flaw) else {
            return;
        };
        let expected: BTreeSet<_> = expected
            .iter()
            .map(|(c, a)| (c.to_string(), a.to_string()))
            .collect();
        if failed != expected {
            wrong.push(format!(
                "{flaw:?}: failed {failed:?}, expected {expected:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// java-spring's flaw as TechEmpower's verifier words it: an id drawn
/// twice in one request written once, with one UPDATE per row, misses at
/// least one query and one updated row per request (512 requests of 20
/// ids; the random repeats besides the fake's own are missing too).
#[test]
fn writing_a_repeated_id_once_fails_the_update_counts() {
    let Some(failed) = failures_with(Flaw::DedupUpdates) else {
        return;
    };
    let found = |message: &str, caption: &str, expected: i64| -> i64 {
        let tail = format!(" {caption} in the database out of roughly {expected} expected.");
        let n = message
            .strip_prefix("Only ")
            .and_then(|m| m.strip_suffix(&tail));
        n.and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{message:?}"))
    };
    let [(_, _, queries), (_, _, updated)] = &failed[..] else {
        panic!("{failed:#?}");
    };
    // 20 reads and at most 19 writes per request; rows shown / 1.011.
    let queries = found(queries, "executed queries", 20480);
    assert!((19_868..=19_968).contains(&queries), "{queries}");
    let updated = found(updated, "rows updated", 10240);
    assert!((9_522..=9_622).contains(&updated), "{updated}");
    assert!(failed
        .iter()
        .all(|(c, a, _)| (c.as_str(), a.as_str()) == ("updates", "QueryCount")));
}

#[test]
fn unreachable_database_fails_every_database_column() {
    let addr = super::fake::serve(super::fake::correct, false);
    let access = DatabaseAccess {
        app_url: String::new(),
        admin_url: "host=/nonexistent port=1 user=nobody dbname=none connect_timeout=2".into(),
        pool_size: 1,
    };
    let checks = check_database(addr, Some(&access), Duration::from_secs(2));
    assert_eq!(checks.len(), 5);
    assert!(checks
        .iter()
        .all(|c| matches!(c.result, Err(Failure::Database(_)))));
}

#[test]
fn without_a_database_the_columns_are_skipped_not_passed() {
    let checks = check_database(
        super::fake::serve(super::fake::correct, false),
        None,
        Duration::from_secs(2),
    );
    assert_eq!(checks.len(), 5);
    assert!(checks.iter().all(|c| c.is_skipped() && c.result.is_ok()));
    let report = VerifyReport {
        target: "t".into(),
        checks,
        ready_after: None,
        stop: None,
        log: "x".into(),
        cpu_use: None,
    };
    assert_eq!(report.column(Column::Route(ScenarioName::Db)), None);
    assert_eq!(report.column(Column::DbPool), None);
    let (_, note) = report.notes().next().unwrap();
    assert!(note.starts_with("skipped: no database"), "{note}");
}

#[test]
fn verify_target_gives_the_server_the_database_env() {
    let root = crate::tempdir::Dir::new();
    let dir = root.path().join("env");
    std::fs::create_dir_all(&dir).unwrap();
    let target = Target {
        ready: "/plaintext".into(),
        root: root.path().to_path_buf(),
        ..Target::command(
            "env",
            &dir,
            r#"echo "$DATABASE_URL $DB_POOL_SIZE" > seen; exit 1"#,
        )
    };
    let opts = VerifyOptions {
        database: Some(DatabaseAccess {
            app_url: "postgres://u:p@127.0.0.1:1/hello_world".into(),
            admin_url: String::new(),
            pool_size: 12,
        }),
        ..Default::default()
    };
    let report = verify_target(&target, &opts);
    assert_eq!(report.column(Column::Ready), Some(false));
    let seen = std::fs::read_to_string(dir.join("seen")).unwrap();
    assert_eq!(seen.trim(), "postgres://u:p@127.0.0.1:1/hello_world 12");
}
