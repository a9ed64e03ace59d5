//! End-to-end tests of `shootout run` against the real reference servers
//! (those whose toolchain is present; the others are skipped with a visible
//! note) plus a test-only target whose server exits at once. Each test uses a
//! fixture targets directory (symlinks to targets/ plus the broken target),
//! a tiny study file and its own database. The tests share the machine's two
//! cores, so they run one at a time.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

mod common;

use common::{on_path, repo, Tmp};
use shootout_store::{RunData, RunStatus, Store, TargetStatus};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// Real targets usable here: go-nethttp (go) and python-falcon (python3,
/// gunicorn with worker processes, so the process-tree sampling is tested).
fn available_targets() -> Vec<&'static str> {
    let mut out = Vec::new();
    for (name, tool) in [("go-nethttp", "go"), ("python-falcon", "python3")] {
        if on_path(tool)
            && repo()
                .join("targets")
                .join(name)
                .join("target.toml")
                .is_file()
        {
            out.push(name);
        } else {
            shootout_testkit::missing(format!(
                "{name}: `{tool}` is not on PATH (or the target is missing)"
            ));
        }
    }
    out
}

/// targets/ entries as symlinks, plus `broken-exit`, whose server exits at once.
fn fixture_targets(tmp: &Path) -> PathBuf {
    let real = repo().join("targets");
    std::fs::create_dir_all(real.join(".build")).unwrap();
    let dir = tmp.join("targets");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(&real).unwrap().flatten() {
        std::os::unix::fs::symlink(e.path(), dir.join(e.file_name())).unwrap();
    }
    let broken = dir.join("broken-exit");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("target.toml"),
        r#"name = "broken-exit"
language = "sh"
framework = "none"
description = "test-only: the server exits at once"
toolchain = "python3"
build = ["true"]
run = "echo 'broken-exit: giving up at once' >&2; exit 3"
ready = "/plaintext"
footprint = ["target.toml"]
inputs = ["target.toml"]
"#,
    )
    .unwrap();
    dir
}

