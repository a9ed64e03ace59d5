//! The HTTP version a run speaks ([`HttpVersion`]): the one definition the
//! plan, the workers, the summary, the contract's vocabulary and the
//! servers share. It is apart from the transport (cleartext, TLS, mutual
//! TLS: `Endpoint::tls` and the TLS options), which every version runs
//! over alike.
//!
//! Each version has one session type behind `conn::Session` (HTTP/1.1's
//! in-order FIFO, `h1_conn`; HTTP/2's streams, `h2_conn`), and every
//! `match` on a version is exhaustive, so a new one (WebSocket, HTTP/3)
//! is listed by the compiler at each place it must be handled (WebSocket,
//! `ws_conn`, went in that way)
//! (docs/architecture.md, "The protocol seam").

use std::fmt;

/// The HTTP version of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum HttpVersion {
    /// HTTP/1.1: requests answered in order, pipelined up to a depth.
    #[default]
    Http1,
    /// HTTP/2 (ALPN h2 over TLS, h2c with prior knowledge over cleartext):
    /// requests are streams, answered in any order.
    Http2,
    /// WebSocket (RFC 6455, `ws://` and `wss://`): an HTTP/1.1 upgrade,
    /// then messages echoed in order, up to a depth in flight.
    WebSocket,
}

impl HttpVersion {
    /// The version as the summary's `protocol.http` writes it ("1.1", "2").
    pub fn label(self) -> &'static str {
        match self {
            HttpVersion::Http1 => "1.1",
            HttpVersion::Http2 => "2",
            HttpVersion::WebSocket => "websocket",
        }
    }

    /// The version a summary's `protocol.http` names, if any.
    pub fn from_label(label: &str) -> Option<HttpVersion> {
        [
            HttpVersion::Http1,
            HttpVersion::Http2,
            HttpVersion::WebSocket,
        ]
        .into_iter()
        .find(|v| v.label() == label)
    }

    /// The protocols a TLS client offers through ALPN, preferred first.
    pub(crate) fn alpn_offer(self) -> Vec<Vec<u8>> {
        match self {
            HttpVersion::Http1 | HttpVersion::WebSocket => vec![b"http/1.1".to_vec()],
            HttpVersion::Http2 => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        }
    }

    /// The protocol ALPN must choose before any byte of this version is
    /// sent over TLS (there is no falling back); None when any will do.
    pub(crate) fn alpn_required(self) -> Option<&'static [u8]> {
        match self {
            HttpVersion::Http1 | HttpVersion::WebSocket => None,
            HttpVersion::Http2 => Some(b"h2"),
        }
    }

    /// Whether the io_uring transport carries it (over cleartext only).
    pub fn over_uring(self) -> bool {
        match self {
            HttpVersion::Http1 => true,
            HttpVersion::Http2 | HttpVersion::WebSocket => false,
        }
    }
}

/// "HTTP/1.1", "HTTP/2": the name in messages.
impl fmt::Display for HttpVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HttpVersion::Http1 => "HTTP/1.1",
            HttpVersion::Http2 => "HTTP/2",
            HttpVersion::WebSocket => "WebSocket",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::HttpVersion;

    /// The labels are the summary's `protocol.http` values, unchanged.
    #[test]
    fn labels_are_the_summary_strings_and_parse_back() {
        assert_eq!(HttpVersion::Http1.label(), "1.1");
        assert_eq!(HttpVersion::Http2.label(), "2");
        assert_eq!(HttpVersion::WebSocket.label(), "websocket");
        for v in [
            HttpVersion::Http1,
            HttpVersion::Http2,
            HttpVersion::WebSocket,
        ] {
            assert_eq!(HttpVersion::from_label(v.label()), Some(v));
        }
        assert_eq!(HttpVersion::from_label("2.0"), None);
        assert_eq!(HttpVersion::default(), HttpVersion::Http1);
    }
}
