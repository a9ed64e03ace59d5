//! WebSocket frames (RFC 6455 §5), without I/O: the client's frames as
//! they go out and an incremental decoder of the server's.
//!
//! A client frame is always masked (§5.3), each with a fresh random key, so
//! that no proxy on the way can be poisoned by a payload the client chose;
//! the payload is copied and XORed in one pass, eight bytes at a time.
//!
//! The decoder keeps a frame not yet whole across reads (as `h2_conn`
//! does), reassembles a fragmented message from its continuation frames,
//! lets control frames come between the fragments (§5.4), and hands out
//! whole messages, pings, pongs and the close as [`Event`]s. What the
//! server sends is trusted only as far as it must be: a masked frame,
//! reserved bits with no extension negotiated, a reserved opcode, a control
//! frame over 125 bytes or fragmented, a continuation with no message open,
//! a message over 16 MiB, a text message that is not UTF-8 or a malformed
//! close are each a [`Violation`], carrying the close code owed for it.

// Not used by the worker yet: its dispatch arm comes with the protocol seam.
#![allow(dead_code)]

/// Frame opcodes (§5.2); the others are reserved.
pub(crate) mod opcode {
    pub const CONTINUATION: u8 = 0x0;
    pub const TEXT: u8 = 0x1;
    pub const BINARY: u8 = 0x2;
    pub const CLOSE: u8 = 0x8;
    pub const PING: u8 = 0x9;
    pub const PONG: u8 = 0xA;
}

/// Close status codes (§7.4.1) this side sends or stands in for.
pub(crate) mod code {
    pub const NORMAL: u16 = 1000;
    pub const PROTOCOL: u16 = 1002;
    /// No status code in the close frame (never sent on the wire).
    pub const NO_STATUS: u16 = 1005;
    /// The connection ended with no close frame (never sent on the wire).
    pub const ABNORMAL: u16 = 1006;
    pub const INVALID_DATA: u16 = 1007;
    pub const TOO_BIG: u16 = 1009;
}

/// The largest message, sent or received: 16 MiB.
pub(crate) const MAX_MESSAGE: usize = 16 << 20;
/// A control frame's payload limit (§5.5).
pub(crate) const MAX_CONTROL: usize = 125;

/// A rule of RFC 6455 the server broke, and the close code owed for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Violation {
    pub why: &'static str,
    pub code: u16,
}

const fn protocol(why: &'static str) -> Violation {
    Violation {
        why,
        code: code::PROTOCOL,
    }
}

/// What one or more of the server's frames amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event<'a> {
    /// A whole message (reassembled when it was fragmented); a text one is
    /// valid UTF-8.
    Message {
        text: bool,
        data: &'a [u8],
    },
    Ping(&'a [u8]),
    Pong(&'a [u8]),
    /// The server's close: its code (1005 when it gave none) and reason.
    Close {
        code: u16,
        reason: &'a str,
    },
}

/// Appends one client frame of `parts` (one payload, given in pieces so
/// that a message's counter and filler need not be joined first), masked
/// with a fresh random key.
pub(crate) fn put_frame(out: &mut Vec<u8>, op: u8, fin: bool, parts: &[&[u8]]) {
    put_frame_keyed(out, op, fin, fastrand::u32(..).to_ne_bytes(), parts);
}

/// [`put_frame`] with a given masking key.
pub(crate) fn put_frame_keyed(out: &mut Vec<u8>, op: u8, fin: bool, key: [u8; 4], parts: &[&[u8]]) {
    let len = parts.iter().map(|p| p.len()).sum();
    put_head(out, op, fin, Some(key), len);
    let mut offset = 0;
    for part in parts {
        let start = out.len();
        out.extend_from_slice(part);
        mask(&mut out[start..], key, offset);
        offset += part.len();
    }
}

/// Appends a close frame with its code and reason (at most 123 bytes).
pub(crate) fn put_close(out: &mut Vec<u8>, code: u16, reason: &str) {
    let mut end = reason.len().min(MAX_CONTROL - 2);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let reason = &reason.as_bytes()[..end];
    put_frame(out, opcode::CLOSE, true, &[&code.to_be_bytes(), reason]);
}

/// A frame's first bytes: FIN and opcode, then the mask bit and the
/// shortest of the 7-, 16- and 64-bit lengths (§5.2), then the key.
fn put_head(out: &mut Vec<u8>, op: u8, fin: bool, key: Option<[u8; 4]>, len: usize) {
    out.push(if fin { 0x80 | op } else { op });
    let masked = if key.is_some() { 0x80 } else { 0 };
    if len < 126 {
        out.push(masked | len as u8);
    } else if let Ok(len) = u16::try_from(len) {
        out.push(masked | 126);
        out.extend_from_slice(&len.to_be_bytes());
    } else {
        out.push(masked | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    if let Some(key) = key {
        out.extend_from_slice(&key);
    }
}

/// XORs `buf` with the key (§5.3), `buf` starting `offset` bytes into the
/// payload.
pub(crate) fn mask(buf: &mut [u8], key: [u8; 4], offset: usize) {
    let k: [u8; 4] = std::array::from_fn(|i| key[(offset + i) % 4]);
    let wide = u64::from_ne_bytes([k[0], k[1], k[2], k[3], k[0], k[1], k[2], k[3]]);
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(word) ^ wide).to_ne_bytes());
    }
    for (i, b) in chunks.into_remainder().iter_mut().enumerate() {
        *b ^= k[i % 4];
    }
}

