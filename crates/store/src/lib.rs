//! The SQLite history of runs and measurements. One file (by default
//! `results/shootout.db`) in WAL mode holds every run, the status of each
//! target in it and every measurement, each committed the moment it is
//! recorded so that a killed run loses at most the measurement in flight.
//! Histograms are stored as HdrHistogram V2 blobs so that repetitions and
//! runs can be merged exactly later. See [`Store`] for the API and
//! [`model`] for the data; capacity searches are kept in their own
//! tables ([`CapacitySearch`]).

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod calibration;
mod capacity;
mod cluster;
mod column;
mod error;
mod measurement_row;
pub mod model;
mod open;
pub mod parts;
mod schema;
mod starts;
mod time;

pub use calibration::CALIBRATION_STUDY;
pub use capacity::CapacitySearch;
pub use cluster::{
    ClusterParseError, ClusterRecord, NodeRecord, Placement, CPU_MODEL_LABEL, ROLE_LABEL,
    ROLE_LABEL_PREFIX,
};
pub use error::{HistogramError, Result, StoreError};
pub use model::{
    decode_histogram, encode_histogram, Calibration, DatabaseRecord, Host, Measurement, NewRun,
    PackageVersion, Pinning, Provenance, Recorded, Run, RunData, RunListing, RunStatus,
    TargetRecord, TargetStatus, OTHERS_CPU_LIMIT, STEAL_LIMIT,
};
pub use open::{busy_wait, BUSY_WAIT};
pub use schema::SCHEMA_VERSION;
pub use starts::{
    doubtful_pairs, is_hold, start_cells, target_width, throughput, Doubt, MIN_RANKED_S,
};
pub use time::{now_rfc3339, now_rfc3339_millis, rfc3339_from_unix, unix_from_rfc3339};

use column::{bad_col, json_col, opt_json_col};
use rusqlite::{params, Connection, OptionalExtension, Row};
use std::path::{Path, PathBuf};

/// The database used when no `--db` is given, relative to the working directory.
pub const DEFAULT_DB_PATH: &str = "results/shootout.db";

