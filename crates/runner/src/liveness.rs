//! Tells a run that is still going from one whose process died without
//! finishing it (kill -9, a crash, a power cut), which would otherwise stay
//! `running` in the history forever. A live run holds an exclusive `flock`
//! on `<db>.run-<id>.lock`; the kernel drops the lock when the process dies,
//! so a lock file that can be locked belongs to a dead run.
//!
//! The lock file also names the server being measured (its process group and
//! its leader's start time). Servers die with their runner on their own (see
//! `shootout_servers::lifeline`); should one have survived anyway, the next
//! run kills the group it finds recorded for a dead run, after checking from
//! the start time that the id was not reused by someone else's process.

use shootout_store::{RunStatus, Store, StoreError};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Held for as long as a run lives; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    file: File,
}

impl RunLock {
    /// Records the server now being measured (None once it is stopped).
    pub fn note_server(&self, pgid: Option<i32>) {
        let line = pgid
            .and_then(|g| Some(format!("{g} {}\n", start_time(g)?)))
            .unwrap_or_default();
        // Best effort: a record that cannot be written only loses the
        // last line of defence.
        let _ = self.file.set_len(0);
        let _ = self.file.write_all_at(line.as_bytes(), 0);
    }
}

/// A dead run marked interrupted, and the server group it left, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeadRun {
    pub run_id: i64,
    /// The recorded server group that was still alive and was SIGKILLed.
    pub killed_group: Option<i32>,
}

/// A process's start time in clock ticks since boot (/proc/<pid>/stat
/// field 22), which tells a process from a later one with the same id.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Kills the group recorded in a dead run's lock file if it is still that
/// run's. A group id cannot be reused while any process is in the group, so
/// a leader that is gone with members left still means the same group.
fn kill_recorded_group(record: &str) -> Option<i32> {
    let mut f = record.split_whitespace();
    let pgid: i32 = f.next()?.parse().ok()?;
    let started: u64 = f.next()?.parse().ok()?;
    if pgid <= 1 || !shootout_servers::process::group_alive(pgid) {
        return None;
    }
    if start_time(pgid).is_some_and(|t| t != started) {
        return None; // the id now belongs to another process
    }
    // SAFETY: kill(2) has no memory-safety preconditions; pgid > 1.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    Some(pgid)
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn lock_path(db: &Path, run_id: i64) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".run-{run_id}.lock"));
    db.with_file_name(name)
}

/// Exclusive, non-blocking `flock`; false when another process (or
/// another open of the file) holds it. Shared with [`crate::machine_lock`].
pub(crate) fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor this File owns.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Marks run `run_id` as alive. The file is locked under a temporary name
/// and then renamed, so nobody can lock it between creation and locking.
pub fn hold(db: &Path, run_id: i64) -> io::Result<RunLock> {
    let path = lock_path(db, run_id);
    let tmp = path.with_extension(format!("lock.{}", std::process::id()));
    let file = File::create(&tmp)?;
    if !try_lock(&file) {
        return Err(io::Error::other("cannot lock a fresh file"));
    }
    std::fs::rename(&tmp, &path)?;
    Ok(RunLock { path, file })
}

/// Marks `running` runs whose lock is free (their process is gone) as
/// interrupted, kills the server group they recorded if it is still there,
/// and returns them. Runs without a lock file are left alone: they are
/// either just starting or from before locks existed.
pub fn reap_dead_runs(store: &Store, db: &Path) -> Result<Vec<DeadRun>, StoreError> {
    let mut reaped = Vec::new();
    for run in store.runs()? {
        let path = lock_path(db, run.id);
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if !try_lock(&file) {
            continue;
        }
        let record = std::fs::read_to_string(&path).unwrap_or_default();
        let killed_group = kill_recorded_group(&record);
        // A run that exited at once on a second Ctrl-C leaves its file behind.
        let _ = std::fs::remove_file(&path);
        if run.status == RunStatus::Running {
            store.finish_run(run.id, RunStatus::Interrupted)?;
            reaped.push(DeadRun {
                run_id: run.id,
                killed_group,
            });
        }
    }
    Ok(reaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_cannot_be_taken_and_is_released_on_drop() {
        let dir = std::env::temp_dir().join(format!("shootout-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("x.db");
        let lock = hold(&db, 7).unwrap();
        let path = lock_path(&db, 7);
        assert!(
            !try_lock(&File::open(&path).unwrap()),
            "a live run's lock is taken"
        );
        drop(lock);
        assert!(!path.exists(), "a finished run removes its lock file");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_server_group_recorded_by_a_dead_run_is_killed_unless_reused() {
        use std::os::unix::process::CommandExt;
        let dir = std::env::temp_dir().join(format!("shootout-reap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("x.db");
        let store = Store::open(&db).unwrap();
        let new_run = |study: &str| shootout_store::NewRun {
            study: study.into(),
            started_at: shootout_store::now_rfc3339(),
            tool_version: "test".into(),
            git_commit: None,
            host: shootout_store::Host::default(),
            pinning: shootout_store::Pinning::default(),
            scale: 1.0,
            study_text: String::new(),
            database: None,
            order_seed: None,
        };
        let mut server = std::process::Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = server.id() as i32;
        let started = start_time(pgid).unwrap();
        // A dead run whose recorded id was reused by a newer process.
        let stale = store.begin_run(&new_run("stale")).unwrap();
        std::fs::write(lock_path(&db, stale), format!("{pgid} {}\n", started + 1)).unwrap();
        let dead = reap_dead_runs(&store, &db).unwrap();
        assert_eq!(
            dead,
            [DeadRun {
                run_id: stale,
                killed_group: None
            }]
        );
        assert!(server.try_wait().unwrap().is_none(), "not ours: left alone");
        // A dead run that recorded this very server.
        let ours = store.begin_run(&new_run("ours")).unwrap();
        std::fs::write(lock_path(&db, ours), format!("{pgid} {started}\n")).unwrap();
        let dead = reap_dead_runs(&store, &db).unwrap();
        assert_eq!(
            dead,
            [DeadRun {
                run_id: ours,
                killed_group: Some(pgid)
            }]
        );
        assert!(
            !server.wait().unwrap().success(),
            "the recorded server was killed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
