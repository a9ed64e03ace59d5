//! The TLS contract (targets/SPEC.md "TLS") on the real reference servers:
//! every target whose manifest claims `tls` is built (a no-op when CI has
//! built it already), started with `PORT` and the variables of
//! [`tls_env`], and checked with curl: `/plaintext` and `/json` answer the
//! same bodies over TLS (1.2 and 1.3) as in cleartext, ALPN gives `h2`
//! exactly when the manifest claims `h2`, and with `TLS_CLIENT_CA` (for
//! targets claiming `mtls`) a client without a certificate is refused and
//! one with it is served. Targets whose toolchain is missing are skipped in
//! one line; `SHOOTOUT_TLS_TARGETS=a,b` narrows the run while developing.

#![allow(clippy::unwrap_used)] // test setup: a failed step should panic

use shootout_servers::{
    build, discover, free_port, tls_env, BuildCache, BuildOutcome, Server, Target, TlsFiles,
};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Tmp(PathBuf);

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The certificates of one test run: the server's for 127.0.0.1, ::1 and
/// localhost, and a client's, both signed by one throw-away CA.
struct Certs {
    ca: PathBuf,
    server: TlsFiles,
    client_cert: PathBuf,
    client_key: PathBuf,
}

/// Makes [`Certs`] in `dir` with shootout's own certificate maker, the
/// one the runner uses.
fn make_certs(dir: &Path) -> Certs {
    let paths = shootout_certs::write(dir).unwrap();
    Certs {
        ca: paths.ca,
        server: TlsFiles {
            cert: paths.server_cert,
            key: paths.server_key,
            client_ca: None,
        },
        client_cert: paths.client_cert,
        client_key: paths.client_key,
    }
}

/// What curl got: its exit code, the HTTP status, the HTTP version and
/// the body.
#[derive(Debug)]
struct Got {
    exit: Option<i32>,
    status: String,
    version: String,
    body: String,
}

impl Got {
    fn ok(&self) -> bool {
        self.exit == Some(0) && self.status == "200"
    }
}

/// GET `url` with curl and `args` (TLS and protocol flags).
fn curl(url: &str, args: &[&str]) -> Got {
    let out = Command::new("curl")
        .args([
            "--silent",
            "--max-time",
            "10",
            "--write-out",
            "\n%{http_code} %{http_version}",
        ])
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, tail) = text.rsplit_once('\n').unwrap_or(("", &text));
    let (status, version) = tail.split_once(' ').unwrap_or((tail, ""));
    Got {
        exit: out.status.code(),
        status: status.to_owned(),
        version: version.to_owned(),
        body: body.to_owned(),
    }
}

