//! Reading and writing cgroup interface files, with every failure turned
//! into a [`CgroupError`] that names the file.

use crate::error::{CgroupError, Result};
use std::io::{self, Write};
use std::path::Path;

/// The whole of a small interface file.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| CgroupError::io("read", path, e))
}

/// The file when it exists, `None` when the kernel does not provide it.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CgroupError::io("read", path, e)),
    }
}

/// Writes `value` in one `write` call, as the kernel parses each write as
/// one command. The file is never created: an interface file exists or its
/// controller is missing. Truncation is what `echo v > file` does too
/// (cgroupfs ignores it; a fake tree in a test needs it).
pub(crate) fn write(path: &Path, value: &str) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .map_err(|e| CgroupError::io("open", path, e))?;
    f.write_all(value.as_bytes())
        .map_err(|e| CgroupError::io("write", path, e))
}

/// Creates `dir`; an existing one is fine (shared parents).
pub(crate) fn mkdir(dir: &Path) -> Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(CgroupError::io("create", dir, e)),
    }
}

/// The pids listed in a `cgroup.procs` file (missing file: none).
pub(crate) fn pids(procs: &Path) -> Result<Vec<u32>> {
    let Some(text) = read_optional(procs)? else {
        return Ok(Vec::new());
    };
    text.split_whitespace()
        .map(|w| {
            w.parse().map_err(|_| CgroupError::Malformed {
                path: procs.to_path_buf(),
                detail: format!("`{w}` is not a pid"),
            })
        })
        .collect()
}
