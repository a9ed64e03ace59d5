//! The rules of the conformance server (`h2_server`): what it announces
//! and grants ([`Rules`]), what it saw ([`Seen`]), and, without I/O, one
//! connection's frames from the client checked against RFC 9113's client
//! rules, and the frames the server owes (SETTINGS, late WINDOW_UPDATEs,
//! answers, a GOAWAY naming a violation).
//!
//! The server's SETTINGS bind the client only once it acknowledges them
//! (§6.5.3): until the ACK arrives in the byte stream the defaults hold
//! (65,535-byte windows, 16,384-byte frames, no stream limit), and at the
//! ACK every open stream's window moves by the change, possibly below zero
//! (§6.9.2). So a client that sent under the old values before it saw the
//! new ones is never blamed, and one that ignores a change is.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const DEFAULT_WINDOW: i64 = 65_535;
const DEFAULT_FRAME: usize = 16_384;
const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PROTOCOL_ERROR: u32 = 0x1;
const FLOW_CONTROL_ERROR: u32 = 0x3;
const STREAM_CLOSED: u32 = 0x5;
const FRAME_SIZE_ERROR: u32 = 0x6;

/// What the server announces and how it grants window.
#[derive(Debug, Clone)]
pub struct Rules {
    /// SETTINGS_INITIAL_WINDOW_SIZE announced (and enforced once acknowledged).
    pub initial_window: u32,
    /// SETTINGS_MAX_CONCURRENT_STREAMS announced, when any.
    pub max_streams: Option<u32>,
    /// SETTINGS_MAX_FRAME_SIZE announced, when any (16384 otherwise).
    pub max_frame: Option<u32>,
    /// Every request body's length; another length is a violation.
    pub body_len: usize,
    /// How long a WINDOW_UPDATE waits after the data that earned it (or a
    /// stream found with no window) before it is sent.
    pub update_delay: Duration,
    /// The stream WINDOW_UPDATE's increment when a stream has no window
    /// left; 0 grants none (only a SETTINGS change can then open one).
    pub stream_step: u32,
    /// Once this many streams of a connection were answered, the next
    /// stream found without window announces this initial window instead
    /// of being granted (a change mid-connection, with bodies under way).
    pub change_window: Option<(u64, u32)>,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            initial_window: 65_535,
            max_streams: None,
            max_frame: None,
            body_len: 0,
            update_delay: Duration::from_millis(20),
            stream_step: 100,
            change_window: None,
        }
    }
}

/// What the server saw, across its connections.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Each broken rule, one line each (`DATA beyond the stream window …`).
    pub violations: Vec<String>,
    /// Requests answered (whole, with the right body length).
    pub answered: u64,
    /// Body bytes received.
    pub body_bytes: u64,
    /// Connections accepted.
    pub connections: u64,
    /// The most streams open at once on one connection.
    pub max_open: usize,
    /// WINDOW_UPDATE frames sent, and SETTINGS changes sent after the first.
    pub updates_sent: u64,
    pub window_changes: u64,
}

/// What the connection does after a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Go,
    /// A rule was broken: the GOAWAY is queued, then the connection closes.
    Close,
}

#[derive(Debug)]
struct Stream {
    /// The client's send window on this stream, as the server counts it.
    window: i64,
    received: usize,
    /// A WINDOW_UPDATE for it is scheduled.
    granting: bool,
}

/// A frame to send later (a late grant, or the mid-connection SETTINGS).
#[derive(Debug)]
struct Later {
    at: Instant,
    stream: u32,
    increment: u32,
}

#[derive(Debug)]
pub(crate) struct Session {
    rules: Rules,
    input: Vec<u8>,
    out: Vec<u8>,
    preface: bool,
    /// The values in force (the defaults until our SETTINGS are acknowledged).
    initial: i64,
    max_frame: usize,
    max_streams: Option<usize>,
    /// SETTINGS sent and not yet acknowledged, oldest first.
    unacked: Vec<(i64, usize, Option<usize>)>,
    window: i64,
    streams: BTreeMap<u32, Stream>,
    last_id: u32,
    later: Vec<Later>,
    answered: u64,
    changed: bool,
    seen: Seen,
}

impl Session {
    pub fn new(rules: Rules) -> Session {
        let mut s = Session {
            input: Vec::new(),
            out: Vec::new(),
            preface: false,
            initial: DEFAULT_WINDOW,
            max_frame: DEFAULT_FRAME,
            max_streams: None,
            unacked: Vec::new(),
            window: DEFAULT_WINDOW,
            streams: BTreeMap::new(),
            last_id: 0,
            later: Vec::new(),
            answered: 0,
            changed: false,
            seen: Seen::default(),
            rules,
        };
        let (w, f, m) = (
            s.rules.initial_window,
            s.rules.max_frame,
            s.rules.max_streams,
        );
        s.announce(w, f, m);
        s
    }

