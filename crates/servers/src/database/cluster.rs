//! One throwaway PostgreSQL cluster: found in Debian's per-version folders,
//! `initdb`-ed into a fresh temporary folder (as the unprivileged `postgres`
//! user when this process is root), configured, started with `pg_ctl` on
//! 127.0.0.1 and a free port, seeded, and removed again by [`Cluster::stop`]
//! or on drop. The postmaster's process group gets a lifeline watchdog, so a
//! SIGKILLed shootout takes it down too; the folder such a run leaves behind
//! is removed by the next cluster start (see `stale`).

use super::access::{DatabaseAccess, APP_PASSWORD, APP_USER, DB_NAME};
use super::options::ClusterOptions;
use super::postmaster::{read_postmaster_pid, wait_group_gone};
use super::settings::{self, Setting};
use super::stale::{self, OwnerLock};
use crate::lifeline::{spawn_tied, Watchdog};
use crate::process::free_port;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The superuser `initdb` creates; the verifier and the seeding use it.
pub const SUPERUSER: &str = "postgres";
/// The OS user that owns the cluster when shootout runs as root.
pub const UNPRIVILEGED_USER: &str = "postgres";
/// Debian's package, named in the error when no server is installed.
pub const PACKAGE: &str = "postgresql";

/// Why a cluster could not be had.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error("no PostgreSQL server found in {}/*/bin (install the `{PACKAGE}` package: apt-get install {PACKAGE}, or set {POSTGRES_DIR_ENV})", .searched.display())]
    NotInstalled { searched: PathBuf },
    #[error("running as root, and initdb refuses root, but there is no `{UNPRIVILEGED_USER}` user to run the cluster as (install the `{PACKAGE}` package, which creates it)")]
    NoUnprivilegedUser,
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} failed ({status}): {detail}")]
    Command {
        what: &'static str,
        status: String,
        detail: String,
    },
    #[error("{what}: {}", sql_detail(source))]
    Sql {
        what: &'static str,
        #[source]
        source: postgres::Error,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DatabaseError {
    let what = what.into();
    move |source| DatabaseError::Io { what, source }
}

/// A server error's own message (postgres::Error's Display says only "db error").
fn sql_detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

fn sql(what: &'static str) -> impl FnOnce(postgres::Error) -> DatabaseError {
    move |source| DatabaseError::Sql { what, source }
}

/// What a run records about the database it measured against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseInfo {
    /// `SHOW server_version`, e.g. `15.14 (Debian 15.14-0+deb12u1)`.
    pub version: String,
    /// The settings shootout chose, as the server reports them.
    pub settings: Vec<Setting>,
    /// CPUs the cluster was pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
}

/// Live clusters (postmaster group, folder), for [`stop_all_clusters`].
static LIVE: Mutex<Vec<(i32, PathBuf)>> = Mutex::new(Vec::new());

fn live() -> std::sync::MutexGuard<'static, Vec<(i32, PathBuf)>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every cluster of this process and removes its folder: for a
/// command that must exit at once (a second Ctrl-C), where no destructor
/// runs. Returns how many there were.
pub fn stop_all_clusters() -> usize {
    let all = std::mem::take(&mut *live());
    for (pgid, dir) in &all {
        // SAFETY: kill only sends a signal, to a group this process started.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        wait_group_gone(*pgid, Duration::from_secs(5));
        let _ = fs::remove_dir_all(dir);
    }
    all.len()
}

/// The OS identity the cluster's programs run as.
#[derive(Debug, Clone, Copy)]
struct Owner {
    uid: u32,
    gid: u32,
}

/// A running, seeded cluster. Stopped and deleted by [`Cluster::stop`] or
/// when dropped.
#[derive(Debug)]
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    owner: Option<Owner>,
    postmaster: i32,
    pool_size: u32,
    info: DatabaseInfo,
    watchdog: Option<Watchdog>,
    _lock: OwnerLock,
    stopped: bool,
}

