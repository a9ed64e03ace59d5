//! One connection's WebSocket session, without I/O, shaped like `h2_conn`:
//! the upgrade, the messages awaiting their echo, the frames read from the
//! server and the frames owed to it. The transport hands it the bytes it
//! reads ([`WsConn::feed`]) and writes the bytes it queues
//! ([`WsConn::pending`]); each echo comes out as a [`Finished`], in the
//! order sent (an echo server answers in order, so the queue is a FIFO).
//!
//! The upgrade request goes first. RFC 6455 §4.1 forbids sending anything
//! else before the server's answer, so [`WsConn::room`] is 1 until the 101
//! (like `h2_conn` before the server's SETTINGS): the first message is
//! queued at once but held back, and leaves, its send time taken anew, when
//! the 101 arrives. After that `room` is the depth; after a close, 0.
//!
//! Every message starts with its number on this connection (so that an
//! echo reordered, duplicated or lost shows), followed by the run's fixed
//! random filler ([`WsMessage`]); when the run checks, each echo is
//! compared with what was sent, byte for byte, and one that differs is a
//! [`Mismatch`]. A duplicated or lost echo shifts the FIFO, so every later
//! echo on the connection mismatches too: loud, never silent.
//!
//! The server's pings are answered with pongs; pongs to our pings
//! ([`WsConn::ping`]) are counted. A close from the server ends the session
//! with [`WsFail::Closed`] and its code (also kept in [`WsConn::closes`]
//! for the per-code count), after the close owed in reply is queued; our
//! own close ([`WsConn::close`]) waits for the server's. A broken rule of
//! the protocol queues the close its code calls for (1002, 1007 or 1009)
//! and ends the session with [`WsFail::Violation`].
//!
//! In hold mode ([`WsConn::holding`]) no message is sent: the job pushed
//! is the upgrade itself, finished by the 101, and the connection then
//! stays open and idle (room 0), pinged when the worker says so. A held
//! connection that closes is not opened again.

use crate::expect::{first_difference, shown, Mismatch};
use crate::job::Job;
use crate::stats::ErrorClass;
use crate::ws_frame::{self, code, opcode, Decoder, Event, MAX_MESSAGE};
use crate::ws_handshake::{self, HandshakeFail};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// The status a [`Mismatch`] of an echo names: the connection's own.
const SWITCHED: u16 = 101;
/// The longest message counter (8 bytes).
const COUNTER: usize = 8;

/// Why the session cannot go on. Its messages still awaiting an echo are
/// left for [`WsConn::drain`], to fail with [`WsFail::class`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WsFail {
    /// The server answered the upgrade with this status instead of 101.
    Refused(u16),
    /// The server broke this rule of RFC 6455 (the close owed is queued).
    Violation(&'static str),
    /// The server closed the session with this code: 1005 when its close
    /// frame had none, 1006 when the connection ended with no close frame.
    Closed(u16),
    /// The socket or TLS under the session failed (connect, read, tls).
    Class(ErrorClass),
}

impl WsFail {
    /// The class the messages lost with the session are counted under.
    pub fn class(&self) -> ErrorClass {
        match self {
            WsFail::Refused(_) => ErrorClass::HandshakeRefused,
            WsFail::Violation(_) => ErrorClass::Protocol,
            WsFail::Closed(_) => ErrorClass::Closed,
            WsFail::Class(class) => *class,
        }
    }
}

impl From<ErrorClass> for WsFail {
    fn from(class: ErrorClass) -> WsFail {
        WsFail::Class(class)
    }
}

impl From<HandshakeFail> for WsFail {
    fn from(fail: HandshakeFail) -> WsFail {
        match fail {
            HandshakeFail::Refused(status) => WsFail::Refused(status),
            HandshakeFail::Violation(why) => WsFail::Violation(why),
        }
    }
}

