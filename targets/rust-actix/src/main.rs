//! rust-actix: the shootout API contract (see `../SPEC.md`) on actix-web 4
//! with one worker per CPU the server is given (`SERVER_CPUS`, else the CPUs
//! available to the process), actix-web's own default rule. file_read and
//! bcrypt run on the worker's blocking pool (`web::block`), as actix-web's
//! docs ask for blocking work. The database routes use
//! tokio-postgres through one deadpool-postgres pool of `DB_POOL_SIZE`
//! connections shared by all workers, and render fortunes with askama.
//! `/ws` is a WebSocket echo through actix-ws, the crate actix-web's docs
//! point to for WebSockets, with its frame limit raised to 1 MiB.

use std::{collections::HashMap, env, fmt, io, path::PathBuf, time::Duration};

use actix_web::{
    error, get,
    http::{header, StatusCode},
    middleware, post,
    rt::time::sleep,
    web, App, HttpRequest, HttpResponse, HttpServer, Responder, ResponseError,
};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, ProtocolError};
use askama::Template;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use rand::Rng;
use serde::{Deserialize, Serialize};
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

#[get("/plaintext")]
async fn plaintext() -> impl Responder {
    HttpResponse::Ok()
        .content_type("text/plain")
        .body("Hello, World!")
}

#[get("/json")]
async fn json() -> impl Responder {
    web::Json(Message {
        message: "Hello, World!",
    })
}

#[get("/file_read")]
async fn file_read() -> actix_web::Result<impl Responder> {
    // Opening and reading a file blocks: keep it off the worker's event loop.
    let rows = web::block(count_rows)
        .await?
        .map_err(error::ErrorInternalServerError)?;
    Ok(web::Json(FileRead {
        message: "file_read",
        rows,
    }))
}

#[get("/wait_time")]
async fn wait_time() -> impl Responder {
    sleep(Duration::from_secs(1)).await;
    web::Json(Message {
        message: "time_sleep",
    })
}

#[post("/test/simple")]
async fn simple(body: web::Json<Payload>) -> impl Responder {
    web::Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

#[post("/test/timed")]
async fn timed(body: web::Json<Payload>) -> impl Responder {
    sleep(Duration::from_millis(20)).await;
    web::Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

#[post("/test/bcrypt")]
async fn bcrypt_hash(body: web::Json<Payload>) -> actix_web::Result<impl Responder> {
    let payload = web::block(move || bcrypt::hash(body.into_inner().payload, 10))
        .await?
        .map_err(error::ErrorInternalServerError)?;
    Ok(web::Json(Payload { payload }))
}

// ---- WebSocket echo ----------------------------------------------------------

/// The largest message `/ws` echoes (SPEC.md "WebSocket"): 1 MiB, both for one
/// frame (actix-http's codec defaults to 64 KiB) and for a fragmented message
/// (actix-ws aggregates continuations up to 1 MiB by default; set anyway).
const WS_MAX_MESSAGE: usize = 1024 * 1024;

/// The close code for a frame actix-ws refused: 1007 for a text frame that is
/// not UTF-8, 1009 for a message over the limit, 1002 for the rest (reserved
/// bits also come as `InvalidData`, so only a `Utf8Error` inside means 1007).
fn ws_close_reason(err: &ProtocolError) -> CloseReason {
    let not_utf8 = |io: &io::Error| {
        io.get_ref()
            .is_some_and(|inner| inner.is::<std::str::Utf8Error>())
    };
    let code = match err {
        ProtocolError::Io(io) if not_utf8(io) => CloseCode::Invalid,
        ProtocolError::Overflow => CloseCode::Size,
        _ => CloseCode::Protocol,
    };
    code.into()
}

/// `GET /ws`: echoes every text and binary message as one message of the same
/// type, answers pings with pongs and a close with the same close, as in
/// actix-ws's `handle` example (https://docs.rs/actix-ws/0.4.0/actix_ws/fn.handle.html).
#[get("/ws")]
async fn ws(req: HttpRequest, body: web::Payload) -> actix_web::Result<HttpResponse> {
    let (response, mut session, stream) = actix_ws::handle(&req, body)?;
    let mut stream = stream
        .max_frame_size(WS_MAX_MESSAGE)
        .aggregate_continuations()
        .max_continuation_size(WS_MAX_MESSAGE);
    actix_web::rt::spawn(async move {
        let reason = loop {
            let sent = match stream.recv().await {
                Some(Ok(AggregatedMessage::Text(text))) => session.text(text).await,
                Some(Ok(AggregatedMessage::Binary(bytes))) => session.binary(bytes).await,
                Some(Ok(AggregatedMessage::Ping(bytes))) => session.pong(&bytes).await,
                Some(Ok(AggregatedMessage::Pong(_))) => Ok(()),
                Some(Ok(AggregatedMessage::Close(reason))) => break reason,
                Some(Err(err)) => break Some(ws_close_reason(&err)),
                // The client went away without a close frame.
                None => break None,
            };
            if sent.is_err() {
                return;
            }
        };
        let _ = session.close(reason).await;
    });
    Ok(response)
}

// ---- database routes -------------------------------------------------------

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// One batched UPDATE for all rows of a request; the ids arrive sorted.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = new.randomnumber \
     FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) \
     WHERE world.id = new.id";

/// `None` when the server runs without `DATABASE_URL`.
type Db = web::Data<Option<Pool>>;

/// A database route's failure: 503 without a database, 500 when a query fails.
#[derive(Debug)]
struct DbError(StatusCode, &'static str);

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.1)
    }
}

