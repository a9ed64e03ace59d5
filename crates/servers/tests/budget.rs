//! Budgets on real processes in real cgroups (v1 on this machine, v2 on
//! most others): a CPU quota set at start binds, a quota changed between
//! levels binds at its new value, `SERVER_CPUS` follows the quota, and a
//! memory limit below a process's need gets it OOM-killed and counted.
//! Where no cgroup can be made, each test is skipped (a machine fact).

#![allow(clippy::unwrap_used)] // test setup: a failed step should panic

use shootout_cgroup::{Budget, Counters};
use shootout_servers::{budget_cpus, free_port, Limits, Server, Target};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("shootout-budget-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn target(dir: &Path, run: &str) -> Target {
    Target::command("budget-fake", dir, run)
}

fn limits(cpus: Option<f64>, memory: Option<u64>) -> Limits {
    Limits {
        budget: Budget {
            cpus,
            memory,
            cpuset: None,
        },
        quota_ready: true,
    }
}

/// Starts `run` under `limits`, or None (skipped) when this
/// machine cannot make cgroups.
fn start(dir: &Path, run: &str, limits: &Limits, test: &str) -> Option<Server> {
    let t = target(dir, run);
    match Server::start_limited(
        &t,
        free_port().unwrap(),
        &dir.join("s.log"),
        &[],
        &[],
        limits,
    ) {
        Ok(s) => Some(s),
        Err(e) => {
            let probe = shootout_servers::cgroup::probe();
            assert!(
                probe.as_ref().is_err_and(|p| p.is_unavailable()),
                "cgroups usable ({probe:?}) but the start failed: {e}"
            );
            shootout_testkit::machine(format!("{test}: {e}"));
            None
        }
    }
}

fn counters(s: &Server) -> Counters {
    s.cgroup_counters().unwrap().unwrap()
}

/// CPUs used and the throttled time over `wall`.
fn usage_over(s: &Server, wall: Duration) -> (f64, Duration) {
    let before = counters(s);
    let t0 = Instant::now();
    std::thread::sleep(wall);
    let d = counters(s).since(&before);
    (d.cpus_over(t0.elapsed()), d.throttled)
}

#[test]
fn a_cpu_quota_binds_at_start_and_when_changed() {
    let dir = Dir::new("quota");
    // Two busy threads: without a quota they would use up to 2 CPUs.
    let run = "sh -c 'while :; do :; done' & sh -c 'while :; do :; done' & wait";
    let Some(mut s) = start(&dir.0, run, &limits(Some(0.25), None), "quota") else {
        return;
    };
    // The loops run and the quota has held them back once: what is measured
    // below is the quota at work.
    shootout_testkit::wait_until(
        "the busy loops using CPU and throttled by the quota",
        Duration::from_secs(5),
        || {
            let c = counters(&s);
            c.cpu > Duration::ZERO && c.throttled_periods > 0
        },
    );
    let (used, throttled) = usage_over(&s, Duration::from_millis(1500));
    assert!(used <= 0.3, "quota 0.25 but {used:.3} CPUs used");
    assert!(used >= 0.15, "{used:.3} CPUs: the loops did not run");
    assert!(throttled > Duration::ZERO, "never throttled");
    s.set_budget(&limits(Some(0.5), None).budget)
        .unwrap()
        .unwrap();
    let (used, _) = usage_over(&s, Duration::from_millis(1500));
    assert!(
        (0.35..=0.56).contains(&used),
        "quota 0.5 but {used:.3} CPUs used"
    );
    let paths = s.cgroup_paths();
    assert!(!paths.is_empty());
    s.stop();
    for p in paths {
        assert!(!p.exists(), "{} left behind", p.display());
    }
}

#[test]
fn server_cpus_follows_the_quota_and_pinning() {
    let dir = Dir::new("cpus");
    let out = dir.0.join("cpus");
    let run = format!("echo \"$SERVER_CPUS\" > '{}'; sleep 60", out.display());
    let Some(mut s) = start(&dir.0, &run, &limits(Some(0.5), None), "server_cpus") else {
        return;
    };
    // The file exists as soon as the shell opens it: wait for its line.
    shootout_testkit::wait_until(
        &format!("the server writing $SERVER_CPUS to {}", out.display()),
        Duration::from_secs(5),
        || std::fs::read_to_string(&out).is_ok_and(|t| t.ends_with('\n')),
    );
    s.stop();
    assert_eq!(std::fs::read_to_string(&out).unwrap().trim(), "1");
    assert_eq!(budget_cpus(&[0, 1], Some(1.5)), 2);
    assert_eq!(budget_cpus(&[0, 1], Some(0.5)), 1);
    assert_eq!(
        budget_cpus(&[0], Some(2.0)),
        1,
        "never above the pinned CPUs"
    );
    assert_eq!(budget_cpus(&[0, 1], None), 2);
}

#[test]
fn a_memory_limit_below_the_need_is_an_oom_kill_with_nothing_left() {
    let dir = Dir::new("oom");
    let run = "exec python3 -c 'import time; x = bytearray(128 << 20); time.sleep(60)'";
    let Some(mut s) = start(&dir.0, run, &limits(None, Some(32 << 20)), "oom") else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while counters(&s).oom_kills == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let c = counters(&s);
    assert!(c.oom_kills >= 1, "not OOM-killed: {c:?}");
    assert!(c.memory_peak.unwrap_or(u64::MAX) <= 32 << 20, "{c:?}");
    let paths = s.cgroup_paths();
    s.stop();
    for p in paths {
        assert!(!p.exists(), "{} left behind", p.display());
    }
}
