//! A run verifies each server on the CPUs it will measure it on
//! (`VerifyOptions::cpus`): the real go-nethttp, started through a wrapper
//! that writes down the `SERVER_CPUS` it was told and the CPUs it may run
//! on, is pinned and told one CPU when the run gives it one, and then its
//! CPU-use check says there is nothing to spread over instead of checking
//! two CPUs the run will not give it. `shootout verify` (no pinning) gives
//! it every CPU and measures. Skipped when Go is missing.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

mod common;

use shootout_servers::{verify_target, Column, Target, VerifyOptions};

fn go_nethttp() -> Option<Target> {
    common::built("go-nethttp", "verify pinning test")
}

/// Verifies `target` on `cpus`; returns the report and what the server saw
/// at its (first) start: `SERVER_CPUS` and its allowed-CPU list.
fn verify_on(target: &Target, cpus: &[usize]) -> (shootout_servers::VerifyReport, String) {
    let dir = std::env::temp_dir().join(format!("verify-pinned-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seen = dir.join(format!("seen-{}", cpus.len()));
    let _ = std::fs::remove_file(&seen);
    let mut wrapped = target.clone();
    wrapped.run = format!(
        "[ -e {seen} ] || {{ echo \"$SERVER_CPUS $(grep Cpus_allowed_list /proc/self/status | cut -f2)\" > {seen}; }}; {run}",
        seen = seen.display(),
        run = target.run
    );
    let opts = VerifyOptions {
        tls: false,
        cpus: cpus.to_vec(),
        ..VerifyOptions::default()
    };
    let report = verify_target(&wrapped, &opts);
    let seen = std::fs::read_to_string(&seen).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (report, seen.trim().to_string())
}

#[test]
fn a_runs_pinning_reaches_the_server_and_its_cpu_check() {
    let Some(target) = go_nethttp() else { return };
    let (report, seen) = verify_on(&target, &[0]);
    assert!(
        report.passed(),
        "{:?}",
        report.failures().collect::<Vec<_>>()
    );
    assert_eq!(
        seen, "1 0",
        "SERVER_CPUS and allowed CPUs of the pinned start"
    );
    assert_eq!(report.cpu_use, None, "one CPU is not measured");
    let cpus = report
        .checks
        .iter()
        .find(|c| c.column == Column::Cpus)
        .unwrap();
    assert!(
        cpus.note.as_deref().unwrap_or("").contains("one CPU"),
        "{cpus:?}"
    );

    let all = shootout_engine::affinity::allowed_cpus();
    if all.len() < 2 {
        shootout_testkit::machine("the unpinned half: one CPU here");
        return;
    }
    let (report, seen) = verify_on(&target, &[]);
    assert!(
        seen.starts_with(&format!("{} ", all.len())),
        "unpinned start told {seen}"
    );
    let used = report.cpu_use.expect("measured on every CPU");
    assert_eq!(used.given, all.len());
}
