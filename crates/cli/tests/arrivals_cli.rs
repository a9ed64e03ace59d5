//! Arrivals as a server sees them (issue #22): `shootout load -q 500 -z 10s`
//! against a server that stamps the moment each request's head arrives.
//! With `--arrival poisson` the gaps between arrivals (over all
//! connections, in order) have a coefficient of variation near 1, as an
//! exponential law has, and the count sent is a Poisson count of mean 5000;
//! with the default uniform arrivals the gaps are nearly equal (CV below
//! 0.3) and the count is the schedule's. Those bounds are judged when the
//! generator sent on time (its own `lag`); on a machine too busy for that,
//! the test still holds the two processes apart and says what it skipped.
//!
//! Poisson arrivals at the highest rate a plan accepts (10^9 req/s, issue
//! #39) end as uniform ones do: by `-z`, and within 5 s of SIGTERM.
//!
//! A binary of its own whose tests take turns ([`alone`]), so nothing else
//! shares the CPUs while the first stamps arrivals: a stamp is taken when
//! the server's thread wakes, and scheduling noise would blur the uniform
//! gaps.

#![allow(clippy::unwrap_used)]

mod common;

use common::{json_ok, server, shootout, stderr};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Held by each test for its whole run: one at a time.
fn alone() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Stamps = Arc<Mutex<Vec<Instant>>>;

/// A keep-alive server that answers every request with "ok" and pushes
/// the instant each request's head ended into `stamps`.
fn stamping_server(stamps: Stamps) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let stamps = stamps.clone();
            std::thread::spawn(move || serve(stream, &stamps));
        }
    });
    url
}

fn serve(stream: TcpStream, stamps: &Mutex<Vec<Instant>>) {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => {
                stamps.lock().unwrap().push(Instant::now());
                let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                if out.write_all(reply).is_err() {
                    return;
                }
            }
            Ok(_) => {}
        }
    }
}

/// The coefficient of variation (sd / mean) of the gaps between sorted stamps.
fn gap_cv(stamps: &mut [Instant]) -> f64 {
    stamps.sort();
    let gaps: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

/// What one load showed: the CV of the gaps the server saw, the number
/// the generator sent, and the p99 of how late it sent them (its `lag`).
struct Seen {
    cv: f64,
    sent: u64,
    lag_p99_ms: f64,
}

/// Requests due in one load: 500 req/s for 4 s. 2000 gaps put the CV's
/// standard error near 0.02, far inside the 0.85-1.15 and 0.3 bounds (10 s
/// proved the same at 2.5 times the wall time).
const DUE: u64 = 2000;

/// One open loop of 500 req/s for 4 s with `arrival`.
fn arrivals(arrival: &str) -> Seen {
    let stamps: Stamps = Arc::default();
    let url = stamping_server(stamps.clone());
    let out = shootout(&[
        "load",
        "-q",
        "500",
        "-z",
        "4s",
        "-c",
        "32",
        "--arrival",
        arrival,
        "--seed",
        "3",
        "-o",
        "json",
        &url,
    ]);
    let json = json_ok(&out);
    assert_eq!(json["arrival"], arrival);
    let sent = json["requests"]["sent"].as_u64().unwrap();
    let mut seen = std::mem::take(&mut *stamps.lock().unwrap());
    assert_eq!(seen.len() as u64, sent, "the server saw every request sent");
    let seen = Seen {
        cv: gap_cv(&mut seen),
        sent,
        lag_p99_ms: json["lag"]["p99_ms"].as_f64().unwrap(),
    };
    eprintln!(
        "{arrival}: CV of gaps {:.3}, {} sent, p99 send lag {} ms",
        seen.cv, seen.sent, seen.lag_p99_ms
    );
    seen
}

/// A generator that sent its requests on time, give or take a millisecond:
/// only then are the gaps the server saw the arrival process's own. On a
/// busy machine the generator's thread waits for a CPU and sends what fell
/// due meanwhile in a burst (its `lag` says how late), which adds gaps near
/// zero and long ones to any arrival process.
const ON_TIME_MS: f64 = 1.0;

#[test]
fn poisson_arrivals_have_exponential_gaps_and_uniform_ones_do_not() {
    let _turn = alone();
    let poisson = arrivals("poisson");
    let uniform = arrivals("uniform");
    // A Poisson count of mean N has a standard deviation of sqrt(N).
    let four_sd = 4.0 * (DUE as f64).sqrt();
    assert!(
        (poisson.sent as f64 - DUE as f64).abs() <= four_sd,
        "poisson: {} sent, expected {DUE} ± {four_sd:.0}",
        poisson.sent
    );
    assert!(
        uniform.sent.abs_diff(DUE) <= 5,
        "uniform: {} sent of {DUE}",
        uniform.sent
    );
    // Whatever the machine does, the two processes stay far apart.
    assert!(poisson.cv >= 0.85, "poisson: CV of gaps {:.3}", poisson.cv);
    assert!(
        poisson.cv - uniform.cv >= 0.3,
        "poisson CV {:.3} against uniform {:.3}",
        poisson.cv,
        uniform.cv
    );
    if poisson.lag_p99_ms.max(uniform.lag_p99_ms) > ON_TIME_MS {
        println!(
            "NOTE: the generator sent late (p99 lag {} and {} ms): the CV bounds \
             0.85-1.15 and below 0.3 were not judged",
            poisson.lag_p99_ms, uniform.lag_p99_ms
        );
        return;
    }
    assert!(poisson.cv <= 1.15, "poisson: CV of gaps {:.3}", poisson.cv);
    assert!(uniform.cv < 0.3, "uniform: CV of gaps {:.3}", uniform.cv);
}

/// Runs shootout ARGS, sends `signal` `after` the start if given, and
/// waits for it to exit, killing it (and failing) once `limit` has passed
/// since the signal, or since the start without one. Returns its output and
/// how long it ran from then.
fn within(args: &[&str], signal: Option<(i32, Duration)>, limit: Duration) -> (Output, Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some((signal, after)) = signal {
        std::thread::sleep(after);
        // SAFETY: kill(2) on our own child, not yet waited for.
        unsafe { libc::kill(child.id() as i32, signal) };
    }
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "shootout {} still ran {limit:?} later (killed): {}",
                args.join(" "),
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), t0.elapsed())
}

