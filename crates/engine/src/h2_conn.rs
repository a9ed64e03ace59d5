//! One connection's HTTP/2 session, without I/O: the streams in flight
//! (each with its own request, and its own checker when the run has
//! expectations), the frames read from the server and the frames owed to
//! it. The transport (`conn`) hands it the bytes it reads and writes the
//! bytes it queues ([`H2Conn::pending`]); whole streams come out as
//! [`Finished`], in the order the server ends them.
//!
//! Streams are numbered in the order they are queued, so the table is a
//! deque indexed by `(id - first) / 2`: finding a stream is arithmetic, and
//! its slot is freed when the server ends it, whatever the order.
//!
//! Request bodies go out as the server's flow control allows (the send
//! side, `h2_send`, over the rules of `h2_flow`): a stream's HEADERS leave
//! at once, its DATA as far as the connection's and its own window take.
//!
//! What the server says is trusted only as far as it must be: frames over
//! the size we accept, a PUSH_PROMISE (push is disabled), HPACK that does
//! not decode or a flow-control rule broken fail the connection as a parse
//! error (with a GOAWAY naming the rule when there is one). A server that
//! does not answer the preface with SETTINGS does not speak HTTP/2 at all
//! ([`H2Fail::Refused`]).

use crate::checker::Checker;
use crate::expect::{Expect, Mismatch};
use crate::h2::{self, flag, kind, put_frame, FrameHead, H2Request, HEAD_LEN, MIN_MAX_FRAME};
use crate::h2_flow::SendFlow;
use crate::job::Job;
use crate::stats::ErrorClass;
use std::collections::VecDeque;
use std::sync::Arc;

#[path = "h2_send.rs"]
mod send;

/// Why the session cannot go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum H2Fail {
    /// The connection fails every stream on it with this class.
    Class(ErrorClass),
    /// The server does not speak HTTP/2: the run stops with this reason.
    Refused(String),
    /// The server broke this rule of HTTP/2: the connection ends (GOAWAY
    /// where one is owed) and its streams fail as `protocol`.
    Violation(&'static str),
}

impl From<ErrorClass> for H2Fail {
    fn from(class: ErrorClass) -> H2Fail {
        H2Fail::Class(class)
    }
}

/// A stream the server ended.
#[derive(Debug)]
pub(crate) struct Finished {
    pub job: Job,
    /// The final status, or why the stream failed.
    pub outcome: Result<u16, ErrorClass>,
    pub passed: bool,
    /// Why it failed the expectations, when it did.
    pub mismatch: Option<Mismatch>,
}

#[derive(Debug)]
struct Stream {
    job: Job,
    /// The final (non-1xx) status; 0 until its HEADERS came.
    status: u16,
    check: Option<Checker>,
    /// The stream's send window (RFC 9113 §6.9).
    window: i64,
    /// Body bytes not yet sent: the body's tail from `body_len - unsent`.
    unsent: u32,
}

/// A header block split over HEADERS and CONTINUATION frames.
#[derive(Debug, Default)]
struct Block {
    stream: u32,
    end_stream: bool,
    bytes: Vec<u8>,
}

#[derive(Debug)]
pub(crate) struct H2Conn {
    request: Arc<H2Request>,
    expect: Option<Arc<Expect>>,
    decoder: Hpack,
    /// Frames owed to the server; `out[sent..]` is not written yet.
    out: Vec<u8>,
    sent: usize,
    /// A frame not yet whole, from earlier reads.
    partial: Vec<u8>,
    streams: VecDeque<Option<Stream>>,
    /// The id of `streams[0]`, and of the next stream queued.
    first: u32,
    next: u32,
    live: usize,
    /// The send windows and the server's frame size.
    flow: SendFlow,
    /// Bytes received since the connection window was last topped up.
    consumed: u32,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS; None before its
    /// SETTINGS arrive.
    peer_max: Option<usize>,
    /// A GOAWAY came: no new streams, and the connection closes when empty.
    pub going_away: bool,
    block: Option<Block>,
    /// Streams ended since the transport last took them.
    pub done: Vec<Finished>,
}

impl H2Conn {
    /// A session for a new socket: the preface is queued first, and the
    /// streams pushed before the socket connects follow it.
    pub fn new(request: Arc<H2Request>, expect: &Arc<Expect>) -> H2Conn {
        let mut conn = H2Conn {
            request,
            expect: (!expect.is_empty()).then(|| expect.clone()),
            decoder: Hpack::default(),
            out: Vec::with_capacity(4096),
            sent: 0,
            partial: Vec::new(),
            streams: VecDeque::new(),
            first: 1,
            next: 1,
            live: 0,
            flow: SendFlow::default(),
            consumed: 0,
            peer_max: None,
            going_away: false,
            block: None,
            done: Vec::new(),
        };
        h2::put_preface(&mut conn.out);
        conn
    }

