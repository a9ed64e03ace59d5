//! The engine's errors, apart from the code that raises them so that every
//! module may use them without importing each other: a broken rule of a plan
//! ([`PlanError`], naming its [`PlanField`]), raised by the workload, shard
//! and plan checks alike, and what stops a valid plan from starting
//! ([`EngineError`]).

use std::fmt;

/// The part of a plan a rule concerns, in engine terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanField {
    Url,
    Connections,
    /// The request budget.
    Requests,
    /// The deadline of the measured phase.
    Duration,
    /// Neither a request budget nor a deadline was given.
    Stop,
    Rate,
    Stages,
    Threads,
    Cpus,
    Timeout,
    /// The HTTP/1.1 pipeline depth.
    Pipeline,
    /// HTTP/2 and its streams per connection.
    Streams,
    /// The mix of request kinds.
    Mix,
    /// The arrival process of an open loop.
    Arrival,
    /// The CA certificates an https server is verified against.
    CaFile,
    /// The client certificate (chain) for mutual TLS.
    ClientCert,
    /// The client certificate's private key.
    ClientKey,
    /// The transport (epoll or io_uring).
    Io,
    /// WebSocket: the message (its size) and what a WebSocket load
    /// cannot send with it.
    Message,
    /// A plan in JSON ([`crate::Plan::from_json`]) that is not one: its
    /// syntax, a field missing or of the wrong type, another format.
    Json,
}

impl PlanField {
    /// The field's name in engine terms, e.g. `connections`.
    pub fn as_str(self) -> &'static str {
        match self {
            PlanField::Url => "url",
            PlanField::Connections => "connections",
            PlanField::Requests => "requests",
            PlanField::Duration => "duration",
            PlanField::Stop => "stop",
            PlanField::Rate => "rate",
            PlanField::Stages => "stages",
            PlanField::Threads => "threads",
            PlanField::Cpus => "cpus",
            PlanField::Timeout => "timeout",
            PlanField::Pipeline => "pipeline",
            PlanField::Streams => "streams",
            PlanField::Mix => "mix",
            PlanField::Arrival => "arrival",
            PlanField::CaFile => "ca_file",
            PlanField::ClientCert => "client_cert",
            PlanField::ClientKey => "client_key",
            PlanField::Io => "io",
            PlanField::Message => "message",
            PlanField::Json => "plan JSON",
        }
    }
}

impl fmt::Display for PlanField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A broken rule of a plan: which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("invalid URL '{0}': {1}")]
    Url(String, String),
    #[error("refusing to load '{0}': shootout only sends load to 127.0.0.1, localhost or [::1] unless remote addresses are allowed on purpose")]
    NotLoopback(String),
    #[error("invalid value for {field}: {reason}")]
    Invalid { field: PlanField, reason: String },
}

impl PlanError {
    pub(crate) fn invalid(field: PlanField, reason: impl Into<String>) -> PlanError {
        PlanError::Invalid {
            field,
            reason: reason.into(),
        }
    }

    /// The field the broken rule concerns.
    pub fn field(&self) -> PlanField {
        match self {
            PlanError::Url(..) | PlanError::NotLoopback(_) => PlanField::Url,
            PlanError::Invalid { field, .. } => *field,
        }
    }

    /// Why, without the field's name (for front ends that name it themselves).
    pub fn reason(&self) -> String {
        match self {
            PlanError::Invalid { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }
}

/// Errors that stop a run before it starts (a bad server is never one: its
/// failures are counted, not raised), or that stop it at once: a server
/// refusing the HTTP/2 the run asked for.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The connections need more file descriptors than this process may open.
    #[error(
        "{connections} connections need about {needed} open files, but the limit is {limit}; \
         raise it (ulimit -n) or use fewer connections"
    )]
    FdLimit {
        connections: u64,
        needed: u64,
        limit: u64,
    },
    /// A worker could not pin its thread to its CPU or create its epoll
    /// instance. The cause is shown in the message and not also returned as
    /// `source`, so `{:#}` prints it once.
    #[error("worker setup failed: {0}")]
    WorkerSetup(std::io::Error),
    #[error("a worker thread panicked")]
    WorkerPanicked,
    /// The server does not speak HTTP/2 (ALPN chose another protocol, or
    /// it did not answer the h2c preface), and HTTP/2 was asked for: the
    /// run stopped rather than fall back to HTTP/1.1.
    #[error("{url}: {why}")]
    Http2Refused { url: String, why: String },
}
