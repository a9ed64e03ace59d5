//! The WebSocket echo at `/ws` (targets/SPEC.md "WebSocket") of a target
//! whose manifest claims `ws`, on `PORT` or, for a target with
//! `ws_port = true`, on the `WS_PORT` it is started with (`ws_env`). The
//! checks, each on a connection of its own and each failing in its own
//! words: the handshake (101 with the right `Sec-WebSocket-Accept`); the
//! echo of random text and binary messages of 1 B to 1 MiB, across the
//! three payload-length encodings, the 64 KiB ones sent in four fragments;
//! a ping answered by a pong with its payload; a close (1000) answered by
//! a close (1000) and the TCP connection closed; and an unmasked client
//! frame answered by a close with 1002 (or at least a closed connection),
//! never an echo or a hang.
//!
//! The verifier's client is `tungstenite`, a library nobody here wrote, so
//! the targets are checked independently of the load engine's own
//! WebSocket client. No client library sends an unmasked frame: that one
//! is written as raw bytes on tungstenite's connection after its handshake,
//! and the answer read as raw bytes. Payloads are random on every run
//! (fastrand), so no canned answer passes; every read has a limit of
//! [`LIMIT`] and every loop a bound, so a server that hangs fails a check
//! instead of hanging the verifier.

use super::failure::Failure;
use super::model::{Aspect, Check, Column};
use super::tls::wait_open;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use tungstenite::error::ProtocolError;
use tungstenite::handshake::HandshakeError;
use tungstenite::protocol::frame::coding::{CloseCode, Data, OpCode};
use tungstenite::protocol::frame::{CloseFrame, Frame};
use tungstenite::{Error, Message, WebSocket};

/// The longest any answer may take (targets/SPEC.md: 2 s).
const LIMIT: Duration = Duration::from_secs(2);

/// The echoed sizes: both ends of the 7-bit length, both ends of the
/// 16-bit one, the first 64-bit one, and SPEC.md's largest message.
const SIZES: [usize; 6] = [1, 125, 126, 65_535, FRAGMENTED, 1 << 20];

/// The size sent in [`FRAGMENTS`] frames (a first frame and continuations).
const FRAGMENTED: usize = 65_536;
const FRAGMENTS: usize = 4;

/// The most messages read while waiting for one answer: pings and pongs
/// the server sends of its own accord are passed over, up to this many.
const MAX_READS: usize = 64;

/// The status an unmasked client frame must be answered with (RFC 6455
/// §5.1, §7.4.1: protocol error).
const PROTOCOL_ERROR: u16 = 1002;

type Ws = WebSocket<TcpStream>;

/// Why a check failed: the sentence its `Failure::Ws` carries.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Why(String);

impl From<String> for Why {
    fn from(why: String) -> Why {
        Why(why)
    }
}

/// The WebSocket checks of a started server whose `/ws` is at `addr`, a
/// port that may open up to `wait` after the server answered `ready`.
pub(super) fn check_ws(addr: SocketAddr, wait: Duration) -> Vec<Check> {
    if let Err(why) = wait_open("WebSocket", addr, wait) {
        return vec![fail(Aspect::Start, "port", why.to_string())];
    }
    let mut checks = vec![Check::pass(Column::Ws, Aspect::Start)];
    let mut ws = match connect(addr) {
        Ok(ws) => ws,
        Err(why) => {
            checks.push(fail(Aspect::Handshake, "handshake", why.0));
            return checks;
        }
    };
    checks.push(Check::pass(Column::Ws, Aspect::Handshake));
    let mut rng = fastrand::Rng::new();
    checks.push(verdict(Aspect::Echo, "echo", echo(&mut ws, &mut rng)));
    drop(ws);
    let pong = connect(addr).and_then(|mut ws| ping(&mut ws, &mut rng));
    checks.push(verdict(Aspect::Pong, "ping", pong));
    let closed = connect(addr).and_then(close);
    checks.push(verdict(Aspect::CloseHandshake, "close", closed));
    let refused = connect(addr).and_then(|mut ws| unmasked(&mut ws, &mut rng));
    checks.push(match refused {
        Ok(note) => Check {
            note,
            ..Check::pass(Column::Ws, Aspect::Unmasked)
        },
        Err(why) => fail(Aspect::Unmasked, "unmasked frame", why.0),
    });
    checks
}

