//! `shootout load --plan-stdin` as a runner drives it in a generator pod:
//! the plan the test built with the engine goes in as one line of JSON on
//! stdin, kept open while the load runs; `--progress-lines` reports the
//! live counts on stderr; the end of stdin (or a line `cancel`) stops the
//! load as Ctrl-C does, and the `--hdr-log` sidecar says so. Each load is
//! 300 ms, or cut within a second.

#![allow(clippy::unwrap_used)]

use shootout_engine::{Endpoint, Load, Plan, Stop, Workload};
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{ok, stderr, Tmp};

/// A closed loop of 2 connections for `duration` to a server answering
/// `Hello, World!`; its URL and the plan's JSON.
fn plan(duration: Duration) -> (String, String) {
    let url = format!("{}/plaintext", common::server(|| ok(None, "Hello, World!")));
    let workload = Workload::new(
        Load::Closed { connections: 2 },
        Stop {
            requests: None,
            duration: Some(duration),
        },
    )
    .unwrap();
    let plan = Plan::builder(Endpoint::parse(&url).unwrap(), workload)
        .threads(1)
        .build()
        .unwrap();
    (url, plan.to_json())
}

/// `shootout load --plan-stdin ARGS` with the plan's line written to its
/// stdin, which is handed back open.
fn start(json: &str, args: &[&str]) -> (Child, ChildStdin) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["load", "--plan-stdin"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{json}").unwrap();
    (child, stdin)
}

/// The `(completed, errors, measuring)` of each progress line.
fn progress(stderr: &str) -> Vec<(u64, u64, bool)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("shootout-progress "))
        .map(|l| {
            let v: Vec<u64> = l
                .split(' ')
                .map(|kv| kv.split_once('=').unwrap().1.parse().unwrap())
                .collect();
            assert_eq!(v.len(), 3, "{l}");
            (v[0], v[1], v[2] == 1)
        })
        .collect()
}

/// Waits (at most `limit`) for the child to end; its output.
fn ended_within(mut child: Child, limit: Duration) -> std::process::Output {
    let t0 = Instant::now();
    shootout_testkit::wait_until("shootout load has ended", limit, || {
        child.try_wait().unwrap().is_some()
    });
    assert!(t0.elapsed() <= limit);
    child.wait_with_output().unwrap()
}

#[test]
fn the_plan_on_stdin_runs_and_reports_its_progress() {
    let (url, json) = plan(Duration::from_millis(300));
    let dir = Tmp::new("plan-stdin");
    let hlog = dir.0.join("s.hlog");
    let (child, stdin) = start(
        &json,
        &[
            "--progress-lines",
            "--hdr-log",
            hlog.to_str().unwrap(),
            "-o",
            "json",
        ],
    );
    // stdin stays open until the process has ended, as a runner keeps it.
    let out = ended_within(child, Duration::from_secs(20));
    drop(stdin);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "closed");
    let lines = progress(&stderr(&out));
    assert!(
        lines.len() >= 3,
        "300 ms at one line per 100 ms or less: {lines:?}"
    );
    assert!(
        lines
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "cumulative counts never go down: {lines:?}"
    );
    let last = lines.last().unwrap();
    assert!(last.0 > 0 && last.2, "the final line: {lines:?}");
    let shard = shootout_shards::read(&hlog).unwrap();
    assert!(shard.sidecar.summary.requests.completed > 0);
    assert_eq!(shard.sidecar.settings.url, url);
    assert!(!shard.sidecar.interrupted);
}

/// The sidecar of a load stopped by stdin: interrupted.
fn assert_interrupted(hlog: &Path, out: &std::process::Output, by: &str) {
    let says = format!("interrupted: results cover the time until {by}");
    assert!(stderr(out).contains(&says), "{}", stderr(out));
    let shard = shootout_shards::read(hlog).unwrap();
    assert!(shard.sidecar.interrupted, "{}", stderr(out));
}

#[test]
fn the_end_of_stdin_stops_the_load() {
    let (_, json) = plan(Duration::from_secs(10));
    let dir = Tmp::new("plan-stdin-eof");
    let hlog = dir.0.join("s.hlog");
    let (child, stdin) = start(&json, &["--hdr-log", hlog.to_str().unwrap()]);
    drop(stdin);
    let out = ended_within(child, Duration::from_secs(5));
    assert_interrupted(&hlog, &out, "stdin ended");
}

