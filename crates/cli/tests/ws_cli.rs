//! `shootout load ws://…`: the WebSocket echo load against the testkit's
//! echo server (tungstenite, a library nobody here wrote): messages with
//! every echo checked and 0 errors; one echo in N corrupted counted as
//! exactly those mismatches; closes counted by code; hold mode holding its
//! connections open; and bad input refused with exit 2 before anything is
//! sent. Each load lasts at most 1 s.

#![allow(clippy::unwrap_used)]

mod common;

use common::{load_json, shootout, stderr};

/// Each bad input exits 2 with its message, naming the flag.
#[test]
fn bad_websocket_input_exits_2_naming_the_flag() {
    let ws = "ws://127.0.0.1:9/ws";
    let cases: &[(&[&str], &str)] = &[
        (&["ws://"], "missing host"),
        (&["wss://"], "missing host"),
        (&["ws:///ws"], "missing host"),
        (&["--message-size", "0", ws], "a message size of 0 bytes"),
        (&["--message-size", "17MiB", ws], "it must be 1 B to 16 MiB"),
        (
            &["--message-size", "lots", ws],
            "'lots' is not a size in bytes",
        ),
        (
            &["--http2", ws],
            "--http2: a ws:// or wss:// URL speaks WebSocket",
        ),
        (
            &["--hold", "1s", "http://127.0.0.1:9/"],
            "--hold needs a ws://",
        ),
        (
            &["--message-size", "8", "http://127.0.0.1:9/"],
            "--message-size needs a ws://",
        ),
        (
            &["--binary", "http://127.0.0.1:9/"],
            "--binary needs a ws://",
        ),
        (&["--ping-every", "1s", ws], "--hold <DURATION>"),
        (
            &["-m", "POST", ws],
            "-m/--method does not apply to a WebSocket load",
        ),
        (&["-H", "X-A: b", ws], "-H/--header does not apply"),
        (&["-d", "x", ws], "-d/--body and --body-file does not apply"),
        (&["--no-keepalive", ws], "--no-keepalive does not apply"),
        (&["--expect-status", "200", ws], "--expect-* does not apply"),
        (&["--io", "uring", ws], "--io uring"),
        (
            &["--hold", "1s", "-z", "1s", ws],
            "-z/--duration (--hold is how long) does not apply",
        ),
        (
            &["--hold", "1s", "-n", "10", ws],
            "-n/--requests does not apply",
        ),
        (
            &["--hold", "1s", "-q", "10", ws],
            "-q/--rate does not apply",
        ),
        (
            &["--hold", "1s", "--pipeline", "4", ws],
            "--pipeline does not apply",
        ),
        (
            &["--hold", "1s", "--ping-every", "0s", ws],
            "--ping-every: must be more than 0",
        ),
    ];
    let out = shootout(&["capacity", ws]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("capacity searches HTTP only"),
        "{}",
        stderr(&out)
    );
    for (args, message) in cases {
        let mut all = vec!["load"];
        all.extend_from_slice(args);
        let out = shootout(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

use shootout_testkit::ws_echo::{EchoRules, WsEcho};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A closed loop of 8 connections for 1 s: messages echoed and checked,
/// no error, the protocol said.
#[test]
fn echoes_are_messages_with_no_error() {
    let echo = WsEcho::start(EchoRules::default()).unwrap();
    let url = echo.url();
    let j = load_json(&["-t", "2", "-c", "8", "-z", "1s", &url], 0);
    let completed = j["requests"]["completed"].as_u64().unwrap();
    assert!(completed > 100, "{j}");
    assert_eq!(j["requests"]["ok"], j["requests"]["completed"], "{j}");
    assert_eq!(j["errors"]["mismatch"], 0, "{j}");
    assert_eq!(j["protocol"]["http"], "websocket", "{j}");
    assert_eq!(j["websocket"]["message_size"], 64, "{j}");
    // One 101 per connection (its upgrade), not per message.
    assert_eq!(j["status"], serde_json::json!({"101": 8}), "{j}");
    let errors: u64 = ["connect", "write", "read", "timeout", "parse", "tls"]
        .iter()
        .map(|k| j["errors"][k].as_u64().unwrap())
        .sum();
    assert_eq!(errors, 0, "{j}");
    assert!(j["errors"].get("closed").is_none(), "{j}");
    // The server echoed every message the load counted, and no other.
    let echoed = echo.counts().echoes.load(Ordering::Relaxed);
    assert!(echoed >= completed, "server {echoed}, load {completed}");
    // Text output says messages; binary and a pipeline work alike.
    let out = shootout(&[
        "load",
        "-c",
        "2",
        "-n",
        "400",
        "--pipeline",
        "4",
        "--binary",
        "--message-size",
        "1k",
        &url,
    ]);
    let text = common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains("Messages/s"), "{text}");
    assert!(text.contains("400 sent, 400 completed"), "{text}");
}

/// An open loop of messages: sent at the rate, latency from each one's
/// intended send beside the latency from its actual send.
#[test]
fn an_open_loop_sends_messages_at_the_rate() {
    let echo = WsEcho::start(EchoRules::default()).unwrap();
    let url = echo.url();
    let j = load_json(&["-t", "2", "-c", "4", "-q", "400", "-z", "500ms", &url], 0);
    let sent = j["requests"]["sent"].as_u64().unwrap();
    assert!((190..=210).contains(&sent), "{j}");
    assert_eq!(j["mode"], "open", "{j}");
    assert!(
        j["latency_uncorrected_ms"]["p50"].as_f64().unwrap() > 0.0,
        "{j}"
    );
    assert_eq!(
        j["requests"]["completed"].as_u64().unwrap() + j["requests"]["cut"].as_u64().unwrap(),
        sent,
        "{j}"
    );
}

/// One echo in 1000 corrupted (counted over every connection): exactly
/// messages / 1000 mismatches, each of them one the server corrupted.
#[test]
fn corrupted_echoes_are_exactly_the_mismatches() {
    let rules = EchoRules {
        corrupt_every: Some(1000),
        ..EchoRules::default()
    };
    let echo = WsEcho::start(rules).unwrap();
    for (n, extra) in [("5500", None), ("3000", Some("--binary"))] {
        let before = echo.counts().corrupted.load(Ordering::Relaxed);
        let mut args = vec!["-t", "2", "-c", "8", "-n", n];
        args.extend(extra);
        let url = echo.url();
        args.push(&url);
        let j = load_json(&args, 0);
        let corrupted = echo.counts().corrupted.load(Ordering::Relaxed) - before;
        let sent = j["requests"]["sent"].as_u64().unwrap();
        assert_eq!(sent, n.parse::<u64>().unwrap(), "{j}");
        assert_eq!(j["errors"]["mismatch"].as_u64(), Some(corrupted), "{j}");
        assert!(
            j["first_mismatch"]["reason"]
                .as_str()
                .is_some_and(|r| r.contains("echo of message")),
            "{j}"
        );
        assert_eq!(
            j["requests"]["completed"].as_u64(),
            Some(sent - corrupted),
            "{j}"
        );
        if before == 0 {
            assert_eq!(
                corrupted, 5,
                "5500 echoes from the first: floor(5500 / 1000)"
            );
        }
    }
}

/// A server that closes each connection with 1011 after 10 echoes: the
/// closes are counted under 1011, one per connection closed, and the
/// load goes on over new connections.
#[test]
fn closes_are_counted_by_code() {
    let rules = EchoRules {
        close_after: Some((10, 1011)),
        ..EchoRules::default()
    };
    let echo = WsEcho::start(rules).unwrap();
    let url = echo.url();
    // One connection, 95 messages, the server closing after every 10th
    // echo. Whether the message sent right after that echo is lost to the
    // close depends on whether the close frame came in the same read: a
    // cycle is 10 or 11 sends, so the server closes 8 or 9 times. Every
    // close it made is counted under its code, none more.
    let j = load_json(&["-t", "2", "-c", "1", "-n", "95", &url], 0);
    let made = echo.counts().closes.load(Ordering::Relaxed);
    assert!((8..=9).contains(&made), "{made} closes");
    assert_eq!(
        j["errors"]["close_codes"],
        serde_json::json!({"1011": made}),
        "{j}"
    );
    let (completed, closed) = (
        j["requests"]["completed"].as_u64().unwrap(),
        j["errors"]["closed"].as_u64().unwrap_or(0),
    );
    // The messages lost to a close are errors of class `closed`: at most
    // one per close.
    assert!(closed <= made, "{j}");
    assert_eq!(completed + closed, 95, "{j}");
    assert!(completed >= 86, "{j}");
    let out = shootout(&["load", "-c", "1", "-n", "95", &url]);
    let again = echo.counts().closes.load(Ordering::Relaxed) - made;
    let text = common::stdout(&out);
    assert!(
        text.contains(&format!("closes by code: 1011 ×{again}")),
        "{again}: {text}"
    );
}

/// Hold mode: 20 connections opened and held, pinged every 100 ms, all
/// still open at the end, then closed with 1000; the upgrades are the
/// requests.
#[test]
fn hold_mode_holds_its_connections() {
    let echo = WsEcho::start(EchoRules::default()).unwrap();
    let url = echo.url();
    let j = load_json(
        &[
            "-t",
            "2",
            "-c",
            "20",
            "--hold",
            "1s",
            "--ping-every",
            "100ms",
            &url,
        ],
        0,
    );
    let ws = &j["websocket"];
    assert_eq!(ws["hold"], true, "{j}");
    assert_eq!(ws["held_open"], 20, "{j}");
    assert_eq!(j["requests"]["completed"], 20, "{j}");
    let pings = ws["pings"].as_u64().unwrap();
    assert!(pings >= 20 * 5, "{j}");
    assert!(ws["pongs"].as_u64().unwrap() + 20 >= pings, "{j}");
    assert_eq!(echo.counts().echoes.load(Ordering::Relaxed), 0);
    // Each held connection is closed with 1000 at the end.
    shootout_testkit::wait_until(
        "a close 1000 per held connection",
        Duration::from_secs(2),
        || echo.counts().normal_closes_received.load(Ordering::Relaxed) == 20,
    );
    // A server that answers no ping: still held, no pong counted.
    let closing = WsEcho::start(EchoRules {
        no_pongs: true,
        ..EchoRules::default()
    })
    .unwrap();
    let url = closing.url();
    let j = load_json(
        &[
            "-t",
            "2",
            "-c",
            "5",
            "--hold",
            "500ms",
            "--ping-every",
            "100ms",
            &url,
        ],
        0,
    );
    assert_eq!(j["websocket"]["held_open"], 5, "{j}");
    assert_eq!(j["websocket"]["pongs"], 0, "{j}");
}

/// At the end of a load (its count reached, or its deadline) every open
/// connection is closed with 1000 (RFC 6455 §7) and the server's close
/// awaited: the server sees one close 1000 per connection, which counts
/// as no error, the messages in flight at a deadline are still cut, and
/// the status map counts one 101 per handshake, not per message.
#[test]
fn the_end_closes_each_connection_with_1000() {
    let echo = WsEcho::start(EchoRules::default()).unwrap();
    let url = echo.url();
    let closes = || echo.counts().normal_closes_received.load(Ordering::Relaxed);
    let opened = || echo.counts().connections.load(Ordering::Relaxed);
    // The count reached: nothing in flight at the end.
    let j = load_json(&["-t", "2", "-c", "4", "-n", "200", &url], 0);
    assert_eq!(opened(), 4);
    shootout_testkit::wait_until(
        "a close 1000 per connection",
        Duration::from_secs(2),
        || closes() == 4,
    );
    assert_eq!(j["requests"]["completed"], 200, "{j}");
    assert_eq!(j["status"], serde_json::json!({"101": 4}), "{j}");
    assert!(j["errors"].get("closed").is_none(), "{j}");
    assert!(j["errors"].get("close_codes").is_none(), "{j}");
    // The deadline: messages in flight are cut, not errors, and the close
    // takes no part in the duration.
    let j = load_json(
        &["-t", "2", "-c", "2", "--pipeline", "4", "-z", "300ms", &url],
        0,
    );
    assert_eq!(opened(), 6);
    shootout_testkit::wait_until(
        "a close 1000 per connection",
        Duration::from_secs(2),
        || closes() == 6,
    );
    assert_eq!(j["status"], serde_json::json!({"101": 2}), "{j}");
    assert!(j["errors"].get("closed").is_none(), "{j}");
    let errors: u64 = [
        "connect", "write", "read", "timeout", "parse", "tls", "protocol",
    ]
    .iter()
    .map(|k| j["errors"][k].as_u64().unwrap_or(0))
    .sum();
    assert_eq!(errors, 0, "{j}");
    let duration = j["duration_s"].as_f64().unwrap();
    assert!((0.29..0.32).contains(&duration), "{j}");
    // The text says one 101 per connection, never one per message.
    let out = shootout(&["load", "-c", "2", "-n", "100", &url]);
    let text = common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(text.contains("[101] 2 upgrades"), "{text}");
    assert!(!text.contains("[101] 100"), "{text}");
    assert!(text.contains(" µs CPU per message"), "{text}");
    assert!(!text.contains("per request"), "{text}");
}
