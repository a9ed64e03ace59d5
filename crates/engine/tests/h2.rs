//! HTTP/2 against Debian's nginx: over TLS (ALPN h2) and cleartext (h2c
//! with prior knowledge), exact `-n`, streams that are really concurrent
//! and bounded by the server's SETTINGS_MAX_CONCURRENT_STREAMS, response
//! checks per stream, a reset stream and a GOAWAY counted as their own
//! classes, and a server without HTTP/2 refused with a reason.
//!
//! Concurrency is read from the run's own figures by Little's law: the mean
//! requests in flight equal the rate times the mean latency, whatever the
//! machine's speed (no timing budget).

#![allow(clippy::unwrap_used)]

mod common;
mod nginx_tls;

use common::stops::{assert_accounted, requests};
use nginx_tls::{NginxTls, Setup};
use shootout_engine::{
    BodyMatch, Control, Endpoint, EngineError, Expect, Load, LoadReport, Plan, PlanBuilder,
    StatusMatch, Summary, TlsOptions, Verify, Workload,
};
use std::time::Duration;

fn plan(url: &str, connections: usize, n: u64, streams: usize, nginx: &NginxTls) -> PlanBuilder {
    let workload = Workload::new(Load::Closed { connections }, requests(n)).unwrap();
    let builder = Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .threads(1)
        .timeout(Duration::from_secs(10))
        .http2(Some(streams));
    if url.starts_with("https") {
        return builder.tls(TlsOptions {
            verify: Verify::CaFile(nginx.certs.ca.clone()),
            ..TlsOptions::default()
        });
    }
    builder
}

fn run(plan: PlanBuilder) -> LoadReport {
    let report = shootout_engine::run(&plan.build().unwrap(), &Control::new()).unwrap();
    assert_accounted(&report.summary);
    report
}

/// Mean requests in flight over the run (Little's law).
fn mean_in_flight(s: &Summary) -> f64 {
    s.rps * s.latency_ms.mean / 1000.0
}

fn h2(setup: Setup) -> Setup {
    Setup {
        http2: true,
        ..setup
    }
}

#[test]
fn h2_over_tls_is_exact_and_multiplexes_streams() {
    let Some(nginx) = nginx_tls::start("h2_over_tls", h2(Setup::default())) else {
        return;
    };
    for host in ["127.0.0.1", "localhost", "[::1]"] {
        let r = run(plan(&nginx.url(host), 2, 3001, 16, &nginx));
        let s = &r.summary;
        assert_eq!(
            (s.requests.sent, s.requests.ok),
            (3001, 3001),
            "{host}: {s:?}"
        );
        assert_eq!(s.errors.total(), 0, "{host}");
        assert_eq!(s.protocol.http, "2");
        assert_eq!(s.streams, Some(16));
        assert_eq!(s.tls.as_ref().unwrap().handshakes.done, 2, "{host}");
        // Two connections of up to 16 streams, refilled at 8 in flight.
        assert!(mean_in_flight(s) > 4.0, "{host}: {}", mean_in_flight(s));
    }
    assert_eq!(nginx.logged_requests(), 3 * 3001);
    let r = run(plan(&nginx.url("127.0.0.1"), 2, 500, 1, &nginx));
    assert_eq!(r.summary.requests.ok, 500);
    assert!(mean_in_flight(&r.summary) <= 2.05, "one stream each");
}

#[test]
fn h2c_with_prior_knowledge_is_exact() {
    let setup = h2(Setup {
        cleartext: true,
        ..Setup::default()
    });
    let Some(nginx) = nginx_tls::start("h2c_prior_knowledge", setup) else {
        return;
    };
    let r = run(plan(&nginx.h2c_url("127.0.0.1"), 3, 2000, 8, &nginx));
    let s = &r.summary;
    assert_eq!((s.requests.sent, s.requests.ok), (2000, 2000), "{s:?}");
    assert_eq!(
        (s.protocol.http.as_str(), s.protocol.tls.as_deref()),
        ("2", None)
    );
    assert!(mean_in_flight(s) > 3.0, "{}", mean_in_flight(s));
}

