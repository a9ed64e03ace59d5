//! HTTP/2 on the wire, without I/O: the one request a run sends, its
//! HEADERS encoded once into a ready frame whose stream id is patched per
//! stream and its body cut into DATA frames as flow control allows
//! ([`H2Request`]), the client's connection preface, and the frame header
//! ([`FrameHead`]) that the session (`h2_conn`) reads. HPACK is the
//! `httlib-hpack` crate's; everything here is RFC 9113's fixed layouts.
//!
//! The request's header block is encoded without indexing (static-table
//! matches, else literals), so every stream's block is the same bytes
//! whatever the server's table holds: the hot path copies a template instead of running
//! an encoder. What this costs (a few dozen literal bytes per request, where
//! h2load sends indexed ones) is in `bench/cpu_per_request.py --http2`.

use crate::request_spec::RequestSpec;

pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub(crate) const HEAD_LEN: usize = 9;
/// The frame size every peer accepts (SETTINGS_MAX_FRAME_SIZE's floor).
pub(crate) const MIN_MAX_FRAME: usize = 16_384;
/// Our receive windows: the largest allowed, so a stream never waits for
/// us; the connection's is topped up as it is consumed.
pub(crate) const WINDOW: u32 = (1 << 31) - 1;
/// The connection window is topped up once this much was consumed.
pub(crate) const TOP_UP_AT: u32 = 1 << 30;

pub(crate) mod kind {
    pub const DATA: u8 = 0;
    pub const HEADERS: u8 = 1;
    pub const RST_STREAM: u8 = 3;
    pub const SETTINGS: u8 = 4;
    pub const PUSH_PROMISE: u8 = 5;
    pub const PING: u8 = 6;
    pub const GOAWAY: u8 = 7;
    pub const WINDOW_UPDATE: u8 = 8;
    pub const CONTINUATION: u8 = 9;
}

pub(crate) mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// The SETTINGS parameters the session reads or sends.
pub(crate) mod setting {
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
}

/// The error codes the session sends (RFC 9113 §7).
pub(crate) mod code {
    pub const PROTOCOL_ERROR: u32 = 0x1;
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    pub const CANCEL: u32 = 0x8;
}

/// A frame's 9-byte header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameHead {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl FrameHead {
    /// Reads the header at the start of `b` (at least [`HEAD_LEN`] bytes).
    pub fn parse(b: &[u8]) -> FrameHead {
        FrameHead {
            len: (usize::from(b[0]) << 16) | (usize::from(b[1]) << 8) | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
        }
    }
}

/// Appends a frame header.
pub(crate) fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    out.extend_from_slice(&len[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a whole frame.
pub(crate) fn put_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    put_head(out, payload.len(), kind, flags, stream);
    out.extend_from_slice(payload);
}

/// The client's first bytes: the preface, SETTINGS (no push, the largest
/// stream window) and a WINDOW_UPDATE opening the connection's window as wide.
pub(crate) fn put_preface(out: &mut Vec<u8>) {
    out.extend_from_slice(PREFACE);
    let mut settings = Vec::with_capacity(12);
    for (id, value) in [
        (setting::ENABLE_PUSH, 0),
        (setting::INITIAL_WINDOW_SIZE, WINDOW),
    ] {
        settings.extend_from_slice(&id.to_be_bytes());
        settings.extend_from_slice(&value.to_be_bytes());
    }
    put_frame(out, kind::SETTINGS, 0, 0, &settings);
    put_window_update(out, 0, WINDOW - 65_535);
}

/// RST_STREAM: we end `stream` with `code`.
pub(crate) fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_frame(out, kind::RST_STREAM, 0, stream, &code.to_be_bytes());
}

/// GOAWAY with `code`: the server opens no streams, so the last one we
/// processed is 0.
pub(crate) fn put_goaway(out: &mut Vec<u8>, code: u32) {
    put_head(out, 8, kind::GOAWAY, 0, 0);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

pub(crate) fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_frame(
        out,
        kind::WINDOW_UPDATE,
        0,
        stream,
        &increment.to_be_bytes(),
    );
}

