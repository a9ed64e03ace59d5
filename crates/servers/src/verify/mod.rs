//! The verifier: proves that a reference server honours `targets/SPEC.md`.
//! `verify_target` owns the process side (free port, start, ready, stop and
//! the leftover-process check); `checks::check_server` runs every HTTP check
//! against an address, so tests can aim it at in-process servers; with a
//! database, `db` adds the database routes' checks. Failures are data in a
//! `VerifyReport`, never an `Err`.

mod checks;
mod db;
#[cfg(test)]
mod db_fake;
mod db_load;
#[cfg(test)]
mod db_tests;
#[cfg(test)]
mod fake;
mod fortunes;
mod payload;
#[cfg(test)]
mod tests;

pub use checks::{check_server, CheckOptions};
pub use payload::random_payload;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::database::DatabaseAccess;
use crate::manifest::Target;
use crate::process::{free_port, Server, StopReport};
use shootout_contract::spec::ScenarioName;

/// A column of the verify table: one per scenario, plus the lifecycle and
/// error-handling checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    Ready,
    /// The answers of one SPEC.md route.
    Route(ScenarioName),
    KeepAlive,
    Concurrency,
    NotFound,
    BadJson,
    /// The database connections under 32 concurrent requests.
    DbPool,
    Shutdown,
}

impl Column {
    /// Every column in table order: ready, the routes in SPEC.md order, then
    /// the protocol and lifecycle checks.
    pub const ALL: [Column; 7 + ScenarioName::ALL.len()] = {
        let routes = ScenarioName::ALL.len();
        let mut all = [Column::Ready; 7 + ScenarioName::ALL.len()];
        let mut i = 0;
        while i < routes {
            all[1 + i] = Column::Route(ScenarioName::ALL[i]);
            i += 1;
        }
        all[1 + routes] = Column::KeepAlive;
        all[2 + routes] = Column::Concurrency;
        all[3 + routes] = Column::NotFound;
        all[4 + routes] = Column::BadJson;
        all[5 + routes] = Column::DbPool;
        all[6 + routes] = Column::Shutdown;
        all
    };

    pub fn name(self) -> &'static str {
        match self {
            Column::Ready => "ready",
            Column::Route(name) => name.as_str(),
            Column::KeepAlive => "keepalive",
            Column::Concurrency => "concurrency",
            Column::NotFound => "404",
            Column::BadJson => "bad_json",
            Column::DbPool => "db_pool",
            Column::Shutdown => "shutdown",
        }
    }
}

/// Which property of a column a check looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aspect {
    Start,
    Request,
    Status,
    ContentType,
    Framing,
    Body,
    Duration,
    Hash,
    /// A POST with a body that is not JSON.
    Malformed,
    /// A POST with JSON that lacks a string `payload`.
    NoPayload,
    /// Two requests on one connection.
    Reuse,
    /// `Connection: close` is honoured.
    Close,
    Leftovers,
    /// Output while serving requests.
    Logging,
    /// The answered rows hold what the table holds.
    Rows,
    /// `queries=Q` answers the clamped number of rows.
    Clamp,
    /// `pg_stat_statements` counts one query per row read.
    QueryCount,
    /// Repeated requests read different random ids.
    Random,
    /// The fortune messages are HTML-escaped.
    Escape,
    /// The answered updates are in the table afterwards.
    Persisted,
    /// The updates changed the table.
    Changed,
    /// Open database connections stay within `DB_POOL_SIZE`.
    Pool,
    /// Not checked; the note says why.
    Skipped,
}

