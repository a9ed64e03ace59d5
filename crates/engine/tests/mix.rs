//! A mix of request kinds against an in-process server that counts each
//! request line it receives: the total is exactly `-n`, each kind's share
//! is within four binomial standard deviations of its weight, each kind's
//! count equals the server's, the invariant holds per kind and in total,
//! ranges stay in bounds, and the same seed gives the same counts. Also
//! Poisson arrivals seen from the server: gaps with a CV near 1.

#![allow(clippy::unwrap_used)]

mod common;

use common::stops::{assert_accounted, duration, requests};
use common::{ok, Action, TestServer};
use shootout_engine::{
    Arrival, Control, Endpoint, Load, LoadReport, Mix, Plan, RequestKind, RequestSpec, Template,
    Workload,
};
use std::collections::BTreeMap;
use std::time::Duration;

fn kind(name: &str, weight: u32, method: &str, path: &str) -> RequestKind {
    RequestKind {
        name: name.into(),
        weight,
        path: Template::parse(path).unwrap(),
        request: RequestSpec {
            method: method.into(),
            body: if method == "POST" {
                b"x".to_vec()
            } else {
                Vec::new()
            },
            ..RequestSpec::default()
        },
        expect: None,
    }
}

fn mix() -> Mix {
    Mix::new(vec![
        kind("db", 70, "GET", "/db"),
        kind("queries", 20, "GET", "/queries?queries={1..20}"),
        kind("update", 10, "POST", "/updates?queries=5"),
    ])
    .unwrap()
}

fn run(server: &TestServer, n: u64, seed: u64) -> LoadReport {
    let workload = Workload::new(Load::Closed { connections: 6 }, requests(n)).unwrap();
    let plan = Plan::builder(Endpoint::parse(&server.url("/")).unwrap(), workload)
        .threads(2)
        .mix(Some(mix()))
        .seed(seed)
        .build()
        .unwrap();
    shootout_engine::run(&plan, &Control::new()).unwrap()
}

/// Each kind's requests as the server counted them, by kind name.
fn served(lines: &BTreeMap<String, u64>) -> BTreeMap<&'static str, u64> {
    let mut by_kind = BTreeMap::new();
    for (line, n) in lines {
        let name = match line.split(' ').nth(1).unwrap_or("") {
            "/db" => "db",
            p if p.starts_with("/queries?queries=") => "queries",
            "/updates?queries=5" if line.starts_with("POST ") => "update",
            other => panic!("unexpected request {other:?} in {line:?}"),
        };
        *by_kind.entry(name).or_insert(0) += n;
    }
    by_kind
}

