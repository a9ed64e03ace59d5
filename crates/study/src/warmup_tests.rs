//! The `warmup` key: a duration, `"auto"` or `{ window, max }`, at study or
//! scenario level; bad windows and caps named with file, line and key; and
//! how scaling and estimates read each form.

use super::*;

const BASE: &str = r#"name = "w"
description = "d"
source = "s"
targets = ["a"]
STUDY
[[scenario]]
name = "json"
SCENARIO
load = { connections = 2, duration = "1s" }
"#;

fn study(at_study: &str, at_scenario: &str) -> Result<Study, StudyError> {
    let text = BASE
        .replace("STUDY", at_study)
        .replace("SCENARIO", at_scenario);
    parse(Path::new("studies/w.toml"), &text)
}

fn warmup(at_study: &str, at_scenario: &str) -> Warmup {
    study(at_study, at_scenario)
        .unwrap_or_else(|e| panic!("{e}"))
        .scenarios[0]
        .warmup
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn every_form_parses_at_study_and_scenario_level() {
    assert_eq!(warmup("", ""), Warmup::AUTO, "the default");
    assert_eq!(
        Warmup::AUTO,
        Warmup::Auto {
            window: Duration::from_secs(1),
            max: Duration::from_secs(60)
        }
    );
    assert_eq!(warmup("warmup = \"2s\"", ""), Warmup::Fixed(ms(2000)));
    assert_eq!(warmup("warmup = 0", ""), Warmup::Fixed(ms(0)));
    assert_eq!(warmup("warmup = \"2s\"", "warmup = \"auto\""), Warmup::AUTO);
    assert_eq!(
        warmup("warmup = \"auto\"", "warmup = \"750ms\""),
        Warmup::Fixed(ms(750))
    );
    let table = Warmup::Auto {
        window: ms(500),
        max: ms(30_000),
    };
    assert_eq!(
        warmup("warmup = { window = \"500ms\", max = \"30s\" }", ""),
        table
    );
    assert_eq!(
        warmup("", "warmup = { window = \"500ms\", max = \"30s\" }"),
        table
    );
    // Either key may be left out.
    assert_eq!(
        warmup("warmup = { window = \"2s\" }", ""),
        Warmup::Auto {
            window: ms(2000),
            max: ms(60_000)
        }
    );
    assert_eq!(
        warmup("warmup = { max = \"10s\" }", ""),
        Warmup::Auto {
            window: ms(1000),
            max: ms(10_000)
        }
    );
    // A long window raises the default cap to the rule's ten windows.
    assert_eq!(
        warmup("warmup = { window = \"20s\" }", ""),
        Warmup::Auto {
            window: ms(20_000),
            max: ms(200_000)
        }
    );
}

#[test]
fn bad_warmups_name_file_line_and_key() {
    let cases = [
        ("warmup = \"often\"", "", 5, "warmup", "often"),
        (
            "warmup = { window = \"50ms\" }",
            "",
            5,
            "warmup.window",
            "under 100ms",
        ),
        (
            "warmup = { window = \"1s\", max = \"4s\" }",
            "",
            5,
            "warmup.max",
            "under 10 windows",
        ),
        (
            "",
            "warmup = { window = \"1s\", max = \"3s\" }",
            8,
            "warmup.max",
            "under 10",
        ),
        (
            "",
            "warmup = { windows = \"1s\" }",
            8,
            "windows",
            "unknown field",
        ),
        (
            "",
            "warmup = { window = \"soon\" }",
            8,
            "warmup.window",
            "soon",
        ),
        ("warmup = -1", "", 5, "warmup", ""),
        // A number without its unit: seconds or milliseconds?
        ("warmup = 5", "", 5, "warmup", "needs a unit, e.g. \"5s\""),
        (
            "warmup = \"5\"",
            "",
            5,
            "warmup",
            "needs a unit, e.g. \"5s\"",
        ),
        (
            "warmup = 2.5",
            "",
            5,
            "warmup",
            "needs a unit, e.g. \"2.5s\"",
        ),
        (
            "",
            "warmup = { window = 1 }",
            8,
            "warmup.window",
            "needs a unit, e.g. \"1s\"",
        ),
        ("timeout = 5", "", 5, "timeout", "needs a unit, e.g. \"5s\""),
    ];
    for (s, sc, line, key, words) in cases {
        let e = study(s, sc).unwrap_err();
        assert_eq!(e.file, Path::new("studies/w.toml"));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(line), Some(key)),
            "{s}{sc}: {e}"
        );
        assert!(e.to_string().contains(words), "{s}{sc}: {e}");
    }
}

