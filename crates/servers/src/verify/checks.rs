//! The HTTP checks of SPEC.md "What the verifier checks", run against any
//! address: every route's status, media type, framing and exact body; the
//! bcrypt hash; the minimum durations of timed and wait_time; concurrent
//! wait_time requests; 404 on an unknown path; 4xx on malformed JSON or a
//! missing payload; and the Framing section's keep-alive and
//! `Connection: close`; TechEmpower's header rules on every route's answer
//! (`headers`). The database routes' checks are in `db`, called from here.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::db;
use super::failure::Failure;
use super::headers;
use super::model::{Aspect, Check, Column};
use super::payload::random_payload;
use super::response::{basics, shown, status_is, verdict};
use crate::database::DatabaseAccess;
use crate::http::{self, Conn, Request, Response};
use shootout_contract::spec::{self, Answer, Method, ScenarioName};

const CONCURRENT: usize = 10;

/// Settings for `check_server`.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// From the manifest: how many requests the server handles at once.
    pub sync_workers: Option<u32>,
    /// Per-request socket timeout.
    pub timeout: Duration,
    /// The database the server was given; `None` skips the database checks.
    pub database: Option<DatabaseAccess>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            sync_workers: None,
            timeout: Duration::from_secs(10),
            database: None,
        }
    }
}

/// What a route's body must be.
enum Expect {
    Exact(String),
    /// `{"payload":"<hash>"}` where hash is bcrypt of this payload at cost 10.
    Bcrypt(String),
}

/// One route to check.
struct Route<'a> {
    name: ScenarioName,
    request: Request<'a>,
    body: Expect,
    min: Option<Duration>,
}

/// Runs every HTTP check against the server at `addr`. The concurrency
/// check runs last: against a server that serialises requests it leaves a
/// queue behind that would slow the checks after it. The `Date` freshness
/// check asks first and again before it, so its 3 s wait mostly overlaps.
pub fn check_server(addr: SocketAddr, opts: &CheckOptions) -> Vec<Check> {
    let first_date = headers::first_date(addr, opts.timeout);
    let mut checks = Vec::new();
    for spec_route in spec::ROUTES.iter().filter(|r| !r.needs_database()) {
        let payload = random_payload();
        let request_body = spec::request_body(&payload);
        let (request, body) = match spec_route.method {
            Method::Get => (Request::get(spec_route.path), None),
            Method::Post => (
                Request::post_json(spec_route.path, request_body.as_bytes()),
                Some(payload.clone()),
            ),
        };
        let body = match spec_route.answer {
            Answer::Bcrypt => Expect::Bcrypt(payload),
            _ => Expect::Exact(
                spec_route
                    .expected_body(body.as_deref().unwrap_or(""))
                    .unwrap_or_default(),
            ),
        };
        let route = Route {
            name: spec_route.name,
            request,
            body,
            min: spec_route.min_duration,
        };
        checks.extend(check_route(addr, &route, opts.timeout));
    }
    checks.extend(check_not_found(addr, opts.timeout));
    checks.extend(check_bad_input(addr, opts.timeout));
    checks.push(check_keep_alive(addr, opts.timeout));
    checks.push(check_connection_close(addr));
    checks.extend(db::check_database(
        addr,
        opts.database.as_ref(),
        opts.timeout,
    ));
    checks.push(headers::check_date_cached(addr, opts.timeout, &first_date));
    checks.push(check_concurrency(addr, opts.sync_workers));
    checks
}

fn check_route(addr: SocketAddr, route: &Route<'_>, timeout: Duration) -> Vec<Check> {
    let (method, path) = (route.request.method, route.request.path);
    route_checks(addr, route, timeout)
        .into_iter()
        .map(|c| c.on(method, path))
        .collect()
}

fn route_checks(addr: SocketAddr, route: &Route<'_>, timeout: Duration) -> Vec<Check> {
    let col = Column::Route(route.name);
    let resp = match http::send(addr, &route.request, timeout) {
        Ok(resp) => resp,
        Err(e) => {
            return vec![Check::fail(
                col,
                Aspect::Request,
                Failure::Transport(e.to_string()),
            )]
        }
    };
    let mut checks = basics(route.name, &resp);
    match &route.body {
        Expect::Exact(expected) => {
            checks.push(verdict(col, Aspect::Body, body_is(&resp, expected)))
        }
        Expect::Bcrypt(payload) => {
            let (body, hash) = bcrypt_checks(&resp, payload);
            checks.push(verdict(col, Aspect::Body, body));
            checks.push(verdict(col, Aspect::Hash, hash));
        }
    }
    if let Some(min) = route.min {
        let took = resp.elapsed;
        checks.push(verdict(col, Aspect::Duration, at_least(took, min)));
    }
    checks
}

