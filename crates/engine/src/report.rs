//! What a load run produces: the serialisable [`Summary`] (the JSON contract
//! of `shootout load -o json`), plus the merged histograms and the per-second
//! timeline that the runner stores and the reports chart, where the run sat
//! on the wall clock ([`RunClock`]) and what an interval log of it needs
//! ([`Intervals`]).

use crate::arrival::Arrival;
use crate::expect::Mismatch;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Request accounting. Invariant: `sent = completed + cut + errors.total()`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    /// Requests whose first byte was written (or attempted) in the measured phase.
    pub sent: u64,
    /// Requests answered with a whole, well-formed response (any status).
    pub completed: u64,
    /// Completed requests with a 2xx or 3xx status.
    pub ok: u64,
    /// Requests still in flight at the duration deadline.
    pub cut: u64,
}

/// Failed requests by class.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    /// The TCP connection could not be made.
    pub connect: u64,
    /// Writing the request failed.
    pub write: u64,
    /// Reset or EOF before a whole response.
    pub read: u64,
    /// No whole response within the timeout.
    pub timeout: u64,
    /// A malformed response.
    pub parse: u64,
    /// A whole response that failed the run's expectations (status, media
    /// type or body; see `Expect`). Never counted as completed or ok.
    #[serde(default)]
    pub mismatch: u64,
    /// The TLS handshake failed (or a TLS error ended the connection):
    /// the server's certificate was refused, an alert was received, the
    /// server hung up mid-handshake. Never counted as `connect`.
    #[serde(default)]
    pub tls: u64,
    /// HTTP/2: the server reset the request's stream (RST_STREAM). Like
    /// `goaway`, left out of JSON when 0 (as it always is over HTTP/1.1).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stream_reset: u64,
    /// HTTP/2: the server's GOAWAY left the request unprocessed (a stream
    /// above its last stream id) or ended the connection with an error.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub goaway: u64,
    /// HTTP/2: the server broke a rule of the protocol, which ends the
    /// connection and fails its streams (`first_violation` says which
    /// rule). Left out of JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub protocol: u64,
    /// WebSocket: the server answered the upgrade with another status than
    /// 101. Left out of JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub handshake_refused: u64,
    /// WebSocket: messages lost because the server closed the connection
    /// (a close frame, or none: code 1006) before their echo. Left out of
    /// JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub closed: u64,
    /// WebSocket: the server's closes by status code (1006 for a
    /// connection that ended with no close frame, 1005 for a close frame
    /// with no code), each counted once per connection closed, whether or
    /// not messages awaited their echo (so in hold mode too). Not a class:
    /// apart from `total`. Left out of JSON when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub close_codes: BTreeMap<u16, u64>,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.connect
            + self.write
            + self.read
            + self.timeout
            + self.parse
            + self.mismatch
            + self.tls
            + self.stream_reset
            + self.goaway
            + self.protocol
            + self.handshake_refused
            + self.closed
    }

    pub fn add(&mut self, other: &ErrorCounts) {
        self.connect += other.connect;
        self.write += other.write;
        self.read += other.read;
        self.timeout += other.timeout;
        self.parse += other.parse;
        self.mismatch += other.mismatch;
        self.tls += other.tls;
        self.stream_reset += other.stream_reset;
        self.goaway += other.goaway;
        self.protocol += other.protocol;
        self.handshake_refused += other.handshake_refused;
        self.closed += other.closed;
        for (&code, &n) in &other.close_codes {
            *self.close_codes.entry(code).or_default() += n;
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencySummary {
    /// Summarises a histogram recorded in microseconds.
    pub fn from_histogram(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        LatencySummary {
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

/// How late open-loop requests were sent relative to their intended time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LagSummary {
    /// Requests sent more than 1 ms after their intended time.
    pub late: u64,
    pub mean_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// Requests whose intended send time came while every connection was
    /// busy: the connection pool, not the server, delayed them.
    #[serde(default)]
    pub all_busy: u64,
    /// Requests due in the measured phase (by the offered rate) that were
    /// never sent before it ended: the generator fell that far behind. They
    /// are in no latency figure, and a `-n` budget caps them.
    #[serde(default)]
    pub unsent: u64,
}

/// The generator's own cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorUsage {
    /// User + system CPU seconds of the generator process in the measured phase.
    pub cpu_seconds: f64,
    /// `cpu_seconds / (duration_s * threads)`: 1.0 means every generator thread was busy.
    pub cpu_utilization: f64,
    /// CPU microseconds per sent request.
    pub cpu_us_per_request: f64,
    /// The transport that carried the run: "epoll" or "uring". Absent in
    /// summaries stored before there was a choice (all epoll).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<String>,
}

/// The JSON contract of a load run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub mode: String,
    pub url: String,
    pub method: String,
    pub connections: usize,
    pub threads: usize,
    pub keepalive: bool,
    /// Requests each connection kept in flight (HTTP/1.1 pipelining); 1 is
    /// none. Summaries stored before pipelining existed read as 1.
    #[serde(default = "one")]
    pub pipeline: usize,
    /// Pipelined: a connection was written again, up to `pipeline`
    /// requests, once at most this many were in flight (a quarter of the
    /// depth in a closed loop, one fewer than the depth in an open loop; 8
    /// at depth 16 before 2026-11-27, when it was half). Absent
    /// without pipelining and in summaries stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline_refill_at: Option<usize>,
    /// HTTP/2: the concurrent streams per connection asked for (the
    /// server's limit may have allowed fewer). Absent over HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<usize>,
    /// The requested (offered) rate for open loop, else null.
    pub rate: Option<f64>,
    pub duration_s: f64,
    /// Completed requests per second of measured wall time.
    pub rps: f64,
    pub requests: RequestCounts,
    pub errors: ErrorCounts,
    /// Exact status-code counts, keyed by the code as a string. Every whole
    /// response is counted, mismatches included (the map says what the
    /// server answered), so its sum is `completed + errors.mismatch`.
    pub status: BTreeMap<String, u64>,
    pub bytes_received: u64,
    /// Latency of completed requests. Open loop: from the intended send time.
    pub latency_ms: LatencySummary,
    /// Open loop only: latency from the actual send time.
    pub latency_uncorrected_ms: Option<LatencySummary>,
    /// Open loop only: how late requests were sent.
    pub lag: Option<LagSummary>,
    /// The first response that failed the expectations (the earliest to
    /// arrive across threads); null when none did or nothing was expected.
    #[serde(default)]
    pub first_mismatch: Option<Mismatch>,
    /// HTTP/2: the first rule the server was seen to break (the earliest
    /// across threads), in words; absent when none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_violation: Option<String>,
    pub generator: GeneratorUsage,
    /// Open loop only: how requests arrived (evenly spaced or Poisson).
    #[serde(default)]
    pub arrival: Option<Arrival>,
    /// The seed of the run's random draws (mix kinds, path ranges, Poisson
    /// gaps); the same seed repeats them. Null in summaries stored before it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// A mix's request kinds, each with its own counts and latency, in the
    /// mix's order; empty without a mix.
    #[serde(default)]
    pub routes: Vec<RouteSummary>,
    /// HTTP and TLS versions spoken; cleartext HTTP/1.1 in summaries
    /// stored before TLS existed.
    #[serde(default)]
    pub protocol: Protocol,
    /// Handshake figures of an `https://` run; null over cleartext.
    #[serde(default)]
    pub tls: Option<TlsSummary>,
    /// A WebSocket load's own figures (`protocol.http` "websocket", where
    /// the requests are messages); absent for HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<WsSummary>,
}

/// What a WebSocket load sent and, in hold mode, kept: its `requests` are
/// the messages echoed (each checked; a differing echo is a mismatch), or
/// in hold mode the upgrades (latency: connect to 101).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WsSummary {
    /// The bytes of each message; absent in hold mode (none is sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_size: Option<usize>,
    /// Binary messages rather than text.
    pub binary: bool,
    /// Hold mode: connections opened and kept idle, no message sent.
    pub hold: bool,
    /// Hold mode: how often each open connection was pinged; null for never.
    pub ping_every_s: Option<f64>,
    /// Hold mode: connections still open (upgraded, never closed) at the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_open: Option<u64>,
    /// Pings sent in the measured phase, and the pongs that answered them.
    pub pings: u64,
    pub pongs: u64,
}

/// One request kind of a mix. Invariant, as for the whole run:
/// `sent = completed + cut + errors.total()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteSummary {
    pub name: String,
    pub weight: u32,
    /// The path as written, ranges included (`/queries?queries={1..20}`).
    pub path: String,
    #[serde(flatten)]
    pub requests: RequestCounts,
    pub errors: ErrorCounts,
    /// Latency of this kind's completed requests (corrected in open loop).
    pub latency_ms: LatencySummary,
}

