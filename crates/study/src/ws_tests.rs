//! WebSocket scenarios in study files (`ws = "echo"`): their levels'
//! keys, labels and the files refused (with file, line and key).

use super::*;
use crate::ws::WsLevel;
use shootout_contract::protocol::Protocol;

fn parse_ok(text: &str) -> Study {
    parse(Path::new("studies/t.toml"), text).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(text: &str) -> StudyError {
    parse(Path::new("studies/bad.toml"), text).unwrap_err()
}

const HEAD: &str = r#"name = "t"
description = "d"
source = "s"
targets = ["a"]
"#;

#[test]
fn a_ws_scenario_loads_the_echo_with_its_message_or_holds() {
    let s = parse_ok(&format!(
        r#"{HEAD}
[[scenario]]
ws = "echo"
levels = [
    {{ connections = 64, duration = "5s" }},
    {{ connections = 8, duration = "2s", message_size = 1024, binary = true, protocol = "ws" }},
    {{ connections = 4, duration = "2s", rate = 100 }},
]
[[scenario]]
ws = "idle"
warmup = "0s"
load = {{ connections = 1000, hold = "20s", ping_every = "5s" }}
"#
    ));
    let echo = &s.scenarios[0];
    assert_eq!((echo.shown_name(), echo.path.as_str()), ("echo", "/ws"));
    assert!(echo.is_websocket() && !echo.needs_database());
    let labels: Vec<&str> = echo.levels.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "c=64 5s ws 64B",
            "c=8 2s ws 1KiB binary",
            "rate=100 c=4 2s ws 64B"
        ]
    );
    assert!(echo.levels.iter().all(|l| l.protocol == Protocol::Ws));
    assert_eq!(
        echo.levels[1].ws,
        Some(WsLevel {
            message_size: 1024,
            binary: true,
            hold: false,
            ping_every: None
        })
    );
    let idle = &s.scenarios[1].levels[0];
    assert_eq!(idle.label, "c=1000 hold 20s ws ping=5s");
    assert_eq!(
        idle.stop().duration,
        Some(std::time::Duration::from_secs(20))
    );
    assert_eq!(
        idle.ws.map(|w| (w.hold, w.ping_every)),
        Some((true, Some(std::time::Duration::from_secs(5))))
    );
    assert_eq!(s.scenarios[1].levels.len(), 1);
}

#[test]
fn http_levels_have_no_ws_options() {
    let s = parse_ok(&format!(
        "{HEAD}[[scenario]]\nname = \"json\"\nload = {{ connections = 2, duration = \"1s\" }}\n"
    ));
    assert_eq!(s.scenarios[0].levels[0].ws, None);
    assert_eq!(s.scenarios[0].ws, None);
}

/// Each bad WebSocket file is refused with the key and line it names.
#[test]
fn bad_ws_keys_are_named_with_their_line() {
    let cases: [(&str, &str, &str); 13] = [
        (
            "ws = \"idle\"\nload = { connections = 2, hold = \"1s\" }",
            "load.hold",
            "warmup = \"0s\"",
        ),
        (
            "name = \"json\"\nload = { connections = 2, duration = \"1s\", message_size = 64 }",
            "load.message_size",
            "WebSocket level's key",
        ),
        (
            "name = \"json\"\nload = { connections = 2, duration = \"1s\", hold = \"2s\" }",
            "load.hold",
            "WebSocket level's key",
        ),
        (
            "ws = \"echo\"\nload = { connections = 2, duration = \"1s\", message_size = 0 }",
            "load.message_size",
            "1 B to 16 MiB",
        ),
        (
            "ws = \"echo\"\nload = { connections = 2, duration = \"1s\", message_size = 16777217 }",
            "load.message_size",
            "1 B to 16 MiB",
        ),
        (
            "ws = \"echo\"\nload = { connections = 2, duration = \"1s\", ping_every = \"1s\" }",
            "load.ping_every",
            "needs `hold`",
        ),
        (
            "ws = \"idle\"\nwarmup = \"0s\"\nload = { connections = 2, hold = \"1s\", message_size = 64 }",
            "load.message_size",
            "sends no message",
        ),
        (
            "ws = \"idle\"\nwarmup = \"0s\"\nload = { connections = 2, hold = \"1s\", duration = \"1s\" }",
            "load.duration",
            "lasts its `hold`",
        ),
        (
            "ws = \"idle\"\nwarmup = \"0s\"\nload = { hold = \"1s\" }",
            "load.connections",
            "to hold open",
        ),
        (
            "ws = \"idle\"\nwarmup = \"0s\"\nload = { connections = 2, hold = \"1s\", ping_every = \"2s\" }",
            "load.ping_every",
            "longer than the hold",
        ),
        (
            "ws = \"echo\"\nload = { connections = 2, duration = \"1s\", protocol = \"tls\" }",
            "load.protocol",
            "speak \"ws\"",
        ),
        (
            "ws = \"echo\"\npath = \"/x\"\nload = { connections = 2, duration = \"1s\" }",
            "path",
            "remove `path`",
        ),
        (
            "ws = \"echo\"\nload = { connections = 2, duration = \"1s\", keepalive = false }",
            "load.keepalive",
            "keeps its connections open",
        ),
    ];
    for (scenario, key, says) in cases {
        let e = parse_err(&format!("{HEAD}[[scenario]]\n{scenario}\n"));
        assert_eq!(e.key.as_deref(), Some(key), "{scenario}: {e}");
        assert!(e.to_string().contains(says), "{scenario}: {e}");
        assert!(e.line.is_some_and(|l| l >= 6), "{scenario}: {e}");
    }
}

#[test]
fn a_ws_level_outside_a_ws_scenario_is_refused() {
    let e = parse_err(&format!(
        "{HEAD}[[scenario]]\nname = \"json\"\nload = {{ connections = 2, duration = \"1s\", protocol = \"ws\" }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("load.protocol"), "{e}");
    assert!(
        e.to_string().contains("ws = \\\"name\\\"") || e.to_string().contains("ws = \"name\""),
        "{e}"
    );
}

/// `--quick` shrinks a hold's pings with it, so a shortened hold still
/// pings (a 10 s hold pinged every 5 s stays pinged at least once).
#[test]
fn a_scaled_hold_pings_within_its_hold() {
    let s = parse_ok(&format!(
        "{HEAD}[[scenario]]\nws = \"idle\"\nwarmup = \"0s\"\n\
         load = {{ connections = 1000, hold = \"10s\", ping_every = \"5s\" }}\n"
    ));
    let quick = s.scaled(0.1);
    let level = &quick.scenarios[0].levels[0];
    let (hold, ping) = (
        level.stop().duration.unwrap(),
        level.ws.and_then(|w| w.ping_every).unwrap(),
    );
    assert!(ping <= hold, "ping every {ping:?} in a hold of {hold:?}");
    assert_eq!(level.label, level.auto_label());
}
