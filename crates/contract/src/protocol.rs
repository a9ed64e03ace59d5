//! How a load reaches a server ([`Protocol`]): cleartext HTTP/1.1, HTTP/1.1
//! over TLS, or HTTP/1.1 over TLS with a client certificate (mutual TLS).
//! One vocabulary for study files (`protocol = "tls"`), target manifests
//! (what a server can serve), the runner's choice of port and certificates,
//! the stored results and the reports' labels. targets/SPEC.md "TLS" says
//! what a server does for each.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The transport of a level's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Cleartext HTTP/1.1 on `PORT` (every server).
    #[default]
    Http,
    /// HTTP/1.1 over TLS on `TLS_PORT`, the server's certificate checked
    /// against the run's CA.
    Tls,
    /// As `Tls`, the server requiring a client certificate signed by the
    /// run's CA (`TLS_CLIENT_CA`), which the load presents.
    Mtls,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Http, Protocol::Tls, Protocol::Mtls];

    /// The word used in files and outputs.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http => "http",
            Protocol::Tls => "tls",
            Protocol::Mtls => "mtls",
        }
    }

    /// The protocol a word names, if any.
    pub fn parse(s: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The words, for a message listing what is accepted.
    pub fn known() -> String {
        Protocol::ALL.map(Protocol::as_str).join(", ")
    }

    /// Whether the load speaks TLS (to `TLS_PORT`).
    pub fn is_tls(self) -> bool {
        self != Protocol::Http
    }

    /// Whether the load presents a client certificate.
    pub fn client_cert(self) -> bool {
        self == Protocol::Mtls
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Protocol;

    #[test]
    fn every_word_parses_back_and_nothing_else_does() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::parse(p.as_str()), Some(p));
        }
        assert_eq!(Protocol::parse("https"), None);
        assert_eq!(Protocol::parse("TLS"), None);
        assert_eq!(Protocol::known(), "http, tls, mtls");
        assert!(Protocol::Mtls.is_tls() && Protocol::Mtls.client_cert());
        assert!(Protocol::Tls.is_tls() && !Protocol::Tls.client_cert());
        assert!(!Protocol::Http.is_tls());
    }
}
