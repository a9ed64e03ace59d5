//! A file that is not a shootout store is refused and left byte for byte
//! as it was (no WAL or journal files beside it); a reader cannot write;
//! a writer waits for another process's lock instead of failing.

use super::tests::{new_run, TempDb};
use super::*;
use std::time::Duration;

/// The file's bytes and which files sit in its folder.
fn snapshot(path: &Path) -> (Vec<u8>, Vec<String>) {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    (std::fs::read(path).unwrap_or_default(), names)
}

fn prepared(name: &str) -> (TempDb, PathBuf) {
    let t = TempDb::new(name);
    let path = t.path();
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("dir");
    (t, path)
}

#[test]
fn a_text_file_is_refused_untouched_by_writers_and_readers() {
    let (_t, path) = prepared("text");
    std::fs::write(&path, "my notes, not a database\n").expect("write");
    let before = snapshot(&path);
    for result in [Store::open(&path), Store::open_existing(&path)] {
        let e = result.expect_err("refused");
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
        assert!(e.to_string().contains("not a SQLite file"), "{e}");
    }
    assert_eq!(snapshot(&path), before);
}

#[test]
fn a_foreign_sqlite_database_is_refused_untouched() {
    let (_t, path) = prepared("foreign");
    {
        let c = Connection::open(&path).expect("open");
        c.execute_batch(
            "CREATE TABLE invoices (id INTEGER, total REAL); INSERT INTO invoices VALUES (1, 9.5);",
        )
        .expect("create");
    }
    let before = snapshot(&path);
    for result in [Store::open(&path), Store::open_existing(&path)] {
        let e = result.expect_err("refused");
        assert!(e.to_string().contains("1 table(s) of its own"), "{e}");
        assert!(e.to_string().ends_with("left untouched"), "{e}");
    }
    assert_eq!(
        snapshot(&path),
        before,
        "no WAL switch, no tables, no -wal/-shm files"
    );
}

#[test]
fn a_reader_refuses_a_missing_file_without_creating_it() {
    let (_t, path) = prepared("missing");
    let e = Store::open_existing(&path).expect_err("refused");
    assert!(e.to_string().contains("no such file"), "{e}");
    assert!(!path.exists());
}

#[test]
fn a_reader_reads_what_a_writer_wrote_and_cannot_write() {
    let (_t, path) = prepared("reader");
    let id = Store::open(&path)
        .expect("open")
        .begin_run(&new_run())
        .expect("run");
    let reader = Store::open_existing(&path).expect("read");
    assert_eq!(reader.runs().expect("runs").first().map(|r| r.id), Some(id));
    let e = reader.begin_run(&new_run()).expect_err("read-only");
    assert!(e.to_string().contains("readonly"), "{e}");
}

#[test]
fn a_writer_waits_for_another_process_lock() {
    let (_t, path) = prepared("locked");
    let store = Store::open(&path).expect("open");
    let holder = Connection::open(&path).expect("second connection");
    holder.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        holder.execute_batch("COMMIT").expect("unlock");
    });
    let t0 = std::time::Instant::now();
    store
        .begin_run(&new_run())
        .expect("written once the lock is gone");
    assert!(
        t0.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        t0.elapsed()
    );
    release.join().expect("holder");
}

/// Several runs making the same new store at once (each with its own lock
/// file, so nothing outside the database keeps them apart) all open it, and
/// the schema is made once: issue 47 saw "table schema_version already
/// exists" here.
#[test]
fn runs_creating_a_new_store_at_once_all_succeed() {
    for round in 0..5 {
        let (_t, path) = prepared(&format!("race{round}"));
        let n = 6;
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
        let handles: Vec<_> = (0..n)
            .map(|_| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    Store::open(&path).map(|s| s.begin_run(&new_run()).map(|_| s))
                })
            })
            .collect();
        for h in handles {
            match h.join().expect("thread") {
                Ok(Ok(_)) => {}
                Ok(Err(e)) | Err(e) => panic!("round {round}: {e}"),
            }
        }
        let store = Store::open_existing(&path).expect("read");
        assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
        let versions: i64 = store
            .conn
            .query_row("SELECT count(*) FROM schema_version", [], |r| r.get(0))
            .expect("count");
        assert_eq!(versions, SCHEMA_VERSION, "each migration recorded once");
        assert_eq!(store.runs().expect("runs").len(), n);
    }
}

/// A damaged store (SQLite's header, then garbage) and an unreadable one (a
/// folder) are named in the error, by writers and readers alike: a run
/// opens its store after much else has been printed.
#[test]
fn a_damaged_or_unreadable_store_is_named() {
    let (_t, path) = prepared("damaged");
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend(std::iter::repeat_n(b"garbage!", 600).flatten());
    std::fs::write(&path, &bytes).expect("write");
    let folder = path.with_file_name("folder.db");
    std::fs::create_dir_all(&folder).expect("folder");
    for (p, says) in [(&path, "not a database"), (&folder, "Is a directory")] {
        for result in [Store::open(p), Store::open_existing(p)] {
            let e = result.expect_err("refused");
            let shown = e.to_string();
            assert!(shown.contains(&p.display().to_string()), "{shown}");
            assert!(shown.contains(says), "{shown}");
            assert!(!shown.contains("create the folder"), "{shown}");
            assert!(e.names_file(), "{shown}");
        }
    }
}
