//! The lifecycle of a running reference server: pick a free port, start the
//! target's `run` command in its own process group with its output in a log,
//! wait until it answers, and stop the whole group (SIGTERM, 5 s grace,
//! SIGKILL), reporting whether anything survived. Each start also runs in a
//! cgroup of its own where one can be made ([`crate::cgroup`]), removed when
//! the server stops, and gets a temporary folder of its own as `TMPDIR`
//! ([`crate::tempdir`]), removed when it stops. A process-wide registry of live servers lets a Ctrl-C
//! handler kill every server this process started and remove its groups;
//! [`crate::lifeline`] makes sure they die with this process too.

use std::collections::BTreeSet;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::cgroup::{self, Limits};
use crate::http;
use crate::lifeline::{spawn_tied, Watchdog};
use crate::manifest::Target;
use crate::tail::log_tail;
use crate::tempdir::{self, ServerTmp};
use shootout_cgroup::{Budget, CgroupError, Counters, Group};

/// How long a server gets between SIGTERM and SIGKILL (SPEC.md, Startup).
pub const GRACE: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(50);

/// SIGKILLs every live server group this process started and removes their
/// cgroups (killing whatever escaped the process group); returns how many.
/// Meant for a Ctrl-C handler running on an ordinary thread.
pub fn kill_all_servers() -> usize {
    let servers = cgroup::take_all();
    for (pgid, _) in &servers {
        signal_group(*pgid, libc::SIGKILL);
    }
    let count = servers.len();
    for group in servers.into_iter().filter_map(|(_, g)| g) {
        // Best effort while stopping everything; a failed removal leaves a
        // folder that the next shootout's sweep removes.
        let _ = group.remove();
    }
    // The caller may exit without running the servers' destructors.
    crate::tempdir::remove_all();
    count
}

/// A port that was free a moment ago on 127.0.0.1 (bound, read, released).
pub fn free_port() -> std::io::Result<u16> {
    Ok(free_ports::<1>()?[0])
}

/// `N` distinct ports that were free a moment ago on 127.0.0.1: each is
/// held until all are read, since two picks one after the other may be
/// handed the same released port (a server then failed to bind its TLS
/// port on its own cleartext one).
pub fn free_ports<const N: usize>() -> std::io::Result<[u16; N]> {
    let mut held = Vec::with_capacity(N);
    let mut ports = [0; N];
    for port in &mut ports {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        *port = listener.local_addr()?.port();
        held.push(listener);
    }
    Ok(ports)
}

/// What happened when a server was stopped.
#[derive(Debug, Clone)]
pub struct StopReport {
    /// The whole group was gone before the grace period ran out.
    pub graceful: bool,
    /// From SIGTERM until the group was gone (or given up on).
    pub took: Duration,
    /// The exit status of the started process, once reaped.
    pub status: Option<ExitStatus>,
    /// Processes of the group still alive after SIGKILL, or a cgroup that
    /// could not be emptied and removed.
    pub leftovers: bool,
    /// Why the server's cgroup could not be removed (None: removed, or the
    /// server had none).
    pub cgroup_removal: Option<String>,
}

/// Why a server could not be started or never became ready.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("creating {path}: {source}")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("creating the temporary folder of {target}: {source}")]
    TempDir {
        target: String,
        source: std::io::Error,
    },
    #[error("starting {target}: sh -c {run:?}: {source}")]
    Spawn {
        target: String,
        run: String,
        source: std::io::Error,
    },
    /// A budget was asked for but no cgroup can be made to enforce it.
    #[error("{target}: a resources budget needs a cgroup: {reason}")]
    Budget { target: String, reason: String },
    #[error("{target}: cannot start its watchdog: {source}")]
    Watchdog {
        target: String,
        source: std::io::Error,
    },
    #[error("{target}: {source}")]
    Wait {
        target: String,
        source: std::io::Error,
    },
    #[error("{target} exited with {status} before it was ready; log {log}:\n{tail}", log = .log.display())]
    Exited {
        target: String,
        status: ExitStatus,
        log: PathBuf,
        tail: String,
    },
    /// A place other than this machine's processes refused or lost the
    /// start (a pod not scheduled, its image missing, its container ended).
    #[error("{target} on {place}: {detail}")]
    Elsewhere {
        target: String,
        place: String,
        detail: String,
    },
    #[error("{target} not ready after {timeout:.0?} ({last}); log {log}:\n{tail}", log = .log.display())]
    NotReady {
        target: String,
        timeout: Duration,
        last: String,
        log: PathBuf,
        tail: String,
    },
}

