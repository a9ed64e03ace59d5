//! rust-axum: the shootout API contract (see `../SPEC.md`) on axum 0.8 and
//! the tokio multi-threaded runtime, whose worker threads the manifest sets
//! to `SERVER_CPUS` through tokio's `TOKIO_WORKER_THREADS` (tokio's default,
//! one per CPU available, when it is unset). file_read and bcrypt block, so
//! they run on tokio's blocking pool (`spawn_blocking`). The database routes use tokio-postgres
//! through one deadpool-postgres pool of `DB_POOL_SIZE` connections shared by
//! every task, and render fortunes with askama. `/ws` is a WebSocket echo
//! through axum's own `ws` feature (`axum::extract::ws`, tokio-tungstenite),
//! whose default limits (64 MiB messages, 16 MiB frames) are above 1 MiB.

use std::{collections::HashMap, env, path::PathBuf, sync::Arc, time::Duration};

use askama::Template;
use axum::{
    extract::{
        ws::{self, WebSocket, WebSocketUpgrade},
        Query, State,
    },
    http::{header, HeaderValue, StatusCode},
    middleware,
    response::{Html, Response},
    routing::{get, post},
    Json, Router,
};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use rand::Rng;
use serde::{Deserialize, Serialize};
use tokio::{net::TcpListener, task, time::sleep};
use tokio_postgres::NoTls;

#[derive(Serialize)]
struct Message {
    message: &'static str,
}

#[derive(Serialize)]
struct FileRead {
    message: &'static str,
    rows: usize,
}

#[derive(Deserialize, Serialize)]
struct Payload {
    payload: String,
}

/// `$DATA_DIR/titanic.csv`, or `../data/titanic.csv` relative to the folder.
fn csv_path() -> PathBuf {
    env::var_os("DATA_DIR")
        .map_or_else(|| PathBuf::from("../data"), PathBuf::from)
        .join("titanic.csv")
}

fn count_rows() -> csv::Result<usize> {
    let mut reader = csv::Reader::from_path(csv_path())?;
    let mut rows = 0;
    for record in reader.records() {
        record?;
        rows += 1;
    }
    Ok(rows)
}

fn internal_error<E: std::fmt::Display>(err: E) -> (StatusCode, String) {
    (StatusCode::INTERNAL_SERVER_ERROR, err.to_string())
}

async fn plaintext() -> &'static str {
    "Hello, World!"
}

async fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

async fn file_read() -> Result<Json<FileRead>, (StatusCode, String)> {
    // Opening and reading a file blocks: keep it off the runtime's workers.
    let rows = task::spawn_blocking(count_rows)
        .await
        .map_err(internal_error)?
        .map_err(internal_error)?;
    Ok(Json(FileRead {
        message: "file_read",
        rows,
    }))
}

async fn wait_time() -> Json<Message> {
    sleep(Duration::from_secs(1)).await;
    Json(Message {
        message: "time_sleep",
    })
}

