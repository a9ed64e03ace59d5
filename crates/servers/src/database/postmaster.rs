//! A postmaster seen from outside: its pid from `postmaster.pid` and waiting
//! for its process group to be gone. Shared by the cluster that stops its
//! own postmaster and by the clean-up of folders a dead shootout left.

use crate::process::group_alive;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// The postmaster's pid: the first line of `postmaster.pid`.
pub(super) fn read_postmaster_pid(data: &Path) -> Option<i32> {
    let text = fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok().filter(|&p| p > 0)
}

/// Waits until no process is left in group `pgid`, or the timeout.
pub(super) fn wait_group_gone(pgid: i32, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while group_alive(pgid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}
