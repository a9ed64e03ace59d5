//! A deterministic run shaped like the `tls` study, for the report's
//! protocol labels, TLS-cost table and handshake rows: two targets, three
//! repetitions, plaintext in cleartext and over TLS 1.3 at 64 keep-alive
//! connections, then 16 new connections per request in cleartext, over TLS
//! with full handshakes and with resumed ones; json in cleartext and over
//! TLS. go-nethttp keeps 60% of its cleartext rate over TLS, rust-axum 85%
//! (so the largest and smallest TLS cost are known), with some noise.

use crate::{measurement, new_run, target_record, Rng};
use shootout_engine::{Handshakes, LatencySummary, TlsSummary};
use shootout_store::{Measurement, RunStatus, Store, StoreError, TargetStatus};
use std::path::Path;

/// The study text of the run.
pub const STUDY_TEXT: &str = r#"name = "tls"
description = "A synthetic run shaped like the tls study."
source = "a synthetic fixture"
targets = ["go-nethttp", "rust-axum"]
repetitions = 3
metrics = ["rps", "p99_ms", "handshakes", "handshakes_resumed", "handshakes_failed", "handshake_p99_ms"]

[[scenario]]
name = "plaintext"
levels = [
    { connections = 64, duration = "3s" },
    { connections = 64, duration = "3s", protocol = "tls" },
    { connections = 16, duration = "3s", keepalive = false },
    { connections = 16, duration = "3s", protocol = "tls", keepalive = false },
    { connections = 16, duration = "3s", protocol = "tls", keepalive = false, tls_resume = true },
]

[[scenario]]
name = "json"
levels = [
    { connections = 64, duration = "3s" },
    { connections = 64, duration = "3s", protocol = "tls" },
]
"#;

/// (target, cleartext plaintext req/s, share kept over TLS).
pub const TARGETS: [(&str, f64, f64); 2] = [
    ("go-nethttp", 70_000.0, 0.60),
    ("rust-axum", 100_000.0, 0.85),
];

/// How a measurement reached its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Way {
    /// The TLS version spoken, None in cleartext.
    pub tls: Option<&'static str>,
    pub client_cert: bool,
    pub keepalive: bool,
    /// Without keep-alive over TLS: whether handshakes resumed.
    pub resumed: bool,
}

/// A fixture measurement reached `way`: its summary's protocol, keep-alive
/// and (over TLS) handshake figures say so.
pub fn over(mut m: Measurement, way: Way) -> Measurement {
    let s = &mut m.summary;
    s.keepalive = way.keepalive;
    s.protocol.tls = way.tls.map(str::to_string);
    s.protocol.client_cert = way.client_cert;
    s.tls = way.tls.map(|v| {
        // New connections shake hands once per request; kept-alive ones
        // did so in the warm-up.
        let done = if way.keepalive {
            0
        } else {
            s.requests.completed
        };
        TlsSummary {
            version: Some(v.to_string()),
            cipher_suite: Some("TLS13_AES_128_GCM_SHA256".into()),
            verified: true,
            client_cert: way.client_cert,
            client_cert_asked: 0,
            handshakes: Handshakes {
                done,
                resumed: if way.resumed { done } else { 0 },
                failed: 0,
            },
            handshake_ms: LatencySummary {
                p99: if way.resumed { 0.4 } else { 1.2 },
                ..LatencySummary::default()
            },
            failures: Default::default(),
        }
    });
    m
}

/// One plaintext measurement of `target` reached `way` (for unit tests).
pub fn sample(target: &str, way: Way) -> Measurement {
    let m = measurement(
        target,
        "plaintext",
        0,
        "c=64 3s",
        0,
        10_000.0,
        false,
        &mut Rng(1),
    );
    over(m, way)
}

/// (scenario, level, label, share of the cleartext rate before TLS, way).
fn plan() -> Vec<(&'static str, u32, &'static str, f64, Way)> {
    let clear = Way {
        tls: None,
        client_cert: false,
        keepalive: true,
        resumed: false,
    };
    let tls = Way {
        tls: Some("1.3"),
        ..clear
    };
    let new = Way {
        keepalive: false,
        ..clear
    };
    let full = Way {
        keepalive: false,
        ..tls
    };
    let resumed = Way {
        resumed: true,
        ..full
    };
    vec![
        ("plaintext", 0, "c=64 3s", 1.0, clear),
        ("plaintext", 1, "c=64 3s tls", 1.0, tls),
        ("plaintext", 2, "c=16 3s", 0.2, new),
        ("plaintext", 3, "c=16 3s tls", 0.2, full),
        ("plaintext", 4, "c=16 3s tls resumed", 0.2, resumed),
        ("json", 0, "c=64 3s", 0.9, clear),
        ("json", 1, "c=64 3s tls", 0.9, tls),
    ]
}

/// Writes the tls-shaped run into the database at `path`; its id.
pub fn write_tls_run(path: &Path) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "tls".into();
    header.study_text = STUDY_TEXT.into();
    let id = store.begin_run(&header)?;
    let mut rng = Rng(2121);
    for (target, base, kept) in TARGETS {
        let framework = target.split('-').nth(1).unwrap_or(target);
        store.record_target(id, &target_record(target, framework, TargetStatus::Ok))?;
        for rep in 0..3 {
            for (scenario, level, label, share, way) in plan() {
                let over_tls = if way.tls.is_some() { kept } else { 1.0 };
                let rps = base * share * over_tls * (1.0 + 0.01 * rng.noise());
                let m = measurement(target, scenario, level, label, rep, rps, false, &mut rng);
                store.record_measurement(id, &over(m, way))?;
            }
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}