#[test]
fn a_cancel_line_stops_the_load() {
    let (_, json) = plan(Duration::from_secs(10));
    let dir = Tmp::new("plan-stdin-cancel");
    let hlog = dir.0.join("s.hlog");
    let (child, mut stdin) = start(&json, &["--hdr-log", hlog.to_str().unwrap()]);
    writeln!(stdin, "something else\ncancel").unwrap();
    let out = ended_within(child, Duration::from_secs(5));
    drop(stdin);
    assert_interrupted(&hlog, &out, "a cancel line on stdin");
}

#[test]
fn a_url_or_a_load_flag_with_the_plan_is_refused() {
    for extra in [&["http://127.0.0.1:1/"][..], &["-c", "5"], &["-z", "1s"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_shootout"))
            .args(["load", "--plan-stdin"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            stderr(&out).contains("'--plan-stdin' cannot be used with"),
            "{}",
            stderr(&out)
        );
    }
}

/// A child killed when dropped, so that a failed assertion leaves no
/// agent behind.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shootout agent` on 127.0.0.1 with `token` in its environment; its
/// process and the address it said it listens on.
fn agent(token: &str) -> (Killed, std::net::SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["agent", "--listen", "127.0.0.1:0"])
        .env("SHOOTOUT_AGENT_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let child = Killed(child);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(err), &mut line).unwrap();
    let at = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .parse()
        .unwrap();
    (child, at)
}

/// One load through an agent as the runner's generator pods send it: the
/// header with the token, the plan, progress lines back, the exit line,
/// then a sidecar and interval log that `shootout_shards` reads and
/// merges; a wrong token gets nothing run.
#[test]
fn an_agent_runs_one_load_per_connection_and_sends_its_logs_back() {
    let token = "0123456789abcdef0123";
    let (_agent, at) = agent(token);
    let (url, json) = plan(Duration::from_millis(300));
    let mut c = std::net::TcpStream::connect(at).unwrap();
    writeln!(
        c,
        "{{\"token\":\"{token}\",\"shard\":null,\"start_at_ms\":null,\"cpus\":null}}"
    )
    .unwrap();
    writeln!(c, "{json}").unwrap();
    let mut all = String::new();
    std::io::Read::read_to_string(&mut c, &mut all).unwrap();
    let (talk, rest) = all
        .split_once("shootout-exit 0\n")
        .unwrap_or_else(|| panic!("{all}"));
    let seen = progress(talk);
    assert!(seen.last().is_some_and(|p| p.0 > 0 && p.2), "{talk}");
    let (sidecar, log) = shootout_shards::split_stream(rest).unwrap();
    let d = Tmp::new("agent");
    std::fs::write(d.0.join("s.hlog.json"), sidecar).unwrap();
    std::fs::write(d.0.join("s.hlog"), log).unwrap();
    let shard = shootout_shards::read(&d.0.join("s.hlog")).unwrap();
    assert_eq!(shard.sidecar.settings.url, url);
    let merged = shootout_shards::merge(vec![shard], false).unwrap();
    assert!(merged.report.summary.requests.completed > 0);

    let mut wrong = std::net::TcpStream::connect(at).unwrap();
    writeln!(wrong, "{{\"token\":\"guess\"}}").unwrap();
    writeln!(wrong, "{json}").unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(&mut wrong, &mut said).unwrap();
    assert_eq!(said, "shootout-refused wrong token\n");
}

#[test]
fn an_agent_refuses_a_wildcard_address_and_a_short_token() {
    let run = |listen: &str, token: &str| {
        Command::new(env!("CARGO_BIN_EXE_shootout"))
            .args(["agent", "--listen", listen])
            .env("SHOOTOUT_AGENT_TOKEN", token)
            .output()
            .unwrap()
    };
    let o = run("0.0.0.0:0", "0123456789abcdef0123");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a wildcard"), "{}", stderr(&o));
    let o = run("127.0.0.1:0", "short");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("16 characters"), "{}", stderr(&o));
}