#[test]
fn streams_stay_within_the_servers_limit() {
    let setup = h2(Setup {
        max_streams: Some(2),
        ..Setup::default()
    });
    let Some(nginx) = nginx_tls::start("streams_within_limit", setup) else {
        return;
    };
    // nginx resets a stream past its limit: none may be.
    let r = run(plan(&nginx.url("127.0.0.1"), 1, 2000, 16, &nginx));
    let s = &r.summary;
    assert_eq!((s.requests.ok, s.errors.total()), (2000, 0), "{s:?}");
    assert!(mean_in_flight(s) <= 2.05, "{}", mean_in_flight(s));
}

#[test]
fn refusing_servers_stop_the_run_with_a_reason() {
    let Some(h1) = nginx_tls::start("h2_refused_alpn", Setup::default()) else {
        return;
    };
    let refused = plan(&h1.url("127.0.0.1"), 2, 100, 4, &h1).build().unwrap();
    let e = shootout_engine::run(&refused, &Control::new()).unwrap_err();
    assert!(matches!(e, EngineError::Http2Refused { .. }), "{e}");
    assert!(e.to_string().contains("ALPN chose 'http/1.1'"), "{e}");
    assert_eq!(h1.logged_requests(), 0, "nothing was sent over HTTP/1.1");

    let cleartext = Setup {
        cleartext: true,
        ..Setup::default()
    };
    let Some(h1) = nginx_tls::start("h2_refused_h2c", cleartext) else {
        return;
    };
    let refused = plan(&h1.h2c_url("127.0.0.1"), 2, 100, 4, &h1)
        .build()
        .unwrap();
    let e = shootout_engine::run(&refused, &Control::new()).unwrap_err();
    assert!(e.to_string().contains("HTTP/1.1 400"), "{e}");
    assert!(e.to_string().contains("h2c"), "{e}");
}

#[test]
fn expectations_are_checked_per_stream() {
    let Some(nginx) = nginx_tls::start("h2_expect", h2(Setup::default())) else {
        return;
    };
    let good = Expect {
        status: vec![StatusMatch::Code(200)],
        media_type: Some("text/plain".into()),
        body: Some(BodyMatch::Exact(b"Hello, World!".to_vec())),
    };
    let r = run(plan(&nginx.url("localhost"), 2, 1000, 8, &nginx).expect(good.clone()));
    assert_eq!(
        (r.summary.requests.ok, r.summary.errors.mismatch),
        (1000, 0)
    );
    let bad = Expect {
        body: Some(BodyMatch::Exact(b"Hello, World?".to_vec())),
        ..good
    };
    let r = run(plan(&nginx.url("localhost"), 2, 1000, 8, &nginx).expect(bad));
    let s = &r.summary;
    assert_eq!((s.requests.ok, s.errors.mismatch), (0, 1000), "{s:?}");
    let m = s.first_mismatch.as_ref().unwrap();
    assert!(m.reason.contains("byte 12"), "{m:?}");
}

#[test]
fn resets_and_goaway_are_their_own_classes() {
    let setup = h2(Setup {
        keepalive_requests: Some(100),
        ..Setup::default()
    });
    let Some(nginx) = nginx_tls::start("h2_reset_goaway", setup) else {
        return;
    };
    let reset = format!("{}reset", nginx.url("127.0.0.1"));
    let r = run(plan(&reset, 1, 50, 4, &nginx));
    let s = &r.summary;
    assert_eq!((s.errors.stream_reset, s.errors.total()), (50, 50), "{s:?}");
    // After 100 requests nginx says GOAWAY: the connection is replaced and
    // the streams it did not take are counted as such.
    let r = run(plan(&nginx.url("127.0.0.1"), 1, 1000, 8, &nginx));
    let s = &r.summary;
    assert_eq!(s.requests.sent, 1000, "{s:?}");
    assert_eq!(s.errors.total(), s.errors.goaway, "{s:?}");
    assert!(s.requests.ok >= 900, "{s:?}");
    assert!(s.tls.as_ref().unwrap().handshakes.done >= 9, "{s:?}");
}
