//! The one place a TLS failure becomes a sentence a user can act on:
//! rustls' error kinds (a refused certificate, an alert from the server, a
//! message that is not TLS) and the connection's own endings (closed or
//! silent during the handshake). The sentences are the keys of the
//! report's `tls.failures` and what `shootout load` prints when nothing
//! was served, so no rustls `Debug` form (`Other(OtherError(..))`) reaches
//! a user.

use rustls::{AlertDescription, CertificateError, Error, InvalidMessage};
use std::time::Duration;

/// What the sentence may rely on besides the error itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context {
    /// The server is verified against a `--cacert` file (else the system's
    /// trust store).
    pub ca_file: bool,
    /// A client certificate was sent when the server asked.
    pub client_cert: bool,
    /// The first byte the server sent, if any: a plain-text answer to a
    /// ClientHello starts with a printable ASCII one.
    pub first_byte: Option<u8>,
}

/// The sentence for a rustls error on a connection.
pub(crate) fn sentence(e: &Error, cx: Context) -> String {
    match e {
        Error::InvalidCertificate(c) => certificate(c, cx),
        Error::AlertReceived(alert) => alert_sentence(*alert, cx),
        Error::InvalidMessage(InvalidMessage::InvalidContentType) => not_tls(cx),
        Error::InvalidMessage(m) => format!(
            "the server sent a malformed TLS message ({})",
            words(&format!("{m:?}"))
        ),
        Error::NoCertificatesPresented => "the server presented no certificate".to_string(),
        Error::PeerIncompatible(p) => format!(
            "the server and shootout have nothing in common to speak TLS with ({})",
            words(&format!("{p:?}"))
        ),
        Error::PeerMisbehaved(p) => format!(
            "the server broke the TLS protocol ({})",
            words(&format!("{p:?}"))
        ),
        Error::DecryptError => "a TLS record from the server could not be decrypted".to_string(),
        Error::PeerSentOversizedRecord => "the server sent an oversized TLS record".to_string(),
        Error::NoApplicationProtocol => {
            "the server chose no protocol shootout offered (ALPN)".to_string()
        }
        Error::InappropriateMessage { .. } | Error::InappropriateHandshakeMessage { .. } => {
            "the server sent a TLS message out of order".to_string()
        }
        Error::General(why) => format!("TLS failed: {why}"),
        other => format!("TLS failed ({})", kind(other)),
    }
}

/// The kind of an error in words, for a sentence about something else
/// than the server's certificate: `bad encoding`.
pub(crate) fn kind(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(CertificateError::Other(other)) => words(&other.to_string()),
        Error::InvalidCertificate(c) => words(&format!("{c:?}")),
        other => words(&format!("{other:?}")),
    }
}

/// The server's answer to a ClientHello was no TLS record at all.
fn not_tls(cx: Context) -> String {
    match cx.first_byte {
        Some(b) if b.is_ascii_graphic() => {
            "this port does not speak TLS (the server answered in plain text; use http://)"
                .to_string()
        }
        Some(b) => format!(
            "this port does not speak TLS (the server answered with byte 0x{b:02x}, \
             which starts no TLS record)"
        ),
        None => "this port does not speak TLS (the server's answer is no TLS record)".to_string(),
    }
}

/// Why the server's certificate was refused.
fn certificate(c: &CertificateError, cx: Context) -> String {
    let untrusted = if cx.ca_file {
        "the server's certificate is not trusted: it was not issued by a CA of --cacert \
         (give its CA with --cacert, or --insecure)"
    } else {
        "the server's certificate is not trusted: give its CA with --cacert, or --insecure"
    };
    let why = match c {
        CertificateError::UnknownIssuer => return untrusted.to_string(),
        CertificateError::BadEncoding => "cannot be parsed",
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => "has expired",
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
            "is not valid yet (check this machine's clock)"
        }
        CertificateError::Revoked => "has been revoked",
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            "is not valid for the URL's host name"
        }
        CertificateError::BadSignature => "has a signature that does not verify",
        CertificateError::UnsupportedSignatureAlgorithmContext { .. }
        | CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "is signed with an algorithm shootout does not support"
        }
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
            "is not for server authentication (extended key usage)"
        }
        CertificateError::UnhandledCriticalExtension => {
            "has a critical extension shootout does not know"
        }
        CertificateError::Other(other) => {
            let name = other.to_string();
            return match name.as_str() {
                "CaUsedAsEndEntity" if !cx.ca_file => format!(
                    "{untrusted} (it is self-signed with CA:TRUE, as `openssl req -x509` \
                     makes it: give that very file with --cacert)"
                ),
                "CaUsedAsEndEntity" => "the server's certificate is a CA certificate (CA:TRUE) \
                     and none of --cacert's: give that very certificate with --cacert to trust \
                     it as is, or --insecure"
                    .to_string(),
                "UnsupportedCertVersion" => {
                    "the server's certificate is X.509 version 1, which cannot be verified: \
                     give it with --cacert to trust it as is, or --insecure"
                        .to_string()
                }
                _ => format!("the server's certificate was refused ({})", words(&name)),
            };
        }
        other => {
            return format!(
                "the server's certificate was refused ({})",
                words(&format!("{other:?}"))
            )
        }
    };
    format!("the server's certificate {why}")
}

