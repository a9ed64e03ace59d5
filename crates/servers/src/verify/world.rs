//! The `world` rows the JSON database routes answer, and the checks every
//! such route shares: the compact body's rows, their count, whether the
//! table holds them, and the `queries=Q` clamping cases (each answer also
//! judged by TechEmpower's header rules, as its verifier judges each case).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use postgres::Client;
use serde::{Deserialize, Serialize};

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use super::response::{basics, get, shown, status_is, verdict};
use crate::database::WORLD_ROWS;
use crate::http::Response;
use shootout_contract::spec::{clamp_queries, ScenarioName};

/// One row of `world` as the JSON routes spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct World {
    pub id: i32,
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
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

/// GETs `path`: the response, and its rows if it answered 200 with some.
pub(super) fn fetch_rows(
    addr: SocketAddr,
    path: &str,
    timeout: Duration,
) -> Result<(Response, Result<Vec<World>, Failure>), Failure> {
    let resp = get(addr, path, timeout)?;
    let rows = status_is(&resp, 200).and_then(|()| parse_rows(&resp.body, true));
    Ok((resp, rows))
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

/// The whole table, for the checks that cannot know which ids will change.
pub(super) fn whole_table(client: &mut Client) -> Result<HashMap<i32, i32>, Failure> {
    let all: Vec<i32> = (1..=WORLD_ROWS).collect();
    table_values(client, &all)
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

pub(super) fn describe(row: &World, table: Option<&i32>) -> String {
    match table {
        Some(v) => format!(
            "id {} answered {}, the table holds {v}",
            row.id, row.random_number
        ),
        None => format!("id {} is not in the table", row.id),
    }
}

pub(super) fn row_count(
    request: &str,
    rows: Vec<World>,
    expected: usize,
) -> Result<Vec<World>, Failure> {
    match rows.len() == expected {
        true => Ok(rows),
        false => Err(Failure::RowCount {
            request: format!("GET {request}"),
            expected,
            got: rows.len(),
        }),
    }
}

/// Per case: the response's basics, and one Clamp check that it gave the
/// clamped number of rows, which `judge` then looks at against the table.
pub(super) fn check_clamping(
    addr: SocketAddr,
    timeout: Duration,
    name: ScenarioName,
    cases: &[Option<&str>],
    judge: &mut dyn FnMut(&[World]) -> Result<(), Failure>,
) -> Vec<Check> {
    let route = name.route();
    let col = Column::Route(name);
    let mut checks = Vec::new();
    for &q in cases {
        let path = q.map_or_else(|| route.path.to_owned(), |q| route.path_with_queries(q));
        let mut case = Vec::new();
        let result = fetch_rows(addr, &path, timeout).and_then(|(resp, rows)| {
            case.extend(basics(name, &resp));
            let rows = row_count(&path, rows?, clamp_queries(q))?;
            judge(&rows)
        });
        case.push(verdict(col, Aspect::Clamp, result));
        checks.extend(case.into_iter().map(|c| c.on("GET", &path)));
    }
    checks
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
}
