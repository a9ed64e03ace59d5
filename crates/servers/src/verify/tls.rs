//! The TLS port (targets/SPEC.md "TLS") of a target whose manifest claims
//! `tls`: the verifier makes throw-away certificates (`shootout_certs`),
//! starts the server with `TLS_PORT`, `TLS_CERT` and `TLS_KEY` (and
//! `TLS_CLIENT_CA` when it claims `mtls`), and checks over a blocking
//! rustls client that the port opens, that `/plaintext` and `/json` answer
//! over TLS what they answer in cleartext, that ALPN gives `h2` exactly
//! when the manifest claims it, and that with a client CA a client without
//! a certificate is not served.

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use crate::http::{self, Request};
use crate::{CertDir, CertDirError, Target, Unsupported};
use rustls::crypto::ring;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, InvalidDnsNameError, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{self, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The certificates a verification starts a TLS port with; removed on drop.
#[derive(Debug)]
pub(super) struct TlsSetup {
    /// Mutual when the target claims `mtls`.
    dir: CertDir,
}

impl TlsSetup {
    /// Certificates for `target` when it claims `tls`, else None; an
    /// error when they cannot be made.
    pub fn for_target(target: &Target) -> Option<Result<TlsSetup, CertDirError>> {
        if !target.protocols.tls {
            return None;
        }
        let tag = format!("verify-tls-{}", target.name);
        Some(CertDir::new(&tag, target.protocols.mtls).map(|dir| TlsSetup { dir }))
    }

    /// The variables that start the TLS port on `port`.
    pub fn env(&self, target: &Target, port: u16) -> Result<Vec<(String, String)>, Unsupported> {
        self.dir.server_env(target, port)
    }

    /// A client trusting the CA, offering `alpn`, with the client
    /// certificate when `with_cert`.
    fn client(&self, alpn: &[&[u8]], with_cert: bool) -> Result<Arc<ClientConfig>, ClientError> {
        let certs = self.dir.certs();
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&certs.ca)? {
            roots.add(cert?)?;
        }
        let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots);
        let mut config = if with_cert {
            let chain = CertificateDer::pem_file_iter(&certs.client_cert)
                .and_then(|c| c.collect::<Result<Vec<_>, _>>())?;
            let key = PrivateKeyDer::from_pem_file(&certs.client_key)?;
            builder.with_client_auth_cert(chain, key)?
        } else {
            builder.with_no_client_auth()
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(config))
    }
}

