//! What a verification found, as data: the table's columns, the aspect of a
//! column each check looked at, one check's verdict and a target's report.
//! Why a check failed is in `failure`.

use std::path::PathBuf;
use std::time::Duration;

use super::failure::Failure;
use crate::process::StopReport;
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
    /// The CPUs kept busy under a saturating CPU-bound load.
    Cpus,
    /// The TLS port, for a target that claims `tls`.
    Tls,
    /// The WebSocket echo at `/ws`, for a target that claims `ws`.
    Ws,
    Shutdown,
}

impl Column {
    /// Every column in table order: ready, the routes in SPEC.md order, then
    /// the protocol and lifecycle checks.
    pub const ALL: [Column; 10 + ScenarioName::ALL.len()] = {
        let routes = ScenarioName::ALL.len();
        let mut all = [Column::Ready; 10 + ScenarioName::ALL.len()];
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
        all[6 + routes] = Column::Cpus;
        all[7 + routes] = Column::Tls;
        all[8 + routes] = Column::Ws;
        all[9 + routes] = Column::Shutdown;
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
            Column::Cpus => "cpus",
            Column::Tls => "tls",
            Column::Ws => "ws",
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
    /// TechEmpower's rule: every response names its `Server`.
    Server,
    /// TechEmpower's rule: every response has a `Date`.
    Date,
    /// TechEmpower's rule: `Date` is not frozen (two requests 3 s apart).
    CachedDate,
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
    /// `pg_stat_statements` counts the queries, rows read and rows updated
    /// that TechEmpower's verifier expects of a concurrent load.
    QueryCount,
    /// Every request of that load answered below 400.
    Transactions,
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
    /// CPU time from the server's cgroup under a saturating load.
    Cpus,
    /// ALPN gives `h2` exactly when the manifest claims it.
    Alpn,
    /// With `TLS_CLIENT_CA`, a client without a certificate is not served.
    ClientCert,
    /// The WebSocket upgrade: 101 with the right `Sec-WebSocket-Accept`.
    Handshake,
    /// WebSocket messages echoed byte for byte, of the same type.
    Echo,
    /// A WebSocket ping answered by a pong with its payload.
    Pong,
    /// A WebSocket close (1000) answered by a close, then the TCP close.
    CloseHandshake,
    /// An unmasked WebSocket client frame answered by a close with 1002.
    Unmasked,
    /// Not checked; the note says why.
    Skipped,
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
    /// The CPUs the server kept busy under a saturating bcrypt load, when
    /// measured.
    pub cpu_use: Option<CpuUse>,
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

/// The share of its CPUs a server must keep busy: 1.3 of 2 (issue 20).
pub const MIN_SHARE: f64 = 0.65;
/// What the check measured, in CPU seconds per wall second: the server's
/// use of the `given` CPUs, and what every other process (the generator
/// included) used of them meanwhile, which the server could not have.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuUse {
    pub used: f64,
    pub given: usize,
    pub others: f64,
}

impl CpuUse {
    /// The CPUs the server must keep busy: [`MIN_SHARE`] of those it
    /// could have had, so that a busy shared machine does not fail a
    /// server that scales (on a quiet one, 1.3 of 2 less the generator's
    /// few hundredths).
    pub fn needed(&self) -> f64 {
        MIN_SHARE * (self.given as f64 - self.others).max(0.0)
    }

    pub fn enough(&self) -> bool {
        self.used > self.needed()
    }
}
