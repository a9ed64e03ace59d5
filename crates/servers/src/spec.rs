//! The routes of `targets/SPEC.md`, defined once: each scenario's name,
//! method, path, request body, and the answer a correct server gives (status,
//! media type, body, minimum duration). The verifier checks servers against
//! this table, the study parser takes its default method, path and body from
//! it, and anything that wants to check responses during a load can read
//! [`Route::expected_body`] from here too.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// The scenarios of SPEC.md, one per route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioName {
    Plaintext,
    Json,
    FileRead,
    WaitTime,
    Simple,
    Timed,
    Bcrypt,
}

/// The HTTP method of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    /// With a JSON body `{"payload":"..."}`.
    Post,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// What a correct server answers, beyond status 200 and the media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// Exactly this body.
    Exact(&'static str),
    /// `{"payload":"Hello, <payload>"}`.
    Greet,
    /// `{"payload":"<bcrypt hash of payload at cost 10>"}`.
    Bcrypt,
}

/// The bcrypt cost SPEC.md asks for.
pub const BCRYPT_COST: u32 = 10;

/// The media type of plain-text answers.
pub const TEXT: &str = "text/plain";
/// The media type of JSON answers and POST bodies.
pub const JSON: &str = "application/json";

/// One route of SPEC.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub name: ScenarioName,
    pub method: Method,
    pub path: &'static str,
    /// The `Content-Type` a correct answer has (parameters aside).
    pub media_type: &'static str,
    pub answer: Answer,
    /// A correct server takes at least this long to answer.
    pub min_duration: Option<Duration>,
}

/// Every route, in SPEC.md's order.
pub const ROUTES: [Route; 7] = [
    get(ScenarioName::Plaintext, "/plaintext", TEXT, "Hello, World!"),
    get(
        ScenarioName::Json,
        "/json",
        JSON,
        r#"{"message":"Hello, World!"}"#,
    ),
    get(
        ScenarioName::FileRead,
        "/file_read",
        JSON,
        r#"{"message":"file_read","rows":418}"#,
    ),
    Route {
        min_duration: Some(Duration::from_secs(1)),
        ..get(
            ScenarioName::WaitTime,
            "/wait_time",
            JSON,
            r#"{"message":"time_sleep"}"#,
        )
    },
    post(ScenarioName::Simple, "/test/simple", Answer::Greet, None),
    post(
        ScenarioName::Timed,
        "/test/timed",
        Answer::Greet,
        Some(Duration::from_millis(20)),
    ),
    post(ScenarioName::Bcrypt, "/test/bcrypt", Answer::Bcrypt, None),
];

const fn get(
    name: ScenarioName,
    path: &'static str,
    media: &'static str,
    body: &'static str,
) -> Route {
    Route {
        name,
        method: Method::Get,
        path,
        media_type: media,
        answer: Answer::Exact(body),
        min_duration: None,
    }
}

const fn post(
    name: ScenarioName,
    path: &'static str,
    answer: Answer,
    min: Option<Duration>,
) -> Route {
    Route {
        name,
        method: Method::Post,
        path,
        media_type: JSON,
        answer,
        min_duration: min,
    }
}

/// The payload sent when a study gives no body.
pub const DEFAULT_PAYLOAD: &str = "shootout";

/// The JSON body a POST route expects: `{"payload":"<payload>"}`.
pub fn request_body(payload: &str) -> String {
    format!(r#"{{"payload":"{payload}"}}"#)
}

impl Route {
    /// The route with this method and path, if SPEC.md has one.
    pub fn find(method: &str, path: &str) -> Option<&'static Route> {
        ROUTES
            .iter()
            .find(|r| r.method.as_str() == method && r.path == path)
    }

    /// The request body a default request carries (empty for GET).
    pub fn default_body(&self) -> Vec<u8> {
        match self.method {
            Method::Get => Vec::new(),
            Method::Post => request_body(DEFAULT_PAYLOAD).into_bytes(),
        }
    }

    /// The exact body a correct server answers to a request whose payload
    /// is `payload`; `None` for bcrypt, whose hash is salted (check it with
    /// [`Route::answer`] instead).
    pub fn expected_body(&self, payload: &str) -> Option<String> {
        match self.answer {
            Answer::Exact(body) => Some(body.to_owned()),
            Answer::Greet => Some(format!(r#"{{"payload":"Hello, {payload}"}}"#)),
            Answer::Bcrypt => None,
        }
    }
}

impl ScenarioName {
    pub const ALL: [ScenarioName; 7] = [
        ScenarioName::Plaintext,
        ScenarioName::Json,
        ScenarioName::FileRead,
        ScenarioName::WaitTime,
        ScenarioName::Simple,
        ScenarioName::Timed,
        ScenarioName::Bcrypt,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ScenarioName::Plaintext => "plaintext",
            ScenarioName::Json => "json",
            ScenarioName::FileRead => "file_read",
            ScenarioName::WaitTime => "wait_time",
            ScenarioName::Simple => "simple",
            ScenarioName::Timed => "timed",
            ScenarioName::Bcrypt => "bcrypt",
        }
    }

    /// This scenario's route of SPEC.md.
    pub fn route(self) -> &'static Route {
        ROUTES
            .iter()
            .find(|r| r.name == self)
            .expect("every scenario has a route")
    }

    /// A nominal service time per request, for duration estimates only.
    pub fn nominal_service_s(self) -> f64 {
        match self {
            ScenarioName::WaitTime => 1.0,
            ScenarioName::Timed => 0.021,
            ScenarioName::Bcrypt => 0.07,
            ScenarioName::FileRead => 0.002,
            _ => 0.000_2,
        }
    }
}

impl fmt::Display for ScenarioName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_has_exactly_one_route() {
        for name in ScenarioName::ALL {
            assert_eq!(ROUTES.iter().filter(|r| r.name == name).count(), 1);
            assert_eq!(name.route().name, name);
        }
        assert_eq!(ROUTES.len(), ScenarioName::ALL.len());
    }

    #[test]
    fn routes_match_spec_md() {
        let r = ScenarioName::Simple.route();
        assert_eq!((r.method.as_str(), r.path), ("POST", "/test/simple"));
        assert_eq!(ScenarioName::Plaintext.route().media_type, "text/plain");
        assert_eq!(
            ScenarioName::Timed.route().expected_body("x").as_deref(),
            Some(r#"{"payload":"Hello, x"}"#)
        );
        assert_eq!(ScenarioName::Bcrypt.route().expected_body("x"), None);
        assert_eq!(
            ScenarioName::Bcrypt.route().default_body(),
            br#"{"payload":"shootout"}"#
        );
        assert!(ScenarioName::Json.route().default_body().is_empty());
        assert_eq!(
            Route::find("GET", "/wait_time").map(|r| r.name),
            Some(ScenarioName::WaitTime)
        );
        assert_eq!(Route::find("POST", "/json"), None);
    }

    #[test]
    fn every_path_is_in_spec_md() {
        let spec = include_str!("../../../targets/SPEC.md");
        for r in &ROUTES {
            assert!(spec.contains(r.path), "{} not in SPEC.md", r.path);
        }
    }

    #[test]
    fn names_round_trip_through_serde() {
        for name in ScenarioName::ALL {
            let text = serde_json::to_string(&name).unwrap();
            assert_eq!(text, format!("\"{}\"", name.as_str()));
            assert_eq!(serde_json::from_str::<ScenarioName>(&text).unwrap(), name);
        }
    }
}
