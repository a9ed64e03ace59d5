//! The TLS figures of shards added into one: handshake counts, failures by
//! cause and the servers' requests for a client certificate are summed; the
//! handshake latency histograms, which the sidecars keep as exact
//! `[microseconds, count]` pairs, are added like the request latency.

use hdrhistogram::Histogram;
use shootout_engine::{LatencySummary, Summary, TlsSummary};

/// A handshake histogram as the sidecar keeps it: every recorded value
/// (its bucket's highest equivalent value, as HdrHistogram iterates) with
/// its count.
pub fn pairs(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect()
}

/// The shards' TLS summaries and handshake histograms added (None over
/// cleartext).
pub fn merge(
    summaries: &[&Summary],
    histograms: &[Option<&Vec<[u64; 2]>>],
) -> (Option<TlsSummary>, Option<Histogram<u64>>) {
    let tls: Vec<&TlsSummary> = summaries.iter().filter_map(|s| s.tls.as_ref()).collect();
    let Some(first) = tls.first() else {
        return (None, None);
    };
    let mut latency =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("static bounds are valid");
    for pairs in histograms.iter().flatten() {
        for &[value, count] in pairs.iter() {
            let _ = latency.record_n(value.max(1), count);
        }
    }
    let mut merged = TlsSummary {
        version: tls.iter().find_map(|t| t.version.clone()),
        cipher_suite: tls.iter().find_map(|t| t.cipher_suite.clone()),
        verified: tls.iter().all(|t| t.verified),
        client_cert: first.client_cert,
        handshake_ms: LatencySummary::from_histogram(&latency),
        ..TlsSummary::default()
    };
    for t in &tls {
        let h = &mut merged.handshakes;
        h.done += t.handshakes.done;
        h.resumed += t.handshakes.resumed;
        h.failed += t.handshakes.failed;
        merged.client_cert_asked += t.client_cert_asked;
        for (cause, n) in &t.failures {
            *merged.failures.entry(cause.clone()).or_default() += n;
        }
    }
    (Some(merged), Some(latency))
}