/// A started reference server; dropping it kills its process group.
#[derive(Debug)]
pub struct Server {
    name: String,
    child: Child,
    pgid: i32,
    watchdog: Option<Watchdog>,
    addr: SocketAddr,
    ready: String,
    log: PathBuf,
    stopped: bool,
    /// Why this start has no cgroup (None: it has one).
    no_cgroup: Option<CgroupError>,
    /// Its `TMPDIR`, removed once it is stopped.
    tmp: Option<ServerTmp>,
}

/// How many CPUs a server is given (targets/SPEC.md `SERVER_CPUS`): the
/// CPUs it is pinned to, or, unpinned, every CPU this process may use.
/// Each target sizes its workers from it as its framework's docs say.
pub fn server_cpus(pinned: &[usize]) -> usize {
    let distinct: BTreeSet<usize> = pinned.iter().copied().collect();
    if distinct.is_empty() {
        shootout_engine::affinity::allowed_cpus().len().max(1)
    } else {
        distinct.len()
    }
}

/// [`server_cpus`] under a CPU quota of `quota` CPUs: the quota rounded
/// up (1.5 CPUs of time is best used by two threads), never more than the
/// CPUs it may run on, at least 1.
pub fn budget_cpus(pinned: &[usize], quota: Option<f64>) -> usize {
    let cpus = server_cpus(pinned);
    match quota {
        Some(q) if q.is_finite() && q > 0.0 => (q.ceil() as usize).clamp(1, cpus),
        _ => cpus,
    }
}

impl Server {
    /// Starts `sh -c <run>` in the target's folder with `PORT` and
    /// `HOST=127.0.0.1`, in a new process group, output appended to `log`.
    pub fn start(target: &Target, port: u16, log: &Path) -> Result<Server, StartError> {
        Server::start_pinned(target, port, log, &[])
    }

    /// [`Server::start`], pinned to `cpus` (none: not pinned).
    pub fn start_pinned(
        target: &Target,
        port: u16,
        log: &Path,
        cpus: &[usize],
    ) -> Result<Server, StartError> {
        Server::start_env(target, port, log, cpus, &[])
    }

    /// [`Server::start_pinned`] with extra environment variables (e.g.
    /// `DATABASE_URL` and `DB_POOL_SIZE`), set after `PORT`, `HOST` and
    /// `SERVER_CPUS` (so a caller may override any of them).
    pub fn start_env(
        target: &Target,
        port: u16,
        log: &Path,
        cpus: &[usize],
        env: &[(String, String)],
    ) -> Result<Server, StartError> {
        Server::start_limited(target, port, log, cpus, env, &Limits::default())
    }

