//! Proves each verifier check can fail: every test serves a deliberately
//! wrong server in-process and asserts that exactly the expected checks fail
//! with the expected kind of failure, while everything else still passes.

use std::net::SocketAddr;
use std::time::Duration;

use super::fake::{correct, serve, DateHeader, Keep, Reply, Req, Wire};
use super::*;
use crate::tempdir;
use shootout_contract::spec::ScenarioName;

fn run(addr: SocketAddr) -> Vec<Check> {
    check_server(
        addr,
        &CheckOptions {
            timeout: Duration::from_secs(5),
            ..Default::default()
        },
    )
}

/// The failed checks as (column, aspect, failure).
fn failures(checks: &[Check]) -> Vec<(Column, Aspect, Failure)> {
    checks
        .iter()
        .filter_map(|c| c.result.clone().err().map(|f| (c.column, c.aspect, f)))
        .collect()
}

/// Serves `correct` except where `patch` returns a reply.
fn patched(patch: impl Fn(&Req) -> Option<Reply> + Send + Sync + 'static) -> SocketAddr {
    serve(move |req| patch(req).unwrap_or_else(|| correct(req)), false)
}

/// Asserts exactly one check failed, at `column`/`aspect`, and returns why.
fn only_failure(checks: &[Check], column: Column, aspect: Aspect) -> Failure {
    let failed = failures(checks);
    assert_eq!(failed.len(), 1, "expected one failure, got {failed:#?}");
    let (c, a, f) = failed.into_iter().next().unwrap();
    assert_eq!((c, a), (column, aspect), "{f}");
    f
}

#[test]
fn correct_server_passes_everything() {
    let checks = run(serve(correct, false));
    assert_eq!(failures(&checks), vec![]);
    let columns: std::collections::BTreeSet<_> = checks.iter().map(|c| c.column).collect();
    // Ready, Cpus, Tls, Ws and Shutdown need a process of our own:
    // verify_target (Tls: tests/verify_tls.rs; Ws: ws_tests.rs).
    for column in Column::ALL.iter().filter(|c| {
        !matches!(
            c,
            Column::Ready | Column::Cpus | Column::Tls | Column::Ws | Column::Shutdown
        )
    }) {
        assert!(columns.contains(column), "{column:?} never checked");
    }
}

#[test]
fn wrong_body_fails_body() {
    let addr =
        patched(|r| (r.path == "/plaintext").then(|| Reply::new(200, "text/plain", "Hello World")));
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Plaintext),
        Aspect::Body,
    );
    assert_eq!(
        f,
        Failure::Body {
            expected: "Hello, World!".into(),
            got: "Hello World".into()
        }
    );
}

