//! The verifier: proves that a reference server honours `targets/SPEC.md`.
//! `verify_target` owns the process side (free port, start, ready, stop and
//! the leftover-process check); `checks::check_server` runs every HTTP check
//! against an address, so tests can aim it at in-process servers; with a
//! database, `db` adds the database routes' checks. Failures are data in a
//! `VerifyReport`, never an `Err`.

//!
//! The rules are SPEC.md's and, where TechEmpower's verifier is stricter,
//! TechEmpower's, failing in its words (`failure::Tfb`).
//!
//! The files form a tree: `failure` and `model` (the report's types) at
//! the root; `headers` (TechEmpower's header rules) and `response` (one
//! answer's basics) on them; `world` (the rows routes) on `response`;
//! `counts`, `updates`, `fortunes` and `db_load` on those; `db` gathers the
//! database checks, `checks` every HTTP check, `tls` and `ws` the TLS port
//! and the WebSocket echo of a target that claims them, and this file the
//! process.

mod checks;
mod counts;
mod cpus;
mod db;
#[cfg(test)]
mod db_fake;
mod db_load;
#[cfg(test)]
mod db_tests;
mod failure;
#[cfg(test)]
mod fake;
mod fortunes;
mod headers;
mod model;
mod payload;
mod response;
#[cfg(test)]
mod tests;
mod tls;
mod updates;
mod world;
mod ws;
#[cfg(test)]
mod ws_tests;

pub use checks::{check_server, CheckOptions};
pub use cpus::{measure_cpus, Measured, DISTURBED_SHARE};
pub use failure::{Failure, Tfb};
pub use model::{Aspect, Check, Column, CpuUse, VerifyReport, MIN_SHARE};
pub use payload::random_payload;

use std::time::Duration;

use crate::database::DatabaseAccess;
use crate::manifest::Target;
use crate::process::{free_ports, Server};
use crate::protocols::{ws_env, Unsupported, WsPlace};

/// Why the server under test could not be started.
#[derive(Debug, thiserror::Error)]
enum Unstarted {
    #[error("no free port: {0}")]
    Port(std::io::Error),
    #[error(transparent)]
    Start(#[from] crate::process::StartError),
    /// Asked for a protocol the manifest does not claim.
    #[error("{0}")]
    Protocol(crate::protocols::Unsupported),
}

/// Settings for `verify_target`.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// How long `ready` may take to answer 200 (SPEC.md: 60 s).
    pub ready_timeout: Duration,
    /// The seeded database: passed to the server as `DATABASE_URL` and
    /// `DB_POOL_SIZE` and read by the database checks; `None` skips them.
    pub database: Option<DatabaseAccess>,
    /// Whether to check the TLS port (on a start of its own) of a target
    /// that has one: `shootout verify` does; a run whose study has no TLS
    /// level does not, as TechEmpower's verifier checks only the test
    /// types being run.
    pub tls: bool,
    /// Whether to check the WebSocket echo (targets/SPEC.md "WebSocket")
    /// of a target that claims `ws`: on the cleartext start when `/ws` is
    /// on `PORT`, on a start of its own with `WS_PORT` otherwise.
    pub ws: bool,
    /// The CPUs the server is pinned to, as the run that verifies it will
    /// pin it (empty: every CPU this process may use, as `shootout verify`
    /// does). The CPU-use check gives the server these, so it checks the
    /// configuration that will be measured; on one CPU there is nothing to
    /// spread over and the check says so.
    pub cpus: Vec<usize>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            ready_timeout: Duration::from_secs(60),
            database: None,
            tls: true,
            ws: true,
            cpus: Vec::new(),
        }
    }
}

/// Starts `target` on a free port, runs every check, stops it and checks
/// that nothing of its process group is left.
pub fn verify_target(target: &Target, opts: &VerifyOptions) -> VerifyReport {
    let log = target.server_log("verify");
    let mut report = VerifyReport {
        target: target.name.clone(),
        checks: Vec::new(),
        ready_after: None,
        stop: None,
        log: log.clone(),
        cpu_use: None,
    };
    let setup = opts
        .tls
        .then(|| tls::TlsSetup::for_target(target))
        .flatten();
    let tls = match setup.transpose() {
        Ok(tls) => tls,
        Err(why) => {
            let failed = Check::fail(Column::Tls, Aspect::Start, Failure::Tls(why.to_string()));
            report.checks.push(failed);
            return report;
        }
    };
    let turn = cpus::shared_turn();
    let (mut server, _) = match start(target, opts, None, &log) {
        Ok(started) => started,
        Err(e) => {
            report.checks.push(Check::fail(
                Column::Ready,
                Aspect::Start,
                Failure::Start(format!("{e:#}")),
            ));
            return report;
        }
    };
    match server.wait_ready(opts.ready_timeout) {
        Ok(took) => {
            report.ready_after = Some(took);
            report
                .checks
                .push(Check::pass(Column::Ready, Aspect::Start));
            report
                .checks
                .extend(contract_checks(target, opts, &server, &log));
            drop(turn);
            let given = crate::process::server_cpus(&opts.cpus);
            let (check, used) = cpus::check_cpus(&server, given);
            report.checks.push(check);
            report.cpu_use = used;
        }
        Err(e) => {
            drop(turn);
            report.checks.push(Check::fail(
                Column::Ready,
                Aspect::Start,
                Failure::Start(format!("{e:#}")),
            ));
        }
    }
    // A shared turn again (ours is dropped on both arms: a second read
    // behind a waiting check would never be granted).
    let stop = {
        let _turn = cpus::shared_turn();
        server.stop()
    };
    report.checks.push(match stop.leftovers {
        false => Check::pass(Column::Shutdown, Aspect::Leftovers),
        true => Check::fail(Column::Shutdown, Aspect::Leftovers, Failure::Leftovers),
    });
    report.stop = Some(stop);
    if let Some(setup) = &tls {
        report.checks.extend(tls_start(target, opts, setup, &log));
    }
    if opts.ws && target.protocols.ws && target.ws_place == WsPlace::OwnPort {
        report.checks.extend(ws_start(target, opts, &log));
    }
    report
}

