//! The database a study's database scenarios run against: the pool size the
//! servers get, starting the runner-owned PostgreSQL (pinned beside the
//! servers, or with `--kubernetes` a pod on the cluster's `db` node:
//! `place::postgres`) before anything is measured, what the run records
//! about it, and what happens without one: a machine with no PostgreSQL
//! drops the database scenarios and says so once, and every other scenario
//! still runs.

use crate::event::{DatabaseEvent, Event, Observer};
use crate::place::kubectl::KubeOptions;
use crate::place::postgres::{PodDatabase, PodDatabaseError};
use crate::place::Meter;
use shootout_servers::database::{self, Cluster, ClusterOptions, DatabaseError, DatabaseInfo};
use shootout_servers::DatabaseAccess;
use shootout_store::{DatabaseRecord, Pinning};
use shootout_study::Study;
use std::sync::Arc;

/// `DB_POOL_SIZE` per server CPU when a study does not set one: three sync
/// workers on one core still get a connection each.
pub const POOL_PER_SERVER_CPU: u32 = 4;

/// The pool size a study gives its servers.
pub fn pool_size(study: &Study, pinning: &Pinning) -> u32 {
    study
        .db_pool_size
        .unwrap_or(POOL_PER_SERVER_CPU * pinning.server_cpus.len().max(1) as u32)
}

/// A running database and what servers and samplers need from it: a
/// cluster this process started, or (`--kubernetes`) a PostgreSQL pod.
#[derive(Debug)]
pub struct Database {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Local(Cluster),
    Pod(PodDatabase),
}

impl Database {
    pub fn access(&self) -> DatabaseAccess {
        match &self.inner {
            Inner::Local(c) => c.access(),
            Inner::Pod(p) => p.access(),
        }
    }

    /// Its CPU and memory: the cluster's process tree and cgroup, or the
    /// pod's as its kubelet reports them.
    pub(crate) fn meter(&self) -> Arc<dyn Meter> {
        match &self.inner {
            Inner::Local(c) => {
                let pm = c.postmaster_pid();
                Arc::new(crate::place::local::TreeMeter {
                    pgid: pm,
                    root: pm,
                    cgroup: c.cgroup_reader(),
                })
            }
            Inner::Pod(p) => p.meter(),
        }
    }

    fn info(&self) -> &DatabaseInfo {
        match &self.inner {
            Inner::Local(c) => c.info(),
            Inner::Pod(p) => p.info(),
        }
    }

    pub fn record(&self) -> DatabaseRecord {
        let info = self.info();
        DatabaseRecord {
            version: info.version.clone(),
            settings: info
                .settings
                .iter()
                .map(|s| (s.name.clone(), s.value.clone()))
                .collect(),
            cpus: info.cpus.clone(),
            pool_size: self.access().pool_size,
        }
    }
}

/// Starts the database when the study needs one. Without PostgreSQL, the
/// database scenarios are removed from `study` (and the caller is told),
/// unless nothing would be left to measure; any other failure to start is
/// an error, since it would hide a problem.
pub fn start_for(
    study: &mut Study,
    pinning: &Pinning,
    kubernetes: Option<&KubeOptions>,
    observer: &dyn Observer,
) -> Result<Option<Database>, StartDatabaseError> {
    if !study.needs_database() {
        return Ok(None);
    }
    let pool = pool_size(study, pinning);
    if let Some(kube) = kubernetes {
        observer.event(&Event::Database(DatabaseEvent::Starting));
        let opts = ClusterOptions::for_pool(pool, Vec::new());
        let pod = PodDatabase::start(kube, &opts, pinning.server_cpus.len())?;
        observer.event(&Event::Database(DatabaseEvent::Started {
            version: &pod.info().version,
            cpus: &[],
            pool_size: pool,
            shares_server_cpus: false,
        }));
        observer.event(&Event::Placed {
            description: &format!("PostgreSQL runs as {}", pod.describe()),
        });
        return Ok(Some(Database {
            inner: Inner::Pod(pod),
        }));
    }
    // Without PostgreSQL the one line is the skip, not a start that fails.
    let started = match database::find_bin_dir() {
        None => Err(DatabaseError::NotInstalled {
            searched: database::postgres_dir(),
        }),
        Some(_) => {
            observer.event(&Event::Database(DatabaseEvent::Starting));
            Cluster::start(&ClusterOptions::for_pool(pool, pinning.server_cpus.clone()))
        }
    };
    match started {
        Ok(cluster) => {
            let info = cluster.info();
            observer.event(&Event::Database(DatabaseEvent::Started {
                version: &info.version,
                cpus: &info.cpus,
                pool_size: pool,
                shares_server_cpus: info.cpus.iter().any(|c| pinning.server_cpus.contains(c)),
            }));
            Ok(Some(Database {
                inner: Inner::Local(cluster),
            }))
        }
        // A study of database scenarios only would measure nothing.
        Err(e @ DatabaseError::NotInstalled { .. })
            if study.scenarios.iter().any(|s| !s.needs_database()) =>
        {
            let before = study.scenarios.len();
            study.scenarios.retain(|s| !s.needs_database());
            observer.event(&Event::Database(DatabaseEvent::Unavailable {
                reason: &e.to_string(),
                skipped_scenarios: before - study.scenarios.len(),
            }));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Why the run's database could not be started.
#[derive(Debug, thiserror::Error)]
pub enum StartDatabaseError {
    #[error(transparent)]
    Local(#[from] DatabaseError),
    #[error(transparent)]
    Pod(#[from] PodDatabaseError),
}
