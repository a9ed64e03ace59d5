//! The SQL schema as an ordered list of migrations. The database records how
//! many have been applied both in `PRAGMA user_version` and in the
//! `schema_version` table; opening a database applies the missing ones in one
//! transaction and refuses a database written by a newer tool.

use crate::error::StoreError;
use rusqlite::{Connection, OptionalExtension};

/// Migration `i` brings the schema from version `i` to `i + 1`. Append only.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE schema_version (
    version    INTEGER NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE runs (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    study             TEXT NOT NULL,
    started_at        TEXT NOT NULL,
    finished_at       TEXT,
    status            TEXT NOT NULL,
    tool_version      TEXT NOT NULL,
    git_commit        TEXT,
    host_cpu_model    TEXT NOT NULL,
    host_cores        INTEGER NOT NULL,
    host_mem_total_mib INTEGER NOT NULL,
    host_kernel       TEXT NOT NULL,
    host_hostname     TEXT NOT NULL,
    server_cpus       TEXT NOT NULL,
    generator_cpus    TEXT NOT NULL,
    scale             REAL NOT NULL,
    study_text        TEXT NOT NULL
);
CREATE TABLE run_targets (
    run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    target          TEXT NOT NULL,
    language        TEXT NOT NULL,
    framework       TEXT NOT NULL,
    status          TEXT NOT NULL,
    reason          TEXT,
    log_tail        TEXT,
    verify          TEXT,
    footprint_bytes INTEGER,
    build_s         REAL,
    PRIMARY KEY (run_id, target)
);
CREATE TABLE measurements (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id                INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    target                TEXT NOT NULL,
    scenario              TEXT NOT NULL,
    level                 INTEGER NOT NULL,
    level_label           TEXT NOT NULL,
    repetition            INTEGER NOT NULL,
    started_at            TEXT NOT NULL,
    summary               TEXT NOT NULL,
    histogram             BLOB NOT NULL,
    histogram_uncorrected BLOB,
    timeline              TEXT NOT NULL,
    rss_idle_mib          REAL NOT NULL,
    rss_peak_mib          REAL NOT NULL,
    rss_after_mib         REAL NOT NULL,
    pss_peak_mib          REAL,
    server_cpu_s          REAL NOT NULL,
    req_per_cpu_s         REAL NOT NULL,
    generator_bound       INTEGER NOT NULL,
    startup_s             REAL NOT NULL,
    UNIQUE (run_id, target, scenario, level, repetition)
);
CREATE INDEX measurements_run ON measurements(run_id);
"#,
    // 2: the PostgreSQL of database scenarios (JSON of `DatabaseRecord`) and
    // its own cost, kept apart from the server's. NULL for everything older.
    r#"
ALTER TABLE runs ADD COLUMN database TEXT;
ALTER TABLE measurements ADD COLUMN db_cpu_s REAL;
ALTER TABLE measurements ADD COLUMN db_rss_peak_mib REAL;
"#,
    // 3: capacity searches of studies (`capacity = {..}` scenarios): one row
    // per search, and every level it ran; `list` says whether a level is one
    // of the search's (`levels`) or of the latency-vs-load curve (`curve`).
    r#"
CREATE TABLE capacity_searches (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    target       TEXT NOT NULL,
    scenario     TEXT NOT NULL,
    repetition   INTEGER NOT NULL,
    started_at   TEXT NOT NULL,
    url          TEXT NOT NULL,
    method       TEXT NOT NULL,
    slo          TEXT NOT NULL,
    capacity_rps REAL,
    lower_bound_rps REAL,
    verdict      TEXT NOT NULL,
    unstable     INTEGER NOT NULL,
    probe_rps    REAL NOT NULL,
    settings     TEXT NOT NULL,
    UNIQUE (run_id, target, scenario, repetition)
);
CREATE TABLE capacity_levels (
    search_id       INTEGER NOT NULL REFERENCES capacity_searches(id) ON DELETE CASCADE,
    list            TEXT NOT NULL,
    idx             INTEGER NOT NULL,
    phase           TEXT NOT NULL,
    target_rps      REAL NOT NULL,
    achieved_rps    REAL NOT NULL,
    connections     INTEGER NOT NULL,
    lat_min_ms      REAL NOT NULL,
    lat_mean_ms     REAL NOT NULL,
    lat_stdev_ms    REAL NOT NULL,
    lat_p50_ms      REAL NOT NULL,
    lat_p90_ms      REAL NOT NULL,
    lat_p99_ms      REAL NOT NULL,
    lat_p999_ms     REAL NOT NULL,
    lat_max_ms      REAL NOT NULL,
    sent            INTEGER NOT NULL,
    completed       INTEGER NOT NULL,
    errors          TEXT NOT NULL,
    error_rate      REAL NOT NULL,
    all_busy        INTEGER NOT NULL,
    send_lag_p99_ms REAL NOT NULL,
    generator_cpu   REAL NOT NULL,
    verdict         TEXT NOT NULL,
    reason          TEXT NOT NULL,
    fraction        REAL,
    PRIMARY KEY (search_id, list, idx)
);
"#,
    // 4: what each target ran as (the manifest's description and `run`
    // line), so settings that change results, such as a JVM's heap, are
    // kept with the run.
    r#"