fn study_file(tmp: &Path, targets: &[&str], body: &str) -> PathBuf {
    let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
    let text = format!(
        "name = \"test-tiny\"\ndescription = \"test only\"\nsource = \"tests\"\ntargets = [{}]\n{body}",
        list.join(", ")
    );
    let path = tmp.join("test-tiny.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `shootout run` with a machine lock of this test's own: these tests judge
/// what a run does (signals, rotation, a broken target, a database left
/// behind), not a figure, so they run beside the `machine` group's
/// studies (.config/nextest.toml, group `studies`) instead of waiting for
/// the lock.
fn shootout(tmp: &Path, study: &Path, targets_dir: &Path) -> Command {
    // The report's tables on stdout are read.
    let mut c = common::run_command(study, &tmp.join("t.db"), targets_dir);
    c.stdout(Stdio::piped())
        .env("SHOOTOUT_LOCK", tmp.join("machine.lock"));
    c
}

fn load(tmp: &Path) -> RunData {
    let store = Store::open(tmp.join("t.db")).unwrap();
    let id = store.resolve("latest").unwrap();
    store.load_run(id).unwrap()
}

#[test]
// One study run checked end to end: splitting it would run the study twice.
#[allow(clippy::too_many_lines)]
fn run_records_every_measurement_rotates_and_survives_a_broken_target() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = Tmp::new("run");
    let real = available_targets();
    let mut targets = real.clone();
    targets.push("broken-exit");
    let study = study_file(
        &tmp.0,
        &targets,
        r#"repetitions = 2
order = "rotate"
restart = "per-repetition"
warmup = "250ms"

[[scenario]]
name = "plaintext"
load = { connections = 4, duration = "1s" }

[[scenario]]
name = "json"
load = { connections = 4, duration = "1s", pipeline = 4 }
"#,
    );
    let dir = fixture_targets(&tmp.0);
    let t0 = Instant::now();
    let out = shootout(&tmp.0, &study, &dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("run took {:.1?}\n{stderr}", t0.elapsed());
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed target means exit 1\n{stderr}"
    );
    assert!(
        stdout.contains("test-tiny"),
        "Markdown tables on stdout:\n{stdout}"
    );

    let data = load(&tmp.0);
    assert_eq!(data.run.status, RunStatus::Complete);
    assert!(data.run.study_text.contains("broken-exit"));
    let broken = data
        .targets
        .iter()
        .find(|t| t.target == "broken-exit")
        .unwrap();
    if on_path("python3") {
        assert_eq!(broken.status, TargetStatus::StartFailed, "{broken:?}");
        assert!(
            broken
                .log_tail
                .as_deref()
                .unwrap_or("")
                .contains("giving up"),
            "{broken:?}"
        );
    } else {
        assert_eq!(broken.status, TargetStatus::Skipped, "{broken:?}");
    }
    for name in &real {
        let t = data.targets.iter().find(|t| t.target == *name).unwrap();
        assert_eq!(t.status, TargetStatus::Ok, "{t:?}");
        assert!(t.footprint_bytes.unwrap_or(0) > 0, "{t:?}");
    }

    // Every measurement is there, with plausible memory and CPU.
    assert_eq!(data.measurements.len(), real.len() * 2 * 2, "{stderr}");
    for m in &data.measurements {
        let what = format!("{} {} rep {}", m.target, m.scenario, m.repetition);
        assert!(m.summary.requests.completed > 0, "{what}");
        assert!(m.rss_idle_mib > 1.0, "{what}: idle {}", m.rss_idle_mib);
        assert!(m.rss_peak_mib >= m.rss_idle_mib, "{what}");
        assert!(m.rss_after_mib > 1.0, "{what}");
        assert!(m.server_cpu_s > 0.0, "{what}: cpu {}", m.server_cpu_s);
        assert!(m.req_per_cpu_s > 0.0, "{what}");
        assert!(m.startup_s > 0.0, "{what}");
        assert_eq!(m.histogram.len(), m.summary.requests.completed, "{what}");
        let depth = if m.scenario == "json" { 4 } else { 1 };
        assert_eq!(m.summary.pipeline, depth, "{what}: the study's pipeline");
        assert_eq!(
            (m.warmup_s, m.steady),
            (Some(0.25), None),
            "{what}: a fixed warm-up has no steadiness verdict"
        );
    }
    if !real.is_empty() {
        assert!(
            stdout.contains("HTTP/1.1 pipelining")
                && stdout.contains("json (c=4 1s p=4) at depth 4"),
            "the report header names the pipelined level:\n{stdout}"
        );
    }

    // Rotation: repetition r starts with measured target r mod n.
    if real.len() >= 2 {
        let mut ms: Vec<_> = data.measurements.iter().collect();
        ms.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        for rep in 0..2u32 {
            let first = ms.iter().find(|m| m.repetition == rep).unwrap();
            assert_eq!(
                first.target,
                real[rep as usize % real.len()],
                "repetition {rep}"
            );
        }
    } else {
        shootout_testkit::missing("rotation check: fewer than two real targets available");
    }
}

/// `warmup = { window, max }` end to end on a real server: the windows
/// run before the measurement, whose record says how long they took and
/// whether the server got steady, and the progress line and the report
/// say it too.
#[test]
fn an_auto_warm_up_is_recorded_and_reported() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().first() else {
        shootout_testkit::missing("auto warm-up: no real target can be built here");
        return;
    };
    let tmp = Tmp::new("auto-warmup");
    let study = study_file(
        &tmp.0,
        &[target],
        r#"warmup = { window = "250ms", max = "2.5s" }

[[scenario]]
name = "plaintext"
load = { connections = 4, duration = "1s" }
"#,
    );
    let dir = fixture_targets(&tmp.0);
    let out = shootout(&tmp.0, &study, &dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let data = load(&tmp.0);
    assert_eq!(data.measurements.len(), 1, "{stderr}");
    let m = &data.measurements[0];
    eprintln!(
        "{target}: warm-up {:?} s, steady {:?}",
        m.warmup_s, m.steady
    );
    let w = m.warmup_s.expect("the warm-up time is recorded");
    // At least the rule's five windows of 250 ms; at most the ten of the
    // cap, plus each window's connection setup.
    assert!((1.25..6.0).contains(&w), "{w} s\n{stderr}");
    match m.steady {
        Some(true) => {
            assert!(stderr.contains("steady after"), "{stderr}");
            assert!(stdout.contains("Warm-up to steady (s)"), "{stdout}");
            assert!(!stdout.contains("Not steady"), "{stdout}");
        }
        Some(false) => {
            assert!(stderr.contains("not steady after"), "{stderr}");
            assert!(stdout.contains("Not steady: "), "{stdout}");
        }
        None => panic!("an auto warm-up has a verdict"),
    }
    assert!(
        m.summary.duration_s < 1.5,
        "the measured phase is the level's own"
    );
}

/// One process as /proc/PID/stat shows it.
struct Proc {
    pid: i32,
    live: bool,
    ppid: i32,
    pgid: i32,
}

/// Every process now, from /proc (those that vanish while read are left out).
fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields follow the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| stat[i + 1..].to_string()) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<i32>().ok()).unwrap_or(0);
        out.push(Proc {
            pid,
            live: !matches!(f.first(), Some(&"Z") | Some(&"X")),
            ppid: num(1),
            pgid: num(2),
        });
    }
    out
}

