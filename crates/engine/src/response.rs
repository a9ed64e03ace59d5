//! An incremental HTTP/1.x response reader: `httparse` for the head, then a
//! framing state machine (Content-Length, chunked, or until close) that
//! counts body bytes without copying them. It never buffers a body, so a body
//! larger than the read buffer costs nothing extra. When the run has
//! expectations, the reader hands the head and each body slice to its
//! [`Checker`] as they pass; without them it has none and skips that.

use crate::checker::Checker;
use crate::expect::Expect;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Heads larger than this are treated as malformed (a "huge headers" server).
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;

/// Why a response could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadFailure {
    /// Not HTTP, bad framing, or oversized head.
    Parse,
    /// The connection ended before the whole response arrived.
    Eof,
}

/// A whole response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Complete {
    pub status: u16,
    /// False when the server asked to close (or is HTTP/1.0 without keep-alive).
    pub keep_alive: bool,
    /// Bytes of the last fed slice that were not part of this response.
    pub extra: usize,
    /// False when the response failed the run's expectations (a mismatch).
    pub passed: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Body {
    Length(u64),
    Chunked(Chunk),
    UntilClose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size; `ext` after a ';'.
    Size {
        value: u64,
        digits: u8,
        ext: bool,
    },
    /// Whitespace after the size digits (RFC 9112's BWS before a ';').
    SizeWs {
        value: u64,
    },
    /// Expecting the LF that ends the size line.
    SizeLf {
        value: u64,
    },
    Data(u64),
    DataCr,
    DataLf,
    /// At the start of a trailer line; `cr` after a CR.
    TrailerStart {
        cr: bool,
    },
    TrailerLine,
}

#[derive(Debug)]
enum State {
    Head,
    Body(Body),
    /// A response completed; the next `feed` starts the next one.
    Done,
}

/// Reads one response at a time. After a whole response the next `feed`
/// starts the next one, so the bytes left over (a pipelined response's
/// `extra`) can be fed straight back; [`ResponseReader::reset`] drops a
/// response half read.
#[derive(Debug)]
pub(crate) struct ResponseReader {
    head: Vec<u8>,
    state: State,
    status: u16,
    keep_alive: bool,
    no_body: bool,
    check: Option<Checker>,
}

impl ResponseReader {
    pub fn new(is_head_request: bool, check: Option<Checker>) -> ResponseReader {
        ResponseReader {
            head: Vec::new(),
            state: State::Head,
            status: 0,
            keep_alive: true,
            no_body: is_head_request,
            check,
        }
    }

    pub fn reset(&mut self) {
        self.head.clear();
        self.state = State::Head;
        self.status = 0;
        if let Some(c) = &mut self.check {
            c.reset();
        }
    }

    /// Prepares for the response to a mix's kind: whether it answers a
    /// HEAD request and what it must look like (a single request sets both
    /// once, in `new`). Called between responses.
    pub fn prepare(&mut self, is_head_request: bool, expect: &Arc<Expect>) {
        self.no_body = is_head_request;
        match &mut self.check {
            Some(c) => c.retarget(expect),
            None if !expect.is_empty() => self.check = Checker::for_expect(expect),
            None => {}
        }
    }

    /// Why the last whole response failed its expectations, if it did.
    pub fn mismatch(&self) -> Option<crate::expect::Mismatch> {
        self.check.as_ref().and_then(Checker::mismatch)
    }

    fn passed(&self) -> bool {
        self.check.as_ref().is_none_or(Checker::passed)
    }

    /// Feeds bytes; returns `Ok(Some(..))` once the response is whole.
    /// Feeding after that begins the next response.
    pub fn feed(&mut self, data: &[u8]) -> Result<Option<Complete>, ReadFailure> {
        let mut pos = 0;
        loop {
            match self.state {
                State::Done => self.reset(),
                State::Head => match self.parse_head(&data[pos..])? {
                    Some(used) => pos += used,
                    None => return Ok(None),
                },
                State::Body(ref mut body) => {
                    let (used, done) = advance_body(body, &data[pos..], self.check.as_mut())?;
                    pos += used;
                    if !done {
                        return Ok(None);
                    }
                    self.state = State::Done;
                    return Ok(Some(Complete {
                        status: self.status,
                        keep_alive: self.keep_alive,
                        extra: data.len() - pos,
                        passed: self.passed(),
                    }));
                }
            }
        }
    }

