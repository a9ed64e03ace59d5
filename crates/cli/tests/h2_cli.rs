//! `shootout load --http2` against Debian's nginx: the JSON contract of an
//! HTTP/2 run (exact `-n`, `protocol.http` "2", `streams`), h2c, an open
//! loop, expect checks and their exit codes, and a server that refuses
//! HTTP/2 as exit 2 with its reason. Without nginx a test is skipped
//! (a failure under `CI=true`).

#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../engine/tests/nginx_tls/mod.rs"]
mod nginx_tls;

use common::{load_json, load_json_of, shootout, stderr};
use nginx_tls::Setup;
use serde_json::Value;

fn h2() -> Setup {
    Setup {
        http2: true,
        ..Setup::default()
    }
}

#[test]
fn http2_load_is_exact_and_says_its_protocol() {
    let Some(nginx) = nginx_tls::start("http2_load_is_exact", h2()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let url = nginx.url("localhost");
    let json = load_json(
        &[
            "--http2",
            "--streams",
            "16",
            "-n",
            "2001",
            "-c",
            "3",
            "-t",
            "2",
            "--cacert",
            ca,
            &url,
        ],
        0,
    );
    assert_eq!(
        (
            json["requests"]["sent"].as_u64(),
            json["requests"]["ok"].as_u64()
        ),
        (Some(2001), Some(2001))
    );
    assert_eq!(
        json["protocol"],
        serde_json::json!({"http": "2", "tls": "1.3", "client_cert": false})
    );
    assert_eq!(json["streams"], 16);
    // An open loop for a bounded time, with every response checked.
    let out = shootout(&[
        "load",
        "--http2",
        "--streams",
        "4",
        "-q",
        "400",
        "-z",
        "1s",
        "-c",
        "2",
        "--cacert",
        ca,
        "--expect-status",
        "200",
        "--expect-body",
        "Hello, World!",
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("HTTP/2 with up to 4 streams each"), "{text}");
    assert!(
        text.contains("mismatch 0, tls 0, stream reset 0, goaway 0"),
        "{text}"
    );
}

#[test]
fn a_failing_check_over_http2_is_a_mismatch_and_exit_1() {
    let Some(nginx) = nginx_tls::start("http2_failing_check", h2()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let url = nginx.url("localhost");
    // The same check failing: every response is a mismatch, and a
    // threshold on errors turns that into exit 1.
    let json = load_json(
        &[
            "--http2",
            "--streams",
            "4",
            "-n",
            "200",
            "-c",
            "2",
            "--cacert",
            ca,
            "--expect-body",
            "Goodbye",
            "--fail-if",
            "errors>0",
            &url,
        ],
        1,
    );
    assert_eq!(json["errors"]["mismatch"], 200);
}

#[test]
fn h2c_load_is_exact() {
    let setup = Setup {
        cleartext: true,
        ..h2()
    };
    let Some(nginx) = nginx_tls::start("h2c_load_is_exact", setup) else {
        return;
    };
    let json = load_json(
        &[
            "--http2",
            "--streams",
            "8",
            "-n",
            "1000",
            "-c",
            "2",
            &nginx.h2c_url("127.0.0.1"),
        ],
        0,
    );
    assert_eq!(json["requests"]["ok"], 1000);
    assert_eq!(json["protocol"]["http"], "2");
    assert_eq!(json["protocol"]["tls"], Value::Null);
}

#[test]
fn a_server_without_http2_is_exit_2_with_the_reason() {
    let Some(nginx) = nginx_tls::start("http2_refused", Setup::default()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let out = shootout(&[
        "load",
        "--http2",
        "-n",
        "100",
        "-c",
        "2",
        "--cacert",
        ca,
        &nginx.url("127.0.0.1"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("refused HTTP/2: ALPN chose 'http/1.1'"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no report of a run that fell back");
    assert_eq!(nginx.logged_requests(), 0);
    let out = shootout(&["load", "--streams", "4", "-n", "1", &nginx.url("127.0.0.1")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--http2"), "{}", stderr(&out));
}

/// `capacity --http2 --streams 8`: every level speaks HTTP/2 over TLS (the
/// result says so, beside its streams), and nginx answers every stream.
/// An SLO no server meets (p99 under 1 µs) makes the search end in "no
/// rate met" (exit 1) after a few levels, whatever this machine's speed.
#[test]
fn capacity_searches_over_http2() {
    let Some(nginx) = nginx_tls::start("capacity_searches_over_http2", h2()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let url = nginx.url("localhost");
    let search = |output: &str| {
        shootout(&[
            "capacity",
            "--http2",
            "--streams",
            "8",
            "--slo",
            "p99<=0.001ms",
            "--step",
            "0.3s",
            "--warmup",
            "0.1s",
            "--precision",
            "20%",
            "--cacert",
            ca,
            "--quiet",
            "-o",
            output,
            &url,
        ])
    };
    let out = search("json");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = common::schema_problems(common::CAPACITY_SCHEMA, &json);
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(
        json["search"]["protocol"],
        serde_json::json!({"http": "2", "tls": "1.3", "client_cert": false})
    );
    assert_eq!(json["search"]["streams"], 8);
    let levels = json["levels"].as_array().unwrap();
    assert!(levels.len() >= 2, "{json}");
    let probe = &levels[0];
    assert!(probe["completed"].as_u64().unwrap() > 0, "{probe}");
    // Streams still open at a step's deadline are cut, not failed.
    for l in levels {
        let errors: u64 = l["errors"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(errors, 0, "no stream failed: {l}");
    }
    let text = search("text");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("protocol: HTTP/2 over TLS 1.3 with up to 8 streams per connection"),
        "{text}"
    );
}

/// Two shards of one HTTP/2 open loop (`--shard`, `--hdr-log`) merge into
/// the whole load: counts add up, the merged result still says HTTP/2 over
/// TLS with its streams, and nginx logged every request answered.
#[test]
fn http2_shards_merge_into_the_whole_load() {
    let Some(nginx) = nginx_tls::start("http2_shards_merge", h2()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap().to_string();
    let url = nginx.url("localhost");
    let logs: Vec<String> = (1..=2)
        .map(|i| {
            let log = nginx.dir.join(format!("shard-{i}.hlog"));
            log.to_str().unwrap().to_string()
        })
        .collect();
    let parts = h2_shards(&url, &ca, &logs);
    let sum = |k: &str| {
        parts
            .iter()
            .map(|p| p["requests"][k].as_u64().unwrap())
            .sum::<u64>()
    };
    let logs: Vec<&str> = logs.iter().map(String::as_str).collect();
    let merged = load_json_of(
        &shootout(&[&["merge", "-o", "json"], &logs[..]].concat()),
        0,
    );
    assert_eq!(merged["rate"], 400.0);
    assert_eq!(merged["requests"]["sent"], sum("sent"));
    assert_eq!(merged["requests"]["completed"], sum("completed"));
    assert!(sum("completed") >= 390, "{}", sum("completed"));
    assert_eq!(
        merged["protocol"],
        serde_json::json!({"http": "2", "tls": "1.3", "client_cert": false})
    );
    assert_eq!(merged["streams"], 4);
    // Streams cut at the deadline may or may not have reached nginx.
    let logged = nginx.logged_requests() as u64;
    assert!(
        (sum("completed")..=sum("sent")).contains(&logged),
        "nginx logged {logged}"
    );
}

/// Runs one shard per log of a 400 req/s HTTP/2 open loop for 1 s, all
/// starting together, and returns their JSON results.
fn h2_shards(url: &str, ca: &str, logs: &[String]) -> Vec<Value> {
    let start = common::in_ms(1200);
    let n = logs.len();
    let runs: Vec<_> = logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            let shard = format!("{}/{n}", i + 1);
            let args: Vec<String> = [
                "load",
                "--http2",
                "--streams",
                "4",
                "--shard",
                &shard,
                "--start-at",
                &start,
                "-q",
                "400",
                "-z",
                "1s",
                "-c",
                "2",
                "-t",
                "1",
                "--cacert",
                ca,
                "--hdr-log",
                log,
                "-o",
                "json",
                "--quiet",
                url,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            std::thread::spawn(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                shootout(&args)
            })
        })
        .collect();
    runs.into_iter()
        .map(|h| load_json_of(&h.join().unwrap(), 0))
        .collect()
}

/// A 200 KiB body over HTTP/2 arrives whole on every stream: more than the
/// default 64 KiB window and a dozen of nginx's DATA frames each, four
/// streams at once on each connection, every body compared byte for byte
/// with the file (`--expect-body-file`).
#[test]
fn http2_bodies_over_a_window_arrive_whole() {
    let Some(nginx) = nginx_tls::start("http2_bodies_over_a_window", h2()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let file = nginx.dir.join(nginx_tls::BIG_NAME);
    let url = format!("{}{}", nginx.url("localhost"), nginx_tls::BIG_NAME);
    let load = |expected: &str| {
        load_json(
            &[
                "--http2",
                "--streams",
                "4",
                "-n",
                "40",
                "-c",
                "2",
                "--cacert",
                ca,
                "--expect-status",
                "200",
                "--expect-body-file",
                expected,
                &url,
            ],
            0,
        )
    };
    let json = load(file.to_str().unwrap());
    assert_eq!(json["requests"]["ok"], 40, "{json}");
    let bytes = json["bytes_received"].as_u64().unwrap();
    assert!(bytes >= 40 * nginx_tls::BIG_LEN as u64, "{bytes}");
    // The same load against a file one byte shorter: every body differs.
    let short = nginx.dir.join("short.txt");
    std::fs::write(&short, &nginx_tls::big_body()[1..]).unwrap();
    let json = load(short.to_str().unwrap());
    assert_eq!(
        (&json["errors"]["mismatch"], &json["requests"]["ok"]),
        (&serde_json::json!(40), &serde_json::json!(0)),
        "{json}"
    );
}
