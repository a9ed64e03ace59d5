//! `shootout load https://…` against Debian's nginx with certificates from
//! `shootout certs`' crate: exit codes, the JSON contract with its TLS
//! figures, what a refused certificate and a missing client certificate
//! say, the TLS flags' errors, `wss://` through nginx's WebSocket proxy,
//! and `shootout certs` itself. Without nginx
//! the server tests are skipped (a failure under `CI=true`).

#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../engine/tests/nginx_tls/mod.rs"]
mod nginx_tls;

use common::{load_json, load_json_of, shootout, stderr, stdout};
use nginx_tls::Setup;

#[test]
fn https_load_with_cacert_is_exact_and_reports_its_handshakes() {
    let Some(nginx) = nginx_tls::start("https_load_with_cacert", Setup::default()) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let url = nginx.url("127.0.0.1");
    let json = load_json(
        &["-n", "1000", "-c", "4", "-t", "2", "--cacert", ca, &url],
        0,
    );
    assert_eq!(
        (
            json["requests"]["sent"].as_u64(),
            json["requests"]["ok"].as_u64()
        ),
        (Some(1000), Some(1000))
    );
    assert_eq!(
        json["protocol"],
        serde_json::json!({"http": "1.1", "tls": "1.3", "client_cert": false})
    );
    assert_eq!(
        json["tls"]["handshakes"],
        serde_json::json!({"done": 4, "resumed": 0, "failed": 0})
    );
    assert_eq!(json["errors"]["tls"], 0);
    // Without keep-alive every request is a handshake, said in the text.
    let out = shootout(&[
        "load",
        "-n",
        "200",
        "-c",
        "2",
        "--no-keepalive",
        "--cacert",
        ca,
        &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("TLS            1.3 TLS13_"), "{text}");
    assert!(text.contains("certificate verified"), "{text}");
    assert!(
        text.contains("handshakes   200 done, 0 resumed, 0 failed"),
        "{text}"
    );
    assert!(text.contains("mismatch 0, tls 0"), "{text}");
    assert_eq!(nginx.logged_requests(), 1200);
}

/// `wss://`: WebSocket over the engine's TLS, through nginx proxying
/// `/ws` to the testkit's echo server: every echo checked, the handshake
/// verified against the CA, and no error.
#[test]
fn wss_echoes_over_verified_tls_with_no_error() {
    let echo = shootout_testkit::ws_echo::WsEcho::start(Default::default()).unwrap();
    let setup = Setup {
        ws_upstream: Some(echo.addr()),
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("wss_echo", setup) else {
        return;
    };
    let ca = nginx.certs.ca.to_str().unwrap();
    let url = format!("wss://127.0.0.1:{}/ws", nginx.port);
    let json = load_json(
        &[
            "-n",
            "2000",
            "-c",
            "4",
            "--message-size",
            "300",
            "--cacert",
            ca,
            &url,
        ],
        0,
    );
    assert_eq!(json["protocol"]["http"], "websocket");
    assert_eq!(json["protocol"]["tls"], "1.3");
    assert_eq!(json["tls"]["verified"], true);
    assert_eq!(json["tls"]["handshakes"]["done"], 4);
    assert_eq!(json["requests"]["ok"], 2000, "{json}");
    let errors = json["errors"].as_object().unwrap();
    assert!(errors.values().all(|v| v == 0), "{errors:?}");
    assert!(
        echo.counts()
            .echoes
            .load(std::sync::atomic::Ordering::Relaxed)
            >= 2000,
        "the echoes came from the echo server, through nginx"
    );
}

#[test]
fn another_ca_fails_every_handshake_and_exits_2() {
    let Some(nginx) = nginx_tls::start("another_ca_exits_2", Setup::default()) else {
        return;
    };
    let other = shootout_certs::write(&nginx.dir.join("other")).unwrap();
    let url = nginx.url("localhost");
    let out = shootout(&[
        "load",
        "-n",
        "20",
        "-c",
        "2",
        "--cacert",
        other.ca.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("no TLS handshake succeeded (20 tls errors"),
        "{err}"
    );
    assert!(
        err.contains(
            "the server's certificate is not trusted: it was not issued by a CA of --cacert"
        ),
        "{err}"
    );
    assert!(!err.contains("UnknownIssuer"), "{err}");
    assert!(stdout(&out).contains("mismatch 0, tls 20"));
    // Not verifying: served, and the output says the certificate was not checked.
    let out = shootout(&["load", "-n", "20", "-c", "2", "--insecure", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("certificate NOT verified (--insecure)"));
}

#[test]
fn a_server_requiring_a_client_certificate_is_loaded_only_with_one() {
    let setup = Setup {
        require_client_cert: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("client_certificate_required", setup) else {
        return;
    };
    let c = &nginx.certs;
    let ca = c.ca.to_str().unwrap();
    let url = nginx.url("127.0.0.1");
    let out = shootout(&["load", "-n", "50", "-c", "2", "--cacert", ca, &url]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("asked for a client certificate"), "{err}");
    assert!(err.contains("--cert FILE --key FILE"), "{err}");
    let (cert, key) = (
        c.client_cert.to_str().unwrap(),
        c.client_key.to_str().unwrap(),
    );
    let json = load_json(
        &[
            "-n", "500", "-c", "2", "--cacert", ca, "--cert", cert, "--key", key, &url,
        ],
        0,
    );
    assert_eq!(
        (
            json["requests"]["sent"].as_u64(),
            json["requests"]["ok"].as_u64()
        ),
        (Some(500), Some(500))
    );
    assert_eq!(json["protocol"]["client_cert"], true);
    assert_eq!(nginx.logged_requests(), 550);
}

#[test]
fn tls_flag_errors_name_the_flag_and_file_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("shootout-tls-flags-{}", std::process::id()));
    let certs = shootout_certs::write_over(&dir).unwrap();
    let url = "https://127.0.0.1:9/";
    let missing = dir.join("missing.pem");
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["--cacert", missing.to_str().unwrap()], "--cacert: "),
        (
            vec![
                "--cert",
                certs.client_cert.to_str().unwrap(),
                "--key",
                certs.server_key.to_str().unwrap(),
            ],
            "--key: ",
        ),
        (vec!["--cert", certs.ca.to_str().unwrap()], "--key"),
        (
            vec!["--cacert", certs.ca.to_str().unwrap(), "--insecure"],
            "--insecure",
        ),
        (vec!["--key", certs.client_key.to_str().unwrap()], "--cert"),
    ];
    for (flags, says) in cases {
        let mut args = vec!["load", "-n", "1"];
        args.extend(&flags);
        args.push(url);
        let out = shootout(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
    let out = shootout(&[
        "load",
        "-n",
        "1",
        "--cacert",
        missing.to_str().unwrap(),
        url,
    ]);
    assert!(
        stderr(&out).contains("missing.pem: cannot read"),
        "{}",
        stderr(&out)
    );
    let out = shootout(&["load", "-n", "1", "--tls-resume", "http://127.0.0.1:9/"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("need an https:// URL"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn certs_writes_five_pem_files_and_overwrites_only_with_force() {
    let dir = std::env::temp_dir().join(format!("shootout-certs-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap();
    let out = shootout(&["certs", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    let names = [
        "ca.pem",
        "server.pem",
        "server.key",
        "client.pem",
        "client.key",
    ];
    let expected: Vec<String> = names
        .iter()
        .map(|n| dir.join(n).display().to_string())
        .collect();
    assert_eq!(listed, expected);
    assert!(stderr(&out).contains("127.0.0.1, ::1, localhost"));
    let before = std::fs::read(dir.join("ca.pem")).unwrap();
    let out = shootout(&["certs", d]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("exists already"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"));
    assert_eq!(std::fs::read(dir.join("ca.pem")).unwrap(), before);
    let out = shootout(&["certs", "--force", d]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(std::fs::read(dir.join("ca.pem")).unwrap(), before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn certs_says_why_it_cannot_write_once() {
    let dir = scratch("certs-notdir");
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    let out = shootout(&["certs", file.join("sub").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
    assert!(
        err.contains(&file.join("sub").display().to_string()),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// docs/bad-input.md's `https://127.0.0.1:9/` row, run: https is
/// supported, so nothing listening is what is said.
#[test]
fn https_to_a_closed_port_is_refused_as_docs_bad_input_says() {
    let out = shootout(&["load", "-n", "3", "-z", "2s", "https://127.0.0.1:9/"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("no connection succeeded")
            && err.contains("check that a server is listening on 127.0.0.1:9"),
        "{err}"
    );
    let doc = include_str!("../../../docs/bad-input.md");
    assert!(!doc.contains("https is not supported"), "docs/bad-input.md");
    assert!(
        doc.contains("| `https://127.0.0.1:9/` (nothing listening) | `no connection succeeded"),
        "docs/bad-input.md"
    );
}

/// A fresh directory for a test's files.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn certificates_made_with_openssl_load_as_with_curl() {
    let dir = scratch("openssl-certs");
    let c = nginx_tls::openssl_certs(&dir);
    let setup = Setup {
        require_client_cert: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start_with("openssl_certs_cli", setup, c.clone()) else {
        return;
    };
    let p = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (ca, cert, key) = (p(&c.ca), p(&c.client_cert), p(&c.client_key));
    let url = nginx.url("localhost");
    let out = shootout(&[
        "load", "-n", "50", "-c", "2", "--cacert", &ca, "--cert", &cert, "--key", &key, &url,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("certificate verified, client certificate sent"),
        "{text}"
    );
    assert_eq!(nginx.logged_requests(), 50);
    // Without --cacert the self-signed certificate is not trusted, in words.
    let out = shootout(&["load", "-n", "4", "-c", "1", &url]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not trusted: give its CA with --cacert, or --insecure"),
        "{err}"
    );
    drop(nginx);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_encrypted_key_is_refused_with_how_to_decrypt_it() {
    let dir = scratch("encrypted-key");
    let c = nginx_tls::openssl_certs(&dir);
    nginx_tls::openssl(
        &dir,
        &[
            "genpkey",
            "-algorithm",
            "RSA",
            "-aes256",
            "-pass",
            "pass:x",
            "-out",
            "enc.key",
        ],
    );
    let key = dir.join("enc.key");
    let out = shootout(&[
        "load",
        "-n",
        "1",
        "--cert",
        c.client_cert.to_str().unwrap(),
        "--key",
        key.to_str().unwrap(),
        "https://127.0.0.1:9/",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let want = format!(
        "encrypted keys are not supported: decrypt it with openssl pkey -in {} -out PLAIN",
        key.display()
    );
    assert!(err.contains("--key: ") && err.contains(&want), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_client_certificate_the_server_rejects_exits_2_naming_it() {
    let setup = Setup {
        require_client_cert: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("client_certificate_rejected", setup) else {
        return;
    };
    // Signed by a CA nginx does not trust: nginx answers 400 to every request.
    let other = shootout_certs::write(&nginx.dir.join("other")).unwrap();
    let out = shootout(&[
        "load",
        "-n",
        "20",
        "-c",
        "2",
        "--cacert",
        nginx.certs.ca.to_str().unwrap(),
        "--cert",
        other.client_cert.to_str().unwrap(),
        "--key",
        other.client_key.to_str().unwrap(),
        &nginx.url("127.0.0.1"),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "the server rejected our client certificate {}",
            other.client_cert.display()
        )),
        "{err}"
    );
    assert!(err.contains("20 × 400"), "{err}");
}

#[test]
fn https_to_a_plain_http_port_says_so_and_exits_2() {
    let setup = Setup {
        cleartext: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("plain_port_cli", setup) else {
        return;
    };
    let out = shootout(&[
        "load",
        "-n",
        "10",
        "-c",
        "2",
        "--cacert",
        nginx.certs.ca.to_str().unwrap(),
        &nginx.url("127.0.0.1"),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "this port does not speak TLS (the server answered in plain text; use http://)"
        ),
        "{err}"
    );
    assert!(!err.contains("InvalidContentType"), "{err}");
}

#[test]
fn a_server_that_never_completes_a_handshake_exits_2_and_is_not_verified() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "https://127.0.0.1:{}/",
        listener.local_addr().unwrap().port()
    );
    // Accepts (the kernel's backlog) and never answers; lives for the test.
    let dir = scratch("silent");
    let certs = shootout_certs::write_over(&dir).unwrap();
    let ca = certs.ca.to_str().unwrap();
    let args = |format: &'static str| {
        vec![
            "load",
            "-n",
            "4",
            "-c",
            "2",
            "-z",
            "10s",
            "--timeout",
            "300ms",
            "--cacert",
            ca,
            "-o",
            format,
            &url,
        ]
    };
    let started = std::time::Instant::now();
    let out = shootout(&args("json"));
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    let json = load_json_of(&out, 2);
    let err = stderr(&out);
    assert!(err.contains("no TLS handshake completed"), "{err}");
    assert_eq!(json["errors"]["tls"], 4, "{json}");
    assert_eq!(json["errors"]["timeout"], 0, "{json}");
    assert_eq!(json["tls"]["verified"], false, "{json}");
    assert_eq!(json["tls"]["handshakes"]["done"], 0, "{json}");
    let out = shootout(&args("text"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("certificate verified"), "{text}");
    assert!(text.contains("no handshake completed"), "{text}");
    // The run's end before any --timeout: the same, not a silent exit 0.
    let out = shootout(&[
        "load", "-c", "2", "-z", "1s", "--cacert", ca, "-o", "json", &url,
    ]);
    let json = load_json_of(&out, 2);
    let err = stderr(&out);
    assert!(
        err.contains("no TLS handshake completed before the run ended"),
        "{err}"
    );
    assert_eq!(json["errors"]["tls"], 2, "{json}");
    assert_eq!(json["tls"]["verified"], false, "{json}");
    drop(listener);
    std::fs::remove_dir_all(&dir).unwrap();
}
