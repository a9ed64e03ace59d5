//! A CPU-bound process on the server's CPU disturbs a measurement, and
//! `shootout run` says so (#25 §5): a short study against a real server on
//! 127.0.0.1, once with a busy loop pinned to the server's CPU (the
//! measurement is `disturbed` in the store and flagged in the Markdown
//! report) and once without it (not disturbed). This machine is shared,
//! so the quiet half skips, saying why, when other processes already took
//! more than the limit without our loop: the machine decides that, not us.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

mod common;

use common::{on_path, repo, Tmp};
use shootout_store::{Measurement, Store, OTHERS_CPU_LIMIT};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

/// A real target this machine can build, or None (skipped, said).
fn target() -> Option<&'static str> {
    let found = [("go-nethttp", "go"), ("python-falcon", "python3")]
        .into_iter()
        .find(|(name, tool)| on_path(tool) && repo().join("targets").join(name).is_dir());
    if found.is_none() {
        shootout_testkit::missing("neither go nor python3 is on PATH");
    }
    found.map(|(name, _)| name)
}

/// A busy loop pinned to `cpu`, killed when dropped. `taskset` execs the
/// shell, so the child is the loop itself and killing it ends it (a
/// `timeout` in between would fork it and leave it running); the loop ends
/// by itself after 120 s should this test die before the drop, and its
/// output goes nowhere, so that it can never hold the test runner's pipes
/// open.
struct Busy(Child);

/// Shell arithmetic only (no fork per turn), checking the clock every
/// 100,000 turns.
const BUSY_LOOP: &str = "end=$(( $(date +%s) + 120 )); \
    while [ \"$(date +%s)\" -lt \"$end\" ]; do i=0; \
    while [ $i -lt 100000 ]; do i=$((i + 1)); done; done";

impl Busy {
    fn on(cpu: usize) -> Busy {
        let child = Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", BUSY_LOOP])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Busy(child)
    }

    /// The loop's user CPU time so far, in clock ticks (`utime`, field 14
    /// of /proc/PID/stat), or None once it is gone.
    fn utime(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0.id())).ok()?;
        // The command name may hold spaces: the fields follow the last ')'.
        let rest = &stat[stat.rfind(')')? + 1..];
        rest.split_whitespace().nth(11)?.parse().ok()
    }
}

/// Waits until every loop of `busy` is spinning: its user CPU time grew
/// since it was first read.
fn wait_spinning(busy: &[Busy]) {
    let start: Vec<Option<u64>> = busy.iter().map(Busy::utime).collect();
    shootout_testkit::wait_until(
        "the busy loops are using CPU time",
        Duration::from_secs(5),
        || {
            busy.iter()
                .zip(&start)
                .all(|(b, s)| b.utime().is_some_and(|t| Some(t) > *s))
        },
    );
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs a one-level study of `target` with the server on `server` and the
/// generator on `generator`; returns its one measurement and its stdout.
fn study(tag: &str, target: &str, server: usize, generator: usize) -> (Measurement, String) {
    let (m, stdout, _) = study_with(tag, target, (server, generator), &[], &mut |_| {});
    (m, stdout)
}

/// As [`study`], with `extra` flags; `line` hears each stderr line as it
/// comes. Returns the measurement, stdout and stderr.
fn study_with(
    tag: &str,
    target: &str,
    (server, generator): (usize, usize),
    extra: &[&str],
    line: &mut dyn FnMut(&str),
) -> (Measurement, String, String) {
    let dir = std::env::temp_dir().join(format!("shootout-quiet-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tmp = Tmp(dir);
    let file = tmp.0.join("quiet.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"quiet\"\ndescription = \"test only\"\nsource = \"tests\"\n\
             targets = [\"{target}\"]\nwarmup = \"250ms\"\n\
             cpus = {{ server = [{server}], generator = [{generator}] }}\n\n\
             [[scenario]]\nname = \"plaintext\"\nload = {{ connections = 4, duration = \"2s\" }}\n"
        ),
    )
    .unwrap();
    let db = tmp.0.join("t.db");
    let mut child = common::run_command(&file, &db, &repo().join("targets"))
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let mut stderr = String::new();
    for l in BufReader::new(child.stderr.take().unwrap()).lines() {
        let l = l.unwrap();
        line(&l);
        stderr.push_str(&l);
        stderr.push('\n');
    }
    let status = child.wait().unwrap();
    let stdout = reader.join().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let store = Store::open(&db).unwrap();
    let id = store.resolve("latest").unwrap();
    let mut data = store.load_run(id).unwrap();
    assert_eq!(data.measurements.len(), 1, "{stderr}");
    let m = data.measurements.remove(0);
    eprintln!(
        "{tag}: others {:?}, steal {:?}, disturbed {}\n{stderr}",
        m.others_cpu_share, m.steal_share, m.disturbed
    );
    (m, stdout, stderr)
}

/// Two CPUs to split, or None (skipped, said): with one nothing is pinned.
fn two_cpus() -> Option<(usize, usize)> {
    let cpus = shootout_engine::affinity::allowed_cpus();
    if cpus.len() < 2 {
        shootout_testkit::machine(format!("fewer than two CPUs ({cpus:?})"));
        return None;
    }
    Some((cpus[0], cpus[1]))
}

#[test]
fn a_busy_loop_on_the_server_cpu_disturbs_the_measurement() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(target), Some((server, generator))) = (target(), two_cpus()) else {
        return;
    };
    // Two loops, so that they hold about two thirds of the CPU against the
    // server rather than half: clearly over the limit, not near it.
    let busy = [Busy::on(server), Busy::on(server)];
    wait_spinning(&busy);
    let (m, stdout) = study("busy", target, server, generator);
    drop(busy);
    // The loop competes with the server for its one CPU: about half of it,
    // a quarter of the two CPUs watched, well over the limit.
    let others = m.others_cpu_share.expect("the CPUs' counters were read");
    assert!(others > OTHERS_CPU_LIMIT, "others {others}");
    assert!(m.disturbed, "{others}");
    assert!(
        stdout.contains(&format!("※ Disturbed: {target} (other processes")),
        "{stdout}"
    );
}

