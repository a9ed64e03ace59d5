//! `shootout run` with TLS levels (`protocol = "tls"` / `"mtls"` / `"h2"`)
//! against the real go-nethttp, which claims them all, and python-robyn,
//! which claims none: each TLS level of go-nethttp is measured over TLS,
//! its h2 level over HTTP/2 with its streams (the stored
//! summary says which TLS version was spoken and whether a client
//! certificate was offered), robyn's TLS levels are skipped with its
//! manifest's reason, its cleartext levels measured, and the run's
//! certificates are gone afterwards; a `tls_resume` level resumes its
//! handshakes and a full-handshake level does not. Skipped with a printed
//! reason where Go (or, for the skip half, Python) is missing.

#![allow(clippy::unwrap_used)]

mod common;

use common::{on_path, repo, Tmp};
use shootout_store::{Measurement, RunData, Store};
use std::path::Path;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs a study of `targets` whose one scenario has `levels`; returns the
/// stored run, stderr and the CLI's pid.
fn run(tmp: &Path, targets: &[&str], levels: &str) -> (RunData, String, u32) {
    let list: Vec<String> = targets.iter().map(|t| format!("{t:?}")).collect();
    let study = tmp.join("tls-test.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"tls-test\"\ndescription = \"test\"\nsource = \"tests\"\n\
             targets = [{}]\norder = \"fixed\"\nwarmup = \"250ms\"\n\n\
             [[scenario]]\nname = \"json\"\nlevels = [{levels}]\n",
            list.join(", ")
        ),
    )
    .unwrap();
    let child = common::run_command(&study, &tmp.join("t.db"), &repo().join("targets"))
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let store = Store::open(tmp.join("t.db")).unwrap();
    let id = store.resolve("latest").unwrap();
    (store.load_run(id).unwrap(), stderr, pid)
}

fn of<'a>(data: &'a RunData, target: &str, level: &str) -> Option<&'a Measurement> {
    data.measurements
        .iter()
        .find(|m| m.target == target && m.level_label == level)
}

#[test]
fn tls_levels_are_measured_over_tls_or_skipped_with_the_manifests_reason() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let robyn = on_path("python3");
    let targets: &[&str] = if robyn {
        &["go-nethttp", "python-robyn"]
    } else {
        shootout_testkit::missing("the skipped-target half: `python3` is not on PATH");
        &["go-nethttp"]
    };
    let tmp = Tmp::new("tls-run");
    let (data, stderr, pid) = run(
        &tmp.0,
        targets,
        "{ connections = 4, duration = \"1s\" }, { connections = 4, duration = \"1s\", protocol = \"tls\" }, \
         { connections = 2, duration = \"1s\", protocol = \"h2\", streams = 8 }",
    );
    let clear = of(&data, "go-nethttp", "c=4 1s").expect(&stderr);
    assert_eq!(clear.summary.protocol.tls, None, "{stderr}");
    let tls = of(&data, "go-nethttp", "c=4 1s tls").expect(&stderr);
    assert_eq!(tls.summary.protocol.tls.as_deref(), Some("1.3"), "{stderr}");
    assert!(!tls.summary.protocol.client_cert);
    assert!(tls.summary.requests.completed > 0, "{stderr}");
    // Keep-alive connections shook hands in the warm-up: the measured
    // phase may count none, but none may fail.
    let hs = &tls
        .summary
        .tls
        .as_ref()
        .expect("handshake figures")
        .handshakes;
    assert_eq!(hs.failed, 0, "{hs:?}");
    // The h2 level spoke HTTP/2 over TLS, 8 streams on each of 2
    // connections, and every stream was answered with the contract's body.
    let h2 = of(&data, "go-nethttp", "c=2 1s h2 streams=8").expect(&stderr);
    assert_eq!(
        (
            h2.summary.protocol.http.as_str(),
            h2.summary.protocol.tls.as_deref()
        ),
        ("2", Some("1.3")),
        "{stderr}"
    );
    assert!(h2.summary.requests.ok > 0, "{stderr}");
    assert_eq!(h2.summary.requests.ok, h2.summary.requests.completed);
    assert_eq!(h2.summary.errors.total(), 0, "{:?}", h2.summary.errors);
    if robyn {
        assert!(
            stderr.contains(
                "python-robyn · json c=2 1s h2 streams=8: skipped: python-robyn does not claim \"h2\""
            ),
            "{stderr}"
        );
        assert!(of(&data, "python-robyn", "c=4 1s").is_some(), "{stderr}");
        assert!(
            of(&data, "python-robyn", "c=4 1s tls").is_none(),
            "{stderr}"
        );
        assert!(
            stderr.contains(
                "python-robyn · json c=4 1s tls: skipped: python-robyn does not claim \"tls\""
            ),
            "{stderr}"
        );
    }
    let certs = std::env::temp_dir().join(format!("shootout-tls-{pid}"));
    assert!(!certs.exists(), "{} left behind", certs.display());
}

#[test]
fn mtls_levels_present_the_runs_client_certificate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("mtls-run");
    let (data, stderr, _) = run(
        &tmp.0,
        &["go-nethttp"],
        "{ connections = 4, duration = \"1s\", protocol = \"mtls\" }",
    );
    let m = of(&data, "go-nethttp", "c=4 1s mtls").expect(&stderr);
    assert!(m.summary.protocol.client_cert, "{stderr}");
    assert_eq!(m.summary.errors.total(), 0, "{stderr}");
    assert!(m.summary.requests.completed > 0, "{stderr}");
}

/// `tls_resume = true` reaches the engine: without keep-alive every
/// request of the resumed level is a new connection that resumes a
/// session go-nethttp issued (Go's crypto/tls sends TLS 1.3 tickets by
/// default), while the level beside it does full handshakes only.
#[test]
fn a_resumed_level_resumes_and_a_full_handshake_level_does_not() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("tls-resume-run");
    let (data, stderr, _) = run(
        &tmp.0,
        &["go-nethttp"],
        "{ connections = 2, duration = \"1s\", protocol = \"tls\", keepalive = false }, \
         { connections = 2, duration = \"1s\", protocol = \"tls\", keepalive = false, tls_resume = true }",
    );
    let handshakes = |label: &str| {
        let m = of(&data, "go-nethttp", label).expect(&stderr);
        assert_eq!(m.summary.errors.total(), 0, "{label}: {stderr}");
        assert!(!m.summary.keepalive);
        m.summary
            .tls
            .as_ref()
            .expect("handshake figures")
            .handshakes
            .clone()
    };
    let full = handshakes("c=2 1s tls");
    assert!(full.done > 0, "{full:?}");
    assert_eq!((full.resumed, full.failed), (0, 0), "{full:?}");
    let resumed = handshakes("c=2 1s tls resumed");
    assert!(resumed.resumed > 0, "{resumed:?}");
    assert_eq!(resumed.failed, 0, "{resumed:?}");
    // Sessions were had in the warm-up: most new connections resume.
    assert!(resumed.resumed * 2 >= resumed.done, "{resumed:?}");
}