/// A message size out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a message size of {0} bytes: it must be 1 B to 16 MiB")]
pub(crate) struct WsSizeError(pub usize);

/// What every connection of a run sends: the upgrade's target, and the
/// message, `size` bytes of text or binary. Its first bytes are the
/// message's number on its connection: 8 bytes for a message of 8 bytes or
/// more, the low ones of a shorter counter below that (so a message of
/// `n < 8` bytes tells only `256^n` numbers apart, `16^n` for text). Binary
/// numbers are big-endian; text ones are lowercase hexadecimal digits, and
/// the text filler printable ASCII, so that a text message is valid UTF-8.
#[derive(Debug)]
pub(crate) struct WsMessage {
    host: String,
    path: String,
    text: bool,
    /// `size` bytes; the first `counter_len` are replaced by the number.
    filler: Vec<u8>,
}

impl WsMessage {
    /// The message for `path` on `host` (the authority, with its port),
    /// its filler drawn from `rng` (the run's seed).
    pub fn new(
        host: &str,
        path: &str,
        size: usize,
        text: bool,
        rng: &mut fastrand::Rng,
    ) -> Result<WsMessage, WsSizeError> {
        if !(1..=MAX_MESSAGE).contains(&size) {
            return Err(WsSizeError(size));
        }
        let filler = if text {
            (0..size).map(|_| rng.u8(b' '..=b'~')).collect()
        } else {
            let mut bytes = vec![0u8; size];
            rng.fill(&mut bytes);
            bytes
        };
        Ok(WsMessage {
            host: host.to_string(),
            path: path.to_string(),
            text,
            filler,
        })
    }

    pub fn size(&self) -> usize {
        self.filler.len()
    }

    #[allow(dead_code)] // the session's own tests use it; the worker does not yet
    pub fn is_text(&self) -> bool {
        self.text
    }

    fn counter_len(&self) -> usize {
        self.filler.len().min(COUNTER)
    }

    /// Message `seq`'s first bytes.
    fn counter(&self, seq: u64) -> [u8; COUNTER] {
        if !self.text {
            return seq.to_be_bytes();
        }
        std::array::from_fn(|i| b"0123456789abcdef"[((seq >> (4 * (7 - i))) & 0xf) as usize])
    }

    /// Message `seq`'s bytes: its counter (the low end), then the filler.
    fn parts<'a>(&'a self, seq: &'a [u8; COUNTER]) -> [&'a [u8]; 2] {
        let k = self.counter_len();
        [&seq[COUNTER - k..], &self.filler[k..]]
    }

    /// Appends message `seq` as one masked frame.
    fn put(&self, out: &mut Vec<u8>, seq: u64) {
        let op = if self.text {
            opcode::TEXT
        } else {
            opcode::BINARY
        };
        ws_frame::put_frame(out, op, true, &self.parts(&self.counter(seq)));
    }

    /// Why `got` (text or not) is not the echo of message `seq`.
    fn check(&self, seq: u64, text: bool, got: &[u8]) -> Option<Mismatch> {
        let counter = self.counter(seq);
        let [head, tail] = self.parts(&counter);
        if text == self.text
            && got.len() == self.size()
            && got.starts_with(head)
            && got[head.len()..] == *tail
        {
            return None;
        }
        let kind = |text| if text { "text" } else { "binary" };
        if text != self.text {
            return Some(Mismatch {
                status: SWITCHED,
                reason: format!(
                    "echo of message {seq} came as {}, sent as {}",
                    kind(text),
                    kind(self.text)
                ),
                expected: String::new(),
                got: String::new(),
            });
        }
        let want = [head, tail].concat();
        let at = first_difference(&want, got).unwrap_or(0);
        Some(Mismatch {
            status: SWITCHED,
            reason: format!(
                "echo of message {seq} differs at byte {at} (sent {} bytes, got {})",
                want.len(),
                got.len()
            ),
            expected: shown(&want[at.min(want.len())..]),
            got: shown(&got[at.min(got.len())..]),
        })
    }
}

