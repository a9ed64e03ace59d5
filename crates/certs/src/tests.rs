//! The written certificates checked by rustls's own WebPKI verifiers: the
//! server's for each of its names (and not for another), the client's as a
//! client certificate, both only against this set's CA. And the files
//! themselves: keys private, existing files kept unless replaced, and a
//! symbolic link in the folder never written through (issue #39).

use super::*;
use rustls::client::danger::ServerCertVerifier;
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use std::os::unix::fs::{symlink, PermissionsExt};
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

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("exists").permissions().mode() & 0o777
}

/// A world-readable file holding "victim", and a link to it at `link`.
fn plant(link: &Path, victim: &Path) {
    std::fs::write(victim, "victim").expect("written");
    std::fs::set_permissions(victim, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    symlink(victim, link).expect("linked");
}

#[test]
fn links_in_the_folder_are_replaced_with_force_and_refused_without() {
    let (dir, victims) = (temp_dir("links"), temp_dir("victims"));
    std::fs::create_dir_all(&dir).expect("made");
    std::fs::create_dir_all(&victims).expect("made");
    let paths = CertPaths::in_dir(&dir);
    let victim = |p: &Path| victims.join(p.file_name().expect("a name"));
    for p in paths.all() {
        plant(p, &victim(p));
    }
    let untouched = |why: &str| {
        for p in paths.all() {
            let v = victim(p);
            let text = std::fs::read_to_string(&v).expect("read");
            assert_eq!(
                text,
                "victim",
                "{} written through {} {why}",
                v.display(),
                p.display()
            );
            assert_eq!(mode(&v), 0o644, "{} {why}", v.display());
        }
    };

    // Without --force: refused, naming the first file, which is a link.
    let refused = write(&dir).expect_err("links are refused");
    let said = refused.to_string();
    assert!(said.contains(&paths.ca.display().to_string()), "{said}");
    assert!(said.contains("symbolic link"), "{said}");
    untouched("when refused");

    // With --force: each link is replaced by a file, its target left alone.
    write_over(&dir).expect("written");
    untouched("with --force");
    for p in paths.all() {
        let meta = std::fs::symlink_metadata(p).expect("exists");
        assert!(
            meta.file_type().is_file(),
            "{} is no regular file",
            p.display()
        );
        let pem = std::fs::read_to_string(p).expect("read");
        assert!(pem.starts_with("-----BEGIN"), "{}", p.display());
    }
    assert_eq!(mode(&paths.server_key), 0o600);
    assert_eq!(mode(&paths.client_key), 0o600);
    for p in [&paths.ca, &paths.server_cert, &paths.client_cert] {
        assert_eq!(mode(p), 0o644, "{}", p.display());
    }

    // A key made world-readable since is replaced by a private one.
    let loose = std::fs::Permissions::from_mode(0o644);
    std::fs::set_permissions(&paths.client_key, loose).expect("chmod");
    write_over(&dir).expect("written");
    assert_eq!(mode(&paths.client_key), 0o600);

    // A dangling link is refused as well, and its target never made.
    let fresh = temp_dir("dangling");
    std::fs::create_dir_all(&fresh).expect("made");
    let nowhere = victims.join("nowhere.key");
    symlink(&nowhere, fresh.join(SERVER_KEY)).expect("linked");
    let said = write(&fresh)
        .expect_err("a dangling link is refused")
        .to_string();
    assert!(
        said.contains(&fresh.join(SERVER_KEY).display().to_string()),
        "{said}"
    );
    assert!(said.contains("symbolic link"), "{said}");
    assert!(!nowhere.exists(), "{} was made", nowhere.display());
    for dir in [dir, victims, fresh] {
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
