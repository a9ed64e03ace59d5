//! The written certificates checked by rustls's own WebPKI verifiers: the
//! server's for each of its names (and not for another), the client's as a
//! client certificate, both only against this set's CA.

use super::*;
use rustls::client::danger::ServerCertVerifier;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("shootout-certs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn cert(path: &Path) -> CertificateDer<'static> {
    CertificateDer::from_pem_file(path).expect("a PEM certificate")
}

fn roots(ca: &Path) -> Arc<RootCertStore> {
    let mut roots = RootCertStore::empty();
    roots.add(cert(ca)).expect("a CA certificate");
    Arc::new(roots)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn server_accepted(paths: &CertPaths, ca: &Path, name: &str) -> Result<(), rustls::Error> {
    let verifier = WebPkiServerVerifier::builder_with_provider(roots(ca), provider())
        .build()
        .expect("a verifier");
    let name = ServerName::try_from(name.to_string()).expect("a server name");
    let end = cert(&paths.server_cert);
    verifier
        .verify_server_cert(&end, &[], &name, &[], UnixTime::now())
        .map(|_| ())
}

#[test]
fn the_server_certificate_holds_for_each_loopback_name_and_no_other() {
    let dir = temp_dir("names");
    let paths = write(&dir).expect("written");
    for name in SERVER_NAMES {
        assert_eq!(server_accepted(&paths, &paths.ca, name), Ok(()), "{name}");
    }
    assert!(server_accepted(&paths, &paths.ca, "example.com").is_err());
    assert!(server_accepted(&paths, &paths.ca, "127.0.0.2").is_err());
    // Another set's CA does not vouch for it.
    let other = write(&dir.join("other")).expect("written");
    assert!(server_accepted(&paths, &other.ca, "localhost").is_err());
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn the_client_certificate_is_one_the_ca_signed_for_clients() {
    let dir = temp_dir("client");
    let paths = write(&dir).expect("written");
    let verifier = WebPkiClientVerifier::builder_with_provider(roots(&paths.ca), provider())
        .build()
        .expect("a verifier");
    let now = UnixTime::now();
    assert!(verifier
        .verify_client_cert(&cert(&paths.client_cert), &[], now)
        .is_ok());
    // The server's certificate is no client certificate (its key usage).
    assert!(verifier
        .verify_client_cert(&cert(&paths.server_cert), &[], now)
        .is_err());
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn keys_are_private_and_existing_files_are_kept() {
    let dir = temp_dir("files");
    let paths = write(&dir).expect("written");
    let mode = |p: &Path| std::fs::metadata(p).expect("exists").permissions().mode() & 0o777;
    assert_eq!(mode(&paths.server_key), 0o600);
    assert_eq!(mode(&paths.client_key), 0o600);
    assert_eq!(mode(&paths.ca), 0o644);
    let before = std::fs::read(&paths.ca).expect("read");
    match write(&dir) {
        Err(CertError::Exists(p)) => assert_eq!(p, paths.ca),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(std::fs::read(&paths.ca).expect("read"), before, "kept");
    write_over(&dir).expect("replaced");
    assert_ne!(std::fs::read(&paths.ca).expect("read"), before, "a new CA");
    std::fs::remove_dir_all(&dir).expect("removed");
}
