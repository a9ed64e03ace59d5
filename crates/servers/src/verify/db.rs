//! The database checks of SPEC.md "What the verifier checks" 7-9, run when
//! the verifier has a seeded database: `/db` and `/queries` answer compact
//! rows that the table holds and clamp `queries=Q`; `/updates` answers
//! values that are in the table afterwards; `/fortunes` (in `fortunes`);
//! the query and row counts and the pool limit (in `db_load`). The verifier reads
//! the tables through its own superuser connection, after each response, so
//! a server cannot pass by answering plausible numbers. Without a database
//! every database column is reported as skipped, never as passed.

use std::net::SocketAddr;
use std::time::Duration;

use postgres::{Client, NoTls};

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use super::response::{basics, get, verdict};
use super::world::{check_clamping, parse_rows, row_count, rows_in_table};
use super::{counts, db_load, fortunes, updates};
use crate::database::DatabaseAccess;
use shootout_contract::spec::ScenarioName;

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
    checks.extend(updates::check_updates(addr, timeout, c));
    checks.extend(counts::check_counts(addr, timeout, c));
    checks.extend(db_load::check_pool(addr, timeout, c, access.pool_size));
    checks
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
    let mut judge = |rows: &[_]| rows_in_table(client, rows);
    checks.extend(check_clamping(addr, timeout, name, &CLAMPS, &mut judge));
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
    let mut checks = basics(name, &resp);
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
