//! The pool check (SPEC.md "What the verifier checks" 9): under 32
//! concurrent requests `pg_stat_activity` never shows more of the server's
//! connections than `DB_POOL_SIZE`. Only the server logs in as `APP_USER`,
//! so its connections are told apart by role. The query counts are in
//! `counts`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use postgres::Client;

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use super::response::{status_is, verdict};
use crate::database::{APP_USER, DB_NAME};
use crate::http::{Conn, Request};
use shootout_contract::spec::ScenarioName;

/// Concurrent clients of the pool check (SPEC.md item 9) and their requests.
const CLIENTS: usize = 32;
const REQUESTS_PER_CLIENT: usize = 20;
/// How often the pool check samples `pg_stat_activity`.
const POLL: Duration = Duration::from_millis(2);

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
