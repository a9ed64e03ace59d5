//! Every response checked during the load: the engine against in-process
//! servers that answer a known share of wrong responses, so the mismatch
//! count, the invariant and the first mismatch can be checked exactly. Also
//! the open loop's count of requests that found every connection busy.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::assert_accounted;
use common::{ok, Action, TestServer};
use shootout_engine::{
    BodyMatch, Control, Endpoint, Expect, Load, LoadReport, Plan, StatusMatch, Stop, Workload,
};
use std::time::Duration;

const HELLO: &str = "Hello, World!";

fn run(url: &str, load: Load, stop: Stop, expect: Expect) -> LoadReport {
    let workload = Workload::new(load, stop).unwrap();
    let plan = Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .threads(2)
        .timeout(Duration::from_secs(5))
        .expect(expect)
        .build()
        .unwrap();
    let report = shootout_engine::run(&plan, &Control::new()).unwrap();
    let s = &report.summary;
    assert_accounted(s);
    assert!(s.requests.ok <= s.requests.completed);
    report
}

fn closed(n: u64) -> (Load, Stop) {
    (
        Load::Closed { connections: 4 },
        Stop {
            requests: Some(n),
            duration: Some(Duration::from_secs(30)),
        },
    )
}

fn exact_hello() -> Expect {
    Expect {
        body: Some(BodyMatch::Exact(HELLO.as_bytes().to_vec())),
        ..Expect::default()
    }
}

/// Every tenth response says "world" in lower case.
fn every_tenth_wrong() -> TestServer {
    TestServer::start(|n| Action::Reply(ok(if n % 10 == 9 { "Hello, world!" } else { HELLO })))
}

#[test]
fn a_wrong_body_on_every_tenth_response_is_a_mismatch() {
    let server = every_tenth_wrong();
    let (load, stop) = closed(1000);
    let r = run(&server.url("/"), load, stop, exact_hello());
    let s = &r.summary;
    assert_eq!(server.requests(), 1000);
    // Exactly every tenth of the 1000 answers was wrong.
    assert_eq!(s.errors.mismatch, 100, "{s:?}");
    assert_eq!(s.requests.completed, 900);
    assert_eq!(s.requests.ok, 900, "ok never counts a mismatch");
    assert_eq!(s.errors.total(), 100);
    // The status map counts what the server answered, mismatches included.
    assert_eq!(s.status.get("200"), Some(&1000));
    assert_eq!(r.histogram.len(), 900, "latency covers completed only");
    let m = s.first_mismatch.as_ref().unwrap();
    assert_eq!(m.status, 200);
    assert_eq!(m.reason, "body differs at byte 7");
    assert_eq!((m.expected.as_str(), m.got.as_str()), ("World!", "world!"));
}

#[test]
fn without_expectations_nothing_is_a_mismatch() {
    let server = every_tenth_wrong();
    let (load, stop) = closed(1000);
    let r = run(&server.url("/"), load, stop, Expect::default());
    let s = &r.summary;
    assert_eq!(s.errors.mismatch, 0);
    assert_eq!((s.requests.completed, s.requests.ok), (1000, 1000));
    assert_eq!(s.first_mismatch, None);
}

fn chunked(status: &str, content_type: &str, pieces: &[&str]) -> Vec<u8> {
    let mut w = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    for p in pieces {
        w.push_str(&format!("{:x}\r\n{p}\r\n", p.len()));
    }
    w.push_str("0\r\n\r\n");
    w.into_bytes()
}

