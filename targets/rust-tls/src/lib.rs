//! The TLS port of `../SPEC.md` "TLS" for the Rust targets built on rustls
//! 0.23 (rust-actix, rust-axum): when `TLS_PORT`, `TLS_CERT` and `TLS_KEY`
//! are set, a rustls `ServerConfig` with the PEM certificate chain and key,
//! TLS 1.2 and 1.3 (rustls's safe defaults), ALPN `h2` then `http/1.1`, and
//! with `TLS_CLIENT_CA` a `WebPkiClientVerifier` that requires a client
//! certificate signed by it (rustls docs, `ServerConfig` and
//! `WebPkiClientVerifier`, https://docs.rs/rustls/0.23/rustls/server/).
//! A bad file stops the server at start with exit code 2.

use std::{env, sync::Arc};

use rustls::{
    crypto::{ring, CryptoProvider},
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer},
    server::WebPkiClientVerifier,
    RootCertStore, ServerConfig,
};

/// The TLS port and its config, or None when the variables are not all set.
/// `name` prefixes the error printed before exiting on a bad file.
pub fn from_env(name: &str) -> Option<(u16, ServerConfig)> {
    let (Ok(port), Ok(cert), Ok(key)) = (
        env::var("TLS_PORT"),
        env::var("TLS_CERT"),
        env::var("TLS_KEY"),
    ) else {
        return None;
    };
    let fail = |what: String| -> ! {
        eprintln!("{name}: {what}");
        std::process::exit(2);
    };
    let Ok(port) = port.parse::<u16>() else {
        fail(format!("TLS_PORT must be a port number, got {port:?}"));
    };
    let certs = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .unwrap_or_else(|e| fail(format!("TLS_CERT {cert}: {e}")));
    let key =
        PrivateKeyDer::from_pem_file(&key).unwrap_or_else(|e| fail(format!("TLS_KEY {key}: {e}")));
    let provider = Arc::new(ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| fail(format!("TLS: {e}")));
    let builder = match env::var("TLS_CLIENT_CA") {
        Ok(ca) => {
            let verifier = client_verifier(&ca, provider)
                .unwrap_or_else(|e| fail(format!("TLS_CLIENT_CA {ca}: {e}")));
            builder.with_client_cert_verifier(verifier)
        }
        Err(_) => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .unwrap_or_else(|e| fail(format!("TLS_CERT and TLS_KEY: {e}")));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Some((port, config))
}

/// A verifier that requires a client certificate signed by a CA in `path`.
fn client_verifier(
    path: &str,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| e.to_string())? {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| e.to_string())
}
