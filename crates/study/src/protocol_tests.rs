//! `protocol` in study files: a scenario's default, a level's own, the
//! label it adds, and the files it refuses (with file, line and key).

use super::*;
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
fn a_level_inherits_the_scenario_protocol_and_may_override_it() {
    let study = parse_ok(&format!(
        r#"{HEAD}
[[scenario]]
name = "json"
protocol = "tls"
levels = [
    {{ connections = 4, duration = "1s" }},
    {{ connections = 4, duration = "1s", protocol = "http/1.1" }},
]
"#
    ));
    let levels = &study.scenarios[0].levels;
    assert_eq!(levels[0].protocol, Protocol::Tls);
    assert_eq!(levels[0].label, "c=4 1s tls");
    assert_eq!(levels[1].protocol, Protocol::Http1);
    assert_eq!(levels[1].label, "c=4 1s");
}

#[test]
fn without_protocol_everything_is_cleartext() {
    let study = parse_ok(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nload = {{ connections = 2, duration = \"1s\" }}\n"
    ));
    assert_eq!(study.scenarios[0].levels[0].protocol, Protocol::Http1);
}

#[test]
fn an_unknown_protocol_names_its_line_and_the_known_ones() {
    let e = parse_err(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nprotocol = \"https\"\nload = {{ connections = 2, duration = \"1s\" }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("protocol"), "{e}");
    assert_eq!(e.line, Some(8), "{e}");
    assert!(
        e.to_string().contains("known: http/1.1, tls, mtls, h2"),
        "{e}"
    );
    let e = parse_err(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nload = {{ connections = 2, duration = \"1s\", protocol = \"h3\" }}\n"
    ));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("load.protocol"), Some(8)),
        "{e}"
    );
}

#[test]
fn tls_and_mtls_levels_cannot_share_a_study() {
    let e = parse_err(&format!(
        r#"{HEAD}
[[scenario]]
name = "json"
protocol = "tls"
load = {{ connections = 2, duration = "1s" }}

[[scenario]]
name = "plaintext"
protocol = "mtls"
load = {{ connections = 2, duration = "1s" }}
"#
    ));
    assert_eq!(e.key.as_deref(), Some("protocol"), "{e}");
    assert!(e.to_string().contains("both 'tls' and 'mtls'"), "{e}");
}

#[test]
fn a_capacity_search_over_tls_is_refused() {
    let e = parse_err(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nprotocol = \"tls\"\ncapacity = {{ slo = [\"p99<=10ms\"] }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("protocol"), "{e}");
}

#[test]
fn tls_resume_is_a_level_key_that_says_resumed_in_its_label() {
    let study = parse_ok(&format!(
        r#"{HEAD}
[[scenario]]
name = "plaintext"
protocol = "tls"
keepalive = false
levels = [
    {{ connections = 4, duration = "1s" }},
    {{ connections = 4, duration = "1s", tls_resume = true }},
]
"#
    ));
    let levels = &study.scenarios[0].levels;
    assert!(!levels[0].tls_resume);
    assert_eq!(levels[0].label, "c=4 1s tls");
    assert!(levels[1].tls_resume);
    assert_eq!(levels[1].label, "c=4 1s tls resumed");
}

#[test]
fn tls_resume_needs_tls_and_new_connections_and_names_its_line() {
    // Cleartext: there is no session to resume.
    let e = parse_err(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nkeepalive = false\nlevels = [\n    {{ connections = 2, duration = \"1s\" }},\n    {{ connections = 2, duration = \"1s\", tls_resume = true }},\n]\n"
    ));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("levels.tls_resume"), Some(11)),
        "{e}"
    );
    assert!(e.to_string().contains("protocol is 'http/1.1'"), "{e}");
    assert!(e.to_string().contains("studies/bad.toml"), "{e}");
    // Keep-alive: the one handshake per connection is in the warm-up.
    let e = parse_err(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nload = {{ connections = 2, duration = \"1s\", protocol = \"tls\", tls_resume = true }}\n"
    ));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("load.tls_resume"), Some(8)),
        "{e}"
    );
    assert!(e.to_string().contains("keepalive = false"), "{e}");
    // Over mutual TLS without keep-alive it is fine; `false` is always fine.
    let ok = parse_ok(&format!(
        "{HEAD}\n[[scenario]]\nname = \"json\"\nlevels = [\n    {{ connections = 2, duration = \"1s\", protocol = \"mtls\", keepalive = false, tls_resume = true }},\n    {{ connections = 2, duration = \"1s\", tls_resume = false }},\n]\n"
    ));
    assert!(ok.scenarios[0].levels[0].tls_resume);
    assert_eq!(ok.scenarios[0].levels[0].label, "c=2 1s mtls resumed");
}

#[test]
fn an_h2_level_counts_its_streams_and_shares_a_study_with_tls() {
    let study = parse_ok(&format!(
        r#"{HEAD}
[[scenario]]
name = "json"
levels = [
    {{ connections = 64, duration = "1s", protocol = "tls" }},
    {{ connections = 4, duration = "1s", protocol = "h2", streams = 16 }},
    {{ connections = 4, duration = "1s", protocol = "h2" }},
]
"#
    ));
    let levels = &study.scenarios[0].levels;
    assert_eq!((levels[1].protocol, levels[1].streams), (Protocol::H2, 16));
    assert_eq!(levels[1].label, "c=4 1s h2 streams=16");
    assert_eq!(levels[2].streams, 1, "one stream unless told, as h2load");
    assert_eq!(levels[0].streams, 1);
}

#[test]
fn streams_need_h2_and_h2_follows_the_engines_rules() {
    let level =
        |l: &str| format!("{HEAD}\n[[scenario]]\nname = \"json\"\nlevels = [\n    {l},\n]\n");
    let e = parse_err(&level(
        r#"{ connections = 4, duration = "1s", protocol = "tls", streams = 8 }"#,
    ));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("levels.streams"), Some(9)),
        "{e}"
    );
    assert!(e.to_string().contains("protocol is 'tls'"), "{e}");
    let e = parse_err(&level(
        r#"{ connections = 4, duration = "1s", protocol = "h2", keepalive = false }"#,
    ));
    assert_eq!(e.key.as_deref(), Some("levels.streams"), "{e}");
    assert!(e.to_string().contains("keeps its connections open"), "{e}");
    let e = parse_err(&level(
        r#"{ connections = 4, duration = "1s", protocol = "h2", streams = 0 }"#,
    ));
    assert!(e.to_string().contains("not a stream count"), "{e}");
    let e = parse_err(&level(
        r#"{ connections = 4, duration = "1s", protocol = "h2", pipeline = 4 }"#,
    ));
    assert_eq!(e.key.as_deref(), Some("levels.pipeline"), "{e}");
}

#[test]
fn h2_and_mtls_levels_cannot_share_a_study() {
    let e = parse_err(&format!(
        r#"{HEAD}
[[scenario]]
name = "json"
levels = [
    {{ connections = 2, duration = "1s", protocol = "mtls" }},
    {{ connections = 2, duration = "1s", protocol = "h2" }},
]
"#
    ));
    assert_eq!(e.key.as_deref(), Some("protocol"), "{e}");
    assert!(e.to_string().contains("both 'mtls' and 'h2'"), "{e}");
}
