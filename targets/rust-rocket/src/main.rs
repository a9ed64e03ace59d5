//! rust-rocket: the shootout API contract (see `../SPEC.md`) on Rocket 0.5
//! with its default configuration, except for the address, the port and
//! logging, which is off, and `workers`, which the manifest sets to
//! `SERVER_CPUS` through `ROCKET_WORKERS` (Rocket's default, one per CPU
//! available, when it is unset). file_read and bcrypt block, so they run on
//! tokio's blocking pool (`spawn_blocking`). The database routes use rocket_db_pools with its
//! deadpool_postgres driver (one pool of `DB_POOL_SIZE` connections) and
//! render fortunes with rocket_dyn_templates (Tera). `/ws` is a WebSocket
//! echo through rocket_ws, Rocket's WebSocket crate, whose default limits
//! (tungstenite's: 64 MiB messages, 16 MiB frames) are above 1 MiB.

#[macro_use]
extern crate rocket;

use std::{env, path::PathBuf, time::Duration};

use rand::Rng;
use rocket::{
    config::LogLevel,
    http::Status,
    serde::{json::Json, Deserialize, Serialize},
    tokio::{task, time::sleep},
    Build, Config, Rocket,
};
use rocket_db_pools::{deadpool_postgres, Connection, Database};
use rocket_dyn_templates::{context, Template};

#[derive(Serialize)]
#[serde(crate = "rocket::serde")]
struct Message {
    message: &'static str,
}

#[derive(Serialize)]
#[serde(crate = "rocket::serde")]
struct FileRead {
    message: &'static str,
    rows: usize,
}

#[derive(Deserialize, Serialize)]
#[serde(crate = "rocket::serde")]
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
fn plaintext() -> &'static str {
    "Hello, World!"
}

#[get("/json")]
fn json() -> Json<Message> {
    Json(Message {
        message: "Hello, World!",
    })
}

#[get("/file_read")]
async fn file_read() -> Result<Json<FileRead>, Status> {
    // Opening and reading a file blocks: Rocket's guide sends blocking work
    // to tokio's blocking pool rather than the async workers.
    let rows = task::spawn_blocking(count_rows)
        .await
        .map_err(|_| Status::InternalServerError)?
        .map_err(|_| Status::InternalServerError)?;
    Ok(Json(FileRead {
        message: "file_read",
        rows,
    }))
}

#[get("/wait_time")]
async fn wait_time() -> Json<Message> {
    sleep(Duration::from_secs(1)).await;
    Json(Message {
        message: "time_sleep",
    })
}

