//! The `websocket` study's loads end to end (issue #48): a tiny WebSocket
//! study on a copy of go-nethttp, one start, a 1 s echo at 8 connections
//! then a 2 s hold of 50 connections pinged every second. The echo is
//! stored with its messages/s and no error; the hold with its memory per
//! idle connection, which `report --format json` carries too. About 15 s
//! (the copy's build included when Go's caches are warm).

#![allow(clippy::unwrap_used)]

mod common;

use common::Tmp;

const STUDY: &str = "name = \"ws-tiny\"\ndescription = \"a tiny WebSocket study\"\n\
     source = \"tests\"\ntargets = [\"go-ws\"]\nwarmup = \"300ms\"\n\n\
     [[scenario]]\nws = \"echo\"\nload = { connections = 8, duration = \"1s\" }\n\n\
     [[scenario]]\nws = \"idle\"\nwarmup = \"0s\"\n\
     load = { connections = 50, hold = \"2s\", ping_every = \"1s\" }\n";

#[test]
fn a_ws_study_stores_messages_per_second_and_memory_per_idle_connection() {
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("ws-study");
    let dir = tmp.0.join("targets");
    std::fs::create_dir_all(&dir).unwrap();
    common::go_nethttp_copy(&dir, "go-ws", str::to_string);
    let db = tmp.0.join("t.db");
    let (data, stderr) = common::run_study_ok(&tmp.0, "ws-tiny", STUDY, &db, &dir, &[]);
    let by = |scenario: &str| {
        data.measurements
            .iter()
            .find(|m| m.scenario == scenario)
            .unwrap_or_else(|| panic!("no {scenario} measurement: {stderr}"))
    };
    let echo = by("echo");
    assert_eq!(echo.level_label, "c=8 1s ws 64B");
    assert!(echo.summary.rps > 100.0, "messages/s: {}", echo.summary.rps);
    assert_eq!(echo.summary.errors.total(), 0, "{:?}", echo.summary.errors);
    let ws = echo
        .summary
        .websocket
        .as_ref()
        .expect("a WebSocket summary");
    assert_eq!((ws.message_size, ws.hold), (Some(64), false));
    assert!(echo.parts.hold.is_none(), "an echo holds nothing");

    let idle = by("idle");
    assert_eq!(idle.level_label, "c=50 hold 2s ws ping=1s");
    assert_eq!(idle.summary.errors.total(), 0, "{:?}", idle.summary.errors);
    let hold = idle.parts.hold.as_ref().expect("a hold part");
    assert_eq!(hold.connections, 50, "every connection held open");
    let kib = hold.kib_per_connection.expect("KiB per connection");
    assert!(
        kib > 0.0,
        "memory per idle connection: {kib} KiB ({hold:?})"
    );

    let out = common::shootout_db(&["report", "latest", "--format", "json"], &db);
    let doc = common::json_ok(&out);
    let held = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scenario"] == "idle")
        .expect("the hold in the report");
    let reported = held["parts"]["hold"]["kib_per_connection"].as_f64();
    assert!(reported.is_some_and(|k| k > 0.0), "{held}");
}
