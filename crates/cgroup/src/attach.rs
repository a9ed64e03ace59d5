//! Moving a process into a group before it runs anything, so every process
//! it forks is born inside. The `cgroup.procs` files are opened in the
//! parent; the child only writes `0` ("the writer itself") to each between
//! fork and exec, which is a bare `write(2)`: no allocation, safe after a
//! fork in a threaded program. The descriptors are close-on-exec.

use crate::error::{CgroupError, Result};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Open `cgroup.procs` files of one group, ready for a `pre_exec` hook.
#[derive(Debug)]
pub struct Attacher {
    procs: Vec<OwnedFd>,
}

impl Attacher {
    pub(crate) fn open(leaves: &[&Path]) -> Result<Attacher> {
        let mut procs = Vec::new();
        for leaf in leaves {
            let path = leaf.join("cgroup.procs");
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| CgroupError::io("open", &path, e))?;
            procs.push(OwnedFd::from(f));
        }
        Ok(Attacher { procs })
    }

    /// Moves the calling process into the group. Async-signal-safe: meant to
    /// be called from a `pre_exec` hook (alone, or inside another hook).
    pub fn enter(&self) -> io::Result<()> {
        for fd in &self.procs {
            // SAFETY: the descriptor is open for as long as `self` lives and
            // the buffer is a static one-byte string.
            let n = unsafe { libc::write(fd.as_raw_fd(), b"0".as_ptr().cast(), 1) };
            if n != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Installs [`Attacher::enter`] as a `pre_exec` hook of `cmd`: the
    /// spawned process (and all it forks) runs in the group from its first
    /// instruction, or the spawn fails.
    pub fn install(self, cmd: &mut Command) {
        // SAFETY: `enter` only calls write(2) on descriptors the closure owns.
        unsafe {
            cmd.pre_exec(move || self.enter());
        }
    }
}
