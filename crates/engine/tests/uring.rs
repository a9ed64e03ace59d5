//! The io_uring transport (`Io::Uring`) chosen explicitly, whatever
//! `SHOOTOUT_IO` says, against in-process servers: the same exactness as
//! epoll (`-n` exact, bytes, pipelining, closes and resets counted once,
//! expectations checked), and https refused. The whole suite also runs over
//! io_uring with `SHOOTOUT_IO=uring cargo test -p shootout-engine`. Skipped
//! (with a line saying why) where the kernel refuses io_uring.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, duration, requests};
use common::{ok, Action, TestServer};
use shootout_engine::{
    Control, Endpoint, Expect, Io, Load, LoadReport, Plan, PlanBuilder, PlanField, Stop, Workload,
};
use std::time::Duration;

fn plan(url: &str, connections: usize, stop: Stop, depth: usize) -> PlanBuilder {
    let workload = Workload::new(Load::Closed { connections }, stop).unwrap();
    Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .threads(2)
        .pipeline(depth)
        .io(Io::Uring)
}

/// Runs over io_uring, or None (skipped) where the kernel refuses it.
fn run(p: PlanBuilder) -> Option<LoadReport> {
    if let Some(why) = shootout_engine::transport::uring_unavailable() {
        shootout_testkit::machine(why);
        return None;
    }
    let r = shootout_engine::run(&p.build().unwrap(), &Control::new()).unwrap();
    assert_accounted(&r.summary);
    assert_eq!(r.summary.generator.io.as_deref(), Some("uring"));
    Some(r)
}

#[test]
fn exactly_n_requests_at_depth_1_and_16() {
    for depth in [1, 16] {
        let server = TestServer::start(|_| Action::Reply(ok("Hello, World!")));
        let Some(r) = run(plan(&server.url("/"), 4, requests(2000), depth)) else {
            return;
        };
        let s = &r.summary;
        assert_eq!(server.requests(), 2000, "depth {depth}");
        assert_eq!(
            (s.requests.sent, s.requests.ok),
            (2000, 2000),
            "depth {depth}"
        );
        assert_eq!(
            server.connections(),
            4,
            "depth {depth}: connections are kept"
        );
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n";
        assert_eq!(s.bytes_received, 2000 * (head.len() as u64 + 13));
        assert!(
            s.latency_ms.max > 0.0,
            "latency measured: {:?}",
            s.latency_ms
        );
    }
}

#[test]
fn closes_and_resets_count_each_lost_request_once() {
    let server = TestServer::start(|n| match n % 9 {
        4 => Action::ReplyAndClose(ok("bye")),
        8 => Action::Reset,
        _ => Action::Reply(ok("hi")),
    });
    // Depth 1: a server closing with pipelined requests unread would reset
    // the connection and could lose its last answer (pipeline.rs covers
    // pipelined closes, over both transports).
    let Some(r) = run(plan(&server.url("/"), 3, requests(900), 1)) else {
        return;
    };
    let s = &r.summary;
    assert_eq!(s.requests.sent, 900);
    assert_eq!(
        s.requests.completed,
        server.requests() - server.requests() / 9
    );
    assert_eq!(
        s.errors.total(),
        900 - s.requests.completed,
        "{:?}",
        s.errors
    );
}

#[test]
fn a_deadline_run_ends_on_time_with_expectations_checked() {
    let server = TestServer::start(|n| Action::Reply(ok(if n % 10 == 3 { "no" } else { "yes" })));
    let expect = Expect {
        body: Some(shootout_engine::BodyMatch::Exact("yes".into())),
        ..Expect::default()
    };
    let p = plan(&server.url("/"), 4, duration(Duration::from_millis(500)), 1).expect(expect);
    let Some(r) = run(p) else { return };
    let s = &r.summary;
    assert!(s.requests.completed > 100, "{:?}", s.requests);
    assert!(s.errors.mismatch > 0 && s.errors.mismatch < s.requests.completed);
    assert_eq!(s.errors.total(), s.errors.mismatch, "{:?}", s.errors);
}

#[test]
fn a_refused_connect_is_a_connect_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let Some(r) = run(plan(&url, 2, requests(50), 1).timeout(Duration::from_secs(2))) else {
        return;
    };
    let s = &r.summary;
    assert_eq!(s.requests.completed, 0);
    assert!(s.errors.connect > 0, "{:?}", s.errors);
    assert_eq!(s.errors.total(), s.requests.sent, "{:?}", s.errors);
}

#[test]
fn https_over_io_uring_is_refused() {
    let workload = Workload::new(Load::Closed { connections: 1 }, requests(1)).unwrap();
    let e = Plan::builder(Endpoint::parse("https://127.0.0.1:1/").unwrap(), workload)
        .io(Io::Uring)
        .build()
        .unwrap_err();
    assert_eq!(e.field(), PlanField::Io, "{e}");
}