    /// Starts over for the next socket (the streams were drained).
    pub fn reset(&mut self) {
        let (request, expect) = (self.request.clone(), self.expect.take());
        let done = std::mem::take(&mut self.done);
        *self = H2Conn {
            expect,
            done,
            ..H2Conn::new(request, &Arc::new(Expect::default()))
        };
    }

    /// How many streams may be in flight: one until the server's SETTINGS
    /// say how many it takes, then `depth` within its limit; none after a GOAWAY.
    pub fn room(&self, depth: usize) -> usize {
        match (self.going_away, self.peer_max) {
            (true, _) => 0,
            (false, None) => 1,
            (false, Some(max)) => depth.min(max),
        }
    }

    pub fn outstanding(&self) -> usize {
        self.live
    }

    /// The oldest stream in flight (the table's front is always a live one).
    pub fn front(&self) -> Option<&Job> {
        self.streams
            .front()
            .and_then(Option::as_ref)
            .map(|s| &s.job)
    }

    /// Takes every stream in flight, oldest first.
    pub fn drain(&mut self) -> VecDeque<Job> {
        let jobs = self.streams.drain(..).flatten().map(|s| s.job).collect();
        self.live = 0;
        self.flow.waiting = 0;
        self.first = self.next;
        jobs
    }

    /// Bytes to write.
    pub fn pending(&self) -> &[u8] {
        &self.out[self.sent..]
    }

    /// `n` of the pending bytes were written.
    pub fn wrote(&mut self, n: usize) {
        self.sent += n;
        if self.sent == self.out.len() {
            self.out.clear();
            self.sent = 0;
        }
    }