impl Cluster {
    /// Creates, starts and seeds a fresh cluster, after removing any that a
    /// dead shootout left behind.
    pub fn start(opts: &ClusterOptions) -> Result<Cluster, DatabaseError> {
        let bin = find_bin_dir().ok_or_else(|| DatabaseError::NotInstalled {
            searched: postgres_dir(),
        })?;
        let owner = cluster_owner()?;
        stale::remove_abandoned();
        let (dir, lock) = stale::create_dir().map_err(io("creating the cluster folder"))?;
        let port = free_port().map_err(io("finding a free port"))?;
        let mut cluster = Cluster {
            bin,
            dir,
            port,
            owner,
            postmaster: 0,
            pool_size: opts.pool_size,
            info: DatabaseInfo {
                version: String::new(),
                settings: Vec::new(),
                cpus: opts.cpus.clone(),
            },
            watchdog: None,
            _lock: lock,
            stopped: false,
        };
        // From here on, dropping `cluster` on an error removes what exists.
        cluster.init(opts)?;
        cluster.launch(&opts.cpus)?;
        cluster.seed()?;
        cluster.info = cluster.describe()?;
        Ok(cluster)
    }

    /// How servers and the verifier reach the seeded database.
    pub fn access(&self) -> DatabaseAccess {
        DatabaseAccess {
            app_url: format!(
                "postgres://{APP_USER}:{APP_PASSWORD}@127.0.0.1:{}/{DB_NAME}",
                self.port
            ),
            admin_url: self.admin_url(DB_NAME),
            pool_size: self.pool_size,
        }
    }

    /// The server version and settings, for the run's record.
    pub fn info(&self) -> &DatabaseInfo {
        &self.info
    }

    /// The postmaster's pid, which is also its process group: the backends
    /// are in it, so sampling the group measures the whole database.
    pub fn postmaster_pid(&self) -> i32 {
        self.postmaster
    }

    /// A handle on the cluster's own cgroup for a sampler (CPU time and
    /// memory peak of the postmaster and every backend); None without one.
    pub fn cgroup_reader(&self) -> Option<crate::cgroup::CgroupReader> {
        let pgid = self.postmaster;
        crate::cgroup::with_group(pgid, |_| crate::cgroup::CgroupReader { pgid })
    }

    /// The cluster's cgroup folders (empty without one or once stopped).
    pub fn cgroup_paths(&self) -> Vec<PathBuf> {
        crate::cgroup::with_group(self.postmaster, |g| {
            g.paths().into_iter().map(Path::to_path_buf).collect()
        })
        .unwrap_or_default()
    }

    /// The TCP port on 127.0.0.1 (also the unix socket's number).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary folder that holds the cluster (gone after stop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stops the server (fast shutdown, then SIGKILL to its group) and
    /// deletes the folder. Idempotent.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        // The cluster stays in `live()` until its folder is gone, so a
        // second Ctrl-C during this slow stop still removes it.
        if self.postmaster > 0 {
            let _ = self
                .tool("pg_ctl")
                .args(["stop", "-m", "fast", "-w", "-t", "15", "-D"])
                .arg(self.data())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            // Whatever pg_ctl left (a hung backend, a timeout) goes now.
            // SAFETY: kill only sends a signal; the group is the postmaster's.
            unsafe { libc::kill(-self.postmaster, libc::SIGKILL) };
            wait_group_gone(self.postmaster, Duration::from_secs(5));
            // Removing the cgroup kills anything that left the group.
            let _ = crate::cgroup::release(self.postmaster);
        }
        if let Some(w) = self.watchdog.take() {
            w.dismiss();
        }
        let _ = fs::remove_dir_all(&self.dir);
        live().retain(|(pgid, _)| *pgid != self.postmaster);
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn admin_url(&self, db: &str) -> String {
        format!(
            "host={} port={} user={SUPERUSER} dbname={db}",
            self.dir.display(),
            self.port
        )
    }

