//! Without permission to make cgroups (here: the test re-run as user
//! `nobody`), a server still starts, has no group, and says why in a typed
//! reason that counts as "unavailable"; the probe a run's header uses says
//! the same. Skipped (shootout-testkit) where this process cannot switch
//! users or where even `nobody` may make groups.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

use shootout_servers::{Server, Target};
use std::path::Path;
use std::process::Command;

const CHILD: &str = "SHOOTOUT_CGROUP_FALLBACK_CHILD";

fn fake(dir: &Path) -> Target {
    Target::command("unprivileged", dir, "exec sleep 60")
}

/// The half that runs as `nobody`: no group, a typed reason, and the server
/// still runs and stops.
fn as_unprivileged() {
    let probe = shootout_servers::cgroup::probe();
    let why = probe.expect_err("nobody made a cgroup");
    assert!(why.is_unavailable(), "{why}");
    let dir = std::env::temp_dir().join(format!("shootout-nobody-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let port = shootout_servers::free_port().unwrap();
    let mut server = Server::start(&fake(&dir), port, &dir.join("s.log")).unwrap();
    let why = server.cgroup_unavailable().expect("a reason for no group");
    assert!(why.is_unavailable(), "{why}");
    let reason = why.to_string();
    assert!(!reason.contains('\n'), "{reason}");
    assert!(server.cgroup_reader().is_none() && server.cgroup_paths().is_empty());
    assert!(!server.stop().leftovers);
    let _ = std::fs::remove_dir_all(&dir);
    println!("FALLBACK-OK {reason}");
}

#[test]
fn without_permission_a_server_runs_without_a_group_and_says_why() {
    if std::env::var_os(CHILD).is_some() {
        return as_unprivileged();
    }
    if shootout_servers::cgroup::probe().is_err() {
        shootout_testkit::machine("no cgroups here even for this user");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&exe)
        .args([
            "--exact",
            "without_permission_a_server_runs_without_a_group_and_says_why",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            shootout_testkit::missing(format!("cannot run util-linux's setpriv: {e}"));
            return;
        }
    };
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && text.contains("setpriv:") {
        shootout_testkit::machine(format!("cannot switch to nobody: {text}"));
        return;
    }
    assert!(out.status.success(), "{text}");
    assert!(text.contains("FALLBACK-OK"), "{text}");
}