    /// Why this connection's streams could not be sent, when that is the
    /// server's doing: its SETTINGS never came, or they allow 0 streams
    /// (RFC 9113 §5.1.2 lets a server refuse streams only for a while).
    pub fn stalled(&self) -> Option<&'static str> {
        match self.peer_max {
            None => Some(
                "the server never sent its HTTP/2 SETTINGS (the connection preface): \
                 no request could be sent; it does not speak HTTP/2 on this port",
            ),
            Some(0) => Some(
                "the server allowed 0 concurrent streams (SETTINGS_MAX_CONCURRENT_STREAMS 0) \
                 for the whole run: no request could be sent",
            ),
            Some(_) => None,
        }
    }

    /// Reads frames from `data` (after any partial frame kept from before).
    pub fn feed(&mut self, data: &[u8]) -> Result<(), H2Fail> {
        if self.partial.is_empty() {
            let used = self.frames(data)?;
            self.partial.extend_from_slice(&data[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.partial);
            buf.extend_from_slice(data);
            let used = self.frames(&buf)?;
            buf.drain(..used);
            self.partial = buf;
        }
        Ok(())
    }

    /// The server closed the connection: a refusal when what it sent
    /// instead of SETTINGS was not HTTP/2.
    pub fn on_eof(&self) -> Result<(), H2Fail> {
        if self.peer_max.is_none() && !self.partial.is_empty() {
            return Err(refused(&self.partial));
        }
        Ok(())
    }

    fn frames(&mut self, data: &[u8]) -> Result<usize, H2Fail> {
        let mut at = 0;
        while data.len() - at >= HEAD_LEN {
            let head = FrameHead::parse(&data[at..]);
            if self.peer_max.is_none()
                && (head.kind != kind::SETTINGS || head.flags & flag::ACK != 0)
            {
                return Err(refused(&data[at..]));
            }
            if head.len > MIN_MAX_FRAME {
                h2::put_goaway(&mut self.out, h2::code::FRAME_SIZE_ERROR);
                return Err(H2Fail::Violation(
                    "a frame over SETTINGS_MAX_FRAME_SIZE (16384 bytes)",
                ));
            }
            if data.len() - at - HEAD_LEN < head.len {
                break;
            }
            let payload = &data[at + HEAD_LEN..at + HEAD_LEN + head.len];
            at += HEAD_LEN + head.len;
            self.frame(head, payload)?;
        }
        Ok(at)
    }

    fn frame(&mut self, head: FrameHead, payload: &[u8]) -> Result<(), H2Fail> {
        if self.block.is_some() && head.kind != kind::CONTINUATION {
            return Err(H2Fail::Violation(
                "a frame other than CONTINUATION inside a header block",
            ));
        }
        match head.kind {
            kind::DATA => self.data(head, payload)?,
            kind::HEADERS => {
                let fragment = headers_fragment(head, payload)?;
                self.block = Some(Block {
                    stream: head.stream,
                    end_stream: head.flags & flag::END_STREAM != 0,
                    bytes: Vec::new(),
                });
                self.fragment(head, fragment)?;
            }
            kind::CONTINUATION => self.fragment(head, payload)?,
            kind::RST_STREAM => self.finish(head.stream, Err(ErrorClass::StreamReset)),
            kind::SETTINGS if head.flags & flag::ACK == 0 => {
                let result = self.settings(payload);
                self.breach(head.stream, result)?;
            }
            kind::PING if head.flags & flag::ACK == 0 => {
                put_frame(&mut self.out, kind::PING, flag::ACK, 0, payload);
            }
            kind::GOAWAY => self.goaway(payload)?,
            kind::WINDOW_UPDATE => {
                let result = self.window_update(head.stream, payload);
                self.breach(head.stream, result)?;
            }
            kind::PUSH_PROMISE => {
                return Err(H2Fail::Violation(
                    "PUSH_PROMISE, though the client disabled push (SETTINGS_ENABLE_PUSH 0)",
                ))
            }
            _ => {}
        }
        Ok(())
    }

    fn data(&mut self, head: FrameHead, payload: &[u8]) -> Result<(), H2Fail> {
        let body = unpad(head, payload)?;
        self.consumed += head.len as u32;
        if self.consumed >= h2::TOP_UP_AT {
            h2::put_window_update(&mut self.out, 0, self.consumed);
            self.consumed = 0;
        }
        if let Some(check) = self.stream_mut(head.stream).and_then(|s| s.check.as_mut()) {
            check.on_body(body);
        }
        if head.flags & flag::END_STREAM != 0 {
            self.end(head.stream);
        }
        Ok(())
    }

    /// Adds a piece of the header block; the whole block is decoded (every
    /// block is, to keep the HPACK table in step) and its stream told.
    fn fragment(&mut self, head: FrameHead, fragment: &[u8]) -> Result<(), H2Fail> {
        let Some(block) = self.block.as_mut().filter(|b| b.stream == head.stream) else {
            return Err(H2Fail::Violation(
                "a CONTINUATION with no header block open on its stream",
            ));
        };
        let whole = head.flags & flag::END_HEADERS != 0;
        if whole && block.bytes.is_empty() {
            let (stream, end) = (block.stream, block.end_stream);
            self.block = None;
            return self.headers(stream, end, fragment);
        }
        block.bytes.extend_from_slice(fragment);
        if block.bytes.len() > 1 << 20 {
            return Err(H2Fail::Violation("a header block over 1 MiB"));
        }
        if whole {
            let block = self.block.take().unwrap_or_default();
            return self.headers(block.stream, block.end_stream, &block.bytes);
        }
        Ok(())
    }

    fn headers(&mut self, stream: u32, end_stream: bool, block: &[u8]) -> Result<(), H2Fail> {
        let wants_type = self
            .stream_mut(stream)
            .and_then(|s| s.check.as_ref())
            .is_some_and(Checker::wants_media_type);
        let (mut status, mut media_type) = (0u16, None);
        let slot = self.slot(stream);
        let hpack = &mut self.decoder;
        hpack.block.clear();
        hpack.block.extend_from_slice(block);
        hpack.fields.clear();
        hpack
            .decoder
            .decode(&mut hpack.block, &mut hpack.fields)
            .map_err(|_| H2Fail::Violation("a header block HPACK cannot decode"))?;
        for (name, value, _) in &hpack.fields {
            if name == b":status" {
                status = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
            } else if wants_type && name == b"content-type" {
                media_type = Some(value.as_slice());
            }
        }
        if let Some(s) = slot.and_then(|i| self.streams[i].as_mut()) {
            // 1xx heads are interim, and trailers carry no status.
            if s.status == 0 && status >= 200 {
                s.status = status;
                if let Some(check) = s.check.as_mut() {
                    check.on_head(status, media_type);
                }
            }
        }
        if end_stream {
            self.end(stream);
        }
        Ok(())
    }

    /// Streams above the GOAWAY's last id were never processed: they fail
    /// as `goaway`, and so do all when the server names an error. The rest
    /// may still end; no new stream starts.
    fn goaway(&mut self, payload: &[u8]) -> Result<(), H2Fail> {
        let last = u32_at(payload, 0)? & 0x7fff_ffff;
        let error = u32_at(payload, 4)?;
        self.going_away = true;
        let ids: Vec<u32> = (0..self.streams.len() as u32)
            .map(|i| self.first + 2 * i)
            .filter(|&id| id > last || error != 0)
            .collect();
        for id in ids {
            self.finish(id, Err(ErrorClass::GoAway));
        }
        Ok(())
    }

    /// The server ended the stream: whole, unless no HEADERS came. A
    /// body not all sent is cancelled (RFC 9113 §8.1: a server may answer
    /// before the whole request), so that the stream closes on its side too.
    fn end(&mut self, id: u32) {
        let (status, unsent) = self.stream_mut(id).map_or((0, 0), |s| (s.status, s.unsent));
        let outcome = if status == 0 {
            // A stream ended with no response HEADERS (RFC 9113 §8.1).
            Err(ErrorClass::Protocol)
        } else {
            Ok(status)
        };
        if unsent > 0 {
            h2::put_rst_stream(&mut self.out, id, h2::code::CANCEL);
        }
        self.finish(id, outcome);
    }

    fn finish(&mut self, id: u32, outcome: Result<u16, ErrorClass>) {
        let Some(slot) = self.slot(id) else { return };
        let Some(stream) = self.streams[slot].take() else {
            return;
        };
        self.live -= 1;
        if stream.unsent > 0 {
            self.flow.waiting -= 1;
        }
        let passed = outcome.is_err() || stream.check.as_ref().is_none_or(Checker::passed);
        let mismatch = (!passed)
            .then(|| stream.check.as_ref().and_then(Checker::mismatch))
            .flatten();
        self.done.push(Finished {
            job: stream.job,
            outcome,
            passed,
            mismatch,
        });
        while matches!(self.streams.front(), Some(None)) {
            self.streams.pop_front();
            self.first += 2;
        }
    }

    fn slot(&self, id: u32) -> Option<usize> {
        let slot = (id.checked_sub(self.first)? / 2) as usize;
        (id % 2 == 1 && slot < self.streams.len()).then_some(slot)
    }

    fn stream_mut(&mut self, id: u32) -> Option<&mut Stream> {
        let slot = self.slot(id)?;
        self.streams[slot].as_mut()
    }
}