/// A server frame as the tests write it: unmasked, as a server sends.
#[cfg(test)]
pub(crate) fn server_frame(op: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_head(&mut out, op, fin, None, payload.len());
    out.extend_from_slice(payload);
    out
}

/// A frame's header, once whole.
#[derive(Debug, Clone, Copy)]
struct Head {
    fin: bool,
    op: u8,
    /// The header's own length, and its payload's.
    size: usize,
    len: usize,
}

impl Head {
    /// The header at the start of `b`, None while it is not whole.
    fn parse(b: &[u8]) -> Result<Option<Head>, Violation> {
        let (Some(&b0), Some(&b1)) = (b.first(), b.get(1)) else {
            return Ok(None);
        };
        let (fin, op) = (b0 & 0x80 != 0, b0 & 0x0f);
        if b0 & 0x70 != 0 {
            return Err(protocol(
                "reserved bits (RSV1-3) set, though no extension was negotiated",
            ));
        }
        if !matches!(op, 0x0..=0x2 | 0x8..=0xA) {
            return Err(protocol("a frame with a reserved opcode"));
        }
        if b1 & 0x80 != 0 {
            return Err(protocol("a masked frame from the server"));
        }
        let control = op >= opcode::CLOSE;
        if control && !fin {
            return Err(protocol("a fragmented control frame"));
        }
        let len7 = usize::from(b1 & 0x7f);
        if control && len7 > MAX_CONTROL {
            return Err(protocol("a control frame over 125 bytes"));
        }
        let (len, size) = match len7 {
            126 => match b.get(2..4) {
                Some(x) => (usize::from(u16::from_be_bytes([x[0], x[1]])), 4),
                None => return Ok(None),
            },
            127 => match b.get(2..10) {
                Some(x) => {
                    let mut n = [0u8; 8];
                    n.copy_from_slice(x);
                    let n = u64::from_be_bytes(n);
                    if n >> 63 != 0 {
                        return Err(protocol("a 64-bit frame length with its high bit set"));
                    }
                    (usize::try_from(n).unwrap_or(usize::MAX), 10)
                }
                None => return Ok(None),
            },
            n => (n, 2),
        };
        if len > MAX_MESSAGE {
            return Err(too_big());
        }
        Ok(Some(Head { fin, op, size, len }))
    }
}

fn too_big() -> Violation {
    Violation {
        why: "a message over 16 MiB",
        code: code::TOO_BIG,
    }
}

fn not_utf8(why: &'static str) -> Violation {
    Violation {
        why,
        code: code::INVALID_DATA,
    }
}

/// Close codes a peer may send (§7.4): 1005, 1006 and 1015 stand in for
/// what was not on the wire, and the rest below 3000 are unassigned.
fn valid_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// The server's frames, read as they come.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    /// A frame not yet whole, from earlier reads.
    partial: Vec<u8>,
    /// A fragmented message not yet ended: text or binary, and its bytes.
    message: Option<(bool, Vec<u8>)>,
    /// The server's close came: nothing after it is read.
    closed: bool,
}