#[test]
fn pretty_json_fails_body() {
    let addr =
        patched(|r| (r.path == "/json").then(|| Reply::json(r#"{"message": "Hello, World!"}"#)));
    assert!(matches!(
        only_failure(&run(addr), Column::Route(ScenarioName::Json), Aspect::Body),
        Failure::Body { .. }
    ));
}

#[test]
fn wrong_content_type_fails_content_type() {
    let addr = patched(|r| {
        (r.path == "/json").then(|| Reply::new(200, "text/html", r#"{"message":"Hello, World!"}"#))
    });
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Json),
        Aspect::ContentType,
    );
    assert_eq!(
        f,
        Failure::ContentType {
            expected: "application/json",
            got: Some("text/html".into())
        }
    );
}

#[test]
fn missing_content_type_fails_content_type() {
    let addr = patched(|r| {
        (r.path == "/plaintext").then(|| Reply {
            content_type: None,
            ..Reply::new(200, "x", "Hello, World!")
        })
    });
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Plaintext),
        Aspect::ContentType,
    );
    assert_eq!(
        f,
        Failure::ContentType {
            expected: "text/plain",
            got: None
        }
    );
}

#[test]
fn missing_framing_headers_fail_framing() {
    let addr = patched(|r| {
        (r.path == "/file_read").then(|| Reply {
            wire: Wire::Unframed,
            ..Reply::json(r#"{"message":"file_read","rows":418}"#)
        })
    });
    assert_eq!(
        only_failure(
            &run(addr),
            Column::Route(ScenarioName::FileRead),
            Aspect::Framing
        ),
        Failure::NoFraming
    );
}

/// Every route the checks ask for without a database, by column, and the
/// 404 of an unknown path.
fn route_columns() -> std::collections::BTreeSet<Column> {
    shootout_contract::spec::ROUTES
        .iter()
        .filter(|r| !r.needs_database())
        .map(|r| Column::Route(r.name))
        .chain([Column::NotFound])
        .collect()
}

/// Asserts that the only failures are one per route column at `aspect`,
/// each worded `wording`.
fn fails_on_every_route(checks: &[Check], aspect: Aspect, wording: &str) {
    let failed = failures(checks);
    let columns: std::collections::BTreeSet<_> = failed.iter().map(|(c, _, _)| *c).collect();
    assert_eq!(columns, route_columns(), "{failed:#?}");
    assert_eq!(failed.len(), columns.len(), "{failed:#?}");
    for (_, a, f) in failed {
        assert_eq!((a, f.to_string()), (aspect, wording.to_owned()));
    }
}

#[test]
fn a_server_without_server_fails_every_route_in_techempowers_words() {
    let addr = serve(
        |r| Reply {
            server: false,
            ..correct(r)
        },
        false,
    );
    let wording = "Required response header missing: Server";
    fails_on_every_route(&run(addr), Aspect::Server, wording);
}

#[test]
fn a_server_without_date_fails_every_route_in_techempowers_words() {
    let addr = serve(
        |r| Reply {
            date: DateHeader::Missing,
            ..correct(r)
        },
        false,
    );
    let wording = "Required response header missing: Date";
    fails_on_every_route(&run(addr), Aspect::Date, wording);
}

#[test]
fn a_date_cached_for_good_fails_cached_date() {
    const DATE: &str = "Wed, 21 Oct 2015 07:28:00 GMT";
    let addr = serve(
        |r| Reply {
            date: DateHeader::Frozen(DATE),
            ..correct(r)
        },
        false,
    );
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Plaintext),
        Aspect::CachedDate,
    );
    assert_eq!(
        f.to_string(),
        format!("Invalid Cached Date. Found \"{DATE}\" and \"{DATE}\" on separate requests.")
    );
}

#[test]
fn a_date_techempower_cannot_parse_is_a_note() {
    // TechEmpower warns about a Date that strptime cannot read.
    let check = |date: &str| {
        let resp = crate::http::Response {
            status: 200,
            headers: vec![("Server".into(), "x".into()), ("Date".into(), date.into())],
            body: vec![],
            framing: crate::http::Framing::ContentLength(0),
            elapsed: Duration::ZERO,
        };
        super::headers::general(Column::Route(ScenarioName::Json), &resp)
    };
    let odd = check("2026-11-25T01:54:06Z");
    assert!(odd.iter().all(|c| c.result.is_ok()));
    let note = odd.iter().find_map(|c| c.note.clone()).unwrap();
    assert_eq!(
        note,
        "Invalid Date header, found \"2026-11-25T01:54:06Z\", did not match \"%a, %d %b %Y %H:%M:%S %Z\"."
    );
    assert!(check("Wed, 25 Nov 2026 01:54:06 GMT")
        .iter()
        .all(|c| c.result.is_ok() && c.note.is_none()));
}

#[test]
fn a_charset_techempower_does_not_allow_fails_content_type() {
    let addr = patched(|r| {
        (r.path == "/json").then(|| {
            Reply::new(
                200,
                "application/json; charset=latin1",
                r#"{"message":"Hello, World!"}"#,
            )
        })
    });
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Json),
        Aspect::ContentType,
    );
    assert_eq!(
        f.to_string(),
        "Invalid Content-Type header, found \"application/json; charset=latin1\", did not match \"^application/json(; ?charset=(UTF|utf)-8)?$\"."
    );
}

#[test]
fn serial_server_fails_concurrency() {
    let checks = run(serve(correct, true));
    let f = only_failure(&checks, Column::Concurrency, Aspect::Duration);
    let Failure::TooSlow {
        limit,
        completed,
        sent,
        ..
    } = f
    else {
        panic!("{f:?}")
    };
    assert_eq!((limit, sent), (Duration::from_secs(2), 10));
    assert!(completed < 10);
}