    /// The peer closed the connection: whole only for close-delimited bodies.
    pub fn on_eof(&mut self) -> Result<Complete, ReadFailure> {
        match self.state {
            State::Body(Body::UntilClose) => {
                self.state = State::Done;
                Ok(Complete {
                    status: self.status,
                    keep_alive: false,
                    extra: 0,
                    passed: self.passed(),
                })
            }
            _ => Err(ReadFailure::Eof),
        }
    }

    /// Parses the head from buffered plus new bytes. Returns the number of
    /// bytes of `data` it consumed, or `None` when more are needed.
    fn parse_head(&mut self, data: &[u8]) -> Result<Option<usize>, ReadFailure> {
        let buffered = self.head.len();
        let check = self.check.as_mut();
        let parsed = if buffered == 0 {
            parse_head_bytes(data, check)?
        } else {
            self.head.extend_from_slice(data);
            parse_head_bytes(&self.head, check)?
        };
        let Some(head) = parsed else {
            if buffered == 0 {
                self.head.extend_from_slice(data);
            }
            if self.head.len() > MAX_HEAD {
                return Err(ReadFailure::Parse);
            }
            return Ok(None);
        };
        self.head.clear();
        let used = head.len - buffered;
        if is_interim(head.status) {
            return Ok(Some(used)); // stay in Head for the final response
        }
        self.status = head.status;
        self.keep_alive = head.keep_alive;
        let no_body = self.no_body || head.status == 204 || head.status == 304;
        let body = match (no_body, head.chunked, head.length) {
            (true, _, _) => Body::Length(0),
            (_, true, _) => Body::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
                ext: false,
            }),
            (_, _, Some(n)) => Body::Length(n),
            _ => {
                self.keep_alive = false;
                Body::UntilClose
            }
        };
        self.state = State::Body(body);
        Ok(Some(used))
    }
}

struct Head {
    len: usize,
    status: u16,
    keep_alive: bool,
    chunked: bool,
    length: Option<u64>,
}

/// Parses a head; a final (not 1xx) head is also shown to `check`.
fn parse_head_bytes(buf: &[u8], check: Option<&mut Checker>) -> Result<Option<Head>, ReadFailure> {
    // Uninitialised slots: zeroing all MAX_HEADERS of them for every
    // response was most of this function's own time in a pipelined profile.
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut resp,
        buf,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(ReadFailure::Parse),
    };
    let http10 = resp.version == Some(0);
    let mut head = Head {
        len,
        status: resp.code.ok_or(ReadFailure::Parse)?,
        keep_alive: !http10,
        chunked: false,
        length: None,
    };
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = parse_decimal(h.value).ok_or(ReadFailure::Parse)?;
            if head.length.is_some_and(|m| m != n) {
                return Err(ReadFailure::Parse);
            }
            head.length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = last_token(h.value).eq_ignore_ascii_case(b"chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    head.keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && http10 {
                    head.keep_alive = true;
                }
            }
        }
    }
    if let Some(c) = check.filter(|_| !is_interim(head.status)) {
        let content_type = c
            .wants_media_type()
            .then(|| {
                resp.headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            })
            .flatten()
            .map(|h| h.value);
        c.on_head(head.status, content_type);
    }
    Ok(Some(head))
}

/// A 1xx head other than 101 is followed by the final response.
fn is_interim(status: u16) -> bool {
    (100..200).contains(&status) && status != 101
}