/// Pids of the processes descended from `root`, with their process groups.
fn descendants(root: u32) -> Vec<(i32, i32)> {
    let parent: std::collections::HashMap<i32, (i32, i32)> = processes()
        .into_iter()
        .map(|p| (p.pid, (p.ppid, p.pgid)))
        .collect();
    parent
        .iter()
        .filter(|(&pid, _)| {
            let mut p = pid;
            for _ in 0..32 {
                match parent.get(&p) {
                    Some(&(pp, _)) if pp == root as i32 => return true,
                    Some(&(pp, _)) if pp > 1 => p = pp,
                    _ => return false,
                }
            }
            false
        })
        .map(|(&pid, &(_, pgid))| (pid, pgid))
        .collect()
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rfind(')')
            .is_some_and(|i| !s[i + 1..].trim_start().starts_with('Z'))
    })
}

/// Waits until no process of `procs` (a run's servers, from [`descendants`])
/// is alive, once the run has exited: it kills them on its way out, and a
/// killed process takes a moment to be gone. Fails after 2 s naming them and
/// the run's stderr `err`.
fn wait_gone(procs: &[(i32, i32)], err: &str) {
    shootout_testkit::wait_until(
        &format!("the run's server processes {procs:?} gone (its stderr: {err})"),
        Duration::from_secs(2),
        || procs.iter().all(|&(pid, _)| !alive(pid)),
    );
}

/// Starts a run of `target` whose second scenario loads for 60 s, and
/// waits until the first measurement is committed and the second runs.
fn start_long_run(tmp: &Path, target: &str) -> std::process::Child {
    start_long_run_of(tmp, target, ["plaintext", "json"])
}

/// [`start_long_run`] with the two scenarios named.
fn start_long_run_of(tmp: &Path, target: &str, scenarios: [&str; 2]) -> std::process::Child {
    let [first, second] = scenarios;
    let study = study_file(
        tmp,
        &[target],
        &format!(
            r#"restart = "per-repetition"
warmup = "250ms"
order = "random"

[[scenario]]
name = "{first}"
load = {{ connections = 4, duration = "1s" }}

[[scenario]]
name = "{second}"
load = {{ connections = 4, duration = "60s" }}
"#
        ),
    );
    let dir = fixture_targets(tmp);
    let mut child = shootout(tmp, &study, &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "no measurement after 120 s");
        assert!(child.try_wait().unwrap().is_none(), "shootout exited early");
        // The run may be creating or writing the file as we look: a store
        // that cannot be read yet is looked at again.
        let measured = tmp.join("t.db").exists()
            && Store::open(tmp.join("t.db"))
                .and_then(|s| s.runs())
                .is_ok_and(|runs| runs.first().is_some_and(|r| r.measurements >= 1));
        if measured {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(2));
    child
}

