//! `shootout database`: the cluster a person starts by hand answers on the
//! printed `DATABASE_URL` with the seeded tables, and is gone (process and
//! folder) when the command ends.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn database_prints_a_working_url_and_leaves_nothing_behind() {
    if shootout_servers::database::find_bin_dir().is_none() {
        shootout_testkit::missing("PostgreSQL is not installed");
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["database", "--for", "20s", "--pool-size", "6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().expect("a line on stdout").unwrap();
    let (url_line, pool_line) = (next(), next());
    let url = url_line
        .strip_prefix("export DATABASE_URL='")
        .and_then(|u| u.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{url_line}"));
    assert_eq!(pool_line, "export DB_POOL_SIZE='6'");
    assert!(
        url.starts_with("postgres://benchmarkdbuser:benchmarkdbpass@127.0.0.1:"),
        "{url}"
    );
    let mut db = postgres::Client::connect(url, postgres::NoTls).unwrap();
    let rows: i64 = db
        .query_one("SELECT count(*) FROM world", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 10_000);
    drop(db);
    let port = url
        .rsplit(':')
        .next()
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let pid = child.id();
    let folders = || -> Vec<std::path::PathBuf> {
        let prefix = format!("shootout-pg-{pid}-");
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect()
    };
    assert_eq!(folders().len(), 1);
    // SAFETY: kill(2) on our own child: the first Ctrl-C stops it cleanly.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(15),
            "still running after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130));
    assert!(folders().is_empty(), "the cluster folder survived");
    let refused = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).is_err();
    assert!(refused, "PostgreSQL still listens on {port}");
}
