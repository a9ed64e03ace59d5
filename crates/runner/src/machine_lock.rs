//! One measurement at a time per machine: `run`, `capacity` and a pinned
//! `load` hold an exclusive `flock` on one file for as long as they load,
//! so two of them never disturb each other. The file is
//! `$SHOOTOUT_LOCK`, else [`DEFAULT_PATH`] (`/tmp` exists and is writable
//! for root and every user alike, so one lock covers them all). The holder
//! writes who it is into the file (pid, command line, since when) for a
//! waiter to say, and removes the file when it lets go.
//!
//! Removing a lock file is racy unless every taker checks, once it holds
//! the lock, that the path still names the file it locked; [`acquire`]
//! does, and starts over on a file removed meanwhile.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file unless `$SHOOTOUT_LOCK` names another.
pub const DEFAULT_PATH: &str = "/tmp/shootout.lock";
/// The environment variable naming the lock file.
pub const ENV: &str = "SHOOTOUT_LOCK";
const POLL: Duration = Duration::from_millis(200);

/// Who holds the lock, as it wrote itself down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    /// Its command line (e.g. `shootout run default`).
    pub command: String,
    /// When it took the lock, RFC 3339.
    pub since: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pid {} ({}) since {}",
            self.pid, self.command, self.since
        )
    }
}

/// The machine lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("machine lock {path}: {source}", path = .path.display())]
    Io { path: PathBuf, source: io::Error },
    /// Another measurement holds it and waiting was not wanted.
    #[error("another measurement holds the machine lock {path}: {}",
        .holder.as_ref().map_or("a process that has not said who it is yet".to_string(), Holder::to_string),
        path = .path.display())]
    Busy {
        path: PathBuf,
        holder: Option<Holder>,
    },
}

/// Held while this process measures; dropping it lets the next one in.
#[derive(Debug)]
pub struct MachineLock {
    path: PathBuf,
    /// Held open: closing it releases the lock.
    _file: File,
}

impl MachineLock {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MachineLock {
    fn drop(&mut self) {
        // Removed while still held, so nobody locks a file about to go;
        // a waiter on it notices the removal and starts over.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The lock file: `$SHOOTOUT_LOCK`, else [`DEFAULT_PATH`].
pub fn path() -> PathBuf {
    std::env::var_os(ENV)
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_PATH), PathBuf::from)
}

/// Takes the lock at `path` for `command`. When another process holds it:
/// with `wait`, calls `on_wait` once with the holder and polls until it
/// is free; without, fails with [`LockError::Busy`].
pub fn acquire(
    path: &Path,
    command: &str,
    wait: bool,
    on_wait: &mut dyn FnMut(Option<&Holder>),
) -> Result<MachineLock, LockError> {
    let err = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut told = false;
    loop {
        let file = open(path).map_err(err)?;
        if crate::liveness::try_lock(&file) {
            if !same_file(&file, path) {
                continue; // removed by its last holder meanwhile
            }
            record(&file, command);
            return Ok(MachineLock {
                path: path.to_path_buf(),
                _file: file,
            });
        }
        let holder = holder(&file);
        if !wait {
            return Err(LockError::Busy {
                path: path.to_path_buf(),
                holder,
            });
        }
        if !told {
            on_wait(holder.as_ref());
            told = true;
        }
        std::thread::sleep(POLL);
    }
}

/// Opens the lock file, creating it readable and writable by every user.
/// An existing file is opened without O_CREAT: the kernel refuses O_CREAT
/// on another user's file in a sticky folder such as /tmp
/// (fs.protected_regular); read-only still locks, only without a record.
fn open(path: &Path) -> io::Result<File> {
    loop {
        match OpenOptions::new().read(true).write(true).open(path) {
            Err(e) if e.kind() == ErrorKind::PermissionDenied => return File::open(path),
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            other => return other,
        }
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(path)
        {
            Ok(f) => {
                // The umask trimmed the mode; other users must open it too.
                let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
                return Ok(f);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// True when `path` still names the open `file`.
fn same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Writes who holds the lock: best effort (a read-only open cannot).
fn record(file: &File, command: &str) {
    let text = format!(
        "pid={}\ncommand={}\nsince={}\n",
        std::process::id(),
        command.replace('\n', " "),
        shootout_store::now_rfc3339()
    );
    let _ = file.set_len(0);
    let _ = file.write_all_at(text.as_bytes(), 0);
}

/// The holder's record, if it has written one.
fn holder(file: &File) -> Option<Holder> {
    let mut buf = vec![0; 4096];
    let n = file.read_at(&mut buf, 0).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('='))
            .map(str::to_string)
    };
    Some(Holder {
        pid: field("pid")?.parse().ok()?,
        command: field("command").unwrap_or_default(),
        since: field("since").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let p = std::env::temp_dir().join(format!("shootout-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn a_held_lock_refuses_a_second_taker_naming_the_holder_and_is_removed_on_drop() {
        let path = temp("machine-lock");
        let held = acquire(&path, "shootout run default", false, &mut |_| {}).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o666, "every user can open it");
        // flock is per open file: a second open in this process conflicts.
        let busy = acquire(&path, "shootout capacity", false, &mut |_| {}).unwrap_err();
        match &busy {
            LockError::Busy {
                holder: Some(h), ..
            } => {
                assert_eq!(h.pid, std::process::id());
                assert_eq!(h.command, "shootout run default");
                assert!(h.since.contains('T'), "{}", h.since);
            }
            other => panic!("{other:?}"),
        }
        assert!(busy
            .to_string()
            .contains(&format!("pid {}", std::process::id())));
        drop(held);
        assert!(!path.exists(), "the holder removes the file");
        let again = acquire(&path, "x", false, &mut |_| {}).unwrap();
        drop(again);
    }

    #[test]
    fn a_waiter_is_told_once_and_gets_the_lock_when_it_is_released() {
        let path = temp("machine-lock-wait");
        let held = acquire(&path, "first", false, &mut |_| {}).unwrap();
        let p = path.clone();
        let waiter = std::thread::spawn(move || {
            let mut told = Vec::new();
            let lock = acquire(&p, "second", true, &mut |h| told.push(h.cloned())).unwrap();
            (lock, told)
        });
        std::thread::sleep(Duration::from_millis(600));
        assert!(
            !waiter.is_finished(),
            "the second waits while the first holds"
        );
        drop(held);
        let (lock, told) = waiter.join().unwrap();
        assert_eq!(told.len(), 1, "told once");
        assert_eq!(told[0].as_ref().map(|h| h.command.as_str()), Some("first"));
        let now = holder(&File::open(lock.path()).unwrap()).unwrap();
        assert_eq!(now.command, "second", "the new holder wrote itself down");
    }
}