async fn simple(Json(body): Json<Payload>) -> Json<Payload> {
    Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

async fn timed(Json(body): Json<Payload>) -> Json<Payload> {
    sleep(Duration::from_millis(20)).await;
    Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

async fn bcrypt_hash(Json(body): Json<Payload>) -> Result<Json<Payload>, (StatusCode, String)> {
    let payload = task::spawn_blocking(move || bcrypt::hash(body.payload, 10))
        .await
        .map_err(internal_error)?
        .map_err(internal_error)?;
    Ok(Json(Payload { payload }))
}

// ---- database routes -------------------------------------------------------

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// One batched UPDATE for all rows of a request; the ids arrive sorted.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = new.randomnumber \
     FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) \
     WHERE world.id = new.id";

/// `None` when the server runs without `DATABASE_URL`.
type Db = Option<Pool>;
type DbError = (StatusCode, &'static str);

#[derive(Serialize)]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

struct Fortune {
    id: i32,
    message: String,
}

#[derive(Template)]
#[template(path = "fortunes.html")]
struct FortunesTemplate<'a> {
    fortunes: &'a [Fortune],
}

/// The pool from `DATABASE_URL`, with at most `DB_POOL_SIZE` (default 4)
/// connections for the whole server. Connections open on first use.
fn pool_from_env() -> Db {
    let url = env::var("DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())?;
    let size = env::var("DB_POOL_SIZE")
        .ok()
        .and_then(|size| size.parse::<usize>().ok())
        .filter(|&size| size > 0)
        .unwrap_or(4);
    let config: tokio_postgres::Config = match url.parse() {
        Ok(config) => config,
        Err(err) => {
            eprintln!("rust-axum: DATABASE_URL is not a PostgreSQL URL: {err}");
            std::process::exit(2);
        }
    };
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    match Pool::builder(manager).max_size(size).build() {
        Ok(pool) => {
            eprintln!("rust-axum: database pool of {size} connections");
            Some(pool)
        }
        Err(err) => {
            eprintln!("rust-axum: cannot build the database pool: {err}");
            std::process::exit(2);
        }
    }
}

/// `queries` clamped to 1..=500; missing, empty or not an integer means 1.
fn query_count(params: &HashMap<String, String>) -> usize {
    let Some(raw) = params.get("queries") else {
        return 1;
    };
    match raw.parse::<i64>() {
        Ok(n) => n.clamp(1, 500) as usize,
        Err(_) => {
            // An integer too long for i64 still clamps.
            let digits = raw.strip_prefix(['-', '+']).unwrap_or(raw);
            let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            if integer && !raw.starts_with('-') {
                500
            } else {
                1
            }
        }
    }
}

fn random_id(rng: &mut impl Rng) -> i32 {
    rng.random_range(1..=10_000)
}

async fn connection(db: &Db) -> Result<Object, DbError> {
    let pool = db
        .as_ref()
        .ok_or((StatusCode::SERVICE_UNAVAILABLE, "no database configured"))?;
    pool.get()
        .await
        .map_err(|_| (StatusCode::SERVICE_UNAVAILABLE, "database unavailable"))
}

fn query_failed<E>(_: E) -> DbError {
    (StatusCode::INTERNAL_SERVER_ERROR, "database query failed")
}

/// Reads the rows with these ids, one query (prepared statement) each.
async fn read_worlds(client: &Object, ids: &[i32]) -> Result<Vec<World>, DbError> {
    let select = client
        .prepare_cached(SELECT_WORLD)
        .await
        .map_err(query_failed)?;
    let mut worlds = Vec::with_capacity(ids.len());
    for id in ids {
        let row = client
            .query_one(&select, &[id])
            .await
            .map_err(query_failed)?;
        worlds.push(World {
            id: row.get(0),
            random_number: row.get(1),
        });
    }
    Ok(worlds)
}

async fn db(State(db): State<Db>) -> Result<Json<World>, DbError> {
    let id = random_id(&mut rand::rng());
    let client = connection(&db).await?;
    let mut worlds = read_worlds(&client, &[id]).await?;
    Ok(Json(worlds.remove(0)))
}

async fn queries(
    State(db): State<Db>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Vec<World>>, DbError> {
    let ids: Vec<i32> = {
        let mut rng = rand::rng();
        (0..query_count(&params))
            .map(|_| random_id(&mut rng))
            .collect()
    };
    let client = connection(&db).await?;
    Ok(Json(read_worlds(&client, &ids).await?))
}

async fn fortunes(State(db): State<Db>) -> Result<Html<String>, DbError> {
    let client = connection(&db).await?;
    let select = client
        .prepare_cached(SELECT_FORTUNES)
        .await
        .map_err(query_failed)?;
    let rows = client.query(&select, &[]).await.map_err(query_failed)?;
    drop(client);
    let mut fortunes: Vec<Fortune> = rows
        .iter()
        .map(|row| Fortune {
            id: row.get(0),
            message: row.get(1),
        })
        .collect();
    fortunes.push(Fortune {
        id: 0,
        message: "Additional fortune added at request time.".to_owned(),
    });
    fortunes.sort_by(|a, b| a.message.cmp(&b.message));
    let html = FortunesTemplate {
        fortunes: &fortunes,
    }
    .render()
    .map_err(|_| (StatusCode::INTERNAL_SERVER_ERROR, "template failed"))?;
    Ok(Html(html))
}

async fn updates(
    State(db): State<Db>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<Vec<World>>, DbError> {
    // Distinct ids, so every answered row carries the value written for it;
    // sorted, so concurrent batched updates lock rows in the same order.
    let (mut ids, numbers): (Vec<i32>, Vec<i32>) = {
        let mut rng = rand::rng();
        let count = query_count(&params);
        let ids = rand::seq::index::sample(&mut rng, 10_000, count)
            .into_iter()
            .map(|index| index as i32 + 1)
            .collect();
        let numbers = (0..count).map(|_| random_id(&mut rng)).collect();
        (ids, numbers)
    };
    ids.sort_unstable();
    let client = connection(&db).await?;
    let mut worlds = read_worlds(&client, &ids).await?;
    for (world, number) in worlds.iter_mut().zip(&numbers) {
        world.random_number = *number;
    }
    let update = client
        .prepare_cached(UPDATE_WORLDS)
        .await
        .map_err(query_failed)?;
    client
        .execute(&update, &[&ids, &numbers])
        .await
        .map_err(query_failed)?;
    Ok(Json(worlds))
}

/// Plain-text 404 (axum's default one has no body and no content type).
async fn not_found() -> (StatusCode, &'static str) {
    (StatusCode::NOT_FOUND, "Not Found")
}

async fn method_not_allowed() -> (StatusCode, &'static str) {
    (StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
}

/// `GET /ws`: the WebSocket echo of SPEC.md "WebSocket", as in axum's
/// `extract::ws` docs (https://docs.rs/axum/0.8/axum/extract/ws/index.html).
/// Its default limits, tungstenite's `WebSocketConfig` (64 MiB messages,
/// 16 MiB frames), are above the 1 MiB asked for, so none is set.
async fn ws_upgrade(upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(ws_echo)
}

/// Sends every text and binary message back as it came. tungstenite answers
/// pings with pongs and a close with the same close (sent by the next
/// `recv`, which then ends the stream), and a protocol error with close 1002.
async fn ws_echo(mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        if let ws::Message::Text(_) | ws::Message::Binary(_) = message {
            if socket.send(message).await.is_err() {
                return;
            }
        }
    }
}

/// SPEC.md: Server on every response; hyper adds Date itself.
async fn server_header(mut res: Response) -> Response {
    res.headers_mut()
        .insert(header::SERVER, HeaderValue::from_static("axum"));
    res
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let Ok(port) = env::var("PORT") else {
        eprintln!("rust-axum: the PORT environment variable is required");
        std::process::exit(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("rust-axum: PORT must be a port number, got {port:?}");
        std::process::exit(2);
    };
    let host = env::var("HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());

    let app = Router::new()
        .route("/plaintext", get(plaintext))
        .route("/json", get(json))
        .route("/file_read", get(file_read))
        .route("/wait_time", get(wait_time))
        .route("/test/simple", post(simple))
        .route("/test/timed", post(timed))
        .route("/test/bcrypt", post(bcrypt_hash))
        .route("/db", get(db))
        .route("/queries", get(queries))
        .route("/fortunes", get(fortunes))
        .route("/updates", get(updates))
        .route("/ws", get(ws_upgrade))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // A router-wide layer, so the fallbacks' answers get it too.
        .layer(middleware::map_response(server_header))
        .with_state(pool_from_env());

    // SPEC.md "TLS": the same router on TLS_PORT through axum-server with
    // rustls, as axum's tls-rustls example does
    // (https://github.com/tokio-rs/axum/tree/main/examples/tls-rustls);
    // axum-server serves h2 or http/1.1 as ALPN chose.
    if let Some((tls_port, config)) = rust_tls::from_env("rust-axum") {
        let addr = tokio::net::lookup_host((host.as_str(), tls_port))
            .await?
            .next()
            .ok_or_else(|| std::io::Error::other(format!("no address for {host}")))?;
        let config = axum_server::tls_rustls::RustlsConfig::from_config(Arc::new(config));
        let tls = axum_server::bind_rustls(addr, config).serve(app.clone().into_make_service());
        eprintln!("rust-axum: TLS on {addr}");
        tokio::spawn(async move {
            if let Err(e) = tls.await {
                eprintln!("rust-axum: TLS port: {e}");
                std::process::exit(1);
            }
        });
    }
    let listener = TcpListener::bind((host.as_str(), port)).await?;
    eprintln!("rust-axum: listening on {}", listener.local_addr()?);
    axum::serve(listener, app).await
}
