//! `shootout load --shard/--start-at/--hdr-log` and `shootout merge` end to
//! end on 127.0.0.1: two shards of one open loop merge into the whole load
//! (same JSON schema as `shootout load`, counts summed exactly), and logs
//! that do not belong together exit 2 naming the problem. Also `--remote`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{in_ms, ok, server, shootout, stderr, stdout};
use std::path::{Path, PathBuf};

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("shootout-merge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs shards `which` of an `N`-shard open loop at `rate` for 1 s, all at once.
fn shards(url: &str, dir: &Path, n: u32, which: &[(u32, &str)]) -> Vec<serde_json::Value> {
    let start = in_ms(1200);
    let runs: Vec<_> = which
        .iter()
        .map(|(i, rate)| {
            let (url, start) = (url.to_string(), start.clone());
            let log = dir.join(format!("shard-{i}.hlog"));
            let shard = format!("{i}/{n}");
            let rate = rate.to_string();
            std::thread::spawn(move || {
                let log = log.to_str().unwrap();
                shootout(&[
                    "load",
                    "--shard",
                    &shard,
                    "--start-at",
                    &start,
                    "-q",
                    &rate,
                    "-z",
                    "1s",
                    "-c",
                    "16",
                    "-t",
                    "1",
                    "--hdr-log",
                    log,
                    "-o",
                    "json",
                    "--quiet",
                    &url,
                ])
            })
        })
        .collect();
    runs.into_iter()
        .map(|h| {
            let out = h.join().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            serde_json::from_str(&stdout(&out)).unwrap()
        })
        .collect()
}

#[test]
fn two_shards_merge_into_the_whole_load() {
    let url = server(|| ok(None, "hi"));
    let d = dir("ok");
    let parts = shards(&url, &d, 2, &[(1, "400"), (2, "400")]);
    for p in &parts {
        assert_eq!(p["rate"], 200.0, "each shard offers half");
        // 200 tickets each; on a busy machine the last one, due a
        // millisecond before the deadline, may go unsent.
        let sent = p["requests"]["sent"].as_u64().unwrap();
        assert!((198..=200).contains(&sent), "{sent}");
    }
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("shard-1.hlog.json")).unwrap())
            .unwrap();
    assert_eq!(side["settings"]["rate"], 400.0);
    assert_eq!(side["shard"]["index"], 1);
    let hlog = std::fs::read_to_string(d.join("shard-1.hlog")).unwrap();
    assert!(hlog.contains("#[StartTime: ") && hlog.contains("#[BaseTime: "));
    assert!(hlog.lines().any(|l| l.starts_with("Tag=latency,")));

    let logs = [d.join("shard-1.hlog"), d.join("shard-2.hlog")];
    let logs: Vec<&str> = logs.iter().map(|p| p.to_str().unwrap()).collect();
    let out = shootout(&[&["merge", "-o", "json"], &logs[..]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    common::assert_load_json(&merged);
    assert_eq!(merged["rate"], 400.0);
    let sum = |k: &str| {
        parts
            .iter()
            .map(|p| p["requests"][k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(merged["requests"]["sent"], sum("sent"));
    assert_eq!(merged["requests"]["completed"], sum("completed"));
    assert_eq!(merged["status"]["200"], sum("completed"));
    let rps = merged["rps"].as_f64().unwrap();
    assert!((rps / 400.0 - 1.0).abs() < 0.01, "{rps}");
    assert_eq!(merged["shards"].as_array().unwrap().len(), 2);
    assert!(merged["start_skew_ms"].as_f64().unwrap() < 50.0);

    // --fail-if judges the merged result; the text report lists the shards.
    let out = shootout(&[&["merge", "--fail-if", "rps<1000"], &logs[..]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Shards (2 merged"),
        "{}",
        stdout(&out)
    );

    // A shard missing, or one given twice.
    let out = shootout(&["merge", logs[0]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("shard 2/2 is missing"),
        "{}",
        stderr(&out)
    );
    let out = shootout(&["merge", logs[0], logs[0], logs[1]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("shard 1/2 appears 2 times"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn logs_of_other_settings_or_times_are_refused() {
    let url = server(|| ok(None, "hi"));
    let d = dir("bad");
    // Shard 2 was given another rate: its settings differ from shard 1's.
    shards(&url, &d, 2, &[(1, "200"), (2, "300")]);
    let a = d.join("shard-1.hlog");
    let b = d.join("shard-2.hlog");
    let out = shootout(&["merge", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("other settings") && err.contains("rate (300.0 vs 200.0)"),
        "{err}"
    );
    // A shard 2 of the right settings, run at another time.
    let later = dir("later");
    shards(&url, &later, 2, &[(2, "200")]);
    let c = later.join("shard-2.hlog");
    let out = shootout(&["merge", a.to_str().unwrap(), c.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("do not overlap") || err.contains("other settings"),
        "{err}"
    );
    assert!(
        err.contains("start_at_unix_ms") || err.contains("ms apart"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_dir_all(&later);
}

#[test]
fn remote_addresses_need_remote() {
    let out = shootout(&["load", "-n", "1", "http://10.213.255.1:9/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unless --remote is given"),
        "{}",
        stderr(&out)
    );
    let out = shootout(&["load", "--shard", "3/2", "-n", "1", "http://127.0.0.1:9/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("shard 3/2 does not exist"),
        "{}",
        stderr(&out)
    );
    let out = shootout(&[
        "load",
        "--start-at",
        "tomorrow",
        "-n",
        "1",
        "http://127.0.0.1:9/",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("RFC 3339"), "{}", stderr(&out));
}

/// Starts shard `i` of a 2-shard open loop of 4 s as a child process.
fn spawn_shard(url: &str, log: &Path, i: u32, start: &str) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["load", "--shard", &format!("{i}/2"), "--start-at", start])
        .args(["-q", "200", "-z", "4s", "-c", "8", "-t", "1", "--quiet"])
        .args(["-o", "json", "--hdr-log", log.to_str().unwrap(), url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_shard_stopped_by_sigterm_is_named_by_merge_and_merged_only_as_partial() {
    let url = server(|| ok(None, "hi"));
    let d = dir("sigterm");
    let (a, b) = (d.join("shard-1.hlog"), d.join("shard-2.hlog"));
    let start = in_ms(1200);
    let mut one = spawn_shard(&url, &a, 1, &start);
    let two = spawn_shard(&url, &b, 2, &start);
    std::thread::sleep(std::time::Duration::from_millis(2700));
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(two.id() as i32, libc::SIGTERM) };
    let t0 = std::time::Instant::now();
    let out = two.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(5),
        "SIGTERM took {:?}",
        t0.elapsed()
    );
    assert!(stderr(&out).contains("until SIGTERM"), "{}", stderr(&out));
    assert!(one.wait().unwrap().success());
    let side = |p: &Path| -> serde_json::Value {
        let text = std::fs::read_to_string(shootout_shards_sidecar(p)).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    assert_eq!(side(&b)["interrupted"], true, "the stopped shard says so");
    assert_eq!(side(&a)["interrupted"], false);
    let measured = side(&b)["summary"]["duration_s"].as_f64().unwrap();
    assert!((0.5..3.5).contains(&measured), "{measured}");

    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = shootout(&["merge", a, b]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{b} (shard 2/2) was interrupted after"))
            && err.contains("--accept-partial"),
        "{err}"
    );
    assert!(!err.contains(a), "the complete shard is not blamed: {err}");

    let out = shootout(&["merge", "--accept-partial", "-o", "json", a, b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let merged: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    common::assert_load_json(&merged);
    let rows = merged["shards"].as_array().unwrap();
    assert_eq!(rows[1]["interrupted"], true);
    assert_eq!(rows[0]["interrupted"], false);

    assert_counted_over_the_stated_window(&merged, &err, a, b, measured);
    let w = measured.floor();

    // The text report says the window too.
    let out = shootout(&["merge", "--accept-partial", a, b]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("partial window: every count over the first {w} s")),
        "{}",
        stdout(&out)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// The window `merge --accept-partial` of shards `a` and `b` states (the
/// whole seconds both measured, `measured` the shorter) is the one counted:
/// every count taken from the interval logs' seconds in it.
fn assert_counted_over_the_stated_window(
    merged: &serde_json::Value,
    err: &str,
    a: &str,
    b: &str,
    measured: f64,
) {
    let rows = merged["shards"].as_array().unwrap();
    let window = &merged["partial_window"];
    let w = window["window_s"].as_f64().unwrap();
    assert_eq!(w, measured.floor(), "{window}");
    assert_eq!(window["shortest_s"], measured);
    assert_eq!(window["planned_s"], 4.0);
    assert_eq!(window["interrupted"][0], b);
    assert!(
        err.contains(&format!(
            "partial window: {b} interrupted; counted over the first {w} s every shard measured"
        )) && err.contains("of the planned 4.0 s"),
        "{err}"
    );
    assert_eq!(merged["duration_s"], w, "the duration used is the window");
    assert_eq!(merged["timeline"].as_array().unwrap().len(), w as usize);
    let in_window = |p: &str| -> u64 {
        let log = shootout_shards::read(Path::new(p)).unwrap();
        let from = log.sidecar.measured_from_unix_s;
        let kept: u64 = log
            .seconds
            .iter()
            .filter(|(at, _)| at - from < w - 0.5)
            .map(|(_, h)| h.len())
            .sum();
        let all: u64 = log.seconds.iter().map(|(_, h)| h.len()).sum();
        assert!(kept < all, "{p}: the shard measured past the window");
        kept
    };
    let expected = in_window(a) + in_window(b);
    assert_eq!(merged["requests"]["completed"], expected);
    assert_eq!(merged["status"]["200"], expected);
    let errors: u64 = merged["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(merged["requests"]["sent"], expected + errors);
    let rps = merged["rps"].as_f64().unwrap();
    assert!((rps - expected as f64 / w).abs() < 1e-6, "{rps}");
    assert_eq!(rows[0]["duration_s"], w);
    assert!(
        merged["latency_uncorrected_ms"].is_null(),
        "not in the window"
    );
}

fn shootout_shards_sidecar(hlog: &Path) -> PathBuf {
    let mut p = hlog.as_os_str().to_owned();
    p.push(".json");
    PathBuf::from(p)
}