#[test]
fn the_same_study_without_the_loop_is_not_disturbed() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(target), Some((server, generator))) = (target(), two_cpus()) else {
        return;
    };
    let (m, stdout) = study("calm", target, server, generator);
    let others = m.others_cpu_share.expect("the CPUs' counters were read");
    let steal = m.steal_share.expect("the steal counter was read");
    if others > OTHERS_CPU_LIMIT || steal > shootout_store::STEAL_LIMIT {
        shootout_testkit::machine(format!(
            "the quiet half: this machine is busy without our loop (other processes \
             {:.0}%, steal {:.0}% of CPUs {server},{generator}); the flag is right to say so",
            others * 100.0,
            steal * 100.0
        ));
        assert!(m.disturbed, "over a limit yet not flagged");
        return;
    }
    assert!(!m.disturbed, "others {others}, steal {steal}");
    assert!(!stdout.contains("Disturbed"), "{stdout}");
}

/// `--wait-quiet`: a loop that holds the server's CPU before the level is
/// waited out (the run says so), and the level is measured once it is gone.
#[test]
fn wait_quiet_waits_until_the_loop_is_gone() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(target), Some(cpus)) = (target(), two_cpus()) else {
        return;
    };
    let mut busy = Some([Busy::on(cpus.0), Busy::on(cpus.0)]);
    let mut saw_wait = false;
    let (m, _, stderr) = study_with("wait", target, cpus, &["--wait-quiet=90s"], &mut |l| {
        if l.contains("waiting for quiet CPUs") {
            saw_wait = true;
            busy = None;
        }
    });
    drop(busy);
    assert!(saw_wait, "{stderr}");
    if m.others_cpu_share.unwrap_or(1.0) > OTHERS_CPU_LIMIT {
        shootout_testkit::machine("the quiet half: this machine stayed busy without our loop");
        return;
    }
    // Another process may still have disturbed the first measurement
    // after our loop ended; then it was taken once more, which is right.
    assert!(!m.disturbed, "{stderr}");
}

/// `--wait-quiet`: a loop that never ends is waited on up to the cap, the
/// disturbed level is taken once more, and only that one is kept, flagged.
#[test]
fn wait_quiet_measures_a_disturbed_level_once_more() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(target), Some(cpus)) = (target(), two_cpus()) else {
        return;
    };
    let busy = [Busy::on(cpus.0), Busy::on(cpus.0)];
    let (m, _, stderr) = study_with("again", target, cpus, &["--wait-quiet=2s"], &mut |_| {});
    drop(busy);
    assert!(stderr.contains("the CPUs were not quiet after"), "{stderr}");
    assert_eq!(
        stderr.matches("measuring it once more").count(),
        1,
        "{stderr}"
    );
    assert!(m.disturbed, "{stderr}");
}