/// An open history database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating it and its folder if needed) and migrates the
    /// database, for a run that writes. A file that is not a shootout
    /// database is refused untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        Store::open_at(path).map_err(|e| e.at(path))
    }

    fn open_at(path: &Path) -> Result<Store> {
        let path = path.to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Dir(path.clone(), e))?;
        }
        open::inspect(&path)?;
        let mut conn = Connection::open(&path)?;
        conn.busy_timeout(busy_wait())?;
        // Before WAL or a migration writes anything.
        open::check_ours(&conn, &path, true)?;
        open::use_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        schema::migrate(&mut conn, &now_rfc3339())?;
        Ok(Store { conn, path })
    }

    /// Opens an existing shootout database to read (`history`, `report`,
    /// `compare`): read-only, refusing a missing file or one that is not a
    /// shootout database, untouched. A database of an older schema is
    /// upgraded first (it is ours; reading it needs the current columns).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        Store::open_existing_at(path).map_err(|e| e.at(path))
    }

    fn open_existing_at(path: &Path) -> Result<Store> {
        let path = path.to_path_buf();
        let conn = open::read_only(&path)?;
        let version = schema::recorded_version(&conn)?.unwrap_or(0);
        if version < SCHEMA_VERSION {
            drop(conn);
            Store::open(&path)?;
            return Store::open_existing(&path);
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        Ok(Store { conn, path })
    }

    /// The file this store reads and writes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version recorded in the database.
    pub fn schema_version(&self) -> Result<i64> {
        Ok(schema::recorded_version(&self.conn)?.unwrap_or(0))
    }

    /// Starts a run with status `running` and returns its id.
    pub fn begin_run(&self, run: &NewRun) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs (study, started_at, status, tool_version, git_commit,
                host_cpu_model, host_cores, host_mem_total_mib, host_kernel, host_hostname,
                server_cpus, generator_cpus, scale, study_text, database, order_seed)
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                run.study,
                run.started_at,
                run.tool_version,
                run.git_commit,
                run.host.cpu_model,
                run.host.cores as i64,
                run.host.mem_total_mib as i64,
                run.host.kernel,
                run.host.hostname,
                serde_json::to_string(&run.pinning.server_cpus)?,
                serde_json::to_string(&run.pinning.generator_cpus)?,
                run.scale,
                run.study_text,
                run.database
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
                run.order_seed.map(|s| s as i64),
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records (or replaces) how a target fared in a run.
    pub fn record_target(&self, run_id: i64, t: &TargetRecord) -> Result<()> {
        let verify = t.verify.as_ref().map(serde_json::to_string).transpose()?;
        let provenance = t
            .provenance
            .as_ref()
            .map(serde_json::to_string)
            .transpose()?;
        self.conn.execute(
            "INSERT OR REPLACE INTO run_targets (run_id, target, language, framework, status,
                reason, log_tail, verify, footprint_bytes, build_s, description, run_command,
                provenance)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run_id,
                t.target,
                t.language,
                t.framework,
                t.status.as_str(),
                t.reason,
                t.log_tail,
                verify,
                t.footprint_bytes.map(|b| b as i64),
                t.build_s,
                t.description,
                t.run_command,
                provenance,
            ],
        )?;
        Ok(())
    }

    /// Records one finished measurement (committed at once).
    pub fn record_measurement(&self, run_id: i64, m: &Measurement) -> Result<()> {
        measurement_row::insert(&self.conn, run_id, m)
    }

    /// Records (or replaces) the Kubernetes cluster run `run_id` used
    /// ([`ClusterRecord::from_kubectl`] reads it from kubectl).
    pub fn record_cluster(&self, run_id: i64, cluster: &ClusterRecord) -> Result<()> {
        if cluster::record(&self.conn, run_id, cluster)? == 0 {
            return Err(StoreError::NoSuchRun(run_id.to_string()));
        }
        Ok(())
    }

    /// Records (or replaces) which node ran the server of one start of
    /// run `run_id` (committed at once): call it once per scenario the
    /// start serves.
    pub fn record_placement(&self, run_id: i64, placement: &Placement) -> Result<()> {
        cluster::record_placement(&self.conn, run_id, placement)
    }

    /// Ends a run with its final status and the current time.
    pub fn finish_run(&self, run_id: i64, status: RunStatus) -> Result<()> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?1, finished_at = ?2 WHERE id = ?3",
            params![status.as_str(), now_rfc3339(), run_id],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run_id.to_string()));
        }
        Ok(())
    }

    /// Every run, newest first, with its target and measurement counts.
    pub fn runs(&self) -> Result<Vec<RunListing>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.study, r.started_at, r.finished_at, r.status, r.tool_version,
                r.git_commit, r.host_cpu_model, r.host_cores, r.host_mem_total_mib,
                r.host_kernel, r.host_hostname, r.scale,
                (SELECT COUNT(*) FROM run_targets t WHERE t.run_id = r.id),
                (SELECT COUNT(*) FROM run_targets t WHERE t.run_id = r.id AND t.status = 'ok'),
                (SELECT COUNT(*) FROM measurements m WHERE m.run_id = r.id)
             FROM runs r ORDER BY r.id DESC",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(RunListing {
                id: r.get(0)?,
                study: r.get(1)?,
                started_at: r.get(2)?,
                finished_at: r.get(3)?,
                status: run_status(r, 4)?,
                tool_version: r.get(5)?,
                git_commit: r.get(6)?,
                host: host_from(r, 7)?,
                scale: r.get(12)?,
                targets: r.get::<_, i64>(13)? as u64,
                targets_ok: r.get::<_, i64>(14)? as u64,
                measurements: r.get::<_, i64>(15)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Turns `latest` or a run id into the id of a stored run.
    pub fn resolve(&self, spec: &str) -> Result<i64> {
        let spec = spec.trim();
        let found: Option<i64> = if spec.eq_ignore_ascii_case("latest") {
            self.conn
                .query_row("SELECT MAX(id) FROM runs", [], |r| r.get(0))
                .optional()?
                .flatten()
        } else if let Ok(id) = spec.trim_start_matches('#').parse::<i64>() {
            self.conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()?
        } else {
            None
        };
        found.ok_or_else(|| StoreError::NoSuchRun(spec.to_string()))
    }

    /// One run without its targets and measurements.
    pub fn run(&self, id: i64) -> Result<Run> {
        self.conn
            .query_row(
                "SELECT id, study, started_at, finished_at, status, tool_version, git_commit,
                    host_cpu_model, host_cores, host_mem_total_mib, host_kernel, host_hostname,
                    server_cpus, generator_cpus, scale, study_text, database, order_seed,
                    cluster
                 FROM runs WHERE id = ?1",
                [id],
                |r| {
                    Ok(Run {
                        id: r.get(0)?,
                        study: r.get(1)?,
                        started_at: r.get(2)?,
                        finished_at: r.get(3)?,
                        status: run_status(r, 4)?,
                        tool_version: r.get(5)?,
                        git_commit: r.get(6)?,
                        host: host_from(r, 7)?,
                        pinning: Pinning {
                            server_cpus: json_col(r, 12)?,
                            generator_cpus: json_col(r, 13)?,
                        },
                        scale: r.get(14)?,
                        study_text: r.get(15)?,
                        database: opt_json_col(r, 16)?,
                        order_seed: r.get::<_, Option<i64>>(17)?.map(|s| s as u64),
                        cluster: opt_json_col(r, 18)?,
                    })
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NoSuchRun(id.to_string()))
    }

    /// Everything about one run, histograms decoded.
    pub fn load_run(&self, id: i64) -> Result<RunData> {
        let run = self.run(id)?;
        let targets = self.targets(id)?;
        let measurements = self.measurements(id)?;
        let capacity = self.capacity_searches(id)?;
        let calibration = self.calibration(&run.host, Some(id))?;
        Ok(RunData {
            run,
            targets,
            measurements,
            capacity,
            calibration,
            placements: cluster::placements(&self.conn, id)?,
        })
    }

    /// One run's header, targets and measured figures, for a listing of
    /// many runs (`shootout history`): without what is most of a run's
    /// size to read and decode. Each measurement's `histogram` is empty,
    /// its `histogram_uncorrected` None and its `timeline` empty; the
    /// capacity searches are left out and the calibration is None. A
    /// report of the run itself reads [`Store::load_run`].
    pub fn load_run_figures(&self, id: i64) -> Result<RunData> {
        Ok(RunData {
            run: self.run(id)?,
            targets: self.targets(id)?,
            measurements: measurement_row::select(&self.conn, id, measurement_row::Read::Figures)?,
            capacity: Vec::new(),
            calibration: None,
            placements: cluster::placements(&self.conn, id)?,
        })
    }

    /// How each target fared in run `id`, by name.
    fn targets(&self, id: i64) -> Result<Vec<TargetRecord>> {
        let mut stmt = self.conn.prepare(
            "SELECT target, language, framework, status, reason, log_tail, verify,
                footprint_bytes, build_s, description, run_command, provenance
             FROM run_targets WHERE run_id = ?1 ORDER BY target",
        )?;
        let targets = stmt
            .query_map([id], |r| {
                let status: String = r.get(3)?;
                let verify: Option<String> = r.get(6)?;
                Ok(TargetRecord {
                    target: r.get(0)?,
                    language: r.get(1)?,
                    framework: r.get(2)?,
                    status: TargetStatus::parse(&status)
                        .ok_or_else(|| bad_col(3, format!("target status '{status}'")))?,
                    reason: r.get(4)?,
                    log_tail: r.get(5)?,
                    verify: verify
                        .map(|v| serde_json::from_str(&v))
                        .transpose()
                        .map_err(|e| bad_col(6, e.to_string()))?,
                    footprint_bytes: r.get::<_, Option<i64>>(7)?.map(|b| b as u64),
                    build_s: r.get(8)?,
                    description: r.get(9)?,
                    run_command: r.get(10)?,
                    provenance: opt_json_col(r, 11)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(targets)
    }

    /// The latest complete calibration of `host` (`shootout calibrate`),
    /// other than run `except`; None when the host was never calibrated.
    pub fn calibration(&self, host: &Host, except: Option<i64>) -> Result<Option<Calibration>> {
        let runs = self.runs()?;
        for r in calibration::candidates(&runs, host, except) {
            let ms = self.measurements(r.id)?;
            if let Some(c) = Calibration::of(r.id, &r.started_at, &ms) {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }

    /// Records a finished capacity search and its levels (committed at once).
    pub fn record_capacity(&self, run_id: i64, s: &CapacitySearch) -> Result<()> {
        capacity::record(&self.conn, run_id, s)
    }

    /// A run's capacity searches, ordered by target, scenario, repetition.
    pub fn capacity_searches(&self, run_id: i64) -> Result<Vec<CapacitySearch>> {
        capacity::searches(&self.conn, run_id)
    }

    /// The measurements of one run, ordered by target, scenario, level, repetition.
    pub fn measurements(&self, run_id: i64) -> Result<Vec<Measurement>> {
        measurement_row::select(&self.conn, run_id, measurement_row::Read::Full)
    }
}

fn run_status(r: &Row<'_>, col: usize) -> rusqlite::Result<RunStatus> {
    let s: String = r.get(col)?;
    RunStatus::parse(&s).ok_or_else(|| bad_col(col, format!("run status '{s}'")))
}

fn host_from(r: &Row<'_>, first: usize) -> rusqlite::Result<Host> {
    Ok(Host {
        cpu_model: r.get(first)?,
        cores: r.get::<_, i64>(first + 1)? as usize,
        mem_total_mib: r.get::<_, i64>(first + 2)? as u64,
        kernel: r.get(first + 3)?,
        hostname: r.get(first + 4)?,
    })
}

#[cfg(test)]
mod capacity_tests;
#[cfg(test)]
mod open_tests;
#[cfg(test)]
mod tests;
