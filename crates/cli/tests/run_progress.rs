//! `shootout run` with stderr that is not a terminal (a CI log, `| tee`):
//! every slow phase says when it starts and ends. One test-only target
//! whose build takes about a second (`sleep 1`) and whose server exits at
//! once: the run must print a line as its build starts, one as it ends
//! with the time it took, and lines as verification starts and ends, in
//! that order; run again, the build is up to date and says so; `--quiet`
//! prints none of them.

#![allow(clippy::unwrap_used)]

mod common;

use common::Tmp;

use std::path::{Path, PathBuf};

/// A targets directory holding `slow-build` and a study of it.
fn fixture(tmp: &Path) -> (PathBuf, PathBuf) {
    let targets = tmp.join("targets");
    let dir = targets.join("slow-build");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("target.toml"),
        r#"name = "slow-build"
language = "sh"
framework = "none"
description = "test-only: a one-second build, a server that exits at once"
toolchain = "python3"
build = ["sleep 1"]
run = "echo 'slow-build: giving up at once' >&2; exit 3"
ready = "/plaintext"
footprint = ["target.toml"]
inputs = ["target.toml"]
"#,
    )
    .unwrap();
    let study = tmp.join("progress.toml");
    std::fs::write(
        &study,
        "name = \"progress\"\ndescription = \"test only\"\nsource = \"tests\"\n\
         targets = [\"slow-build\"]\n\
         [[scenario]]\nname = \"plaintext\"\nload = { connections = 1, requests = 5 }\n",
    )
    .unwrap();
    (targets, study)
}

/// Runs the study with stderr on a pipe; its exit code and stderr lines.
fn run(tmp: &Path, targets: &Path, study: &Path, extra: &[&str]) -> (Option<i32>, Vec<String>) {
    let out = common::run_study(study, &tmp.join("t.db"), targets, extra);
    let err = common::stderr(&out);
    (out.status.code(), err.lines().map(str::to_string).collect())
}

/// The index of the first line satisfying `p`, or a failure showing all.
fn position(lines: &[String], what: &str, p: impl Fn(&str) -> bool) -> usize {
    lines
        .iter()
        .position(|l| p(l))
        .unwrap_or_else(|| panic!("no line {what} in:\n{}", lines.join("\n")))
}

/// The seconds in `slow-build: built in 1.0 s`.
fn built_seconds(line: &str) -> f64 {
    line.strip_prefix("slow-build: built in ")
        .and_then(|r| r.strip_suffix(" s"))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a build-time line: {line}"))
}

#[test]
fn without_a_terminal_each_slow_phase_prints_its_start_and_end() {
    if !shootout_testkit::tools(&["python3"]) {
        return;
    }
    let tmp = Tmp(std::env::temp_dir().join(format!("shootout-progress-{}", std::process::id())));
    let (targets, study) = fixture(&tmp.0);

    let (code, lines) = run(&tmp.0, &targets, &study, &[]);
    // The server exits at once: the target fails verification (exit 1).
    assert_eq!(code, Some(1), "{}", lines.join("\n"));
    let building = position(&lines, "building slow-build", |l| {
        l == "building slow-build"
    });
    let built = position(&lines, "slow-build: built in", |l| {
        l.starts_with("slow-build: built in ")
    });
    let verifying = position(&lines, "verifying 1 target(s)", |l| {
        l == "verifying 1 target(s)"
    });
    let verified = position(&lines, "verification ... done", |l| {
        l.starts_with("verification of 1 target(s) done in ")
    });
    assert!(
        building < built && built < verifying && verifying < verified,
        "out of order:\n{}",
        lines.join("\n")
    );
    let took = built_seconds(&lines[built]);
    assert!(
        (0.9..30.0).contains(&took),
        "a `sleep 1` build took {took} s"
    );

    // Built once, the second run finds it up to date.
    let (_, lines) = run(&tmp.0, &targets, &study, &[]);
    let building = position(&lines, "building slow-build", |l| {
        l == "building slow-build"
    });
    let current = position(&lines, "slow-build: up to date", |l| {
        l == "slow-build: up to date"
    });
    assert!(building < current, "{}", lines.join("\n"));
    assert!(
        !lines.iter().any(|l| l.starts_with("slow-build: built in")),
        "{}",
        lines.join("\n")
    );

    // --quiet: no progress at all.
    let (_, lines) = run(&tmp.0, &targets, &study, &["--quiet"]);
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("building ") || l.starts_with("verifying ")),
        "{}",
        lines.join("\n")
    );
}
