//! rust-rocket: the shootout API contract (see `../SPEC.md`) on Rocket 0.5
//! with its default configuration, except for the address, the port and
//! logging, which is off.

#[macro_use]
extern crate rocket;

use std::{env, path::PathBuf, time::Duration};

use rocket::{
    config::LogLevel,
    http::Status,
    serde::{json::Json, Deserialize, Serialize},
    tokio::{task, time::sleep},
    Build, Config, Rocket,
};

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
fn file_read() -> Result<Json<FileRead>, Status> {
    let rows = count_rows().map_err(|_| Status::InternalServerError)?;
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

#[launch]
fn rocket() -> Rocket<Build> {
    let Ok(port) = env::var("PORT") else {
        eprintln!("rust-rocket: the PORT environment variable is required");
        std::process::exit(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("rust-rocket: PORT must be a port number, got {port:?}");
        std::process::exit(2);
    };
    let host = env::var("HOST").unwrap_or_else(|_| "127.0.0.1".to_owned());
    eprintln!("rust-rocket: listening on {host}:{port}");

    let figment = Config::figment()
        .merge(("address", host))
        .merge(("port", port))
        .merge(("log_level", LogLevel::Off));
    rocket::custom(figment).mount(
        "/",
        routes![
            plaintext,
            json,
            file_read,
            wait_time,
            simple,
            timed,
            bcrypt_hash
        ],
    )
}