fn body_is(resp: &Response, expected: &str) -> Result<(), Failure> {
    match resp.body == expected.as_bytes() {
        true => Ok(()),
        false => Err(Failure::Body {
            expected: expected.to_owned(),
            got: shown(&resp.body),
        }),
    }
}

/// The bcrypt body must be exactly `{"payload":"<hash>"}` (compact), and the
/// hash must be cost 10 and verify against the payload that was sent.
fn bcrypt_checks(resp: &Response, payload: &str) -> (Result<(), Failure>, Result<(), Failure>) {
    let parsed: Option<String> = serde_json::from_slice::<serde_json::Value>(&resp.body)
        .ok()
        .and_then(|v| v.get("payload")?.as_str().map(str::to_owned));
    let Some(hash) = parsed else {
        let expected = r#"{"payload":"<bcrypt hash>"}"#.to_owned();
        let body = Err(Failure::Body {
            expected,
            got: shown(&resp.body),
        });
        return (
            body,
            Err(Failure::BadHash("no payload string in the body".into())),
        );
    };
    let expected = format!(r#"{{"payload":"{hash}"}}"#);
    let body = body_is(resp, &expected);
    (body, hash_ok(&hash, payload))
}

fn hash_ok(hash: &str, payload: &str) -> Result<(), Failure> {
    let cost = format!("${:02}$", spec::BCRYPT_COST);
    let versioned = ["$2a", "$2b", "$2y"].iter().any(|v| hash.starts_with(v));
    if !(versioned && hash.get(3..7) == Some(cost.as_str())) {
        return Err(Failure::WrongCost(hash.to_owned()));
    }
    match bcrypt::verify(payload, hash) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Failure::BadHash(format!(
            "{hash:?} is not a hash of {payload:?}"
        ))),
        Err(e) => Err(Failure::BadHash(format!("{hash:?}: {e}"))),
    }
}

fn at_least(took: Duration, min: Duration) -> Result<(), Failure> {
    match took >= min {
        true => Ok(()),
        false => Err(Failure::TooFast { min, took }),
    }
}

/// An unknown path answers 404, with `Server` and `Date` like every other
/// answer (SPEC.md: 404s included).
fn check_not_found(addr: SocketAddr, timeout: Duration) -> Vec<Check> {
    let path = format!("/no-such-route-{}", random_payload());
    match http::send(addr, &Request::get(&path), timeout) {
        Ok(resp) => {
            let mut checks = vec![verdict(
                Column::NotFound,
                Aspect::Status,
                status_is(&resp, 404),
            )];
            checks.extend(headers::general(Column::NotFound, &resp));
            checks
        }
        Err(e) => vec![Check::fail(
            Column::NotFound,
            Aspect::Status,
            Failure::Transport(e.to_string()),
        )],
    }
}