/// The checks of a ready server on its cleartext port: every HTTP check,
/// its output meanwhile, and the WebSocket echo when it is on `PORT`.
fn contract_checks(
    target: &Target,
    opts: &VerifyOptions,
    server: &Server,
    log: &std::path::Path,
) -> Vec<Check> {
    let check_opts = CheckOptions {
        sync_workers: target.sync_workers,
        database: opts.database.clone(),
        ..Default::default()
    };
    let logged_before = file_len(log);
    let mut checks = check_server(server.addr(), &check_opts);
    checks.push(quiet_check(file_len(log) - logged_before));
    if opts.ws && target.protocols.ws && target.ws_place == WsPlace::Port {
        checks.extend(ws::check_ws(server.addr(), opts.ready_timeout));
    }
    checks
}

/// The TLS checks, on a start of their own: with a TLS port some servers
/// run a second process or listener (targets/python/tls.sh), which must
/// not change what the cleartext checks above measured.
fn tls_start(
    target: &Target,
    opts: &VerifyOptions,
    setup: &tls::TlsSetup,
    log: &std::path::Path,
) -> Vec<Check> {
    let fail = |why: String| vec![Check::fail(Column::Tls, Aspect::Start, Failure::Tls(why))];
    let _turn = cpus::shared_turn();
    let env = |port| setup.env(target, port);
    let (mut server, port) = match start(target, opts, Some(&env), log) {
        Ok((server, Some(port))) => (server, port),
        Ok((mut server, None)) => {
            server.stop();
            return fail("no TLS port was chosen".into());
        }
        Err(e) => return fail(format!("start with a TLS port: {e:#}")),
    };
    let checks = match server.wait_ready(opts.ready_timeout) {
        Ok(_) => {
            let at = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            tls::check_tls(target, setup, server.addr(), at, opts.ready_timeout)
        }
        Err(e) => fail(format!("start with a TLS port: {e:#}")),
    };
    server.stop();
    checks
}

/// The WebSocket checks of a target whose `/ws` is a second process, on
/// a start of its own with `WS_PORT`, as the TLS checks have theirs.
fn ws_start(target: &Target, opts: &VerifyOptions, log: &std::path::Path) -> Vec<Check> {
    let fail = |why: String| {
        let failure = Failure::Ws {
            check: "start",
            why,
        };
        vec![Check::fail(Column::Ws, Aspect::Start, failure)]
    };
    let _turn = cpus::shared_turn();
    let env = |port| ws_env(&target.name, target.protocols, target.ws_place, port);
    let (mut server, port) = match start(target, opts, Some(&env), log) {
        Ok((server, Some(port))) => (server, port),
        Ok((mut server, None)) => {
            server.stop();
            return fail("no WS_PORT was chosen".into());
        }
        Err(e) => return fail(format!("start with WS_PORT: {e:#}")),
    };
    let checks = match server.wait_ready(opts.ready_timeout) {
        Ok(_) => {
            let at = std::net::SocketAddr::from(([127, 0, 0, 1], port));
            ws::check_ws(at, opts.ready_timeout)
        }
        Err(e) => fail(format!("start with WS_PORT: {e:#}")),
    };
    server.stop();
    checks
}

/// The variables that start a target's second port (TLS, WebSocket) on
/// the port given.
type SecondPort<'a> = &'a dyn Fn(u16) -> Result<Vec<(String, String)>, Unsupported>;

/// Starts `target` on a free port (and, with `second`, its second port on
/// another), with the database's variables when there is one.
fn start(
    target: &Target,
    opts: &VerifyOptions,
    second: Option<SecondPort<'_>>,
    log: &std::path::Path,
) -> Result<(Server, Option<u16>), Unstarted> {
    let [port, pick] = free_ports::<2>().map_err(Unstarted::Port)?;
    let mut env = opts
        .database
        .as_ref()
        .map(DatabaseAccess::server_env)
        .unwrap_or_default();
    let mut second_port = None;
    if let Some(second) = second {
        env.extend(second(pick).map_err(Unstarted::Protocol)?);
        second_port = Some(pick);
    }
    Ok((
        Server::start_env(target, port, log, &opts.cpus, &env)?,
        second_port,
    ))
}

fn file_len(path: &std::path::Path) -> i64 {
    std::fs::metadata(path).map_or(0, |m| m.len() as i64)
}

/// SPEC.md asks for no per-request logging. Output during the checks is
/// reported as a note rather than a failure: a warning line or two is not
/// worth refusing a target over, but a log line per request skews results.
fn quiet_check(grew: i64) -> Check {
    let mut check = Check::pass(Column::Ready, Aspect::Logging);
    if grew > 0 {
        check.note = Some(format!(
            "the server wrote {grew} bytes of output while answering the checks (SPEC: no per-request logging)"
        ));
    }
    check
}
