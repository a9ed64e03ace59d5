//! rust-actix: the shootout API contract (see `../SPEC.md`) on actix-web 4
//! with the default number of workers.

use std::{env, io, path::PathBuf, time::Duration};

use actix_web::{error, get, post, rt::time::sleep, web, App, HttpResponse, HttpServer, Responder};
use serde::{Deserialize, Serialize};

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
    let rows = count_rows().map_err(error::ErrorInternalServerError)?;
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
    eprintln!("rust-actix: listening on {host}:{port}");

    HttpServer::new(|| {
        App::new()
            .service(plaintext)
            .service(json)
            .service(file_read)
            .service(wait_time)
            .service(simple)
            .service(timed)
            .service(bcrypt_hash)
            .default_service(web::to(not_found))
    })
    .bind((host.as_str(), port))?
    .run()
    .await
}
