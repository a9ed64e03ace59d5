//! What the CLI's end-to-end tests share: running the real binary (and
//! reading the JSON of a run that must succeed), a keep-alive HTTP/1.1
//! server on 127.0.0.1 whose answers a closure writes (one thread per
//! connection; request bodies are not expected), the repository's root,
//! whether a tool is on PATH, a temporary folder removed on drop, a
//! results store's path and a command on it, the
//! check of a JSON output against its schema in docs/ (with a load's JSON
//! read and checked in one call, [`load_json`]), and a `--start-at` time.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

/// Starts a server whose every answer is `answer()`, the whole response
/// (head and body); returns `http://127.0.0.1:PORT`.
pub fn server(answer: impl Fn() -> String + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    serve_on(listener, answer);
    format!("http://{addr}")
}

/// Serves `answer()` to every request on `listener`, from background threads.
pub fn serve_on(listener: TcpListener, answer: impl Fn() -> String + Send + Sync + 'static) {
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = answer.clone();
            std::thread::spawn(move || serve(stream, &*answer));
        }
    });
}

/// A 200 response with this body and optional Content-Type.
pub fn ok(content_type: Option<&str>, body: &str) -> String {
    let ct = content_type.map_or(String::new(), |t| format!("Content-Type: {t}\r\n"));
    format!(
        "HTTP/1.1 200 OK\r\n{ct}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn serve(stream: TcpStream, answer: &dyn Fn() -> String) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) if line == "\r\n" => {
                if out.write_all(answer().as_bytes()).is_err() {
                    return;
                }
            }
            Ok(_) => {}
        }
    }
}

pub fn shootout(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .output()
        .unwrap()
}

/// `shootout ARGS --db DB`: a command on a results store.
pub fn shootout_db(args: &[&str], db: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

/// A results store's path in a fresh folder named for `tag` and this
/// process (emptied first; left for a failed test's reader).
pub fn temp_db(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("shootout.db")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON on stdout of a run that must have exited 0 (its stderr is the
/// failure message otherwise).
pub fn json_ok(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs `cmd` to the end; the JSON it printed after exiting 0.
pub fn run_json(cmd: &mut Command) -> serde_json::Value {
    json_ok(&cmd.output().unwrap())
}

/// `shootout ARGS`, which must exit 0 and print JSON.
pub fn shootout_json(args: &[&str]) -> serde_json::Value {
    json_ok(&shootout(args))
}

/// `shootout run STUDY --db DB --targets-dir TARGETS` as a user would run
/// it, without colour or stdin; stdout (the report path) dropped and
/// stderr (progress, errors) piped for the assertion message. Spawn it,
/// or run it to the end with [`run_study`].
#[allow(dead_code)] // used by the study tests only
pub fn run_command(study: &Path, db: &Path, targets: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shootout"));
    c.arg("run")
        .arg(study)
        .arg("--db")
        .arg(db)
        .arg("--targets-dir")
        .arg(targets)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    c
}

/// [`run_command`] with `extra` flags, run to the end.
#[allow(dead_code)] // used by the study tests only
pub fn run_study(study: &Path, db: &Path, targets: &Path, extra: &[&str]) -> Output {
    run_command(study, db, targets)
        .args(extra)
        .output()
        .unwrap()
}

/// Writes `text` as the study `tmp/NAME.toml`, runs it to the end into
/// `db` with `extra` flags, which must succeed; the stored run (the
/// latest in `db`) and the run's stderr.
#[allow(dead_code)] // used by the study tests only
pub fn run_study_ok(
    tmp: &Path,
    name: &str,
    text: &str,
    db: &Path,
    targets: &Path,
    extra: &[&str],
) -> (shootout_store::RunData, String) {
    let study = tmp.join(format!("{name}.toml"));
    std::fs::write(&study, text).unwrap();
    let out = run_study(&study, db, targets, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "run {name}: {stderr}");
    let store = shootout_store::Store::open(db).unwrap();
    let data = store.load_run(store.resolve("latest").unwrap()).unwrap();
    (data, stderr)
}

/// A copy of targets/go-nethttp named `name` in the targets folder `dir`:
/// its go.mod and go.sum, its main.go as `patch` returns it, and its
/// manifest with the name (and the binary's) changed. The shared `data`
/// and `SPEC.md` are linked into `dir` once.
#[allow(dead_code)] // used by the study tests only
pub fn go_nethttp_copy(dir: &Path, name: &str, patch: impl Fn(&str) -> String) {
    let real = repo().join("targets");
    for shared in ["data", "SPEC.md"] {
        if !dir.join(shared).exists() {
            std::os::unix::fs::symlink(real.join(shared), dir.join(shared)).unwrap();
        }
    }
    let from = real.join("go-nethttp");
    let copy = dir.join(name);
    std::fs::create_dir_all(&copy).unwrap();
    for f in ["go.mod", "go.sum"] {
        std::fs::copy(from.join(f), copy.join(f)).unwrap();
    }
    let main = std::fs::read_to_string(from.join("main.go")).unwrap();
    std::fs::write(copy.join("main.go"), patch(&main)).unwrap();
    let text = std::fs::read_to_string(from.join("target.toml")).unwrap();
    let renamed = text
        .replacen("name = \"go-nethttp\"", &format!("name = \"{name}\""), 1)
        .replace("bin/go-nethttp", &format!("bin/{name}"));
    assert_ne!(text, renamed, "the manifest names go-nethttp");
    std::fs::write(copy.join("target.toml"), renamed).unwrap();
}

/// The repository's root (targets/, studies/, docs/).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `bin` is an executable in a folder of PATH (shootout-testkit's).
#[allow(unused_imports)] // a re-export, used by some of the test files only
pub use shootout_testkit::on_path;

/// A folder under the system's temporary folder, removed on drop.
pub struct Tmp(pub PathBuf);

impl Tmp {
    /// A new, empty folder named for `name`, this process and the time,
    /// so tests running at once never share one.
    pub fn new(name: &str) -> Tmp {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let p =
            std::env::temp_dir().join(format!("shootout-{name}-{}-{nanos}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// docs/load.schema.json: what `load -o json` and `merge -o json` print.
pub const LOAD_SCHEMA: &str = include_str!("../../../../docs/load.schema.json");
/// docs/capacity.schema.json: what `capacity -o json` prints.
pub const CAPACITY_SCHEMA: &str = include_str!("../../../../docs/capacity.schema.json");

/// Every way `json` breaks `schema`, each with where.
pub fn schema_problems(schema: &str, json: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(json)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Panics with every problem unless `json` follows docs/load.schema.json.
pub fn assert_load_json(json: &serde_json::Value) {
    let problems = schema_problems(LOAD_SCHEMA, json);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// `shootout load -o json ARGS`, which must exit `code`; the JSON it
/// printed, held to docs/load.schema.json ([`load_json_of`]).
#[track_caller]
pub fn load_json(args: &[&str], code: i32) -> serde_json::Value {
    load_json_of(
        &shootout(&[&["load", "-o", "json"][..], args].concat()),
        code,
    )
}

/// The JSON of a load (`load -o json`, `merge -o json`) on `o`'s stdout:
/// `o` must have exited `code` (its stderr is the failure message
/// otherwise) and the JSON follow docs/load.schema.json.
#[track_caller]
pub fn load_json_of(o: &Output, code: i32) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(code), "{}", stderr(o));
    let json = serde_json::from_slice(&o.stdout).unwrap();
    assert_load_json(&json);
    json
}

/// Unix milliseconds `ms` from now, as `--start-at` takes them.
pub fn in_ms(ms: u128) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    (now.as_millis() + ms).to_string()
}