/// Waits for the child to exit; returns its status, how long it took and its stderr.
fn wait_exit(
    child: &mut std::process::Child,
    t0: Instant,
) -> (std::process::ExitStatus, Duration, String) {
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "still running 10 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = t0.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    (status, took, err)
}

fn sigint(child: &std::process::Child) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

#[test]
fn run_ctrl_c_stops_quickly_kills_servers_and_keeps_measurements() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().last() else {
        shootout_testkit::missing("ctrl-c: no real target can be built here");
        return;
    };
    let tmp = Tmp::new("sigint");
    let mut child = start_long_run(&tmp.0, target);
    let procs = descendants(child.id());
    assert!(!procs.is_empty(), "the server should be running");

    let t0 = Instant::now();
    sigint(&child);
    let (status, took, err) = wait_exit(&mut child, t0);
    assert!(
        took < Duration::from_secs(5),
        "stopped after {took:?}\n{err}"
    );
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("(Ctrl-C again to quit at once)"), "{err}");
    wait_gone(&procs, &err);

    let data = load(&tmp.0);
    assert_eq!(data.run.status, RunStatus::Interrupted, "{err}");
    // The random order's seed, on the console as in the store.
    let seed = data
        .run
        .order_seed
        .expect("a random order records its seed");
    assert!(
        err.contains(&format!("order random (seed {seed})")),
        "{err}"
    );
    assert_eq!(
        data.measurements.len(),
        1,
        "the finished measurement is kept"
    );
    assert_eq!(data.measurements[0].scenario, "plaintext");
}

/// SIGTERM (what `timeout`, systemd, Kubernetes and CI runners send) and
/// SIGHUP stop a run as Ctrl-C does: within 5 s, exit 128 + the signal,
/// servers gone, the run `interrupted` with its finished measurement, the
/// report written and no server temporary folder left.
fn run_stopped_by(signal: i32, name: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().first() else {
        shootout_testkit::missing(format!("{name}: no real target can be built here"));
        return;
    };
    let tmp = Tmp::new(name);
    let mut child = start_long_run(&tmp.0, target);
    let procs = descendants(child.id());
    assert!(!procs.is_empty(), "the server should be running");
    let temp = std::env::temp_dir().join(format!("shootout-servers-{}", child.id()));
    assert!(
        temp.is_dir(),
        "the server has its TMPDIR in {}",
        temp.display()
    );
    let t0 = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let (status, took, err) = wait_exit(&mut child, t0);
    assert!(
        took < Duration::from_secs(5),
        "stopped after {took:?}\n{err}"
    );
    assert_eq!(status.code(), Some(128 + signal), "{err}");
    assert!(err.contains(&format!("interrupted ({name})")), "{err}");
    assert!(
        !err.contains("Ctrl-C again"),
        "no keyboard sent {name}: no Ctrl-C hint\n{err}"
    );
    wait_gone(&procs, &err);
    assert!(!temp.exists(), "{} left behind", temp.display());
    let data = load(&tmp.0);
    assert_eq!(data.run.status, RunStatus::Interrupted, "{err}");
    assert_eq!(
        data.measurements.len(),
        1,
        "the finished measurement is kept"
    );
    let report =
        shootout_report::run_reports_dir(&tmp.0.join("t.db"), data.run.id).join("report.md");
    assert!(report.is_file(), "no report at {}\n{err}", report.display());
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains(&format!(
            "The run was interrupted before these planned levels were measured: json (c=4 60s): {target} (1 of 1 start)."
        )),
        "the report names the level it did not measure:\n{md}"
    );
}

#[test]
fn run_sigterm_stops_like_ctrl_c_and_exits_143() {
    run_stopped_by(libc::SIGTERM, "SIGTERM");
}

#[test]
fn run_sighup_stops_like_ctrl_c_and_exits_129() {
    run_stopped_by(libc::SIGHUP, "SIGHUP");
}