/// Why the verifier's TLS client could not be configured: the run's own
/// certificate files or rustls refused.
#[derive(Debug, thiserror::Error)]
enum ClientError {
    #[error(transparent)]
    Pem(#[from] pem::Error),
    #[error(transparent)]
    Rustls(#[from] rustls::Error),
}

/// A port of the server's (TLS, WebSocket) did not accept within the wait.
#[derive(Debug, thiserror::Error)]
#[error("the {what} port {port} did not open within {secs} s")]
pub(super) struct NotOpen {
    what: &'static str,
    port: u16,
    secs: u64,
}

/// Why one TLS session ([`over_tls`]) failed.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    #[error(transparent)]
    Name(#[from] InvalidDnsNameError),
    #[error(transparent)]
    Rustls(#[from] rustls::Error),
    /// Connecting, setting timeouts or the exchange itself.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// The cause is in the message and not also the source, so `{:#}`
    /// prints it once.
    #[error("handshake: {0}")]
    Handshake(io::Error),
}

const TIMEOUT: Duration = Duration::from_secs(5);

/// The TLS checks of a started server: cleartext on `http`, TLS on `tls`.
pub(super) fn check_tls(
    target: &Target,
    setup: &TlsSetup,
    http: SocketAddr,
    tls: SocketAddr,
    wait: Duration,
) -> Vec<Check> {
    if let Err(why) = wait_open("TLS", tls, wait) {
        return vec![Check::fail(
            Column::Tls,
            Aspect::Start,
            Failure::Tls(why.to_string()),
        )];
    }
    let mut checks = vec![Check::pass(Column::Tls, Aspect::Start)];
    checks.push(same_answers(setup, http, tls));
    checks.push(alpn(target, setup, tls));
    if setup.dir.mutual() {
        checks.push(refuses_without_cert(setup, tls));
    }
    checks
}

/// Waits until `addr` (the `what` port) accepts a connection.
pub(super) fn wait_open(
    what: &'static str,
    addr: SocketAddr,
    wait: Duration,
) -> Result<(), NotOpen> {
    let end = Instant::now() + wait;
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        if Instant::now() >= end {
            return Err(NotOpen {
                what,
                port: addr.port(),
                secs: wait.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One TLS session to `addr` with `config`: the negotiated ALPN protocol
/// and the response to `req`, or why it failed.
fn over_tls(
    config: Arc<ClientConfig>,
    addr: SocketAddr,
    req: Option<&Request<'_>>,
) -> Result<(Option<Vec<u8>>, Option<http::Response>), SessionError> {
    let name = ServerName::try_from("localhost")?;
    let conn = ClientConnection::new(config, name)?;
    let sock = TcpStream::connect_timeout(&addr, TIMEOUT)?;
    sock.set_read_timeout(Some(TIMEOUT))?;
    sock.set_write_timeout(Some(TIMEOUT))?;
    let mut stream = StreamOwned::new(conn, sock);
    while stream.conn.is_handshaking() {
        stream
            .conn
            .complete_io(&mut stream.sock)
            .map_err(SessionError::Handshake)?;
    }
    let alpn = stream.conn.alpn_protocol().map(<[u8]>::to_vec);
    let Some(req) = req else {
        return Ok((alpn, None));
    };
    let resp = http::exchange(&mut BufReader::new(stream), addr, req)?;
    Ok((alpn, Some(resp)))
}

/// `/plaintext` and `/json` answer over TLS as they do in cleartext.
fn same_answers(setup: &TlsSetup, http: SocketAddr, tls: SocketAddr) -> Check {
    let fail = |why: String| Check::fail(Column::Tls, Aspect::Body, Failure::Tls(why));
    let config = match setup.client(&[b"http/1.1"], setup.dir.mutual()) {
        Ok(c) => c,
        Err(why) => return fail(why.to_string()),
    };
    for path in ["/plaintext", "/json"] {
        let req = Request::get(path).closing();
        let clear = match http::send(http, &req, TIMEOUT) {
            Ok(r) => r,
            Err(e) => return fail(format!("GET {path} in cleartext: {e}")),
        };
        let secure = match over_tls(config.clone(), tls, Some(&req)) {
            Ok((_, Some(r))) => r,
            Ok((_, None)) => unreachable!("a request was sent"),
            Err(e) => return fail(format!("GET {path} over TLS: {e}")),
        };
        if (secure.status, &secure.body) != (clear.status, &clear.body) {
            return fail(format!(
                "GET {path} over TLS answered {} {:?}, in cleartext {} {:?}",
                secure.status,
                String::from_utf8_lossy(&secure.body),
                clear.status,
                String::from_utf8_lossy(&clear.body)
            ));
        }
    }
    Check::pass(Column::Tls, Aspect::Body)
}

/// ALPN gives `h2` exactly when the manifest claims it.
fn alpn(target: &Target, setup: &TlsSetup, tls: SocketAddr) -> Check {
    let fail = |why: String| Check::fail(Column::Tls, Aspect::Alpn, Failure::Tls(why));
    let config = match setup.client(&[b"h2", b"http/1.1"], setup.dir.mutual()) {
        Ok(c) => c,
        Err(why) => return fail(why.to_string()),
    };
    let got = match over_tls(config, tls, None) {
        Ok((alpn, _)) => alpn,
        Err(e) => return fail(format!("a handshake offering h2: {e}")),
    };
    let h2 = got.as_deref() == Some(b"h2".as_slice());
    if h2 != target.protocols.h2 {
        let said = got.map_or("nothing".into(), |p| {
            String::from_utf8_lossy(&p).into_owned()
        });
        return fail(format!(
            "ALPN chose {said} when offered h2 and http/1.1; the manifest {} h2",
            if target.protocols.h2 {
                "claims"
            } else {
                "does not claim"
            }
        ));
    }
    Check::pass(Column::Tls, Aspect::Alpn)
}

/// With `TLS_CLIENT_CA`, a client without a certificate is not served.
fn refuses_without_cert(setup: &TlsSetup, tls: SocketAddr) -> Check {
    let fail = |why: String| Check::fail(Column::Tls, Aspect::ClientCert, Failure::Tls(why));
    let config = match setup.client(&[b"http/1.1"], false) {
        Ok(c) => c,
        Err(why) => return fail(why.to_string()),
    };
    let req = Request::get("/plaintext").closing();
    match over_tls(config, tls, Some(&req)) {
        Ok((_, Some(r))) if r.status < 400 => fail(format!(
            "a client without a certificate was served ({} on GET /plaintext) although TLS_CLIENT_CA is set",
            r.status
        )),
        _ => Check::pass(Column::Tls, Aspect::ClientCert),
    }
}
