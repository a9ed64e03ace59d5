//! `shootout load` against servers that never answer, or break HTTP/2:
//! each ends with exit 2 and the cause in words, never a run of zeros that
//! passes. The servers are shootout-testkit's scripted ones: silence,
//! SETTINGS that allow no stream, a PUSH_PROMISE to a client that
//! disabled push.

#![allow(clippy::unwrap_used)]

mod common;

use common::{shootout, stderr, stdout};
use shootout_testkit::scripted::{Script, ScriptedServer};

fn load(script: Script, extra: &[&str]) -> std::process::Output {
    let server = ScriptedServer::start(script).unwrap();
    let url = server.url();
    let mut args = vec!["load", url.as_str(), "-z", "1s", "-c", "2"];
    args.extend_from_slice(extra);
    shootout(&args)
}

#[test]
fn a_silent_http1_server_is_an_error_not_a_latency_of_zero() {
    let out = load(Script::Silent, &[]);
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the server answered none of the 2 requests sent"),
        "{err}"
    );
    assert!(err.contains("2 still waiting at the deadline"), "{err}");
    assert!(
        text.contains("(no request completed: no latency to show)"),
        "{text}"
    );
    assert!(!text.contains("0.000     0.000"), "{text}");
}

#[test]
fn an_http2_server_that_never_sends_settings_is_named() {
    let out = load(Script::Silent, &["--http2"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("never sent its HTTP/2 SETTINGS"), "{err}");
}

#[test]
fn an_http2_server_that_allows_no_stream_is_named() {
    let out = load(Script::NoStreams, &["--http2"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("allowed 0 concurrent streams"), "{err}");
}

#[test]
fn an_http2_violation_is_counted_as_protocol_with_its_rule() {
    let out = load(Script::PushPromise, &["--http2", "-o", "json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("broke HTTP/2's rules (PUSH_PROMISE"), "{err}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    common::assert_load_json(&json);
    let protocol = json["errors"]["protocol"].as_u64().unwrap_or(0);
    assert!(protocol > 0, "{json}");
    assert_eq!(json["errors"]["parse"], 0, "{json}");
    let why = json["first_violation"].as_str().unwrap_or_default();
    assert!(why.starts_with("PUSH_PROMISE"), "{json}");
}
