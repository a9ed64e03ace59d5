//! End-to-end runs of `shootout load --expect-*`: mismatches counted in
//! every output format against a server wrong on every tenth answer, the
//! first mismatch named in text, `--fail-if mismatches>0`, and exit 2 for
//! bad values.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};

mod common;
use common::{ok, shootout, stderr, stdout};

/// A keep-alive server answering `Hello, World!`, except every tenth answer
/// (counted across connections), which says `Hello, world!`.
fn every_tenth_wrong() -> String {
    let count = AtomicU64::new(0);
    let url = common::server(move || {
        let n = count.fetch_add(1, Ordering::Relaxed);
        let body = if n % 10 == 9 {
            "Hello, world!"
        } else {
            "Hello, World!"
        };
        ok(Some("text/plain"), body)
    });
    format!("{url}/plaintext")
}

/// `-n 1000` against the server: exactly 100 answers are wrong.
fn load(url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["load", "-n", "1000", "-c", "4", "-z", "30s", "--quiet"];
    args.extend_from_slice(extra);
    args.push(url);
    shootout(&args)
}

#[test]
fn json_counts_mismatches_and_follows_the_schema() {
    let url = every_tenth_wrong();
    let out = load(&url, &["--expect-body", "Hello, World!", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    common::assert_load_json(&json);
    assert_eq!(json["errors"]["mismatch"], 100);
    assert_eq!(json["requests"]["completed"], 900);
    assert_eq!(json["requests"]["ok"], 900);
    let errors: u64 = json["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(json["requests"]["sent"], 900 + errors);
    let m = &json["first_mismatch"];
    assert_eq!(m["status"], 200);
    assert_eq!(m["reason"], "body differs at byte 7");
    assert_eq!(
        (m["expected"].as_str(), m["got"].as_str()),
        (Some("World!"), Some("world!"))
    );
}

#[test]
fn text_names_the_first_mismatch() {
    let url = every_tenth_wrong();
    let out = load(
        &url,
        &[
            "--expect-status",
            "2xx",
            "--expect-type",
            "text/plain",
            "--expect-body",
            "Hello, World!",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("mismatch 100"), "{text}");
    assert!(
        text.contains(
            "first mismatch: status 200, body differs at byte 7: expected \"World!\", got \"world!\""
        ),
        "{text}"
    );
    assert!(text.contains("900 completed, 900 ok"), "{text}");
}

#[test]
fn markdown_and_csv_count_mismatches() {
    let url = every_tenth_wrong();
    let md = stdout(&load(
        &url,
        &["--expect-body", "Hello, World!", "-o", "markdown"],
    ));
    assert!(md.contains("| Mismatches | 100 |"), "{md}");
    assert!(
        md.contains("**First mismatch:** status 200, body differs at byte 7"),
        "{md}"
    );
    let csv = stdout(&load(
        &url,
        &["--expect-body", "Hello, World!", "-o", "csv"],
    ));
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    // New columns are appended, so the old ones keep their positions:
    // mismatches, then pipeline.
    assert_eq!(header[header.len() - 2..], ["mismatches", "pipeline"]);
    assert_eq!(header[17], "errors_parse");
    assert_eq!(lines[1].rsplit(',').nth(1), Some("100"));
    assert_eq!(lines[1].rsplit(',').next(), Some("1"));
}

#[test]
fn fail_if_mismatches_and_the_body_file() {
    let url = every_tenth_wrong();
    let path = std::env::temp_dir().join(format!("shootout-expect-{}", std::process::id()));
    std::fs::write(&path, "Hello, World!").unwrap();
    let file = path.to_str().unwrap();
    let out = load(
        &url,
        &["--expect-body-file", file, "--fail-if", "mismatches>0"],
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("mismatches>0"), "{}", stderr(&out));
    // Without expectations nothing is a mismatch, so the same rule passes.
    let out = load(&url, &["--fail-if", "mismatches>0"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("mismatch 0"));
    assert!(!stdout(&out).contains("first mismatch"));
}

#[test]
fn bad_expectations_exit_2_and_name_the_value() {
    let url = "http://127.0.0.1:1/";
    let cases: [(&[&str], &str); 6] = [
        (&["--expect-status", "20"], "'20' is not a status code"),
        (&["--expect-status", "6xx"], "'6xx'"),
        (&["--expect-status", "ok"], "'ok'"),
        (&["--expect-type", "json"], "'json' is not a media type"),
        (
            &["--expect-body", "a", "--expect-body-file", "f"],
            "cannot be used with",
        ),
        (
            &["--expect-body-file", "/nonexistent/body"],
            "--expect-body-file /nonexistent/body: cannot read",
        ),
    ];
    for (flags, needle) in cases {
        let mut args = vec!["load", "-n", "1"];
        args.extend_from_slice(flags);
        args.push(url);
        let out = shootout(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&out).contains(needle), "{flags:?}: {}", stderr(&out));
    }
}
