//! A mix of request kinds: instead of one request repeated, each send draws
//! a kind by weight (`db` 60, `queries` 30, `update` 10) from the worker's
//! seeded generator. [`Mix::new`] holds the rules of a mix (at least one
//! kind, names unique and printable, weights above zero); front ends (the
//! mix file, `shootout_mix`) name where a broken rule was written. The
//! engine encodes each kind once around its path [`Template`]
//! (`crate::request`), so a send only copies bytes and writes the drawn
//! integers.

use crate::expect::Expect;
use crate::request_spec::RequestSpec;
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
    /// What this kind's responses must look like; None: the run's
    /// expectations (`Plan::expect`).
    pub expect: Option<Expect>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, weight: u32, path: &str) -> RequestKind {
        RequestKind {
            name: name.into(),
            weight,
            path: Template::parse(path).unwrap(),
            request: RequestSpec::default(),
            expect: None,
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
}