/// Why the run's request cannot go over HTTP/2 (see [`H2Request::new`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum H2RequestError {
    #[error(
        "the request's headers take {bytes} bytes encoded; over HTTP/2 at most {}",
        MIN_MAX_FRAME
    )]
    Headers { bytes: usize },
}

/// The run's request over HTTP/2: its HEADERS frame, with the stream id
/// left to patch, and its body, which goes out in DATA frames as the
/// session's flow control lets it (`h2_flow`).
#[derive(Debug, Clone)]
pub(crate) struct H2Request {
    headers: Vec<u8>,
    body: Vec<u8>,
}

impl H2Request {
    /// Encodes the request, or says why it cannot go over HTTP/2 here: a
    /// header block over one frame's size (16 KiB) would need CONTINUATION
    /// frames, which this engine does not send. A body of any size is cut
    /// into DATA frames.
    pub fn new(target: &Target<'_>, spec: &RequestSpec) -> Result<H2Request, H2RequestError> {
        let block = header_block(target, spec);
        if block.len() > MIN_MAX_FRAME {
            return Err(H2RequestError::Headers { bytes: block.len() });
        }
        let mut headers = Vec::with_capacity(HEAD_LEN + block.len());
        let end = if spec.body.is_empty() {
            flag::END_STREAM
        } else {
            0
        };
        put_frame(
            &mut headers,
            kind::HEADERS,
            flag::END_HEADERS | end,
            0,
            &block,
        );
        Ok(H2Request {
            headers,
            body: spec.body.clone(),
        })
    }

    /// The body's length: what a stream takes of the send windows.
    pub fn body_len(&self) -> u32 {
        u32::try_from(self.body.len()).unwrap_or(u32::MAX)
    }

    /// Appends the HEADERS frame for `stream` (it ends the stream when
    /// there is no body).
    pub fn put_headers(&self, out: &mut Vec<u8>, stream: u32) {
        let at = out.len();
        out.extend_from_slice(&self.headers);
        out[at + 5..at + HEAD_LEN].copy_from_slice(&stream.to_be_bytes());
    }

    /// Appends one DATA frame for `stream` carrying `len` body bytes from
    /// `from`; the last one ends the stream.
    pub fn put_data(&self, out: &mut Vec<u8>, stream: u32, from: usize, len: usize) {
        let end = if from + len == self.body.len() {
            flag::END_STREAM
        } else {
            0
        };
        put_head(out, len, kind::DATA, end, stream);
        out.extend_from_slice(&self.body[from..from + len]);
    }
}

/// Where the request goes: the URL's parts an HTTP/2 request carries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub tls: bool,
    /// `host[:port]`, the `:authority` unless a Host header is given.
    pub authority: &'a str,
    pub path: &'a str,
}

