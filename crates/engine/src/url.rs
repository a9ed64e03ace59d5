//! The syntax of a load's URL, checked strictly before anything is resolved
//! or sent: `http[s]://host[:port][/path][?query][#fragment]`, or `ws[s]://`
//! alike for a WebSocket load (RFC 6455 §3: its upgrade is an HTTP/1.1
//! request to the same target, over TLS for `wss://`). The path and
//! query become the request target verbatim, so every byte RFC 3986 does not
//! allow there (a CR or LF would inject a header, a space would break the
//! request line, RFC 9112 §3.2) is refused with its position rather than
//! sent or silently encoded. The fragment is dropped, as clients do: it is
//! never sent. Credentials (`user:pass@`) are refused: shootout would not
//! send them, and a URL is no place for a password.

/// A URL's parts, syntax checked; the host is not yet resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parts<'a> {
    /// The URL without its fragment.
    pub url: &'a str,
    /// `host[:port]` as written: the Host header.
    pub authority: &'a str,
    /// The host, brackets kept for an IPv6 literal.
    pub host: &'a str,
    pub port: u16,
    /// `https://` or `wss://`: spoken over TLS (port 443 unless given).
    pub tls: bool,
    /// `ws://` or `wss://`: a WebSocket load.
    pub websocket: bool,
    /// The request target: the path (at least `/`) and query.
    pub target: String,
}

/// Why a URL or request target is refused; the text is the reason that
/// `PlanError::Url` and the front ends show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// A byte that is no visible ASCII (a CR, LF, space, control or
    /// non-ASCII character), anywhere in the URL.
    #[error("{} at byte {at}{}", describe(*.c), ENCODE_HINT)]
    Invisible { c: char, at: usize },
    #[error("expected a URL starting with http:// or https:// (or ws:// or wss:// for WebSocket)")]
    Scheme,
    #[error(
        "credentials in the URL (user:password@) are not supported; \
         send them as a header instead, e.g. -H 'Authorization: Basic …'"
    )]
    Credentials,
    #[error("missing host")]
    MissingHost,
    #[error("bad host or port")]
    HostOrPort,
    #[error("a '#' starts a fragment, which is never sent; percent-encode it as %23")]
    Fragment,
    #[error(
        "'%' at byte {at} does not start a percent-escape such as %20 (write a literal % as %25)"
    )]
    BadEscape { at: usize },
    /// A visible byte RFC 3986 does not allow in a path or query.
    #[error("'{c}' at byte {at}{}", ENCODE_HINT)]
    NotAllowed { c: char, at: usize },
}

/// Splits and checks `url`; the error says why, for `PlanError::Url`.
pub(crate) fn split(url: &str) -> Result<Parts<'_>, UrlError> {
    if let Some((at, c)) = url.char_indices().find(|(_, c)| !c.is_ascii_graphic()) {
        return Err(UrlError::Invisible { c, at });
    }
    let schemes = [
        ("http://", false, false),
        ("https://", true, false),
        ("ws://", false, true),
        ("wss://", true, true),
    ];
    let Some((rest, tls, websocket)) = schemes
        .iter()
        .find_map(|&(scheme, tls, ws)| Some((url.strip_prefix(scheme)?, tls, ws)))
    else {
        return Err(UrlError::Scheme);
    };
    let scheme_len = url.len() - rest.len();
    let url = &url[..url.find('#').unwrap_or(url.len())];
    let rest = &rest[..rest.find('#').unwrap_or(rest.len())];
    let (authority, target) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    if authority.contains('@') {
        return Err(UrlError::Credentials);
    }
    if authority.is_empty() {
        return Err(UrlError::MissingHost);
    }
    let default_port = if tls { 443 } else { 80 };
    let (host, port) = split_host_port(authority, default_port).ok_or(UrlError::HostOrPort)?;
    check_target(&target, scheme_len + authority.len())?;
    Ok(Parts {
        url,
        authority,
        host,
        port,
        tls,
        websocket,
        target,
    })
}