/// What a run spoke: the HTTP version, the TLS version (none over
/// cleartext) and whether a client certificate was offered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Protocol {
    pub http: String,
    /// "1.3" or "1.2" as negotiated; null over cleartext (or when no
    /// handshake completed).
    pub tls: Option<String>,
    pub client_cert: bool,
}

/// Summaries stored before TLS existed spoke cleartext HTTP/1.1.
impl Default for Protocol {
    fn default() -> Protocol {
        Protocol {
            http: "1.1".into(),
            tls: None,
            client_cert: false,
        }
    }
}

/// TLS handshakes of the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handshakes {
    /// Handshakes completed (full or resumed).
    pub done: u64,
    /// Of those, resumed from an earlier session.
    pub resumed: u64,
    /// Handshakes that failed (each also fails its requests as `tls` errors).
    pub failed: u64,
}

/// The TLS figures of an `https://` run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TlsSummary {
    pub version: Option<String>,
    pub cipher_suite: Option<String>,
    /// False when the server's certificate was not checked (`--insecure`).
    pub verified: bool,
    /// Whether a client certificate was configured.
    pub client_cert: bool,
    /// Handshakes in which the server asked for a client certificate and
    /// none was configured (counted over the whole run, warm-up included).
    pub client_cert_asked: u64,
    pub handshakes: Handshakes,
    /// From the start of the TCP connect to the end of the handshake.
    pub handshake_ms: LatencySummary,
    /// TLS failures by cause (the alert received or the local error).
    pub failures: BTreeMap<String, u64>,
}

