//! The protocols of the contract ([`Protocol`]): cleartext HTTP/1.1 on
//! `PORT`, and on `TLS_PORT` HTTP/1.1 over TLS, with a client certificate
//! required (mutual TLS), or HTTP/2 by ALPN; and the WebSocket echo at
//! `/ws` (on `PORT`, or `WS_PORT` for a target that serves it from a
//! second process). One vocabulary, in these
//! words, for target manifests (`protocols = [...]`: what a server
//! serves), study files (`protocol = "tls"`: how a level's load reaches
//! it), the runner's choice of port and certificates and the reports'
//! labels. targets/SPEC.md "TLS" says what a server does for each.
//!
//! A word mixes two things a load keeps apart: the engine's
//! [`HttpVersion`] and the [`Transport`] under it. [`Protocol::wire`] is
//! the one place that maps the words onto that pair.

use serde::{Deserialize, Serialize};
use shootout_engine::HttpVersion;
use std::fmt;

/// What carries the HTTP version, apart from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// Plain TCP on `PORT`.
    Cleartext,
    /// TLS on `TLS_PORT`.
    Tls,
    /// TLS on `TLS_PORT`, the client presenting a certificate.
    Mtls,
}

/// One protocol of the contract.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
pub enum Protocol {
    /// Cleartext HTTP/1.1 on `PORT`: every target serves it.
    #[default]
    #[serde(rename = "http/1.1")]
    Http1,
    /// The whole contract over TLS 1.2+ (1.3 offered) on `TLS_PORT`.
    #[serde(rename = "tls")]
    Tls,
    /// With `TLS_CLIENT_CA`, the TLS port requires a client certificate.
    #[serde(rename = "mtls")]
    Mtls,
    /// HTTP/2 offered through ALPN on the TLS port (`h2`, then `http/1.1`).
    #[serde(rename = "h2")]
    H2,
    /// The WebSocket echo at `/ws` (targets/SPEC.md "WebSocket").
    #[serde(rename = "ws")]
    Ws,
}

impl Protocol {
    /// Every value, in the order a manifest lists them.
    pub const ALL: [Protocol; 5] = [
        Protocol::Http1,
        Protocol::Tls,
        Protocol::Mtls,
        Protocol::H2,
        Protocol::Ws,
    ];

    /// The word used in files and outputs.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http1 => "http/1.1",
            Protocol::Tls => "tls",
            Protocol::Mtls => "mtls",
            Protocol::H2 => "h2",
            Protocol::Ws => "ws",
        }
    }

    /// The protocol a word names, if any.
    pub fn parse(s: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The words, for a message listing what is accepted.
    pub fn known() -> String {
        Protocol::ALL.map(Protocol::name).join(", ")
    }

    /// What a load reaching this protocol speaks: its HTTP version and
    /// its transport. The one mapping of the words onto the engine's terms.
    pub fn wire(self) -> (HttpVersion, Transport) {
        match self {
            Protocol::Http1 => (HttpVersion::Http1, Transport::Cleartext),
            Protocol::Tls => (HttpVersion::Http1, Transport::Tls),
            Protocol::Mtls => (HttpVersion::Http1, Transport::Mtls),
            Protocol::H2 => (HttpVersion::Http2, Transport::Tls),
            // The upgrade is HTTP/1.1 on PORT; the engine's WebSocket
            // wire speaks it.
            Protocol::Ws => (HttpVersion::WebSocket, Transport::Cleartext),
        }
    }

    /// The HTTP version a load speaks (see [`Protocol::wire`]).
    pub fn version(self) -> HttpVersion {
        self.wire().0
    }

    /// Whether it is served on the TLS port.
    pub fn is_tls(self) -> bool {
        self.wire().1 != Transport::Cleartext
    }

    /// Whether the client presents a certificate.
    pub fn client_cert(self) -> bool {
        self.wire().1 == Transport::Mtls
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::Protocol;

    #[test]
    fn every_word_parses_back_and_nothing_else_does() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::parse(p.name()), Some(p));
        }
        assert_eq!(Protocol::parse("https"), None);
        assert_eq!(Protocol::parse("TLS"), None);
        assert_eq!(Protocol::known(), "http/1.1, tls, mtls, h2, ws");
        assert!(Protocol::Mtls.is_tls() && Protocol::Mtls.client_cert());
        assert!(Protocol::Tls.is_tls() && !Protocol::Tls.client_cert());
        assert!(!Protocol::Http1.is_tls());
        assert!(!Protocol::Ws.is_tls() && !Protocol::Ws.client_cert());
    }

    /// Each word is one (version, transport) pair; only h2 speaks HTTP/2.
    #[test]
    fn every_word_maps_to_a_version_and_a_transport() {
        use super::{HttpVersion, Transport};
        let pairs = Protocol::ALL.map(Protocol::wire);
        assert_eq!(
            pairs,
            [
                (HttpVersion::Http1, Transport::Cleartext),
                (HttpVersion::Http1, Transport::Tls),
                (HttpVersion::Http1, Transport::Mtls),
                (HttpVersion::Http2, Transport::Tls),
                (HttpVersion::WebSocket, Transport::Cleartext),
            ]
        );
    }
}