/// An echo the server sent back.
#[derive(Debug)]
pub(crate) struct Finished {
    pub job: Job,
    /// Ok for an echo; a session that fails leaves its messages for
    /// [`WsConn::drain`] instead.
    pub outcome: Result<(), ErrorClass>,
    pub passed: bool,
    /// Why the echo differs from the message, when it does.
    pub mismatch: Option<Mismatch>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The upgrade is sent; the 101 has not come.
    Upgrading,
    Open,
    /// Our close is sent; the server's has not come.
    Closing,
    /// Closed both ways, refused or failed: nothing more is sent or read.
    Closed,
}

#[derive(Debug)]
pub(crate) struct WsConn {
    message: Arc<WsMessage>,
    check: bool,
    /// Hold mode: no message, the upgrade is the job.
    hold: bool,
    /// Hold mode: this slot's connection was opened once (and is not
    /// opened again once closed).
    spent: bool,
    state: State,
    key: String,
    /// Bytes owed to the server; `out[sent..]` is not written yet.
    out: Vec<u8>,
    sent: usize,
    /// Frames queued before the 101, which they follow.
    held: Vec<u8>,
    /// The answer to the upgrade, while its head is not whole.
    head: Vec<u8>,
    decoder: Decoder,
    /// Messages awaiting their echo, oldest first, with their numbers.
    queue: VecDeque<(Job, u64)>,
    next_seq: u64,
    /// Pings sent on this connection, and the first one no pong answered.
    pings: u64,
    ponged: u64,
    /// Why reading stopped, set while the decoder hands out events.
    stop: Option<WsFail>,
    /// Pongs that answered one of our pings (over every socket).
    pub pongs: u64,
    /// Upgrades the server accepted (over every socket).
    pub upgrades: u64,
    /// The codes of the server's closes (over every socket), for the
    /// worker to take and count per code.
    pub closes: Vec<u16>,
    /// Echoes read since the transport last took them.
    pub done: Vec<Finished>,
}

impl WsConn {
    /// A session for a new socket: the upgrade request is queued first.
    /// `check` compares every echo with its message.
    pub fn new(message: Arc<WsMessage>, check: bool) -> WsConn {
        let key = ws_handshake::new_key();
        let mut out = Vec::with_capacity(4096);
        ws_handshake::put_request(&mut out, &message.host, &message.path, &key);
        WsConn {
            message,
            check,
            hold: false,
            spent: false,
            state: State::Upgrading,
            key,
            out,
            sent: 0,
            held: Vec::new(),
            head: Vec::new(),
            decoder: Decoder::default(),
            queue: VecDeque::new(),
            next_seq: 0,
            pings: 0,
            ponged: 0,
            stop: None,
            pongs: 0,
            upgrades: 0,
            closes: Vec::new(),
            done: Vec::new(),
        }
    }

    /// A session of hold mode: the job pushed is the upgrade, finished by
    /// the 101; then nothing but pings.
    pub fn holding(message: Arc<WsMessage>) -> WsConn {
        WsConn {
            hold: true,
            ..WsConn::new(message, false)
        }
    }

    /// Starts over for the next socket (the messages were drained), with
    /// a new key; what the worker has not taken yet is kept.
    pub fn reset(&mut self) {
        let fresh = WsConn::new(self.message.clone(), self.check);
        let old = std::mem::replace(self, fresh);
        self.hold = old.hold;
        self.spent = old.spent;
        self.pongs = old.pongs;
        self.upgrades = old.upgrades;
        self.closes = old.closes;
        self.done = old.done;
    }

    /// How many messages may await their echo: 1 until the 101 (held back
    /// until it comes), then `depth`; none once a close was sent or came.
    pub fn room(&self, depth: usize) -> usize {
        match self.state {
            State::Upgrading if self.hold && self.spent => 0,
            State::Upgrading => 1,
            State::Open if self.hold => 0,
            State::Open => depth,
            State::Closing | State::Closed => 0,
        }
    }

