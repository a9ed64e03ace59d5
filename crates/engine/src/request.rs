//! Pre-encodes the one HTTP/1.1 request a run sends, so the hot path only
//! writes a ready byte slice.

use crate::plan::{Endpoint, RequestSpec};

/// The encoded request plus what the parser must know about it.
#[derive(Debug, Clone)]
pub(crate) struct EncodedRequest {
    pub bytes: Vec<u8>,
    /// HEAD responses carry no body whatever their headers say.
    pub is_head: bool,
}

pub(crate) fn encode(endpoint: &Endpoint, spec: &RequestSpec, keepalive: bool) -> EncodedRequest {
    let method = if spec.method.is_empty() {
        "GET"
    } else {
        spec.method.as_str()
    };
    let has = |name: &str| {
        spec.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case(name))
    };
    let mut head = format!("{method} {} HTTP/1.1\r\n", endpoint.path);
    if !has("host") {
        head.push_str(&format!("Host: {}\r\n", endpoint.host_header));
    }
    for (k, v) in &spec.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !has("content-length")
        && (!spec.body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH"))
    {
        head.push_str(&format!("Content-Length: {}\r\n", spec.body.len()));
    }
    if !has("connection") && !keepalive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&spec.body);
    EncodedRequest {
        bytes,
        is_head: method.eq_ignore_ascii_case("HEAD"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_post_with_body_and_close() {
        let t = Endpoint::parse("http://127.0.0.1:8080/test/simple").unwrap();
        let spec = RequestSpec {
            method: "POST".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: b"{\"payload\":\"x\"}".to_vec(),
        };
        let r = encode(&t, &spec, false);
        let text = String::from_utf8(r.bytes).unwrap();
        assert_eq!(
            text,
            "POST /test/simple HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n\
             Content-Length: 15\r\nConnection: close\r\n\r\n{\"payload\":\"x\"}"
        );
        assert!(!r.is_head);
    }

    #[test]
    fn get_has_no_length() {
        let t = Endpoint::parse("http://localhost:1/").unwrap();
        let r = encode(&t, &RequestSpec::default(), true);
        assert_eq!(r.bytes, b"GET / HTTP/1.1\r\nHost: localhost:1\r\n\r\n");
    }
}
