//! Every route's expectation accepts a correct answer (written out here from
//! SPEC.md, not derived from the table under test) and rejects a wrong
//! status, a wrong media type and a wrong body, so each rule can fail.

use super::*;
use crate::spec::{request_body, DEFAULT_PAYLOAD, ROUTES};

const JSON_CT: &[u8] = b"application/json; charset=utf-8";
const HASH: &str = "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
const FORTUNES: &str = "<!DOCTYPE html>\n<html><head><title>Fortunes</title></head><body><table>\
    <tr><th>id</th><th>message</th></tr>\n<tr><td>11</td><td>&lt;script&gt;</td></tr>\n\
    </table></body></html>\n";

/// A correct answer for each scenario to its default request.
fn correct(name: ScenarioName) -> (&'static [u8], String) {
    let hash_body = format!(r#"{{"payload":"{HASH}"}}"#);
    let rows = r#"[{"id":1,"randomNumber":2},{"id":3,"randomNumber":4}]"#;
    match name {
        ScenarioName::Plaintext => (b"text/plain", "Hello, World!".into()),
        ScenarioName::Json => (JSON_CT, r#"{"message":"Hello, World!"}"#.into()),
        ScenarioName::FileRead => (JSON_CT, r#"{"message":"file_read","rows":418}"#.into()),
        ScenarioName::WaitTime => (JSON_CT, r#"{"message":"time_sleep"}"#.into()),
        ScenarioName::Simple | ScenarioName::Timed => {
            (JSON_CT, r#"{"payload":"Hello, shootout"}"#.into())
        }
        ScenarioName::Bcrypt => (JSON_CT, hash_body),
        ScenarioName::Db => (b"application/json", r#"{"id":42,"randomNumber":7}"#.into()),
        ScenarioName::Queries | ScenarioName::Updates => (JSON_CT, rows.into()),
        ScenarioName::Fortunes => (b"text/html; charset=utf-8", FORTUNES.into()),
    }
}

/// A body that is close to right but wrong, per scenario.
fn wrong_body(name: ScenarioName) -> String {
    match name {
        ScenarioName::Plaintext => "Hello, World!\n".into(),
        ScenarioName::Json => r#"{"message": "Hello, World!"}"#.into(),
        ScenarioName::FileRead => r#"{"message":"file_read","rows":417}"#.into(),
        ScenarioName::WaitTime => r#"{"message":"time_sleep""#.into(),
        ScenarioName::Simple | ScenarioName::Timed => r#"{"payload":"Hello, shootou"}"#.into(),
        ScenarioName::Bcrypt => r#"{"payload":"shootout"}"#.into(),
        ScenarioName::Db => r#"[{"id":42,"randomNumber":7}]"#.into(),
        ScenarioName::Queries | ScenarioName::Updates => r#"{"id":1,"randomNumber":2}"#.into(),
        ScenarioName::Fortunes => "<!DOCTYPE html><html><body><table>".into(),
    }
}

#[test]
fn every_route_accepts_a_correct_answer_and_rejects_wrong_ones() {
    for route in &ROUTES {
        let name = route.name;
        let e = route.expect(&route.default_body());
        let (ct, body) = correct(name);
        assert_eq!(e.check(200, Some(ct), body.as_bytes()), Ok(()), "{name}");
        let status = e.check(503, Some(ct), body.as_bytes()).unwrap_err();
        assert!(status.reason.contains("503"), "{name}: {status:?}");
        let media = e.check(200, Some(b"text/x-other"), body.as_bytes());
        assert_eq!(media.unwrap_err().reason, "media type differs", "{name}");
        assert!(
            e.check(200, None, body.as_bytes()).is_err(),
            "{name}: no type"
        );
        let wrong = wrong_body(name);
        let err = e.check(200, Some(ct), wrong.as_bytes()).unwrap_err();
        assert!(err.reason.starts_with("body"), "{name}: {err:?}");
    }
}

#[test]
fn exact_bodies_come_from_spec_md() {
    let spec = include_str!("../../../targets/SPEC.md");
    for route in ROUTES
        .iter()
        .filter(|r| matches!(r.answer, Answer::Exact(_)))
    {
        let e = route.expect(b"");
        let Some(BodyMatch::Exact(body)) = &e.body else {
            panic!("{}: not exact", route.name)
        };
        let text = std::str::from_utf8(body).unwrap();
        assert!(spec.contains(&format!("`{text}`")), "{text} not in SPEC.md");
    }
}

#[test]
fn echoes_are_exact_when_every_encoder_agrees() {
    let simple = ScenarioName::Simple.route();
    let e = simple.expect(br#"{"payload":"\u0041bc 1-2_3"}"#);
    let want = br#"{"payload":"Hello, Abc 1-2_3"}"#;
    assert_eq!(e.body, Some(BodyMatch::Exact(want.to_vec())));
    assert!(e
        .check(200, Some(JSON_CT), br#"{"payload":"Hello, abc 1-2_3"}"#)
        .is_err());
}

#[test]
fn echoes_that_encoders_escape_differently_get_a_shape() {
    let e = ScenarioName::Timed
        .route()
        .expect(request_body("a/b<c>").as_bytes());
    for answer in [
        r#"{"payload":"Hello, a/b<c>"}"#,
        r#"{"payload":"Hello, a\/b\u003cc\u003e"}"#,
    ] {
        assert_eq!(
            e.check(200, Some(JSON_CT), answer.as_bytes()),
            Ok(()),
            "{answer}"
        );
    }
    assert!(e
        .check(200, Some(JSON_CT), br#"{"payload":"Bye, a/b<c>"}"#)
        .is_err());
    assert!(e
        .check(200, Some(JSON_CT), br#"{"payload":"Hello, a/b<c>""#)
        .is_err());
}

#[test]
fn requests_without_a_payload_expect_a_4xx() {
    for body in [
        &br#"{"payload": "#[..],
        br#"{"message":"hi"}"#,
        br#"{"payload":42}"#,
    ] {
        for name in [ScenarioName::Simple, ScenarioName::Bcrypt] {
            let e = name.route().expect(body);
            assert_eq!(e.check(422, None, b"bad"), Ok(()), "{name}");
            assert_eq!(e.check(400, Some(JSON_CT), b"{}"), Ok(()), "{name}");
            assert!(e.check(200, Some(JSON_CT), b"{}").is_err(), "{name}");
            assert!(e.check(500, None, b"").is_err(), "{name}");
        }
    }
}

#[test]
fn fortunes_doctype_case_is_free_as_in_the_verifier() {
    let e = ScenarioName::Fortunes.route().expect(b"");
    let ct = Some(&b"text/html;charset=UTF-8"[..]);
    let lower = FORTUNES.replace("<!DOCTYPE", "<!doctype");
    assert_eq!(e.check(200, ct, lower.as_bytes()), Ok(()));
    assert!(e.check(200, ct, b"<!DOCTYPE html><html></HTML>").is_err());
}

#[test]
fn requests_find_their_route_by_method_and_path() {
    let body = request_body(DEFAULT_PAYLOAD);
    let queries = expect_request("GET", "/queries?queries=20", b"");
    assert_eq!(queries, ScenarioName::Queries.route().expect(b""));
    let simple = expect_request("post", "/test/simple", body.as_bytes());
    assert_eq!(
        simple.body,
        Some(BodyMatch::Exact(
            br#"{"payload":"Hello, shootout"}"#.to_vec()
        ))
    );
    assert!(expect_request("GET", "/test/simple", b"").is_empty());
    assert!(expect_request("GET", "/static/logo.png", b"").is_empty());
    let json = expect_request("GET", "/json?x=1", b"");
    assert_eq!(json.status, vec![StatusMatch::Code(200)]);
}
