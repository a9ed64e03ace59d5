//! Throw-away certificates for loads over TLS, made with rcgen: a CA of
//! its own, a server certificate for `127.0.0.1`, `::1` and `localhost`
//! signed by it, and a client certificate signed by it (for mutual TLS).
//! [`write`] puts them into a folder as PEM files with fixed names:
//!
//! | file | holds |
//! |---|---|
//! | `ca.pem` | the CA certificate (what a client trusts, `--cacert`; what a server checks client certificates against, `TLS_CLIENT_CA`) |
//! | `server.pem`, `server.key` | the server's certificate and private key (`TLS_CERT`, `TLS_KEY`) |
//! | `client.pem`, `client.key` | the client's certificate and private key (`--cert`, `--key`) |
//!
//! The CA's private key is never written: nothing else can be signed by
//! it, so the folder is worth nothing once the run is over. Keys are ECDSA
//! P-256, valid from a day ago for a year; private keys are written mode 0600.
//!
//! A file is never written through a symbolic link (one planted in a shared
//! folder would hand the key to its target): each is created anew, refusing
//! whatever is at its path, and replacing one renames a new file over the
//! path, which replaces a link itself and leaves its target alone.

#![deny(clippy::print_stdout, clippy::print_stderr)]

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const CA: &str = "ca.pem";
pub const SERVER_CERT: &str = "server.pem";
pub const SERVER_KEY: &str = "server.key";
pub const CLIENT_CERT: &str = "client.pem";
pub const CLIENT_KEY: &str = "client.key";

/// The names a server certificate is valid for.
pub const SERVER_NAMES: [&str; 3] = ["127.0.0.1", "::1", "localhost"];

/// Where [`write`] put each file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertPaths {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl CertPaths {
    /// The paths of the files in `dir`.
    pub fn in_dir(dir: &Path) -> CertPaths {
        CertPaths {
            ca: dir.join(CA),
            server_cert: dir.join(SERVER_CERT),
            server_key: dir.join(SERVER_KEY),
            client_cert: dir.join(CLIENT_CERT),
            client_key: dir.join(CLIENT_KEY),
        }
    }

    /// Every path, in the order written.
    pub fn all(&self) -> [&Path; 5] {
        [
            &self.ca,
            &self.server_cert,
            &self.server_key,
            &self.client_cert,
            &self.client_key,
        ]
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CertError {
    #[error("cannot make the certificates: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} exists already (refusing to overwrite it)", .0.display())]
    Exists(PathBuf),
    #[error("{} is a symbolic link (refusing to write through it)", .0.display())]
    Link(PathBuf),
}

/// Makes a new CA, server and client certificate and writes them into
/// `dir` (created if missing). Refuses, before writing anything, when
/// any of the files exists or is a symbolic link (even one to nothing).
pub fn write(dir: &Path) -> Result<CertPaths, CertError> {
    let paths = CertPaths::in_dir(dir);
    for p in paths.all() {
        if let Ok(meta) = std::fs::symlink_metadata(p) {
            let p = p.to_path_buf();
            return Err(if meta.file_type().is_symlink() {
                CertError::Link(p)
            } else {
                CertError::Exists(p)
            });
        }
    }
    write_files(dir, false)
}

/// Like [`write`], replacing files that exist; a symbolic link is
/// replaced by a file, its target left as it was.
pub fn write_over(dir: &Path) -> Result<CertPaths, CertError> {
    write_files(dir, true)
}

fn write_files(dir: &Path, replace: bool) -> Result<CertPaths, CertError> {
    let paths = CertPaths::in_dir(dir);
    let set = Set::new()?;
    std::fs::create_dir_all(dir).map_err(|source| CertError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let files = [
        (&paths.ca, &set.ca, false),
        (&paths.server_cert, &set.server_cert, false),
        (&paths.server_key, &set.server_key, true),
        (&paths.client_cert, &set.client_cert, false),
        (&paths.client_key, &set.client_key, true),
    ];
    for (path, pem, secret) in files {
        if replace {
            replace_file(path, pem, secret)?;
        } else {
            create(path, path, pem, secret)?;
        }
    }
    Ok(paths)
}

/// Writes `pem` into a new file at `path` (named `shown` in errors):
/// O_EXCL fails on anything there, a symbolic link included, and
/// O_NOFOLLOW says so again; the mode is set as it is made.
fn create(path: &Path, shown: &Path, pem: &str, secret: bool) -> Result<(), CertError> {
    let io = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::AlreadyExists => CertError::Exists(shown.to_path_buf()),
        _ => CertError::Io {
            path: shown.to_path_buf(),
            source,
        },
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(if secret { 0o600 } else { 0o644 })
        .open(path)
        .map_err(io)?;
    file.write_all(pem.as_bytes()).map_err(io)
}

/// Writes `pem` into a new file beside `path` and renames it to `path`:
/// what was there (a file or a symbolic link) is replaced, never written
/// into, and a replaced key is as private as a new one.
fn replace_file(path: &Path, pem: &str, secret: bool) -> Result<(), CertError> {
    let mut temp = std::ffi::OsString::from(".");
    temp.push(path.file_name().unwrap_or_default());
    temp.push(format!(".{}.tmp", unique()));
    let temp = path.with_file_name(temp);
    let written = create(&temp, path, pem, secret).and_then(|()| {
        std::fs::rename(&temp, path).map_err(|source| CertError::Io {
            path: path.to_path_buf(),
            source,
        })
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// One CA and the two certificates it signed, as PEM text.
struct Set {
    ca: String,
    server_cert: String,
    server_key: String,
    client_cert: String,
    client_key: String,
}

impl Set {
    fn new() -> Result<Set, CertError> {
        let ca_key = KeyPair::generate()?;
        // Each CA's name is its own, so a client trusting another set's CA
        // finds no issuer at all (rather than a namesake whose signature fails).
        let mut ca = params(Vec::new(), &format!("shootout throw-away CA {}", unique()))?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = ca.self_signed(&ca_key)?;

        let names = SERVER_NAMES.iter().map(|n| n.to_string()).collect();
        let server_key = KeyPair::generate()?;
        let mut server = params(names, "shootout server")?;
        server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server = server.signed_by(&server_key, &ca, &ca_key)?;

        let client_key = KeyPair::generate()?;
        let mut client = params(Vec::new(), "shootout client")?;
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client = client.signed_by(&client_key, &ca, &ca_key)?;
        Ok(Set {
            ca: ca.pem(),
            server_cert: server.pem(),
            server_key: server_key.serialize_pem(),
            client_cert: client.pem(),
            client_key: client_key.serialize_pem(),
        })
    }
}

/// A name part no other set made on this machine shares: the time in
/// nanoseconds and the process id.
fn unique() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{nanos:x}-{}", std::process::id())
}

/// Parameters for `names` (IP addresses become IP names) with a common
/// name, valid from yesterday (a little clock skew) for a year.
fn params(names: Vec<String>, common_name: &str) -> Result<CertificateParams, CertError> {
    let mut p = CertificateParams::new(names)?;
    p.distinguished_name.push(DnType::CommonName, common_name);
    let now = time::OffsetDateTime::now_utc();
    p.not_before = now - time::Duration::days(1);
    p.not_after = now + time::Duration::days(365);
    Ok(p)
}

#[cfg(test)]
mod tests;
