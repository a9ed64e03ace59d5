//! Faults of a contestant during a level, against the real go-nethttp
//! (skipped with a note where Go is missing): killed with SIGKILL or frozen
//! with SIGSTOP while its first level runs, the measurement is failed with
//! the reason, never recorded as a number, the run completes and exits 1,
//! and nothing of the server is left. The run's server is told from
//! verify's by its stdout: `.build/go-nethttp.run.log`.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

mod common;

use common::repo;
use shootout_store::{RunStatus, Store, TargetStatus};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// A fresh folder with a one-target study of go-nethttp: a 4 s plaintext
/// level after a fixed 500 ms warm-up, then json.
fn study(name: &str) -> (PathBuf, PathBuf) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmp = std::env::temp_dir().join(format!("shootout-faults-{name}-{nanos}"));
    std::fs::create_dir_all(&tmp).unwrap();
    let path = tmp.join("faults.toml");
    std::fs::write(
        &path,
        "name = \"faults\"\ndescription = \"test only\"\nsource = \"tests\"\n\
         targets = [\"go-nethttp\"]\nwarmup = \"500ms\"\n\
         [[scenario]]\nname = \"plaintext\"\nload = { connections = 8, duration = \"4s\" }\n\
         [[scenario]]\nname = \"json\"\nload = { connections = 8, duration = \"1s\" }\n",
    )
    .unwrap();
    (tmp, path)
}

/// The pid of the run's go-nethttp (stdout on its run log), waiting up to
/// `limit` for it.
fn run_server(limit: Duration) -> Option<u32> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let out = std::fs::read_link(e.path().join("fd/1")).unwrap_or_default();
            if comm.trim() == "go-nethttp" && out.to_string_lossy().ends_with("go-nethttp.run.log")
            {
                return Some(pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Runs the study, sending `signal` to the run's server 3 s after it
/// starts (inside the plaintext level); the exit code, stderr, database
/// and the server's pid.
fn run_with(name: &str, signal: i32) -> (Option<i32>, String, PathBuf, u32) {
    let (tmp, path) = study(name);
    let db = tmp.join("t.db");
    let child = spawn_run(&path, &db, &[]);
    let pid = run_server(Duration::from_secs(240)).expect("the run's server never started");
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: signalling the server our run started.
    unsafe { libc::kill(pid as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), err, db, pid)
}

/// `shootout run STUDY --db DB` on the repository's targets, quiet, with
/// `env` added; stderr piped.
fn spawn_run(study: &Path, db: &Path, env: &[(&str, &str)]) -> std::process::Child {
    common::run_command(study, db, &repo().join("targets"))
        .arg("--quiet")
        .envs(env.iter().copied())
        .spawn()
        .unwrap()
}

fn assert_failed_not_measured(db: &Path, err: &str, words: &str) {
    let store = Store::open_existing(db).unwrap();
    let data = store.load_run(store.resolve("latest").unwrap()).unwrap();
    assert_eq!(data.run.status, RunStatus::Complete, "{err}");
    let t = &data.targets[0];
    assert_eq!(t.status, TargetStatus::Failed, "{err}");
    let reason = t.reason.clone().unwrap_or_default();
    assert!(reason.contains(words), "{reason}\n{err}");
    assert!(
        data.measurements.is_empty(),
        "a failed level became a number: {:?}",
        data.measurements
            .iter()
            .map(|m| (&m.scenario, m.summary.rps))
            .collect::<Vec<_>>()
    );
    let md = std::fs::read_to_string(
        shootout_report::run_reports_dir(db, data.run.id).join("report.md"),
    )
    .unwrap();
    assert!(md.contains(words), "the report names the reason:\n{md}");
}

fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.contains(") Z ")
}

#[test]
fn a_server_killed_mid_level_is_failed_with_the_signal_not_measured() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let (code, err, db, pid) = run_with("kill", libc::SIGKILL);
    assert_eq!(code, Some(1), "{err}");
    assert_failed_not_measured(
        &db,
        &err,
        "server exited during the level: signal 9 (SIGKILL)",
    );
    assert!(gone(pid));
}

#[test]
fn a_server_frozen_for_a_level_is_failed_as_stopped_never_a_latency_of_0() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let (code, err, db, pid) = run_with("stop", libc::SIGSTOP);
    assert_eq!(code, Some(1), "{err}");
    assert_failed_not_measured(&db, &err, "server stopped during the level");
    assert!(gone(pid), "the frozen server was killed at the end");
}

/// How many measurements the run at `db` has committed (0 before it exists).
fn committed(db: &Path) -> usize {
    Store::open_existing(db)
        .ok()
        .and_then(|s| s.resolve("latest").ok().and_then(|id| s.load_run(id).ok()))
        .map_or(0, |d| d.measurements.len())
}

#[test]
fn a_store_locked_past_the_wait_stops_the_run_and_keeps_the_measurement_in_json() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let (tmp, path) = study("locked");
    let db = tmp.join("t.db");
    let child = spawn_run(&path, &db, &[("SHOOTOUT_STORE_WAIT", "2")]);
    // Once the plaintext level is committed, hold the write lock for 15 s
    // (the json level ends meanwhile and waits only 2 s for it).
    let end = Instant::now() + Duration::from_secs(240);
    while committed(&db) == 0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let out = child.wait_with_output().unwrap();
    holder.execute_batch("COMMIT").unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    let kept = shootout_runner::unsaved::path(&db, 1);
    assert!(err.contains(&kept.display().to_string()), "{err}");
    let text = std::fs::read_to_string(&kept).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v.as_array().map(Vec::len), Some(1), "{text}");
    assert_eq!(v[0]["scenario"], "json");
    assert!(v[0]["summary"]["requests"]["completed"].as_u64() > Some(0));
    assert_eq!(committed(&db), 1, "the plaintext level stays committed");
}
