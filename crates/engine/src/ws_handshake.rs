//! The WebSocket opening handshake (RFC 6455 §4), without I/O: the
//! upgrade request a connection sends first, and the check of the server's
//! answer.
//!
//! Each connection sends its own `Sec-WebSocket-Key` (16 random bytes,
//! base64) and offers no extension and no subprotocol, so
//! `permessage-deflate` is off. The answer must be `101` with
//! `Upgrade: websocket`, `Connection: upgrade` and the
//! `Sec-WebSocket-Accept` that proves the server read this key
//! (base64 of SHA-1 of the key and the RFC's GUID). Any other status is a
//! refusal, with that status; a 101 that breaks a rule (a wrong accept key,
//! an extension or a subprotocol nobody offered) is a protocol violation.

// Not used by the worker yet: its dispatch arm comes with the protocol seam.
#![allow(dead_code)]

use base64::Engine as _;
use sha1::{Digest, Sha1};

/// The GUID every accept key is derived with (§1.3).
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// The longest answer head read before giving up on it.
const MAX_HEAD: usize = 16 << 10;
/// The most header fields an answer head may have.
const MAX_FIELDS: usize = 32;

/// Why the server's answer does not open a WebSocket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandshakeFail {
    /// It answered with this status instead of 101.
    Refused(u16),
    /// It answered 101, or something not HTTP, breaking this rule.
    Violation(&'static str),
}

/// A fresh `Sec-WebSocket-Key`: 16 random bytes, base64 (§4.1).
pub(crate) fn new_key() -> String {
    let mut nonce = [0u8; 16];
    fastrand::fill(&mut nonce);
    base64::engine::general_purpose::STANDARD.encode(nonce)
}

/// The `Sec-WebSocket-Accept` a server owes for `key` (§4.2.2).
pub(crate) fn accept_for(key: &str) -> String {
    let mut sha = Sha1::new();
    sha.update(key.as_bytes());
    sha.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(sha.finalize())
}

/// Appends the upgrade request for `path` on `host` (the authority, with
/// its port when not the default).
pub(crate) fn put_request(out: &mut Vec<u8>, host: &str, path: &str, key: &str) {
    for part in [
        "GET ",
        path,
        " HTTP/1.1\r\nHost: ",
        host,
        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ",
        key,
        "\r\nSec-WebSocket-Version: 13\r\n\r\n",
    ] {
        out.extend_from_slice(part.as_bytes());
    }
}

/// Reads the server's answer to the upgrade with `key` from the start of
/// `buf`: None while its head is not whole, the head's length once it is a
/// valid 101 (the server's frames may follow it in the same bytes).
pub(crate) fn check_answer(buf: &[u8], key: &str) -> Result<Option<usize>, HandshakeFail> {
    let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut answer = httparse::Response::new(&mut fields);
    let len = match answer.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(HandshakeFail::Violation(
                "an answer to the upgrade with a head over 16 KiB",
            ))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HandshakeFail::Violation(
                "an answer to the upgrade with over 32 header fields",
            ))
        }
        Err(_) => {
            return Err(HandshakeFail::Violation(
                "an answer to the upgrade that is not HTTP/1.1",
            ))
        }
    };
    let status = answer.code.unwrap_or(0);
    if status != 101 {
        return Err(HandshakeFail::Refused(status));
    }
    let field = |name: &str| {
        answer
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.trim_ascii())
    };
    let has_token = |name: &str, token: &str| {
        field(name).is_some_and(|v| {
            v.split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
        })
    };
    if !has_token("upgrade", "websocket") {
        return Err(HandshakeFail::Violation("a 101 without Upgrade: websocket"));
    }
    if !has_token("connection", "upgrade") {
        return Err(HandshakeFail::Violation(
            "a 101 without Connection: upgrade",
        ));
    }
    if field("sec-websocket-accept") != Some(accept_for(key).as_bytes()) {
        return Err(HandshakeFail::Violation(
            "a 101 whose Sec-WebSocket-Accept does not match the key sent",
        ));
    }
    if field("sec-websocket-extensions").is_some() {
        return Err(HandshakeFail::Violation(
            "a 101 naming an extension the client did not offer",
        ));
    }
    if field("sec-websocket-protocol").is_some() {
        return Err(HandshakeFail::Violation(
            "a 101 naming a subprotocol the client did not offer",
        ));
    }
    Ok(Some(len))
}

