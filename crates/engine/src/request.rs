//! Pre-encodes the one HTTP/1.1 request a run sends, so the hot path only
//! writes a ready byte slice; a mix's kinds are encoded once each around
//! their path, which a send expands into a reusable buffer.
//!
//! In a worker a mix is a [`Mixed`]: each request taken draws its kind from
//! the worker's seeded generator and is written into its connection's own
//! [`Wire`] (reused, so no request allocates once each has grown to its
//! longest). A mix is never pipelined (the plan refuses it), so a
//! connection's wire holds exactly its one request in flight. Without a mix
//! the worker has no `Mixed` and every connection shares the run's one wire.

use crate::conn::Wire;
use crate::expect::Expect;
use crate::mix::Mix;
use crate::plan::Endpoint;
use crate::request_spec::RequestSpec;
use crate::template::Template;
use std::sync::Arc;

/// The encoded request plus what the parser must know about it.
#[derive(Debug, Clone)]
pub(crate) struct EncodedRequest {
    pub bytes: Vec<u8>,
    /// HEAD responses carry no body whatever their headers say.
    pub is_head: bool,
}

/// One kind encoded around its path: `before` (method and space), the
/// path, then `after` (the version, headers and body).
#[derive(Debug)]
pub(crate) struct EncodedKind {
    before: Vec<u8>,
    path: Template,
    after: Vec<u8>,
    pub is_head: bool,
    /// The kind's expectations, or the run's.
    pub expect: Arc<Expect>,
}

impl EncodedKind {
    /// Writes one request of this kind into `out` (cleared first), drawing
    /// its ranges from `rng`; `out` keeps its memory across requests.
    pub fn write(&self, out: &mut Vec<u8>, rng: &mut fastrand::Rng) {
        out.clear();
        out.extend_from_slice(&self.before);
        self.path.expand(out, rng);
        out.extend_from_slice(&self.after);
    }
}

/// The mix as the workers use it: each kind encoded, and the cumulative
/// weights to draw from.
#[derive(Debug)]
pub(crate) struct EncodedMix {
    pub kinds: Vec<EncodedKind>,
    cumulative: Vec<u64>,
}

impl EncodedMix {
    /// `expect`: the run's expectations, for the kinds that have none.
    pub fn new(mix: &Mix, endpoint: &Endpoint, keepalive: bool, expect: &Expect) -> EncodedMix {
        let run_expect = Arc::new(expect.clone());
        let kinds = mix
            .kinds()
            .iter()
            .map(|k| {
                // The request line is `METHOD SP path SP HTTP/1.1`: encoding
                // with an empty path leaves the cut right after the first space.
                let bare = Endpoint {
                    path: String::new(),
                    ..endpoint.clone()
                };
                let encoded = encode(&bare, &k.request, keepalive);
                let cut = encoded
                    .bytes
                    .iter()
                    .position(|&b| b == b' ')
                    .map_or(0, |p| p + 1);
                EncodedKind {
                    before: encoded.bytes[..cut].to_vec(),
                    path: k.path.clone(),
                    after: encoded.bytes[cut..].to_vec(),
                    is_head: encoded.is_head,
                    expect: k
                        .expect
                        .as_ref()
                        .map_or_else(|| run_expect.clone(), |e| Arc::new(e.clone())),
                }
            })
            .collect();
        let cumulative = mix
            .kinds()
            .iter()
            .scan(0u64, |sum, k| {
                *sum += u64::from(k.weight);
                Some(*sum)
            })
            .collect();
        EncodedMix { kinds, cumulative }
    }

    /// Draws a kind by weight.
    pub fn draw(&self, rng: &mut fastrand::Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(1);
        let x = rng.u64(..total);
        self.cumulative.partition_point(|&c| c <= x)
    }
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

/// A worker's mix: the kinds, its generator, and one wire per connection.
#[derive(Debug)]
pub(crate) struct Mixed<'a> {
    kinds: &'a EncodedMix,
    rng: fastrand::Rng,
    wires: Vec<Wire>,
}

impl<'a> Mixed<'a> {
    /// Draws from `rng` (the worker's request stream) for `conns` connections.
    pub fn new(kinds: &'a EncodedMix, rng: fastrand::Rng, conns: usize) -> Mixed<'a> {
        Mixed {
            kinds,
            rng,
            wires: (0..conns).map(|_| Wire::empty()).collect(),
        }
    }

    /// The bytes connection `idx` writes.
    pub fn wire(&self, idx: usize) -> &Wire {
        &self.wires[idx]
    }

    /// Draws the kind of connection `idx`'s next request and writes the
    /// request into its wire. Returns the kind's index and encoding.
    pub fn draw(&mut self, idx: usize) -> (u16, &EncodedKind) {
        let kind = self.kinds.draw(&mut self.rng);
        let encoded = &self.kinds.kinds[kind];
        let wire = &mut self.wires[idx];
        encoded.write(&mut wire.batch, &mut self.rng);
        wire.len = wire.batch.len();
        // A mix has at most MAX_KINDS kinds, so the index fits.
        (kind as u16, encoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, weight: u32, path: &str) -> crate::RequestKind {
        crate::RequestKind {
            name: name.into(),
            weight,
            path: Template::parse(path).unwrap(),
            request: RequestSpec::default(),
            expect: None,
        }
    }

    #[test]
    fn kinds_encode_around_their_path_and_draw_by_weight() {
        let mut post = kind("u", 1, "/u?n={3..3}");
        post.request.method = "POST".into();
        post.request.body = b"x".to_vec();
        let mix = Mix::new(vec![kind("a", 3, "/a"), post]).unwrap();
        let endpoint = Endpoint::parse("http://127.0.0.1:9/").unwrap();
        let enc = EncodedMix::new(&mix, &endpoint, true, &Expect::default());
        let mut rng = fastrand::Rng::with_seed(7);
        let mut out = Vec::new();
        enc.kinds[1].write(&mut out, &mut rng);
        assert_eq!(
            out,
            b"POST /u?n=3 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 1\r\n\r\nx"
        );
        enc.kinds[0].write(&mut out, &mut rng);
        assert_eq!(out, b"GET /a HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n");
        let n = 40_000;
        let firsts = (0..n).filter(|_| enc.draw(&mut rng) == 0).count();
        // 3/4 of the draws, within 5 standard deviations (sd = 87).
        assert!((firsts as f64 - 30_000.0).abs() < 435.0, "{firsts}");
    }

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
