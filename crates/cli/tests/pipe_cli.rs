//! Data commands write to stdout, and a reader that stops early (`shootout
//! studies | head -1`) closes the pipe: the command must finish quietly
//! with exit 0, not panic with "failed printing to stdout".

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// The write end of a pipe whose read end is already closed, so the
/// child's first write fails with EPIPE, whatever the timing.
fn broken_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two descriptors we then own; the read end is closed.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        libc::close(fds[0]);
        Stdio::from(OwnedFd::from_raw_fd(fds[1]))
    }
}

fn closed_reader(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .stdout(broken_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
}

#[test]
fn a_reader_that_stops_early_is_not_a_crash() {
    closed_reader(&["studies"]);
    closed_reader(&["targets"]);
}