/// The server's HPACK context (the crate's decoder has no `Debug`), and
/// the buffers its API decodes from and into, kept across blocks.
#[derive(Default)]
struct Hpack {
    decoder: httlib_hpack::Decoder<'static>,
    block: Vec<u8>,
    fields: Vec<(Vec<u8>, Vec<u8>, u8)>,
}

impl std::fmt::Debug for Hpack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hpack")
    }
}

/// What the server sent instead of HTTP/2's SETTINGS, as the reason.
fn refused(got: &[u8]) -> H2Fail {
    if got.starts_with(b"HTTP/") {
        let line = got
            .split(|&b| b == b'\r' || b == b'\n')
            .next()
            .unwrap_or(got);
        let line = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        return H2Fail::Refused(format!(
            "the server answered the HTTP/2 connection preface in HTTP/1.x ('{line}'): \
             it does not speak h2c with prior knowledge on this port"
        ));
    }
    H2Fail::Refused(
        "the server did not answer the HTTP/2 connection preface with SETTINGS: it does not speak HTTP/2 on this port"
            .to_string(),
    )
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, H2Fail> {
    b.get(at..at + 4)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
        .ok_or(H2Fail::Violation("a GOAWAY frame under 8 bytes"))
}

/// The payload without its padding.
fn unpad(head: FrameHead, payload: &[u8]) -> Result<&[u8], H2Fail> {
    if head.flags & flag::PADDED == 0 {
        return Ok(payload);
    }
    let too_long = H2Fail::Violation("padding as long as its frame or longer");
    let Some(&pad) = payload.first() else {
        return Err(too_long);
    };
    let pad = usize::from(pad);
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or(too_long)
}

/// A HEADERS payload's block fragment, past padding and priority fields.
fn headers_fragment(head: FrameHead, payload: &[u8]) -> Result<&[u8], H2Fail> {
    let body = unpad(head, payload)?;
    if head.flags & flag::PRIORITY == 0 {
        return Ok(body);
    }
    body.get(5..).ok_or(H2Fail::Violation(
        "a HEADERS frame too short for its priority fields",
    ))
}