#[test]
fn serial_server_passes_with_sync_workers_one() {
    // A single blocking worker is honest when declared: ceil(10/1)+1 = 11 s.
    let opts = CheckOptions {
        sync_workers: Some(1),
        timeout: Duration::from_secs(5),
        database: None,
    };
    let addr = serve(correct, true);
    assert_eq!(failures(&check_server(addr, &opts)), vec![]);
}

#[test]
fn cheap_bcrypt_fails_hash_cost() {
    let addr = patched(|r| {
        let p = r.payload()?;
        (r.path == "/test/bcrypt").then(|| {
            Reply::json(format!(
                r#"{{"payload":"{}"}}"#,
                bcrypt::hash(p, 4).unwrap()
            ))
        })
    });
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Bcrypt),
        Aspect::Hash,
    );
    assert!(
        matches!(&f, Failure::WrongCost(h) if h.starts_with("$2b$04$")),
        "{f:?}"
    );
}

#[test]
fn bcrypt_of_another_string_fails_hash() {
    let addr = patched(|r| {
        (r.path == "/test/bcrypt" && r.payload().is_some()).then(|| {
            Reply::json(format!(
                r#"{{"payload":"{}"}}"#,
                bcrypt::hash("canned", 10).unwrap()
            ))
        })
    });
    assert!(matches!(
        only_failure(
            &run(addr),
            Column::Route(ScenarioName::Bcrypt),
            Aspect::Hash
        ),
        Failure::BadHash(_)
    ));
}

#[test]
fn instant_timed_fails_duration() {
    let addr = patched(|r| (r.path == "/test/timed").then(|| correct(r).delayed(Duration::ZERO)));
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Timed),
        Aspect::Duration,
    );
    assert!(
        matches!(f, Failure::TooFast { min, .. } if min == Duration::from_millis(20)),
        "{f:?}"
    );
}

#[test]
fn instant_wait_time_fails_duration() {
    let addr = patched(|r| (r.path == "/wait_time").then(|| correct(r).delayed(Duration::ZERO)));
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::WaitTime),
        Aspect::Duration,
    );
    assert!(
        matches!(f, Failure::TooFast { min, .. } if min == Duration::from_secs(1)),
        "{f:?}"
    );
}