#[test]
fn run_second_ctrl_c_exits_at_once_and_still_kills_servers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().first() else {
        shootout_testkit::missing("second ctrl-c: no real target can be built here");
        return;
    };
    let tmp = Tmp::new("sigint2");
    let mut child = start_long_run(&tmp.0, target);
    let procs = descendants(child.id());
    let t0 = Instant::now();
    sigint(&child);
    std::thread::sleep(Duration::from_millis(30));
    sigint(&child);
    let (status, took, err) = wait_exit(&mut child, t0);
    assert!(
        took < Duration::from_secs(2),
        "exited after {took:?}\n{err}"
    );
    assert_eq!(status.code(), Some(130), "{err}");
    wait_gone(&procs, &err);
    let data = load(&tmp.0);
    assert_eq!(data.run.status, RunStatus::Interrupted, "{err}");
    assert_eq!(data.measurements.len(), 1);
}

/// Live (non-zombie) processes whose process group is `pgid`.
fn group_members(pgid: i32) -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|p| p.live && p.pgid == pgid)
        .map(|p| p.pid)
        .collect()
}

/// SIGKILL gives shootout no chance to clean up: the servers must die on
/// their own (death signal on the leader, watchdog for the forked workers).
/// The last available target is preferred: python-falcon, whose gunicorn
/// forks worker processes that a death signal on the leader does not reach.
#[test]
fn a_run_killed_with_sigkill_leaves_no_server_and_is_marked_interrupted_by_the_next_run() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().last() else {
        shootout_testkit::missing("kill -9: no real target can be built here");
        return;
    };
    let tmp = Tmp::new("sigkill");
    let mut child = start_long_run(&tmp.0, target);
    let procs = descendants(child.id());
    // SAFETY: getpgid(2) has no memory-safety preconditions.
    let own_group = unsafe { libc::getpgid(child.id() as i32) };
    let mut groups: Vec<i32> = procs.iter().map(|&(_, g)| g).collect();
    groups.retain(|&g| g != own_group);
    groups.sort_unstable();
    groups.dedup();
    let members: usize = groups.iter().map(|&g| group_members(g).len()).sum();
    eprintln!("{target}: {} process(es) in group(s) {groups:?}", members);
    assert!(
        !groups.is_empty(),
        "the server should be running: {procs:?}"
    );

    child.kill().unwrap(); // SIGKILL: no handler runs
    let t0 = Instant::now();
    child.wait().unwrap();
    let left = loop {
        let left: Vec<i32> = procs
            .iter()
            .map(|&(pid, _)| pid)
            .filter(|&pid| alive(pid))
            .chain(groups.iter().flat_map(|&g| group_members(g)))
            .collect();
        if left.is_empty() || t0.elapsed() > Duration::from_secs(2) {
            break left;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("server gone {:?} after SIGKILL", t0.elapsed());
    if !left.is_empty() {
        for pid in &left {
            // SAFETY: kill(2) on processes this test started.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        panic!("processes left 2 s after SIGKILL to shootout: {left:?} (of {procs:?})");
    }

    let store = Store::open(tmp.0.join("t.db")).unwrap();
    assert_eq!(store.runs().unwrap()[0].status, RunStatus::Running);
    drop(store);

    let study = study_file(
        &tmp.0,
        &[target],
        "[[scenario]]\nname = \"plaintext\"\nload = { connections = 2, requests = 50 }\n",
    );
    let targets_dir = tmp.0.join("targets"); // made by start_long_run
    let out = shootout(&tmp.0, &study, &targets_dir).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("run #1 was left running by a process that died"),
        "{err}"
    );
    let store = Store::open(tmp.0.join("t.db")).unwrap();
    let runs = store.runs().unwrap();
    let first = runs.iter().find(|r| r.id == 1).unwrap();
    assert_eq!(first.status, RunStatus::Interrupted);
    assert_eq!(
        first.measurements, 1,
        "the committed measurement survives kill -9"
    );
}

/// The cluster folders of shootout process `pid`, with their postmasters.
fn clusters_of(pid: u32) -> Vec<(PathBuf, Option<i32>)> {
    let prefix = format!("shootout-pg-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| {
            let pm = std::fs::read_to_string(e.path().join("data/postmaster.pid"))
                .ok()
                .and_then(|t| t.lines().next()?.trim().parse().ok());
            (e.path(), pm)
        })
        .collect()
}