    /// [`Server::start_env`] in a cgroup with `limits` (a CPU quota and a
    /// memory limit, changed later by [`Server::set_budget`]);
    /// `SERVER_CPUS` is [`budget_cpus`] of the starting quota. With limits,
    /// a start where no cgroup can be made fails rather than run unlimited.
    pub fn start_limited(
        target: &Target,
        port: u16,
        log: &Path,
        cpus: &[usize],
        env: &[(String, String)],
        limits: &Limits,
    ) -> Result<Server, StartError> {
        let log_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StartError::Log { path, source }
        };
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).map_err(log_err(dir))?;
        }
        let out = File::create(log).map_err(log_err(log))?;
        let err = out.try_clone().map_err(log_err(log))?;
        let tmp = ServerTmp::create(&target.name).map_err(|source| StartError::TempDir {
            target: target.name.clone(),
            source,
        })?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&target.run)
            .current_dir(&target.dir)
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            .env(
                "SERVER_CPUS",
                budget_cpus(cpus, limits.budget.cpus).to_string(),
            )
            .envs(tempdir::server_env(tmp.path()))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let (group, no_cgroup) = enter_cgroup(&target.name, limits, &mut cmd);
        if let (Some(why), true) = (&no_cgroup, limits.any()) {
            return Err(StartError::Budget {
                target: target.name.clone(),
                reason: why.to_string(),
            });
        }
        // On error `group` drops here, which removes it.
        let mut child = spawn_tied(cmd, cpus).map_err(|source| StartError::Spawn {
            target: target.name.clone(),
            run: target.run.clone(),
            source,
        })?;
        // With process_group(0) the group id is the child's pid.
        let pgid = child.id() as i32;
        let watchdog = match Watchdog::start(pgid) {
            Ok(w) => w,
            Err(source) => {
                signal_group(pgid, libc::SIGKILL);
                let _ = child.wait();
                return Err(StartError::Watchdog {
                    target: target.name.clone(),
                    source,
                });
            }
        };
        cgroup::register(pgid, group);
        Ok(Server {
            name: target.name.clone(),
            child,
            pgid,
            watchdog: Some(watchdog),
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            ready: target.ready.clone(),
            log: log.to_path_buf(),
            stopped: false,
            no_cgroup,
            tmp: Some(tmp),
        })
    }

    /// Why this server runs without a cgroup of its own (not root, a
    /// read-only cgroupfs, a missing controller, ...); None when it has one.
    /// One line, for the caller to say why it samples `/proc` instead.
    pub fn cgroup_unavailable(&self) -> Option<&CgroupError> {
        self.no_cgroup.as_ref()
    }

    /// The server's cgroup folders (one per hierarchy on v1, one on v2);
    /// empty when it has none or it is already removed.
    pub fn cgroup_paths(&self) -> Vec<PathBuf> {
        cgroup::with_group(self.pgid, |g| {
            g.paths().into_iter().map(Path::to_path_buf).collect()
        })
        .unwrap_or_default()
    }

    /// A handle on the server's cgroup for another thread; None when it
    /// has none.
    pub fn cgroup_reader(&self) -> Option<cgroup::CgroupReader> {
        cgroup::with_group(self.pgid, |_| cgroup::CgroupReader { pgid: self.pgid })
    }

    /// The processes now in the server's cgroup; None when it has none.
    pub fn cgroup_pids(&self) -> Option<Result<Vec<u32>, CgroupError>> {
        cgroup::with_group(self.pgid, Group::pids)
    }

    /// The kernel's counters of the server's cgroup (CPU time of every
    /// process it ever ran, throttling, peak memory, OOM kills); None when
    /// it has none.
    pub fn cgroup_counters(&self) -> Option<Result<Counters, CgroupError>> {
        cgroup::with_group(self.pgid, Group::counters)
    }

    /// Applies `budget` to the server's cgroup (between load levels);
    /// None when it has none.
    pub fn set_budget(&self, budget: &Budget) -> Option<Result<(), CgroupError>> {
        cgroup::with_group_mut(self.pgid, |g| g.set_budget(budget))
    }

    /// The budget in force (None: no cgroup).
    pub fn budget(&self) -> Option<Budget> {
        cgroup::with_group(self.pgid, |g| g.budget().clone())
    }

    /// Restarts the cgroup's memory high-water mark (v1; see
    /// [`Group::reset_peak`]); None when the server has no cgroup.
    pub fn reset_cgroup_peak(&self) -> Option<Result<bool, CgroupError>> {
        cgroup::with_group(self.pgid, Group::reset_peak)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How the server's first process ended, if it has (reaped here).
    pub fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The server's processes now: its cgroup's when it has one (forked
    /// workers that left the process group included), else its process
    /// group's.
    pub fn pids(&self) -> Vec<u32> {
        match self.cgroup_pids() {
            Some(Ok(pids)) if !pids.is_empty() => pids,
            _ => crate::listener::group_members(self.pgid),
        }
    }

    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Where the server listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// Polls GET `ready` every ~50 ms until it answers 200; returns how long
    /// that took. Fails at once, with the log's tail, if the server exits.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<Duration, StartError> {
        let start = Instant::now();
        let request = http::Request::get(&self.ready);
        let mut last;
        loop {
            let exited = self.child.try_wait().map_err(|source| StartError::Wait {
                target: self.name.clone(),
                source,
            })?;
            if let Some(status) = exited {
                return Err(StartError::Exited {
                    target: self.name.clone(),
                    status,
                    log: self.log.clone(),
                    tail: log_tail(&self.log, 20),
                });
            }
            match http::send(self.addr, &request, Duration::from_secs(2)) {
                Ok(r) if r.status == 200 => return Ok(start.elapsed()),
                Ok(r) => last = format!("GET {} answered {}", self.ready, r.status),
                Err(e) => last = format!("GET {}: {e}", self.ready),
            }
            if start.elapsed() >= timeout {
                return Err(StartError::NotReady {
                    target: self.name.clone(),
                    timeout,
                    last,
                    log: self.log.clone(),
                    tail: log_tail(&self.log, 20),
                });
            }
            std::thread::sleep(POLL);
        }
    }

    /// SIGTERM to the group, up to 5 s for it to go, then SIGKILL; reaps the
    /// started process and reports whether any process of the group is left.
    pub fn stop(&mut self) -> StopReport {
        let start = Instant::now();
        let mut status = None;
        signal_group(self.pgid, libc::SIGTERM);
        let graceful = self.wait_group_gone(&mut status, GRACE);
        if !graceful {
            signal_group(self.pgid, libc::SIGKILL);
            self.wait_group_gone(&mut status, Duration::from_secs(2));
        }
        if status.is_none() {
            status = self.child.wait().ok();
        }
        self.stopped = true;
        // Removing the cgroup kills what left the process group (setsid).
        let (_, removal) = cgroup::release(self.pgid);
        self.dismiss_watchdog();
        self.tmp = None;
        StopReport {
            graceful,
            took: start.elapsed(),
            status,
            leftovers: group_alive(self.pgid) || removal.is_some(),
            cgroup_removal: removal.map(|e| e.to_string()),
        }
    }

    fn dismiss_watchdog(&mut self) {
        if let Some(w) = self.watchdog.take() {
            w.dismiss();
        }
    }

    /// Reaps the leader and waits until no live process is in the group.
    fn wait_group_gone(&mut self, status: &mut Option<ExitStatus>, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if status.is_none() {
                *status = self.child.try_wait().ok().flatten();
            }
            if status.is_some() && !group_alive(self.pgid) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.stopped {
            signal_group(self.pgid, libc::SIGKILL);
            let _ = self.child.wait();
            let _ = cgroup::release(self.pgid);
            self.dismiss_watchdog();
        }
        self.tmp = None;
    }
}

