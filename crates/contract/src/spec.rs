//! The routes of `targets/SPEC.md`, defined once: each scenario's name,
//! method, path, request body, and the answer a correct server gives (status,
//! media type, body, minimum duration). The verifier checks servers against
//! this table, the study parser takes its default method, path and body from
//! it, and anything that wants to check responses during a load can read
//! [`Route::expected_body`] from here too. The database routes' bodies
//! depend on the table ([`Answer::Database`]); their query parameter and its
//! clamping rule are defined here too ([`Route::path_with_queries`],
//! [`clamp_queries`]). What a load checks on every response of a route is
//! derived from this table in [`crate::expect`].

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
    Db,
    Queries,
    Fortunes,
    Updates,
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
    /// Rows of the database: the body depends on the table (SPEC.md
    /// "Database routes"), so only the verifier's database checks judge it.
    Database,
}

/// The bcrypt cost SPEC.md asks for.
pub const BCRYPT_COST: u32 = 10;

/// The media type of plain-text answers.
pub const TEXT: &str = "text/plain";
/// The media type of JSON answers and POST bodies.
pub const JSON: &str = "application/json";
/// The media type of `/fortunes` (with `charset=utf-8`).
pub const HTML: &str = "text/html";

/// The query parameter of `/queries` and `/updates`.
pub const QUERIES_PARAM: &str = "queries";
/// The largest row count `queries=Q` asks for; more is clamped to it.
pub const MAX_QUERIES: usize = 500;

/// The rows a correct server answers for `queries=<raw>` (`None`: no
/// parameter): Q clamped to 1..=500; missing, empty or non-integer is 1.
pub fn clamp_queries(raw: Option<&str>) -> usize {
    match raw.map(|q| q.trim().parse::<i64>()) {
        Some(Ok(q)) => q.clamp(1, MAX_QUERIES as i64) as usize,
        _ => 1,
    }
}

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
pub const ROUTES: [Route; 11] = [
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
    database(ScenarioName::Db, "/db", JSON),
    database(ScenarioName::Queries, "/queries", JSON),
    database(ScenarioName::Fortunes, "/fortunes", HTML),
    database(ScenarioName::Updates, "/updates", JSON),
];

const fn database(name: ScenarioName, path: &'static str, media: &'static str) -> Route {
    Route {
        answer: Answer::Database,
        ..get(name, path, media, "")
    }
}

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

/// What comes before the payload string in POST bodies and their answers.
pub(crate) const PAYLOAD_OPEN: &str = r#"{"payload":""#;
/// What closes the payload string and its object.
pub(crate) const PAYLOAD_CLOSE: &str = r#""}"#;
/// What simple and timed put before the payload they echo.
pub(crate) const GREETING: &str = "Hello, ";

/// The JSON body a POST route expects: `{"payload":"<payload>"}`.
pub fn request_body(payload: &str) -> String {
    format!("{PAYLOAD_OPEN}{payload}{PAYLOAD_CLOSE}")
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

    /// Whether the route reads the database (SPEC.md "Database routes").
    pub fn needs_database(&self) -> bool {
        self.answer == Answer::Database
    }

    /// Whether the route takes `queries=Q` (queries and updates).
    pub fn takes_queries(&self) -> bool {
        matches!(self.name, ScenarioName::Queries | ScenarioName::Updates)
    }

    /// The path with `queries=<q>`; `q` is any text, so that the clamping
    /// cases (`0`, `foo`, empty) are built the same way as real counts.
    pub fn path_with_queries(&self, q: impl fmt::Display) -> String {
        format!("{}?{QUERIES_PARAM}={q}", self.path)
    }

    /// The exact body a correct server answers to a request whose payload
    /// is `payload`; `None` for bcrypt, whose hash is salted (check it with
    /// [`Route::answer`] instead).
    pub fn expected_body(&self, payload: &str) -> Option<String> {
        match self.answer {
            Answer::Exact(body) => Some(body.to_owned()),
            Answer::Greet => Some(format!("{PAYLOAD_OPEN}{GREETING}{payload}{PAYLOAD_CLOSE}")),
            Answer::Bcrypt | Answer::Database => None,
        }
    }
}

impl ScenarioName {
    pub const ALL: [ScenarioName; 11] = [
        ScenarioName::Plaintext,
        ScenarioName::Json,
        ScenarioName::FileRead,
        ScenarioName::WaitTime,
        ScenarioName::Simple,
        ScenarioName::Timed,
        ScenarioName::Bcrypt,
        ScenarioName::Db,
        ScenarioName::Queries,
        ScenarioName::Fortunes,
        ScenarioName::Updates,
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
            ScenarioName::Db => "db",
            ScenarioName::Queries => "queries",
            ScenarioName::Fortunes => "fortunes",
            ScenarioName::Updates => "updates",
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
            ScenarioName::Queries | ScenarioName::Updates => 0.005,
            ScenarioName::Db | ScenarioName::Fortunes => 0.000_5,
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
    fn database_routes_and_clamping() {
        let db: Vec<_> = ROUTES.iter().filter(|r| r.needs_database()).collect();
        assert_eq!(db.len(), 4);
        assert!(!ScenarioName::Json.route().needs_database());
        let q = ScenarioName::Queries.route();
        assert!(q.takes_queries() && !ScenarioName::Db.route().takes_queries());
        assert_eq!(q.path_with_queries(20), "/queries?queries=20");
        assert_eq!(q.path_with_queries(""), "/queries?queries=");
        assert_eq!(ScenarioName::Fortunes.route().media_type, "text/html");
        assert_eq!(q.expected_body(""), None);
        let cases = [
            ("2", 2),
            ("0", 1),
            ("foo", 1),
            ("501", 500),
            ("", 1),
            ("-3", 1),
        ];
        for (raw, rows) in cases {
            assert_eq!(clamp_queries(Some(raw)), rows, "{raw:?}");
        }
        assert_eq!(clamp_queries(None), 1);
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