/// Why a check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The server could not be started or never became ready.
    Start(String),
    /// The request failed below HTTP (refused, reset, timeout, bad framing).
    Transport(String),
    Status {
        expected: &'static str,
        got: u16,
    },
    ContentType {
        expected: &'static str,
        got: Option<String>,
    },
    /// Neither Content-Length nor Transfer-Encoding: chunked.
    NoFraming,
    Body {
        expected: String,
        got: String,
    },
    TooFast {
        min: Duration,
        took: Duration,
    },
    /// The bcrypt hash does not verify against the payload.
    BadHash(String),
    /// The bcrypt hash is not `$2a$10$`, `$2b$10$` or `$2y$10$`.
    WrongCost(String),
    /// Concurrent requests did not all finish within the limit.
    TooSlow {
        limit: Duration,
        took: Duration,
        completed: usize,
        sent: usize,
    },
    /// A POST with bad input did not answer 4xx.
    BadInput {
        request: String,
        got: u16,
    },
    /// A second request on a kept-alive connection failed.
    NoKeepAlive(String),
    /// The server kept the connection open after `Connection: close`.
    IgnoresClose(String),
    /// Some process of the server's group survived SIGKILL.
    Leftovers,
    /// The verifier could not read the database it checks against.
    Database(String),
    /// Answered rows that are not in the table.
    WrongRows(String),
    RowCount {
        request: String,
        expected: usize,
        got: usize,
    },
    /// `pg_stat_statements` counted another number of queries on `table`.
    QueryCount {
        request: String,
        requests: usize,
        table: &'static str,
        expected: i64,
        got: i64,
    },
    /// Repeated requests answered too few distinct ids.
    SameIds {
        distinct: usize,
        requests: usize,
    },
    /// The raw body holds an unescaped `<script>`.
    Unescaped,
    /// Answered updates that the table does not hold afterwards.
    NotPersisted(String),
    /// The table holds the same values as before the updates.
    Unchanged {
        rows: usize,
    },
    /// More database connections than `DB_POOL_SIZE`.
    PoolExceeded {
        max_seen: i64,
        pool_size: u32,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Start(why) => write!(f, "{why}"),
            Failure::Transport(why) => write!(f, "request failed: {why}"),
            Failure::Status { expected, got } => write!(f, "status {got}, expected {expected}"),
            Failure::ContentType { expected, got: Some(got) } => {
                write!(f, "content type {got:?}, expected {expected}")
            }
            Failure::ContentType { expected, got: None } => {
                write!(f, "no Content-Type, expected {expected}")
            }
            Failure::NoFraming => f.write_str("neither Content-Length nor chunked encoding"),
            Failure::Body { expected, got } => write!(f, "body {got:?}, expected {expected:?}"),
            Failure::TooFast { min, took } => write!(f, "answered in {took:.1?}, expected >= {min:.0?}"),
            Failure::BadHash(why) => write!(f, "bcrypt hash does not verify: {why}"),
            Failure::WrongCost(hash) => write!(f, "bcrypt hash {hash:?} is not cost 10 ($2a$/$2b$/$2y$10$)"),
            Failure::TooSlow { limit, took, completed, sent } => write!(
                f,
                "{completed}/{sent} concurrent wait_time requests done after {took:.2?}, limit {limit:.0?}"
            ),
            Failure::BadInput { request, got } => write!(f, "{request} answered {got}, expected 4xx"),
            Failure::NoKeepAlive(why) => write!(f, "keep-alive broken: {why}"),
            Failure::IgnoresClose(why) => write!(f, "Connection: close not honoured: {why}"),
            Failure::Leftovers => f.write_str("processes of the server's group survived SIGKILL"),
            Failure::Database(why) => write!(f, "the verifier could not use the database: {why}"),
            Failure::WrongRows(why) => write!(f, "rows not in the table: {why}"),
            Failure::RowCount { request, expected, got } => {
                write!(f, "{request} answered {got} rows, expected {expected}")
            }
            Failure::QueryCount { request, requests, table, expected, got } => write!(
                f,
                "{requests} x {request} ran {got} queries on {table}, expected {expected} (pg_stat_statements)"
            ),
            Failure::SameIds { distinct, requests } => {
                write!(f, "{requests} requests answered only {distinct} distinct ids: random ids expected")
            }
            Failure::Unescaped => f.write_str("the body holds a raw <script>: messages must be HTML-escaped"),
            Failure::NotPersisted(why) => write!(f, "answered updates not in the table: {why}"),
            Failure::Unchanged { rows } => write!(f, "the table still holds the old values of all {rows} answered rows"),
            Failure::PoolExceeded { max_seen, pool_size } => write!(
                f,
                "{max_seen} database connections seen at once, DB_POOL_SIZE is {pool_size}"
            ),
        }
    }
}