    pub fn outstanding(&self) -> usize {
        self.queue.len()
    }

    /// The oldest message awaiting its echo.
    pub fn front(&self) -> Option<&Job> {
        self.queue.front().map(|(job, _)| job)
    }

    /// Takes every message awaiting its echo, oldest first.
    pub fn drain(&mut self) -> VecDeque<Job> {
        self.queue.drain(..).map(|(job, _)| job).collect()
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

    /// Hold mode, once opened: the slot takes no more work (its
    /// connection is open and idle, or was closed and stays so).
    pub fn retired(&self) -> bool {
        self.hold && self.spent
    }

    /// Whether the 101 came and no close was sent or received.
    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// Whether our close was sent and the server's has not come.
    pub fn is_closing(&self) -> bool {
        self.state == State::Closing
    }

    /// Whether the session is over (closed both ways, refused or failed):
    /// the socket may close once [`WsConn::pending`] is written.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Pings sent that no pong answered (a pong answers its ping and any
    /// earlier one, RFC 6455 §5.5.3).
    #[allow(dead_code)] // the session's own tests use it; the worker does not yet
    pub fn unanswered_pings(&self) -> u64 {
        self.pings - self.ponged
    }

    /// Queues one message, to await its echo (as `room` allows).
    pub fn push(&mut self, job: Job) {
        if self.hold {
            self.queue.push_back((job, 0));
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let out = if self.state == State::Upgrading {
            &mut self.held
        } else {
            &mut self.out
        };
        self.message.put(out, seq);
        self.queue.push_back((job, seq));
    }

    /// Queues a ping carrying its number on this connection (8 bytes).
    pub fn ping(&mut self) {
        if matches!(self.state, State::Closing | State::Closed) {
            return;
        }
        let n = self.pings;
        self.pings += 1;
        ws_frame::put_frame(self.queue_to(), opcode::PING, true, &[&n.to_be_bytes()]);
    }

    /// Queues our close with `code`; the session ends when the server's
    /// close answers it (its messages awaiting an echo are the caller's to
    /// drain first: their echoes, still in flight, are then let be). Before
    /// the 101 nothing may be sent: the session just ends, and the socket
    /// may close.
    pub fn close(&mut self, code: u16) {
        match self.state {
            State::Upgrading => self.state = State::Closed,
            State::Open => {
                ws_frame::put_close(&mut self.out, code, "");
                self.state = State::Closing;
            }
            State::Closing | State::Closed => {}
        }
    }

    /// Where a frame goes: held back until the 101, else out.
    fn queue_to(&mut self) -> &mut Vec<u8> {
        if self.state == State::Upgrading {
            &mut self.held
        } else {
            &mut self.out
        }
    }

    /// Reads the answer to the upgrade, then frames, from `data`.
    pub fn feed(&mut self, data: &[u8]) -> Result<(), WsFail> {
        match self.state {
            State::Closed => Ok(()),
            State::Upgrading => self.upgrade(data),
            State::Open | State::Closing => self.frames(data),
        }
    }

    fn upgrade(&mut self, data: &[u8]) -> Result<(), WsFail> {
        let buf = if self.head.is_empty() {
            std::borrow::Cow::Borrowed(data)
        } else {
            self.head.extend_from_slice(data);
            std::borrow::Cow::Owned(std::mem::take(&mut self.head))
        };
        match ws_handshake::check_answer(&buf, &self.key) {
            Ok(None) => {
                self.head = buf.into_owned();
                Ok(())
            }
            Ok(Some(len)) => {
                self.opened();
                self.frames(&buf[len..])
            }
            Err(fail) => {
                self.state = State::Closed;
                Err(fail.into())
            }
        }
    }

    /// The 101 came: what was held back leaves, its send time taken now.
    fn opened(&mut self) {
        self.state = State::Open;
        self.upgrades += 1;
        if self.hold {
            // The upgrade was the job: finished, from its own send.
            self.spent = true;
            for (job, _) in self.queue.drain(..) {
                self.done.push(Finished {
                    job,
                    outcome: Ok(()),
                    passed: true,
                    mismatch: None,
                });
            }
            return;
        }
        let held = std::mem::take(&mut self.held);
        self.out.extend_from_slice(&held);
        let now = Instant::now();
        for (job, _) in &mut self.queue {
            job.sent_at = now;
        }
    }

    fn frames(&mut self, data: &[u8]) -> Result<(), WsFail> {
        let mut decoder = std::mem::take(&mut self.decoder);
        let result = decoder.feed(data, &mut |event| self.on_event(event));
        self.decoder = decoder;
        if let Err(v) = result {
            ws_frame::put_close(&mut self.out, v.code, "");
            self.state = State::Closed;
            return Err(WsFail::Violation(v.why));
        }
        match self.stop.take() {
            Some(fail) => Err(fail),
            None => Ok(()),
        }
    }

    /// One event from the server; false stops reading.
    fn on_event(&mut self, event: Event<'_>) -> bool {
        match event {
            Event::Message { text, data } => self.echo(text, data),
            Event::Ping(payload) => {
                if self.state == State::Open {
                    ws_frame::put_frame(&mut self.out, opcode::PONG, true, &[payload]);
                }
                true
            }
            Event::Pong(payload) => {
                // Unsolicited pongs (a heartbeat, §5.5.3) are let be.
                if let Ok(n) = <[u8; 8]>::try_from(payload).map(u64::from_be_bytes) {
                    if (self.ponged..self.pings).contains(&n) {
                        self.pongs += 1;
                        self.ponged = n + 1;
                    }
                }
                true
            }
            Event::Close { code: got, .. } => {
                if self.state == State::Open {
                    // Unasked: answered with its own code (§5.5.1).
                    let reply = if got == code::NO_STATUS {
                        code::NORMAL
                    } else {
                        got
                    };
                    ws_frame::put_close(&mut self.out, reply, "");
                    self.closes.push(got);
                    self.stop = Some(WsFail::Closed(got));
                } else if got != code::NORMAL && got != code::NO_STATUS {
                    // Ours and the server's own crossed: its code is its
                    // close, not an answer to ours (§7.1.2).
                    self.closes.push(got);
                }
                self.state = State::Closed;
                false
            }
        }
    }

    fn echo(&mut self, text: bool, data: &[u8]) -> bool {
        if self.state == State::Closing && self.queue.is_empty() {
            // The echo of a message drained before our close: let be.
            return true;
        }
        let Some((job, seq)) = self.queue.pop_front() else {
            ws_frame::put_close(&mut self.out, code::PROTOCOL, "");
            self.state = State::Closed;
            self.stop = Some(WsFail::Violation(
                "a message when no message of ours awaited its echo",
            ));
            return false;
        };
        let mismatch = if self.check {
            self.message.check(seq, text, data)
        } else {
            None
        };
        self.done.push(Finished {
            job,
            outcome: Ok(()),
            passed: mismatch.is_none(),
            mismatch,
        });
        true
    }

    /// The server ended the connection. With no close frame while open,
    /// that is a close with code 1006 (RFC 6455 §7.1.5), counted as one;
    /// before the 101 it is left to the transport (as for HTTP, a read
    /// error); after a close it is the expected end.
    pub fn on_eof(&mut self) -> Result<(), WsFail> {
        let was = self.state;
        self.state = State::Closed;
        if was == State::Open {
            self.closes.push(code::ABNORMAL);
            return Err(WsFail::Closed(code::ABNORMAL));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "ws_conn_tests.rs"]
mod tests;