fn fail(aspect: Aspect, check: &'static str, why: String) -> Check {
    Check::fail(Column::Ws, aspect, Failure::Ws { check, why })
}

fn verdict(aspect: Aspect, check: &'static str, result: Result<(), Why>) -> Check {
    match result {
        Ok(()) => Check::pass(Column::Ws, aspect),
        Err(why) => fail(aspect, check, why.0),
    }
}

/// A new connection to `/ws` through tungstenite's handshake, which checks
/// the 101 and its `Sec-WebSocket-Accept`.
fn connect(addr: SocketAddr) -> Result<Ws, Why> {
    let sock = TcpStream::connect_timeout(&addr, LIMIT).map_err(|e| format!("connect: {e}"))?;
    let set = |s: &TcpStream| {
        s.set_read_timeout(Some(LIMIT))?;
        s.set_write_timeout(Some(LIMIT))?;
        s.set_nodelay(true)
    };
    set(&sock).map_err(|e| format!("connect: {e}"))?;
    let url = format!("ws://{addr}/ws");
    match tungstenite::client::client(url.as_str(), sock) {
        Ok((ws, _)) => Ok(ws),
        // A blocking socket is "interrupted" only by its read timeout.
        Err(HandshakeError::Interrupted(_)) => Err(Why(format!(
            "GET /ws with Upgrade: websocket got no answer within {} s",
            LIMIT.as_secs()
        ))),
        Err(HandshakeError::Failure(Error::Http(resp))) => Err(Why(format!(
            "GET /ws with Upgrade: websocket answered {}, expected 101 Switching Protocols",
            resp.status()
        ))),
        Err(HandshakeError::Failure(e)) => {
            Err(Why(format!("GET /ws with Upgrade: websocket: {e}")))
        }
    }
}

/// Why no message came.
enum Fault {
    TimedOut,
    /// The TCP connection ended without a close frame.
    Dropped,
    Broken(Error),
}

/// The next message before `deadline` that `skip` does not pass over.
fn next(ws: &mut Ws, deadline: Instant, skip: fn(&Message) -> bool) -> Result<Message, Fault> {
    for _ in 0..MAX_READS {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Fault::TimedOut);
        }
        ws.get_mut()
            .set_read_timeout(Some(left))
            .map_err(|e| Fault::Broken(e.into()))?;
        match ws.read() {
            Ok(m) if skip(&m) => {}
            Ok(m) => return Ok(m),
            Err(e) => return Err(fault(e)),
        }
    }
    Err(Fault::Broken(Error::Io(io::Error::other(format!(
        "{MAX_READS} pings or pongs and nothing else"
    )))))
}

fn fault(e: Error) -> Fault {
    match e {
        Error::Io(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Fault::TimedOut
        }
        Error::Io(e)
            if matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::UnexpectedEof
            ) =>
        {
            Fault::Dropped
        }
        Error::ConnectionClosed
        | Error::AlreadyClosed
        | Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => Fault::Dropped,
        e => Fault::Broken(e),
    }
}

fn control(m: &Message) -> bool {
    matches!(m, Message::Ping(_) | Message::Pong(_))
}

fn server_ping(m: &Message) -> bool {
    matches!(m, Message::Ping(_))
}

/// A message in words: "a binary message of 12 bytes", "a close frame
/// (1011 \"bye\")".
fn describe(m: &Message) -> String {
    match m {
        Message::Text(t) => format!("a text message of {}", bytes(t.len())),
        Message::Binary(b) => format!("a binary message of {}", bytes(b.len())),
        Message::Ping(_) => "a ping".into(),
        Message::Pong(_) => "a pong".into(),
        Message::Close(Some(f)) if f.reason.is_empty() => {
            format!("a close frame ({})", u16::from(f.code))
        }
        Message::Close(Some(f)) => {
            format!(
                "a close frame ({} {:?})",
                u16::from(f.code),
                f.reason.as_str()
            )
        }
        Message::Close(None) => "a close frame without a status code".into(),
        Message::Frame(_) => "a raw frame".into(),
    }
}

