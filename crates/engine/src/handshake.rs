//! A worker's TLS handshake figures, apart from its request figures:
//! handshakes done, resumed and failed, their latency (connect start to
//! handshake end) in a histogram of their own, the version and cipher
//! suite negotiated, and every TLS failure by cause. Merged across workers
//! like the [`Recorder`](crate::stats::Recorder) that holds it.

use crate::report::{Handshakes, LatencySummary, TlsSummary};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A handshake that completed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Handshake {
    /// From the start of the TCP connect to the handshake's end.
    pub took: Duration,
    pub resumed: bool,
    /// "1.3" or "1.2".
    pub version: &'static str,
    pub suite: &'static str,
    pub at: Instant,
}

/// What a connection's TLS did since the worker last asked.
#[derive(Debug, Default)]
pub(crate) struct TlsNews {
    pub done: Option<Handshake>,
    /// A TLS failure and its cause (the alert or the local error); `true`
    /// when it ended the handshake.
    pub failed: Option<(bool, String)>,
}

#[derive(Debug, Clone)]
pub(crate) struct TlsRecorder {
    pub counts: Handshakes,
    /// Microseconds from connect start to handshake end.
    pub latency: Histogram<u64>,
    version: Option<&'static str>,
    suite: Option<&'static str>,
    /// Every TLS failure of the measured phase by its cause.
    failures: BTreeMap<String, u64>,
}

impl TlsRecorder {
    /// `latency`: an empty histogram of the run's bounds.
    pub fn new(latency: Histogram<u64>) -> TlsRecorder {
        TlsRecorder {
            counts: Handshakes::default(),
            latency,
            version: None,
            suite: None,
            failures: BTreeMap::new(),
        }
    }

    /// Records what a connection's TLS did: the version and suite spoken
    /// from any handshake (keep-alive connections shake hands during the
    /// warm-up, and the measured phase speaks what they agreed), counts and
    /// latency only when it happened in the measured phase (from
    /// `measure_start`, at `now`).
    pub fn record(&mut self, news: TlsNews, measure_start: Instant, now: Instant) {
        if let Some(h) = news.done {
            self.version.get_or_insert(h.version);
            self.suite.get_or_insert(h.suite);
        }
        if let Some(h) = news.done.filter(|h| h.at >= measure_start) {
            self.counts.done += 1;
            self.counts.resumed += u64::from(h.resumed);
            self.latency
                .saturating_record((h.took.as_micros() as u64).max(1));
        }
        if let Some((in_handshake, cause)) = news.failed.filter(|_| now >= measure_start) {
            self.counts.failed += u64::from(in_handshake);
            *self.failures.entry(cause).or_default() += 1;
        }
    }

    /// Whether any handshake completed, warm-up included.
    pub fn any_completed(&self) -> bool {
        self.version.is_some()
    }

    pub fn merge(&mut self, other: TlsRecorder) {
        self.counts.done += other.counts.done;
        self.counts.resumed += other.counts.resumed;
        self.counts.failed += other.counts.failed;
        let _ = self.latency.add(&other.latency);
        self.version = self.version.or(other.version);
        self.suite = self.suite.or(other.suite);
        for (cause, n) in other.failures {
            *self.failures.entry(cause).or_default() += n;
        }
    }

    /// The JSON figures; `cert_asked`: handshakes in which the server asked
    /// for a client certificate the plan did not have. `verify`: the plan
    /// verifies the server; a certificate is reported verified only when a
    /// handshake completed.
    pub fn summary(&self, verify: bool, client_cert: bool, cert_asked: u64) -> TlsSummary {
        TlsSummary {
            version: self.version.map(str::to_string),
            cipher_suite: self.suite.map(str::to_string),
            verified: verify && self.any_completed(),
            client_cert,
            client_cert_asked: cert_asked,
            handshakes: self.counts.clone(),
            handshake_ms: LatencySummary::from_histogram(&self.latency),
            failures: self.failures.clone(),
        }
    }
}