/// Checks a request target (`/path?query`) as [`split`] checks a URL's, for
/// front ends that take a path apart from a host (a study's `path`), so
/// they can refuse it where it is written. Positions count from its start.
pub fn check_request_target(target: &str) -> Result<(), UrlError> {
    if let Some((at, c)) = target.char_indices().find(|(_, c)| !c.is_ascii_graphic()) {
        return Err(UrlError::Invisible { c, at });
    }
    if target.contains('#') {
        return Err(UrlError::Fragment);
    }
    check_target(target, 0)
}

const ENCODE_HINT: &str =
    ": a request target may hold only the characters of RFC 3986; percent-encode it (e.g. %20)";

/// Names a character no URL may hold as written.
fn describe(c: char) -> String {
    match c {
        '\r' => "a carriage return (CR)".into(),
        '\n' => "a line feed (LF)".into(),
        ' ' => "a space".into(),
        c if c.is_ascii_control() => format!("a control character (0x{:02X})", c as u32),
        c => format!("a non-ASCII character '{c}'"),
    }
}

/// Every byte of the path and query is one RFC 3986 allows there (`pchar`,
/// `/` and `?`), and each `%` starts a two-hex-digit escape. `offset` is
/// where the target starts in the URL, for the message.
fn check_target(target: &str, offset: usize) -> Result<(), UrlError> {
    let b = target.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let pos = offset + i;
        if c == b'%' {
            let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
            if !(hex(i + 1) && hex(i + 2)) {
                return Err(UrlError::BadEscape { at: pos });
            }
        } else if !allowed_in_target(c) {
            return Err(UrlError::NotAllowed {
                c: c as char,
                at: pos,
            });
        }
    }
    Ok(())
}

/// unreserved / sub-delims / ":" / "@" / "/" / "?" (RFC 3986 §3.3, §3.4).
fn allowed_in_target(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&c)
}

