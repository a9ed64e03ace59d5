//! A plan's TLS settings ([`TlsOptions`]: how the server is verified, the
//! client certificate, session resumption) and the one rustls client
//! configuration built from them before the run ([`TlsClient`]). Files are
//! read and checked here, when the plan is built, so an unreadable or
//! invalid PEM file, or a key that does not match its certificate, is a
//! [`PlanError`] naming the file and nothing is sent. The per-connection
//! session lives in `tls_conn`.
//!
//! rustls with the `ring` provider: TLS 1.2 and 1.3, ALPN `http/1.1` (or
//! `h2` first, for an HTTP/2 run, so a refusing server can say which it chose), SNI
//! from the URL's host name (none for an IP address, as rustls does).

use crate::error::{PlanError, PlanField};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How the server's certificate is checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Verify {
    /// Against the system's trust store (rustls-native-certs).
    #[default]
    SystemRoots,
    /// Against the CA certificates of this PEM file only.
    CaFile(PathBuf),
    /// Not at all (`--insecure`): the output says so.
    Insecure,
}

/// A client certificate for mutual TLS: a PEM certificate chain and its
/// PEM private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCert {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// The TLS settings of an `https://` plan, filled by a front end (flags, a
/// runner's own certificates).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub verify: Verify,
    pub client_cert: Option<ClientCert>,
    /// Let reconnections resume sessions (tickets or IDs, as the server
    /// offers); without it every handshake is a full one.
    pub resume: bool,
}

/// The rustls configuration every connection of a run shares, and the name
/// the server is asked for.
#[derive(Debug, Clone)]
pub(crate) struct TlsClient {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    /// Counts handshakes in which the server asked for a client certificate
    /// that the plan does not have.
    asked: Arc<CertAsked>,
    pub insecure: bool,
    pub client_cert: bool,
}

impl TlsClient {
    /// Reads and checks the files of `options` and builds the client
    /// configuration for `host` (the URL's host, brackets removed), asking
    /// ALPN for h2 when `http2`.
    pub fn new(options: &TlsOptions, host: &str, http2: bool) -> Result<TlsClient, PlanError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| PlanError::invalid(PlanField::Url, format!("TLS setup: {e}")))?;
        let builder = match &options.verify {
            Verify::Insecure => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider))),
            Verify::CaFile(path) => builder.with_root_certificates(ca_file(path)?),
            Verify::SystemRoots => builder.with_root_certificates(system_roots()?),
        };
        let asked = Arc::new(CertAsked::default());
        let mut config = match &options.client_cert {
            Some(c) => {
                let (chain, key) = (cert_chain(&c.cert)?, private_key(&c.key)?);
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    bad(
                        PlanField::ClientKey,
                        &c.key,
                        &format!("does not fit {}: {e}", c.cert.display()),
                    )
                })?
            }
            None => builder.with_client_cert_resolver(asked.clone()),
        };
        config.alpn_protocols = if http2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        if !options.resume {
            config.resumption = Resumption::disabled();
        }
        let server_name = ServerName::try_from(host.to_string()).map_err(|e| {
            PlanError::invalid(
                PlanField::Url,
                format!("'{host}' is no TLS server name: {e}"),
            )
        })?;
        Ok(TlsClient {
            config: Arc::new(config),
            server_name,
            asked,
            insecure: options.verify == Verify::Insecure,
            client_cert: options.client_cert.is_some(),
        })
    }

    /// Handshakes so far in which the server asked for a client certificate
    /// and the plan had none (read before and after a run: the difference).
    pub fn cert_asked(&self) -> u64 {
        self.asked.0.load(Ordering::Relaxed)
    }
}

fn bad(field: PlanField, path: &Path, why: &str) -> PlanError {
    PlanError::invalid(field, format!("{}: {why}", path.display()))
}

fn read(field: PlanField, path: &Path) -> Result<Vec<u8>, PlanError> {
    std::fs::read(path).map_err(|e| bad(field, path, &format!("cannot read: {e}")))
}

/// Every certificate of a PEM file, at least one.
fn certificates(field: PlanField, path: &Path) -> Result<Vec<CertificateDer<'static>>, PlanError> {
    let pem = read(field, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(field, path, &format!("invalid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad(
            field,
            path,
            "holds no PEM certificate (BEGIN CERTIFICATE)",
        ));
    }
    Ok(certs)
}

fn ca_file(path: &Path) -> Result<RootCertStore, PlanError> {
    let mut roots = RootCertStore::empty();
    for cert in certificates(PlanField::CaFile, path)? {
        roots.add(cert).map_err(|e| {
            bad(
                PlanField::CaFile,
                path,
                &format!("not a usable CA certificate: {e}"),
            )
        })?;
    }
    Ok(roots)
}

fn cert_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, PlanError> {
    certificates(PlanField::ClientCert, path)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, PlanError> {
    let pem = read(PlanField::ClientKey, path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        let why = match e {
            rustls::pki_types::pem::Error::NoItemsFound => "holds no PEM private key".to_string(),
            e => format!("invalid PEM: {e}"),
        };
        bad(PlanField::ClientKey, path, &why)
    })
}

/// The system's trust store; an empty or unreadable one is an error, since
/// no server could then be verified.
fn system_roots() -> Result<RootCertStore, PlanError> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_string(), ToString::to_string);
        return Err(PlanError::invalid(
            PlanField::CaFile,
            format!("no system CA certificates could be loaded ({why}); give a CA file or skip verification"),
        ));
    }
    Ok(roots)
}

/// The client-certificate resolver of a plan without one: it sends none,
/// and counts how often the server asked.
#[derive(Debug, Default)]
struct CertAsked(AtomicU64);

impl ResolvesClientCert for CertAsked {
    fn resolve(
        &self,
        _hints: &[&[u8]],
        _schemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        None
    }

    fn has_certs(&self) -> bool {
        false
    }
}

/// `--insecure`: accepts any certificate, but still checks the handshake's
/// signatures (so the connection is what a verifying client would get,
/// minus the trust decision).
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algs = &self.0.signature_verification_algorithms;
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
