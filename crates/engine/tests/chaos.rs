//! Misbehaving servers: each failure becomes a counted error of the right
//! class, nothing panics, and the run ends on time.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, duration};
use common::{ok, Action, TestServer};
use shootout_engine::{
    Control, Endpoint, ErrorCounts, Load, LoadReport, Plan, PlanBuilder, RequestSpec, Stop,
    Workload,
};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn plan(url: &str, stop: Stop) -> PlanBuilder {
    let workload = Workload::new(Load::Closed { connections: 4 }, stop).unwrap();
    Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .timeout(Duration::from_millis(500))
        .threads(2)
}

/// 200 requests or 1.5 s, whichever comes first.
fn brief() -> Stop {
    Stop {
        requests: Some(200),
        duration: Some(Duration::from_millis(1500)),
    }
}

/// Runs a [`brief`] plan and checks it ended on time.
fn run_briefly(p: PlanBuilder) -> LoadReport {
    let p = p.build().unwrap();
    assert_eq!(*p.stop(), brief());
    let start = Instant::now();
    let r = shootout_engine::run(&p, &Control::new()).unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(2500),
        "run took {:?}",
        start.elapsed()
    );
    assert_accounted(&r.summary);
    r
}

fn only(errors: &ErrorCounts) -> Vec<&'static str> {
    let all = [
        ("connect", errors.connect),
        ("write", errors.write),
        ("read", errors.read),
        ("timeout", errors.timeout),
        ("parse", errors.parse),
    ];
    all.iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, _)| *k)
        .collect()
}

#[test]
fn refused_connections_are_connect_errors() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = run_briefly(plan(&format!("http://127.0.0.1:{port}/"), brief()));
    assert_eq!(only(&r.summary.errors), ["connect"]);
    assert_eq!(r.summary.errors.connect, 200);
}

#[test]
fn garbage_is_a_parse_error() {
    let server =
        TestServer::start(|_| Action::ReplyAndClose(b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec()));
    let r = run_briefly(plan(&server.url("/"), brief()));
    assert_eq!(only(&r.summary.errors), ["parse"]);
}

#[test]
fn huge_headers_are_a_parse_error() {
    let mut head = b"HTTP/1.1 200 OK\r\nX-Huge: ".to_vec();
    head.extend(std::iter::repeat_n(b'h', 200_000));
    let server = TestServer::start(move |_| Action::Reply(head.clone()));
    let r = run_briefly(plan(&server.url("/"), brief()));
    assert_eq!(only(&r.summary.errors), ["parse"]);
}

#[test]
fn resets_and_half_bodies_are_read_errors() {
    let server = TestServer::start(|n| match n % 3 {
        0 => Action::Reset,
        1 => Action::ReplyAndClose(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf".to_vec()),
        _ => Action::Close,
    });
    let r = run_briefly(plan(&server.url("/"), brief()));
    assert_eq!(only(&r.summary.errors), ["read"]);
    assert_eq!(r.summary.errors.read, 200);
}

#[test]
fn silence_is_a_timeout() {
    let server = TestServer::start(|_| Action::Hang);
    let mut p = plan(&server.url("/"), brief());
    p = p.timeout(Duration::from_millis(200));
    let r = run_briefly(p);
    assert_eq!(only(&r.summary.errors), ["timeout"]);
    assert!(r.summary.errors.timeout >= 4);
}

#[test]
fn a_server_that_resets_while_we_write_is_a_write_error() {
    // Read a little of a large request, then reset: the rest of the write fails.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = socket2::SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        }
    });
    let mut p = plan(&format!("http://{addr}/upload"), brief());
    p = p.request(RequestSpec {
        method: "POST".into(),
        body: vec![b'z'; 16 * 1024 * 1024],
        ..RequestSpec::default()
    });
    let r = run_briefly(p);
    assert!(r.summary.errors.write > 0, "{:?}", r.summary.errors);
    assert_eq!(r.summary.requests.completed, 0);
}

#[test]
fn a_server_that_dies_mid_run_ends_on_time_with_errors() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_millis(500);
        listener.set_nonblocking(true).unwrap();
        let mut conns = Vec::new();
        while Instant::now() < deadline {
            if let Ok((s, _)) = listener.accept() {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
                conns.push(s);
            }
            for s in &mut conns {
                let mut buf = [0u8; 4096];
                if matches!(s.read(&mut buf), Ok(n) if n > 0) {
                    let _ = s.write_all(&ok("alive"));
                }
            }
        }
        // Dropping the listener and every connection: the server is gone.
    });
    let p = plan(
        &format!("http://{addr}/"),
        duration(Duration::from_millis(1500)),
    )
    .build()
    .unwrap();
    let start = Instant::now();
    let r = shootout_engine::run(&p, &Control::new()).unwrap();
    assert!(start.elapsed() < Duration::from_millis(2500));
    let s = &r.summary;
    assert!(s.requests.ok > 0, "it answered while alive");
    assert!(
        s.errors.connect > 0,
        "then connections were refused: {:?}",
        s.errors
    );
    assert_accounted(s);
}

#[test]
fn cancel_stops_a_long_run_quickly() {
    let server = TestServer::start(|_| Action::Reply(ok("x")));
    let p = plan(&server.url("/"), duration(Duration::from_secs(60)))
        .build()
        .unwrap();
    let control = Control::new();
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            control.cancel();
        });
        let r = shootout_engine::run(&p, &control).unwrap();
        assert!(r.summary.requests.ok > 0);
    });
    assert!(start.elapsed() < Duration::from_secs(2));
}