/// "1 byte", "12 bytes".
fn bytes(n: usize) -> String {
    match n {
        1 => "1 byte".into(),
        n => format!("{n} bytes"),
    }
}

/// `size` random bytes of UTF-8 text: mostly ASCII, with two- and
/// three-byte characters among them.
fn random_text(rng: &mut fastrand::Rng, size: usize) -> String {
    const WIDE: [char; 4] = ['é', 'ß', '€', 'ж'];
    let mut text = String::with_capacity(size);
    while text.len() < size {
        let wide = WIDE[rng.usize(..WIDE.len())];
        if size - text.len() >= wide.len_utf8() && rng.u8(..) < 16 {
            text.push(wide);
        } else {
            text.push(rng.alphanumeric());
        }
    }
    text
}

/// One message of the echo check and how it went out.
struct Sent {
    text: bool,
    payload: Vec<u8>,
    fragments: usize,
}

impl Sent {
    fn random(rng: &mut fastrand::Rng, size: usize, text: bool) -> Sent {
        let payload = if text {
            random_text(rng, size).into_bytes()
        } else {
            let mut bytes = vec![0; size];
            rng.fill(&mut bytes);
            bytes
        };
        let fragments = if size == FRAGMENTED { FRAGMENTS } else { 1 };
        Sent {
            text,
            payload,
            fragments,
        }
    }

    /// "the 65536-byte text message in 4 fragments".
    fn name(&self) -> String {
        let kind = if self.text { "text" } else { "binary" };
        let parts = match self.fragments {
            1 => String::new(),
            n => format!(" in {n} fragments"),
        };
        format!("the {}-byte {kind} message{parts}", self.payload.len())
    }

    /// The message as frames: one, or a first frame and continuations,
    /// split (for text) where a character starts.
    fn frames(&self) -> Vec<Frame> {
        let kind = if self.text { Data::Text } else { Data::Binary };
        let len = self.payload.len();
        let mut cuts = vec![0];
        for i in 1..self.fragments {
            let mut at = len * i / self.fragments;
            while self.text && at > 0 && (self.payload[at] & 0xC0) == 0x80 {
                at -= 1;
            }
            cuts.push(at);
        }
        cuts.push(len);
        cuts.windows(2)
            .enumerate()
            .map(|(i, w)| {
                let op = if i == 0 { kind } else { Data::Continue };
                let last = i + 1 == self.fragments;
                Frame::message(self.payload[w[0]..w[1]].to_vec(), OpCode::Data(op), last)
            })
            .collect()
    }
}

/// Every size as text and as binary, each echoed byte for byte as one
/// message of its type.
fn echo(ws: &mut Ws, rng: &mut fastrand::Rng) -> Result<(), Why> {
    for size in SIZES {
        for text in [true, false] {
            let sent = Sent::random(rng, size, text);
            let name = sent.name();
            let deadline = Instant::now() + LIMIT;
            for frame in sent.frames() {
                ws.write(Message::Frame(frame))
                    .map_err(|e| format!("sending {name}: {e}"))?;
            }
            ws.flush().map_err(|e| format!("sending {name}: {e}"))?;
            let got = match next(ws, deadline, control) {
                Ok(m) => m,
                Err(Fault::TimedOut) => {
                    return Err(Why(format!(
                        "no echo of {name} within {} s",
                        LIMIT.as_secs()
                    )))
                }
                Err(Fault::Dropped) => {
                    return Err(Why(format!(
                        "the server closed the connection instead of echoing {name}"
                    )))
                }
                Err(Fault::Broken(e)) => {
                    return Err(Why(format!("reading the echo of {name}: {e}")))
                }
            };
            let (text, echoed): (bool, &[u8]) = match &got {
                Message::Text(t) => (true, t.as_bytes()),
                Message::Binary(b) => (false, b),
                other => {
                    return Err(Why(format!(
                        "{name} was answered by {} instead of its echo",
                        describe(other)
                    )))
                }
            };
            if text != sent.text {
                return Err(Why(format!("{name} came back as {}", describe(&got))));
            }
            if echoed != sent.payload.as_slice() {
                let at = echoed
                    .iter()
                    .zip(&sent.payload)
                    .position(|(a, b)| a != b)
                    .unwrap_or(echoed.len().min(sent.payload.len()));
                return Err(Why(format!(
                    "{name} came back as {}, different from byte {at} on",
                    describe(&got)
                )));
            }
        }
    }
    Ok(())
}