ALTER TABLE run_targets ADD COLUMN description TEXT;
ALTER TABLE run_targets ADD COLUMN run_command TEXT;
"#,
    // 5 (budget): each measurement's resource budget and what the server's
    // cgroup counted under it. NULL for older rows and where no group was.
    r#"
ALTER TABLE measurements ADD COLUMN resources_cpus REAL;
ALTER TABLE measurements ADD COLUMN resources_memory_mib REAL;
ALTER TABLE measurements ADD COLUMN throttled_s REAL;
ALTER TABLE measurements ADD COLUMN throttled_periods INTEGER;
ALTER TABLE measurements ADD COLUMN oom_killed INTEGER;
ALTER TABLE measurements ADD COLUMN memory_peak_mib REAL;
ALTER TABLE measurements ADD COLUMN db_memory_peak_mib REAL;
"#,
    // 6: each measurement's warm-up: its wall time, and for an auto
    // (steady-state) warm-up whether the server got steady before the cap.
    // NULL for everything older (and `steady` for fixed warm-ups).
    r#"
ALTER TABLE measurements ADD COLUMN warmup_s REAL;
ALTER TABLE measurements ADD COLUMN steady INTEGER;
"#,
    // 7 (quiet): what other processes and the hypervisor took of the
    // measured CPUs, and whether that disturbed the measurement. NULL (and
    // not disturbed) for older rows.
    r#"
ALTER TABLE measurements ADD COLUMN others_cpu_share REAL;
ALTER TABLE measurements ADD COLUMN steal_share REAL;
ALTER TABLE measurements ADD COLUMN disturbed INTEGER NOT NULL DEFAULT 0;
"#,
    // 8 (service): a mix's request kinds at each capacity level (JSON of
    // `[KindRecord]`), for the curve's per-kind columns. NULL without a mix
    // and for older rows. A load level's kinds are in its summary's `routes`.
    r#"
ALTER TABLE capacity_levels ADD COLUMN routes TEXT;
"#,
    // 9: how much an auto warm-up's last windows varied (their coefficient
    // of variation): over the rule's bound the warm-up was noisy, and the
    // report says the machine's noise limits what the figure can tell.
    // NULL for fixed warm-ups and older rows.
    r#"
ALTER TABLE measurements ADD COLUMN warmup_cv REAL;
"#,
    // 10: the seed of a study's random target order (`order = "random"`,
    // randomized interleaved trials), so that the order can be drawn again.
    // NULL for other orders and older runs.
    r#"
ALTER TABLE runs ADD COLUMN order_seed INTEGER;
"#,
    // 11: the typed parts a level's probes add (JSON of `Parts`: cost at a
    // fixed rate, standing cost, overload and recovery). NULL when a level
    // has none and for older rows.
    r#"
ALTER TABLE measurements ADD COLUMN parts TEXT;
"#,
    // 12 (provenance): what each target's build resolved, the framework's
    // and main libraries' versions from its lockfile and the runtime's
    // (JSON of `Provenance`). NULL for targets never built and older runs.
    r#"
ALTER TABLE run_targets ADD COLUMN provenance TEXT;
"#,
    // 13 (cluster): the Kubernetes cluster a run used (JSON of
    // `ClusterRecord`), and which node ran the server of each start, per
    // target, scenario and repetition. NULL and no rows for local runs and
    // older ones.
    r#"
ALTER TABLE runs ADD COLUMN cluster TEXT;
CREATE TABLE placements (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    target     TEXT NOT NULL,
    scenario   TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    node       TEXT NOT NULL,
    PRIMARY KEY (run_id, target, scenario, repetition)
);
"#,
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The version `PRAGMA user_version` records, refused when newer than
/// this build's.
fn current_version(conn: &Connection) -> Result<i64, StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            found: current,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(current)
}

/// Applies the missing migrations. Returns an error for a newer database.
///
/// Safe when several processes open the same new database at once (each
/// run has its own lock file, so nothing else keeps them apart): the
/// migrations run in an IMMEDIATE transaction, which takes the write lock
/// before reading (the others wait for it under the busy timeout), and the
/// version is read again inside it, so that a process that waited finds the
/// schema made and applies nothing.
pub fn migrate(conn: &mut Connection, now: &str) -> Result<(), StoreError> {
    if current_version(conn)? == SCHEMA_VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current = current_version(&tx)?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql)?;
        let version = i as i64 + 1;
        tx.execute(
            "INSERT INTO schema_version (version, applied_at) VALUES (?1, ?2)",
            rusqlite::params![version, now],
        )?;
        tx.pragma_update(None, "user_version", version)?;
    }
    tx.commit()?;
    Ok(())
}

/// The highest version recorded in the `schema_version` table, if any.
pub fn recorded_version(conn: &Connection) -> Result<Option<i64>, rusqlite::Error> {
    conn.query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .optional()
        .map(Option::flatten)
}
