//! An in-process server of the database routes for the verifier's tests:
//! it really reads and writes the database through a small pool of
//! `postgres` connections, correctly or with one deliberate [`Flaw`], and
//! answers every other route like `fake::correct`. Dropping the [`DbFake`]
//! closes its connections, so the next test's pool count starts from zero.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};

use postgres::{Client, NoTls};

use super::fake::{correct, serve, Reply, Req};
use super::fortunes::ADDED;
use super::payload::random_below;
use crate::database::WORLD_ROWS;
use shootout_contract::spec::clamp_queries;

/// What the fake does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    None,
    /// `/queries` reads all its rows with one `WHERE id = ANY(...)`.
    InQueries,
    /// `/db` answers from a copy of `world` loaded at start.
    CachedDb,
    /// `/db` always reads id 1.
    FixedId,
    /// `/db` reads its row but answers another number.
    InventedValues,
    /// `/db` answers `{"id": N, "randomNumber": M}` with spaces.
    SpacedJson,
    /// `queries=Q` is not clamped (0 gives 0 rows, 501 gives 501).
    NoClamp,
    /// `/fortunes` reads the table once, at start.
    CachedFortunes,
    /// `/fortunes` does not escape messages.
    UnescapedFortune,
    /// `/fortunes` sorts like a locale: case and punctuation ignored.
    LocaleSort,
    /// `/fortunes` says `text/html` without a charset.
    NoCharset,
    /// `/updates` answers new values but never writes them.
    UnwrittenUpdates,
    /// Not a flaw: `/updates` writes one UPDATE per drawn id instead of
    /// one batch, which TechEmpower counts as twice the queries.
    PerRowUpdates,
    /// `/updates` writes an id drawn twice in one request once, one UPDATE
    /// per distinct id (java-spring's way). The first id is drawn twice in
    /// every request, so the flaw shows on every run rather than on the
    /// few random repeats of 10 240 draws.
    DedupUpdates,
    /// A pool of 8 x `pool_size`, like 8 workers each taking the whole
    /// `DB_POOL_SIZE` instead of their share.
    PoolPerWorker,
    /// `/db` answers 503 when every connection is busy instead of waiting.
    NoQueueing,
}

/// A running fake; dropping it closes its database connections.
#[derive(Debug)]
pub struct DbFake {
    pub addr: SocketAddr,
    pool: Arc<Pool>,
}

impl Drop for DbFake {
    fn drop(&mut self) {
        self.pool.close();
    }
}

/// Serves the database routes against `app_url` with at most `pool_size`
/// connections (unless the flaw is `PoolPerWorker`).
pub fn serve_db(app_url: &str, pool_size: u32, flaw: Flaw) -> DbFake {
    let size = match flaw {
        Flaw::PoolPerWorker => 8 * pool_size as usize,
        _ => pool_size as usize,
    };
    let pool = Arc::new(Pool::new(app_url, size));
    let world = match flaw {
        Flaw::CachedDb => pool.with(|c| query_pairs(c, "SELECT id, randomnumber FROM world")),
        _ => Vec::new(),
    };
    let fortunes = match flaw {
        Flaw::CachedFortunes => pool.with(read_fortunes),
        _ => Vec::new(),
    };
    let state = State {
        pool: Arc::clone(&pool),
        flaw,
        world: world.into_iter().collect(),
        fortunes,
    };
    let addr = serve(move |req| handle(&state, req), false);
    DbFake { addr, pool }
}

struct State {
    pool: Arc<Pool>,
    flaw: Flaw,
    world: HashMap<i32, i32>,
    fortunes: Vec<(i32, String)>,
}

fn handle(state: &State, req: &Req) -> Reply {
    let (path, query) = req.path.split_once('?').unwrap_or((req.path.as_str(), ""));
    let param = query.split('&').find_map(|kv| kv.strip_prefix("queries="));
    let q = match state.flaw {
        Flaw::NoClamp => param.and_then(|p| p.parse().ok()).unwrap_or(1),
        _ => clamp_queries(param),
    };
    match path {
        "/db" if state.flaw == Flaw::NoQueueing && state.pool.busy() => {
            Reply::new(503, "text/plain", "pool exhausted")
        }
        "/db" => Reply::json(db(state)),
        "/queries" => Reply::json(rows_json(&queries(state, q))),
        "/fortunes" => fortunes(state),
        "/updates" => Reply::json(rows_json(&updates(state, q))),
        _ => correct(req),
    }
}

