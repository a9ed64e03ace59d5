//! `verify`'s TLS column against the real go-nethttp (which claims tls,
//! mtls and h2): it passes as shipped, and fails, naming why, when the
//! manifest's claim and the server disagree: the claim of h2 taken away
//! (ALPN still gives h2), or the server started without its client CA
//! (a client without a certificate is served). Skipped when Go is missing.

#![allow(clippy::unwrap_used)] // test setup: a failure should panic

mod common;

use shootout_servers::{verify_target, Column, Target, VerifyOptions};

fn go_nethttp() -> Option<Target> {
    common::built("go-nethttp", "verify TLS test")
}

/// The TLS column's failures of a verification, as text.
fn tls_failures(target: &Target) -> Vec<String> {
    let report = verify_target(target, &VerifyOptions::default());
    let tls: Vec<_> = report
        .checks
        .iter()
        .filter(|c| c.column == Column::Tls)
        .collect();
    assert!(!tls.is_empty(), "no TLS check ran: {:?}", report.checks);
    tls.iter()
        .filter_map(|c| c.result.as_ref().err().map(ToString::to_string))
        .collect()
}

#[test]
fn the_tls_column_passes_a_true_claim_and_fails_a_false_one() {
    let Some(target) = go_nethttp() else { return };
    assert_eq!(tls_failures(&target), Vec::<String>::new());

    let mut no_h2 = target.clone();
    no_h2.protocols.h2 = false;
    let failures = tls_failures(&no_h2);
    assert!(
        failures
            .iter()
            .any(|f| f.contains("ALPN chose h2") && f.contains("does not claim h2")),
        "{failures:?}"
    );

    let mut open_door = target.clone();
    open_door.run = format!("unset TLS_CLIENT_CA; {}", target.run);
    let failures = tls_failures(&open_door);
    assert!(
        failures
            .iter()
            .any(|f| f.contains("a client without a certificate was served")),
        "{failures:?}"
    );
}
