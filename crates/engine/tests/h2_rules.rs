//! HTTP/2 client rules against the strict server of `shootout-testkit`
//! (`h2_server`), which fails the connection and records the violation
//! when the engine breaks one: request bodies larger than the stream
//! window (100 bytes, and 0 with every byte granted late) wait for
//! WINDOW_UPDATEs; bodies over 16 KiB are cut into frames no larger than
//! the server's SETTINGS_MAX_FRAME_SIZE and wait for the connection's
//! window; a change of the initial window mid-connection (down, making
//! open windows negative, or up) is followed; streams stay within
//! SETTINGS_MAX_CONCURRENT_STREAMS. Every count is exact, and the server
//! sees every body byte it was sent and no violation.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, requests};
use shootout_engine::{Control, Endpoint, Load, Plan, RequestSpec, Summary, Workload};
use shootout_testkit::h2_server::{H2Server, Rules, Seen};
use std::time::Duration;

/// `n` POSTs of `body` bytes over `c` connections of up to `streams` streams.
fn load(server: &H2Server, n: u64, c: usize, streams: usize, body: usize) -> Summary {
    let workload = Workload::new(Load::Closed { connections: c }, requests(n)).unwrap();
    let plan = Plan::builder(Endpoint::parse(&server.url()).unwrap(), workload)
        .threads(1)
        .timeout(Duration::from_secs(10))
        .http2(Some(streams))
        .request(RequestSpec {
            method: "POST".into(),
            headers: vec![],
            body: vec![b'b'; body],
        })
        .build()
        .unwrap();
    let report = shootout_engine::run(&plan, &Control::new()).unwrap();
    assert_accounted(&report.summary);
    report.summary
}

/// Every request answered, the server saw exactly the bytes sent, and no rule broken.
fn assert_clean(s: &Summary, seen: &Seen, n: u64, body: usize) {
    assert_eq!(seen.violations, Vec::<String>::new(), "{seen:?}");
    assert_eq!((s.requests.sent, s.requests.ok), (n, n), "{s:?}");
    assert_eq!(s.errors.total(), 0, "{s:?}");
    assert_eq!(seen.answered, n, "{seen:?}");
    assert_eq!(seen.body_bytes, n * body as u64, "{seen:?}");
}

fn start(rules: Rules) -> H2Server {
    H2Server::start(rules).unwrap()
}

#[test]
fn bodies_over_a_window_of_100_wait_for_window_updates() {
    let server = start(Rules {
        initial_window: 100,
        body_len: 1000,
        update_delay: Duration::from_millis(2),
        stream_step: 100,
        ..Rules::default()
    });
    let s = load(&server, 60, 2, 8, 1000);
    let seen = server.seen();
    assert_clean(&s, &seen, 60, 1000);
    // Nine grants per body at least, beyond the first stream's.
    assert!(seen.updates_sent >= 9 * 59, "{seen:?}");
}

#[test]
fn bodies_over_a_window_of_0_wait_for_late_grants() {
    let server = start(Rules {
        initial_window: 0,
        body_len: 1000,
        update_delay: Duration::from_millis(5),
        stream_step: 300,
        ..Rules::default()
    });
    let s = load(&server, 40, 2, 4, 1000);
    assert_clean(&s, &server.seen(), 40, 1000);
}

#[test]
fn large_bodies_fit_the_frame_size_and_the_connection_window() {
    // 40,000-byte bodies: three frames each at the 16,384-byte limit, and
    // four streams' worth is more than the connection's 65,535-byte window,
    // which the server gives back only late.
    let server = start(Rules {
        initial_window: 1 << 20,
        max_frame: Some(16_384),
        body_len: 40_000,
        update_delay: Duration::from_millis(10),
        ..Rules::default()
    });
    let s = load(&server, 30, 1, 4, 40_000);
    assert_clean(&s, &server.seen(), 30, 40_000);
    // A larger frame size announced is used, and still kept to.
    let server = start(Rules {
        initial_window: 1 << 20,
        max_frame: Some(20_000),
        body_len: 40_000,
        ..Rules::default()
    });
    let s = load(&server, 10, 1, 2, 40_000);
    assert_clean(&s, &server.seen(), 10, 40_000);
}

#[test]
fn a_window_changed_mid_connection_moves_open_streams() {
    // Down from 600 to 100 once five were answered, at a moment a stream
    // used up its window: streams that already sent 600 bytes are at -500
    // and must wait for grants past it.
    let server = start(Rules {
        initial_window: 600,
        body_len: 1000,
        update_delay: Duration::from_millis(3),
        stream_step: 200,
        change_window: Some((5, 100)),
        ..Rules::default()
    });
    let s = load(&server, 50, 1, 8, 1000);
    let seen = server.seen();
    assert_clean(&s, &seen, 50, 1000);
    assert_eq!(seen.window_changes, 1);
    // Up from 0 to 2,000 with no stream ever granted: the waiting bodies
    // go on the change alone (the first stream went before the SETTINGS,
    // under the default window).
    let server = start(Rules {
        initial_window: 0,
        body_len: 1000,
        update_delay: Duration::from_millis(3),
        stream_step: 0,
        change_window: Some((1, 2000)),
        ..Rules::default()
    });
    let s = load(&server, 30, 1, 4, 1000);
    assert_clean(&s, &server.seen(), 30, 1000);
}

#[test]
fn streams_stay_within_the_servers_limit() {
    let server = start(Rules {
        initial_window: 100,
        max_streams: Some(3),
        body_len: 1000,
        update_delay: Duration::from_millis(2),
        ..Rules::default()
    });
    let s = load(&server, 40, 1, 16, 1000);
    let seen = server.seen();
    assert_clean(&s, &seen, 40, 1000);
    assert!(seen.max_open <= 3 && seen.max_open >= 2, "{seen:?}");
}

#[test]
fn bodyless_requests_are_untouched_by_a_window_of_0() {
    let server = start(Rules {
        initial_window: 0,
        body_len: 0,
        ..Rules::default()
    });
    let s = load(&server, 200, 2, 8, 0);
    let seen = server.seen();
    assert_clean(&s, &seen, 200, 0);
    assert_eq!(seen.updates_sent, 0, "{seen:?}");
}