/// A ping with a random payload is answered by a pong with that payload.
fn ping(ws: &mut Ws, rng: &mut fastrand::Rng) -> Result<(), Why> {
    let mut payload = vec![0; rng.usize(1..=125)];
    rng.fill(&mut payload);
    let deadline = Instant::now() + LIMIT;
    ws.send(Message::Ping(payload.clone().into()))
        .map_err(|e| format!("sending the ping: {e}"))?;
    match next(ws, deadline, server_ping) {
        Ok(Message::Pong(p)) if p.as_ref() == payload.as_slice() => Ok(()),
        Ok(Message::Pong(p)) => Err(Why(format!(
            "the pong carried {} other than the ping's {}",
            bytes(p.len()),
            bytes(payload.len())
        ))),
        Ok(m) => Err(Why(format!(
            "answered by {} instead of a pong",
            describe(&m)
        ))),
        Err(Fault::TimedOut) => Err(Why(format!("no pong within {} s", LIMIT.as_secs()))),
        Err(Fault::Dropped) => Err(Why(
            "the server closed the connection instead of a pong".into()
        )),
        Err(Fault::Broken(e)) => Err(Why(format!("reading the pong: {e}"))),
    }
}

/// A close (1000) is answered by a close (1000), then the TCP connection
/// is closed.
fn close(mut ws: Ws) -> Result<(), Why> {
    let deadline = Instant::now() + LIMIT;
    let normal = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    ws.close(Some(normal))
        .map_err(|e| format!("sending a close frame: {e}"))?;
    let secs = LIMIT.as_secs();
    match next(&mut ws, deadline, control) {
        Ok(Message::Close(Some(f))) if f.code == CloseCode::Normal => {}
        Ok(m) => {
            return Err(Why(format!(
                "a close (1000) was answered by {}",
                describe(&m)
            )))
        }
        Err(Fault::TimedOut) => return Err(Why(format!("no close frame within {secs} s"))),
        Err(Fault::Dropped) => {
            return Err(Why(
                "the server closed the TCP connection without a close frame".into(),
            ))
        }
        Err(Fault::Broken(e)) => return Err(Why(format!("reading the close frame: {e}"))),
    }
    match next(&mut ws, deadline, control) {
        Err(Fault::Dropped) => Ok(()),
        Err(Fault::TimedOut) => Err(Why(format!(
            "the TCP connection was still open {secs} s after the close"
        ))),
        Ok(m) => Err(Why(format!("{} came after the close frame", describe(&m)))),
        Err(Fault::Broken(e)) => Err(Why(format!("after the close frame: {e}"))),
    }
}

/// An unmasked text frame (which a server must refuse, RFC 6455 §5.1) is
/// answered by a close with 1002, or at least by closing the connection;
/// a note when it was only closed.
fn unmasked(ws: &mut Ws, rng: &mut fastrand::Rng) -> Result<Option<String>, Why> {
    let payload: Vec<u8> = (0..rng.usize(8..=32))
        .map(|_| rng.alphanumeric() as u8)
        .collect();
    let mut frame = vec![0x81, payload.len() as u8];
    frame.extend_from_slice(&payload);
    let sock = ws.get_mut();
    sock.write_all(&frame)
        .and_then(|()| sock.flush())
        .map_err(|e| format!("sending it: {e}"))?;
    let deadline = Instant::now() + LIMIT;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // Each read adds bytes or ends; the deadline bounds the reads.
    loop {
        let mut at = 0;
        while let Some((op, body, len)) = parse_frame(&got[at..]) {
            at += len;
            let code = body.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
            return match op {
                0x8 if code == Some(PROTOCOL_ERROR) => Ok(None),
                0x8 => Err(Why(match code {
                    Some(c) => format!("the server closed with {c} instead of {PROTOCOL_ERROR}"),
                    None => format!(
                        "the server sent a close frame without a status code instead of {PROTOCOL_ERROR}"
                    ),
                })),
                0x9 | 0xA => continue,
                0x1 | 0x2 if body == payload.as_slice() => Err(Why(format!(
                    "the server echoed it instead of closing with {PROTOCOL_ERROR}"
                ))),
                _ => Err(Why(format!(
                    "the server answered with a frame of opcode {op:#x} instead of closing with {PROTOCOL_ERROR}"
                ))),
            };
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Why(format!(
                "no close frame and the connection still open after {} s",
                LIMIT.as_secs()
            )));
        }
        sock.set_read_timeout(Some(left))
            .map_err(|e| format!("reading the answer: {e}"))?;
        match sock.read(&mut buf) {
            Ok(0) => return Ok(Some(closed_note(got.len()))),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionReset) => {
                return Ok(Some(closed_note(got.len())))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(Why(format!("reading the answer: {e}"))),
        }
    }
}

