//! The database checks that look at the server from the database's side
//! (SPEC.md "What the verifier checks" 8 and 9): `pg_stat_statements`
//! counts one query per row read (no cache, no `IN (...)` batching), and
//! under 32 concurrent requests `pg_stat_activity` never shows more of the
//! server's connections than `DB_POOL_SIZE`. Only the server logs in as
//! `APP_USER`, so its statements and connections are told apart by role.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use postgres::Client;

use super::checks::{status_is, verdict};
use super::db::{get, World};
use super::{Aspect, Check, Column, Failure};
use crate::database::{APP_USER, DB_NAME};
use crate::http::{Conn, Request};
use shootout_contract::spec::ScenarioName;

/// Sequential requests per counted route: enough that one stray or missing
/// query per request shows, few enough to take well under a second.
const COUNTED: usize = 64;
/// Concurrent clients of the pool check (SPEC.md item 9) and their requests.
const CLIENTS: usize = 32;
const REQUESTS_PER_CLIENT: usize = 20;
/// How often the pool check samples `pg_stat_activity`.
const POLL: Duration = Duration::from_millis(2);

/// The query counts of `/db`, `/queries?queries=20` and `/fortunes`, each
/// under its route's column; `/db` also checks that its ids vary.
pub(super) fn check_counts(addr: SocketAddr, timeout: Duration, client: &mut Client) -> Vec<Check> {
    let queries_path = ScenarioName::Queries.route().path_with_queries(20);
    let runs = [
        (
            ScenarioName::Db,
            ScenarioName::Db.route().path.to_owned(),
            "world",
            1,
        ),
        (ScenarioName::Queries, queries_path, "world", 20),
        (
            ScenarioName::Fortunes,
            ScenarioName::Fortunes.route().path.to_owned(),
            "fortune",
            1,
        ),
    ];
    let mut checks = Vec::new();
    for (name, path, table, per_request) in runs {
        let col = Column::Route(name);
        match count_run(addr, timeout, client, &path, table) {
            Ok((count, bodies)) => {
                let expected = (COUNTED * per_request) as i64;
                let result = match count == expected {
                    true => Ok(()),
                    false => Err(Failure::QueryCount {
                        request: format!("GET {path}"),
                        requests: COUNTED,
                        table,
                        expected,
                        got: count,
                    }),
                };
                checks.push(verdict(col, Aspect::QueryCount, result));
                if name == ScenarioName::Db {
                    checks.push(verdict(col, Aspect::Random, ids_vary(&bodies)));
                }
            }
            Err(f) => checks.push(Check::fail(col, Aspect::QueryCount, f)),
        }
    }
    checks
}

/// Resets the statistics, sends `COUNTED` requests one after another and
/// returns the server's statements on `table` (updates aside) and the
/// bodies answered.
fn count_run(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
    path: &str,
    table: &str,
) -> Result<(i64, Vec<Vec<u8>>), Failure> {
    let db_err = |e: postgres::Error| Failure::Database(format!("pg_stat_statements: {e}"));
    client
        .execute("SELECT pg_stat_statements_reset()", &[])
        .map_err(db_err)?;
    let mut bodies = Vec::with_capacity(COUNTED);
    for _ in 0..COUNTED {
        let resp = get(addr, path, timeout)?;
        status_is(&resp, 200)?;
        bodies.push(resp.body);
    }
    // The statistics are written as each statement ends, which can trail
    // the response the server sent by a moment.
    std::thread::sleep(Duration::from_millis(100));
    let row = client
        .query_one(
            "SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s \
             JOIN pg_roles r ON r.oid = s.userid \
             WHERE r.rolname = $1 AND s.query ~* $2 AND s.query !~* '^\\s*update'",
            &[&APP_USER, &format!(r"\m{table}\M")],
        )
        .map_err(db_err)?;
    Ok((row.get(0), bodies))
}

/// Random ids: 64 draws from 10 000 repeat rarely, so fewer than half
/// distinct means the server does not pick a fresh random id per request.
/// The body's form is judged by the Body check, so any JSON row counts.
fn ids_vary(bodies: &[Vec<u8>]) -> Result<(), Failure> {
    let ids: HashSet<i32> = bodies
        .iter()
        .filter_map(|b| serde_json::from_slice::<World>(b).ok())
        .map(|r| r.id)
        .collect();
    match ids.len() * 2 >= bodies.len() {
        true => Ok(()),
        false => Err(Failure::SameIds {
            distinct: ids.len(),
            requests: bodies.len(),
        }),
    }
}

/// 32 clients send 20 `/db` requests each while the server's connections
/// are sampled; the most seen at once must not exceed `pool_size`.
pub(super) fn check_pool(
    addr: SocketAddr,
    timeout: Duration,
    client: &mut Client,
    pool_size: u32,
) -> Vec<Check> {
    let col = Column::DbPool;
    let done = AtomicUsize::new(0);
    let first_error: Mutex<Option<Failure>> = Mutex::new(None);
    let sampled = std::thread::scope(|s| {
        for _ in 0..CLIENTS {
            s.spawn(|| {
                if let Err(f) = one_client(addr, timeout) {
                    first_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(f);
                }
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        sample_connections(client, &done)
    });
    let requests = match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        None => Ok(()),
        Some(f) => Err(f),
    };
    let max_seen = match sampled {
        Ok(max) => max,
        Err(f) => return vec![Check::fail(col, Aspect::Pool, f)],
    };
    let pool = match max_seen <= i64::from(pool_size) {
        true => Ok(()),
        false => Err(Failure::PoolExceeded {
            max_seen,
            pool_size,
        }),
    };
    let mut pool = verdict(col, Aspect::Pool, pool);
    pool.note = Some(format!(
        "at most {max_seen} database connections under {CLIENTS} concurrent /db clients (DB_POOL_SIZE {pool_size})"
    ));
    vec![verdict(col, Aspect::Status, requests), pool]
}

/// One client's `/db` requests on a kept-alive connection, reopened when
/// the server closes it; the first failure ends the client.
fn one_client(addr: SocketAddr, timeout: Duration) -> Result<(), Failure> {
    let path = ScenarioName::Db.route().path;
    let transport = |e: std::io::Error| Failure::Transport(format!("GET {path}: {e}"));
    let mut conn: Option<Conn> = None;
    for _ in 0..REQUESTS_PER_CLIENT {
        let mut c = match conn.take() {
            Some(c) => c,
            None => Conn::open(addr, timeout).map_err(transport)?,
        };
        let resp = c.send(&Request::get(path)).map_err(transport)?;
        status_is(&resp, 200)?;
        let closing = resp
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"));
        conn = (!closing).then_some(c);
    }
    Ok(())
}

/// The most connections of `APP_USER` seen until every client is done.
fn sample_connections(client: &mut Client, done: &AtomicUsize) -> Result<i64, Failure> {
    let statement = client
        .prepare("SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND datname = $2")
        .map_err(|e| Failure::Database(format!("pg_stat_activity: {e}")))?;
    let mut max = 0;
    while done.load(Ordering::SeqCst) < CLIENTS {
        let row = client
            .query_one(&statement, &[&APP_USER, &DB_NAME])
            .map_err(|e| Failure::Database(format!("pg_stat_activity: {e}")))?;
        max = max.max(row.get::<_, i64>(0));
        std::thread::sleep(POLL);
    }
    Ok(max)
}
