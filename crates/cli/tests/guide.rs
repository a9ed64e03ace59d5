//! docs/adding-a-target.md, followed literally: the files of its code blocks
//! marked `<!-- file: NAME -->` become `hello-go` in a temporary targets
//! folder, `shootout verify` must pass it, the failure the guide quotes must
//! read as quoted once the route is broken the way the guide says, and the
//! guide's one-target study run must complete. Skipped (with a message)
//! when Go is not installed, like the go targets themselves.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

mod common;

use common::{repo, Tmp};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

/// One test at a time: both build and start the same target, and a study
/// run must not share the two cores with a verify.
static SERIAL: Mutex<()> = Mutex::new(());

const NAME: &str = "hello-go";

fn guide() -> String {
    std::fs::read_to_string(repo().join("docs/adding-a-target.md")).unwrap()
}

/// (file name, contents) of every fenced block right after a
/// `<!-- file: NAME -->` line.
fn files(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .strip_prefix("<!-- file: ")
            .and_then(|r| r.strip_suffix(" -->"))
        else {
            continue;
        };
        let fence = lines.next().unwrap();
        assert!(fence.starts_with("```"), "no code block after {line}");
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push((name.to_owned(), body.join("\n") + "\n"));
    }
    out
}

/// The ```text blocks of the guide, in order.
fn text_blocks(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line == "```text" {
            let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            out.push(body.join("\n"));
        }
    }
    out
}

/// A targets folder holding the guide's target and a copy of the data.
fn targets_dir(test: &str) -> Tmp {
    let tmp = std::env::temp_dir().join(format!("shootout-guide-{test}-{}", std::process::id()));
    let dir = tmp.join("targets");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::create_dir_all(dir.join(NAME)).unwrap();
    let csv = repo().join("targets/data/titanic.csv");
    std::fs::copy(csv, dir.join("data/titanic.csv")).unwrap();
    let written = files(&guide());
    let names: Vec<&str> = written.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["target.toml", "go.mod", "main.go"]);
    for (name, body) in written {
        std::fs::write(dir.join(NAME).join(name), body).unwrap();
    }
    Tmp(tmp)
}

fn shootout(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .arg("--targets-dir")
        .arg(dir.join("targets"))
        .current_dir(repo())
        .output()
        .unwrap()
}

fn verify(dir: &Path) -> (Option<i32>, String) {
    let out = shootout(&["verify", NAME, "--no-database"], dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");
    (out.status.code(), stdout)
}

/// A quoted output line with the machine-specific parts (timings, the log
/// path) left out.
fn stable(line: &str) -> String {
    match line.split_once(", ready in") {
        Some((head, _)) => head.to_owned(),
        None => line.to_owned(),
    }
}

/// Every line of `quoted` appears in `output` (up to its unstable parts).
fn assert_quoted(quoted: &str, output: &str) {
    let got: Vec<String> = output.lines().map(stable).collect();
    for line in quoted.lines().map(stable) {
        assert!(
            got.contains(&line),
            "the guide quotes {line:?}; verify printed:\n{output}"
        );
    }
}

#[test]
fn the_guides_target_verifies_and_its_failure_reads_as_quoted() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = targets_dir("verify");
    let quoted = text_blocks(&guide());
    assert_eq!(quoted.len(), 2, "the guide quotes a pass and a failure");

    let (code, stdout) = verify(&tmp.0);
    assert_eq!(code, Some(0), "the guide's example must pass verify");
    assert_quoted(&quoted[0], &stdout);

    // The guide's failure: /plaintext answering "Hello, world!".
    let main = tmp.0.join("targets").join(NAME).join("main.go");
    let source = std::fs::read_to_string(&main).unwrap();
    let broken = source.replacen(
        "io.WriteString(w, \"Hello, World!\")",
        "io.WriteString(w, \"Hello, world!\")",
        1,
    );
    assert_ne!(broken, source, "the example's plaintext handler moved");
    std::fs::write(&main, broken).unwrap();
    let (code, stdout) = verify(&tmp.0);
    assert_eq!(code, Some(1), "a wrong body is a failed check");
    assert_quoted(&quoted[1], &stdout);
    let failures = stdout.lines().filter(|l| l.contains("): ")).count();
    assert_eq!(failures, 1, "exactly the one broken route fails");
}

#[test]
fn the_guides_one_target_study_runs() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = targets_dir("run");
    let db = tmp.0.join("results.db");
    let command = "shootout run --targets hello-go --quick";
    assert!(
        guide().contains(command),
        "the guide no longer shows {command}"
    );
    let out = shootout(
        &[
            "run",
            "--targets",
            NAME,
            "--quick",
            "--quiet",
            "--db",
            db.to_str().unwrap(),
        ],
        &tmp.0,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains(NAME), "the report names the target");
    assert!(db.is_file());
}
