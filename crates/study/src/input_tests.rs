//! A hostile but fair author's study files (issue 47's minor items): files
//! that are not studies, absurd lengths, scaling below what `precision`
//! needs, suggestions that would be refused, and messages in the author's
//! words with the key as written.

use super::*;

fn parse_err(text: &str) -> StudyError {
    parse(Path::new("studies/bad.toml"), text).unwrap_err()
}

const HEAD: &str = "name = \"tiny\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"a\"]\n";

/// A study with `top` after its head and a scenario whose load is `load`.
fn study(top: &str, load: &str) -> String {
    format!("{HEAD}{top}\n[[scenario]]\nname = \"json\"\nload = {{ {load} }}\n")
}

fn short() -> &'static str {
    "connections = 2, duration = \"1s\""
}

#[test]
fn a_file_that_is_not_a_study_is_refused_unread() {
    for path in ["/dev/zero", "/"] {
        let e = load(Path::new(path)).unwrap_err();
        assert!(e.to_string().starts_with(path), "{e}");
        assert!(e.to_string().contains("is not a regular file"), "{e}");
    }
    let dir = std::env::temp_dir().join(format!("shootout-study-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.toml");
    let mut text = study("", short());
    text.push_str(&"# padding\n".repeat(110_000));
    std::fs::write(&big, &text).unwrap();
    let e = load(&big).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        e.to_string()
            .contains("a study file is at most 1048576 bytes (1 MiB)"),
        "{e}"
    );
}

#[test]
fn absurd_repetitions_and_studies_of_weeks_are_refused() {
    let e = parse_err(&study("repetitions = 1000000", short()));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(5), Some("repetitions")),
        "{e}"
    );
    assert!(e.message.contains("more than 1000 starts"), "{e}");
    let e = parse_err(&study(
        "repetitions = 2\nprecision = { width = \"5%\", max_repetitions = 5000 }",
        short(),
    ));
    assert_eq!(e.key.as_deref(), Some("precision.max_repetitions"), "{e}");
    // 1000 starts of 20 minutes: about 333 hours.
    let e = parse_err(&study(
        "repetitions = 1000",
        "connections = 2, duration = \"20m\"",
    ));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(5), Some("repetitions")),
        "{e}"
    );
    assert!(e.message.contains("estimated at 33"), "{e}");
    assert!(e.message.contains("more than the 168 h"), "{e}");
    parse(Path::new("s.toml"), &study("repetitions = 1000", short()))
        .expect("1000 one-second starts fit in a week");
}

#[test]
fn scaling_keeps_the_two_starts_precision_and_resolve_need() {
    for table in [
        "precision = { width = \"5%\", max_repetitions = 4 }",
        "resolve = { max_repetitions = 4 }",
    ] {
        let s = parse(
            Path::new("s.toml"),
            &study(&format!("repetitions = 2\n{table}"), short()),
        )
        .expect("parses");
        for f in [0.25, 0.3, 0.01] {
            assert_eq!(s.scaled(f).repetitions, 2, "{table} at {f}");
        }
    }
    let plain = parse(Path::new("s.toml"), &study("repetitions = 2", short())).unwrap();
    assert_eq!(plain.scaled(0.25).repetitions, 1, "no interval: one start");
}

#[test]
fn a_unitless_duration_suggests_only_what_parses() {
    let e = parse_err(&study("warmup = \"1e30\"", short()));
    assert!(!e.message.contains("1e30s"), "{e}");
    assert!(e.message.contains("longer than the 30-day limit"), "{e}");
    let e = parse_err(&study("warmup = \"-5\"", short()));
    assert!(!e.message.contains("-5s"), "{e}");
    let e = parse_err(&study("warmup = 5", short()));
    assert!(e.message.contains("e.g. \"5s\" or \"5ms\""), "{e}");
}

#[test]
fn messages_use_the_authors_words_and_dotted_keys() {
    for (top, load, cost, key) in [
        ("", short(), "cost = 5", "cost"),
        ("repetitions = -1", short(), "", "repetitions"),
        ("order = 5", short(), "", "order"),
        ("cpus = 5", short(), "", "cpus"),
        ("precision = 5", short(), "", "precision"),
        ("", short(), "cost = { rates = [\"x\"] }", "cost.rates"),
        ("", short(), "cost = { rates = 5 }", "cost.rates"),
        (
            "",
            short(),
            "cost = { rates = [1], bogus = 1 }",
            "cost.bogus",
        ),
        (
            "",
            short(),
            "cost = { rates = [1], deadline = [1] }",
            "cost.deadline",
        ),
        (
            "",
            "connections = \"many\", duration = \"1s\"",
            "",
            "load.connections",
        ),
        (
            "",
            "connections = 2, duration = \"1s\", rate = \"x\"",
            "",
            "load.rate",
        ),
        (
            "",
            "connections = 2, duration = \"1s\", mode = 5",
            "",
            "load.mode",
        ),
    ] {
        let text = format!("{}{cost}\n", study(top, load));
        let e = parse_err(&text);
        assert_eq!(e.key.as_deref(), Some(key), "{top}{load}{cost}: {e}");
        for internal in [
            "Raw",
            "u32",
            "u64",
            "usize",
            "f64",
            "wanted string or table",
            "sequence",
            "untagged",
        ] {
            assert!(!e.message.contains(internal), "{top}{load}{cost}: {e}");
        }
    }
    // An engine rule on a load value names the key as written too.
    let e = parse_err(&study("", "connections = 0, duration = \"1s\""));
    assert_eq!(e.key.as_deref(), Some("load.connections"), "{e}");
}
