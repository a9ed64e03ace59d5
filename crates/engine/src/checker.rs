//! The streaming form of [`Expect::check`]: the response reader hands it the
//! status and `Content-Type` once the head is parsed, then each slice of
//! (de-chunked) body bytes as it arrives, and asks for the verdict when the
//! response is whole. It never buffers a body: an exact body is compared at
//! its offset and only [`SHOWN_BYTES`] past the first difference are kept to
//! show; a shape keeps the first [`SHOWN_BYTES`] and a bounded tail (the last
//! `max(suffix, SHOWN_BYTES)` bytes before any trailing whitespace, and as
//! much of that whitespace). A connection without expectations has no
//! checker at all, so the plain hot path pays one `Option` test per slice.
//! The verdicts, and the [`Mismatch`] built on failure, equal those of
//! `Expect::check` on the whole response (a property test holds them to it).

use crate::expect::{BodyMatch, Expect, Mismatch, SHOWN_BYTES};
use std::sync::Arc;

/// How far one response got through the expectations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Head {
    /// The status and media type passed (or the head is not seen yet).
    #[default]
    Pass,
    /// The status is not allowed.
    Status,
    /// The media type differs; holds the `Content-Type` received, if any.
    MediaType(Option<Vec<u8>>),
}

/// Per-connection checking: the shared expectations and the state of the
/// response being read, reused across the connection's responses.
#[derive(Debug)]
pub(crate) struct Checker {
    expect: Arc<Expect>,
    st: State,
}

#[derive(Debug, Default)]
struct State {
    status: u16,
    head: Head,
    /// Body bytes seen so far.
    seen: u64,
    /// Exact: where the body first differed. Shape: where the prefix did.
    diff: Option<u64>,
    /// Exact: up to SHOWN_BYTES received from `diff` on. Shape: the first
    /// SHOWN_BYTES of the body.
    shown: Vec<u8>,
    /// Shape: the end of the body before its trailing whitespace (bounded).
    tail: Vec<u8>,
    /// Shape: the current run of trailing ASCII whitespace (bounded) and its length.
    ws: Vec<u8>,
    ws_len: u64,
}

impl Checker {
    /// A checker, or None when nothing is expected (the hot path stays bare).
    pub fn for_expect(expect: &Arc<Expect>) -> Option<Checker> {
        (!expect.is_empty()).then(|| Checker {
            expect: expect.clone(),
            st: State::default(),
        })
    }

    /// Checks the next responses against `expect` (a mix's kind), keeping
    /// the buffers; a pointer comparison when the kind is the same.
    pub fn retarget(&mut self, expect: &Arc<Expect>) {
        if !Arc::ptr_eq(&self.expect, expect) {
            self.expect = expect.clone();
        }
    }

    /// Forgets the last response (keeping the buffers' memory).
    pub fn reset(&mut self) {
        let st = &mut self.st;
        st.status = 0;
        st.head = Head::Pass;
        st.seen = 0;
        st.diff = None;
        st.shown.clear();
        st.tail.clear();
        st.ws.clear();
        st.ws_len = 0;
    }

    /// Whether the media type is checked (the reader then looks for the header).
    pub fn wants_media_type(&self) -> bool {
        self.expect.media_type.is_some()
    }

    /// The final status and `Content-Type` of the response.
    pub fn on_head(&mut self, status: u16, content_type: Option<&[u8]>) {
        self.st.status = status;
        self.st.head = if !self.expect.status_ok(status) {
            Head::Status
        } else if !self.expect.media_type_ok(content_type) {
            Head::MediaType(content_type.map(<[u8]>::to_vec))
        } else {
            Head::Pass
        };
    }

    /// The next slice of body bytes.
    pub fn on_body(&mut self, data: &[u8]) {
        let st = &mut self.st;
        if data.is_empty() || st.head != Head::Pass {
            return;
        }
        match &self.expect.body {
            None => {}
            Some(BodyMatch::Exact(want)) => st.exact(want, data),
            Some(BodyMatch::Shape { prefix, suffix }) => {
                st.prefix(prefix, data);
                st.track_tail(data, suffix.len().max(SHOWN_BYTES));
            }
        }
        st.seen += data.len() as u64;
    }

    /// Whether the whole response met the expectations; the details come
    /// from [`Checker::mismatch`], built only when someone wants them.
    pub fn passed(&self) -> bool {
        let st = &self.st;
        if st.head != Head::Pass {
            return false;
        }
        match &self.expect.body {
            None => true,
            Some(BodyMatch::Exact(want)) => st.diff.is_none() && st.seen == want.len() as u64,
            Some(BodyMatch::Shape { prefix, suffix }) => {
                st.diff.is_none()
                    && st.seen >= prefix.len() as u64
                    && st.tail.ends_with(suffix)
                    && st.seen - st.ws_len >= (prefix.len() + suffix.len()) as u64
            }
        }
    }