fn closed_note(bytes: usize) -> String {
    let partial = match bytes {
        0 => String::new(),
        n => format!(" (after {n} bytes of an incomplete frame)"),
    };
    format!(
        "an unmasked frame closed the connection without a close frame{partial}; SPEC.md asks for a close with {PROTOCOL_ERROR}"
    )
}

/// The first whole frame of `bytes`: opcode, payload (unmasked) and the
/// bytes it took; None until it is all there.
fn parse_frame(bytes: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    let [first, second, rest @ ..] = bytes else {
        return None;
    };
    let (len, rest) = match second & 0x7F {
        126 => (
            u64::from(u16::from_be_bytes([*rest.first()?, *rest.get(1)?])),
            rest.get(2..)?,
        ),
        127 => (
            u64::from_be_bytes(rest.get(..8)?.try_into().ok()?),
            rest.get(8..)?,
        ),
        n => (u64::from(n), rest),
    };
    let (mask, rest) = match second & 0x80 {
        0 => (None, rest),
        _ => (Some(rest.get(..4)?), rest.get(4..)?),
    };
    let len = usize::try_from(len).ok()?;
    let mut body = rest.get(..len)?.to_vec();
    if let Some(key) = mask {
        for (i, b) in body.iter_mut().enumerate() {
            *b ^= key[i % 4];
        }
    }
    let taken = bytes.len() - rest.len() + len;
    Some((first & 0x0F, body, taken))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_utf8_of_the_exact_size_and_fragments_split_at_characters() {
        let mut rng = fastrand::Rng::with_seed(7);
        for size in SIZES {
            let sent = Sent::random(&mut rng, size, true);
            assert_eq!(sent.payload.len(), size);
            let frames = sent.frames();
            assert_eq!(frames.len(), sent.fragments);
            let mut joined = Vec::new();
            for f in &frames {
                std::str::from_utf8(f.payload()).unwrap();
                joined.extend_from_slice(f.payload());
            }
            assert_eq!(joined, sent.payload);
        }
        assert!(Sent::random(&mut rng, 1 << 20, true)
            .payload
            .iter()
            .any(|b| *b >= 0x80));
    }

    #[test]
    fn frames_are_parsed_across_the_three_length_encodings() {
        assert_eq!(parse_frame(&[0x88, 2, 0x03]), None);
        assert_eq!(
            parse_frame(&[0x88, 2, 0x03, 0xEA, 9]),
            Some((8, vec![0x03, 0xEA], 4))
        );
        let mut mid = vec![0x82, 126, 0x01, 0x00];
        mid.extend(vec![5; 256]);
        assert_eq!(parse_frame(&mid), Some((2, vec![5; 256], 260)));
        let mut long = vec![0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0];
        long.extend(vec![6; 65_536]);
        assert_eq!(parse_frame(&long).map(|f| f.2), Some(65_546));
        assert_eq!(
            parse_frame(&[0x81, 0x82, 1, 2, 3, 4, b'a' ^ 1, b'b' ^ 2]),
            Some((1, b"ab".to_vec(), 8))
        );
    }
}
