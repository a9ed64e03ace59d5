//! Throw-away certificates on disk for servers' TLS ports: a CA, a server
//! certificate for 127.0.0.1, ::1 and localhost and a client certificate
//! (`shootout_certs`), written to a folder of their own under the system's
//! temporary folder and removed with it on drop; and the variables that
//! start a target's TLS port with them (targets/SPEC.md "TLS"), with
//! `TLS_CLIENT_CA` when the folder is for mutual TLS. A run's TLS levels
//! and verify's TLS column both start servers from one of these.

use crate::{tls_env, Target, TlsFiles, Unsupported};
use shootout_certs::CertPaths;
use std::path::{Path, PathBuf};

/// A folder of throw-away certificates; removed on drop.
#[derive(Debug)]
pub struct CertDir {
    dir: PathBuf,
    certs: CertPaths,
    /// Whether servers started from it require a client certificate.
    mutual: bool,
}

/// Why the certificates could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot make TLS certificates in {}: {source}", .dir.display())]
pub struct CertDirError {
    dir: PathBuf,
    source: shootout_certs::CertError,
}

impl CertDir {
    /// Certificates in `shootout-<tag>-<pid>` under the temporary folder
    /// (replacing a stale one); `mutual`: servers ask for client ones.
    pub fn new(tag: &str, mutual: bool) -> Result<CertDir, CertDirError> {
        let dir = std::env::temp_dir().join(format!("shootout-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let certs = shootout_certs::write(&dir).map_err(|source| CertDirError {
            dir: dir.clone(),
            source,
        })?;
        Ok(CertDir { dir, certs, mutual })
    }

    /// The files: the CA, the server's and the client's pairs.
    pub fn certs(&self) -> &CertPaths {
        &self.certs
    }

    /// Whether servers started from it require a client certificate.
    pub fn mutual(&self) -> bool {
        self.mutual
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The variables that start `target`'s TLS port on `port`, or why it
    /// cannot serve them (its manifest's `protocols`).
    pub fn server_env(
        &self,
        target: &Target,
        port: u16,
    ) -> Result<Vec<(String, String)>, Unsupported> {
        let files = TlsFiles {
            cert: self.certs.server_cert.clone(),
            key: self.certs.server_key.clone(),
            client_ca: self.mutual.then(|| self.certs.ca.clone()),
        };
        tls_env(&target.name, target.protocols, port, &files)
    }
}

impl Drop for CertDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