/// What an alert from the server says.
fn alert_sentence(alert: AlertDescription, cx: Context) -> String {
    let name = alert_name(alert);
    let about_ours = matches!(
        alert,
        AlertDescription::BadCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied
    );
    match alert {
        _ if about_ours && cx.client_cert => format!(
            "the server rejected our client certificate (alert {name}): check that it is valid \
             and issued by a CA the server trusts"
        ),
        AlertDescription::CertificateRequired => format!(
            "the server requires a client certificate (alert {name}): give one with \
             --cert FILE --key FILE"
        ),
        _ if about_ours => format!(
            "the server refused the handshake over a certificate (alert {name}); \
             it may require a client certificate (--cert FILE --key FILE)"
        ),
        AlertDescription::HandshakeFailure | AlertDescription::InsufficientSecurity => format!(
            "the server refused the handshake (alert {name}): no TLS version, cipher suite or \
             signature scheme in common"
        ),
        AlertDescription::ProtocolVersion => format!(
            "the server refused the handshake (alert {name}): it speaks no TLS version shootout \
             does (1.2, 1.3)"
        ),
        AlertDescription::UnrecognisedName => {
            format!("the server does not serve the URL's host name (alert {name})")
        }
        AlertDescription::NoApplicationProtocol => {
            format!("the server speaks no protocol shootout offered (alert {name})")
        }
        _ => format!("the server ended the TLS session (alert {name})"),
    }
}

/// An alert as the RFCs spell it: `bad_certificate`.
fn alert_name(alert: AlertDescription) -> String {
    match alert {
        AlertDescription::UnknownCA => "unknown_ca".to_string(),
        AlertDescription::Unknown(n) => format!("number {n}"),
        other => words(&format!("{other:?}")).replace(' ', "_"),
    }
}

/// `UnsupportedCertVersion` as words: `unsupported cert version`.
fn words(name: &str) -> String {
    let name = name.split(['(', ' ', '{']).next().unwrap_or(name);
    let mut out = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            out.push(' ');
        }
        out.push(ch.to_ascii_lowercase());
    }
    out
}

/// The server accepted the connection and finished no handshake within
/// `timeout`.
pub(crate) fn silent(timeout: Duration) -> String {
    format!(
        "no TLS handshake completed within {:.1} s (--timeout): the server accepted the \
         connection and never answered the handshake",
        timeout.as_secs_f64()
    )
}

/// The run ended with the connection accepted and its handshake, never
/// completed by the server, still under way.
pub(crate) fn unfinished() -> String {
    "no TLS handshake completed before the run ended: the server accepted the connection \
     and never answered the handshake"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::OtherError;
    use std::sync::Arc;

    #[derive(Debug)]
    struct Named(&'static str);

    impl std::fmt::Display for Named {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Named {}

    fn other(name: &'static str) -> Error {
        Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(Named(name)))))
    }

    #[test]
    fn no_sentence_shows_a_debug_form() {
        let cx = Context::default();
        let errors = [
            other("CaUsedAsEndEntity"),
            other("UnsupportedCertVersion"),
            other("SomethingNew"),
            Error::InvalidCertificate(CertificateError::UnknownIssuer),
            Error::InvalidCertificate(CertificateError::Expired),
            Error::InvalidCertificate(CertificateError::NotValidForName),
            Error::AlertReceived(AlertDescription::BadCertificate),
            Error::AlertReceived(AlertDescription::Unknown(200)),
            Error::InvalidMessage(InvalidMessage::InvalidContentType),
            Error::InvalidMessage(InvalidMessage::MessageTooShort),
        ];
        for e in errors {
            let s = sentence(&e, cx);
            assert!(
                !s.contains("Other") && !s.contains("Error(") && !s.contains('{'),
                "{s}"
            );
        }
        assert_eq!(
            sentence(&other("SomethingNew"), cx),
            "the server's certificate was refused (something new)"
        );
        let crl = Error::InvalidCertRevocationList(rustls::CertRevocationListError::BadSignature);
        assert_eq!(
            sentence(&crl, cx),
            "TLS failed (invalid cert revocation list)"
        );
        assert_eq!(
            kind(&other("UnsupportedCertVersion")),
            "unsupported cert version"
        );
    }

    #[test]
    fn an_untrusted_certificate_says_what_to_give() {
        let e = Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let s = sentence(&e, Context::default());
        assert!(
            s.contains("not trusted: give its CA with --cacert, or --insecure"),
            "{s}"
        );
        let s = sentence(
            &e,
            Context {
                ca_file: true,
                ..Context::default()
            },
        );
        assert!(s.contains("not issued by a CA of --cacert"), "{s}");
    }

    #[test]
    fn alerts_about_our_certificate_name_it_only_when_one_was_sent() {
        let e = Error::AlertReceived(AlertDescription::UnknownCA);
        let sent = Context {
            client_cert: true,
            ..Context::default()
        };
        let s = sentence(&e, sent);
        assert!(
            s.starts_with("the server rejected our client certificate (alert unknown_ca)"),
            "{s}"
        );
        let s = sentence(
            &Error::AlertReceived(AlertDescription::CertificateExpired),
            sent,
        );
        assert!(s.contains("alert certificate_expired"), "{s}");
        let s = sentence(&e, Context::default());
        assert!(!s.contains("our client certificate"), "{s}");
    }

    #[test]
    fn a_plain_text_answer_is_a_port_without_tls() {
        let e = Error::InvalidMessage(InvalidMessage::InvalidContentType);
        let text = Context {
            first_byte: Some(b'H'),
            ..Context::default()
        };
        assert_eq!(
            sentence(&e, text),
            "this port does not speak TLS (the server answered in plain text; use http://)"
        );
        let binary = Context {
            first_byte: Some(0),
            ..Context::default()
        };
        assert!(sentence(&e, binary).contains("byte 0x00"));
    }
}
