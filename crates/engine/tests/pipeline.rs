//! HTTP/1.1 pipelining against in-process servers that read requests one
//! at a time from a buffer (so pipelined requests queue up in it, and the
//! server counts those that did): exact counts, the open loop's rate,
//! per-request latency, and servers that close or stall a pipelined
//! connection, whose lost requests are counted once each and never hang.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, duration, requests};
use common::{ok, Action, TestServer};
use shootout_engine::{
    Control, Endpoint, Load, LoadReport, Plan, PlanBuilder, PlanField, Stop, Workload,
};
use std::time::{Duration, Instant};

fn plan(url: &str, load: Load, stop: Stop, depth: usize) -> PlanBuilder {
    let workload = Workload::new(load, stop).unwrap();
    Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .threads(2)
        .pipeline(depth)
}

/// Runs the plan within `limit` and checks the request accounting.
fn run_within(p: PlanBuilder, limit: Duration) -> LoadReport {
    let p = p.build().unwrap();
    let start = Instant::now();
    let r = shootout_engine::run(&p, &Control::new()).unwrap();
    assert!(start.elapsed() < limit, "run took {:?}", start.elapsed());
    assert_accounted(&r.summary);
    assert_eq!(r.summary.pipeline, p.pipeline());
    r
}

#[test]
fn depth_16_sends_exactly_n_requests_pipelined() {
    let server = TestServer::start(|_| Action::Reply(ok("Hello, World!")));
    let r = run_within(
        plan(
            &server.url("/"),
            Load::Closed { connections: 4 },
            requests(1000),
            16,
        ),
        Duration::from_secs(20),
    );
    let s = &r.summary;
    assert_eq!(server.requests(), 1000);
    assert_eq!(s.requests.sent, 1000);
    assert_eq!(s.requests.ok, 1000);
    assert_eq!(s.status.get("200"), Some(&1000));
    assert_eq!(server.connections(), 4, "pipelined connections are kept");
    let head =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\n".len() as u64;
    assert_eq!(s.bytes_received, 1000 * (head + 13));
    assert!(
        server.pipelined() >= 500,
        "only {} requests found another queued behind them",
        server.pipelined()
    );
}

#[test]
fn depth_1_never_pipelines() {
    let server = TestServer::start(|_| Action::Reply(ok("x")));
    let r = run_within(
        plan(
            &server.url("/"),
            Load::Closed { connections: 4 },
            requests(500),
            1,
        ),
        Duration::from_secs(20),
    );
    assert_eq!(r.summary.requests.ok, 500);
    assert_eq!(server.pipelined(), 0);
}

#[test]
fn open_loop_keeps_its_rate_when_pipelining() {
    let server = TestServer::start(|_| Action::Reply(ok("Hello, World!")));
    let load = Load::Open {
        rate: 200.0,
        connections: 2,
    };
    let r = run_within(
        plan(&server.url("/"), load, duration(Duration::from_secs(3)), 8),
        Duration::from_secs(10),
    );
    let s = &r.summary;
    assert!((s.rps - 200.0).abs() <= 4.0, "achieved {} r/s", s.rps);
    assert_eq!(s.errors.total(), 0);
    assert_eq!(s.requests.sent, s.requests.completed + s.requests.cut);
}

/// The server answers one pipelined request at a time, 5 ms each, so a
/// request waits behind those sent before it on its connection: its own
/// latency runs from its own send to its own response.
#[test]
fn each_request_is_timed_from_its_own_send() {
    let server = TestServer::start(|_| {
        std::thread::sleep(Duration::from_millis(5));
        Action::Reply(ok("slow"))
    });
    let r = run_within(
        plan(
            &server.url("/"),
            Load::Closed { connections: 2 },
            requests(400),
            4,
        ),
        Duration::from_secs(20),
    );
    let l = &r.summary.latency_ms;
    assert!(
        l.min >= 5.0,
        "min {} ms is below the 5 ms service time",
        l.min
    );
    assert!(l.p50 >= 5.0, "p50 {} ms", l.p50);
    // Refilled to 4 as answers arrive, a request waits for the 3 ahead of
    // it and its own: about 20 ms. Measured from the connection's first
    // send it would grow without bound; from the previous answer, ~5 ms.
    assert!(l.p50 >= 15.0, "p50 {} ms does not include the queue", l.p50);
    assert!(l.p50 <= 60.0, "p50 {} ms is far above 4 × 5 ms", l.p50);
}