/// The 101 a server owes for `key`, as the tests write it.
#[cfg(test)]
pub(crate) fn answer_for(key: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        accept_for(key)
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6455 §1.3's own example (Python's hashlib gives the same
    /// accept key).
    const RFC_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

    #[test]
    fn the_accept_key_of_the_rfc_example() {
        assert_eq!(accept_for(RFC_KEY), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn keys_are_16_random_bytes_in_base64() {
        let (a, b) = (new_key(), new_key());
        assert_ne!(a, b);
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&a)
            .unwrap();
        assert_eq!((a.len(), raw.len()), (24, 16));
    }

    #[test]
    fn the_request_offers_no_extension() {
        let mut out = Vec::new();
        put_request(&mut out, "127.0.0.1:8080", "/ws?x=1", RFC_KEY);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "GET /ws?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
             Sec-WebSocket-Version: 13\r\n\r\n"
        );
    }

    #[test]
    fn a_valid_101_opens_and_frames_may_follow_it() {
        let mut answer = answer_for(RFC_KEY);
        let head = answer.len();
        answer.extend_from_slice(&[0x81, 0x00]);
        assert_eq!(check_answer(&answer, RFC_KEY), Ok(Some(head)));
        for cut in [0, 1, 12, head - 1] {
            assert_eq!(check_answer(&answer[..cut], RFC_KEY), Ok(None), "{cut}");
        }
        // Tokens in a list, any case, with spaces.
        let lenient =
            "HTTP/1.1 101 OK\r\nconnection: keep-alive, UPGRADE\r\nupgrade:  WebSocket \r\n\
                       sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        assert_eq!(
            check_answer(lenient.as_bytes(), RFC_KEY),
            Ok(Some(lenient.len()))
        );
    }

    #[test]
    fn another_status_is_a_refusal() {
        let answer = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            check_answer(answer, RFC_KEY),
            Err(HandshakeFail::Refused(404))
        );
        let answer = b"HTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(
            check_answer(answer, RFC_KEY),
            Err(HandshakeFail::Refused(200))
        );
    }

    #[test]
    fn a_101_that_breaks_a_rule_is_a_violation() {
        let good = String::from_utf8(answer_for(RFC_KEY)).unwrap();
        let cases = [
            (good.replace("s3pP", "AAAA"), "Sec-WebSocket-Accept"),
            (
                good.replace("Upgrade: websocket\r\n", ""),
                "Upgrade: websocket",
            ),
            (
                good.replace("Connection: Upgrade", "Connection: close"),
                "Connection: upgrade",
            ),
            (
                good.replace(
                    "\r\n\r\n",
                    "\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n",
                ),
                "extension",
            ),
            (
                good.replace("\r\n\r\n", "\r\nSec-WebSocket-Protocol: chat\r\n\r\n"),
                "subprotocol",
            ),
            ("SSH-2.0-OpenSSH_9.6\r\n\r\n".to_string(), "not HTTP/1.1"),
            (
                format!("HTTP/1.1 101 OK\r\n{}\r\n", "X: y\r\n".repeat(40)),
                "over 32 header fields",
            ),
            (
                format!("HTTP/1.1 101 OK\r\nX: {}", "y".repeat(MAX_HEAD)),
                "over 16 KiB",
            ),
        ];
        for (answer, why) in cases {
            match check_answer(answer.as_bytes(), RFC_KEY) {
                Err(HandshakeFail::Violation(v)) => assert!(v.contains(why), "{why}: {v}"),
                other => panic!("{why}: {other:?}"),
            }
        }
    }
}