/// SPEC.md Errors: a POST to `/test/*` whose body is not JSON, or lacks a
/// string `payload`, answers 4xx (never 5xx, never a hang).
fn check_bad_input(addr: SocketAddr, timeout: Duration) -> Vec<Check> {
    let bodies: [(Aspect, &str, &[u8]); 3] = [
        (Aspect::Malformed, "malformed JSON", br#"{"payload": "#),
        (Aspect::NoPayload, "no payload", br#"{"message":"hi"}"#),
        (Aspect::NoPayload, "a numeric payload", br#"{"payload":42}"#),
    ];
    let mut checks = Vec::new();
    let posts = spec::ROUTES.iter().filter(|r| r.method == Method::Post);
    for path in posts.map(|r| r.path) {
        for (aspect, what, body) in bodies {
            let request = format!("POST {path} with {what}");
            let result = match http::send(addr, &Request::post_json(path, body), timeout) {
                Ok(resp) if (400..500).contains(&resp.status) => Ok(()),
                Ok(resp) => Err(Failure::BadInput {
                    request,
                    got: resp.status,
                }),
                Err(e) => Err(Failure::Transport(format!("{request}: {e}"))),
            };
            checks.push(verdict(Column::BadJson, aspect, result));
        }
    }
    checks
}

/// Two requests on one connection must both be answered (HTTP/1.1 keeps
/// connections open by default; the load generator relies on it). A server
/// may refuse keep-alive only by saying `Connection: close` (gunicorn's sync
/// workers do): that passes with a note, while a silent close fails. Any
/// complete response counts: the route checks judge status and body.
fn check_keep_alive(addr: SocketAddr, timeout: Duration) -> Check {
    let mut note = None;
    let result = Conn::open(addr, timeout)
        .map_err(|e| Failure::Transport(e.to_string()))
        .and_then(|mut conn| {
            for n in 1..=2 {
                let resp = conn
                    .send(&Request::get("/plaintext"))
                    .map_err(|e| Failure::NoKeepAlive(format!("request {n} of 2: {e}")))?;
                if resp
                    .header("connection")
                    .is_some_and(|v| v.eq_ignore_ascii_case("close"))
                {
                    note = Some("answers Connection: close: no keep-alive".to_owned());
                    break;
                }
            }
            Ok(())
        });
    Check {
        note,
        ..verdict(Column::KeepAlive, Aspect::Reuse, result)
    }
}

/// After answering a `Connection: close` request the server must close.
fn check_connection_close(addr: SocketAddr) -> Check {
    // Short: a compliant server closes at once, and a failing one costs
    // this long.
    let wait = Duration::from_secs(2);
    let result = Conn::open(addr, wait)
        .and_then(|mut conn| {
            conn.send(&Request::get("/plaintext").closing())
                .map(|_| conn)
        })
        .map_err(|e| Failure::Transport(e.to_string()))
        .and_then(|mut conn| match conn.closed_by_peer() {
            Ok(true) => Ok(()),
            Ok(false) => Err(Failure::IgnoresClose(
                "more bytes after the response".into(),
            )),
            Err(_) => Err(Failure::IgnoresClose(format!(
                "still open {wait:?} after the response"
            ))),
        });
    verdict(Column::KeepAlive, Aspect::Close, result)
}

/// 10 concurrent wait_time requests must finish in under 2 s, or
/// ceil(10 / N) + 1 s for a server with N blocking workers. Stragglers are
/// not awaited past the limit: their threads finish on their own.
fn check_concurrency(addr: SocketAddr, sync_workers: Option<u32>) -> Check {
    let limit = concurrency_limit(sync_workers);
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    for _ in 0..CONCURRENT {
        let tx = tx.clone();
        let timeout = limit + Duration::from_secs(2);
        std::thread::spawn(move || tx.send(http::send(addr, &Request::get("/wait_time"), timeout)));
    }
    let deadline = start + limit;
    let mut completed = 0;
    while completed < CONCURRENT {
        let left = deadline.saturating_duration_since(Instant::now());
        let result = match rx.recv_timeout(left) {
            Ok(Ok(resp)) if resp.status == 200 => Ok(()),
            Ok(Ok(resp)) => Err(Failure::Status {
                expected: "200",
                got: resp.status,
            }),
            Ok(Err(e)) => Err(Failure::Transport(e.to_string())),
            Err(_) => break,
        };
        if let Err(failure) = result {
            return verdict(Column::Concurrency, Aspect::Status, Err(failure));
        }
        completed += 1;
    }
    let took = start.elapsed();
    let result = match completed == CONCURRENT && took < limit {
        true => Ok(()),
        false => Err(Failure::TooSlow {
            limit,
            took,
            completed,
            sent: CONCURRENT,
        }),
    };
    verdict(Column::Concurrency, Aspect::Duration, result)
}

fn concurrency_limit(sync_workers: Option<u32>) -> Duration {
    match sync_workers {
        None => Duration::from_secs(2),
        Some(n) => {
            let n = n.max(1) as u64;
            Duration::from_secs((CONCURRENT as u64).div_ceil(n) + 1)
        }
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn concurrency_limits_follow_the_spec() {
        assert_eq!(concurrency_limit(None), Duration::from_secs(2));
        assert_eq!(concurrency_limit(Some(1)), Duration::from_secs(11));
        assert_eq!(concurrency_limit(Some(3)), Duration::from_secs(5));
        assert_eq!(concurrency_limit(Some(10)), Duration::from_secs(2));
    }

    #[test]
    fn hash_checks() {
        let good = bcrypt::hash("abc", 10).unwrap();
        assert_eq!(hash_ok(&good, "abc"), Ok(()));
        assert!(matches!(hash_ok(&good, "abd"), Err(Failure::BadHash(_))));
        let cheap = bcrypt::hash("abc", 4).unwrap();
        assert!(matches!(hash_ok(&cheap, "abc"), Err(Failure::WrongCost(_))));
        assert!(matches!(
            hash_ok("$2b$10$garbage", "abc"),
            Err(Failure::BadHash(_))
        ));
    }
}