fn with_length(status: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Eight kinds of answer in turn; which of them must pass is known.
fn answer(n: u64) -> Action {
    let text = "text/plain; charset=utf-8";
    match n % 8 {
        0 => Action::Reply(with_length("200 OK", text, HELLO)),
        1 => Action::Reply(chunked("200 OK", text, &["Hel", "lo, Wor", "ld!"])),
        // Close-delimited: no length, the body ends when the server closes.
        2 => Action::ReplyAndClose(
            format!("HTTP/1.1 200 OK\r\nContent-Type: {text}\r\n\r\n{HELLO}").into_bytes(),
        ),
        3 => Action::Reply(with_length("200 OK", text, "Hello, World")),
        4 => Action::Reply(chunked("200 OK", text, &["Hello, ", "World!", "!"])),
        5 => Action::Reply(with_length("500 Internal Server Error", text, HELLO)),
        6 => Action::Reply(with_length("200 OK", "application/json", HELLO)),
        _ => Action::Reply(chunked("200 OK", text, &["Hello, ", "world!"])),
    }
}

#[test]
fn lengths_chunks_statuses_and_types_are_all_checked() {
    let server = TestServer::start(answer);
    let expect = Expect {
        status: vec![StatusMatch::Class(2)],
        media_type: Some("text/plain".into()),
        body: Some(BodyMatch::Exact(HELLO.as_bytes().to_vec())),
    };
    // One connection: answers and mismatches then pair up in order.
    let load = Load::Closed { connections: 1 };
    let stop = Stop {
        requests: Some(800),
        duration: Some(Duration::from_secs(30)),
    };
    let r = run(&server.url("/"), load, stop, expect);
    let s = &r.summary;
    assert_eq!(s.errors.mismatch, 500, "{s:?}");
    assert_eq!(s.requests.completed, 300);
    assert_eq!(s.status.get("500"), Some(&100));
    let m = s.first_mismatch.as_ref().unwrap();
    assert_eq!(
        m.reason, "body differs at byte 12",
        "the first is the short body"
    );
    assert_eq!((m.expected.as_str(), m.got.as_str()), ("!", ""));
}

#[test]
fn each_kind_of_wrong_answer_names_itself() {
    let expect = Expect {
        status: vec![StatusMatch::Code(200)],
        media_type: Some("text/plain".into()),
        body: Some(BodyMatch::Exact(HELLO.as_bytes().to_vec())),
    };
    let cases: [(u64, &str, &str, &str); 4] = [
        (3, "body differs at byte 12", "!", ""),
        (4, "body differs at byte 13", "", "!"),
        (5, "status 500, expected 200", "", ""),
        (6, "media type differs", "text/plain", "application/json"),
    ];
    for (kind, reason, expected, got) in cases {
        let server = TestServer::start(move |_| answer(kind));
        let (load, stop) = closed(20);
        let r = run(&server.url("/"), load, stop, expect.clone());
        let s = &r.summary;
        assert_eq!((s.errors.mismatch, s.requests.completed), (20, 0), "{kind}");
        let m = s.first_mismatch.clone().unwrap();
        assert_eq!(
            (m.reason.as_str(), m.expected.as_str(), m.got.as_str()),
            (reason, expected, got)
        );
    }
}

#[test]
fn a_shape_checks_both_ends_of_a_varying_body() {
    let server = TestServer::start(|n| {
        let body = if n % 10 == 9 {
            format!("[{{\"id\":{n},\"randomNumber\":{}}}", n * 7)
        } else {
            format!("[{{\"id\":{n},\"randomNumber\":{}}}]\n", n * 7)
        };
        Action::Reply(chunked(
            "200 OK",
            "application/json",
            &[&body[..3], &body[3..]],
        ))
    });
    let expect = Expect {
        media_type: Some("application/json".into()),
        body: Some(BodyMatch::Shape {
            prefix: b"[{\"id\":".to_vec(),
            suffix: b"}]".to_vec(),
        }),
        ..Expect::default()
    };
    let (load, stop) = closed(500);
    let r = run(&server.url("/"), load, stop, expect);
    assert_eq!(r.summary.errors.mismatch, 50);
    assert_eq!(r.summary.requests.completed, 450);
    let m = r.summary.first_mismatch.unwrap();
    assert_eq!(m.reason, "body does not end as expected");
}

fn open(rate: f64, connections: usize) -> (Load, Stop) {
    (
        Load::Open { rate, connections },
        Stop {
            requests: None,
            duration: Some(Duration::from_millis(600)),
        },
    )
}

#[test]
fn all_busy_counts_sends_that_found_no_free_connection() {
    // One connection and a 20 ms service time serve 50/s; 200/s are offered.
    let slow = TestServer::start(|_| {
        std::thread::sleep(Duration::from_millis(20));
        Action::Reply(ok(HELLO))
    });
    let (load, stop) = open(200.0, 2);
    let r = run(&slow.url("/"), load, stop, Expect::default());
    let lag = r.summary.lag.unwrap();
    assert!(
        lag.all_busy * 2 > r.summary.requests.sent,
        "most sends found both connections busy: {lag:?}"
    );

    // A fast server and four connections at 100/s: nearly always one free.
    let fast = TestServer::start(|_| Action::Reply(ok(HELLO)));
    let (load, stop) = open(100.0, 4);
    let r = run(&fast.url("/"), load, stop, Expect::default());
    let lag = r.summary.lag.unwrap();
    assert!(
        lag.all_busy * 10 <= r.summary.requests.sent,
        "a free connection was almost always there: {lag:?}"
    );
}