impl ResponseError for DbError {
    fn status_code(&self) -> StatusCode {
        self.0
    }

    fn error_response(&self) -> HttpResponse {
        HttpResponse::build(self.0)
            .content_type("text/plain")
            .body(self.1)
    }
}

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
/// connections for the whole server, shared by every worker. Connections
/// open on first use.
fn pool_from_env() -> Option<Pool> {
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
            eprintln!("rust-actix: DATABASE_URL is not a PostgreSQL URL: {err}");
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
            eprintln!("rust-actix: database pool of {size} connections");
            Some(pool)
        }
        Err(err) => {
            eprintln!("rust-actix: cannot build the database pool: {err}");
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

async fn connection(pool: &Db) -> Result<Object, DbError> {
    let pool = pool.get_ref().as_ref().ok_or(DbError(
        StatusCode::SERVICE_UNAVAILABLE,
        "no database configured",
    ))?;
    pool.get()
        .await
        .map_err(|_| DbError(StatusCode::SERVICE_UNAVAILABLE, "database unavailable"))
}

fn query_failed<E>(_: E) -> DbError {
    DbError(StatusCode::INTERNAL_SERVER_ERROR, "database query failed")
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

#[get("/db")]
async fn db(pool: Db) -> Result<web::Json<World>, DbError> {
    let id = random_id(&mut rand::rng());
    let client = connection(&pool).await?;
    let mut worlds = read_worlds(&client, &[id]).await?;
    Ok(web::Json(worlds.remove(0)))
}

#[get("/queries")]
async fn queries(
    pool: Db,
    params: web::Query<HashMap<String, String>>,
) -> Result<web::Json<Vec<World>>, DbError> {
    let ids: Vec<i32> = {
        let mut rng = rand::rng();
        (0..query_count(&params))
            .map(|_| random_id(&mut rng))
            .collect()
    };
    let client = connection(&pool).await?;
    Ok(web::Json(read_worlds(&client, &ids).await?))
}

#[get("/fortunes")]
async fn fortunes(pool: Db) -> Result<HttpResponse, DbError> {
    let client = connection(&pool).await?;
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
    .map_err(|_| DbError(StatusCode::INTERNAL_SERVER_ERROR, "template failed"))?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(html))
}

#[get("/updates")]
async fn updates(
    pool: Db,
    params: web::Query<HashMap<String, String>>,
) -> Result<web::Json<Vec<World>>, DbError> {
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
    let client = connection(&pool).await?;
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
    Ok(web::Json(worlds))
}

/// The CPUs this server may use: `SERVER_CPUS` when the runner sets it (see
/// `../SPEC.md`), else the CPUs available to the process, which is what
/// actix-server counts by default (`std::thread::available_parallelism`).
fn server_cpus() -> usize {
    match env::var("SERVER_CPUS") {
        Ok(raw) => match raw.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("rust-actix: SERVER_CPUS must be a positive integer, got {raw:?}");
                std::process::exit(2);
            }
        },
        Err(_) => std::thread::available_parallelism().map_or(1, usize::from),
    }
}

/// Plain-text 404 (actix-web's default one has no body and no content type).
async fn not_found() -> impl Responder {
    HttpResponse::NotFound()
        .content_type("text/plain")
        .body("Not Found")
}

#[actix_web::main]
async fn main() -> io::Result<()> {
    let Ok(port) = env::var("PORT") else {
        eprintln!("rust-actix: the PORT environment variable is required");
        std::process::exit(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("rust-actix: PORT must be a port number, got {port:?}");
        std::process::exit(2);
    };
    let host = env::var("HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());
    let workers = server_cpus();
    eprintln!("rust-actix: listening on {host}:{port} with {workers} workers");

    let pool = web::Data::new(pool_from_env());
    let server = HttpServer::new(move || {
        App::new()
            // SPEC.md: Server on every response, the default service's 404
            // included; actix-web adds Date itself.
            .wrap(middleware::DefaultHeaders::new().add((header::SERVER, "actix-web")))
            .app_data(pool.clone())
            .service(plaintext)
            .service(json)
            .service(file_read)
            .service(wait_time)
            .service(simple)
            .service(timed)
            .service(bcrypt_hash)
            .service(db)
            .service(queries)
            .service(fortunes)
            .service(updates)
            .service(ws)
            .default_service(web::to(not_found))
    })
    .workers(workers)
    .bind((host.as_str(), port))?;
    // SPEC.md "TLS": the same workers also serve TLS_PORT through rustls
    // (HttpServer::bind_rustls_0_23, which adds the h2 and http/1.1 ALPN
    // ids: https://docs.rs/actix-web/4/actix_web/struct.HttpServer.html#method.bind_rustls_0_23).
    let server = match rust_tls::from_env("rust-actix") {
        Some((tls_port, config)) => {
            eprintln!("rust-actix: TLS on {host}:{tls_port}");
            server.bind_rustls_0_23((host.as_str(), tls_port), config)?
        }
        None => server,
    };
    server.run().await
}
