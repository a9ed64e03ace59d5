//! End-to-end runs of the real `shootout load` binary: exit codes, the JSON
//! contract against docs/load.schema.json, and the text report's sections.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::net::TcpListener;

mod common;
use common::{ok, shootout, stderr};

/// A keep-alive server answering every request with `Hello, World!`.
fn hello_server() -> String {
    format!("{}/plaintext", common::server(|| ok(None, "Hello, World!")))
}

#[test]
fn json_output_follows_the_schema_and_the_invariant() {
    let url = hello_server();
    let out = shootout(&["load", "-n", "2k", "-c", "8", "-o", "json", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    common::assert_load_json(&json);
    let r = &json["requests"];
    let errors: u64 = json["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(r["sent"], 2000);
    assert_eq!(
        r["sent"].as_u64().unwrap(),
        r["completed"].as_u64().unwrap() + r["cut"].as_u64().unwrap() + errors
    );
    assert_eq!(json["status"]["200"], 2000);
    assert_eq!(json["mode"], "closed");
    assert_eq!(json["pipeline"], 1);
    assert!(json["latency_uncorrected_ms"].is_null());
}

/// `--pipeline N`: exact counts, and every output says the depth.
#[test]
fn pipelined_load_says_its_depth_in_every_output() {
    let url = hello_server();
    let args = |format| {
        [
            "load",
            "-n",
            "1000",
            "-c",
            "4",
            "--pipeline",
            "16",
            "-o",
            format,
            &url,
        ]
        .map(str::to_string)
    };
    let run = |format| {
        let a = args(format);
        let out = shootout(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    common::assert_load_json(&json);
    assert_eq!(json["pipeline"], 16);
    assert_eq!(json["requests"]["sent"], 1000);
    assert_eq!(json["requests"]["ok"], 1000);
    let text = run("text");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .starts_with("Load: closed loop, 4 connections, pipeline 16, "),
        "{text}"
    );
    assert!(run("markdown").contains("| pipeline depth | 16 |"));
    let csv = run("csv");
    let lines: Vec<&str> = csv.lines().collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let column = header.iter().position(|c| *c == "pipeline").unwrap();
    assert_eq!(lines[1].split(',').nth(column), Some("16"));
}

/// A measured phase under a second is said to be too short, in JSON and in
/// text; one of 1.2 s is not.
#[test]
fn a_load_under_a_second_warns_that_it_is_too_short() {
    let url = hello_server();
    let out = shootout(&["load", "-n", "200", "-c", "2", "-o", "json", &url]);
    let json: Value = common::json_ok(&out);
    assert!(json["duration_s"].as_f64().unwrap() < 1.0, "{json}");
    let warnings = json["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{json}");
    assert!(warnings[0]
        .as_str()
        .unwrap()
        .contains("too short to carry its figure"));
    let text = common::stdout(&shootout(&["load", "-n", "200", "-c", "2", &url]));
    assert!(
        text.contains("  Warning      the measured phase lasted"),
        "{text}"
    );

    let out = shootout(&["load", "-z", "1200ms", "-c", "2", "-o", "json", &url]);
    let json: Value = common::json_ok(&out);
    assert_eq!(json["warnings"], serde_json::json!([]), "{json}");
}

#[test]
fn the_schema_rejects_a_broken_report() {
    let broken = serde_json::json!({ "mode": "sideways", "requests": { "sent": -1 } });
    assert!(!common::schema_problems(common::LOAD_SCHEMA, &broken).is_empty());
}

#[test]
fn open_loop_json_has_uncorrected_latency_and_lag() {
    let url = hello_server();
    let out = shootout(&[
        "load", "-q", "100", "-z", "1s", "-c", "4", "-o", "json", &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "open");
    assert!(json["latency_uncorrected_ms"]["p99"].is_number());
    assert!(json["lag"]["late"].is_u64());
}

#[test]
fn text_output_reads_like_wrk() {
    let url = hello_server();
    let out = shootout(&["load", "-n", "500", "-c", "5", &url]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for section in [
        "Requests/s",
        "Latency (ms)",
        "p99.9",
        "Latency histogram",
        "Status codes",
        "[200] 500 responses",
        "Errors",
        "Generator",
    ] {
        assert!(text.contains(section), "missing {section} in:\n{text}");
    }
}

#[test]
fn markdown_and_csv_outputs() {
    let url = hello_server();
    let md = shootout(&["load", "-n", "100", "-c", "2", "-o", "markdown", &url]);
    assert!(String::from_utf8(md.stdout)
        .unwrap()
        .contains("| RPS (req/s) |"));
    let csv =
        String::from_utf8(shootout(&["load", "-n", "100", "-c", "2", "-o", "csv", &url]).stdout)
            .unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
}

#[test]
fn fail_if_exits_1_only_when_violated() {
    let url = hello_server();
    let pass = shootout(&[
        "load",
        "-n",
        "200",
        "-c",
        "2",
        "--fail-if",
        "errors>0",
        "-o",
        "json",
        &url,
    ]);
    assert_eq!(pass.status.code(), Some(0), "{}", stderr(&pass));
    let fail = shootout(&[
        "load",
        "-n",
        "200",
        "-c",
        "2",
        "--fail-if",
        "p99>=0ms",
        "-o",
        "json",
        &url,
    ]);
    assert_eq!(fail.status.code(), Some(1));
    assert!(stderr(&fail).contains("--fail-if p99>=0ms"));
}

#[test]
fn usage_errors_exit_2_and_name_the_bad_value() {
    let cases: [(&[&str], &str); 16] = [
        (&["load", "-c", "lots", "http://127.0.0.1:1/"], "'lots'"),
        (
            &["load", "-z", "5 parsecs", "http://127.0.0.1:1/"],
            "'5 parsecs'",
        ),
        (
            &["load", "http://10.1.2.3/"],
            "only sends load to 127.0.0.1",
        ),
        (
            &["load", "--fail-if", "speed>3", "http://127.0.0.1:1/"],
            "unknown metric",
        ),
        (
            &["load", "-H", "no-colon", "http://127.0.0.1:1/"],
            "'no-colon'",
        ),
        (
            &["load", "--cpus", "1000", "http://127.0.0.1:1/"],
            "--cpus: CPU 1000 is not available",
        ),
        // The engine's rules, reported by the flag that broke them.
        (
            &["load", "--stages", "0s:5", "http://127.0.0.1:1/"],
            "--stages: a stage needs a duration above 0",
        ),
        (
            &["load", "--stages", "5s:-1", "http://127.0.0.1:1/"],
            "--stages: bad level -1",
        ),
        (
            &["load", "--stages", "5s:9", "-c", "4", "http://127.0.0.1:1/"],
            "--stages: level 9 exceeds 4 connections",
        ),
        (
            &["load", "-c", "0", "http://127.0.0.1:1/"],
            "-c/--connections: must be at least 1",
        ),
        (
            &["load", "-n", "0", "http://127.0.0.1:1/"],
            "-n/--requests: must be at least 1",
        ),
        (
            &["load", "-t", "0", "http://127.0.0.1:1/"],
            "-t/--threads: must be at least 1",
        ),
        (
            &["load", "--timeout", "0s", "http://127.0.0.1:1/"],
            "--timeout: must be more than 0",
        ),
        (
            &["load", "--pipeline", "0", "http://127.0.0.1:1/"],
            "--pipeline: 0 is not a depth from 1 to 1024",
        ),
        (
            &["load", "--pipeline", "2k", "http://127.0.0.1:1/"],
            "--pipeline: 2000 is not a depth from 1 to 1024",
        ),
        (
            &[
                "load",
                "--pipeline",
                "16",
                "--no-keepalive",
                "http://127.0.0.1:1/",
            ],
            "--pipeline: pipelining needs keep-alive connections",
        ),
    ];
    for (args, needle) in cases {
        let out = shootout(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

/// Negative values used to be taken for flags (`-z -1s` is -1 and -s), so
/// clap printed only the usage; now each value reaches its parser.
#[test]
fn negative_values_are_named_not_taken_for_flags() {
    let cases: [(&[&str], &str); 8] = [
        (&["-z", "-1s"], "'-1s' is a negative duration"),
        (&["-q", "-5"], "'-5' is not a positive rate"),
        (&["-c", "-1"], "'-1' is not a whole, non-negative count"),
        (&["-n", "-3"], "'-3' is not a whole, non-negative count"),
        (&["--timeout", "-1s"], "'-1s' is a negative duration"),
        (&["--warmup", "-2s"], "'-2s' is a negative duration"),
        (&["-t", "-1"], "'-1' for '--threads"),
        (&["--stages", "-1s:5"], "'-1s' is a negative duration"),
    ];
    for (flags, needle) in cases {
        let mut args = vec!["load"];
        args.extend_from_slice(flags);
        args.push("http://127.0.0.1:9/");
        let out = shootout(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
}

/// A load that reached no server is an environment error: the counts are
/// still printed, with a hint, and the exit status is 2.
#[test]
fn a_dead_server_is_counted_with_a_hint_and_exits_2() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = shootout(&["load", "-n", "50", "-c", "2", "-o", "json", &url]);
    assert_eq!(out.status.code(), Some(2));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["errors"]["connect"], 50);
    let hint = format!("check that a server is listening on 127.0.0.1:{port}");
    assert!(stderr(&out).contains("no connection succeeded (50 connect errors)"));
    assert!(stderr(&out).contains(&hint), "{}", stderr(&out));
    let out = shootout(&["load", "-n", "5", "-c", "1", "--quiet", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains(&hint));
}

#[test]
fn too_many_connections_for_the_fd_limit_is_a_clear_error() {
    let url = hello_server();
    let out = shootout(&["load", "-c", "100m", "-n", "1", &url]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("open files"), "{}", stderr(&out));
}

/// Input that would inject a header, break the request line, carry a
/// password or sleep for millennia is refused before anything is sent.
#[test]
fn hostile_urls_and_absurd_values_exit_2() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["load", "-n", "1", "http://127.0.0.1:1/a\r\nX-Injected: 1"],
            "a carriage return (CR) at byte 20",
        ),
        (
            &["load", "-n", "1", "http://127.0.0.1:1/a\nb"],
            "a line feed (LF)",
        ),
        (
            &["load", "-n", "1", "http://127.0.0.1:1/a b"],
            "a space at byte 20",
        ),
        (
            &["load", "-n", "1", "http://127.0.0.1:1/a<b"],
            "'<' at byte 20",
        ),
        (
            &["load", "-n", "1", "http://user:pw@127.0.0.1:1/"],
            "credentials in the URL",
        ),
        (
            &["load", "-q", "1e10", "-z", "1s", "http://127.0.0.1:1/"],
            "-q/--rate: 10000000000 req/s is more than any generator can pace",
        ),
        (
            &[
                "load",
                "--start-at",
                "1767225600000000",
                "-n",
                "1",
                "http://127.0.0.1:1/",
            ],
            "days from now; a start may be at most a day ahead",
        ),
    ];
    for (args, needle) in cases {
        let out = shootout(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains('\r'), "the URL is printed escaped: {err:?}");
    }
}

/// An open loop at a rate no generator can send still ends on time: it
/// says so at the start, and counts what it could not send.
#[test]
fn an_absurd_rate_runs_bounded_and_says_so() {
    let url = hello_server();
    let started = std::time::Instant::now();
    let out = shootout(&[
        "load", "-q", "1e8", "-z", "1s", "-c", "8", "-o", "json", &url,
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(6));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: 100000000 req/s is more than"),
        "{err}"
    );
    assert!(err.contains("were never sent"), "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let unsent = json["lag"]["unsent"].as_u64().unwrap();
    let sent = json["requests"]["sent"].as_u64().unwrap();
    assert!(unsent > 0 && sent > 0, "{json}");
    // None lost: every ticket due in the second was sent or counted
    // unsent. The window closes a few microseconds after its deadline,
    // each worth 100 tickets at this rate (as in the engine's bounded.rs).
    assert!(
        (100_000_000 - 64..=100_000_000 + 10_000).contains(&(sent + unsent)),
        "{sent} + {unsent}"
    );
}

/// `--io uring` carries the same exact load and says so in the JSON
/// (`generator.io`); an unknown transport is a usage error, and https over
/// io_uring is refused by name. Skipped where the kernel refuses io_uring.
#[test]
fn io_uring_transport_is_chosen_by_flag() {
    if let Some(why) = shootout_engine::transport::uring_unavailable() {
        shootout_testkit::machine(why);
        return;
    }
    let url = hello_server();
    for (io, depth) in [("uring", "1"), ("uring", "16"), ("epoll", "1")] {
        let args = ["load", "-n", "3000", "-c", "4", "--pipeline", depth];
        let out = shootout(&[&args[..], &["--io", io, "-o", "json", &url]].concat());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["generator"]["io"], io);
        assert_eq!(json["requests"]["sent"], 3000);
        assert_eq!(json["status"]["200"], 3000, "{io} depth {depth}");
    }
    let out = shootout(&["load", "-n", "1", "--io", "kqueue", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = shootout(&["load", "-n", "1", "--io", "uring", "https://127.0.0.1:1/"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--io"), "{}", stderr(&out));
}
