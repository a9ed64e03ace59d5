//! https:// against Debian's nginx with throw-away certificates: exact
//! counts over TLS, handshakes counted apart from requests (one per
//! connection with keep-alive, one per request without, resumed when
//! asked), a refused certificate as a `tls` error (never `connect`), mutual
//! TLS, and the plan errors that name a bad file.

#![allow(clippy::unwrap_used)]

mod common;
mod nginx_tls;

use common::stops::{assert_accounted, requests};
use nginx_tls::Setup;
use shootout_engine::{
    ClientCert, Control, Endpoint, Load, LoadReport, Plan, PlanBuilder, PlanField, TlsOptions,
    Verify, Workload,
};
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn plan(url: &str, connections: usize, n: u64, tls: TlsOptions) -> PlanBuilder {
    let workload = Workload::new(Load::Closed { connections }, requests(n)).unwrap();
    Plan::builder(Endpoint::parse(url).unwrap(), workload)
        .threads(2)
        .tls(tls)
}

fn run(plan: PlanBuilder) -> LoadReport {
    let plan = plan.build().unwrap();
    let report = shootout_engine::run(&plan, &Control::new()).unwrap();
    assert_accounted(&report.summary);
    report
}

fn trusting(ca: &Path) -> TlsOptions {
    TlsOptions {
        verify: Verify::CaFile(ca.to_path_buf()),
        ..TlsOptions::default()
    }
}

#[test]
fn https_load_is_exact_and_counts_a_handshake_per_connection() {
    let Some(nginx) = nginx_tls::start("https_load_is_exact", Setup::default()) else {
        return;
    };
    let mut total = 0;
    for host in ["127.0.0.1", "localhost", "[::1]"] {
        let r = run(plan(&nginx.url(host), 8, 2000, trusting(&nginx.certs.ca)));
        let s = &r.summary;
        assert_eq!(
            (s.requests.sent, s.requests.ok),
            (2000, 2000),
            "{host}: {s:?}"
        );
        assert_eq!(s.errors.total(), 0, "{host}");
        let tls = s.tls.as_ref().expect("TLS figures");
        assert_eq!(
            tls.handshakes.done, 8,
            "{host}: one per keep-alive connection"
        );
        assert_eq!((tls.handshakes.resumed, tls.handshakes.failed), (0, 0));
        assert_eq!(tls.version.as_deref(), Some("1.3"));
        assert!(tls
            .cipher_suite
            .as_deref()
            .is_some_and(|c| c.starts_with("TLS13_")));
        assert!(tls.verified && !tls.client_cert);
        assert!(tls.handshake_ms.p50 > 0.0 && tls.handshake_ms.max >= tls.handshake_ms.p99);
        assert_eq!(s.protocol.tls.as_deref(), Some("1.3"));
        assert_eq!(s.protocol.http, "1.1");
        assert_eq!(r.handshakes.as_ref().map(|h| h.len()), Some(8));
        total += 2000;
    }
    assert_eq!(
        nginx.logged_requests(),
        total,
        "nginx saw exactly -n each time"
    );
}

#[test]
fn pipelined_requests_over_tls_are_answered_in_order_and_exact() {
    let Some(nginx) = nginx_tls::start("pipelined_tls", Setup::default()) else {
        return;
    };
    let p = plan(&nginx.url("127.0.0.1"), 4, 5000, trusting(&nginx.certs.ca)).pipeline(16);
    let r = run(p);
    let s = &r.summary;
    assert_eq!((s.requests.sent, s.requests.ok), (5000, 5000), "{s:?}");
    assert_eq!(s.errors.total(), 0);
    assert_eq!(s.tls.as_ref().unwrap().handshakes.done, 4);
    assert_eq!(nginx.logged_requests(), 5000);
}

#[test]
fn a_certificate_from_another_ca_fails_every_request_as_tls() {
    let Some(nginx) = nginx_tls::start("another_ca", Setup::default()) else {
        return;
    };
    let dir = nginx.dir.join("other");
    let other = shootout_certs::write(&dir).unwrap();
    let r = run(plan(&nginx.url("127.0.0.1"), 2, 20, trusting(&other.ca)));
    let s = &r.summary;
    assert_eq!(s.requests.completed, 0);
    assert_eq!((s.errors.tls, s.errors.connect), (20, 0), "{:?}", s.errors);
    let tls = s.tls.as_ref().unwrap();
    assert_eq!(tls.handshakes.done, 0);
    assert!(tls.handshakes.failed >= 1);
    assert_eq!(s.protocol.tls, None, "no version was negotiated");
    let causes: Vec<&String> = tls.failures.keys().collect();
    assert!(
        causes.iter().all(|c| c.contains(
            "the server's certificate is not trusted: it was not issued by a CA of --cacert"
        )),
        "{causes:?}"
    );
    assert_eq!(nginx.logged_requests(), 0);
    // The same server, not verified: served, and said so.
    let insecure = TlsOptions {
        verify: Verify::Insecure,
        ..TlsOptions::default()
    };
    let r = run(plan(&nginx.url("127.0.0.1"), 2, 20, insecure));
    assert_eq!(r.summary.requests.ok, 20);
    assert!(!r.summary.tls.unwrap().verified);
}

