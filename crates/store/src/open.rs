//! Opening a results store without harming anything: a file that is not a
//! shootout database (not SQLite, or SQLite with tables of its own) is
//! refused before anything is written to it, since switching to WAL or
//! migrating would change it; readers (`history`, `report`, `compare`)
//! open read-only, and only upgrade a shootout database of an older
//! schema; a database another process holds locked is waited on for
//! [`BUSY_WAIT`] before a write fails.

use crate::error::{Result, StoreError};
use rusqlite::{Connection, OpenFlags};
use std::io::Read as _;
use std::path::Path;
use std::time::Duration;

/// How long a write waits for another process's lock on the database
/// (another shootout writing, a `sqlite3` shell in a transaction, a backup)
/// before it fails, unless `SHOOTOUT_STORE_WAIT` (seconds) says otherwise.
pub const BUSY_WAIT: Duration = Duration::from_secs(120);

/// [`BUSY_WAIT`], or `SHOOTOUT_STORE_WAIT` seconds when that is a number.
pub fn busy_wait() -> Duration {
    std::env::var("SHOOTOUT_STORE_WAIT")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 86_400.0)
        .map_or(BUSY_WAIT, Duration::from_secs_f64)
}

/// The first 16 bytes of every SQLite 3 database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What a file at a store's path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// No file, or an empty one: a new store may be made there.
    Nothing,
    /// A SQLite file (what it holds is checked once open).
    Sqlite,
}

/// Refuses a file that is not SQLite, reading only its first bytes.
pub(crate) fn inspect(path: &Path) -> Result<Found> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(cause) => {
            return Err(StoreError::Unreadable {
                path: path.to_path_buf(),
                cause,
            })
        }
    };
    let mut head = [0u8; 16];
    let n = read_up_to(&mut f, &mut head).map_err(|cause| StoreError::Unreadable {
        path: path.to_path_buf(),
        cause,
    })?;
    match n {
        0 => Ok(Found::Nothing),
        16 if &head == MAGIC => Ok(Found::Sqlite),
        _ => Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "not a SQLite file".into(),
        }),
    }
}

fn read_up_to(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Refuses a SQLite database that holds no shootout schema: tables of its
/// own, or (unless `allow_empty`, for a store about to be made) none.
pub(crate) fn check_ours(conn: &Connection, path: &Path, allow_empty: bool) -> Result<()> {
    let has = |name: &str| -> Result<bool> {
        Ok(conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |r| r.get::<_, i64>(0),
        )? > 0)
    };
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get(0),
    )?;
    if (tables == 0 && allow_empty) || (has("schema_version")? && has("runs")?) {
        return Ok(());
    }
    let why = match tables {
        0 => "an empty SQLite database".to_string(),
        n => format!("a SQLite database with {n} table(s) of its own and no shootout schema"),
    };
    Err(StoreError::NotAStore {
        path: path.to_path_buf(),
        why,
    })
}

/// A read-only connection to an existing shootout database.
pub(crate) fn read_only(path: &Path) -> Result<Connection> {
    if inspect(path)? == Found::Nothing {
        return Err(StoreError::NotAStore {
            path: path.to_path_buf(),
            why: "no such file, or an empty one".into(),
        });
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(busy_wait())?;
    check_ours(&conn, path, false)?;
    Ok(conn)
}

/// Switches the database to WAL. Switching needs an exclusive lock, and
/// SQLite does not call the busy handler for it while another connection
/// reads (runs making the same new store at once): it fails at once with
/// "database is locked". So a busy switch is tried again for up to
/// [`busy_wait`]; once the file is in WAL the switch takes no lock.
pub(crate) fn use_wal(conn: &Connection) -> Result<()> {
    let deadline = std::time::Instant::now() + busy_wait();
    let mut pause = Duration::from_millis(1);
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
}