/// One check's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub column: Column,
    pub aspect: Aspect,
    pub result: Result<(), Failure>,
    /// Something worth knowing even when the check passed.
    pub note: Option<String>,
    /// The request the check sent (`GET /queries?queries=foo`), when one
    /// request tells the reader how to reproduce it with curl.
    pub request: Option<String>,
}

impl Check {
    pub fn pass(column: Column, aspect: Aspect) -> Check {
        Check {
            column,
            aspect,
            result: Ok(()),
            note: None,
            request: None,
        }
    }

    pub fn fail(column: Column, aspect: Aspect, failure: Failure) -> Check {
        Check {
            column,
            aspect,
            result: Err(failure),
            note: None,
            request: None,
        }
    }

    /// A column that was not checked: neither a pass nor a failure; the
    /// note says why.
    pub fn skipped(column: Column, why: &str) -> Check {
        Check {
            note: Some(format!("skipped: {why}")),
            ..Check::pass(column, Aspect::Skipped)
        }
    }

    /// Names the request that this check sent.
    pub fn on(self, method: &str, path: &str) -> Check {
        Check {
            request: Some(format!("{method} {path}")),
            ..self
        }
    }

    pub fn is_skipped(&self) -> bool {
        self.aspect == Aspect::Skipped
    }
}

/// Everything the verifier found about one target.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    pub target: String,
    pub checks: Vec<Check>,
    /// How long the server took to answer `ready`, when it did.
    pub ready_after: Option<Duration>,
    pub stop: Option<StopReport>,
    /// The server's stdout and stderr.
    pub log: PathBuf,
}

impl VerifyReport {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.result.is_ok())
    }

    /// Some(pass) for a column that was checked, None when it was not
    /// reached (e.g. the server never became ready) or was skipped (no
    /// database).
    pub fn column(&self, column: Column) -> Option<bool> {
        let mut checks = self
            .checks
            .iter()
            .filter(|c| c.column == column && !c.is_skipped())
            .peekable();
        checks.peek()?;
        Some(checks.all(|c| c.result.is_ok()))
    }

    /// Notes of the checks, in the order they ran.
    pub fn notes(&self) -> impl Iterator<Item = (&Check, &str)> {
        self.checks
            .iter()
            .filter_map(|c| c.note.as_deref().map(|n| (c, n)))
    }

    /// The failed checks, in the order they ran.
    pub fn failures(&self) -> impl Iterator<Item = (&Check, &Failure)> {
        self.checks
            .iter()
            .filter_map(|c| c.result.as_ref().err().map(|f| (c, f)))
    }
}

/// Settings for `verify_target`.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// How long `ready` may take to answer 200 (SPEC.md: 60 s).
    pub ready_timeout: Duration,
    /// The seeded database: passed to the server as `DATABASE_URL` and
    /// `DB_POOL_SIZE` and read by the database checks; `None` skips them.
    pub database: Option<DatabaseAccess>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            ready_timeout: Duration::from_secs(60),
            database: None,
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
    };
    let started = free_port()
        .map_err(|e| format!("no free port: {e}"))
        .and_then(|port| {
            let env = opts
                .database
                .as_ref()
                .map(DatabaseAccess::server_env)
                .unwrap_or_default();
            Server::start_env(target, port, &log, &[], &env).map_err(|e| e.to_string())
        });
    let mut server = match started {
        Ok(server) => server,
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
            let check_opts = CheckOptions {
                sync_workers: target.sync_workers,
                database: opts.database.clone(),
                ..Default::default()
            };
            let logged_before = file_len(&log);
            report
                .checks
                .extend(check_server(server.addr(), &check_opts));
            report
                .checks
                .push(quiet_check(file_len(&log) - logged_before));
        }
        Err(e) => {
            report.checks.push(Check::fail(
                Column::Ready,
                Aspect::Start,
                Failure::Start(format!("{e:#}")),
            ));
        }
    }
    let stop = server.stop();
    report.checks.push(match stop.leftovers {
        false => Check::pass(Column::Shutdown, Aspect::Leftovers),
        true => Check::fail(Column::Shutdown, Aspect::Leftovers, Failure::Leftovers),
    });
    report.stop = Some(stop);
    report
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