#[test]
fn without_keepalive_every_request_is_a_handshake_and_resumes_only_when_asked() {
    let Some(nginx) = nginx_tls::start("handshake_per_request", Setup::default()) else {
        return;
    };
    for resume in [false, true] {
        let tls = TlsOptions {
            resume,
            ..trusting(&nginx.certs.ca)
        };
        let r = run(plan(&nginx.url("127.0.0.1"), 4, 300, tls).keepalive(false));
        let s = &r.summary;
        assert_eq!(s.requests.ok, 300, "resume {resume}: {s:?}");
        let h = &s.tls.as_ref().unwrap().handshakes;
        assert_eq!((h.done, h.failed), (300, 0), "resume {resume}");
        if resume {
            assert!(h.resumed >= 250, "most resume: {h:?}");
        } else {
            assert_eq!(h.resumed, 0, "every handshake is full");
        }
    }
}

#[test]
fn mutual_tls_serves_only_a_client_with_its_certificate() {
    let setup = Setup {
        require_client_cert: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("mutual_tls", setup) else {
        return;
    };
    let url = nginx.url("localhost");
    // nginx finishes the handshake and answers 400 "No required SSL
    // certificate was sent"; the engine counts the server's ask.
    let r = run(plan(&url, 2, 50, trusting(&nginx.certs.ca)));
    let s = &r.summary;
    assert_eq!((s.requests.completed, s.requests.ok), (50, 0), "{s:?}");
    assert_eq!(s.status.get("400"), Some(&50));
    let tls = s.tls.as_ref().unwrap();
    assert!(
        tls.client_cert_asked >= 2,
        "asked on each connection: {tls:?}"
    );
    assert!(!s.protocol.client_cert);
    let with_cert = TlsOptions {
        client_cert: Some(ClientCert {
            cert: nginx.certs.client_cert.clone(),
            key: nginx.certs.client_key.clone(),
        }),
        ..trusting(&nginx.certs.ca)
    };
    let r = run(plan(&url, 2, 500, with_cert));
    let s = &r.summary;
    assert_eq!((s.requests.sent, s.requests.ok), (500, 500), "{s:?}");
    assert!(s.protocol.client_cert && s.tls.as_ref().unwrap().client_cert);
    assert_eq!(s.tls.as_ref().unwrap().client_cert_asked, 0);
    assert_eq!(nginx.logged_requests(), 550);
}

#[test]
fn tls_1_2_is_spoken_and_resumed_when_the_server_offers_only_it() {
    let setup = Setup {
        tls12_only: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("tls_1_2", setup) else {
        return;
    };
    let tls = TlsOptions {
        resume: true,
        ..trusting(&nginx.certs.ca)
    };
    let r = run(plan(&nginx.url("127.0.0.1"), 2, 200, tls).keepalive(false));
    let s = &r.summary;
    assert_eq!(s.requests.ok, 200, "{s:?}");
    let tls = s.tls.as_ref().unwrap();
    assert_eq!(tls.version.as_deref(), Some("1.2"));
    assert!(
        tls.cipher_suite
            .as_deref()
            .is_some_and(|c| c.starts_with("TLS_ECDHE_")),
        "{tls:?}"
    );
    assert_eq!(tls.handshakes.done, 200);
    assert!(tls.handshakes.resumed >= 150, "{:?}", tls.handshakes);
    assert_eq!(s.protocol.tls.as_deref(), Some("1.2"));
}

#[test]
fn bad_tls_files_are_plan_errors_that_name_the_file() {
    let dir = std::env::temp_dir().join(format!("shootout-tls-plan-{}", std::process::id()));
    let certs = shootout_certs::write_over(&dir).unwrap();
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let missing = dir.join("missing.pem");
    let url = "https://127.0.0.1:9/";
    let err = |tls: TlsOptions| plan(url, 1, 1, tls).build().unwrap_err();
    for (bad, field) in [
        (trusting(&missing), PlanField::CaFile),
        (trusting(&garbage), PlanField::CaFile),
        (trusting(&certs.server_key), PlanField::CaFile),
    ] {
        let e = err(bad);
        assert_eq!(e.field(), field);
        assert!(e.to_string().contains(&dir.display().to_string()), "{e}");
    }
    let client = |cert: &Path, key: &Path| TlsOptions {
        client_cert: Some(ClientCert {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        }),
        ..trusting(&certs.ca)
    };
    let e = err(client(&certs.client_cert, &certs.server_key));
    assert_eq!(e.field(), PlanField::ClientKey, "{e}");
    assert!(e.to_string().contains("server.key"), "{e}");
    let e = err(client(&garbage, &certs.client_key));
    assert_eq!(e.field(), PlanField::ClientCert, "{e}");
    let e = err(client(&certs.client_cert, &certs.ca));
    assert_eq!(e.field(), PlanField::ClientKey, "{e}");
    assert!(e.to_string().contains("no PEM private key"), "{e}");
    // TLS settings on a cleartext URL are refused, not ignored.
    let e = plan("http://127.0.0.1:9/", 1, 1, trusting(&certs.ca))
        .build()
        .unwrap_err();
    assert_eq!(e.field(), PlanField::Url);
    assert!(
        plan(url, 1, 1, client(&certs.client_cert, &certs.client_key))
            .build()
            .is_ok()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh directory for a test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn certificates_made_with_openssl_are_trusted_and_sent_as_curl_does() {
    // A self-signed server certificate (CA:TRUE) given as --cacert itself,
    // and an X.509 v1 client certificate: before, the plan failed with
    // UnsupportedCertVersion and every handshake with CaUsedAsEndEntity.
    let dir = scratch("openssl-certs");
    let certs = nginx_tls::openssl_certs(&dir);
    let setup = Setup {
        require_client_cert: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start_with("openssl_certs", setup, certs.clone()) else {
        return;
    };
    let tls = TlsOptions {
        client_cert: Some(ClientCert {
            cert: certs.client_cert.clone(),
            key: certs.client_key.clone(),
        }),
        ..trusting(&certs.ca)
    };
    let r = run(plan(&nginx.url("localhost"), 2, 100, tls));
    let s = &r.summary;
    assert_eq!((s.requests.sent, s.requests.ok), (100, 100), "{s:?}");
    assert_eq!(s.errors.total(), 0, "{:?}", s.tls);
    let tls = s.tls.as_ref().unwrap();
    assert!(tls.verified && tls.client_cert, "{tls:?}");
    assert_eq!(tls.handshakes.done, 2);
    assert_eq!(
        nginx.logged_requests(),
        100,
        "nginx accepted the v1 certificate"
    );
    // The exact match still checks the name: 127.0.0.1 is not localhost.
    let r = run(plan(&nginx.url("127.0.0.1"), 1, 5, trusting(&certs.ca)));
    let causes: Vec<&String> = r.summary.tls.as_ref().unwrap().failures.keys().collect();
    assert_eq!(r.summary.errors.tls, 5);
    assert!(
        causes
            .iter()
            .all(|c| c.contains("not valid for the URL's host name")),
        "{causes:?}"
    );
    drop(nginx);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn encrypted_keys_are_refused_with_how_to_decrypt_them() {
    let dir = scratch("encrypted-keys");
    let certs = nginx_tls::openssl_certs(&dir);
    let pass = ["-pass", "pass:x"];
    let mut pkcs8 = vec![
        "genpkey",
        "-algorithm",
        "RSA",
        "-aes256",
        "-out",
        "pkcs8.key",
    ];
    pkcs8.extend(pass);
    nginx_tls::openssl(&dir, &pkcs8);
    nginx_tls::openssl(
        &dir,
        &[
            "rsa",
            "-in",
            "client.key",
            "-aes256",
            "-passout",
            "pass:x",
            "-traditional",
            "-out",
            "legacy.key",
        ],
    );
    for name in ["pkcs8.key", "legacy.key"] {
        let key = dir.join(name);
        let tls = TlsOptions {
            client_cert: Some(ClientCert {
                cert: certs.client_cert.clone(),
                key: key.clone(),
            }),
            ..trusting(&certs.ca)
        };
        let e = plan("https://127.0.0.1:9/", 1, 1, tls).build().unwrap_err();
        assert_eq!(e.field(), PlanField::ClientKey, "{e}");
        let want = format!(
            "{}: encrypted keys are not supported: decrypt it with openssl pkey -in {} -out PLAIN",
            key.display(),
            key.display()
        );
        assert!(e.to_string().contains(&want), "{name}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn https_to_a_plain_http_port_says_the_port_does_not_speak_tls() {
    let setup = Setup {
        cleartext: true,
        ..Setup::default()
    };
    let Some(nginx) = nginx_tls::start("plain_port", setup) else {
        return;
    };
    let r = run(plan(
        &nginx.url("127.0.0.1"),
        2,
        10,
        trusting(&nginx.certs.ca),
    ));
    let s = &r.summary;
    assert_eq!((s.errors.tls, s.requests.completed), (10, 0), "{s:?}");
    let causes: Vec<&String> = s.tls.as_ref().unwrap().failures.keys().collect();
    assert_eq!(
        causes,
        ["this port does not speak TLS (the server answered in plain text; use http://)"]
    );
}

/// A test server's thread, stopped when dropped (or after its life).
struct Stopping(Option<std::thread::JoinHandle<()>>, Arc<AtomicBool>);

impl Drop for Stopping {
    fn drop(&mut self) {
        self.1.store(true, Ordering::Relaxed);
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// Runs `serve` on a thread with a flag that says when to stop (asked at
/// the drop of the result, or after `life`).
fn serving(life: Duration, serve: impl FnOnce(&dyn Fn() -> bool) + Send + 'static) -> Stopping {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = std::thread::spawn(move || {
        let end = Instant::now() + life;
        serve(&|| flag.load(Ordering::Relaxed) || Instant::now() >= end);
    });
    Stopping(Some(handle), stop)
}

/// A server that accepts connections and reads them, and never writes:
/// no handshake ever completes.
fn silent_server(life: Duration) -> (u16, Stopping) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = serving(life, move |done| {
        let mut held = Vec::new();
        let mut buf = [0u8; 4096];
        while !done() {
            if let Ok((stream, _)) = listener.accept() {
                stream.set_nonblocking(true).unwrap();
                held.push(stream);
            }
            for s in &mut held {
                let _ = s.read(&mut buf);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    (port, server)
}

#[test]
fn a_server_that_never_completes_a_handshake_fails_as_tls_and_is_not_verified() {
    let (port, server) = silent_server(Duration::from_secs(8));
    let dir = scratch("silent-server");
    let certs = shootout_certs::write_over(&dir).unwrap();
    let url = format!("https://127.0.0.1:{port}/");
    let p = plan(&url, 2, 4, trusting(&certs.ca)).timeout(Duration::from_millis(300));
    let started = Instant::now();
    let r = run(p);
    assert!(started.elapsed() < Duration::from_secs(5));
    let s = &r.summary;
    assert_eq!((s.errors.tls, s.errors.timeout), (4, 0), "{:?}", s.errors);
    let tls = s.tls.as_ref().unwrap();
    assert_eq!(tls.handshakes.done, 0);
    assert!(tls.handshakes.failed >= 2, "{tls:?}");
    assert!(!tls.verified, "no handshake, nothing verified");
    let causes: Vec<&String> = tls.failures.keys().collect();
    assert!(
        causes
            .iter()
            .all(|c| c.starts_with("no TLS handshake completed")),
        "{causes:?}"
    );
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A rustls server (TLS 1.3) that requires a client certificate issued by
/// `ca` and ends the handshake with an alert over any other, as many
/// servers do (nginx answers 400 instead). It serves connections one at a
/// time.
fn alerting_server(
    certs: &shootout_certs::CertPaths,
    ca: &Path,
    life: Duration,
) -> (u16, Stopping) {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let pem = |p: &Path| std::fs::read(p).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(&pem(ca)) {
        roots.add(c.unwrap()).unwrap();
    }
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .unwrap();
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(&pem(&certs.server_cert))
            .collect::<Result<_, _>>()
            .unwrap();
    let key = PrivateKeyDer::from_pem_slice(&pem(&certs.server_key)).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = serving(life, move |done| {
        while !done() {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            stream.set_nonblocking(false).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(2)))
                .unwrap();
            let mut conn = rustls::ServerConnection::new(config.clone()).unwrap();
            // Ends with the alert written, or the connection closed.
            while conn.complete_io(&mut stream).is_ok() && !done() {
                if !conn.is_handshaking() {
                    break;
                }
            }
        }
    });
    (port, server)
}

#[test]
fn a_handshake_alert_over_our_client_certificate_names_it() {
    let dir = scratch("alerting-server");
    let certs = shootout_certs::write_over(&dir.join("server")).unwrap();
    let other = shootout_certs::write_over(&dir.join("other")).unwrap();
    let (port, server) = alerting_server(&certs, &certs.ca, Duration::from_secs(6));
    let tls = TlsOptions {
        client_cert: Some(ClientCert {
            cert: other.client_cert.clone(),
            key: other.client_key.clone(),
        }),
        ..trusting(&certs.ca)
    };
    let url = format!("https://localhost:{port}/");
    let r = run(plan(&url, 1, 3, tls).timeout(Duration::from_secs(2)));
    let s = &r.summary;
    assert_eq!(
        (s.errors.tls, s.requests.completed),
        (3, 0),
        "{:?}",
        s.errors
    );
    let causes: Vec<&String> = s.tls.as_ref().unwrap().failures.keys().collect();
    assert!(
        causes
            .iter()
            .all(|c| c.starts_with("the server rejected our client certificate (alert ")),
        "{causes:?}"
    );
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
}
