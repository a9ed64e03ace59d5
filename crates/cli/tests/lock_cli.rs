//! The machine-wide measurement lock end to end: while one pinned `load`
//! measures, a second pinned load waits (saying who holds the lock) and
//! only starts once the first has ended; `--no-wait` makes `load --cpus`,
//! `capacity` and `run` refuse with exit 2 naming the holder's pid; an
//! unpinned load is not held up. Each test uses its own lock file
//! ($SHOOTOUT_LOCK), so it never waits for a measurement of the machine.

#![allow(clippy::unwrap_used)]

mod common;

use common::{ok, repo, server, stderr};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn shootout(lock: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_shootout"));
    c.args(args)
        .env("SHOOTOUT_LOCK", lock)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn output(lock: &Path, args: &[&str]) -> Output {
    shootout(lock, args).output().unwrap()
}

/// A pinned 3 s load, spawned; returns once it holds the lock.
fn first_holder(lock: &Path, url: &str) -> Child {
    let child = shootout(
        lock,
        &["load", "--cpus", "0", "-c", "2", "-z", "3s", "--quiet", url],
    )
    .spawn()
    .unwrap();
    let mine = format!("pid={}\n", child.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(lock).is_ok_and(|t| t.contains(&mine)) {
        assert!(
            Instant::now() < deadline,
            "the first load never took the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn a_second_measurement_waits_for_the_first_or_refuses_with_no_wait() {
    let url = server(|| ok(None, "hi"));
    let lock = std::env::temp_dir().join(format!("shootout-lock-cli-{}", std::process::id()));
    let _ = std::fs::remove_file(&lock);
    let mut first = first_holder(&lock, &url);
    let pid = format!("pid {}", first.id());

    let out = output(
        &lock,
        &["load", "--cpus", "0", "--no-wait", "-n", "5", &url],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&pid) && stderr(&out).contains("shootout load --cpus 0"),
        "{}",
        stderr(&out)
    );
    let out = output(&lock, &["capacity", "--no-wait", &url]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&pid), "{}", stderr(&out));
    let studies = repo().join("studies");
    let targets = repo().join("targets");
    let out = output(
        &lock,
        &[
            "run",
            "default",
            "--no-wait",
            "--studies-dir",
            studies.to_str().unwrap(),
            "--targets-dir",
            targets.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&pid), "{}", stderr(&out));

    // Unpinned, a load is not a measurement of the machine: not held up.
    let out = output(&lock, &["load", "--no-wait", "-n", "5", "--quiet", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let mut second = shootout(&lock, &["load", "--cpus", "0", "-n", "5", "--quiet", &url])
        .spawn()
        .unwrap();
    while first.try_wait().unwrap().is_none() {
        assert!(
            second.try_wait().unwrap().is_none(),
            "the second load ended while the first still held the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(first.wait().unwrap().success());
    let out = second.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("waiting for the machine lock") && err.contains(&pid),
        "{err}"
    );
    assert!(!lock.exists(), "the last holder removes the lock file");
}
