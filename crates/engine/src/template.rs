//! A request target with placeholders: `/queries?queries={1..20}` sends a
//! uniform random integer from 1 to 20 (both included) in each request. A
//! template is parsed once; the worker expands it into a reusable buffer,
//! writing the integers' digits itself, so a request costs no allocation.
//! A request target cannot hold a brace itself, so braces only ever mark ranges.

use std::fmt;

/// One piece of a template: literal bytes, or a range to draw from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Range { low: u64, high: u64 },
}

/// A parsed request target; [`Template::parse`] checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    text: String,
    parts: Vec<Part>,
}

/// Why a template is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("'{{' at byte {0} has no closing '}}': write a range such as {{1..20}}")]
    Unclosed(usize),
    #[error("'{{{0}}}' is not a range: write {{LOW..HIGH}} with whole numbers, e.g. {{1..20}}")]
    NotARange(String),
    #[error("'{{{low}..{high}}}' is empty: the low end must not be above the high end")]
    Empty { low: u64, high: u64 },
    #[error("a '}}' at byte {0} closes no range")]
    LoneBrace(usize),
    #[error("a path must start with '/'")]
    NoLeadingSlash,
    /// What the template expands to is no request target.
    #[error(transparent)]
    Target(#[from] crate::url::UrlError),
}

impl Template {
    /// Parses `text` and checks that what it expands to is a request target
    /// (every range at its low end stands for any value: digits only).
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = Vec::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'{' => {
                    let close = text[i..].find('}').ok_or(TemplateError::Unclosed(i))? + i;
                    let range = parse_range(&text[i + 1..close])?;
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    parts.push(range);
                    i = close + 1;
                }
                b'}' => return Err(TemplateError::LoneBrace(i)),
                b => {
                    literal.push(b);
                    i += 1;
                }
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        let template = Template {
            text: text.to_string(),
            parts,
        };
        let mut low = Vec::new();
        template.expand_with(&mut low, |low, _| low);
        let low = String::from_utf8_lossy(&low);
        if !low.starts_with('/') {
            return Err(TemplateError::NoLeadingSlash);
        }
        crate::url::check_request_target(&low)?;
        Ok(template)
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The ranges, in order, as (low, high).
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.parts.iter().filter_map(|p| match p {
            Part::Range { low, high } => Some((*low, *high)),
            Part::Literal(_) => None,
        })
    }

    /// Appends one expansion to `out`, drawing each range from `rng`.
    pub(crate) fn expand(&self, out: &mut Vec<u8>, rng: &mut fastrand::Rng) {
        self.expand_with(out, |low, high| rng.u64(low..=high));
    }

    fn expand_with(&self, out: &mut Vec<u8>, mut draw: impl FnMut(u64, u64) -> u64) {
        for part in &self.parts {
            match part {
                Part::Literal(b) => out.extend_from_slice(b),
                Part::Range { low, high } => push_decimal(out, draw(*low, *high)),
            }
        }
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn parse_range(inner: &str) -> Result<Part, TemplateError> {
    let bad = || TemplateError::NotARange(inner.to_string());
    let (low, high) = inner.split_once("..").ok_or_else(bad)?;
    let number = |s: &str| {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse::<u64>().map_err(|_| bad())
    };
    let (low, high) = (number(low)?, number(high)?);
    if low > high {
        return Err(TemplateError::Empty { low, high });
    }
    Ok(Part::Range { low, high })
}

/// Appends `v` in decimal, without formatting machinery or allocation.
fn push_decimal(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(t: &Template, seed: u64) -> String {
        let mut out = Vec::new();
        t.expand(&mut out, &mut fastrand::Rng::with_seed(seed));
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn ranges_expand_within_their_bounds() {
        let t = Template::parse("/queries?queries={1..20}&x={0..0}").unwrap();
        assert_eq!(t.ranges().collect::<Vec<_>>(), [(1, 20), (0, 0)]);
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..2000 {
            let s = expand(&t, seed);
            let q = s["/queries?queries=".len()..]
                .split('&')
                .next()
                .unwrap_or("");
            let q: u64 = q.parse().unwrap();
            assert!((1..=20).contains(&q), "{s}");
            assert!(s.ends_with("&x=0"), "{s}");
            seen.insert(q);
        }
        assert_eq!(seen.len(), 20, "every value is drawn");
        assert_eq!(expand(&Template::parse("/db").unwrap(), 1), "/db");
    }

    #[test]
    fn decimals_are_exact() {
        for v in [0, 7, 10, 99, 100, 12345, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
    }

    #[test]
    fn bad_templates_say_why() {
        let err = |s: &str| Template::parse(s).unwrap_err();
        assert_eq!(err("/q={5..1}"), TemplateError::Empty { low: 5, high: 1 });
        assert_eq!(err("/q={1..x}"), TemplateError::NotARange("1..x".into()));
        assert_eq!(err("/q={1-5}"), TemplateError::NotARange("1-5".into()));
        assert_eq!(err("/q={1..5"), TemplateError::Unclosed(3));
        assert_eq!(err("/q=}"), TemplateError::LoneBrace(3));
        assert_eq!(err("db"), TemplateError::NoLeadingSlash);
        assert!(matches!(err("/a b{1..2}"), TemplateError::Target(_)));
        assert_eq!(
            err("/q={5..1}").to_string(),
            "'{5..1}' is empty: the low end must not be above the high end"
        );
    }
}
