//! rust-axum: the shootout API contract (see `../SPEC.md`) on axum 0.8 and
//! the tokio multi-threaded runtime.

use std::{env, path::PathBuf, time::Duration};

use axum::{
    http::StatusCode,
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};
use tokio::{net::TcpListener, task, time::sleep};

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
    let rows = count_rows().map_err(internal_error)?;
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

/// Plain-text 404 (axum's default one has no body and no content type).
async fn not_found() -> (StatusCode, &'static str) {
    (StatusCode::NOT_FOUND, "Not Found")
}

async fn method_not_allowed() -> (StatusCode, &'static str) {
    (StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed")
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
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);

    let listener = TcpListener::bind((host.as_str(), port)).await?;
    eprintln!("rust-axum: listening on {}", listener.local_addr()?);
    axum::serve(listener, app).await
}