/// The HPACK block of the request's pseudo-headers and headers. HTTP/2
/// forbids connection-specific headers, so `Connection` (and the like)
/// given with -H are left out; `Host` becomes `:authority`.
fn header_block(endpoint: &Target<'_>, spec: &RequestSpec) -> Vec<u8> {
    let method = if spec.method.is_empty() {
        "GET"
    } else {
        spec.method.as_str()
    };
    let scheme = if endpoint.tls { "https" } else { "http" };
    let given = |name: &str| {
        spec.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let authority = given("host").unwrap_or(endpoint.authority);
    let mut headers: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b":method".to_vec(), method.as_bytes().to_vec()),
        (b":scheme".to_vec(), scheme.as_bytes().to_vec()),
        (b":path".to_vec(), endpoint.path.as_bytes().to_vec()),
        (b":authority".to_vec(), authority.as_bytes().to_vec()),
    ];
    const HOP: [&str; 6] = [
        "host",
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
    ];
    for (k, v) in &spec.headers {
        if !HOP.iter().any(|h| k.eq_ignore_ascii_case(h)) {
            headers.push((k.to_ascii_lowercase().into_bytes(), v.as_bytes().to_vec()));
        }
    }
    if given("content-length").is_none()
        && (!spec.body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH"))
    {
        headers.push((
            b"content-length".to_vec(),
            spec.body.len().to_string().into_bytes(),
        ));
    }
    let mut encoder = httlib_hpack::Encoder::with_dynamic_size(0);
    let mut block = Vec::new();
    for (name, value) in headers {
        // Only a name longer than HPACK's integer limit could fail: none here.
        let _ = encoder.encode(
            (name, value, httlib_hpack::Encoder::BEST_FORMAT),
            &mut block,
        );
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template decodes back to the request, and each stream's copy
    /// carries its own id in every frame.
    #[test]
    fn request_frames_decode_and_carry_the_stream_id() {
        let endpoint = Target {
            tls: true,
            authority: "localhost:8443",
            path: "/a?b=1",
        };
        let spec = RequestSpec {
            method: "POST".into(),
            headers: vec![
                ("Connection".into(), "close".into()),
                ("X-Thing".into(), "v".into()),
            ],
            body: b"hello".to_vec(),
        };
        let req = H2Request::new(&endpoint, &spec).unwrap();
        let mut out = Vec::new();
        req.put_headers(&mut out, 1);
        let one = out.len();
        req.put_headers(&mut out, 3);
        req.put_data(&mut out, 3, 0, 2);
        req.put_data(&mut out, 3, 2, 3);
        let second = &out[one..];
        let head = FrameHead::parse(second);
        assert_eq!((head.kind, head.stream), (kind::HEADERS, 3));
        assert_eq!(head.flags, flag::END_HEADERS);
        let block = &second[HEAD_LEN..HEAD_LEN + head.len];
        let mut decoded = Vec::new();
        httlib_hpack::Decoder::default()
            .decode(&mut block.to_vec(), &mut decoded)
            .unwrap();
        let text: Vec<String> = decoded
            .iter()
            .map(|(k, v, _)| {
                format!(
                    "{}={}",
                    String::from_utf8_lossy(k),
                    String::from_utf8_lossy(v)
                )
            })
            .collect();
        assert_eq!(
            text,
            [
                ":method=POST",
                ":scheme=https",
                ":path=/a?b=1",
                ":authority=localhost:8443",
                "x-thing=v",
                "content-length=5"
            ]
        );
        // The body in two DATA frames: only the last ends the stream.
        let data = &second[HEAD_LEN + head.len..];
        let first = FrameHead::parse(data);
        assert_eq!((first.kind, first.stream, first.len), (kind::DATA, 3, 2));
        assert_eq!(first.flags, 0);
        assert_eq!(&data[HEAD_LEN..HEAD_LEN + 2], b"he");
        let last = FrameHead::parse(&data[HEAD_LEN + 2..]);
        assert_eq!((last.kind, last.stream, last.len), (kind::DATA, 3, 3));
        assert_eq!(last.flags, flag::END_STREAM);
        assert_eq!(&data[2 * HEAD_LEN + 2..], b"llo");
    }

    #[test]
    fn large_bodies_are_taken_and_oversized_headers_refused() {
        let endpoint = Target {
            tls: false,
            authority: "127.0.0.1:1",
            path: "/",
        };
        let mut spec = RequestSpec {
            method: "POST".into(),
            headers: vec![],
            body: vec![b'x'; 4 * MIN_MAX_FRAME],
        };
        let req = H2Request::new(&endpoint, &spec).unwrap();
        assert_eq!(req.body_len(), 4 * MIN_MAX_FRAME as u32);
        spec.headers
            .push(("X-Big".into(), "v".repeat(MIN_MAX_FRAME + 1)));
        let why = H2Request::new(&endpoint, &spec).unwrap_err().to_string();
        assert!(why.contains("at most 16384"), "{why}");
    }
}
