//! The local place: each start of a target is a process group on this
//! machine ([`shootout_servers::Server`]: pinned, in a cgroup of its own
//! where one can be made, stopped by SIGTERM then SIGKILL). Its figures
//! come from that cgroup's counters when it has one (every process it
//! ever ran, exited workers included), else from its process tree in
//! `/proc` ([`crate::procfs`]); its memory is always its tree's RSS.

use super::{
    BudgetError, Contestant, Figure, Liveness, Memory, Meter, Place, Source, StartSpec, Stopped,
};
use crate::procfs;
use shootout_cgroup::{Budget, Counters};
use shootout_servers::listener::{self, ListenerError};
use shootout_servers::{CgroupReader, Server, StartError};
use std::net::IpAddr;
use std::os::unix::process::ExitStatusExt as _;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Local processes.
#[derive(Debug, Default)]
pub(crate) struct LocalPlace;

impl Place for LocalPlace {
    fn free_ports(&self) -> std::io::Result<[u16; 3]> {
        shootout_servers::free_ports::<3>()
    }

    fn start(&self, s: &StartSpec<'_>) -> Result<Box<dyn Contestant>, StartError> {
        let server = Server::start_limited(s.target, s.port, s.log, s.cpus, s.env, s.limits)?;
        Ok(Box::new(Local {
            server: Mutex::new(server),
        }))
    }
}

/// A target started as a local process group (locked: asking whether its
/// first process ended reaps it).
#[derive(Debug)]
struct Local {
    server: Mutex<Server>,
}

impl Local {
    fn server(&self) -> MutexGuard<'_, Server> {
        self.server.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Contestant for Local {
    fn host(&self) -> IpAddr {
        self.server().addr().ip()
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<Duration, StartError> {
        self.server().wait_ready(timeout)
    }

    fn liveness(&self) -> Liveness {
        let mut server = self.server();
        let pids = server.pids();
        let group = server.pgid();
        if let Some(status) = server.exit_status() {
            return Liveness::Exited {
                how: describe(status),
                others_left: shootout_servers::process::group_alive(group),
            };
        }
        if !shootout_servers::process::group_alive(group) {
            return Liveness::Gone;
        }
        if listener::all_stopped(&pids) {
            return Liveness::Frozen { count: pids.len() };
        }
        Liveness::Alive
    }

    fn holds_port(&self, port: u16) -> Result<(), ListenerError> {
        listener::check_owner(port, &self.server().pids())
    }

    fn meter(&self) -> Arc<dyn Meter> {
        let server = self.server();
        Arc::new(TreeMeter {
            pgid: server.pgid(),
            root: server.pid() as i32,
            cgroup: server.cgroup_reader(),
        })
    }

    fn budget(&self) -> Option<Budget> {
        self.server().budget()
    }

    fn set_budget(&self, budget: &Budget) -> Result<(), BudgetError> {
        match self.server().set_budget(budget) {
            Some(r) => Ok(r?),
            None => Err(BudgetError::Gone),
        }
    }

    fn log_tail(&self, lines: usize) -> String {
        shootout_servers::tail::log_tail(self.server().log_path(), lines)
    }

    fn process_group(&self) -> Option<i32> {
        Some(self.server().pgid())
    }

    fn stop(self: Box<Self>) -> Stopped {
        let r = self.server().stop();
        Stopped {
            graceful: r.graceful,
            leftovers: r.leftovers,
        }
    }
}

/// A local process tree (group `pgid`, rooted at `root`) and, when it has
/// one, its cgroup. Also the database's meter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeMeter {
    pub pgid: i32,
    pub root: i32,
    pub cgroup: Option<CgroupReader>,
}

impl Meter for TreeMeter {
    fn cpu(&self) -> Figure<f64> {
        match self.counters() {
            Some(c) => Figure::Had {
                value: c.cpu.as_secs_f64(),
                from: Source::Cgroup,
            },
            None => Figure::Had {
                value: procfs::cpu_seconds_precise(self.pgid, self.root),
                from: Source::Procfs,
            },
        }
    }

    fn memory(&self, pss: bool) -> Memory {
        let s = procfs::sample(self.pgid, self.root, pss);
        Memory {
            rss: Figure::Had {
                value: s.rss_bytes,
                from: Source::Procfs,
            },
            pss: s.pss_bytes,
        }
    }

    fn counters(&self) -> Option<Counters> {
        self.cgroup
            .as_ref()
            .and_then(CgroupReader::counters)
            .and_then(Result::ok)
    }

    fn reset_peak(&self) {
        if let Some(c) = &self.cgroup {
            // Best effort: without a reset (v2) the peak is the lifetime's.
            let _ = c.reset_peak();
        }
    }
}

/// "exit status 3", "signal 9 (SIGKILL)".
fn describe(status: std::process::ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (_, Some(sig)) => format!("signal {sig}{}", signal_name(sig)),
        (Some(code), None) => format!("exit status {code}"),
        (None, None) => status.to_string(),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGTERM => " (SIGTERM)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGINT => " (SIGINT)",
        _ => "",
    }
}
