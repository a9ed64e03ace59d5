//! A second machine simulated on this one: network namespaces joined by
//! veth pairs. Namespace `srv` serves HTTP on 10.213.0.1; namespaces `g1`
//! and `g2` each run one shard of the same open loop through `ip netns
//! exec`, with one `--start-at`; `shootout merge` must then give the whole
//! rate within 1%, exactly the summed counts (and the server's own count),
//! and the percentiles of the two logs' histograms added here, in-process,
//! with hdrhistogram alone. Needs root (else skipped) and iproute2's `ip`
//! (else skipped, and a failure under `CI=true`). Every namespace and link is removed at the end, also on failure
//! (the [`Net`] guard's Drop). Traffic stays inside these namespaces.

#![allow(clippy::unwrap_used)]

mod common;

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const RATE: f64 = 1000.0;
const SECONDS: u64 = 3;
const SERVER: &str = "10.213.0.1";

/// The namespaces and host-side links this test made; Drop removes them.
struct Net {
    namespaces: Vec<String>,
    links: Vec<String>,
}

impl Net {
    fn ns(&self, i: usize) -> &str {
        &self.namespaces[i]
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        // A veth left in the root namespace (setup failed half-way) goes
        // with its own deletion; those moved into a namespace go with it.
        for l in &self.links {
            let _ = Command::new("ip").args(["link", "del", l]).output();
        }
        for n in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// srv with 10.213.0.1 on its loopback; gK (K = 1, 2) joined to srv by a
/// veth pair on 10.213.K.0/24 and routing 10.213.0.1 through it.
fn build(net: &mut Net, tag: u32) {
    for name in ["srv", "g1", "g2"] {
        let ns = format!("shootout-{name}-{tag}");
        ip(&["netns", "add", &ns]);
        net.namespaces.push(ns);
    }
    let srv = net.ns(0).to_string();
    ip(&["-n", &srv, "link", "set", "lo", "up"]);
    ip(&[
        "-n",
        &srv,
        "addr",
        "add",
        &format!("{SERVER}/32"),
        "dev",
        "lo",
    ]);
    for k in 1..=2 {
        let (a, b) = (format!("s13a{k}-{tag}"), format!("s13b{k}-{tag}"));
        ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
        net.links.push(a.clone());
        let g = net.ns(k).to_string();
        ip(&["link", "set", &a, "netns", &srv]);
        ip(&["link", "set", &b, "netns", &g]);
        ip(&[
            "-n",
            &srv,
            "addr",
            "add",
            &format!("10.213.{k}.1/24"),
            "dev",
            &a,
        ]);
        ip(&["-n", &srv, "link", "set", &a, "up"]);
        ip(&["-n", &g, "link", "set", "lo", "up"]);
        ip(&[
            "-n",
            &g,
            "addr",
            "add",
            &format!("10.213.{k}.2/24"),
            "dev",
            &b,
        ]);
        ip(&["-n", &g, "link", "set", &b, "up"]);
        ip(&[
            "-n",
            &g,
            "route",
            "add",
            &format!("{SERVER}/32"),
            "via",
            &format!("10.213.{k}.1"),
        ]);
    }
}

/// Binds a listener inside namespace `ns`: a helper thread enters it
/// (setns affects only that thread) and the socket stays there.
fn listen_in(ns: &str) -> TcpListener {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let f = std::fs::File::open(&path).unwrap();
        // SAFETY: setns on a valid namespace fd changes only this thread.
        let rc = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        TcpListener::bind((SERVER, 0)).unwrap()
    })
    .join()
    .unwrap()
}