    pub fn take_out(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Adds what this session saw since the last report to `total`.
    pub fn report(&mut self, total: &mut Seen) {
        let s = std::mem::take(&mut self.seen);
        total.violations.extend(s.violations);
        total.answered += s.answered;
        total.body_bytes += s.body_bytes;
        total.max_open = total.max_open.max(s.max_open);
        total.updates_sent += s.updates_sent;
        total.window_changes += s.window_changes;
    }

    fn announce(&mut self, window: u32, frame: Option<u32>, streams: Option<u32>) {
        let mut payload = Vec::new();
        let mut pair = |id: u16, v: u32| {
            payload.extend_from_slice(&id.to_be_bytes());
            payload.extend_from_slice(&v.to_be_bytes());
        };
        pair(0x4, window);
        if let Some(f) = frame {
            pair(0x5, f);
        }
        if let Some(m) = streams {
            pair(0x3, m);
        }
        frame_out(&mut self.out, SETTINGS, 0, 0, &payload);
        self.unacked.push((
            i64::from(window),
            frame.map_or(self.max_frame, |f| f as usize),
            streams.map(|m| m as usize).or(self.max_streams),
        ));
    }

    /// Sends the grants that are due.
    pub fn tick(&mut self, now: Instant) -> Step {
        let (due, rest): (Vec<Later>, Vec<Later>) = std::mem::take(&mut self.later)
            .into_iter()
            .partition(|l| l.at <= now);
        self.later = rest;
        for l in due {
            if l.stream != 0 {
                let Some(s) = self.streams.get_mut(&l.stream) else {
                    continue;
                };
                s.window += i64::from(l.increment);
                s.granting = false;
            } else {
                self.window += i64::from(l.increment);
            }
            frame_out(
                &mut self.out,
                WINDOW_UPDATE,
                0,
                l.stream,
                &l.increment.to_be_bytes(),
            );
            self.seen.updates_sent += 1;
            self.starved(l.stream, now);
        }
        Step::Go
    }

    /// Reads frames; a broken rule queues GOAWAY and closes.
    pub fn feed(&mut self, data: &[u8], now: Instant) -> Step {
        self.input.extend_from_slice(data);
        if !self.preface {
            if self.input.len() < PREFACE.len() {
                return Step::Go;
            }
            if !self.input.starts_with(PREFACE) {
                return self.violation(PROTOCOL_ERROR, "no client connection preface".into());
            }
            self.input.drain(..PREFACE.len());
            self.preface = true;
        }
        let mut at = 0;
        while self.input.len() - at >= 9 {
            let h = &self.input[at..];
            let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
            let (kind, flags) = (h[3], h[4]);
            let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            if len > self.max_frame {
                return self.violation(
                    FRAME_SIZE_ERROR,
                    format!(
                        "a frame of {len} bytes (type {kind}) over the frame size {}",
                        self.max_frame
                    ),
                );
            }
            if self.input.len() - at - 9 < len {
                break;
            }
            let payload = self.input[at + 9..at + 9 + len].to_vec();
            at += 9 + len;
            if self.frame(kind, flags, stream, &payload, now) == Step::Close {
                return Step::Close;
            }
        }
        self.input.drain(..at);
        self.tick(now)
    }

    fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8], now: Instant) -> Step {
        match kind {
            SETTINGS if flags & ACK != 0 => self.acked(now),
            SETTINGS => {
                frame_out(&mut self.out, SETTINGS, ACK, 0, &[]);
                Step::Go
            }
            PING if flags & ACK == 0 => {
                frame_out(&mut self.out, PING, ACK, 0, payload);
                Step::Go
            }
            HEADERS => self.headers(flags, stream, now),
            CONTINUATION => self.violation(PROTOCOL_ERROR, "an unexpected CONTINUATION".into()),
            DATA => self.data(flags, stream, payload, now),
            RST_STREAM => {
                self.streams.remove(&stream);
                Step::Go
            }
            _ => Step::Go,
        }
    }

    /// Our oldest SETTINGS now bind: open streams' windows move by the change.
    fn acked(&mut self, now: Instant) -> Step {
        if self.unacked.is_empty() {
            return self.violation(PROTOCOL_ERROR, "a SETTINGS ACK for no SETTINGS".into());
        }
        let (initial, frame, streams) = self.unacked.remove(0);
        let delta = initial - self.initial;
        (self.initial, self.max_frame, self.max_streams) = (initial, frame, streams);
        let ids: Vec<u32> = self.streams.keys().copied().collect();
        for id in ids {
            if let Some(s) = self.streams.get_mut(&id) {
                s.window += delta;
            }
            self.starved(id, now);
        }
        Step::Go
    }

    fn headers(&mut self, flags: u8, id: u32, now: Instant) -> Step {
        if flags & END_HEADERS == 0 {
            return self.violation(PROTOCOL_ERROR, "a header block without END_HEADERS".into());
        }
        if id % 2 == 0 || id <= self.last_id {
            return self.violation(
                PROTOCOL_ERROR,
                format!("HEADERS on stream {id}, after {}", self.last_id),
            );
        }
        self.last_id = id;
        if let Some(max) = self.max_streams {
            if self.streams.len() >= max {
                return self.violation(
                    PROTOCOL_ERROR,
                    format!(
                        "stream {id} opened with {} open: more than the {max} allowed",
                        self.streams.len()
                    ),
                );
            }
        }
        let window = self.initial;
        self.streams.insert(
            id,
            Stream {
                window,
                received: 0,
                granting: false,
            },
        );
        self.seen.max_open = self.seen.max_open.max(self.streams.len());
        if flags & END_STREAM != 0 {
            return self.end(id, now);
        }
        self.starved(id, now);
        Step::Go
    }

    fn data(&mut self, flags: u8, id: u32, payload: &[u8], now: Instant) -> Step {
        let n = payload.len();
        let Some(s) = self.streams.get_mut(&id) else {
            return self.violation(
                STREAM_CLOSED,
                format!("DATA on stream {id}, which is not open"),
            );
        };
        s.window -= n as i64;
        s.received += n;
        let stream_window = s.window;
        self.window -= n as i64;
        self.seen.body_bytes += n as u64;
        if self.window < 0 {
            return self.violation(
                FLOW_CONTROL_ERROR,
                format!(
                    "DATA beyond the connection window: {} bytes over",
                    -self.window
                ),
            );
        }
        if stream_window < 0 {
            return self.violation(
                FLOW_CONTROL_ERROR,
                format!(
                    "DATA beyond stream {id}'s window: {} bytes over",
                    -stream_window
                ),
            );
        }
        if n > 0 {
            // The connection's window comes back late.
            self.later.push(Later {
                at: now + self.rules.update_delay,
                stream: 0,
                increment: n as u32,
            });
        }
        if flags & END_STREAM != 0 {
            return self.end(id, now);
        }
        self.starved(id, now);
        Step::Go
    }

    /// The request is whole: its body checked, then answered.
    fn end(&mut self, id: u32, now: Instant) -> Step {
        let received = self.streams.remove(&id).map_or(0, |s| s.received);
        if received != self.rules.body_len {
            return self.violation(
                PROTOCOL_ERROR,
                format!(
                    "stream {id} ended with {received} body bytes, not {}",
                    self.rules.body_len
                ),
            );
        }
        frame_out(&mut self.out, HEADERS, END_HEADERS, id, &[0x88]);
        frame_out(&mut self.out, DATA, END_STREAM, id, b"ok");
        self.answered += 1;
        self.seen.answered += 1;
        self.tick(now)
    }

    /// A stream with no window left gets a grant, late; the first such
    /// stream after the answers `change_window` names announces the new
    /// initial window instead, so that streams are open mid-body when it
    /// binds.
    fn starved(&mut self, id: u32, now: Instant) {
        let step = self.rules.stream_step;
        let at = now + self.rules.update_delay;
        let Some(s) = self.streams.get_mut(&id) else {
            return;
        };
        if s.window > 0 || s.granting {
            return;
        }
        if let Some((after, window)) = self.rules.change_window {
            if !self.changed && self.answered >= after {
                self.changed = true;
                self.seen.window_changes += 1;
                let (f, m) = (self.rules.max_frame, self.rules.max_streams);
                return self.announce(window, f, m);
            }
        }
        if step > 0 {
            s.granting = true;
            self.later.push(Later {
                at,
                stream: id,
                increment: step,
            });
        }
    }

    fn violation(&mut self, code: u32, what: String) -> Step {
        self.seen.violations.push(what);
        let mut payload = self.last_id.to_be_bytes().to_vec();
        payload.extend_from_slice(&code.to_be_bytes());
        frame_out(&mut self.out, GOAWAY, 0, 0, &payload);
        Step::Close
    }
}

fn frame_out(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = (payload.len() as u32).to_be_bytes();
    out.extend_from_slice(&len[1..]);
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}