/// The server answers k of the 16 requests written back to back, then
/// shuts the connection: the other 16 - k are read errors, each once.
#[test]
fn a_close_after_k_answers_fails_the_rest_once_each() {
    for k in [1u64, 5, 15] {
        let server = TestServer::start(move |n| {
            if n + 1 == k {
                Action::ReplyAndShutdown(ok("bye"))
            } else {
                Action::Reply(ok("hi"))
            }
        });
        let p = plan(
            &server.url("/"),
            Load::Closed { connections: 1 },
            requests(16),
            16,
        )
        .threads(1);
        let r = run_within(p, Duration::from_secs(5));
        let s = &r.summary;
        assert_eq!(s.requests.sent, 16, "k={k}");
        assert_eq!(s.requests.completed, k, "k={k}");
        assert_eq!(s.errors.read, 16 - k, "k={k}: {:?}", s.errors);
        assert_eq!(s.errors.total(), 16 - k, "k={k}: {:?}", s.errors);
    }
}

/// Connections closed again and again, with requests refilled meanwhile:
/// every answer is a completion, every lost request one read error.
#[test]
fn repeated_closes_count_every_lost_request_once() {
    let server = TestServer::start(|n| {
        if n % 7 == 6 {
            Action::ReplyAndShutdown(ok("bye"))
        } else {
            Action::Reply(ok("hi"))
        }
    });
    let p = plan(
        &server.url("/"),
        Load::Closed { connections: 3 },
        requests(600),
        8,
    );
    let r = run_within(p, Duration::from_secs(20));
    let s = &r.summary;
    assert_eq!(s.requests.sent, 600);
    assert_eq!(s.requests.completed, server.requests());
    assert_eq!(s.errors.read, 600 - s.requests.completed, "{:?}", s.errors);
    assert_eq!(s.errors.total(), s.errors.read, "{:?}", s.errors);
    assert!(s.errors.read > 0);
}

/// Request 2 stalls its connection: the timeout of the front request fails
/// the 2 then in flight (2 and 3; at depth 4 a closed loop refills at 1 in
/// flight, so nothing was written behind them) as timeouts, and the rest go
/// over a new connection.
#[test]
fn a_timeout_fails_every_request_on_its_connection() {
    let server = TestServer::start(|n| {
        if n == 2 {
            Action::Hang
        } else {
            Action::Reply(ok("hi"))
        }
    });
    let p = plan(
        &server.url("/"),
        Load::Closed { connections: 1 },
        requests(8),
        4,
    )
    .threads(1)
    .timeout(Duration::from_millis(300));
    let r = run_within(p, Duration::from_secs(5));
    let s = &r.summary;
    assert_eq!(s.errors.timeout, 2, "{:?}", s.errors);
    assert_eq!(s.errors.total(), 2, "{:?}", s.errors);
    assert_eq!(s.requests.completed, 6);
    assert_eq!(server.connections(), 2);
}

/// At the deadline every request in flight is cut, however many a
/// connection holds: here both connections stall with 3 to 8 each (a closed
/// loop refills a connection to 8 once it falls to 2 in flight, so one
/// with 5 of the 10 answers keeps 3 and is not refilled: 6 cut when the
/// answers split 5 and 5, 12 to 16 otherwise).
#[test]
fn the_deadline_cuts_every_request_in_flight() {
    let server = TestServer::start(|n| {
        if n < 10 {
            Action::Reply(ok("hi"))
        } else {
            Action::Hang
        }
    });
    let p = plan(
        &server.url("/"),
        Load::Closed { connections: 2 },
        duration(Duration::from_millis(500)),
        8,
    );
    let r = run_within(p, Duration::from_secs(5));
    let s = &r.summary;
    assert_eq!(s.requests.cut, s.requests.sent - 10, "{s:?}");
    assert!(
        s.requests.cut == 6 || (12..=16).contains(&s.requests.cut),
        "{s:?}"
    );
    assert_eq!(s.requests.completed, 10);
    assert_eq!(s.errors.total(), 0);
}