    /// Why the response failed, in `Expect::check`'s words; None if it passed.
    pub fn mismatch(&self) -> Option<Mismatch> {
        if self.passed() {
            return None;
        }
        let st = &self.st;
        let status = st.status;
        let fail = |reason: String, expected: &[u8], got: &[u8]| Mismatch {
            status,
            reason,
            expected: shown(expected),
            got: shown(got),
        };
        let e = &self.expect;
        Some(match (&st.head, &e.body) {
            (Head::Status, _) => {
                let allowed: Vec<String> = e.status.iter().map(|m| m.to_string()).collect();
                let reason = format!("status {status}, expected {}", allowed.join(" or "));
                fail(reason, b"", b"")
            }
            (Head::MediaType(got), _) => fail(
                "media type differs".into(),
                e.media_type.as_deref().unwrap_or_default().as_bytes(),
                got.as_deref().unwrap_or(b"(none)"),
            ),
            (Head::Pass, Some(BodyMatch::Exact(want))) => {
                let at = st.diff.unwrap_or(st.seen) as usize;
                let reason = format!("body differs at byte {at}");
                fail(reason, &want[at.min(want.len())..], &st.shown)
            }
            (Head::Pass, Some(BodyMatch::Shape { prefix, suffix })) => {
                if st.diff.is_some() || st.seen < prefix.len() as u64 {
                    let at = st.diff.unwrap_or(st.seen);
                    let reason = format!("body does not start as expected (byte {at})");
                    fail(reason, prefix, &st.shown)
                } else {
                    let tail = &st.tail[st.tail.len().saturating_sub(SHOWN_BYTES)..];
                    fail("body does not end as expected".into(), suffix, tail)
                }
            }
            (Head::Pass, None) => return None,
        })
    }
}

impl State {
    /// Exact: compares `data` at its offset; past the first difference it
    /// only keeps what a [`Mismatch`] shows.
    fn exact(&mut self, want: &[u8], data: &[u8]) {
        if self.diff.is_some() {
            return self.keep_shown(data);
        }
        let at = (self.seen as usize).min(want.len());
        let n = data.len().min(want.len() - at);
        let first = if data[..n] == want[at..at + n] {
            // Equal so far; bytes beyond the expected length differ.
            (data.len() > n).then_some(n)
        } else {
            data[..n].iter().zip(&want[at..]).position(|(a, b)| a != b)
        };
        if let Some(i) = first {
            self.diff = Some(self.seen + i as u64);
            self.keep_shown(&data[i..]);
        }
    }

    fn keep_shown(&mut self, data: &[u8]) {
        let room = SHOWN_BYTES - self.shown.len();
        self.shown.extend_from_slice(&data[..data.len().min(room)]);
    }

    /// Shape: compares the prefix and keeps the first bytes to show.
    fn prefix(&mut self, prefix: &[u8], data: &[u8]) {
        self.keep_shown(data);
        let at = self.seen as usize;
        if self.diff.is_some() || at >= prefix.len() {
            return;
        }
        let n = data.len().min(prefix.len() - at);
        if let Some(i) = data[..n]
            .iter()
            .zip(&prefix[at..])
            .position(|(a, b)| a != b)
        {
            self.diff = Some((at + i) as u64);
        }
    }

    /// Shape: keeps the last `keep` bytes before trailing whitespace, and the
    /// last `keep` bytes of that whitespace (which may yet turn out not to trail).
    fn track_tail(&mut self, data: &[u8], keep: usize) {
        match data.iter().rposition(|b| !is_trimmed(*b)) {
            None => {
                push_bounded(&mut self.ws, data, keep);
                self.ws_len += data.len() as u64;
            }
            Some(j) => {
                push_bounded(&mut self.tail, &self.ws, keep);
                push_bounded(&mut self.tail, &data[..=j], keep);
                self.ws.clear();
                push_bounded(&mut self.ws, &data[j + 1..], keep);
                self.ws_len = (data.len() - j - 1) as u64;
            }
        }
    }
}

/// The bytes `<[u8]>::trim_ascii_end` removes.
fn is_trimmed(b: u8) -> bool {
    b.is_ascii_whitespace()
}

/// Appends `data` to `buf`, keeping at least its last `keep` bytes; the
/// front is dropped in batches so appending stays amortised O(1) per byte.
fn push_bounded(buf: &mut Vec<u8>, data: &[u8], keep: usize) {
    let data = &data[data.len().saturating_sub(keep)..];
    buf.extend_from_slice(data);
    if buf.len() > 2 * keep {
        buf.drain(..buf.len() - keep);
    }
}

fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(&b[..b.len().min(SHOWN_BYTES)]).into_owned()
}
