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
//!
//! Certificates are taken as users make them: the client's own certificate
//! is not validated (an X.509 v1 one from `openssl x509 -req` is sent as
//! curl sends it; only that the key fits is checked, by comparing public
//! keys), and a server certificate that is byte for byte one of `--cacert`'s
//! is trusted as an exact match, as curl and OpenSSL do (a self-signed one
//! from `openssl req -x509` is CA:TRUE, which webpki refuses as a server's).
//! An encrypted private key is refused in words.

use crate::cert_der;
use crate::error::{PlanError, PlanField};
use crate::http_version::HttpVersion;
use crate::tls_cause;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_name, ResolvesClientCert, Resumption, WebPkiServerVerifier};
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::sign::CertifiedKey;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
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
    /// Sends the plan's client certificate, if any, and counts the
    /// handshakes in which the server asked for one.
    asked: Arc<CertAsked>,
    pub insecure: bool,
    pub client_cert: bool,
    /// What the sentences of TLS failures may say about this plan.
    pub cause: tls_cause::Context,
}

impl TlsClient {
    /// Reads and checks the files of `options` and builds the client
    /// configuration for `host` (the URL's host, brackets removed), asking
    /// ALPN for what `version` offers.
    pub fn new(
        options: &TlsOptions,
        host: &str,
        version: HttpVersion,
    ) -> Result<TlsClient, PlanError> {
        let provider = Arc::new(ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| PlanError::invalid(PlanField::Url, format!("TLS setup: {e}")))?;
        let builder = match &options.verify {
            Verify::Insecure => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider.clone()))),
            Verify::CaFile(path) => builder
                .dangerous()
                .with_custom_certificate_verifier(ca_file_verifier(path, provider.clone())?),
            Verify::SystemRoots => builder.with_root_certificates(system_roots()?),
        };
        let key = match &options.client_cert {
            Some(c) => Some(Arc::new(certified_key(c, &provider)?)),
            None => None,
        };
        let asked = Arc::new(CertAsked {
            key,
            count: AtomicU64::new(0),
        });
        let mut config = builder.with_client_cert_resolver(asked.clone());
        config.alpn_protocols = version.alpn_offer();
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
            cause: tls_cause::Context {
                ca_file: matches!(options.verify, Verify::CaFile(_)),
                client_cert: options.client_cert.is_some(),
                first_byte: None,
            },
        })
    }

    /// Handshakes so far in which the server asked for a client
    /// certificate, whether the plan had one or not (read before and after
    /// a run: the difference).
    pub fn cert_asked(&self) -> u64 {
        self.asked.count.load(Ordering::Relaxed)
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

/// The verifier of `--cacert`: webpki against the file's certificates,
/// and an exact match with one of them trusted as is.
fn ca_file_verifier(
    path: &Path,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<CaFileVerifier>, PlanError> {
    let certs = certificates(PlanField::CaFile, path)?;
    let mut roots = RootCertStore::empty();
    for cert in &certs {
        roots.add(cert.clone()).map_err(|e| {
            bad(
                PlanField::CaFile,
                path,
                &format!("not a usable CA certificate ({})", tls_cause::kind(&e)),
            )
        })?;
    }
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| bad(PlanField::CaFile, path, &format!("not usable: {e}")))?;
    Ok(Arc::new(CaFileVerifier {
        webpki,
        exact: certs,
    }))
}

/// The client certificate and its key, checked to fit by their public
/// keys (the certificate itself is not validated: the server does that).
fn certified_key(c: &ClientCert, provider: &CryptoProvider) -> Result<CertifiedKey, PlanError> {
    let chain = certificates(PlanField::ClientCert, &c.cert)?;
    let key = private_key(&c.key)?;
    let Some(fields) = cert_der::fields(&chain[0]) else {
        return Err(bad(
            PlanField::ClientCert,
            &c.cert,
            "its first certificate is no X.509 certificate",
        ));
    };
    let signer = provider.key_provider.load_private_key(key).map_err(|e| {
        bad(
            PlanField::ClientKey,
            &c.key,
            &format!("not a usable private key: {e}"),
        )
    })?;
    // A key type whose public key the provider cannot give is sent unchecked.
    if signer
        .public_key()
        .is_some_and(|k| k.as_ref() != fields.spki)
    {
        return Err(bad(
            PlanField::ClientKey,
            &c.key,
            &format!(
                "does not fit {}: its public key is not the certificate's",
                c.cert.display()
            ),
        ));
    }
    Ok(CertifiedKey::new(chain, signer))
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, PlanError> {
    let pem = read(PlanField::ClientKey, path)?;
    let text = String::from_utf8_lossy(&pem);
    if text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----")
        || text.contains("Proc-Type: 4,ENCRYPTED")
    {
        return Err(bad(
            PlanField::ClientKey,
            path,
            &format!(
                "encrypted keys are not supported: decrypt it with openssl pkey -in {} -out PLAIN",
                path.display()
            ),
        ));
    }
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

/// The client-certificate resolver: it sends the plan's certificate (none
/// without one), and counts how often the server asked.
#[derive(Debug)]
struct CertAsked {
    key: Option<Arc<CertifiedKey>>,
    count: AtomicU64,
}

impl ResolvesClientCert for CertAsked {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.key.clone()
    }

    fn has_certs(&self) -> bool {
        self.key.is_some()
    }
}

/// `--cacert`: webpki path validation against the file's certificates;
/// when that fails and the server's certificate is byte for byte one of
/// them, it is trusted as an exact match (its dates and name still
/// checked), as curl and OpenSSL do for a self-signed server certificate.
/// Handshake signatures are always checked.
#[derive(Debug)]
struct CaFileVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    exact: Vec<CertificateDer<'static>>,
}

impl ServerCertVerifier for CaFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let webpki =
            self.webpki
                .verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        match webpki {
            Ok(verified) => Ok(verified),
            Err(_) if self.exact.iter().any(|c| c.as_ref() == end_entity.as_ref()) => {
                exact_match(end_entity, server_name, now)
            }
            Err(refused) => Err(refused),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A server certificate that is itself one of `--cacert`'s: trusted when
/// valid at `now` and for `server_name`, by its subject alternative names
/// or, as OpenSSL does, its common name (`openssl req -x509 -subj
/// /CN=localhost` gives no other).
fn exact_match(
    cert: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, rustls::Error> {
    let invalid = |e: CertificateError| Err(rustls::Error::InvalidCertificate(e));
    let Some(fields) = cert_der::fields(cert) else {
        return invalid(CertificateError::BadEncoding);
    };
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < fields.not_before {
        return invalid(CertificateError::NotValidYet);
    }
    if now > fields.not_after {
        return invalid(CertificateError::Expired);
    }
    let by_san = ParsedCertificate::try_from(cert)
        .and_then(|parsed| verify_server_name(&parsed, server_name));
    let name = server_name.to_str();
    let by_cn = fields
        .common_name
        .is_some_and(|cn| cn.eq_ignore_ascii_case(&name));
    match by_san {
        Ok(()) => Ok(ServerCertVerified::assertion()),
        Err(_) if by_cn => Ok(ServerCertVerified::assertion()),
        Err(e) => Err(e),
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
