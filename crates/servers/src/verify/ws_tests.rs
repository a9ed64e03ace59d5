//! Proves each check of the `ws` column can fail: the column passes
//! against the testkit's WebSocket echo server (tungstenite's) as it is,
//! and against each of its deliberate faults fails exactly the check the
//! fault breaks, naming it: pings unanswered, unmasked frames echoed,
//! echoes corrupted, a close with 1011 instead of an echo, a wrong
//! `Sec-WebSocket-Accept`, and an HTTP server with no `/ws` at all.

use std::net::SocketAddr;
use std::time::Duration;

use super::fake::{correct, serve};
use super::ws::check_ws;
use super::*;
use shootout_testkit::ws_echo::{EchoRules, WsEcho};

/// The `ws` checks against the testkit echo server with `rules`.
fn against(rules: EchoRules) -> Vec<Check> {
    let server = WsEcho::start(rules).expect("start the echo server");
    check_ws(server.addr(), Duration::from_secs(1))
}

/// The failed checks as (aspect, failure text).
fn failures(checks: &[Check]) -> Vec<(Aspect, String)> {
    checks
        .iter()
        .filter_map(|c| c.result.as_ref().err().map(|f| (c.aspect, f.to_string())))
        .collect()
}

/// Asserts exactly one check failed, at `aspect`, and returns why.
fn only_failure(checks: &[Check], aspect: Aspect) -> String {
    assert!(checks.iter().all(|c| c.column == Column::Ws), "{checks:#?}");
    let failed = failures(checks);
    assert_eq!(failed.len(), 1, "expected one failure, got {failed:#?}");
    let (a, why) = failed.into_iter().next().unwrap_or_else(|| unreachable!());
    assert_eq!(a, aspect, "{why}");
    why
}

#[test]
fn the_testkit_echo_passes_every_check() {
    let checks = against(EchoRules::default());
    assert_eq!(failures(&checks), vec![]);
    let aspects: Vec<_> = checks.iter().map(|c| c.aspect).collect();
    assert_eq!(
        aspects,
        [
            Aspect::Start,
            Aspect::Handshake,
            Aspect::Echo,
            Aspect::Pong,
            Aspect::CloseHandshake,
            Aspect::Unmasked
        ]
    );
    // tungstenite's server closes with 1002, so no note of a bare close.
    assert!(checks.iter().all(|c| c.note.is_none()), "{checks:#?}");
}

#[test]
fn unanswered_pings_fail_ping() {
    let rules = EchoRules {
        no_pongs: true,
        ..EchoRules::default()
    };
    let why = only_failure(&against(rules), Aspect::Pong);
    assert_eq!(why, "ws: ping: no pong within 2 s");
}

#[test]
fn echoed_unmasked_frames_fail_unmasked() {
    let rules = EchoRules {
        accept_unmasked: true,
        ..EchoRules::default()
    };
    let why = only_failure(&against(rules), Aspect::Unmasked);
    assert_eq!(
        why,
        "ws: unmasked frame: the server echoed it instead of closing with 1002"
    );
}

#[test]
fn a_corrupted_echo_fails_echo() {
    let rules = EchoRules {
        corrupt_every: Some(1),
        ..EchoRules::default()
    };
    let why = only_failure(&against(rules), Aspect::Echo);
    assert_eq!(
        why,
        "ws: echo: the 1-byte text message came back as a text message of 1 byte, different from byte 0 on"
    );
}

#[test]
fn a_close_with_1011_instead_of_an_echo_fails_echo() {
    // The first message is echoed, then the connection closed with 1011.
    let rules = EchoRules {
        close_after: Some((1, 1011)),
        ..EchoRules::default()
    };
    let why = only_failure(&against(rules), Aspect::Echo);
    assert_eq!(
        why,
        "ws: echo: the 1-byte binary message was answered by a close frame (1011) instead of its echo"
    );
}

#[test]
fn a_wrong_accept_key_fails_the_handshake_and_stops_there() {
    let rules = EchoRules {
        wrong_accept: true,
        ..EchoRules::default()
    };
    let checks = against(rules);
    let why = only_failure(&checks, Aspect::Handshake);
    assert!(why.starts_with("ws: handshake: "), "{why}");
    assert!(why.contains("Sec-WebSocket-Accept"), "{why}");
    assert_eq!(checks.last().map(|c| c.aspect), Some(Aspect::Handshake));
}

#[test]
fn an_http_server_without_ws_fails_the_handshake() {
    let addr: SocketAddr = serve(correct, false);
    let why = only_failure(&check_ws(addr, Duration::from_secs(1)), Aspect::Handshake);
    assert_eq!(
        why,
        "ws: handshake: GET /ws with Upgrade: websocket answered 404 Not Found, expected 101 Switching Protocols"
    );
}

#[test]
fn a_closed_port_fails_start_within_the_wait() {
    let port = crate::process::free_port().expect("a free port");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let why = only_failure(&check_ws(addr, Duration::from_millis(300)), Aspect::Start);
    let said = format!("ws: port: the WebSocket port {port} did not open within");
    assert!(why.starts_with(&said), "{why}");
}

#[test]
fn the_table_has_a_ws_column_before_shutdown() {
    let names: Vec<_> = Column::ALL.iter().map(|c| c.name()).collect();
    let ws = names.iter().position(|n| *n == "ws");
    assert_eq!(ws.map(|i| names[i + 1]), Some("shutdown"), "{names:?}");
}

#[test]
fn a_ws_port_target_gets_ws_port_on_a_start_of_its_own() {
    let root = crate::tempdir::Dir::new();
    let dir = root.path().join("env");
    std::fs::create_dir_all(&dir).expect("a target folder");
    let mut target = Target {
        ready: "/plaintext".into(),
        root: root.path().to_path_buf(),
        ..Target::command("env", &dir, r#"echo "${WS_PORT:-none}" >> seen; exit 1"#)
    };
    target.protocols.ws = true;
    target.ws_place = WsPlace::OwnPort;
    let opts = VerifyOptions {
        tls: false,
        ready_timeout: Duration::from_secs(5),
        ..VerifyOptions::default()
    };
    let report = verify_target(&target, &opts);
    let seen = std::fs::read_to_string(dir.join("seen")).expect("the server ran");
    let seen: Vec<_> = seen.lines().collect();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0], "none", "the cleartext start has no WS_PORT");
    assert!(seen[1].parse::<u16>().is_ok(), "{seen:?}");
    let why = report.failures().find(|(c, _)| c.column == Column::Ws);
    let why = why.map(|(_, f)| f.to_string()).unwrap_or_default();
    assert!(why.starts_with("ws: start: start with WS_PORT: "), "{why}");
}
