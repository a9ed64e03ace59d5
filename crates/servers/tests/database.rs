//! The runner-owned PostgreSQL, against the real Debian server: a cluster
//! starts seeded, serves the app role over TCP, records its settings, and
//! leaves no process and no folder behind, whether it is stopped, dropped,
//! or its owner is SIGKILLed. As root, the same test also runs as an
//! unprivileged user, since CI runs as root and users mostly do not.

use shootout_servers::database::{Cluster, ClusterOptions, DatabaseError};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A started cluster, or None (skipped) when PostgreSQL is absent.
fn cluster() -> Option<Cluster> {
    match Cluster::start(&ClusterOptions::for_pool(4, vec![0])) {
        Ok(c) => Some(c),
        Err(DatabaseError::NotInstalled { .. }) => {
            shootout_testkit::missing("PostgreSQL is not installed (apt-get install postgresql)");
            None
        }
        Err(e) => panic!("cluster did not start: {e}"),
    }
}

fn group_gone(pgid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !shootout_servers::process::group_alive(pgid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn a_cluster_starts_seeded_and_leaves_nothing_behind() {
    let Some(mut c) = cluster() else { return };
    let access = c.access();
    assert_eq!(access.pool_size, 4);
    let mut app = postgres::Client::connect(&access.app_url, postgres::NoTls).unwrap();
    let row = app
        .query_one(
            "SELECT count(*), min(id), max(id), min(randomnumber), max(randomnumber) FROM world",
            &[],
        )
        .unwrap();
    let (n, lo, hi): (i64, i32, i32) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((n, lo, hi), (10_000, 1, 10_000));
    let (rlo, rhi): (i32, i32) = (row.get(3), row.get(4));
    assert!(rlo >= 1 && rhi <= 10_000 && rhi > rlo, "{rlo}..{rhi}");
    let fortunes: Vec<String> = app
        .query("SELECT message FROM fortune ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(fortunes.len(), 12);
    assert_eq!(fortunes[11], "フレームワークのベンチマーク");
    assert!(fortunes[10].starts_with("<script>"));
    // The app role may update, and pg_stat_statements sees its queries.
    app.execute("UPDATE world SET randomnumber = 7 WHERE id = 1", &[])
        .unwrap();
    let mut admin = postgres::Client::connect(&access.admin_url, postgres::NoTls).unwrap();
    let calls: i64 = admin
        .query_one(
            "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query LIKE 'UPDATE world%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(calls, 1);
    let info = c.info().clone();
    assert!(
        info.version.starts_with(char::is_numeric),
        "{}",
        info.version
    );
    let setting = |n: &str| {
        info.settings
            .iter()
            .find(|s| s.name == n)
            .map(|s| s.value.clone())
    };
    assert_eq!(setting("synchronous_commit").as_deref(), Some("off"));
    assert_eq!(setting("max_connections").as_deref(), Some("36"));
    assert_eq!(info.cpus, vec![0]);
    drop((app, admin));

    let (pgid, dir) = (c.postmaster_pid(), c.dir().to_path_buf());
    assert!(pgid > 0 && dir.exists());
    c.stop();
    assert!(group_gone(pgid), "postmaster group {pgid} survived stop");
    assert!(!dir.exists(), "{} survived stop", dir.display());
}

/// Run by the next test in a child process, which is then SIGKILLed.
#[test]
fn held_by_a_child_process() {
    let Ok(report) = std::env::var("SHOOTOUT_DB_CHILD_REPORT") else {
        return;
    };
    let Some(c) = cluster() else { return };
    let line = format!("{} {}\n", c.postmaster_pid(), c.dir().display());
    std::fs::write(&report, line).unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_sigkilled_owner_leaves_no_server_and_the_next_start_removes_its_folder() {
    if shootout_servers::database::find_bin_dir().is_none() {
        shootout_testkit::missing("PostgreSQL is not installed");
        return;
    }
    let report = std::env::temp_dir().join(format!("shootout-db-child-{}", std::process::id()));
    let _ = std::fs::remove_file(&report);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "held_by_a_child_process", "--nocapture"])
        .env("SHOOTOUT_DB_CHILD_REPORT", &report)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !report.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&report).expect("the child never started its cluster");
    let (pid, dir) = text.trim().split_once(' ').unwrap();
    let (pgid, dir): (i32, &Path) = (pid.parse().unwrap(), Path::new(dir));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        group_gone(pgid),
        "the postmaster outlived its SIGKILLed owner"
    );
    assert!(dir.exists(), "expected the dead owner's folder to remain");
    let Some(next) = cluster() else { return };
    assert!(
        !dir.exists(),
        "the next start did not remove {}",
        dir.display()
    );
    drop(next);
    let _ = std::fs::remove_file(&report);
}

#[test]
fn as_root_the_cluster_also_works_for_an_unprivileged_user() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || std::env::var_os("SHOOTOUT_DB_AS_USER").is_some() {
        return;
    }
    if shootout_servers::database::find_bin_dir().is_none() {
        shootout_testkit::missing("PostgreSQL is not installed");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
        .arg(&exe)
        .args([
            "--exact",
            "a_cluster_starts_seeded_and_leaves_nothing_behind",
        ])
        .env("SHOOTOUT_DB_AS_USER", "1")
        .env("TMPDIR", "/tmp")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "as nobody: {text}");
    assert!(text.contains("1 passed"), "as nobody: {text}");
}

/// The postmaster and every backend run in the cluster's own cgroup, whose
/// counters see the backends' CPU time and memory; stop removes it.
#[test]
fn the_cluster_runs_in_its_own_cgroup_removed_at_stop() {
    let Some(mut c) = cluster() else { return };
    let paths = c.cgroup_paths();
    let Some(reader) = c.cgroup_reader() else {
        let why = shootout_cgroup::Layout::detect().err();
        assert!(
            why.as_ref()
                .is_some_and(shootout_cgroup::CgroupError::is_unavailable),
            "cgroups usable but the cluster has none: {why:?}"
        );
        shootout_testkit::machine(format!("{why:?}"));
        return;
    };
    assert!(!paths.is_empty());
    let procs = std::fs::read_to_string(paths[0].join("cgroup.procs")).unwrap();
    let pids: Vec<i32> = procs
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    assert!(pids.contains(&c.postmaster_pid()), "{pids:?}");
    let before = reader.counters().unwrap().unwrap();
    let mut app = postgres::Client::connect(&c.access().app_url, postgres::NoTls).unwrap();
    for _ in 0..3 {
        app.query(
            "SELECT count(*) FROM world w1, world w2 WHERE w1.id % 97 = w2.id % 89",
            &[],
        )
        .unwrap();
    }
    let after = reader.counters().unwrap().unwrap();
    // The backend that ran the join was forked after the start, in the group.
    let used = after.since(&before).cpu;
    assert!(used > Duration::from_millis(20), "{used:?}");
    assert!(after.memory_peak.unwrap_or(0) > 1 << 20, "{after:?}");
    drop(app);
    c.stop();
    for p in &paths {
        assert!(!p.exists(), "{} survived stop", p.display());
    }
    assert!(c.cgroup_reader().is_none());
}
