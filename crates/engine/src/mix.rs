//! A mix of request kinds: instead of one request repeated, each send draws
//! a kind by weight (`db` 60, `queries` 30, `update` 10) from the worker's
//! seeded generator. [`Mix::new`] holds the rules of a mix (at least one
//! kind, names unique and printable, weights above zero); front ends (the
//! mix file, `shootout_mix`) name where a broken rule was written. The
//! engine encodes each kind once around its path [`Template`], so a send
//! only copies bytes and writes the drawn integers.

use crate::plan::{Endpoint, RequestSpec};
use crate::template::Template;

/// One kind of request in a mix.
#[derive(Debug, Clone)]
pub struct RequestKind {
    /// Shown in every output and named by per-kind rules (`db.p99<=20ms`).
    pub name: String,
    /// Relative share of the sends.
    pub weight: u32,
    /// The request target, with `{a..b}` ranges.
    pub path: Template,
    /// Method, headers and body (an empty method is GET).
    pub request: RequestSpec,
}

/// A validated mix: made only by [`Mix::new`].
#[derive(Debug, Clone)]
pub struct Mix {
    kinds: Vec<RequestKind>,
}

/// Most kinds a mix may hold (a kind is a `u16` in flight).
pub const MAX_KINDS: usize = 1024;

/// A broken rule of a mix: the kind (by index) and key it concerns, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{key}: {reason}", index.map(|i| format!("request {}: ", i + 1)).unwrap_or_default())]
pub struct MixError {
    /// The kind, 0-based; None for the mix as a whole.
    pub index: Option<usize>,
    pub key: &'static str,
    pub reason: String,
}

impl Mix {
    pub fn new(kinds: Vec<RequestKind>) -> Result<Mix, MixError> {
        let whole = |reason: String| MixError {
            index: None,
            key: "request",
            reason,
        };
        if kinds.is_empty() {
            return Err(whole("a mix needs at least one [[request]]".into()));
        }
        if kinds.len() > MAX_KINDS {
            return Err(whole(format!("at most {MAX_KINDS} kinds")));
        }
        for (i, k) in kinds.iter().enumerate() {
            let bad = |key, reason: String| MixError {
                index: Some(i),
                key,
                reason,
            };
            let name_ok = k
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b));
            if k.name.is_empty() || !name_ok {
                return Err(bad(
                    "name",
                    format!(
                        "'{}' is not a name: use letters, digits, '_' or '-'",
                        k.name
                    ),
                ));
            }
            if kinds[..i].iter().any(|o| o.name == k.name) {
                return Err(bad("name", format!("'{}' names two requests", k.name)));
            }
            if k.weight == 0 {
                return Err(bad("weight", "must be at least 1".into()));
            }
        }
        Ok(Mix { kinds })
    }

    pub fn kinds(&self) -> &[RequestKind] {
        &self.kinds
    }

    /// The position of the kind called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.kinds.iter().position(|k| k.name == name)
    }
}

/// One kind encoded around its path: `before` (method and space), the
/// path, then `after` (the version, headers and body).
#[derive(Debug)]
pub(crate) struct EncodedKind {
    before: Vec<u8>,
    path: Template,
    after: Vec<u8>,
    pub is_head: bool,
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
    pub fn new(mix: &Mix, endpoint: &Endpoint, keepalive: bool) -> EncodedMix {
        let kinds = mix
            .kinds
            .iter()
            .map(|k| {
                // The request line is `METHOD SP path SP HTTP/1.1`: encoding
                // with an empty path leaves the cut right after the first space.
                let bare = Endpoint {
                    path: String::new(),
                    ..endpoint.clone()
                };
                let encoded = crate::request::encode(&bare, &k.request, keepalive);
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
                }
            })
            .collect();
        let cumulative = mix
            .kinds
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, weight: u32, path: &str) -> RequestKind {
        RequestKind {
            name: name.into(),
            weight,
            path: Template::parse(path).unwrap(),
            request: RequestSpec::default(),
        }
    }

    #[test]
    fn rules_name_the_kind_and_key() {
        let e = Mix::new(vec![kind("a", 1, "/"), kind("b", 0, "/")]).unwrap_err();
        assert_eq!((e.index, e.key), (Some(1), "weight"));
        let e = Mix::new(vec![kind("a", 1, "/"), kind("a", 1, "/")]).unwrap_err();
        assert_eq!((e.index, e.key), (Some(1), "name"));
        let e = Mix::new(vec![kind("a.b", 1, "/")]).unwrap_err();
        assert_eq!(e.key, "name", "a dot would make db.p99 ambiguous");
        assert_eq!(Mix::new(vec![]).unwrap_err().index, None);
    }

    #[test]
    fn kinds_encode_around_their_path_and_draw_by_weight() {
        let mut post = kind("u", 1, "/u?n={3..3}");
        post.request.method = "POST".into();
        post.request.body = b"x".to_vec();
        let mix = Mix::new(vec![kind("a", 3, "/a"), post]).unwrap();
        let endpoint = Endpoint::parse("http://127.0.0.1:9/").unwrap();
        let enc = EncodedMix::new(&mix, &endpoint, true);
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
}