#[post("/test/simple", data = "<body>")]
fn simple(body: Json<Payload>) -> Json<Payload> {
    Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

#[post("/test/timed", data = "<body>")]
async fn timed(body: Json<Payload>) -> Json<Payload> {
    sleep(Duration::from_millis(20)).await;
    Json(Payload {
        payload: format!("Hello, {}", body.payload),
    })
}

#[post("/test/bcrypt", data = "<body>")]
async fn bcrypt_hash(body: Json<Payload>) -> Result<Json<Payload>, Status> {
    let payload = task::spawn_blocking(move || bcrypt::hash(body.into_inner().payload, 10))
        .await
        .map_err(|_| Status::InternalServerError)?
        .map_err(|_| Status::InternalServerError)?;
    Ok(Json(Payload { payload }))
}

// ---- database routes -------------------------------------------------------

const SELECT_WORLD: &str = "SELECT id, randomnumber FROM world WHERE id = $1";
const SELECT_FORTUNES: &str = "SELECT id, message FROM fortune";
/// One batched UPDATE for all rows of a request; the ids arrive sorted.
const UPDATE_WORLDS: &str = "UPDATE world SET randomnumber = new.randomnumber \
     FROM UNNEST($1::int[], $2::int[]) AS new(id, randomnumber) \
     WHERE world.id = new.id";

/// The pool, configured at launch from `DATABASE_URL` and `DB_POOL_SIZE`.
#[derive(Database)]
#[database("hello_world")]
struct Db(deadpool_postgres::Pool);

#[derive(Serialize)]
#[serde(crate = "rocket::serde")]
struct World {
    id: i32,
    #[serde(rename = "randomNumber")]
    random_number: i32,
}

#[derive(Serialize)]
#[serde(crate = "rocket::serde")]
struct Fortune {
    id: i32,
    message: String,
}

/// `queries` clamped to 1..=500; missing, empty or not an integer means 1.
fn query_count(raw: Option<&str>) -> usize {
    let Some(raw) = raw else {
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

fn query_failed<E>(_: E) -> Status {
    Status::InternalServerError
}

/// Reads the rows with these ids, one query (prepared statement) each.
async fn read_worlds(client: &Connection<Db>, ids: &[i32]) -> Result<Vec<World>, Status> {
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
async fn db(client: Connection<Db>) -> Result<Json<World>, Status> {
    let id = random_id(&mut rand::rng());
    let mut worlds = read_worlds(&client, &[id]).await?;
    Ok(Json(worlds.remove(0)))
}

#[get("/queries?<queries>")]
async fn queries(
    client: Connection<Db>,
    queries: Option<&str>,
) -> Result<Json<Vec<World>>, Status> {
    let ids: Vec<i32> = {
        let mut rng = rand::rng();
        (0..query_count(queries))
            .map(|_| random_id(&mut rng))
            .collect()
    };
    Ok(Json(read_worlds(&client, &ids).await?))
}

#[get("/fortunes")]
async fn fortunes(client: Connection<Db>) -> Result<Template, Status> {
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
    Ok(Template::render("fortunes", context! { fortunes }))
}

#[get("/updates?<queries>")]
async fn updates(
    client: Connection<Db>,
    queries: Option<&str>,
) -> Result<Json<Vec<World>>, Status> {
    // Distinct ids, so every answered row carries the value written for it;
    // sorted, so concurrent batched updates lock rows in the same order.
    let (mut ids, numbers): (Vec<i32>, Vec<i32>) = {
        let mut rng = rand::rng();
        let count = query_count(queries);
        let ids = rand::seq::index::sample(&mut rng, 10_000, count)
            .into_iter()
            .map(|index| index as i32 + 1)
            .collect();
        let numbers = (0..count).map(|_| random_id(&mut rng)).collect();
        (ids, numbers)
    };
    ids.sort_unstable();
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

/// `GET /ws`: the WebSocket echo of SPEC.md "WebSocket", a `Channel` as in
/// rocket_ws's echo example (https://api.rocket.rs/v0.5/rocket_ws/), sending
/// back only text and binary messages: tungstenite answers pings with pongs
/// and a close with the same close itself, and ends the stream on a protocol
/// error. Its default `Config` limits are above the 1 MiB asked for.
#[get("/ws")]
fn ws_echo(ws: rocket_ws::WebSocket) -> rocket_ws::Channel<'static> {
    use rocket::futures::{SinkExt, StreamExt};

    ws.channel(move |mut stream| {
        Box::pin(async move {
            while let Some(message) = stream.next().await {
                let message = message?;
                if message.is_text() || message.is_binary() {
                    stream.send(message).await?;
                }
            }
            Ok(())
        })
    })
}

/// The database routes of a server started without `DATABASE_URL`: the real
/// ones would abort launch (their `Connection<Db>` guard is a sentinel for
/// the pool's fairing, which cannot start without a URL).
mod no_database {
    use rocket::http::Status;

    #[get("/db")]
    pub fn db() -> Status {
        Status::ServiceUnavailable
    }

    #[get("/queries")]
    pub fn queries() -> Status {
        Status::ServiceUnavailable
    }

    #[get("/fortunes")]
    pub fn fortunes() -> Status {
        Status::ServiceUnavailable
    }

    #[get("/updates")]
    pub fn updates() -> Status {
        Status::ServiceUnavailable
    }
}

/// The TLS port of `../SPEC.md` "TLS": `TLS_PORT`, `TLS_CERT`, `TLS_KEY` and
/// the optional `TLS_CLIENT_CA`, or None when they are not all set.
struct Tls {
    port: u16,
    certs: String,
    key: String,
    client_ca: Option<String>,
}

fn tls_from_env() -> Option<Tls> {
    let (Ok(port), Ok(certs), Ok(key)) = (
        env::var("TLS_PORT"),
        env::var("TLS_CERT"),
        env::var("TLS_KEY"),
    ) else {
        return None;
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("rust-rocket: TLS_PORT must be a port number, got {port:?}");
        std::process::exit(2);
    };
    let client_ca = env::var("TLS_CLIENT_CA").ok();
    Some(Tls {
        port,
        certs,
        key,
        client_ca,
    })
}

/// Rocket 0.5 serves one address and port per instance, and its `tls`
/// configuration makes that listener TLS (Rocket guide, Configuration, TLS
/// and Mutual TLS, https://rocket.rs/guide/v0.5/configuration/#tls), so with
/// `TLS_PORT` the process launches a second instance of the same routes on
/// it, in the same runtime. The two split `DB_POOL_SIZE` (the cleartext one
/// gets the larger half) so that the total stays within it.
#[rocket::main]
async fn main() -> Result<(), rocket::Error> {
    let Ok(port) = env::var("PORT") else {
        eprintln!("rust-rocket: the PORT environment variable is required");
        std::process::exit(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("rust-rocket: PORT must be a port number, got {port:?}");
        std::process::exit(2);
    };
    let host = env::var("HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());
    let pool = env::var("DB_POOL_SIZE")
        .ok()
        .and_then(|size| size.parse::<usize>().ok())
        .filter(|&size| size > 0)
        .unwrap_or(4);
    let Some(tls) = tls_from_env() else {
        instance(&host, port, pool, None).launch().await?;
        return Ok(());
    };
    if pool < 2 {
        eprintln!("rust-rocket: DB_POOL_SIZE={pool} cannot be split between the cleartext and the TLS instance");
        std::process::exit(2);
    }
    let tls_pool = pool / 2;
    let clear = instance(&host, port, pool - tls_pool, None).launch();
    let secure = instance(&host, tls.port, tls_pool, Some(&tls)).launch();
    rocket::tokio::try_join!(clear, secure)?;
    Ok(())
}

/// One Rocket instance of every route on `host:port`, TLS with `tls`.
fn instance(host: &str, port: u16, pool: usize, tls: Option<&Tls>) -> Rocket<Build> {
    eprintln!(
        "rust-rocket: listening on {host}:{port}{}",
        if tls.is_some() { " (TLS)" } else { "" }
    );
    let mut figment = Config::figment()
        .merge(("address", host))
        .merge(("port", port))
        .merge(("log_level", LogLevel::Off));
    if let Some(tls) = tls {
        figment = figment
            .merge(("tls.certs", &tls.certs))
            .merge(("tls.key", &tls.key));
        if let Some(ca) = &tls.client_ca {
            figment = figment
                .merge(("tls.mutual.ca_certs", ca))
                .merge(("tls.mutual.mandatory", true));
        }
    }
    let database_url = env::var("DATABASE_URL").ok().filter(|url| !url.is_empty());
    if let Some(url) = &database_url {
        eprintln!("rust-rocket: database pool of {pool} connections");
        figment = figment
            .merge(("databases.hello_world.url", url))
            .merge(("databases.hello_world.max_connections", pool));
    }
    let rocket = rocket::custom(figment).mount(
        "/",
        routes![
            plaintext,
            json,
            file_read,
            wait_time,
            simple,
            timed,
            bcrypt_hash,
            ws_echo
        ],
    );
    if database_url.is_some() {
        rocket
            .attach(Db::init())
            .attach(Template::fairing())
            .mount("/", routes![db, queries, fortunes, updates])
    } else {
        rocket.mount(
            "/",
            routes![
                no_database::db,
                no_database::queries,
                no_database::fortunes,
                no_database::updates
            ],
        )
    }
}
