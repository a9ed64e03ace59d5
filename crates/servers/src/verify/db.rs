//! The database checks of SPEC.md "What the verifier checks" 7-9, run when
//! the verifier has a seeded database: `/db` and `/queries` answer compact
//! rows that the table holds and clamp `queries=Q`; `/updates` answers
//! values that are in the table afterwards; `/fortunes` (in `fortunes`);
//! the query counts and the pool limit (in `db_load`). The verifier reads
//! the tables through its own superuser connection, after each response, so
//! a server cannot pass by answering plausible numbers. Without a database
//! every database column is reported as skipped, never as passed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use postgres::{Client, NoTls};
use serde::{Deserialize, Serialize};

use super::checks::{framed, media_type_is, shown, status_is, verdict};
use super::{db_load, fortunes, Aspect, Check, Column, Failure};
use crate::database::{DatabaseAccess, WORLD_ROWS};
use crate::http::{self, Request, Response};
use shootout_contract::spec::{clamp_queries, ScenarioName};

/// `queries=Q` values and the rows they must give (SPEC.md item 7); `None`
/// is a request without the parameter.
const CLAMPS: [Option<&str>; 6] = [
    Some("2"),
    Some("0"),
    Some("foo"),
    Some("501"),
    Some(""),
    None,
];
/// The row counts of the `/updates` persistence checks; the last one is
/// large enough that "nothing changed" cannot happen by chance.
const UPDATE_COUNTS: [usize; 3] = [1, 5, 20];
/// The rows of the main `/queries` request.
const QUERIES: usize = 20;

/// The database columns, each reported once when they cannot be checked.
fn columns() -> [Column; 5] {
    [
        Column::Route(ScenarioName::Db),
        Column::Route(ScenarioName::Queries),
        Column::Route(ScenarioName::Fortunes),
        Column::Route(ScenarioName::Updates),
        Column::DbPool,
    ]
}

/// Every database check against the server at `addr`; skipped without a
/// database, failed (as data) if the verifier cannot connect.
pub(super) fn check_database(
    addr: SocketAddr,
    access: Option<&DatabaseAccess>,
    timeout: Duration,
) -> Vec<Check> {
    let Some(access) = access else {
        let why = "no database (verify was not given one)";
        return columns().map(|c| Check::skipped(c, why)).to_vec();
    };
    let mut client = match Client::connect(&access.admin_url, NoTls) {
        Ok(client) => client,
        Err(e) => {
            let failure = Failure::Database(format!("connecting as admin: {e}"));
            return columns()
                .map(|c| Check::fail(c, Aspect::Request, failure.clone()))
                .to_vec();
        }
    };
    let c = &mut client;
    let mut checks = check_db(addr, timeout, c);
    checks.extend(check_queries(addr, timeout, c));
    checks.extend(fortunes::check_fortunes(addr, timeout, c));
    checks.extend(check_updates(addr, timeout, c));
    checks.extend(db_load::check_counts(addr, timeout, c));
    checks.extend(db_load::check_pool(addr, timeout, c, access.pool_size));
    checks
}

/// One row of `world` as the JSON routes spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

