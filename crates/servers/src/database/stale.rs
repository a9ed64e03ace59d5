//! Cluster folders and the clean-up of those a dead shootout left behind.
//! Each folder holds `owner.lock`, on which the live owner keeps an
//! exclusive `flock`; the kernel drops it when the owner dies, however it
//! dies. So a folder whose lock can be taken is abandoned: its postmaster
//! (if the lifeline watchdog missed it) is killed and the folder removed.

use super::postmaster::{read_postmaster_pid, wait_group_gone};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Cluster folders are `<temp>/shootout-pg-<pid>-<n>`.
const PREFIX: &str = "shootout-pg-";
const LOCK: &str = "owner.lock";

/// The owner's lock on its cluster folder, held while the cluster lives.
#[derive(Debug)]
pub struct OwnerLock {
    _file: File,
}

/// Creates a fresh cluster folder (mode 0700) and locks it.
pub fn create_dir() -> io::Result<(PathBuf, OwnerLock)> {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("{PREFIX}{}-{n}", std::process::id()));
    // A folder of an earlier process with our pid is abandoned by definition.
    let _ = fs::remove_dir_all(&dir);
    fs::DirBuilder::new().mode(0o700).create(&dir)?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK))?;
    if !try_lock(&file) {
        return Err(io::Error::other("cannot lock the new cluster folder"));
    }
    Ok((dir, OwnerLock { _file: file }))
}

/// Removes every abandoned cluster folder; returns how many.
pub fn remove_abandoned() -> usize {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .filter(|e| remove_if_abandoned(&e.path()))
        .count()
}

fn remove_if_abandoned(dir: &Path) -> bool {
    // No lock file yet: a folder being created right now, or not ours.
    let Ok(file) = File::open(dir.join(LOCK)) else {
        return false;
    };
    if !try_lock(&file) {
        return false;
    }
    let data = dir.join("data");
    if let Some(pid) = read_postmaster_pid(&data) {
        if runs_in(pid, &data) {
            // SAFETY: kill only sends a signal, to a postmaster we proved
            // serves this folder.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            wait_group_gone(pid, Duration::from_secs(5));
        }
    }
    fs::remove_dir_all(dir).is_ok()
}

/// Whether `pid` is a postmaster serving `data`: a postmaster's working
/// directory is its data folder, so a reused pid cannot match.
fn runs_in(pid: i32, data: &Path) -> bool {
    let cwd = fs::read_link(format!("/proc/{pid}/cwd"));
    matches!((cwd, data.canonicalize()), (Ok(c), Ok(d)) if c == d)
}

fn try_lock(file: &File) -> bool {
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_folder_is_kept_and_an_unlocked_one_removed() {
        let (live, lock) = create_dir().unwrap();
        assert!(
            !remove_if_abandoned(&live),
            "a live owner's folder was removed"
        );
        drop(lock);
        assert!(remove_if_abandoned(&live));
        assert!(!live.exists());
    }
}
