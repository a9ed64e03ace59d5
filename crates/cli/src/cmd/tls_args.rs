//! The TLS flags of an `https://` load (`--cacert`, `--insecure`, `--cert`,
//! `--key`, `--tls-resume`), one clap group shared by `load` and `capacity`,
//! and what they become: the engine's [`TlsOptions`]. The engine reads and
//! checks the files when the plan is built.

use shootout_engine::{ClientCert, TlsOptions, Verify};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsArgs {
    /// https: verify the server against the CA certificates of this PEM file (instead of the system's).
    #[arg(long, value_name = "FILE", conflicts_with = "insecure")]
    pub cacert: Option<PathBuf>,
    /// https: do not verify the server's certificate (the output says so).
    #[arg(long)]
    pub insecure: bool,
    /// https: a client certificate (PEM) for mutual TLS; needs --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// https: the client certificate's private key (PEM); needs --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// https: let reconnections resume TLS sessions (otherwise every handshake is a full one).
    #[arg(long)]
    pub tls_resume: bool,
}

impl TlsArgs {
    /// The flags as the engine's TLS settings.
    pub fn options(&self) -> TlsOptions {
        let verify = match (&self.cacert, self.insecure) {
            (_, true) => Verify::Insecure,
            (Some(ca), false) => Verify::CaFile(ca.clone()),
            (None, false) => Verify::SystemRoots,
        };
        let client_cert = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => Some(ClientCert {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        TlsOptions {
            verify,
            client_cert,
            resume: self.tls_resume,
        }
    }
}

/// A server that asked for our client certificate (`asked` handshakes,
/// from the plan), was sent `cert`, and then served nothing, answering
/// every request with a 4xx status (nginx with `ssl_verify_client on`
/// answers 400 to every request over an expired or untrusted one): says
/// so, for `shootout load` to exit 2, as it does when none was given.
pub fn client_cert_rejected(
    cert: Option<&std::path::Path>,
    asked: Option<u64>,
    s: &shootout_engine::Summary,
) -> Option<String> {
    let (cert, tls) = (cert?, s.tls.as_ref()?);
    let statuses: Vec<String> = s
        .status
        .iter()
        .map(|(code, n)| format!("{n} × {code}"))
        .collect();
    let all_4xx = s.status.keys().all(|code| code.starts_with('4'));
    let rejected = tls.client_cert
        && asked.is_some_and(|n| n > 0)
        && s.requests.ok == 0
        && s.requests.completed > 0
        && all_4xx;
    rejected.then(|| {
        format!(
            "the server rejected our client certificate {}: it asked for one and then answered \
             every request with {} (nginx does so for an expired or untrusted one); check that \
             it is valid and issued by a CA the server trusts",
            cert.display(),
            statuses.join(", ")
        )
    })
}