/// `load` of Poisson arrivals at 1e9 req/s for `duration` on 8
/// connections and 2 threads, JSON out, with `extra` flags before the URL.
fn poisson_at_1e9<'a>(url: &'a str, duration: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "load",
        "-q",
        "1e9",
        "--arrival",
        "poisson",
        "-z",
        duration,
        "-c",
        "8",
        "-t",
        "2",
    ];
    args.extend_from_slice(extra);
    args.extend(["-o", "json", url]);
    args
}

#[test]
fn poisson_arrivals_at_1e9_per_second_end_by_their_deadline() {
    let _turn = alone();
    let url = server(|| common::ok(None, "hi"));
    let args = poisson_at_1e9(&url, "1s", &["--seed", "39"]);
    let (out, took) = within(&args, None, Duration::from_secs(3));
    eprintln!("poisson at 1e9 req/s for 1 s took {took:?}");
    let json = json_ok(&out);
    assert_eq!(json["arrival"], "poisson");
    assert!(json["requests"]["sent"].as_u64().unwrap() > 0, "{json}");
    // What could not be sent is counted, about 10^9 of it.
    let unsent = json["lag"]["unsent"].as_u64().unwrap();
    assert!(unsent > 900_000_000, "{unsent} unsent");
    assert!(stderr(&out).contains("were never sent"), "{}", stderr(&out));
}

#[test]
fn sigterm_stops_poisson_arrivals_at_1e9_per_second_within_5_s() {
    let _turn = alone();
    let url = server(|| common::ok(None, "hi"));
    let args = poisson_at_1e9(&url, "60s", &[]);
    let term = Some((libc::SIGTERM, Duration::from_secs(1)));
    let (out, took) = within(&args, term, Duration::from_secs(5));
    eprintln!("poisson at 1e9 req/s ended {took:?} after SIGTERM");
    let json = json_ok(&out);
    assert!(json["duration_s"].as_f64().unwrap() < 10.0, "{json}");
    assert!(
        stderr(&out).contains("results cover the time until SIGTERM"),
        "{}",
        stderr(&out)
    );
}
