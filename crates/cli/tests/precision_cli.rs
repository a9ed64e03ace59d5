//! The `precision` stop rule on a real server (issue #36, Laaber et al.):
//! go-nethttp, two planned starts, asked for an interval no real server
//! reaches (±0.01%), gets one more start up to its cap of three, says so
//! while it runs and in the report's findings, and is reported still wide;
//! asked for ±500%, which two starts of two scenarios meet unless a
//! start is five times another's, it gets no extra start.

#![allow(clippy::unwrap_used)]

mod common;

use common::{repo, Tmp};
use std::path::Path;
use std::process::Command;

/// Runs go-nethttp with `precision = { width }`, at most three starts;
/// returns the fewest starts of a cell, stderr and the Markdown report.
fn run(tmp: &Path, name: &str, width: &str) -> (usize, String, String) {
    let text = format!(
        "name = \"{name}\"\ndescription = \"precision\"\nsource = \"tests\"\n\
         targets = [\"go-nethttp\"]\nrepetitions = 2\norder = \"random\"\n\
         precision = {{ width = \"{width}\", max_repetitions = 3 }}\nwarmup = \"300ms\"\n\n\
         [[scenario]]\nname = \"plaintext\"\n{load}\
         [[scenario]]\nname = \"json\"\n{load}",
        load = "load = { mode = \"closed\", connections = 8, duration = \"1s\" }\n"
    );
    let db = tmp.join(format!("{name}.db"));
    let (data, stderr) = common::run_study_ok(tmp, name, &text, &db, &repo().join("targets"), &[]);
    let report = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["report", "latest", "--format", "md", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(report.status.success());
    let starts = ["plaintext", "json"]
        .iter()
        .map(|s| {
            data.measurements
                .iter()
                .filter(|m| m.scenario == *s)
                .count()
        })
        .min()
        .unwrap();
    (
        starts,
        stderr,
        String::from_utf8_lossy(&report.stdout).into_owned(),
    )
}

#[test]
fn a_wide_target_gets_more_starts_up_to_its_cap_and_a_narrow_one_none() {
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("precision");
    let (starts, stderr, report) = run(&tmp.0, "tight", "0.01%");
    assert_eq!(starts, 3, "one more start, to the cap: {stderr}");
    assert!(
        stderr.contains("start 3 of at most 3 for go-nethttp (±"),
        "said while it runs: {stderr}"
    );
    assert!(
        stderr.contains("still wider than ±0.01% after 3 starts: go-nethttp"),
        "{stderr}"
    );
    assert!(report.contains("More starts: go-nethttp 3."), "{report}");
    assert!(
        report.contains("Still wider than ±0.01%, shown as wide as they are: go-nethttp (±"),
        "{report}"
    );

    let (starts, stderr, report) = run(&tmp.0, "loose", "500%");
    assert_eq!(starts, 2, "narrow enough after the planned two: {stderr}");
    assert!(!stderr.contains("of at most 3"), "{stderr}");
    assert!(!report.contains("Precision:"), "{report}");
}
