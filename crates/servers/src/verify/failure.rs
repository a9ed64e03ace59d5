//! Why a check failed: `Failure`, the verifier's own rules, and `Tfb`, the
//! rules TechEmpower's verifier applies, worded the way TechEmpower's
//! `toolset/test_types/verifications.py` words them so that a reader can
//! set a failure here beside one there.

use std::fmt;
use std::time::Duration;

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
    /// A Content-Type that is missing or does not match `expected`: a media
    /// type, or for TechEmpower's test types its pattern.
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
    /// A rule of TechEmpower's verifier, in its words.
    Tfb(Tfb),
    /// Repeated requests answered too few distinct ids.
    SameIds {
        distinct: usize,
        requests: usize,
    },
    /// The raw body holds an unescaped `<script>`.
    Unescaped,
    /// Answered updates that the table does not hold afterwards.
    NotPersisted(String),
    /// More database connections than `DB_POOL_SIZE`.
    PoolExceeded {
        max_seen: i64,
        pool_size: u32,
    },
    /// Too few of its CPUs kept busy under a saturating CPU-bound load
    /// (hundredths of a CPU, so that a failure stays comparable).
    IdleCpus {
        used_centi: u32,
        given: usize,
        others_centi: u32,
        needed_centi: u32,
    },
    /// The TLS port does not serve as targets/SPEC.md "TLS" says.
    Tls(String),
    /// The WebSocket echo does not do as targets/SPEC.md "WebSocket" says:
    /// the check's name ("ping") and why.
    Ws {
        check: &'static str,
        why: String,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Start(why) => write!(f, "{why}"),
            Failure::Transport(why) => write!(f, "request failed: {why}"),
            Failure::Status { expected, got } => {
                write!(f, "Invalid response status, found \"{got}\", did not match \"{expected}\"")
            }
            Failure::ContentType { expected, got: Some(got) } => write!(
                f,
                "Invalid Content-Type header, found \"{got}\", did not match \"{expected}\"."
            ),
            Failure::ContentType { got: None, .. } => {
                f.write_str("Required response header missing: Content-Type")
            }
            Failure::NoFraming => f.write_str(
                "Required response size header missing, please include either \"Content-Length\" or \"Transfer-Encoding\"",
            ),
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
            Failure::Tfb(rule) => write!(f, "{rule}"),
            Failure::SameIds { distinct, requests } => {
                write!(f, "{requests} requests answered only {distinct} distinct ids: random ids expected")
            }
            Failure::Unescaped => f.write_str("the body holds a raw <script>: messages must be HTML-escaped"),
            Failure::NotPersisted(why) => write!(f, "answered updates not in the table: {why}"),
            Failure::PoolExceeded { max_seen, pool_size } => write!(
                f,
                "{max_seen} database connections seen at once, DB_POOL_SIZE is {pool_size}"
            ),
            Failure::Tls(why) => write!(f, "TLS port: {why}"),
            Failure::Ws { check, why } => write!(f, "ws: {check}: {why}"),
            Failure::IdleCpus { used_centi, given, others_centi, needed_centi } => write!(
                f,
                "used {:.2} of its {given} CPUs under a saturating bcrypt load (other processes used {:.2}), needs more than {:.2}: size the workers from SERVER_CPUS (SPEC.md \"CPUs and workers\")",
                f64::from(*used_centi) / 100.0,
                f64::from(*others_centi) / 100.0,
                f64::from(*needed_centi) / 100.0
            ),
        }
    }
}

/// The failures of TechEmpower's verifier that `Failure` has no variant
/// for, each worded as `verifications.py` words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Tfb {
    /// `Server`, `Date` (TFB also names `Content-Type` so; that is
    /// `Failure::ContentType` with nothing found).
    #[error("Required response header missing: {0}")]
    MissingHeader(&'static str),
    /// Two requests some seconds apart answered the same `Date`.
    #[error("Invalid Cached Date. Found \"{first}\" and \"{second}\" on separate requests.")]
    CachedDate { first: String, second: String },
    /// Fewer queries or rows in `pg_stat_statements` than the load implies;
    /// `found` is shown the way TFB shows it (rows divided by its margin).
    #[error("Only {found} {caption} in the database out of roughly {expected} expected.")]
    Count {
        caption: &'static str,
        found: i64,
        expected: i64,
    },
    /// Requests of the counted load that failed or answered 4xx/5xx.
    #[error("{0} failed transactions.")]
    FailedTransactions(usize),
    /// `/updates` left the whole table as it was.
    #[error("No items were updated in the database.")]
    NothingUpdated,
    /// `/updates?queries=501` changed at most 90% of the 500 rows it answers.
    #[error(
        "Only {updated} items were updated in the database out of roughly {expected} expected."
    )]
    FewUpdated { updated: usize, expected: usize },
}
