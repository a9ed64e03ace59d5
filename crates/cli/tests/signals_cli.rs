//! SIGTERM and SIGHUP stop `capacity` and `load` as Ctrl-C does, against a
//! real server on 127.0.0.1: `capacity` ends within 5 s of SIGTERM, exits
//! 143 and says it was interrupted; `load` stopped by SIGHUP reports what
//! it measured. (`run` is covered in run_study.rs, shards in merge_cli.rs.)

#![allow(clippy::unwrap_used)]

mod common;

use common::{ok, server, stderr, stdout};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Spawns shootout, sends `signal` after `after`, and returns its output
/// and how long it took to exit after the signal.
fn stopped(args: &[&str], signal: i32, after: Duration) -> (std::process::Output, Duration) {
    let lock = std::env::temp_dir().join(format!("shootout-signals-{}.lock", std::process::id()));
    let child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .env("SHOOTOUT_LOCK", lock)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    (out, t0.elapsed())
}

#[test]
fn sigterm_stops_capacity_within_5_s_with_exit_143() {
    let url = server(|| ok(None, "hi"));
    let (out, took) = stopped(
        &[
            "capacity", "--step", "30s", "--warmup", "0s", "-t", "1", &url,
        ],
        libc::SIGTERM,
        Duration::from_secs(2),
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(stderr(&out).contains("interrupted"), "{}", stderr(&out));
}

#[test]
fn sighup_stops_a_load_which_reports_what_it_measured() {
    let url = server(|| ok(None, "hi"));
    let (out, took) = stopped(
        &[
            "load", "-c", "2", "-t", "1", "-z", "60s", "-o", "json", &url,
        ],
        libc::SIGHUP,
        Duration::from_secs(2),
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("results cover the time until SIGHUP"),
        "{}",
        stderr(&out)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let measured = report["duration_s"].as_f64().unwrap();
    assert!(measured > 0.5 && measured < 10.0, "{measured}");
    assert!(report["requests"]["completed"].as_u64().unwrap() > 0);
}