fn parse_decimal(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

fn last_token(v: &[u8]) -> &[u8] {
    v.rsplit(|&b| b == b',').next().unwrap_or(v).trim_ascii()
}

/// Advances the body state over `data`, showing body bytes to `check`;
/// returns bytes used and whether the body ended.
fn advance_body(
    body: &mut Body,
    data: &[u8],
    check: Option<&mut Checker>,
) -> Result<(usize, bool), ReadFailure> {
    let (used, done, content) = match body {
        Body::Length(left) => {
            let take = (*left).min(data.len() as u64);
            *left -= take;
            (take as usize, *left == 0, take as usize)
        }
        Body::UntilClose => (data.len(), false, data.len()),
        Body::Chunked(chunk) => {
            let (used, done) = advance_chunked(chunk, data, check)?;
            return Ok((used, done));
        }
    };
    if let Some(c) = check {
        c.on_body(&data[..content]);
    }
    Ok((used, done))
}

/// Advances a chunked body over `data`: chunk data is counted (and shown to
/// `check`) a slice at a time, the framing around it a byte at a time.
fn advance_chunked(
    c: &mut Chunk,
    data: &[u8],
    mut check: Option<&mut Checker>,
) -> Result<(usize, bool), ReadFailure> {
    let mut i = 0;
    while i < data.len() {
        if let Chunk::Data(left) = c {
            let take = (*left).min((data.len() - i) as u64);
            *left -= take;
            if let Some(check) = check.as_deref_mut() {
                check.on_body(&data[i..i + take as usize]);
            }
            i += take as usize;
            if *left == 0 {
                *c = Chunk::DataCr;
            }
            continue;
        }
        let b = data[i];
        i += 1;
        match c.after(b)? {
            Some(next) => *c = next,
            None => return Ok((i, true)),
        }
    }
    Ok((i, false))
}

impl Chunk {
    /// The framing state after byte `b` (never chunk data), or `None` when
    /// `b` ended the body (the LF of the empty line after the trailers).
    #[inline]
    fn after(self, b: u8) -> Result<Option<Chunk>, ReadFailure> {
        match self {
            Chunk::Size { .. } | Chunk::SizeWs { .. } | Chunk::SizeLf { .. } => {
                self.after_size_byte(b).map(Some)
            }
            Chunk::DataCr | Chunk::DataLf => self.after_data_byte(b).map(Some),
            Chunk::TrailerStart { .. } | Chunk::TrailerLine => self.after_trailer_byte(b),
            Chunk::Data(_) => Err(ReadFailure::Parse),
        }
    }

    /// A byte of a size line: hex digits (at most 15), optional whitespace,
    /// an extension after `;` (skipped), then CRLF or a bare LF.
    #[inline]
    fn after_size_byte(self, b: u8) -> Result<Chunk, ReadFailure> {
        Ok(match (self, b) {
            (
                Chunk::Size {
                    value,
                    digits,
                    ext: false,
                },
                _,
            ) if b.is_ascii_hexdigit() => {
                if digits >= 15 {
                    return Err(ReadFailure::Parse);
                }
                let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                Chunk::Size {
                    value: value * 16 + d,
                    digits: digits + 1,
                    ext: false,
                }
            }
            (Chunk::Size { value, digits, .. }, b';') if digits > 0 => Chunk::Size {
                value,
                digits,
                ext: true,
            },
            (
                Chunk::Size {
                    value,
                    digits,
                    ext: false,
                },
                b' ' | b'\t',
            ) if digits > 0 => Chunk::SizeWs { value },
            (Chunk::SizeWs { value }, b' ' | b'\t') => Chunk::SizeWs { value },
            (Chunk::SizeWs { value }, b';') => Chunk::Size {
                value,
                digits: 1,
                ext: true,
            },
            (Chunk::SizeWs { value }, b'\r') => Chunk::SizeLf { value },
            (Chunk::SizeWs { value }, b'\n') => next_after_size(value),
            (Chunk::Size { value, digits, .. }, b'\r') if digits > 0 => Chunk::SizeLf { value },
            (Chunk::Size { value, digits, .. }, b'\n') if digits > 0 => next_after_size(value),
            (Chunk::Size { ext: true, .. }, _) => self,
            (Chunk::SizeLf { value }, b'\n') => next_after_size(value),
            _ => return Err(ReadFailure::Parse),
        })
    }

    /// The CRLF (or bare LF) after a chunk's data.
    #[inline]
    fn after_data_byte(self, b: u8) -> Result<Chunk, ReadFailure> {
        match (self, b) {
            (Chunk::DataCr, b'\r') => Ok(Chunk::DataLf),
            (Chunk::DataLf, b'\n') | (Chunk::DataCr, b'\n') => Ok(Chunk::Size {
                value: 0,
                digits: 0,
                ext: false,
            }),
            _ => Err(ReadFailure::Parse),
        }
    }

    /// A byte of the trailer section: lines are skipped until an empty one,
    /// whose LF ends the body (`None`).
    #[inline]
    fn after_trailer_byte(self, b: u8) -> Result<Option<Chunk>, ReadFailure> {
        Ok(Some(match (self, b) {
            (Chunk::TrailerStart { cr: false }, b'\r') => Chunk::TrailerStart { cr: true },
            (Chunk::TrailerStart { .. }, b'\n') => return Ok(None),
            (Chunk::TrailerStart { cr: false }, _) => Chunk::TrailerLine,
            (Chunk::TrailerLine, b'\n') => Chunk::TrailerStart { cr: false },
            (Chunk::TrailerLine, _) => Chunk::TrailerLine,
            _ => return Err(ReadFailure::Parse),
        }))
    }
}

fn next_after_size(value: u64) -> Chunk {
    if value == 0 {
        Chunk::TrailerStart { cr: false }
    } else {
        Chunk::Data(value)
    }
}

#[cfg(test)]
#[path = "response_props.rs"]
mod props;

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `wire` in pieces of `step` bytes; returns the completion.
    fn feed_in_steps(wire: &[u8], step: usize) -> Result<Option<Complete>, ReadFailure> {
        let mut r = ResponseReader::new(false, None);
        for piece in wire.chunks(step) {
            if let Some(done) = r.feed(piece)? {
                return Ok(Some(done));
            }
        }
        Ok(None)
    }

    #[test]
    fn content_length_in_any_split() {
        let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";
        for step in 1..wire.len() {
            let done = feed_in_steps(wire, step).unwrap().unwrap();
            assert_eq!(
                (done.status, done.keep_alive, done.extra),
                (200, true, 0),
                "step {step}"
            );
        }
    }

    #[test]
    fn chunked_with_extension_and_trailer_in_any_split() {
        let wire = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n\
                     5;x=y\r\nHello\r\n8\r\n, World!\r\n0\r\nX-Trailer: 1\r\n\r\n";
        for step in 1..wire.len() {
            let done = feed_in_steps(wire, step).unwrap().unwrap();
            assert_eq!(done.status, 201, "step {step}");
        }
    }

    /// Found by `props::any_split_reads_like_the_whole`: RFC 9112 allows
    /// whitespace (BWS) before a chunk extension's ';', which was a parse error.
    #[test]
    fn chunk_extension_after_whitespace() {
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                     5 ;a=b\r\nhello\r\n3\t; b\r\n, w\r\n0 \t;c\r\n\r\n";
        for step in 1..wire.len() {
            let done = feed_in_steps(wire, step).unwrap().unwrap();
            assert_eq!((done.status, done.extra), (200, 0), "step {step}");
        }
        // Whitespace inside the size is still wrong.
        let bad = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 5\r\n";
        assert_eq!(feed_in_steps(bad, 1), Err(ReadFailure::Parse));
    }

    #[test]
    fn reports_extra_bytes_after_the_response() {
        let mut r = ResponseReader::new(false, None);
        let done = r
            .feed(b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1")
            .unwrap()
            .unwrap();
        assert_eq!(done.extra, 8);
    }

    #[test]
    fn connection_close_and_http10() {
        let mut r = ResponseReader::new(false, None);
        let done = r
            .feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
            .unwrap()
            .unwrap();
        assert!(!done.keep_alive);
        let mut r = ResponseReader::new(false, None);
        let done = r
            .feed(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert!(!done.keep_alive);
        let mut r = ResponseReader::new(false, None);
        assert_eq!(
            r.feed(b"HTTP/1.0 200 OK\r\n\r\nbody until close").unwrap(),
            None
        );
        assert_eq!(r.on_eof().unwrap().status, 200);
    }

    #[test]
    fn large_body_is_counted_not_buffered() {
        let mut r = ResponseReader::new(false, None);
        assert_eq!(
            r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                .unwrap(),
            None
        );
        let block = vec![b'x'; 65536];
        for _ in 0..15 {
            assert_eq!(r.feed(&block).unwrap(), None);
        }
        let done = r.feed(&block[..1_000_000 - 15 * 65536]).unwrap().unwrap();
        assert_eq!(done.status, 200);
        assert!(r.head.capacity() < 1024);
    }

    #[test]
    fn skips_interim_continue() {
        let mut r = ResponseReader::new(false, None);
        let done = r
            .feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(done.status, 200);
    }

    #[test]
    fn rejects_garbage_huge_heads_and_truncation() {
        assert_eq!(
            feed_in_steps(b"garbage\r\n\r\n", 4),
            Err(ReadFailure::Parse)
        );
        let mut huge = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
        huge.extend(std::iter::repeat_n(b'a', MAX_HEAD + 10));
        assert_eq!(feed_in_steps(&huge, 4096), Err(ReadFailure::Parse));
        let bad_chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(feed_in_steps(bad_chunk, 3), Err(ReadFailure::Parse));
        let mut r = ResponseReader::new(false, None);
        assert_eq!(
            r.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab")
                .unwrap(),
            None
        );
        assert_eq!(r.on_eof(), Err(ReadFailure::Eof));
    }

    #[test]
    fn head_request_has_no_body() {
        let mut r = ResponseReader::new(true, None);
        let done = r
            .feed(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!(done.status, 200);
    }
}
