//! The `capacity` key: parsed into the search's settings, every bad key
//! named with file, line and key, and the shipped capacity study's time.

use super::*;

const BASE: &str = r#"name = "cap"
description = "d"
source = "s"
targets = ["a", "b"]
warmup = "1s"

[[scenario]]
name = "plaintext"
"#;

fn with(line: &str) -> String {
    format!("{BASE}{line}\n")
}

fn parse_err(text: &str) -> StudyError {
    parse(Path::new("studies/bad.toml"), text).unwrap_err()
}

#[test]
fn a_capacity_table_becomes_the_search_settings() {
    let s = parse(
        Path::new("x.toml"),
        &with(r#"capacity = { slo = ["p99<=10ms", "p999 <= 50ms"], step = "3s", precision = "4%", connections = 32 }"#),
    )
    .unwrap();
    let sc = &s.scenarios[0];
    assert!(sc.levels.is_empty());
    let c = sc.capacity.as_ref().unwrap();
    let texts: Vec<&str> = c.slo.iter().map(|t| t.text()).collect();
    assert_eq!(texts, ["p99<=10ms", "p999 <= 50ms"]);
    assert_eq!(c.slo[0].value(), 10.0);
    assert_eq!(c.step, Duration::from_secs(3));
    assert_eq!(c.warmup, Duration::from_secs(1), "the study's warm-up");
    assert!((c.precision - 0.04).abs() < 1e-12);
    assert_eq!(c.connections, Some(32));
    let settings = c.settings().unwrap();
    assert_eq!(settings.slo(), c.slo);
    assert_eq!(settings.connections(), Some(32));
    assert_eq!(c.template_level().stop().duration, Some(c.step));
}

#[test]
fn an_empty_capacity_table_takes_the_capacity_crate_defaults() {
    let s = parse(Path::new("x.toml"), &with("capacity = {}")).unwrap();
    let c = s.scenarios[0].capacity.as_ref().unwrap();
    let texts: Vec<&str> = c.slo.iter().map(|t| t.text()).collect();
    assert_eq!(texts, shootout_capacity::DEFAULT_SLO);
    assert_eq!(c.step, shootout_capacity::DEFAULT_STEP);
    assert_eq!(c.precision, shootout_capacity::DEFAULT_PRECISION);
    assert_eq!(c.connections, None);
    assert!(c.keepalive);
    let w = parse(
        Path::new("x.toml"),
        &with("capacity = { warmup = \"250ms\" }\nkeepalive = false"),
    )
    .unwrap();
    let c = w.scenarios[0].capacity.as_ref().unwrap();
    assert_eq!(c.warmup, Duration::from_millis(250));
    assert!(!c.keepalive);
}

#[test]
fn each_bad_capacity_key_names_file_line_and_key() {
    let cases = [
        (
            r#"capacity = { slo = ["p99=<10ms"] }"#,
            "capacity.slo",
            "p99=<10ms",
        ),
        (
            r#"capacity = { slo = ["p42<=1ms"] }"#,
            "capacity.slo",
            "unknown metric",
        ),
        (r#"capacity = { slo = [] }"#, "capacity.slo", "at least one"),
        (
            r#"capacity = { step = "0s" }"#,
            "capacity.step",
            "more than 0",
        ),
        (
            r#"capacity = { precision = "two" }"#,
            "capacity.precision",
            "'two'",
        ),
        (
            r#"capacity = { precision = "80%" }"#,
            "capacity.precision",
            "out of range",
        ),
        (
            r#"capacity = { precision = 0 }"#,
            "capacity.precision",
            "out of range",
        ),
        (
            r#"capacity = { connections = 0 }"#,
            "capacity.connections",
            "at least 1",
        ),
    ];
    for (line, key, words) in cases {
        let e = parse_err(&with(line));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(9), Some(key)),
            "{line}: {e}"
        );
        assert!(e.to_string().starts_with("studies/bad.toml:9"), "{e}");
        assert!(e.message.contains(words), "{line}: {e}");
    }
}

#[test]
fn capacity_rejects_unknown_keys_bad_durations_and_load_beside_it() {
    let e = parse_err(&with(r#"capacity = { slo = ["p99<=10ms"], rate = 5 }"#));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(9), Some("capacity.rate")),
        "{e}"
    );
    let e = parse_err(&with(r#"capacity = { step = "soon" }"#));
    assert_eq!(e.line, Some(9), "{e}");
    let e = parse_err(&with(
        "capacity = {}\nload = { connections = 2, duration = \"1s\" }",
    ));
    assert_eq!(e.key.as_deref(), Some("capacity"), "{e}");
    assert!(e.message.contains("not both"), "{e}");
    let e = parse_err(BASE);
    assert!(e.message.contains("`capacity`"), "{e}");
}

#[test]
fn the_capacity_study_takes_about_eleven_minutes_and_four_quick() {
    let s =
        load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies/capacity.toml")).unwrap();
    let names: Vec<&str> = s.scenarios.iter().map(|sc| sc.name.as_str()).collect();
    assert_eq!(names, ["plaintext", "json", "simple"]);
    assert!(s.scenarios.iter().all(|sc| sc.capacity.is_some()));
    // The thirteen targets of targets/ (its description writes this out).
    let full = s.estimate(13, 1.0);
    assert_eq!(full.measurements, 39);
    assert!((540.0..=720.0).contains(&full.total_s), "{full:?}");
    let f = quick_scale(&s, 13);
    let quick = s.scaled(f);
    let c = quick.scenarios[0].capacity.as_ref().unwrap();
    assert!(
        c.step < Duration::from_millis(700) && c.precision > 0.05,
        "{c:?}"
    );
    let est = quick.estimate(13, f);
    assert!((150.0..=300.0).contains(&est.total_s), "{est:?} at {f}");
}