fn random_id() -> i32 {
    1 + random_below(WORLD_ROWS as u64) as i32
}

fn db(state: &State) -> String {
    let id = random_id();
    let (id, n) = match state.flaw {
        Flaw::CachedDb => (id, state.world[&id]),
        Flaw::FixedId => state.pool.with(|c| read_world(c, 1)),
        Flaw::InventedValues => {
            let (id, n) = state.pool.with(|c| read_world(c, id));
            (id, n % WORLD_ROWS + 1)
        }
        _ => state.pool.with(|c| read_world(c, id)),
    };
    match state.flaw {
        Flaw::SpacedJson => format!(r#"{{"id": {id}, "randomNumber": {n}}}"#),
        _ => format!(r#"{{"id":{id},"randomNumber":{n}}}"#),
    }
}

fn queries(state: &State, q: usize) -> Vec<(i32, i32)> {
    let ids: Vec<i32> = (0..q).map(|_| random_id()).collect();
    state.pool.with(|c| match state.flaw {
        Flaw::InQueries => {
            let sql = "SELECT id, randomnumber FROM world WHERE id = ANY($1)";
            let rows = c.query(sql, &[&ids]).expect("select");
            let found: HashMap<i32, i32> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
            ids.iter().map(|id| (*id, found[id])).collect()
        }
        _ => ids.iter().map(|&id| read_world(c, id)).collect(),
    })
}

fn updates(state: &State, q: usize) -> Vec<(i32, i32)> {
    // One read per row even with `InQueries`, whose flaw is `/queries`'.
    let ids: Vec<i32> = (0..q).map(|_| random_id()).collect();
    let mut read: Vec<(i32, i32)> = state
        .pool
        .with(|c| ids.iter().map(|&id| read_world(c, id)).collect());
    if state.flaw == Flaw::DedupUpdates && read.len() > 1 {
        read[1] = read[0];
    }
    let rows: Vec<(i32, i32)> = read.into_iter().map(|(id, _)| (id, random_id())).collect();
    match state.flaw {
        Flaw::UnwrittenUpdates => {}
        Flaw::PerRowUpdates => state.pool.with(|c| update_each(c, &rows)),
        Flaw::DedupUpdates => {
            let mut seen = std::collections::HashSet::new();
            let distinct: Vec<_> = rows.iter().filter(|r| seen.insert(r.0)).copied().collect();
            state.pool.with(|c| update_each(c, &distinct));
        }
        _ => state.pool.with(|c| update_batch(c, &rows)),
    }
    rows
}

/// One UPDATE for all rows; sorted by id so that concurrent batches lock
/// rows in one order. The SQL says no `select`, which TechEmpower's count
/// of rows read would take it for.
fn update_batch(c: &mut Client, rows: &[(i32, i32)]) {
    let mut sorted = rows.to_vec();
    sorted.sort();
    let (ids, values): (Vec<i32>, Vec<i32>) = sorted.into_iter().unzip();
    let sql = "UPDATE world SET randomnumber = v.r \
               FROM unnest($1::int[], $2::int[]) AS v(id, r) \
               WHERE world.id = v.id";
    c.execute(sql, &[&ids, &values]).expect("update");
}

/// One autocommitted UPDATE per row, so no two requests deadlock.
fn update_each(c: &mut Client, rows: &[(i32, i32)]) {
    let sql = "UPDATE world SET randomnumber = $2 WHERE id = $1";
    for (id, value) in rows {
        c.execute(sql, &[id, value]).expect("update");
    }
}

fn fortunes(state: &State) -> Reply {
    let mut rows = match state.flaw {
        Flaw::CachedFortunes => state.fortunes.clone(),
        _ => state.pool.with(read_fortunes),
    };
    rows.push((ADDED.0, ADDED.1.to_owned()));
    match state.flaw {
        Flaw::LocaleSort => rows.sort_by_key(|(_, m)| locale_key(m)),
        _ => rows.sort_by(|a, b| a.1.cmp(&b.1)),
    }
    let content_type = match state.flaw {
        Flaw::NoCharset => "text/html",
        _ => "text/html; charset=utf-8",
    };
    let escape = state.flaw != Flaw::UnescapedFortune;
    Reply::new(200, content_type, fortunes_page(&rows, escape))
}

/// Roughly glibc's first collation level: letters and digits only, case
/// folded, so "A list" sorts after "Additional" and `<script>` after "f".
fn locale_key(message: &str) -> String {
    message
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A page with newlines between tags and `&#34;`/`&#39;` entities, which
/// the verifier must accept as equivalent to SPEC.md's rendering.
fn fortunes_page(rows: &[(i32, String)], escape: bool) -> String {
    let mut page = String::from("<!DOCTYPE html>\n<html>\n<head><title>Fortunes</title></head>\n<body>\n<table>\n<tr><th>id</th><th>message</th></tr>\n");
    for (id, message) in rows {
        let text = match escape {
            true => html_escape(message),
            false => message.clone(),
        };
        page.push_str(&format!("<tr><td>{id}</td><td>{text}</td></tr>\n"));
    }
    page.push_str("</table>\n</body>\n</html>\n");
    page
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

fn rows_json(rows: &[(i32, i32)]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|(id, n)| format!(r#"{{"id":{id},"randomNumber":{n}}}"#))
        .collect();
    format!("[{}]", items.join(","))
}

fn read_world(c: &mut Client, id: i32) -> (i32, i32) {
    let sql = "SELECT id, randomnumber FROM world WHERE id = $1";
    let row = c.query_one(sql, &[&id]).expect("select");
    (row.get(0), row.get(1))
}

fn read_fortunes(c: &mut Client) -> Vec<(i32, String)> {
    let rows = c
        .query("SELECT id, message FROM fortune", &[])
        .expect("select");
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

fn query_pairs(c: &mut Client, sql: &str) -> Vec<(i32, i32)> {
    let rows = c.query(sql, &[]).expect("select");
    rows.iter().map(|r| (r.get(0), r.get(1))).collect()
}

/// At most `size` connections, opened when needed and kept, handed out one
/// per request.
#[derive(Debug)]
struct Pool {
    url: String,
    size: usize,
    state: Mutex<Idle>,
    freed: Condvar,
}

#[derive(Default)]
struct Idle {
    clients: Vec<Client>,
    open: usize,
    closed: bool,
}

impl std::fmt::Debug for Idle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Idle({} idle, {} open)", self.clients.len(), self.open)
    }
}

impl Pool {
    fn new(url: &str, size: usize) -> Pool {
        Pool {
            url: url.to_owned(),
            size: size.max(1),
            state: Mutex::new(Idle::default()),
            freed: Condvar::new(),
        }
    }

    fn connect(&self) -> Client {
        Client::connect(&self.url, NoTls).expect("fake server connects")
    }

    fn with<T>(&self, f: impl FnOnce(&mut Client) -> T) -> T {
        let mut client = self.checkout();
        let out = f(&mut client);
        let mut idle = self.state.lock().expect("pool");
        match idle.closed {
            true => idle.open -= 1,
            false => idle.clients.push(client),
        }
        self.freed.notify_one();
        out
    }

    /// Every connection is open and in use.
    fn busy(&self) -> bool {
        let idle = self.state.lock().expect("pool");
        idle.clients.is_empty() && idle.open >= self.size
    }

    fn checkout(&self) -> Client {
        let mut idle = self.state.lock().expect("pool");
        loop {
            if let Some(c) = idle.clients.pop() {
                return c;
            }
            if idle.open < self.size {
                idle.open += 1;
                drop(idle);
                return self.connect();
            }
            idle = self.freed.wait(idle).expect("pool");
        }
    }

    fn close(&self) {
        let mut idle = self.state.lock().expect("pool");
        idle.closed = true;
        let n = idle.clients.len();
        idle.clients.clear();
        idle.open -= n;
    }
}