/// Ctrl-C (once, or twice) during a database study: the PostgreSQL the run
/// started is stopped and its temporary cluster deleted.
fn database_study_interrupted(presses: u32) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if shootout_servers::database::find_bin_dir().is_none() {
        shootout_testkit::missing("PostgreSQL is not installed");
        return;
    }
    let Some(&target) = available_targets().first() else {
        shootout_testkit::missing("database ctrl-c: no real target can be built here");
        return;
    };
    let tmp = Tmp::new(&format!("db-sigint{presses}"));
    let mut child = start_long_run_of(&tmp.0, target, ["db", "fortunes"]);
    let clusters = clusters_of(child.id());
    assert_eq!(
        clusters.len(),
        1,
        "one cluster while the study runs: {clusters:?}"
    );
    let (dir, postmaster) = clusters[0].clone();
    let postmaster = postmaster.expect("a running postmaster");
    assert!(alive(postmaster));
    let t0 = Instant::now();
    for _ in 0..presses {
        sigint(&child);
        std::thread::sleep(Duration::from_millis(30));
    }
    let (status, _took, err) = wait_exit(&mut child, t0);
    assert_eq!(status.code(), Some(130), "{err}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(postmaster) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(postmaster), "PostgreSQL survived Ctrl-C\n{err}");
    assert!(!dir.exists(), "{} survived Ctrl-C\n{err}", dir.display());
    let data = load(&tmp.0);
    assert_eq!(data.measurements.len(), 1, "{err}");
    assert_eq!(data.measurements[0].scenario, "db");
    assert!(
        data.measurements[0].db_cpu_s.is_some_and(|s| s > 0.0),
        "{err}"
    );
    let db = data.run.database.expect("the run records its database");
    assert!(db.version.starts_with(char::is_numeric), "{db:?}");
}

#[test]
fn ctrl_c_in_a_database_study_leaves_no_database_behind() {
    database_study_interrupted(1);
}

#[test]
fn a_second_ctrl_c_in_a_database_study_still_removes_the_database() {
    database_study_interrupted(2);
}

#[test]
fn without_postgresql_the_database_scenarios_are_skipped_in_one_line_and_the_rest_runs() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(&target) = available_targets().first() else {
        shootout_testkit::missing("no-database: no real target can be built here");
        return;
    };
    let tmp = Tmp::new("no-postgres");
    let empty = tmp.0.join("no-postgresql-here");
    std::fs::create_dir_all(&empty).unwrap();
    let study = study_file(
        &tmp.0,
        &[target],
        r#"warmup = "250ms"

[[scenario]]
name = "db"
load = { connections = 4, duration = "1s" }

[[scenario]]
name = "plaintext"
load = { connections = 4, duration = "1s" }
"#,
    );
    let targets = fixture_targets(&tmp.0);
    let out = shootout(&tmp.0, &study, &targets)
        .env("SHOOTOUT_POSTGRES_DIR", &empty)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("database scenario"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("skipping 1 database scenario(s): no PostgreSQL server found in")
            && lines[0].contains("apt-get install postgresql"),
        "{err}"
    );
    let data = load(&tmp.0);
    assert_eq!(data.run.status, RunStatus::Complete);
    assert!(data.run.database.is_none());
    let scenarios: Vec<&str> = data
        .measurements
        .iter()
        .map(|m| m.scenario.as_str())
        .collect();
    assert_eq!(scenarios, ["plaintext"], "{err}");

    // A study of database scenarios only would measure nothing: exit 2.
    let db_only = study_file(
        &tmp.0,
        &[target],
        "[[scenario]]\nname = \"db\"\nload = { connections = 4, duration = \"1s\" }\n",
    );
    let out = shootout(&tmp.0, &db_only, &targets)
        .env("SHOOTOUT_POSTGRES_DIR", &empty)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "cannot start PostgreSQL for the database scenarios: no PostgreSQL server found"
        ),
        "{err}"
    );
}

