//! The TLS figures of shards added into one: handshake counts, failures by
//! cause and the servers' requests for a client certificate are summed; the
//! handshake latency histograms, which the sidecars keep as exact
//! `[microseconds, count]` pairs, are added like the request latency.

use crate::log::ShardLog;
use hdrhistogram::Histogram;
use shootout_engine::{LatencySummary, Summary, TlsSummary};

/// Puts the TLS figures of `logs` added into their merged `summary`, and
/// returns the added handshake histogram (None over cleartext).
pub fn merge_into(summary: &mut Summary, logs: &[ShardLog]) -> Option<Histogram<u64>> {
    let summaries: Vec<&Summary> = logs.iter().map(|l| &l.sidecar.summary).collect();
    let handshake_us: Vec<_> = logs
        .iter()
        .map(|l| l.sidecar.handshake_us.as_ref())
        .collect();
    let (tls, handshakes) = merge(&summaries, &handshake_us);
    summary.protocol.tls = tls.as_ref().and_then(|t| t.version.clone());
    summary.tls = tls;
    handshakes
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

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_engine::Handshakes;

    fn shard(done: u64, resumed: u64, values: &[u64]) -> (Summary, Vec<[u64; 2]>) {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for v in values {
            h.record(*v).unwrap();
        }
        let json = serde_json::json!({
            "mode": "closed", "url": "https://127.0.0.1:1/", "method": "GET",
            "connections": 1, "threads": 1, "keepalive": true, "rate": null,
            "duration_s": 1.0, "rps": 1.0,
            "requests": {"sent": 0, "completed": 0, "ok": 0, "cut": 0},
            "errors": {"connect": 0, "write": 0, "read": 0, "timeout": 0, "parse": 0},
            "status": {}, "bytes_received": 0,
            "latency_ms": LatencySummary::default(),
            "latency_uncorrected_ms": null, "lag": null,
            "generator": {"cpu_seconds": 0.0, "cpu_utilization": 0.0, "cpu_us_per_request": 0.0},
        });
        let mut s: Summary = serde_json::from_value(json).unwrap();
        s.tls = Some(TlsSummary {
            version: Some("1.3".into()),
            verified: true,
            handshakes: Handshakes {
                done,
                resumed,
                failed: 1,
            },
            failures: [("alert".to_string(), 1)].into(),
            ..TlsSummary::default()
        });
        (s, crate::sidecar::handshake_pairs(&h))
    }

    #[test]
    fn shards_add_counts_causes_and_every_handshake_latency() {
        let (a, ha) = shard(3, 1, &[1000, 2000, 3000]);
        let (b, hb) = shard(1, 0, &[9000]);
        let (tls, h) = merge(&[&a, &b], &[Some(&ha), Some(&hb)]);
        let (tls, h) = (tls.unwrap(), h.unwrap());
        assert_eq!(
            (
                tls.handshakes.done,
                tls.handshakes.resumed,
                tls.handshakes.failed
            ),
            (4, 1, 2)
        );
        assert_eq!(tls.failures.get("alert"), Some(&2));
        assert_eq!(h.len(), 4, "every handshake of both shards");
        assert_eq!(tls.handshake_ms.max, h.max() as f64 / 1000.0);
        assert!((8.9..9.1).contains(&tls.handshake_ms.max));
        let (none, nothing) = merge(&[&Summary { tls: None, ..a }], &[None]);
        assert!(none.is_none() && nothing.is_none(), "cleartext shards");
    }
}
