//! A WebSocket echo server on 127.0.0.1 (port 0) over `tungstenite`, a
//! library nobody here wrote, so that the engine's WebSocket client is
//! held to an independent implementation of RFC 6455. Each connection gets
//! a thread of its own and every text or binary message comes back
//! unchanged, unless [`EchoRules`] says otherwise: corrupt every Nth echo
//! (counted over all connections, so a load knows exactly how many it
//! should find), close each connection with a code after N messages,
//! never answer a ping, echo unmasked client frames (which a server must
//! refuse) or answer the handshake with a wrong `Sec-WebSocket-Accept`.
//! As it should, it closes with 1002 on a protocol error (an unmasked
//! frame, when not told to echo it). It counts what it did and the close
//! frames its clients sent with code 1000 ([`EchoCounts`]). The server
//! stops accepting when dropped, and a connection whose client says
//! nothing for 30 s is dropped.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use tungstenite::handshake::server::{Request, Response};
use tungstenite::http::HeaderValue;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::frame::CloseFrame;
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{accept_hdr_with_config, Message, WebSocket};

/// The longest a connection waits for its client.
const LIMIT: Duration = Duration::from_secs(30);

/// How the server strays from a plain echo.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EchoRules {
    /// Every Nth echo (the Nth, 2Nth, ... over all connections) comes
    /// back with its last byte changed (to another printable ASCII byte in
    /// a text message, so it stays valid UTF-8).
    pub corrupt_every: Option<u64>,
    /// Each connection echoes this many messages, then closes with this code.
    pub close_after: Option<(u64, u16)>,
    /// Pongs are swallowed on the way out: pings go unanswered.
    pub no_pongs: bool,
    /// Unmasked client frames are taken (and echoed) instead of refused.
    pub accept_unmasked: bool,
    /// The 101 carries a `Sec-WebSocket-Accept` that does not match the key.
    pub wrong_accept: bool,
}

/// What the server did, over all connections.
#[derive(Debug, Default)]
pub struct EchoCounts {
    pub connections: AtomicU64,
    pub echoes: AtomicU64,
    pub corrupted: AtomicU64,
    pub closes: AtomicU64,
    /// Close frames received from clients with code 1000 (normal closure),
    /// counted before the server's reply leaves.
    pub normal_closes_received: AtomicU64,
}

/// A running echo server; stops accepting when dropped.
#[derive(Debug)]
pub struct WsEcho {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    counts: Arc<EchoCounts>,
    accept: Option<JoinHandle<()>>,
}

impl WsEcho {
    pub fn start(rules: EchoRules) -> io::Result<WsEcho> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(EchoCounts::default());
        let (flag, shared) = (stop.clone(), counts.clone());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let counts = shared.clone();
                std::thread::spawn(move || {
                    // A connection that breaks off just ends its thread.
                    let _ = serve(conn, rules, &counts);
                });
            }
        });
        Ok(WsEcho {
            addr,
            stop,
            counts,
            accept: Some(accept),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The echo endpoint's URL.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    pub fn counts(&self) -> &EchoCounts {
        &self.counts
    }
}