/// One second of the measured phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// Seconds since the measured phase started.
    pub t: u32,
    pub completed: u64,
    pub errors: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Second {
    /// Second `t`, with its percentiles from a histogram in microseconds.
    pub fn new<C: hdrhistogram::Counter>(
        t: u32,
        completed: u64,
        errors: u64,
        latency: &Histogram<C>,
    ) -> Second {
        let q = |q: f64| {
            if latency.is_empty() {
                0.0
            } else {
                latency.value_at_quantile(q) as f64 / 1000.0
            }
        };
        Second {
            t,
            completed,
            errors,
            p50_ms: q(0.5),
            p99_ms: q(0.99),
        }
    }
}

/// Where a run sat on the wall clock, so that shards run on several
/// machines can be put side by side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunClock {
    /// When the measured phase started (after any warm-up).
    pub measured_from: SystemTime,
    /// How long after its planned start (`PlanBuilder::start_at`) the run
    /// actually started; zero without one or when on time.
    pub late_by: Duration,
}

/// What only an interval log needs: the run's histograms by second.
#[derive(Debug, Clone, Default)]
pub struct Intervals {
    /// Latency (as in [`LoadReport::histogram`]) of the responses completed
    /// in each second of the measured phase; exact only when the plan asked
    /// (`PlanBuilder::interval_histograms`). Together they hold the same
    /// counts as the run's histogram.
    pub latency: Vec<Histogram<u32>>,
    /// Failed requests in each second.
    pub errors: Vec<u64>,
    /// Open loop only: send lag in microseconds.
    pub lag: Option<Histogram<u64>>,
}

fn one() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Summaries stored before pipelining existed have no `pipeline`: 1,
    /// and none stored before the refill mark was recorded has one.
    #[test]
    fn a_summary_without_pipeline_reads_as_depth_1() {
        let mut s = Summary {
            mode: "closed".into(),
            url: "http://127.0.0.1:1/".into(),
            method: "GET".into(),
            connections: 1,
            threads: 1,
            keepalive: true,
            pipeline: 16,
            pipeline_refill_at: Some(8),
            streams: None,
            rate: None,
            duration_s: 1.0,
            rps: 1.0,
            requests: RequestCounts::default(),
            errors: ErrorCounts::default(),
            status: BTreeMap::new(),
            bytes_received: 0,
            latency_ms: LatencySummary::default(),
            latency_uncorrected_ms: None,
            lag: None,
            first_mismatch: None,
            first_violation: None,
            generator: GeneratorUsage::default(),
            arrival: None,
            seed: None,
            routes: Vec::new(),
            protocol: Protocol::default(),
            tls: None,
            websocket: None,
        };
        let mut v = serde_json::to_value(&s).unwrap_or_default();
        assert_eq!(v["pipeline"], 16);
        assert_eq!(v["pipeline_refill_at"], 8);
        if let Some(map) = v.as_object_mut() {
            map.remove("pipeline");
            map.remove("pipeline_refill_at");
        }
        s.pipeline = 1;
        s.pipeline_refill_at = None;
        assert_eq!(serde_json::from_value::<Summary>(v).ok(), Some(s));
    }

    /// The WebSocket classes and the closes by code: absent when none,
    /// `{"1011": 3}` in JSON, added code by code, apart from the total.
    #[test]
    fn close_codes_are_keyed_by_code_and_add_up_apart_from_the_total() {
        let none = serde_json::to_value(ErrorCounts::default()).unwrap_or_default();
        for absent in ["handshake_refused", "closed", "close_codes"] {
            assert!(none.get(absent).is_none(), "{none}");
        }
        let mut a = ErrorCounts {
            closed: 5,
            close_codes: BTreeMap::from([(1011, 3)]),
            ..ErrorCounts::default()
        };
        let b = ErrorCounts {
            handshake_refused: 2,
            close_codes: BTreeMap::from([(1011, 1), (1006, 1)]),
            ..ErrorCounts::default()
        };
        a.add(&b);
        assert_eq!(a.close_codes, BTreeMap::from([(1006, 1), (1011, 4)]));
        assert_eq!(a.total(), 7);
        let v = serde_json::to_value(&a).unwrap_or_default();
        assert_eq!(v["close_codes"], serde_json::json!({"1006": 1, "1011": 4}));
        assert_eq!(v["handshake_refused"], 2);
        assert_eq!(serde_json::from_value::<ErrorCounts>(v).ok(), Some(a));
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct LoadReport {
    pub summary: Summary,
    /// Latency in microseconds (corrected in open loop).
    pub histogram: Histogram<u64>,
    /// Open loop only: latency from the actual send, in microseconds.
    pub uncorrected: Option<Histogram<u64>>,
    pub timeline: Vec<Second>,
    pub clock: RunClock,
    pub intervals: Intervals,
    /// Over TLS: handshake latency in microseconds (what `shootout merge`
    /// adds across shards).
    pub handshakes: Option<Histogram<u64>>,
}