/// `shootout report` of a real run names, in every JSON result, the
/// versions its target's build resolved (a module from go.mod, Go's
/// standard library) and its runtime's, says which it could not read, and
/// the Markdown and HTML reports show the same in their Versions table.
/// One Go target, one 1 s level: about 10 s.
#[test]
fn every_result_names_its_framework_and_runtime_versions() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !on_path("go") {
        shootout_testkit::missing("versions: `go` is not on PATH");
        return;
    }
    let tmp = Tmp::new("provenance");
    let dir = fixture_targets(&tmp.0);
    // Without its /ws route: an HTTP study does not verify /ws, so a
    // broken one keeps no target out of it.
    common::go_nethttp_copy(&dir, "go-prov", |main| {
        assert!(main.contains("\tmux.HandleFunc(\"GET /ws\", wsEcho)\n"));
        main.replace("\tmux.HandleFunc(\"GET /ws\", wsEcho)\n", "")
    });
    let manifest = dir.join("go-prov/target.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    // The copy's own list gives way to one with a package go.mod lacks.
    text = text
        .lines()
        .filter(|l| !l.starts_with("provenance"))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str("provenance = [\"net/http\", \"pgx\", \"left-pad\"]\n");
    std::fs::write(&manifest, text).unwrap();
    let study = study_file(
        &tmp.0,
        &["go-prov"],
        "warmup = \"250ms\"\n\n[[scenario]]\nname = \"plaintext\"\nload = { connections = 2, duration = \"1s\" }\n",
    );
    let t0 = Instant::now();
    let out = shootout(&tmp.0, &study, &dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("run took {:.1?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(0), "{stderr}");

    let (go, pgx) = go_and_pgx(&dir.join("go-prov/go.mod"));
    let report = |format: &str| report(&tmp.0.join("t.db"), format);
    let json: serde_json::Value = serde_json::from_str(&report("json")).unwrap();
    let schema = include_str!("../../../docs/report.schema.json");
    assert_eq!(common::schema_problems(schema, &json), Vec::<String>::new());
    let results = json["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{stderr}");
    for r in results {
        let p = &r["provenance"];
        let versions: Vec<&serde_json::Value> = p["packages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| &v["version"])
            .collect();
        assert_eq!(versions[0], &serde_json::json!(go), "net/http is Go's: {p}");
        assert_eq!(versions[1], &serde_json::json!(pgx), "pgx from go.mod: {p}");
        assert!(versions[2].is_null(), "{p}");
        assert_eq!(
            p["packages"][2]["not_recorded"],
            "not recorded: targets/go-prov/go.mod has no require of left-pad"
        );
        assert_eq!(p["runtime"]["version"], serde_json::json!(go), "{p}");
        assert_eq!(p["runtime"]["source"], "go version");
    }
    let md = report("md");
    assert!(
        md.contains("## Versions")
            && md.contains(&format!(
                "| go-prov | net/http {go}, pgx {pgx}, left-pad: not recorded"
            ))
            && md.contains(&format!("| {go} |")),
        "{md}"
    );
    let html = report("html");
    assert!(
        html.contains("<section id=\"versions\">")
            && html.contains(&format!(
                "<td>net/http {go}, pgx {pgx}, left-pad: not recorded"
            )),
        "the HTML report's Versions table"
    );
}

/// `go version`'s version (go1.26.8) and pgx's in `go_mod` (v5.12.0).
fn go_and_pgx(go_mod: &Path) -> (String, String) {
    let go = Command::new("go").arg("version").output().unwrap();
    let go = String::from_utf8_lossy(&go.stdout);
    let go = go.split_whitespace().nth(2).unwrap().to_string();
    let go_mod = std::fs::read_to_string(go_mod).unwrap();
    let pgx = go_mod
        .lines()
        .find_map(|l| l.trim().strip_prefix("github.com/jackc/pgx/v5 "))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    (go, pgx)
}

/// `shootout report latest --format FORMAT` of `db`, which must succeed.
fn report(db: &Path, format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_shootout"))
        .args(["report", "latest", "--format", format, "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
