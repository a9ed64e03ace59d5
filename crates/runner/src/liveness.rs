//! Tells a run that is still going from one whose process died without
//! finishing it (kill -9, a crash, a power cut), which would otherwise stay
//! `running` in the history forever. A live run holds an exclusive `flock`
//! on `<db>.run-<id>.lock`; the kernel drops the lock when the process dies,
//! so a lock file that can be locked belongs to a dead run.

use shootout_store::{RunStatus, Store};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Held for as long as a run lives; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    path: PathBuf,
    _file: File,
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

/// Exclusive, non-blocking `flock`; false when another process holds it.
fn try_lock(file: &File) -> bool {
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
    Ok(RunLock { path, _file: file })
}

/// Marks `running` runs whose lock is free (their process is gone) as
/// interrupted, and returns their ids. Runs without a lock file are left
/// alone: they are either just starting or from before locks existed.
pub fn reap_dead_runs(store: &Store, db: &Path) -> Result<Vec<i64>, shootout_store::StoreError> {
    let mut reaped = Vec::new();
    for run in store.runs()? {
        let path = lock_path(db, run.id);
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if !try_lock(&file) {
            continue;
        }
        // A run that exited at once on a second Ctrl-C leaves its file behind.
        let _ = std::fs::remove_file(&path);
        if run.status == RunStatus::Running {
            store.finish_run(run.id, RunStatus::Interrupted)?;
            reaped.push(run.id);
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
}
