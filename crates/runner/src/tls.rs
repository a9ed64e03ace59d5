//! TLS levels in a run (`protocol = "tls"` or `"mtls"`, studies/README.md):
//! the run's own throw-away CA, server and client certificates
//! (`shootout_certs`), made once in a temporary folder that goes with the
//! run; the variables that start a target's TLS port (targets/SPEC.md
//! "TLS"), with `TLS_CLIENT_CA` when the study's TLS levels are mutual;
//! and the engine's TLS options of a level (with `tls_resume`, session
//! resumption on reconnects). A target whose manifest does
//! not claim what the study asks is started without a TLS port and its TLS
//! levels are skipped with the manifest's word for why.

use shootout_contract::protocol::Protocol;
use shootout_engine::tls::{ClientCert, TlsOptions, Verify};
use shootout_servers::{CertDir, CertDirError, Target, Unsupported};
use shootout_study::Study;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The certificates of a run with TLS levels; the folder is removed on drop.
#[derive(Debug)]
pub struct RunTls {
    /// Mutual when the TLS levels present a client certificate (a study
    /// has tls or mtls levels, never both).
    certs: CertDir,
}

impl RunTls {
    /// The run's certificates when `study` has a TLS level, else None.
    pub fn for_study(study: &Study) -> Result<Option<RunTls>, CertDirError> {
        let Some(first) = study.tls_protocols().next() else {
            return Ok(None);
        };
        let certs = CertDir::new("tls", first.client_cert())?;
        Ok(Some(RunTls { certs }))
    }

    /// The variables that start `target`'s TLS port on `port`, or why it
    /// cannot serve this run's TLS levels (its manifest's `protocols`).
    pub fn server_env(
        &self,
        target: &Target,
        port: u16,
    ) -> Result<Vec<(String, String)>, Unsupported> {
        self.certs.server_env(target, port)
    }

    /// The engine's TLS options for a level of `protocol`: the run's CA
    /// verifies the server, mutual TLS presents the run's client
    /// certificate, and every handshake is a full one unless the level
    /// says `tls_resume` (then reconnects resume sessions).
    pub fn options(&self, protocol: Protocol, resume: bool) -> TlsOptions {
        let certs = self.certs.certs();
        TlsOptions {
            verify: Verify::CaFile(certs.ca.clone()),
            client_cert: protocol.client_cert().then(|| ClientCert {
                cert: certs.client_cert.clone(),
                key: certs.client_key.clone(),
            }),
            resume,
        }
    }
}

/// Waits until something accepts on `addr` (a TLS port may
/// open a moment after the cleartext one: a second process, connector or
/// instance); false after `limit`.
pub fn wait_port(addr: SocketAddr, limit: Duration, stopped: &dyn Fn() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end && !stopped() {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}