/// Starts `target` with its TLS port; None (with the reason pushed to
/// `failures`) when it does not come up.
fn start(
    target: &Target,
    files: &TlsFiles,
    ca: &str,
    client: &[&str],
    failures: &mut Vec<String>,
) -> Option<(Server, u16)> {
    let (port, tls_port) = (free_port().unwrap(), free_port().unwrap());
    let env = tls_env(&target.name, target.protocols, tls_port, files).unwrap();
    let log = target.server_log("tls-test");
    let mut server = match Server::start_env(target, port, &log, &[], &env) {
        Ok(s) => s,
        Err(e) => {
            failures.push(format!("{}: does not start: {e}", target.name));
            return None;
        }
    };
    if let Err(e) = server.wait_ready(Duration::from_secs(60)) {
        failures.push(format!("{}: not ready: {e}", target.name));
        server.stop();
        return None;
    }
    // The TLS port may open a moment after the cleartext one (a second
    // listener, a second process).
    let url = format!("https://127.0.0.1:{tls_port}{}", target.ready);
    let deadline = Instant::now() + Duration::from_secs(30);
    let args = [&["--cacert", ca][..], client].concat();
    while !curl(&url, &args).ok() {
        if Instant::now() > deadline {
            let got = curl(&url, &args);
            failures.push(format!(
                "{}: TLS port {tls_port} never answered {} with 200 (last: {got:?}; log {})",
                target.name,
                target.ready,
                log.display()
            ));
            server.stop();
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Some((server, tls_port))
}

/// Stops `server` and checks that SIGTERM ended it with both its ports.
fn stop(mut server: Server, name: &str, failures: &mut Vec<String>) {
    let report = server.stop();
    if !report.graceful || report.leftovers {
        failures.push(format!(
            "{name}: SIGTERM did not stop it cleanly: {report:?}"
        ));
    }
}

/// The checks of the TLS port without client certificates.
fn check_tls(target: &Target, certs: &Certs, failures: &mut Vec<String>) {
    let ca = certs.ca.to_str().unwrap();
    let Some((server, tls_port)) = start(target, &certs.server, ca, &[], failures) else {
        return;
    };
    let name = &target.name;
    let mut fail = |what: String| failures.push(format!("{name}: {what}"));
    for path in ["/plaintext", "/json"] {
        let clear = curl(&format!("http://{}{path}", server.addr()), &[]);
        let url = format!("https://127.0.0.1:{tls_port}{path}");
        if !clear.ok() {
            fail(format!("cleartext {path}: {clear:?}"));
        }
        for (label, flags) in [
            ("TLS 1.3", &["--http1.1", "--tlsv1.3"][..]),
            (
                "TLS 1.2",
                &["--http1.1", "--tlsv1.2", "--tls-max", "1.2"][..],
            ),
        ] {
            let got = curl(&url, &[&["--cacert", ca][..], flags].concat());
            if !got.ok() || got.body != clear.body || got.version != "1.1" {
                fail(format!(
                    "{label} {path}: {got:?}, cleartext answered {:?}",
                    clear.body
                ));
            }
        }
        let h2 = curl(&url, &["--cacert", ca, "--http2"]);
        let want = if target.protocols.h2 { "2" } else { "1.1" };
        if !h2.ok() || h2.body != clear.body || h2.version != want {
            fail(format!(
                "curl --http2 {path}: HTTP/{} (manifest claims h2: {}; wanted HTTP/{want}), {h2:?}",
                h2.version, target.protocols.h2
            ));
        }
    }
    stop(server, name, failures);
}

/// The checks of the TLS port with `TLS_CLIENT_CA`.
fn check_mtls(target: &Target, certs: &Certs, failures: &mut Vec<String>) {
    let ca = certs.ca.to_str().unwrap();
    let files = TlsFiles {
        client_ca: Some(certs.ca.clone()),
        ..certs.server.clone()
    };
    let client = ["--cert", certs.client_cert.to_str().unwrap()];
    let client = [&client[..], &["--key", certs.client_key.to_str().unwrap()]].concat();
    let Some((server, tls_port)) = start(target, &files, ca, &client, failures) else {
        return;
    };
    let url = format!("https://127.0.0.1:{tls_port}/json");
    let clear = curl(&format!("http://{}/json", server.addr()), &[]);
    let with = curl(&url, &[&["--cacert", ca][..], &client].concat());
    if !with.ok() || with.body != clear.body {
        failures.push(format!(
            "{}: mTLS with a client certificate: {with:?}",
            target.name
        ));
    }
    for flags in [&["--http1.1"][..], &["--http2"]] {
        let without = curl(&url, &[&["--cacert", ca][..], flags].concat());
        if without.ok() || !without.body.is_empty() {
            failures.push(format!(
                "{}: mTLS served a client without a certificate ({flags:?}): {without:?}",
                target.name
            ));
        }
    }
    // The cleartext port is untouched by TLS_CLIENT_CA.
    if !clear.ok() {
        failures.push(format!(
            "{}: cleartext /json beside mTLS: {clear:?}",
            target.name
        ));
    }
    stop(server, &target.name, failures);
}

#[test]
fn every_target_claiming_tls_serves_the_contract_over_it() {
    if !shootout_testkit::tools(&["curl"]) {
        return;
    }
    let tmp = Tmp(std::env::temp_dir().join(format!("shootout-tls-{}", std::process::id())));
    std::fs::create_dir_all(&tmp.0).unwrap();
    let certs = make_certs(&tmp.0);
    let only: Option<Vec<String>> = std::env::var("SHOOTOUT_TLS_TARGETS")
        .ok()
        .map(|v| v.split(',').map(str::to_owned).collect());
    let found = discover(&repo().join("targets")).unwrap();
    assert!(found.broken.is_empty(), "{:?}", found.broken);
    let mut failures = Vec::new();
    let mut checked = Vec::new();
    for target in &found.targets {
        if only.as_ref().is_some_and(|o| !o.contains(&target.name)) {
            continue;
        }
        if !target.protocols.tls {
            eprintln!("{}: claims no TLS, not checked", target.name);
            continue;
        }
        match build(target, BuildCache::from_env().ok().as_ref()) {
            Ok(BuildOutcome::Skipped { reason }) => {
                shootout_testkit::missing(format!("{}: {reason}", target.name));
                continue;
            }
            Ok(_) => {}
            Err(e) => {
                failures.push(e.to_string());
                continue;
            }
        }
        check_tls(target, &certs, &mut failures);
        if target.protocols.mtls {
            check_mtls(target, &certs, &mut failures);
        }
        checked.push(target.name.as_str());
    }
    eprintln!("checked over TLS: {checked:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
