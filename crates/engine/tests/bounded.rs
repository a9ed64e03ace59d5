//! The open loop at a rate no generator can send: it ends by its deadline,
//! in memory that does not grow with rate × duration, and every ticket that
//! fell due is either sent or counted as unsent (within a `-n` budget);
//! with Poisson arrivals too, at the highest rate a plan accepts.
//! Own test binary, so the process's peak memory is this file's alone.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, duration, requests};
use common::{ok, Action, TestServer};
use shootout_engine::{
    Arrival, Control, Endpoint, Load, LoadReport, Plan, Stop, Workload, MAX_RATE,
};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn run(url: &str, rate: f64, stop: Stop) -> LoadReport {
    run_with(url, rate, stop, Arrival::Uniform)
}

fn run_with(url: &str, rate: f64, stop: Stop, arrival: Arrival) -> LoadReport {
    let load = Load::Open {
        rate,
        connections: 8,
    };
    let plan = Plan::builder(
        Endpoint::parse(url).unwrap(),
        Workload::new(load, stop).unwrap(),
    )
    .threads(2)
    .timeout(Duration::from_secs(5))
    .arrival(arrival)
    .seed(39)
    .build()
    .unwrap();
    assert!(plan.rate_warning().is_some(), "an absurd rate is said");
    let report = shootout_engine::run(&plan, &Control::new()).unwrap();
    assert_accounted(&report.summary);
    report
}

/// `run_with` on a thread of its own, given up on after `limit`: a run
/// that never ends fails the test instead of hanging it.
fn run_within(limit: Duration, url: &str, rate: f64, stop: Stop, arrival: Arrival) -> LoadReport {
    let (tx, rx) = mpsc::channel();
    let url = url.to_string();
    std::thread::spawn(move || {
        let _ = tx.send(run_with(&url, rate, stop, arrival));
    });
    match rx.recv_timeout(limit) {
        Ok(report) => report,
        Err(e) => panic!("a {arrival} load at {rate} req/s did not end within {limit:?}: {e}"),
    }
}

/// The process's peak resident memory (VmHWM), in MiB.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024
}

#[test]
fn a_rate_of_1e8_ends_on_time_in_bounded_memory() {
    let server = TestServer::start(|_| Action::Reply(ok("hi")));
    let started = Instant::now();
    let r = run(&server.url("/"), 1e8, duration(Duration::from_secs(1)));
    let took = started.elapsed();
    // Before the backlog was a count, 10^8 queued send times took 1.6 GB.
    let peak = peak_rss_mib();
    assert!(peak < 200, "peak RSS {peak} MiB");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    let s = &r.summary;
    let unsent = s.lag.as_ref().unwrap().unsent;
    assert!(s.requests.sent > 0 && unsent > 0, "{s:?}");
    // Every ticket due in the measured second was sent or counted unsent
    // (none lost); the window closes a few microseconds after its deadline,
    // each worth 100 tickets at this rate, so allow up to 100 µs over.
    let due = s.requests.sent + unsent;
    assert!(
        (100_000_000 - 2..=100_000_000 + 10_000).contains(&due),
        "{due} due"
    );
}

#[test]
fn unsent_requests_stay_within_the_request_budget() {
    // One answer never comes, so one connection's worth is sent and the
    // rest of the budget is what the generator could not send.
    let server = TestServer::start(|_| Action::Hang);
    let stop = Stop {
        requests: Some(1000),
        duration: Some(Duration::from_millis(300)),
    };
    let r = run(&server.url("/"), 1e7, stop);
    let s = &r.summary;
    let unsent = s.lag.as_ref().unwrap().unsent;
    assert_eq!(s.requests.sent, 8, "one per connection: {s:?}");
    assert_eq!(s.requests.sent + unsent, 1000);
}

#[test]
fn poisson_arrivals_at_the_highest_rate_end_by_their_deadline_and_budget() {
    // Drawn one gap at a time, the tickets due at 10^9/s took longer to
    // count than they took to fall due, and the worker never came back to
    // its deadline: issue #39.
    let server = TestServer::start(|_| Action::Reply(ok("hi")));
    let started = Instant::now();
    let limit = Duration::from_secs(3);
    let second = duration(Duration::from_secs(1));
    let r = run_within(limit, &server.url("/"), MAX_RATE, second, Arrival::Poisson);
    let took = started.elapsed();
    assert!(took < limit, "took {took:?}");
    let s = &r.summary;
    let unsent = s.lag.as_ref().unwrap().unsent;
    assert!(s.requests.sent > 0 && unsent > 0, "{s:?}");
    // A Poisson count of mean 10^9 (sd 31,623; 6 sd either side), plus
    // the microseconds the window closes late (see above).
    let due = s.requests.sent + unsent;
    assert!(
        (1_000_000_000 - 190_000..=1_000_000_000 + 290_000).contains(&due),
        "{due} due"
    );

    // A request budget ends it as well, with no deadline at all.
    let r = run_within(
        limit,
        &server.url("/"),
        MAX_RATE,
        requests(1000),
        Arrival::Poisson,
    );
    assert_eq!(r.summary.requests.sent, 1000, "{:?}", r.summary);
}