#[test]
fn a_weighted_mix_is_drawn_counted_and_checked_per_kind() {
    let server = TestServer::start(|_| Action::Reply(ok("fine")));
    // Issue #22's figures: 70/20/10 over exactly 20000 requests.
    let n = 20_000;
    let report = run(&server, n, 7);
    let s = &report.summary;
    assert_accounted(s);
    assert_eq!(s.requests.sent, n, "-n is exact in total");
    assert_eq!(s.requests.completed, n);
    assert_eq!((s.method.as_str(), s.seed), ("mix", Some(7)));
    let served = served(&server.lines());
    assert_eq!(s.routes.len(), 3);
    for route in &s.routes {
        let r = &route.requests;
        assert_eq!(
            r.sent,
            r.completed + r.cut + route.errors.total(),
            "{route:?}"
        );
        assert_eq!(
            Some(&r.completed),
            served.get(route.name.as_str()),
            "{route:?}"
        );
        let p = f64::from(route.weight) / 100.0;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let off = (r.sent as f64 - n as f64 * p).abs();
        assert!(
            off < 4.0 * sd,
            "{}: {} sent, {} expected",
            route.name,
            r.sent,
            n as f64 * p
        );
        assert!(route.latency_ms.max > 0.0 && route.latency_ms.p50 <= route.latency_ms.max);
    }
    let total: u64 = s.routes.iter().map(|r| r.requests.sent).sum();
    assert_eq!(total, n);
    let values: Vec<u64> = server
        .lines()
        .keys()
        .filter_map(|l| {
            l.split(' ')
                .nth(1)?
                .strip_prefix("/queries?queries=")?
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(
        values.len(),
        20,
        "all of 1..=20 drawn and nothing else: {values:?}"
    );
    assert!(values.iter().all(|v| (1..=20).contains(v)));
}

#[test]
fn the_same_seed_gives_the_same_counts() {
    let server = TestServer::start(|_| Action::Reply(ok("fine")));
    let counts = |seed| {
        let r = run(&server, 1000, seed);
        r.summary
            .routes
            .iter()
            .map(|r| r.requests.sent)
            .collect::<Vec<_>>()
    };
    let a = counts(99);
    assert_eq!(a, counts(99));
    assert_eq!(a.iter().sum::<u64>(), 1000);
}

#[test]
fn kinds_fail_on_their_own() {
    // Every request is answered with a close: each kind's errors are its own.
    let broken = TestServer::start(|_| Action::Close);
    let r = run(&broken, 200, 3);
    assert_accounted(&r.summary);
    assert!(r.summary.routes.iter().all(|k| k.requests.completed == 0));
    assert_eq!(
        r.summary
            .routes
            .iter()
            .map(|k| k.errors.total())
            .sum::<u64>(),
        r.summary.errors.total()
    );
    assert!(r
        .summary
        .routes
        .iter()
        .all(|k| k.errors.total() == k.requests.sent));
}

/// A Poisson open loop runs through the engine and says so. (Its gaps are
/// held to the exponential law at the pacer, `pacer_poisson_tests`: gaps
/// seen by a server on a shared machine measure its scheduling as much.)
#[test]
fn a_poisson_open_loop_offers_its_rate() {
    let server = TestServer::start(|_| Action::Reply(ok("fine")));
    let load = Load::Open {
        rate: 500.0,
        connections: 32,
    };
    let workload = Workload::new(load, duration(Duration::from_secs(4))).unwrap();
    let plan = Plan::builder(Endpoint::parse(&server.url("/")).unwrap(), workload)
        .threads(2)
        .arrival(Arrival::Poisson)
        .seed(5)
        .build()
        .unwrap();
    let r = shootout_engine::run(&plan, &Control::new()).unwrap();
    let s = &r.summary;
    assert_accounted(s);
    assert_eq!((s.arrival, s.seed), (Some(Arrival::Poisson), Some(5)));
    // 2000 due in 4 s; a Poisson count has sd 45: within 5 sd.
    let due = s.requests.sent + s.lag.as_ref().map_or(0, |l| l.unsent);
    assert!(due.abs_diff(2000) < 225, "{:?}", s.requests);
    assert!(server.requests() >= s.requests.completed);
}

/// A kind's own checks apply to its responses alone; the others keep the
/// run's (none, or a body), whichever kind a connection carried before.
#[test]
fn a_kind_checks_its_own_responses() {
    use shootout_engine::{BodyMatch, Expect, StatusMatch};
    let server = TestServer::start(|_| Action::Reply(ok("fine")));
    for run_expect in [
        Expect::default(),
        Expect {
            body: Some(BodyMatch::Exact(b"fine".to_vec())),
            ..Expect::default()
        },
    ] {
        let mut kinds = vec![
            kind("db", 70, "GET", "/db"),
            kind("update", 40, "POST", "/updates"),
        ];
        kinds[1].expect = Some(Expect {
            status: vec![StatusMatch::Code(201)],
            ..Expect::default()
        });
        let workload = Workload::new(Load::Closed { connections: 4 }, requests(600)).unwrap();
        let plan = Plan::builder(Endpoint::parse(&server.url("/")).unwrap(), workload)
            .threads(2)
            .mix(Some(Mix::new(kinds).unwrap()))
            .expect(run_expect.clone())
            .build()
            .unwrap();
        let s = shootout_engine::run(&plan, &Control::new())
            .unwrap()
            .summary;
        assert_accounted(&s);
        let (db, update) = (&s.routes[0], &s.routes[1]);
        assert_eq!(
            db.requests.completed, db.requests.sent,
            "{run_expect:?}: {db:?}"
        );
        assert_eq!(update.errors.mismatch, update.requests.sent, "{update:?}");
        assert_eq!(s.errors.mismatch, update.requests.sent);
        let m = s.first_mismatch.unwrap();
        assert_eq!(m.reason, "status 200, expected 201");
    }
}