impl Drop for WsEcho {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the blocking accept, which then sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn serve(conn: TcpStream, rules: EchoRules, counts: &EchoCounts) -> tungstenite::Result<()> {
    conn.set_read_timeout(Some(LIMIT))?;
    conn.set_nodelay(true)?;
    let stream = NoPongs {
        inner: conn,
        swallow: rules.no_pongs,
        buf: Vec::new(),
    };
    let config = WebSocketConfig::default().accept_unmasked_frames(rules.accept_unmasked);
    let wrong_accept = rules.wrong_accept;
    // The shape tungstenite's handshake callback must have.
    #[allow(clippy::result_large_err)]
    let answer = move |_: &Request, mut response: Response| {
        if wrong_accept {
            let wrong = HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZQ==");
            response.headers_mut().insert("Sec-WebSocket-Accept", wrong);
        }
        Ok(response)
    };
    let mut ws = accept_hdr_with_config(stream, answer, Some(config)).map_err(|e| match e {
        tungstenite::HandshakeError::Failure(e) => e,
        tungstenite::HandshakeError::Interrupted(_) => {
            tungstenite::Error::Io(io::ErrorKind::WouldBlock.into())
        }
    })?;
    counts.connections.fetch_add(1, Ordering::Relaxed);
    let mut echoed = 0u64;
    loop {
        let read = match ws.read() {
            Err(tungstenite::Error::Protocol(e)) => return refuse(&mut ws, &e, counts),
            read => read?,
        };
        let message = match read {
            Message::Text(t) => echo_text(t.as_str(), rules, counts),
            Message::Binary(b) => echo_binary(b.to_vec(), rules, counts),
            Message::Close(frame) => {
                note_close(frame.as_ref(), counts);
                return drain(&mut ws, counts);
            }
            _ => continue,
        };
        ws.send(message)?;
        echoed += 1;
        if let Some((_, code)) = rules.close_after.filter(|(n, _)| echoed >= *n) {
            counts.closes.fetch_add(1, Ordering::Relaxed);
            ws.close(Some(CloseFrame {
                code: CloseCode::from(code),
                reason: "".into(),
            }))?;
            return drain(&mut ws, counts);
        }
    }
}

/// Counts a client's close frame of code 1000.
fn note_close(frame: Option<&CloseFrame>, counts: &EchoCounts) {
    if frame.is_some_and(|f| f.code == CloseCode::Normal) {
        counts
            .normal_closes_received
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// Closes with 1002 (protocol error), as RFC 6455 §7.4.1 has a server
/// answer a frame it must refuse, and reads until the close is over.
fn refuse<S: Read + Write>(
    ws: &mut WebSocket<S>,
    e: &tungstenite::error::ProtocolError,
    counts: &EchoCounts,
) -> tungstenite::Result<()> {
    ws.close(Some(CloseFrame {
        code: CloseCode::Protocol,
        reason: e.to_string().chars().take(100).collect::<String>().into(),
    }))?;
    drain(ws, counts)
}

/// Reads until the close handshake is over.
fn drain<S: Read + Write>(ws: &mut WebSocket<S>, counts: &EchoCounts) -> tungstenite::Result<()> {
    loop {
        match ws.read() {
            Ok(Message::Close(frame)) => note_close(frame.as_ref(), counts),
            Ok(_) => {}
            Err(tungstenite::Error::ConnectionClosed) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Whether this echo is one to corrupt (counting it).
fn corrupts(rules: EchoRules, counts: &EchoCounts) -> bool {
    let n = counts.echoes.fetch_add(1, Ordering::Relaxed) + 1;
    let hit = rules
        .corrupt_every
        .is_some_and(|every| every > 0 && n % every == 0);
    if hit {
        counts.corrupted.fetch_add(1, Ordering::Relaxed);
    }
    hit
}

fn echo_text(text: &str, rules: EchoRules, counts: &EchoCounts) -> Message {
    if !corrupts(rules, counts) {
        return Message::text(text);
    }
    let mut bytes = text.as_bytes().to_vec();
    match bytes.last_mut() {
        Some(b) if b.is_ascii_graphic() || *b == b' ' => {
            *b = if *b == b'~' { b'!' } else { *b + 1 }
        }
        _ => bytes.push(b'!'),
    }
    Message::text(String::from_utf8(bytes).unwrap_or_default())
}

fn echo_binary(mut bytes: Vec<u8>, rules: EchoRules, counts: &EchoCounts) -> Message {
    if corrupts(rules, counts) {
        match bytes.last_mut() {
            Some(b) => *b ^= 0xff,
            None => bytes.push(0),
        }
    }
    Message::binary(bytes)
}

/// The connection, with a filter on the way out that, when asked,
/// swallows the pong frames the library writes on its own (it always
/// answers pings): the server's frames are unmasked, so a frame's length
/// is read from its first bytes.
#[derive(Debug)]
struct NoPongs {
    inner: TcpStream,
    swallow: bool,
    /// Written bytes not yet a whole frame (only while swallowing).
    buf: Vec<u8>,
}

impl Read for NoPongs {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl Write for NoPongs {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if !self.swallow {
            return self.inner.write(data);
        }
        self.buf.extend_from_slice(data);
        while let Some(len) = frame_len(&self.buf) {
            // A pong is 0x8A (FIN, opcode 10); the 101 before the frames passes.
            if self.buf[0] != 0x8A {
                self.inner.write_all(&self.buf[..len])?;
            }
            self.buf.drain(..len);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The length of the whole frame (or 101 head) at the start of `b`.
fn frame_len(b: &[u8]) -> Option<usize> {
    if b.starts_with(b"HTTP/") {
        return b.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    }
    let len7 = usize::from(*b.get(1)? & 0x7f);
    let (len, head) = match len7 {
        126 => (usize::from(u16::from_be_bytes([*b.get(2)?, *b.get(3)?])), 4),
        127 => {
            let mut n = [0u8; 8];
            n.copy_from_slice(b.get(2..10)?);
            (usize::try_from(u64::from_be_bytes(n)).ok()?, 10)
        }
        n => (n, 2),
    };
    (b.len() >= head + len).then_some(head + len)
}