#[test]
fn canned_echo_fails_body() {
    let addr = patched(|r| {
        (r.path == "/test/simple" && r.payload().is_some())
            .then(|| Reply::json(r#"{"payload":"Hello, abcdefghijklmnop"}"#))
    });
    assert!(matches!(
        only_failure(
            &run(addr),
            Column::Route(ScenarioName::Simple),
            Aspect::Body
        ),
        Failure::Body { .. }
    ));
}

#[test]
fn server_error_on_malformed_json_fails_malformed() {
    let addr = patched(|r| {
        let malformed = serde_json::from_slice::<serde_json::Value>(&r.body).is_err();
        (r.path == "/test/simple" && malformed).then(|| Reply::new(500, "text/plain", "boom"))
    });
    let f = only_failure(&run(addr), Column::BadJson, Aspect::Malformed);
    let request = "POST /test/simple with malformed JSON".to_owned();
    assert_eq!(f, Failure::BadInput { request, got: 500 });
}

#[test]
fn server_error_on_missing_payload_fails_no_payload() {
    // Like a handler that indexes body["payload"] and crashes on KeyError.
    let addr = patched(|r| {
        let missing = serde_json::from_slice::<serde_json::Value>(&r.body)
            .is_ok_and(|v| v.get("payload").is_none());
        (r.path == "/test/bcrypt" && missing).then(|| Reply::new(500, "text/plain", "KeyError"))
    });
    let f = only_failure(&run(addr), Column::BadJson, Aspect::NoPayload);
    let request = "POST /test/bcrypt with no payload".to_owned();
    assert_eq!(f, Failure::BadInput { request, got: 500 });
}

#[test]
fn unknown_path_answering_200_fails_not_found() {
    let addr = patched(|r| {
        r.path
            .starts_with("/no-such")
            .then(|| Reply::new(200, "text/plain", "hi"))
    });
    let f = only_failure(&run(addr), Column::NotFound, Aspect::Status);
    assert_eq!(
        f,
        Failure::Status {
            expected: "404",
            got: 200
        }
    );
}

#[test]
fn wrong_status_fails_status() {
    let addr = patched(|r| {
        (r.path == "/plaintext").then(|| Reply::new(201, "text/plain", "Hello, World!"))
    });
    let f = only_failure(
        &run(addr),
        Column::Route(ScenarioName::Plaintext),
        Aspect::Status,
    );
    assert_eq!(
        f,
        Failure::Status {
            expected: "200",
            got: 201
        }
    );
}

#[test]
fn announced_close_passes_keep_alive_with_a_note() {
    let addr = serve(
        |r| Reply {
            keep: Keep::AlwaysClose,
            ..correct(r)
        },
        false,
    );
    let checks = run(addr);
    assert_eq!(failures(&checks), vec![]);
    let noted: Vec<_> = checks
        .iter()
        .filter(|c| c.note.is_some() && !c.is_skipped())
        .map(|c| (c.column, c.aspect))
        .collect();
    assert_eq!(noted, vec![(Column::KeepAlive, Aspect::Reuse)]);
}

#[test]
fn silently_closing_every_connection_fails_keep_alive() {
    let addr = serve(
        |r| Reply {
            keep: Keep::SilentClose,
            ..correct(r)
        },
        false,
    );
    let f = only_failure(&run(addr), Column::KeepAlive, Aspect::Reuse);
    assert!(
        matches!(&f, Failure::NoKeepAlive(why) if why.contains("request 2 of 2")),
        "{f:?}"
    );
}

#[test]
fn ignoring_connection_close_fails_close() {
    let addr = serve(
        |r| Reply {
            keep: Keep::IgnoreClose,
            ..correct(r)
        },
        false,
    );
    let f = only_failure(&run(addr), Column::KeepAlive, Aspect::Close);
    assert!(matches!(f, Failure::IgnoresClose(_)), "{f:?}");
}

#[test]
fn nothing_listening_fails_every_route_as_transport() {
    let port = crate::process::free_port().unwrap();
    let checks = run(SocketAddr::from(([127, 0, 0, 1], port)));
    assert!(
        checks
            .iter()
            .filter(|c| !c.is_skipped())
            .all(|c| matches!(c.result, Err(Failure::Transport(_)))),
        "{checks:#?}"
    );
}

#[test]
fn verify_target_reports_a_server_that_dies_as_data() {
    let root = tempdir::Dir::new();
    let dir = root.path().join("dies");
    std::fs::create_dir_all(&dir).unwrap();
    let target = Target {
        ready: "/plaintext".into(),
        root: root.path().to_path_buf(),
        ..Target::command("dies", &dir, "echo cannot bind >&2; exit 1")
    };
    let report = verify_target(&target, &VerifyOptions::default());
    assert!(!report.passed());
    assert_eq!(report.column(Column::Ready), Some(false));
    assert_eq!(report.column(Column::Route(ScenarioName::Plaintext)), None);
    assert_eq!(report.column(Column::Shutdown), Some(true));
    let (_, why) = report.failures().next().unwrap();
    assert!(why.to_string().contains("cannot bind"), "{why}");
}

#[test]
fn output_while_serving_is_a_note_not_a_failure() {
    assert_eq!(quiet_check(0).note, None);
    let noisy = quiet_check(120);
    assert_eq!(noisy.result, Ok(()));
    assert!(noisy.note.is_some_and(|n| n.contains("120 bytes")));
}

/// The run's expectations (`Route::expect`) never call an answer wrong that
/// the verifier accepts: the verifier's correct fake, over real HTTP, meets
/// every non-database route's expectation, and a database route answering
/// 503 (no database) does not.
#[test]
fn answers_the_verifier_accepts_meet_the_runs_expectations() {
    use crate::http::{send, Request};
    let addr = serve(correct, false);
    for route in shootout_contract::spec::ROUTES.iter() {
        let body = match route.method {
            shootout_contract::spec::Method::Get => Vec::new(),
            shootout_contract::spec::Method::Post => {
                shootout_contract::spec::request_body(&random_payload()).into_bytes()
            }
        };
        let request = match body.is_empty() {
            true => Request::get(route.path),
            false => Request::post_json(route.path, &body),
        };
        let resp = send(addr, &request, Duration::from_secs(5)).expect("fake answers");
        let ct = resp.header("content-type").map(str::as_bytes);
        let verdict = route.expect(&body).check(resp.status, ct, &resp.body);
        assert_eq!(
            verdict.is_ok(),
            !route.needs_database(),
            "{}: {verdict:?}",
            route.name
        );
    }
}