    /// A command for one of the server's programs, run as the cluster owner.
    fn tool(&self, name: &str) -> Command {
        let mut cmd = Command::new(self.bin.join(name));
        cmd.current_dir(&self.dir).env("LC_ALL", "C");
        if let Some(o) = self.owner {
            cmd.uid(o.uid).gid(o.gid);
        }
        cmd
    }

    fn init(&self, opts: &ClusterOptions) -> Result<(), DatabaseError> {
        if let Some(o) = self.owner {
            chown(&self.dir, o)?;
        }
        let out = self
            .tool("initdb")
            .arg("-D")
            .arg(self.data())
            .args(["-U", SUPERUSER, "-E", "UTF8", "--locale=C", "--no-sync"])
            .args(["--auth-local=trust", "--auth-host=scram-sha-256"])
            .output()
            .map_err(io("running initdb"))?;
        check("initdb", &out)?;
        let conf = settings::render(&settings::chosen(opts, self.port, &self.dir));
        let path = self.data().join("postgresql.auto.conf");
        fs::write(&path, conf).map_err(io(format!("writing {}", path.display())))?;
        if let Some(o) = self.owner {
            chown(&path, o)?;
        }
        Ok(())
    }

    fn launch(&mut self, cpus: &[usize]) -> Result<(), DatabaseError> {
        let log = self.dir.join("server.log");
        let mut cmd = self.tool("pg_ctl");
        cmd.args(["start", "-w", "-t", "60", "-D"])
            .arg(self.data())
            .arg("-l")
            .arg(&log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // pg_ctl starts inside the cluster's cgroup, so the postmaster and
        // every backend are born there; without one, /proc is sampled.
        let group = match crate::cgroup::make_database().and_then(|g| g.attacher().map(|a| (g, a)))
        {
            Ok((g, a)) => {
                a.install(&mut cmd);
                Some(g)
            }
            Err(_) => None,
        };
        let out = spawn_tied(cmd, cpus)
            .and_then(|c| c.wait_with_output())
            .map_err(io("running pg_ctl start"))?;
        // The pid file exists once the postmaster runs, even if pg_ctl then
        // failed: record it first so stop() can clean up.
        self.postmaster = read_postmaster_pid(&self.data()).unwrap_or(0);
        if self.postmaster > 0 {
            // Registered like a server's: Ctrl-C's kill_all_servers and
            // stop() remove it; on an error before this, its drop does.
            crate::cgroup::register(self.postmaster, group);
            live().push((self.postmaster, self.dir.clone()));
            // pg_ctl starts the postmaster in a new session: its pid is its
            // process group, which the backends inherit.
            self.watchdog = Some(Watchdog::start(self.postmaster).map_err(io("watchdog"))?);
        }
        if !out.status.success() {
            let mut detail = String::from_utf8_lossy(&out.stderr).trim().to_string();
            detail.push('\n');
            detail.push_str(&crate::tail::log_tail(&log, 10));
            return Err(DatabaseError::Command {
                what: "pg_ctl start",
                status: out.status.to_string(),
                detail,
            });
        }
        Ok(())
    }

    fn connect(&self, db: &str) -> Result<postgres::Client, DatabaseError> {
        postgres::Client::connect(&self.admin_url(db), postgres::NoTls)
            .map_err(sql("connecting as the superuser"))
    }

    fn seed(&self) -> Result<(), DatabaseError> {
        let mut admin = self.connect("postgres")?;
        // Two calls: CREATE DATABASE cannot run in the implicit transaction
        // of a multi-statement batch.
        admin
            .batch_execute(&format!(
                "CREATE ROLE {APP_USER} LOGIN PASSWORD '{APP_PASSWORD}'"
            ))
            .map_err(sql("creating the role"))?;
        admin
            .batch_execute(&format!("CREATE DATABASE {DB_NAME}"))
            .map_err(sql("creating the database"))?;
        let mut db = self.connect(DB_NAME)?;
        db.batch_execute(include_str!("seed.sql"))
            .map_err(sql("loading seed.sql"))?;
        db.batch_execute("CREATE EXTENSION pg_stat_statements")
            .map_err(sql("creating the pg_stat_statements extension"))?;
        Ok(())
    }

    fn describe(&self) -> Result<DatabaseInfo, DatabaseError> {
        let mut db = self.connect(DB_NAME)?;
        read_info(&mut db, self.info.cpus.clone())
    }
}

/// What a run records about the database `db` is connected to, local or
/// not (`super::remote`): `SHOW server_version` and the chosen settings as
/// it reports them.
pub(crate) fn read_info(
    db: &mut postgres::Client,
    cpus: Vec<usize>,
) -> Result<DatabaseInfo, DatabaseError> {
    let version: String = db
        .query_one("SHOW server_version", &[])
        .map_err(sql("reading the server version"))?
        .get(0);
    Ok(DatabaseInfo {
        version,
        settings: settings::reported(db).map_err(sql("reading pg_settings"))?,
        cpus,
    })
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Where Debian installs PostgreSQL, one folder per major version;
/// [`POSTGRES_DIR_ENV`] names another such folder.
pub const POSTGRES_DIR: &str = "/usr/lib/postgresql";
/// Environment variable that replaces [`POSTGRES_DIR`].
pub const POSTGRES_DIR_ENV: &str = "SHOOTOUT_POSTGRES_DIR";

/// The folder searched for PostgreSQL versions.
pub fn postgres_dir() -> PathBuf {
    std::env::var_os(POSTGRES_DIR_ENV).map_or_else(|| PathBuf::from(POSTGRES_DIR), PathBuf::from)
}

/// The newest `<postgres_dir>/<major>/bin` that has a server and initdb.
pub fn find_bin_dir() -> Option<PathBuf> {
    newest_bin_dir(&postgres_dir())
}

fn newest_bin_dir(root: &Path) -> Option<PathBuf> {
    let mut found: Vec<(Vec<u32>, PathBuf)> = fs::read_dir(root)
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let version = e
                .file_name()
                .to_str()?
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<Vec<u32>>>()?;
            let bin = e.path().join("bin");
            let complete = ["postgres", "initdb", "pg_ctl"]
                .iter()
                .all(|p| bin.join(p).is_file());
            complete.then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

/// Root runs the cluster as the unprivileged user; anyone else as themself.
fn cluster_owner() -> Result<Option<Owner>, DatabaseError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let name = std::ffi::CString::new(UNPRIVILEGED_USER).expect("no NUL in a constant");
    // SAFETY: getpwnam returns null or a pointer to a static record that we
    // copy from at once, before any other passwd call.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    if pw.is_null() {
        return Err(DatabaseError::NoUnprivilegedUser);
    }
    // SAFETY: pw is non-null and points at a valid passwd record.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Ok(Some(Owner { uid, gid }))
}

fn chown(path: &Path, o: Owner) -> Result<(), DatabaseError> {
    std::os::unix::fs::chown(path, Some(o.uid), Some(o.gid)).map_err(io(format!(
        "handing {} to {UNPRIVILEGED_USER}",
        path.display()
    )))
}

fn check(what: &'static str, out: &Output) -> Result<(), DatabaseError> {
    if out.status.success() {
        return Ok(());
    }
    let mut detail = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if detail.is_empty() {
        detail = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }
    Err(DatabaseError::Command {
        what,
        status: out.status.to_string(),
        detail,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_complete_version_is_chosen() {
        let root = crate::tempdir::Dir::new();
        for (v, complete) in [("9.6", true), ("15", true), ("16", false), ("13", true)] {
            let bin = root.path().join(v).join("bin");
            fs::create_dir_all(&bin).unwrap();
            let tools: &[&str] = if complete {
                &["postgres", "initdb", "pg_ctl"]
            } else {
                &["postgres"]
            };
            for t in tools {
                fs::write(bin.join(t), "").unwrap();
            }
        }
        fs::create_dir_all(root.path().join("common")).unwrap();
        let bin = newest_bin_dir(root.path()).unwrap();
        assert_eq!(bin, root.path().join("15").join("bin"));
        assert_eq!(newest_bin_dir(&root.path().join("none")), None);
    }
}