/// The interval log's `latency` histograms added up, read with hdrhistogram only.
fn logged_latency(path: &Path) -> Histogram<u64> {
    let text = std::fs::read(path).unwrap();
    let mut sum = Histogram::<u64>::new(3).unwrap();
    for e in IntervalLogIterator::new(&text) {
        if let LogEntry::Interval(i) = e.unwrap() {
            if i.tag().map(|t| t.as_str()) == Some("latency") {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(i.encoded_histogram())
                    .unwrap();
                let h: Histogram<u64> = Deserializer::new().deserialize(&mut &raw[..]).unwrap();
                sum.add(&h).unwrap();
            }
        }
    }
    sum
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

#[test]
// Namespaces, two shards and the merge set up and checked in one test.
#[allow(clippy::too_many_lines)]
fn two_namespaced_shards_merge_exactly() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        shootout_testkit::machine("network namespaces need root");
        return;
    }
    if !shootout_testkit::tools(&["ip"]) {
        return;
    }
    let tag = std::process::id() % 100_000;
    let mut net = Net {
        namespaces: Vec::new(),
        links: Vec::new(),
    };
    build(&mut net, tag);

    let served = Arc::new(AtomicU64::new(0));
    let counter = served.clone();
    let listener = listen_in(net.ns(0));
    let port = listener.local_addr().unwrap().port();
    common::serve_on(listener, move || {
        counter.fetch_add(1, Ordering::Relaxed);
        common::ok(Some("text/plain"), "Hello, World!")
    });

    let dir = std::env::temp_dir().join(format!("shootout-netns-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("http://{SERVER}:{port}/");
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap() + Duration::from_millis(1500);
    let start = start.as_millis().to_string();
    let (rate, secs) = (RATE.to_string(), format!("{SECONDS}s"));
    let shards: Vec<_> = (1..=2)
        .map(|i| {
            let args: Vec<String> = [
                "netns",
                "exec",
                net.ns(i),
                env!("CARGO_BIN_EXE_shootout"),
                "load",
                "--remote",
                "--shard",
                &format!("{i}/2"),
                "--start-at",
                &start,
                "-q",
                &rate,
                "-z",
                &secs,
                "-c",
                "16",
                "-t",
                "1",
                "--hdr-log",
                dir.join(format!("g{i}.hlog")).to_str().unwrap(),
                "-o",
                "json",
                "--quiet",
                &url,
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            std::thread::spawn(move || Command::new("ip").args(&args).output().unwrap())
        })
        .collect();
    let parts: Vec<serde_json::Value> = shards
        .into_iter()
        .map(|h| common::json_ok(&h.join().unwrap()))
        .collect();
    let logs = [dir.join("g1.hlog"), dir.join("g2.hlog")];
    let merged = common::run_json(
        Command::new(env!("CARGO_BIN_EXE_shootout"))
            .args(["merge", "-o", "json"])
            .args(&logs),
    );
    let text = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .arg("merge")
        .args(&logs)
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&text.stdout));

    let rps = merged["rps"].as_f64().unwrap();
    assert!(
        (rps / RATE - 1.0).abs() < 0.01,
        "merged {rps} req/s for a target of {RATE}"
    );
    let sum = |k: &str| {
        parts
            .iter()
            .map(|p| p["requests"][k].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(merged["requests"]["sent"], sum("sent"));
    // One generator's schedule holds RATE * SECONDS tickets; on a busy
    // machine the last one or two may still wait for a send at the deadline.
    let (sent, planned) = (sum("sent"), RATE as u64 * SECONDS);
    assert!(
        sent <= planned && sent * 100 >= planned * 99,
        "{sent} of {planned}"
    );
    assert_eq!(merged["requests"]["completed"], sum("completed"));
    assert_eq!(merged["requests"]["ok"], sum("ok"));
    // The server counts a request as its thread gets to it, which may be
    // just after the generator that sent it has exited.
    let sent = sum("sent");
    shootout_testkit::wait_until(
        &format!("the server counting all {sent} requests sent"),
        Duration::from_secs(5),
        || served.load(Ordering::Relaxed) >= sent,
    );
    assert_eq!(
        served.load(Ordering::Relaxed),
        sent,
        "the server's own count"
    );

    // The merge's percentiles are those of the two logs added here.
    let mut both = logged_latency(&logs[0]);
    both.add(logged_latency(&logs[1])).unwrap();
    assert_eq!(both.len(), sum("completed"));
    let l = &merged["latency_ms"];
    for (key, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        assert_eq!(
            l[key].as_f64().unwrap(),
            ms(both.value_at_quantile(q)),
            "{key}"
        );
    }
    assert_eq!(l["max"].as_f64().unwrap(), ms(both.max()));
    assert_eq!(l["min"].as_f64().unwrap(), ms(both.min()));
    // And each log holds exactly its shard's own latency.
    for (p, log) in parts.iter().zip(&logs) {
        let own = logged_latency(log);
        assert_eq!(
            p["latency_ms"]["p99"].as_f64().unwrap(),
            ms(own.value_at_quantile(0.99))
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    drop(net);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains(&format!("-{tag}")),
        "namespaces left behind"
    );
}
