//! A plausible load summary for the unit tests that judge one (was a level
//! answered, who fell short of an offered rate) and for report-fixtures'
//! runs: a closed loop of 100 keep-alive connections over cleartext
//! HTTP/1.1 for 5 s, every request answered 200 at the rate asked. A test
//! changes the fields it is about.
//! Behind the `engine` feature, so that only the crates that ask for it
//! build the engine for their tests.

use shootout_engine::{ErrorCounts, LatencySummary, RequestCounts, Summary};
use std::collections::BTreeMap;

/// The summary of a clean 5 s closed loop that carried `rps` requests a
/// second, with a p99 of 1 ms.
pub fn summary(rps: f64) -> Summary {
    let duration_s = 5.0;
    let completed = (rps * duration_s) as u64;
    Summary {
        mode: "closed".into(),
        url: "http://127.0.0.1:8080/".into(),
        method: "GET".into(),
        connections: 100,
        threads: 1,
        keepalive: true,
        pipeline: 1,
        pipeline_refill_at: None,
        streams: None,
        rate: None,
        duration_s,
        rps,
        requests: RequestCounts {
            sent: completed,
            completed,
            ok: completed,
            cut: 0,
        },
        errors: ErrorCounts::default(),
        status: BTreeMap::from([("200".to_string(), completed)]),
        bytes_received: completed * 150,
        latency_ms: LatencySummary {
            min: 0.1,
            mean: 0.5,
            stdev: 0.2,
            p50: 0.4,
            p90: 0.8,
            p99: 1.0,
            p999: 2.0,
            max: 5.0,
        },
        latency_uncorrected_ms: None,
        lag: None,
        first_mismatch: None,
        first_violation: None,
        generator: Default::default(),
        arrival: None,
        seed: None,
        routes: Vec::new(),
        protocol: Default::default(),
        tls: None,
        websocket: None,
    }
}