fn split_host_port(authority: &str, default_port: u16) -> Option<(&str, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &authority[..end + 2];
        let port = match &rest[end + 1..] {
            "" => default_port,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        let inside = &rest[..end];
        let v6 = inside
            .bytes()
            .all(|c| c.is_ascii_hexdigit() || b":.".contains(&c));
        return (v6 && !inside.is_empty()).then_some((host, port));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().ok()?),
        None => (authority, default_port),
    };
    // A registered name or an IPv4 address (RFC 3986 §3.2.2, no escapes).
    let name = host
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || b"-._~".contains(&c));
    (name && !host.is_empty()).then_some((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(url: &str) -> String {
        split(url).unwrap_err().to_string()
    }

    #[test]
    fn splits_what_clients_send() {
        let p = split("http://127.0.0.1:8080/json?x=1&y=%20").unwrap();
        assert_eq!((p.host, p.port), ("127.0.0.1", 8080));
        assert_eq!(p.target, "/json?x=1&y=%20");
        assert_eq!(p.authority, "127.0.0.1:8080");
        assert_eq!(split("http://localhost").unwrap().target, "/");
        assert_eq!(split("http://localhost?a=b").unwrap().target, "/?a=b");
        let v6 = split("http://[::1]:81/a:b@c;d=e,f").unwrap();
        assert_eq!(
            (v6.host, v6.port, v6.target.as_str()),
            ("[::1]", 81, "/a:b@c;d=e,f")
        );
    }

    #[test]
    fn https_defaults_to_port_443() {
        let p = split("https://localhost/json").unwrap();
        assert_eq!((p.host, p.port, p.tls), ("localhost", 443, true));
        let p = split("https://[::1]:8443?a=b").unwrap();
        assert_eq!(
            (p.host, p.port, p.target.as_str()),
            ("[::1]", 8443, "/?a=b")
        );
        assert!(!split("http://localhost/").unwrap().tls);
        assert!(why("https://127.0.0.1:9/a b").starts_with("a space at byte 21"));
        assert!(why("ftp://127.0.0.1/").contains("http:// or https://"));
    }

    #[test]
    fn websocket_schemes_are_http_and_https_with_a_flag() {
        let p = split("ws://127.0.0.1:9/ws?x=1").unwrap();
        assert_eq!((p.port, p.tls, p.websocket), (9, false, true));
        assert_eq!(p.target, "/ws?x=1");
        let p = split("wss://localhost/ws").unwrap();
        assert_eq!((p.port, p.tls, p.websocket), (443, true, true));
        assert!(!split("https://localhost/").unwrap().websocket);
        for url in ["ws://", "wss://", "ws:///ws"] {
            assert_eq!(why(url), "missing host", "{url}");
        }
    }

    #[test]
    fn the_fragment_is_dropped() {
        let p = split("http://127.0.0.1:9/page?q=1#section-2\"x{}").unwrap();
        assert_eq!(p.target, "/page?q=1");
        assert_eq!(p.url, "http://127.0.0.1:9/page?q=1");
        assert_eq!(split("http://127.0.0.1:9#top").unwrap().target, "/");
    }

    #[test]
    fn refuses_line_breaks_spaces_and_controls_by_position() {
        let e = why("http://127.0.0.1:9/a\r\nX-Injected: 1");
        assert!(e.starts_with("a carriage return (CR) at byte 20"), "{e}");
        assert!(why("http://127.0.0.1:9/a\nb").starts_with("a line feed (LF)"));
        assert!(why("http://127.0.0.1:9/a b").starts_with("a space at byte 20"));
        assert!(why("http://127.0.0.1:9/a\tb").contains("control character (0x09)"));
        assert!(why("http://127.0.0.1:9/\u{7f}").contains("(0x7F)"));
        assert!(why("http://127.0.0.1:9/café").contains("non-ASCII character 'é'"));
        // Even in the host (it becomes the Host header) and the fragment.
        assert!(why("http://127.0.0.1\r\n:9/").contains("(CR)"));
        assert!(why("http://127.0.0.1:9/#a\nb").contains("(LF)"));
    }

    #[test]
    fn refuses_bytes_rfc_3986_does_not_allow_in_a_target() {
        for (url, c) in [
            ("http://127.0.0.1:9/a\"b", '"'),
            ("http://127.0.0.1:9/<x>", '<'),
            ("http://127.0.0.1:9/a\\b", '\\'),
            ("http://127.0.0.1:9/?a[]=1", '['),
            ("http://127.0.0.1:9/{x}", '{'),
            ("http://127.0.0.1:9/a|b", '|'),
            ("http://127.0.0.1:9/a^b", '^'),
            ("http://127.0.0.1:9/a`b", '`'),
        ] {
            let e = why(url);
            assert!(e.starts_with(&format!("'{c}' at byte")), "{url}: {e}");
        }
        for bad in [
            "http://127.0.0.1:9/100%",
            "http://127.0.0.1:9/%zz",
            "http://127.0.0.1:9/%4",
        ] {
            assert!(why(bad).contains("percent-escape"), "{bad}");
        }
    }

    #[test]
    fn a_bare_target_is_checked_alike() {
        assert_eq!(check_request_target("/queries?queries=20"), Ok(()));
        let why = |t: &str| check_request_target(t).unwrap_err().to_string();
        assert!(why("/a b").starts_with("a space at byte 2"));
        assert!(why("/a\r\n").contains("(CR)"));
        assert!(why("/a#b").contains("fragment"));
        assert!(why("/100%").contains("percent-escape"));
    }

    #[test]
    fn refuses_credentials_and_bad_hosts() {
        for url in ["http://user:pw@127.0.0.1:9/", "http://user@localhost/"] {
            assert!(why(url).starts_with("credentials in the URL"), "{url}");
        }
        for url in [
            "http://127.0.0.1:99999/",
            "http://[::1",
            "http://[zz]:80/",
            "http://a,b:80/",
            "http://:80/",
            "http:///x",
        ] {
            assert!(split(url).is_err(), "{url}");
        }
    }
}

#[cfg(test)]
#[path = "url_props.rs"]
mod props;
