//! What shootout's tests share, starting with the one way a test that cannot
//! run says so. cargo's test harness has no runtime skip: a test that returns
//! early is reported as passed. So a test that cannot do its work calls
//! [`missing`] or [`machine`] (or a helper built on them, such as
//! [`tools`]), which prints `SKIP <test>: <reason>` and appends a line to the
//! file named by `SHOOTOUT_SKIP_LOG` (set by `scripts/test.sh`); the script's
//! closing line then counts that test as skipped, not passed, and lists it
//! with its reason (`scripts/test-totals.py`).
//!
//! Two kinds of reason, as CONTRIBUTING.md explains:
//! - **missing**: something `scripts/setup.sh` installs (nginx, PostgreSQL,
//!   Chromium and the browser test's npm packages, the targets' toolchains,
//!   peer tools such as curl or `ip`). Under `CI=true` this fails the test
//!   with one line naming it: a green CI must not hide a missing install.
//! - **machine**: a fact no install changes (a cgroup v1 host for a v2 test,
//!   fewer CPUs than the test needs, a kernel without io_uring, not root).
//!   It stays a skip everywhere.
//!
//! A test that skips only a part of its work counts as skipped too: it did
//! not do all it says.
//!
//! It also holds the test servers more than one crate's tests load: a
//! strict HTTP/2 server that enforces the client's rules ([`h2_server`]),
//! and a server that plays one faulty script on every connection
//! ([`scripted`]: silence, no HTTP/2 streams allowed, a forbidden frame).
//! And a WebSocket echo server over `tungstenite` ([`ws_echo`]), with
//! knobs to corrupt echoes, close with a code or leave pings unanswered.
//!
//! And the one way a test waits for a state (a process gone, a file written,
//! a log line counted): [`wait_until`] polls it with a short interval up to a
//! deadline and fails naming the state, where a fixed sleep would be either
//! too long on a quiet machine or too short on a loaded one.
//!
//! With the `engine` feature, a plausible load summary for the unit tests
//! that judge one (the `summary` module).
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod h2_rules;
pub mod h2_server;
pub mod scripted;
#[cfg(feature = "engine")]
pub mod summary;
pub mod ws_echo;

use std::fmt::Display;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Environment variable naming the file skips are appended to.
pub const SKIP_LOG: &str = "SHOOTOUT_SKIP_LOG";

/// Why a test could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// Something `scripts/setup.sh` installs is missing: strict in CI.
    Missing,
    /// A fact of the machine that no install changes.
    Machine,
}

impl Why {
    fn word(self) -> &'static str {
        match self {
            Why::Missing => "missing",
            Why::Machine => "machine",
        }
    }
}

/// Whether this is CI (`CI=true`, as CI runs `.ci/run`), where a missing
/// installed piece fails instead of skipping.
pub fn strict() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The current test's name: libtest runs each test on a thread named after
/// its path (`module::test`).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_string()
}

/// The test binary's file name (`load_cli-0123abcd`), as cargo's
/// "Running ... (target/debug/deps/NAME)" line names it.
fn binary() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "<unknown binary>".to_string())
}

/// Records a skip of the current test (or of a part of it). With
/// [`Why::Missing`] under [`strict`], panics instead: the test fails, naming
/// what setup should have installed.
#[track_caller]
pub fn skip(why: Why, reason: impl Display) {
    let test = test_name();
    let reason = reason.to_string().replace(['\n', '\t'], " ");
    if why == Why::Missing && strict() {
        panic!("CI=true: {test} cannot run: {reason} (scripts/setup.sh should have installed it)");
    }
    // The one line this library writes: libtest shows a test's captured
    // stderr only when it fails, and `--nocapture` readers want the reason.
    #[allow(clippy::print_stderr)]
    {
        eprintln!("SKIP {test}: {reason}");
    }
    if let Some(path) = std::env::var_os(SKIP_LOG) {
        let line = format!("{}\t{test}\t{}\t{reason}\n", binary(), why.word());
        // One write of one line with O_APPEND: lines of tests running in
        // parallel (threads or binaries) never interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!(
                "cannot record the skip in {}: {e}",
                Path::new(&path).display()
            );
        }
    }
}

/// Something `scripts/setup.sh` installs is missing (see [`Why::Missing`]).
#[track_caller]
pub fn missing(reason: impl Display) {
    skip(Why::Missing, reason);
}

/// A fact of this machine keeps the test (or a part) from running.
#[track_caller]
pub fn machine(reason: impl Display) {
    skip(Why::Machine, reason);
}

/// Whether `name` is an executable on PATH.
pub fn on_path(name: &str) -> bool {
    which(name).is_some()
}

/// The first executable called `name` in a folder of PATH.
pub fn which(name: &str) -> Option<std::path::PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// True when every tool is on PATH; otherwise records the test as skipped
/// for the first missing one (a [`Why::Missing`]: setup installs the
/// targets' toolchains and the peer tools tests use) and returns false.
#[track_caller]
pub fn tools(names: &[&str]) -> bool {
    match names.iter().find(|n| !on_path(n)) {
        None => true,
        Some(n) => {
            missing(format!("`{n}` is not on PATH"));
            false
        }
    }
}

/// Debian's nginx, which every nginx test loads.
pub const NGINX: &str = "/usr/sbin/nginx";

/// True when nginx is installed; otherwise records the skip and returns false.
#[track_caller]
pub fn nginx() -> bool {
    if Path::new(NGINX).exists() {
        return true;
    }
    missing(format!(
        "{NGINX} is not installed (scripts/setup.sh: apt-get install nginx)"
    ));
    false
}

/// How often [`wait_until`] looks again.
const POLL: Duration = Duration::from_millis(10);

/// Waits until `ready` returns true, asking it every few milliseconds for up
/// to `limit`; past that, fails the test with `"{what}: not within {limit:?}"`.
/// `what` names the state waited for ("the server's processes are gone").
/// `ready` is asked once at the deadline, so a state reached during the last
/// interval still counts.
#[track_caller]
pub fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    loop {
        if ready() {
            return;
        }
        let now = Instant::now();
        if now >= deadline {
            panic!("{what}: not within {limit:?}");
        }
        // Never past the deadline, so one look falls at (or just after) it.
        std::thread::sleep(POLL.min(deadline - now));
    }
}

/// The lines of nginx's access log at `log` once they stop changing: nginx
/// writes a request's line as the request finishes, which may be just after
/// the client has its answer, so the count is read until it has not moved
/// for 100 ms (fails if it keeps moving for 10 s).
pub fn settled_log_lines(log: &std::path::Path) -> usize {
    let count = || {
        std::fs::read_to_string(log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let mut last = (count(), Instant::now());
    wait_until(
        &format!("{} unchanged for 100 ms", log.display()),
        Duration::from_secs(10),
        || {
            let n = count();
            if n != last.0 {
                last = (n, Instant::now());
            }
            last.1.elapsed() >= Duration::from_millis(100)
        },
    );
    last.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_until_returns_once_the_state_holds() {
        let mut looks = 0;
        wait_until("the third look", Duration::from_secs(5), || {
            looks += 1;
            looks == 3
        });
        assert_eq!(looks, 3);
    }

    #[test]
    #[should_panic(expected = "never: not within 30ms")]
    fn wait_until_fails_naming_the_state() {
        wait_until("never", Duration::from_millis(30), || false);
    }
}