/// Makes the start's cgroup and has `cmd` enter it before exec, so every
/// process the server forks is born inside; or says why there is none.
fn enter_cgroup(
    target: &str,
    limits: &Limits,
    cmd: &mut Command,
) -> (Option<Group>, Option<CgroupError>) {
    let made = cgroup::make(target, limits).and_then(|g| g.attacher().map(|a| (g, a)));
    match made {
        Ok((group, attacher)) => {
            attacher.install(cmd);
            (Some(group), None)
        }
        Err(e) => (None, Some(e)),
    }
}

fn signal_group(pgid: i32, signal: i32) {
    // pgid is always a child's pid (> 1), so -pgid never means "everyone".
    if pgid > 1 {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe { libc::kill(-pgid, signal) };
    }
}

/// True when some non-zombie process is still in the group. kill(-pgid, 0)
/// failing with ESRCH proves the group is empty; when it succeeds the members
/// may only be zombies awaiting a reaper, so /proc decides.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks for existence.
    let rc = unsafe { libc::kill(-pgid, 0) };
    if rc != 0 {
        return std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH);
    }
    live_members_in_proc(pgid).unwrap_or(true)
}

/// Whether /proc lists a non-zombie process of group `pgid`; None if /proc
/// cannot be read.
fn live_members_in_proc(pgid: i32) -> Option<bool> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return Some(true);
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempdir;
    use std::sync::Mutex;

    /// kill_all_servers touches every group in the registry, so the tests
    /// that start servers take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn target(dir: &Path, run: &str) -> Target {
        Target {
            ready: "/plaintext".into(),
            ..Target::command("fake", dir, run)
        }
    }

    #[test]
    fn a_server_is_told_how_many_cpus_it_is_pinned_to() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        let out = dir.path().join("cpus");
        let run = format!("echo \"$SERVER_CPUS\" > '{}'; sleep 60", out.display());
        let t = target(dir.path(), &run);
        let cpu = shootout_engine::affinity::allowed_cpus()[0];
        let log = dir.path().join("s.log");
        let mut server = Server::start_pinned(&t, free_port().unwrap(), &log, &[cpu]).unwrap();
        // The file exists as soon as the shell opens it: wait for its line.
        shootout_testkit::wait_until(
            &format!("the server writing $SERVER_CPUS to {}", out.display()),
            Duration::from_secs(5),
            || std::fs::read_to_string(&out).is_ok_and(|t| t.ends_with('\n')),
        );
        server.stop();
        let told = std::fs::read_to_string(&out).unwrap();
        assert_eq!(told.trim(), "1");
        assert_eq!(server_cpus(&[0, 0, 1]), 2);
        assert_eq!(
            server_cpus(&[]),
            shootout_engine::affinity::allowed_cpus().len().max(1)
        );
    }

    #[test]
    fn a_server_has_its_own_tmpdir_removed_when_it_stops_or_is_killed() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        let out = dir.path().join("env");
        // Writes where its TMPDIR and java.io.tmpdir point, then leaves a
        // file there as Tomcat leaves its tomcat.* folders.
        let run = format!(
            "echo \"$TMPDIR|$JAVA_TOOL_OPTIONS\" > '{}.part'; mkdir \"$TMPDIR/tomcat.1\"; \
             mv '{0}.part' '{0}'; sleep 60",
            out.display()
        );
        let t = target(dir.path(), &run);
        let told = || {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !out.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            let text = std::fs::read_to_string(&out).unwrap();
            let _ = std::fs::remove_file(&out);
            let (tmp, java) = text.trim().split_once('|').unwrap();
            assert!(PathBuf::from(tmp).join("tomcat.1").is_dir(), "{text}");
            assert!(java.contains(&format!("-Djava.io.tmpdir={tmp}")), "{text}");
            PathBuf::from(tmp)
        };
        let mut a = Server::start(&t, free_port().unwrap(), &dir.path().join("a.log")).unwrap();
        let tmp_a = told();
        let b = Server::start(&t, free_port().unwrap(), &dir.path().join("b.log")).unwrap();
        let tmp_b = told();
        assert_ne!(tmp_a, tmp_b, "each start has its own");
        let parent = tmp_a.parent().unwrap().to_path_buf();
        a.stop();
        assert!(!tmp_a.exists(), "removed when the server stops");
        assert!(tmp_b.exists(), "the other server's stays");
        drop(b);
        assert!(
            !tmp_b.exists() && !parent.exists(),
            "the last one out removes the folder"
        );
        let c = Server::start(&t, free_port().unwrap(), &dir.path().join("c.log")).unwrap();
        let tmp_c = told();
        assert!(kill_all_servers() >= 1);
        assert!(!tmp_c.exists(), "an interrupt removes them at once");
        drop(c);
    }

    #[test]
    fn free_port_is_nonzero() {
        assert_ne!(free_port().unwrap(), 0);
        for _ in 0..100 {
            let [a, b] = free_ports::<2>().unwrap();
            assert_ne!(a, b);
        }
    }

    #[test]
    fn stop_kills_whole_group_including_children_ignoring_term() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        // A child that ignores SIGTERM forces the SIGKILL path.
        // Each shell logs only after its own trap is set: a TERM that
        // arrived before the child's trap would end the group gracefully.
        let run =
            "sh -c 'trap \"\" TERM; echo child-ready; sleep 60' & trap '' TERM; echo started; wait";
        let t = target(dir.path(), run);
        let log = dir.path().join("s.log");
        let mut server = Server::start(&t, free_port().unwrap(), &log).unwrap();
        let pgid = server.pgid();
        shootout_testkit::wait_until(
            "both shells logging that their traps are set",
            Duration::from_secs(5),
            || {
                std::fs::read_to_string(&log)
                    .is_ok_and(|t| t.contains("started") && t.contains("child-ready"))
            },
        );
        assert!(group_alive(pgid));
        let report = server.stop();
        assert!(!report.graceful);
        assert!(!report.leftovers);
        assert!(!group_alive(pgid));
    }

    #[test]
    fn wait_ready_fails_fast_with_log_tail_when_process_exits() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        let t = target(dir.path(), "echo boom-from-server; exit 3");
        let mut server =
            Server::start(&t, free_port().unwrap(), &dir.path().join("s.log")).unwrap();
        let start = Instant::now();
        let err = server
            .wait_ready(Duration::from_secs(30))
            .unwrap_err()
            .to_string();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(err.contains("boom-from-server"), "{err}");
    }

    #[test]
    fn drop_and_kill_all_kill_groups() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        let t = target(dir.path(), "exec sleep 60");
        let server = Server::start(&t, free_port().unwrap(), &dir.path().join("a.log")).unwrap();
        let pgid = server.pgid();
        drop(server);
        assert!(!group_alive(pgid));

        let server = Server::start(&t, free_port().unwrap(), &dir.path().join("b.log")).unwrap();
        let pgid = server.pgid();
        assert!(kill_all_servers() >= 1);
        // SIGKILLed, not yet reaped: gone before the drop reaps it.
        shootout_testkit::wait_until(
            "the server's process group gone after kill_all_servers",
            Duration::from_secs(2),
            || !group_alive(pgid),
        );
        drop(server);
        assert!(!group_alive(pgid));
    }

    /// The server's cgroup, or None after a SKIP line where none can be
    /// made here; a group that should work but failed fails the test.
    fn cgroup_or_skip(server: &Server, test: &str) -> Option<Vec<PathBuf>> {
        if let Some(why) = server.cgroup_unavailable() {
            assert!(why.is_unavailable(), "cgroups usable but failed: {why}");
            shootout_testkit::machine(format!("{test}: {why}"));
            return None;
        }
        let paths = server.cgroup_paths();
        assert!(!paths.is_empty() && paths.iter().all(|p| p.is_dir()));
        Some(paths)
    }

    /// The processes of `pids` outside the server's process group.
    fn escaped(server: &Server, pids: &[u32]) -> Vec<u32> {
        pids.iter()
            .copied()
            // SAFETY: getpgid(2) has no memory-safety preconditions.
            .filter(|&p| unsafe { libc::getpgid(p as i32) } != server.pgid())
            .collect()
    }

    /// Polls the group until it holds `n` processes, one of them out of
    /// the process group (its `setsid` has run), or 5 s pass.
    fn pids_when(server: &Server, n: usize) -> Vec<u32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let pids = server.cgroup_pids().unwrap().unwrap();
            let settled = pids.len() == n && escaped(server, &pids).len() == 1;
            if settled || Instant::now() > deadline {
                return pids;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn alive(pid: u32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next());
        matches!(state, Some(s) if s != "Z" && s != "X")
    }

    fn gone_soon(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(2);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive(pid)
    }

    #[test]
    fn a_server_tree_runs_in_its_own_cgroup_removed_at_stop() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        // One worker leaves the process group (a new session): the process
        // group kill misses it, only the cgroup catches it.
        let t = target(dir.path(), "setsid sleep 60 & sleep 60 & wait");
        let mut server =
            Server::start(&t, free_port().unwrap(), &dir.path().join("s.log")).unwrap();
        let Some(paths) = cgroup_or_skip(&server, "a_server_tree_runs_in_its_own_cgroup") else {
            server.stop();
            return;
        };
        let pids = pids_when(&server, 3);
        assert_eq!(pids.len(), 3, "sh and two sleeps: {pids:?}");
        assert!(pids.contains(&server.pid()), "{pids:?}");
        assert!(!pids.contains(&std::process::id()), "{pids:?}");
        let escaped = escaped(&server, &pids);
        assert_eq!(escaped.len(), 1, "{pids:?}");
        let report = server.stop();
        assert!(!report.leftovers, "{report:?}");
        assert!(report.cgroup_removal.is_none(), "{report:?}");
        assert!(gone_soon(escaped[0]), "pid {} survived", escaped[0]);
        for p in &paths {
            assert!(!p.exists(), "{} left behind", p.display());
        }
        assert!(server.cgroup_paths().is_empty());
    }

    #[test]
    fn drop_and_kill_all_remove_cgroups() {
        let _serial = serial();
        let dir = tempdir::Dir::new();
        let t = target(dir.path(), "setsid sleep 60 & exec sleep 60");
        let server = Server::start(&t, free_port().unwrap(), &dir.path().join("a.log")).unwrap();
        let Some(paths) = cgroup_or_skip(&server, "drop_and_kill_all_remove_cgroups") else {
            return;
        };
        let pids = pids_when(&server, 2);
        assert_eq!(escaped(&server, &pids).len(), 1, "{pids:?}");
        drop(server);
        assert!(pids.iter().all(|&p| gone_soon(p)), "{pids:?}");
        assert!(paths.iter().all(|p| !p.exists()), "{paths:?}");

        let server = Server::start(&t, free_port().unwrap(), &dir.path().join("b.log")).unwrap();
        let paths = server.cgroup_paths();
        let pids = pids_when(&server, 2);
        assert_eq!(escaped(&server, &pids).len(), 1, "{pids:?}");
        assert!(kill_all_servers() >= 1);
        assert!(paths.iter().all(|p| !p.exists()), "{paths:?}");
        assert!(pids.iter().all(|&p| gone_soon(p)), "{pids:?}");
        drop(server);
    }
}