/// GETs `path`; a transport error is a failure.
pub(super) fn get(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Response, Failure> {
    http::send(addr, &Request::get(path), timeout)
        .map_err(|e| Failure::Transport(format!("GET {path}: {e}")))
}

/// Status 200, the media type and framing of one response.
pub(super) fn basics(column: Column, resp: &Response, media: &'static str) -> Vec<Check> {
    vec![
        verdict(column, Aspect::Status, status_is(resp, 200)),
        verdict(column, Aspect::ContentType, media_type_is(resp, media)),
        verdict(column, Aspect::Framing, framed(resp)),
    ]
}

/// The rows of a `/db` (object) or `/queries`/`/updates` (array) body,
/// which must be exactly the compact rendering of what it parses to.
pub(super) fn parse_rows(body: &[u8], array: bool) -> Result<Vec<World>, Failure> {
    let wrong = |expected: &str| Failure::Body {
        expected: expected.to_owned(),
        got: shown(body),
    };
    let (rows, compact) = match array {
        true => {
            let rows: Vec<World> = serde_json::from_slice(body)
                .map_err(|_| wrong(r#"[{"id":N,"randomNumber":M},...]"#))?;
            let compact = serde_json::to_string(&rows).unwrap_or_default();
            (rows, compact)
        }
        false => {
            let row: World =
                serde_json::from_slice(body).map_err(|_| wrong(r#"{"id":N,"randomNumber":M}"#))?;
            (vec![row], serde_json::to_string(&row).unwrap_or_default())
        }
    };
    match compact.as_bytes() == body {
        true => Ok(rows),
        false => Err(wrong(&compact)),
    }
}

/// GETs `path` and parses its rows; any step failing is the failure.
fn fetch_rows(addr: SocketAddr, path: &str, timeout: Duration) -> Result<Vec<World>, Failure> {
    let resp = get(addr, path, timeout)?;
    status_is(&resp, 200)?;
    parse_rows(&resp.body, true)
}

/// `randomnumber` of each of `ids` as the table holds it now.
pub(super) fn table_values(client: &mut Client, ids: &[i32]) -> Result<HashMap<i32, i32>, Failure> {
    let rows = client
        .query(
            "SELECT id, randomnumber FROM world WHERE id = ANY($1)",
            &[&ids],
        )
        .map_err(|e| Failure::Database(format!("reading world: {e}")))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Every answered row holds its id's value in the table.
pub(super) fn rows_in_table(client: &mut Client, rows: &[World]) -> Result<(), Failure> {
    if let Some(bad) = rows.iter().find(|r| !(1..=WORLD_ROWS).contains(&r.id)) {
        return Err(Failure::WrongRows(format!(
            "id {} is not in 1..={WORLD_ROWS}",
            bad.id
        )));
    }
    let ids: Vec<i32> = rows.iter().map(|r| r.id).collect();
    let table = table_values(client, &ids)?;
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| table.get(&r.id) != Some(&r.random_number))
        .take(3)
        .map(|r| describe(r, table.get(&r.id)))
        .collect();
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(Failure::WrongRows(wrong.join("; "))),
    }
}

fn describe(row: &World, table: Option<&i32>) -> String {
    match table {
        Some(v) => format!(
            "id {} answered {}, the table holds {v}",
            row.id, row.random_number
        ),
        None => format!("id {} is not in the table", row.id),
    }
}

/// `/db`: status, JSON, framing, the compact object, and its row.
fn check_db(addr: SocketAddr, timeout: Duration, client: &mut Client) -> Vec<Check> {
    let path = ScenarioName::Db.route().path;
    check_rows_route(addr, timeout, client, ScenarioName::Db, path, None)
}

/// `/queries?queries=20`: as `/db` with an array of 20; then the clamping
/// cases, each of which must give its clamped count of table rows.
fn check_queries(addr: SocketAddr, timeout: Duration, client: &mut Client) -> Vec<Check> {
    let name = ScenarioName::Queries;
    let path = name.route().path_with_queries(QUERIES);
    let mut checks = check_rows_route(addr, timeout, client, name, &path, Some(QUERIES));
    checks.extend(check_clamping(addr, timeout, client, name, &CLAMPS));
    checks
}

/// One request to a JSON rows route: status, media type, framing, a
/// compact body of `rows` rows (`None`: one object) that the table holds.
fn check_rows_route(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
    name: ScenarioName,
    path: &str,
    rows: Option<usize>,
) -> Vec<Check> {
    let col = Column::Route(name);
    let resp = match get(addr, path, timeout) {
        Ok(resp) => resp,
        Err(f) => return vec![Check::fail(col, Aspect::Request, f).on("GET", path)],
    };
    let mut checks = basics(col, &resp, name.route().media_type);
    let parsed = match rows {
        None => parse_rows(&resp.body, false),
        Some(n) => parse_rows(&resp.body, true).and_then(|r| row_count(path, r, n)),
    };
    match parsed {
        Ok(rows) => checks.extend([
            Check::pass(col, Aspect::Body),
            verdict(col, Aspect::Rows, rows_in_table(client, &rows)),
        ]),
        Err(f) => checks.push(Check::fail(col, Aspect::Body, f)),
    }
    checks.into_iter().map(|c| c.on("GET", path)).collect()
}

fn row_count(request: &str, rows: Vec<World>, expected: usize) -> Result<Vec<World>, Failure> {
    match rows.len() == expected {
        true => Ok(rows),
        false => Err(Failure::RowCount {
            request: format!("GET {request}"),
            expected,
            got: rows.len(),
        }),
    }
}

/// One Clamp check per case: the clamped number of rows, all in the table.
fn check_clamping(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
    name: ScenarioName,
    cases: &[Option<&str>],
) -> Vec<Check> {
    let route = name.route();
    let col = Column::Route(name);
    cases
        .iter()
        .map(|&q| {
            let path = q.map_or_else(|| route.path.to_owned(), |q| route.path_with_queries(q));
            let result = fetch_rows(addr, &path, timeout)
                .and_then(|rows| row_count(&path, rows, clamp_queries(q)))
                .and_then(|rows| match name {
                    ScenarioName::Updates => updates_in_table(client, &rows),
                    _ => rows_in_table(client, &rows),
                });
            verdict(col, Aspect::Clamp, result).on("GET", &path)
        })
        .collect()
}

/// `/updates?queries=N` for N = 1, 5, 20: the answered values are in the
/// table afterwards and (for 20) the table changed; then clamping.
fn check_updates(addr: SocketAddr, timeout: Duration, client: &mut Client) -> Vec<Check> {
    let route = ScenarioName::Updates.route();
    let col = Column::Route(ScenarioName::Updates);
    let path = route.path_with_queries(QUERIES);
    let mut checks = match get(addr, &path, timeout) {
        Ok(resp) => basics(col, &resp, route.media_type),
        Err(f) => return vec![Check::fail(col, Aspect::Request, f)],
    };
    for n in UPDATE_COUNTS {
        checks.extend(check_update(addr, timeout, client, n));
    }
    let clamps = [Some("0"), Some("foo"), Some("501")];
    checks.extend(check_clamping(
        addr,
        timeout,
        client,
        ScenarioName::Updates,
        &clamps,
    ));
    checks
}

/// One `/updates?queries=n`: Persisted, and for the largest n Changed.
fn check_update(addr: SocketAddr, timeout: Duration, client: &mut Client, n: usize) -> Vec<Check> {
    let col = Column::Route(ScenarioName::Updates);
    let path = ScenarioName::Updates.route().path_with_queries(n);
    // The whole table, because the ids the server will pick are unknown.
    let all: Vec<i32> = (1..=WORLD_ROWS).collect();
    let result = table_values(client, &all).and_then(|before| {
        let rows = fetch_rows(addr, &path, timeout).and_then(|r| row_count(&path, r, n))?;
        let after = table_values(client, &rows.iter().map(|r| r.id).collect::<Vec<_>>())?;
        Ok((before, rows, after))
    });
    let (before, rows, after) = match result {
        Ok(found) => found,
        Err(f) => return vec![Check::fail(col, Aspect::Persisted, f).on("GET", &path)],
    };
    let mut checks = vec![verdict(col, Aspect::Persisted, persisted(&rows, &after))];
    if n == UPDATE_COUNTS[UPDATE_COUNTS.len() - 1] {
        let changed = rows.iter().any(|r| before.get(&r.id) != after.get(&r.id));
        let result = match changed {
            true => Ok(()),
            false => Err(Failure::Unchanged { rows: rows.len() }),
        };
        checks.push(verdict(col, Aspect::Changed, result));
    }
    checks.into_iter().map(|c| c.on("GET", &path)).collect()
}

/// The answered updates are what the table holds now.
fn updates_in_table(client: &mut Client, rows: &[World]) -> Result<(), Failure> {
    let ids: Vec<i32> = rows.iter().map(|r| r.id).collect();
    persisted(rows, &table_values(client, &ids)?)
}

/// Every answered id holds an answered value. An id drawn twice in one
/// request may be answered with two values of which the table keeps one
/// (the batched UPDATE applies one), so either is accepted.
fn persisted(rows: &[World], after: &HashMap<i32, i32>) -> Result<(), Failure> {
    let wrong: Vec<String> = rows
        .iter()
        .filter(|r| {
            let now = after.get(&r.id);
            !rows
                .iter()
                .any(|o| o.id == r.id && Some(&o.random_number) == now)
        })
        .take(3)
        .map(|r| describe(r, after.get(&r.id)))
        .collect();
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(Failure::NotPersisted(wrong.join("; "))),
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn rows_must_be_compact_objects() {
        let one = parse_rows(br#"{"id":3,"randomNumber":7}"#, false).unwrap();
        assert_eq!(
            one,
            vec![World {
                id: 3,
                random_number: 7
            }]
        );
        let two = br#"[{"id":1,"randomNumber":2},{"id":3,"randomNumber":4}]"#;
        assert_eq!(parse_rows(two, true).unwrap().len(), 2);
        for bad in [
            &br#"{"id": 3, "randomNumber": 7}"#[..],
            br#"{"randomNumber":7,"id":3}"#,
            br#"{"id":3,"randomnumber":7}"#,
            br#"{"id":3,"randomNumber":7,"x":1}"#,
            br#"[{"id":3,"randomNumber":7}]"#,
        ] {
            assert!(
                parse_rows(bad, false).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn duplicate_ids_may_keep_either_value() {
        let rows = [
            World {
                id: 5,
                random_number: 1,
            },
            World {
                id: 5,
                random_number: 2,
            },
        ];
        assert_eq!(persisted(&rows, &HashMap::from([(5, 2)])), Ok(()));
        assert!(persisted(&rows, &HashMap::from([(5, 3)])).is_err());
    }
}