#[test]
fn the_plan_refuses_depth_0_and_pipelining_without_keep_alive() {
    let b = || {
        let w = Workload::new(Load::Closed { connections: 1 }, requests(1)).unwrap();
        Plan::builder(Endpoint::parse("http://127.0.0.1:9/").unwrap(), w)
    };
    let field = |b: PlanBuilder| b.build().unwrap_err().field();
    assert_eq!(field(b().pipeline(0)), PlanField::Pipeline);
    assert_eq!(
        field(b().pipeline(16).keepalive(false)),
        PlanField::Pipeline
    );
    assert_eq!(b().build().unwrap().pipeline(), 1);
}

/// A server that answers and then hangs up (without `Connection: close`):
/// a hang-up seen with the last answer must not leave new requests on the
/// dead connection waiting for the timeout, at any depth.
#[test]
fn a_hang_up_after_the_last_answer_never_stalls() {
    for depth in [1, 4] {
        let server = TestServer::start(|n| {
            if n % 3 == 2 {
                Action::ReplyAndShutdown(ok("bye"))
            } else {
                Action::Reply(ok("hi"))
            }
        });
        let p = plan(
            &server.url("/"),
            Load::Closed { connections: 2 },
            requests(300),
            depth,
        )
        .timeout(Duration::from_secs(8));
        let r = run_within(p, Duration::from_secs(4));
        let s = &r.summary;
        assert_eq!(s.requests.sent, 300);
        assert_eq!(s.errors.timeout, 0, "depth {depth}: {:?}", s.errors);
        assert_eq!(
            s.errors.total(),
            s.errors.read,
            "depth {depth}: {:?}",
            s.errors
        );
    }
}

/// Loads a server that takes one connection and answers one request every
/// `gap`, taking in whatever requests have arrived before each answer.
/// Returns how many requests each arrival brought, in order (the client's
/// writes as the server saw them), with the client's report.
fn arrivals_at_one_answer_per(gap: Duration, depth: usize, n: u64) -> (Vec<usize>, LoadReport) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let (mut arrivals, mut unanswered, mut partial) = (Vec::new(), 0, Vec::new());
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // Wait for requests only when none is left to answer.
            s.set_nonblocking(unanswered > 0).unwrap();
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(got) => {
                    partial.extend_from_slice(&buf[..got]);
                    let ends: Vec<_> = partial
                        .windows(4)
                        .enumerate()
                        .filter(|(_, w)| w == b"\r\n\r\n")
                        .map(|(i, _)| i + 4)
                        .collect();
                    if let Some(&last) = ends.last() {
                        partial.drain(..last);
                        arrivals.push(ends.len());
                        unanswered += ends.len();
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => break,
            }
            if unanswered > 0 {
                s.write_all(&ok("hi")).unwrap();
                unanswered -= 1;
                std::thread::sleep(gap);
            }
        }
        arrivals
    });
    let p = plan(&url, Load::Closed { connections: 1 }, requests(n), depth).threads(1);
    let r = run_within(p, Duration::from_secs(20));
    (server.join().unwrap(), r)
}

/// A closed loop refills a pipelined connection once three quarters of its
/// requests are answered, all the way up: every write after the first
/// carries at least three quarters of the depth (but the last: what `-n`
/// leaves), never one request per answer. Exactly `-n` requests go out,
/// each answered in order, each timed from its own send: no request waits
/// less than the answer gap, and the slowest waited for at most the
/// depth's answers ahead of it and its own.
#[test]
fn a_closed_loop_refills_three_quarters_of_a_pipeline_at_a_time() {
    let gap = Duration::from_millis(10);
    let (arrivals, r) = arrivals_at_one_answer_per(gap, 8, 35);
    assert_eq!(arrivals.iter().sum::<usize>(), 35, "{arrivals:?}");
    assert_eq!(arrivals[0], 8, "{arrivals:?}");
    // The last write is what `-n` leaves, which depends on the timing.
    let middle = &arrivals[1..arrivals.len() - 1];
    assert!(
        !middle.is_empty() && middle.iter().all(|&a| a >= 6),
        "{arrivals:?}"
    );
    let s = &r.summary;
    assert_eq!((s.requests.sent, s.requests.ok), (35, 35), "{s:?}");
    assert!(
        s.latency_ms.min >= 0.0 && s.latency_ms.min < 20.0,
        "{:?}",
        s.latency_ms
    );
    // Measured from its batch's first send or the connection's first send,
    // the last requests would show the whole run (~350 ms).
    assert!(s.latency_ms.max < 250.0, "{:?}", s.latency_ms);
}