#[test]
fn auto_windows_and_caps() {
    let w = warmup("warmup = { window = \"500ms\", max = \"30s\" }", "");
    assert_eq!(w.cap_windows(), 60);
    assert_eq!(w.expected(), ms(6000), "a typical server: twelve windows");
    assert_eq!(w.as_fixed(), ms(5000), "a steady server: ten windows");
    assert_eq!(w.engine(), Duration::ZERO, "nothing more inside the plan");
    assert_eq!(w.describe(), "auto (500ms windows, ≤30s)");
    assert_eq!(Warmup::AUTO.describe(), "auto");
    assert_eq!(Warmup::AUTO.cap_windows(), 60);
    let odd = Warmup::Auto {
        window: ms(700),
        max: ms(4000),
    };
    assert_eq!(odd.cap_windows(), 10, "never under the rule's 2k");
    let fixed = Warmup::Fixed(ms(2000));
    assert_eq!((fixed.engine(), fixed.expected()), (ms(2000), ms(2000)));
    assert_eq!(fixed.cap_windows(), 0);
}

#[test]
fn scaling_shrinks_window_and_cap_with_floors() {
    let w = Warmup::Auto {
        window: ms(1000),
        max: ms(60_000),
    };
    assert_eq!(
        w.scaled(0.5),
        Warmup::Auto {
            window: ms(500),
            max: ms(30_000)
        }
    );
    // The window stops at 250 ms, and the cap at ten windows.
    assert_eq!(
        w.scaled(0.01),
        Warmup::Auto {
            window: ms(250),
            max: ms(2500)
        }
    );
    // A window already under the floor stays as written.
    let short = Warmup::Auto {
        window: ms(100),
        max: ms(1000),
    };
    assert_eq!(short.scaled(0.1).cap_windows(), 10);
    assert_eq!(Warmup::Fixed(ms(2000)).scaled(0.01), Warmup::Fixed(ms(250)));
    assert_eq!(Warmup::Fixed(ms(0)).scaled(0.5), Warmup::Fixed(ms(0)));
    let s = study("warmup = \"auto\"", "").unwrap();
    assert_eq!(s.scaled(0.5).scenarios[0].warmup, w.scaled(0.5));
}

#[test]
fn estimates_count_a_steady_servers_windows() {
    let auto = study("warmup = { window = \"500ms\", max = \"30s\" }", "").unwrap();
    let fixed = study("warmup = \"6s\"", "").unwrap();
    let none = study("warmup = 0", "").unwrap();
    let (a, f, n) = (
        auto.estimate(1, 1.0).load_s,
        fixed.estimate(1, 1.0).load_s,
        none.estimate(1, 1.0).load_s,
    );
    assert!((a - f).abs() < 1e-9, "{a} vs {f}");
    assert!((a - n - 6.0).abs() < 1e-9, "{a} vs {n}");
}

#[test]
fn estimates_count_each_starts_owed_minimum_once() {
    let auto = study("warmup = { window = \"500ms\", max = \"30s\" }", "").unwrap();
    let plain = auto.estimate(2, 1.0);
    let same = auto.estimate_for(&[Duration::ZERO, Duration::ZERO], 1.0);
    assert_eq!(plain, same);
    // One of two targets owes 90 s: its first warm-up (6 s expected) is
    // part of it, so the start adds 84 s, whatever the other target does.
    let owing = auto.estimate_for(&[Duration::from_secs(90), Duration::ZERO], 1.0);
    assert!(
        (owing.total_s - plain.total_s - 84.0).abs() < 1e-9,
        "{owing:?}"
    );
    assert!(
        (owing.load_s - plain.load_s - 84.0).abs() < 1e-9,
        "{owing:?}"
    );
    assert_eq!(owing.measurements, plain.measurements);
    // A minimum shorter than the first warm-up costs nothing more.
    let short = auto.estimate_for(&[ms(3000), Duration::ZERO], 1.0);
    assert_eq!(short, plain);
    // Three repetitions, each its own start: owed three times.
    let reps = study(
        "repetitions = 3\nwarmup = { window = \"500ms\", max = \"30s\" }",
        "",
    )
    .unwrap();
    let extra =
        reps.estimate_for(&[Duration::from_secs(90)], 1.0).total_s - reps.estimate(1, 1.0).total_s;
    assert!((extra - 3.0 * 84.0).abs() < 1e-9, "{extra}");
}

#[test]
fn a_capacity_search_under_auto_warms_up_for_its_expected_length() {
    let s = study(
        "warmup = { window = \"500ms\", max = \"30s\" }",
        "capacity = {}",
    );
    // `load` and `capacity` together are refused; use a scenario without load.
    assert!(s.is_err());
    let text = BASE
        .replace("STUDY", "warmup = { window = \"500ms\", max = \"30s\" }")
        .replace("SCENARIO", "capacity = {}")
        .replace("load = { connections = 2, duration = \"1s\" }\n", "");
    let s = parse(Path::new("x.toml"), &text).unwrap_or_else(|e| panic!("{e}"));
    let c = s.scenarios[0].capacity.as_ref().unwrap();
    assert_eq!(c.warmup, ms(5000));
}