impl Decoder {
    /// Reads frames from `data` (after any partial frame kept from before),
    /// handing each event to `on`, which returns false to stop reading
    /// (what is left is kept). Nothing is read after a close.
    pub fn feed(
        &mut self,
        data: &[u8],
        on: &mut dyn FnMut(Event<'_>) -> bool,
    ) -> Result<(), Violation> {
        if self.closed {
            return Ok(());
        }
        if self.partial.is_empty() {
            let used = self.frames(data, on)?;
            self.partial.extend_from_slice(&data[used..]);
        } else {
            let mut buf = std::mem::take(&mut self.partial);
            buf.extend_from_slice(data);
            let used = self.frames(&buf, on)?;
            buf.drain(..used);
            self.partial = buf;
        }
        Ok(())
    }

    /// Whether bytes of a frame not yet whole are kept.
    pub fn has_partial(&self) -> bool {
        !self.partial.is_empty() || self.message.is_some()
    }

    fn frames(
        &mut self,
        data: &[u8],
        on: &mut dyn FnMut(Event<'_>) -> bool,
    ) -> Result<usize, Violation> {
        let mut at = 0;
        while let Some(head) = Head::parse(&data[at..])? {
            if data.len() - at - head.size < head.len {
                break;
            }
            let payload = &data[at + head.size..at + head.size + head.len];
            at += head.size + head.len;
            if !self.frame(head, payload, on)? || self.closed {
                break;
            }
        }
        Ok(at)
    }

    /// One whole frame; false when `on` said to stop.
    fn frame(
        &mut self,
        head: Head,
        payload: &[u8],
        on: &mut dyn FnMut(Event<'_>) -> bool,
    ) -> Result<bool, Violation> {
        match head.op {
            opcode::TEXT | opcode::BINARY => {
                if self.message.is_some() {
                    return Err(protocol("a new message before the fragmented one ended"));
                }
                let text = head.op == opcode::TEXT;
                if !head.fin {
                    self.message = Some((text, payload.to_vec()));
                    return Ok(true);
                }
                if text && std::str::from_utf8(payload).is_err() {
                    return Err(not_utf8("a text message that is not valid UTF-8"));
                }
                Ok(on(Event::Message {
                    text,
                    data: payload,
                }))
            }
            opcode::CONTINUATION => {
                let Some((_, bytes)) = self.message.as_mut() else {
                    return Err(protocol("a continuation frame with no message to continue"));
                };
                if bytes.len() + payload.len() > MAX_MESSAGE {
                    return Err(too_big());
                }
                bytes.extend_from_slice(payload);
                if !head.fin {
                    return Ok(true);
                }
                let (text, data) = self.message.take().unwrap_or_default();
                if text && std::str::from_utf8(&data).is_err() {
                    return Err(not_utf8("a text message that is not valid UTF-8"));
                }
                Ok(on(Event::Message { text, data: &data }))
            }
            opcode::PING => Ok(on(Event::Ping(payload))),
            opcode::PONG => Ok(on(Event::Pong(payload))),
            _ => {
                let (code, reason) = close_payload(payload)?;
                self.closed = true;
                on(Event::Close { code, reason });
                Ok(false)
            }
        }
    }
}

/// A close frame's code (1005 when it has none) and reason (§5.5.1).
fn close_payload(payload: &[u8]) -> Result<(u16, &str), Violation> {
    match payload {
        [] => Ok((code::NO_STATUS, "")),
        [_] => Err(protocol("a close frame with a 1-byte payload")),
        [hi, lo, reason @ ..] => {
            let code = u16::from_be_bytes([*hi, *lo]);
            if !valid_close_code(code) {
                return Err(protocol("a close frame with an invalid status code"));
            }
            let reason = std::str::from_utf8(reason)
                .map_err(|_| not_utf8("a close reason that is not valid UTF-8"))?;
            Ok((code, reason))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event, owned.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Got {
        Text(String),
        Binary(Vec<u8>),
        Ping(Vec<u8>),
        Pong(Vec<u8>),
        Close(u16, String),
    }

    fn owned(e: Event<'_>) -> Got {
        match e {
            Event::Message { text: true, data } => {
                Got::Text(String::from_utf8(data.to_vec()).unwrap())
            }
            Event::Message { text: false, data } => Got::Binary(data.to_vec()),
            Event::Ping(p) => Got::Ping(p.to_vec()),
            Event::Pong(p) => Got::Pong(p.to_vec()),
            Event::Close { code, reason } => Got::Close(code, reason.to_string()),
        }
    }

    /// Decodes `bytes` fed whole and fed one byte at a time, which must agree.
    fn decode(bytes: &[u8]) -> Result<Vec<Got>, Violation> {
        let run = |step: usize| {
            let mut d = Decoder::default();
            let mut got = Vec::new();
            for chunk in bytes.chunks(step) {
                d.feed(chunk, &mut |e| {
                    got.push(owned(e));
                    true
                })?;
            }
            Ok(got)
        };
        let whole = run(bytes.len().max(1));
        assert_eq!(whole, run(1), "fed one byte at a time");
        whole
    }

    const KEY: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];
    const HELLO_MASKED: [u8; 11] = [
        0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58,
    ];

    /// RFC 6455 §5.7's examples, as the client writes them (masked).
    #[test]
    fn client_frames_match_the_rfc_examples() {
        let mut out = Vec::new();
        put_frame_keyed(&mut out, opcode::TEXT, true, KEY, &[b"Hello"]);
        assert_eq!(out, HELLO_MASKED);
        out.clear();
        put_frame_keyed(&mut out, opcode::TEXT, true, KEY, &[b"He", b"", b"llo"]);
        assert_eq!(out, HELLO_MASKED, "pieces mask as one payload");
        out.clear();
        put_frame_keyed(&mut out, opcode::PONG, true, KEY, &[b"Hello"]);
        assert_eq!(
            out,
            [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
        );
        for (len, head) in [
            (256, vec![0x82, 0xFE, 0x01, 0x00]),
            (65536, vec![0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0]),
            (125, vec![0x82, 0xFD]),
            (126, vec![0x82, 0xFE, 0x00, 0x7E]),
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            out.clear();
            put_frame_keyed(&mut out, opcode::BINARY, true, KEY, &[&payload]);
            assert_eq!(out[..head.len()], head[..], "{len}");
            assert_eq!(out[head.len()..head.len() + 4], KEY);
            let mut body = out[head.len() + 4..].to_vec();
            mask(&mut body, KEY, 0);
            assert_eq!(body, payload, "{len}: unmasks to the payload");
        }
    }

    #[test]
    fn every_frame_gets_a_fresh_key() {
        let keys: std::collections::HashSet<Vec<u8>> = (0..16)
            .map(|_| {
                let mut out = Vec::new();
                put_frame(&mut out, opcode::BINARY, true, &[b"same"]);
                assert_eq!(out[1], 0x80 | 4, "masked");
                out[2..6].to_vec()
            })
            .collect();
        assert!(keys.len() > 1, "{keys:?}");
    }

    #[test]
    fn masking_at_any_offset_equals_masking_bytewise() {
        let data: Vec<u8> = (0..37).map(|i| i as u8 ^ 0x5a).collect();
        for offset in 0..5 {
            let mut fast = data.clone();
            mask(&mut fast, KEY, offset);
            let slow: Vec<u8> = data
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ KEY[(offset + i) % 4])
                .collect();
            assert_eq!(fast, slow, "offset {offset}");
        }
    }

    #[test]
    fn close_frames_carry_code_and_a_bounded_reason() {
        let mut out = Vec::new();
        put_close(&mut out, 1011, "é".repeat(70).as_str());
        assert_eq!(
            (out[0], out[1]),
            (0x88, 0x80 | 124),
            "123-byte reason cut at a char boundary"
        );
        let mut payload = out[6..].to_vec();
        mask(&mut payload, out[2..6].try_into().unwrap(), 0);
        assert_eq!(payload[..2], 1011u16.to_be_bytes());
        assert!(std::str::from_utf8(&payload[2..]).is_ok());
    }

    /// RFC 6455 §5.7's examples, as the server sends them (unmasked).
    #[test]
    fn server_frames_of_the_rfc_decode() {
        let hello = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        assert_eq!(server_frame(opcode::TEXT, true, b"Hello"), hello);
        assert_eq!(decode(&hello), Ok(vec![Got::Text("Hello".into())]));
        let fragmented = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
        assert_eq!(decode(&fragmented), Ok(vec![Got::Text("Hello".into())]));
        let ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        assert_eq!(decode(&ping), Ok(vec![Got::Ping(b"Hello".to_vec())]));
        for len in [256usize, 65536] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let frame = server_frame(opcode::BINARY, true, &payload);
            let head: &[u8] = if len == 256 {
                &[0x82, 0x7E, 0x01, 0x00]
            } else {
                &[0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]
            };
            assert_eq!(&frame[..head.len()], head);
            assert_eq!(decode(&frame), Ok(vec![Got::Binary(payload)]));
        }
    }

    #[test]
    fn control_frames_may_come_between_fragments() {
        let mut b = server_frame(opcode::BINARY, false, b"ab");
        b.extend(server_frame(opcode::PING, true, b"p"));
        b.extend(server_frame(opcode::CONTINUATION, false, b""));
        b.extend(server_frame(opcode::PONG, true, b""));
        b.extend(server_frame(opcode::CONTINUATION, true, b"cd"));
        b.extend(server_frame(
            opcode::CLOSE,
            true,
            &[0x03, 0xf3, b'b', b'y', b'e'],
        ));
        b.extend(server_frame(
            opcode::TEXT,
            true,
            b"after the close: never read",
        ));
        assert_eq!(
            decode(&b),
            Ok(vec![
                Got::Ping(b"p".to_vec()),
                Got::Pong(vec![]),
                Got::Binary(b"abcd".to_vec()),
                Got::Close(1011, "bye".into()),
            ])
        );
        assert_eq!(
            decode(&server_frame(opcode::CLOSE, true, b"")),
            Ok(vec![Got::Close(code::NO_STATUS, String::new())])
        );
    }

    #[test]
    fn fragmented_text_is_checked_whole_for_utf8() {
        // "é" split between two fragments is valid once joined.
        let mut b = server_frame(opcode::TEXT, false, &[0xc3]);
        b.extend(server_frame(opcode::CONTINUATION, true, &[0xa9]));
        assert_eq!(decode(&b), Ok(vec![Got::Text("é".into())]));
    }

    #[test]
    fn every_violation_is_named_with_its_close_code() {
        let mut long_ping = vec![0x89, 126, 0, 126];
        long_ping.extend([0u8; 126]);
        let mut cont = server_frame(opcode::TEXT, false, b"a");
        cont.extend(server_frame(opcode::TEXT, true, b"b"));
        let cases: Vec<(Vec<u8>, &str, u16)> = vec![
            (vec![0x81, 0x81, 1, 2, 3, 4, b'x'], "masked", 1002),
            (vec![0xC1, 0x01, b'x'], "reserved bits", 1002),
            (vec![0x91, 0x01, b'x'], "reserved bits", 1002),
            (vec![0x83, 0x00], "reserved opcode", 1002),
            (vec![0x8B, 0x00], "reserved opcode", 1002),
            (long_ping, "over 125", 1002),
            (vec![0x09, 0x00], "fragmented control", 1002),
            (
                server_frame(opcode::CONTINUATION, true, b"x"),
                "no message to continue",
                1002,
            ),
            (cont, "before the fragmented one ended", 1002),
            (vec![0x81, 0x02, 0xc3, 0x28], "not valid UTF-8", 1007),
            (
                vec![0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0],
                "high bit",
                1002,
            ),
            (
                vec![0x82, 0x7F, 0, 0, 0, 0, 1, 0, 0, 1],
                "over 16 MiB",
                1009,
            ),
            (server_frame(opcode::CLOSE, true, &[3]), "1-byte", 1002),
            (
                server_frame(opcode::CLOSE, true, &[0x03, 0xed]),
                "invalid status",
                1002,
            ),
            (
                server_frame(opcode::CLOSE, true, &[0x03, 0xe8, 0xff]),
                "reason",
                1007,
            ),
        ];
        for (bytes, why, code) in cases {
            let v = decode(&bytes).unwrap_err();
            assert!(v.why.contains(why), "{why}: {v:?}");
            assert_eq!(v.code, code, "{why}");
        }
    }

    #[test]
    fn a_reassembled_message_over_the_limit_is_too_big() {
        let chunk = vec![0u8; 9 << 20];
        let mut d = Decoder::default();
        let mut on = |_: Event<'_>| true;
        d.feed(&server_frame(opcode::BINARY, false, &chunk), &mut on)
            .unwrap();
        let v = d
            .feed(&server_frame(opcode::CONTINUATION, true, &chunk), &mut on)
            .unwrap_err();
        assert_eq!(v.code, code::TOO_BIG);
    }
}
