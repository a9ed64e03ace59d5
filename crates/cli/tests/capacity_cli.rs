//! End-to-end runs of the real `shootout capacity` binary against an
//! in-test server that serves one request at a time with a fixed 5 ms
//! service time: the capacity found, the verdict `none` under an SLO below
//! the service time, exit codes, and the JSON against
//! docs/capacity.schema.json. Every load is bounded (short steps, a bounded
//! number of levels) and goes to 127.0.0.1.

#![allow(clippy::unwrap_used)]

use serde_json::Value;
use std::net::TcpListener;
use std::sync::Mutex;
use std::time::Duration;

const SERVICE: Duration = Duration::from_millis(5);

/// Loads run one at a time: two searches sharing two cores would each see
/// the other's load as the server's (or the generator's) limit.
static LOADS: Mutex<()> = Mutex::new(());

mod common;
use common::{shootout, stderr};

/// A keep-alive server on any number of connections that serves one
/// request at a time, each taking [`SERVICE`].
fn serial_server() -> String {
    let one_at_a_time = Mutex::new(());
    let url = common::server(move || {
        let _serving = one_at_a_time.lock().unwrap();
        std::thread::sleep(SERVICE);
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_string()
    });
    format!("{url}/")
}

/// The server's throughput at one connection, measured with `shootout load`.
fn one_connection_rps(url: &str) -> f64 {
    let out = shootout(&["load", "-c", "1", "-t", "1", "-z", "2s", "-o", "json", url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    json["rps"].as_f64().unwrap()
}

#[test]
fn finds_the_capacity_of_a_serial_server_and_its_curve() {
    let _one = LOADS.lock().unwrap_or_else(|e| e.into_inner());
    let url = serial_server();
    let throughput = one_connection_rps(&url);
    assert!((150.0..=205.0).contains(&throughput), "{throughput}");
    let out = shootout(&[
        "capacity",
        "--slo",
        "p99<=50ms",
        "--step",
        "1s",
        "--warmup",
        "1s",
        "-t",
        "1",
        "-o",
        "json",
        &url,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("bracket [pass"), "progress on stderr: {err}");
    assert!(
        !err.contains('\x1b'),
        "no escape codes off a terminal: {err:?}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        common::schema_problems(common::CAPACITY_SCHEMA, &json),
        Vec::<String>::new()
    );
    assert_eq!(json["verdict"], "found");
    let capacity = json["capacity_rps"].as_f64().unwrap();
    let ratio = capacity / throughput;
    assert!(
        (0.8..=1.05).contains(&ratio),
        "capacity {capacity:.1} req/s is {:.0}% of the one-connection throughput {throughput:.1}",
        ratio * 100.0
    );
    let slo: Vec<&str> = json["slo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["text"].as_str().unwrap())
        .collect();
    assert_eq!(slo, ["p99<=50ms", "error_rate<=0.1%"]);
    let levels = json["levels"].as_array().unwrap();
    assert_eq!(levels[0]["phase"], "probe");
    assert!(
        levels.iter().any(|l| l["pass"] == false),
        "a failing level bounds the search"
    );
    let curve = json["curve"].as_array().unwrap();
    let fractions: Vec<f64> = curve
        .iter()
        .map(|l| l["fraction"].as_f64().unwrap())
        .collect();
    assert_eq!(fractions, [0.25, 0.5, 0.75, 0.9, 1.0]);
    // Below saturation the latency is about the service time.
    let p50 = curve[0]["latency_ms"]["p50"].as_f64().unwrap();
    assert!((4.5..15.0).contains(&p50), "p50 at 25% was {p50} ms");
}

#[test]
fn an_slo_below_the_service_time_is_met_by_no_rate() {
    let _one = LOADS.lock().unwrap_or_else(|e| e.into_inner());
    let url = serial_server();
    let out = shootout(&[
        "capacity", "--slo", "p99<=2ms", "--step", "1s", "--warmup", "0.5s", "-t", "1", &url,
    ]);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(
        text.contains("capacity: none; no rate tried met p99<=2ms"),
        "{text}"
    );
    assert!(text.contains("p99 was"), "each failure says why: {text}");
    assert!(
        !text.contains("Latency vs load"),
        "no curve without a capacity: {text}"
    );
    assert!(err.contains("no rate met the SLO"), "{err}");
}

#[test]
fn a_dead_server_is_an_environment_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let out = shootout(&[
        "capacity", "--step", "0.5s", "--warmup", "0s", "--quiet", &url,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gave no successful answer to the probe"),
        "{err}"
    );
    assert!(err.contains("connect errors"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_flags_exit_2_with_the_reason() {
    let url = "http://127.0.0.1:9/";
    for (args, want) in [
        (vec!["--slo", "p99"], "has no comparison"),
        (vec!["--slo", "speed<5"], "unknown metric"),
        (vec!["--precision", "0"], "out of range"),
        (vec!["--precision", "fine"], "is not a precision"),
        (vec!["--step", "0s"], "--step: must be more than 0"),
        (vec!["-c", "0"], "must be at least 1"),
    ] {
        let mut argv = vec!["capacity"];
        argv.extend(&args);
        argv.push(url);
        let out = shootout(&argv);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let out = shootout(&["capacity", "http://10.1.2.3/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("refusing to load"));
}

/// Under a low soft open-file limit the search raises it to the hard limit
/// and sizes every level's pool to fit; it once sized the pool past the
/// hard limit and then refused ("N connections need about N+32 open files").
#[test]
fn levels_fit_the_open_file_limit() {
    let _one = LOADS.lock().unwrap_or_else(|e| e.into_inner());
    let url = serial_server();
    // The 2 s bound sizes the pool far above what 256 files allow; the
    // p50 bound fails every level, so the search ends quickly (exit 1).
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "ulimit -Sn 64 && ulimit -Hn 256 && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_shootout"),
            "capacity",
            "--slo",
            "p99<=2000ms",
            "--slo",
            "p50<=1ms",
            "--step",
            "0.5s",
            "--warmup",
            "0s",
            "-t",
            "1",
            "-o",
            "json",
            &url,
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pools: Vec<u64> = json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["phase"] != "probe")
        .map(|l| l["connections"].as_u64().unwrap())
        .collect();
    // 256 files less the engine's 32 spare: the cap, reached.
    assert!(pools.iter().all(|&c| c <= 224), "{pools:?}");
    assert!(pools.contains(&224), "{pools:?}");
}
