//! One connection's TLS session, driven by the worker's non-blocking,
//! edge-triggered epoll loop: rustls's `ClientConnection` with
//! `read_tls`/`process_new_packets`/`write_tls` over the socket, no runtime.
//! The transport (`conn`) hands it request bytes and asks it for response
//! bytes; it reports what the handshake did (`TlsNews`) for the worker
//! to record.
//!
//! Request bytes are accepted whole (rustls's buffer is unbounded here, so
//! at most the pipeline's requests wait in it): those given before the
//! handshake ends are sent when it does.

use crate::handshake::{Handshake, TlsNews};
use crate::stats::ErrorClass;
use crate::tls::TlsClient;
use crate::tls_cause::{self, Context};
use rustls::{ClientConnection, HandshakeKind, ProtocolVersion};
use socket2::Socket;
use std::io::{self, Read, Write};
use std::time::Instant;

/// What a read of response bytes gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Fill {
    /// `n` bytes of plaintext are in the buffer.
    Data(usize),
    /// The server closed the connection.
    Eof,
    /// Nothing more until the next readiness event.
    Blocked,
    Failed(ErrorClass),
}

#[derive(Debug)]
pub(crate) struct TlsSession {
    conn: ClientConnection,
    started: Instant,
    /// Decrypted bytes rustls holds that were not read yet.
    plain: usize,
    peer_closed: bool,
    /// The socket gave less than asked or would block in this event.
    drained: bool,
    /// What a failure's sentence may say (with the server's first byte).
    cause: Context,
}

impl TlsSession {
    /// A session whose TCP connect started at `started`.
    pub fn new(client: &TlsClient, started: Instant) -> Result<TlsSession, rustls::Error> {
        let mut conn = ClientConnection::new(client.config.clone(), client.server_name.clone())?;
        conn.set_buffer_limit(None);
        Ok(TlsSession {
            conn,
            started,
            plain: 0,
            peer_closed: false,
            drained: false,
            cause: client.cause,
        })
    }

    /// The handshake is still under way.
    pub fn handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    /// A readiness event begins: the socket may hold new bytes.
    pub fn on_event(&mut self) {
        self.drained = false;
    }

    /// Whether a read may give more in this event.
    pub fn more(&self) -> bool {
        self.plain > 0 || !self.drained
    }

    /// The protocol ALPN chose (None: none), once the handshake is done.
    pub fn alpn(&self) -> Option<Option<&[u8]>> {
        (!self.conn.is_handshaking()).then(|| self.conn.alpn_protocol())
    }

    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Takes request bytes (all of them: the buffer is unbounded).
    pub fn send(&mut self, data: &[u8]) -> usize {
        self.conn.writer().write(data).unwrap_or(0)
    }

    /// Writes the TLS records waiting as far as the socket takes them.
    pub fn flush(&mut self, sock: &Socket) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut SockIo(sock)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Reads response plaintext into `buf`, reading and decrypting from
    /// the socket as needed and answering the handshake on the way.
    pub fn fill(&mut self, sock: &Socket, buf: &mut [u8], news: &mut TlsNews) -> Fill {
        loop {
            if self.plain > 0 {
                return match self.conn.reader().read(buf) {
                    Ok(n) => {
                        self.plain -= n.min(self.plain);
                        Fill::Data(n)
                    }
                    Err(_) => Fill::Failed(ErrorClass::Read),
                };
            }
            if self.peer_closed {
                return Fill::Eof;
            }
            if self.drained {
                return Fill::Blocked;
            }
            let mut probe = Probe {
                sock,
                short: false,
                first: &mut self.cause.first_byte,
            };
            let got = self.conn.read_tls(&mut probe);
            self.drained = probe.short;
            match got {
                Ok(0) => return self.ended(news, "the server closed the connection", Fill::Eof),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.drained = true;
                    return Fill::Blocked;
                }
                Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                    return Fill::Failed(ErrorClass::Connect)
                }
                Err(e) => {
                    let why = format!("read failed ({e})");
                    return self.ended(news, &why, Fill::Failed(ErrorClass::Read));
                }
            }
            if let Some(fail) = self.process(sock, news) {
                return fail;
            }
        }
    }

    /// Decrypts what was read, notes a finished handshake and sends what
    /// the handshake (or the requests waiting for it) owes the server.
    fn process(&mut self, sock: &Socket, news: &mut TlsNews) -> Option<Fill> {
        let handshaking = self.conn.is_handshaking();
        match self.conn.process_new_packets() {
            Ok(state) => {
                self.plain = state.plaintext_bytes_to_read();
                self.peer_closed = state.peer_has_closed();
            }
            Err(e) => {
                // Best effort: tell the server why (rustls queued the alert).
                let _ = self.flush(sock);
                news.failed = Some((handshaking, tls_cause::sentence(&e, self.cause)));
                return Some(Fill::Failed(ErrorClass::Tls));
            }
        }
        if handshaking && !self.conn.is_handshaking() {
            news.done = Some(self.finished());
        }
        match self.flush(sock) {
            Ok(()) => None,
            Err(_) => Some(Fill::Failed(ErrorClass::Write)),
        }
    }

    fn finished(&self) -> Handshake {
        let now = Instant::now();
        Handshake {
            took: now.saturating_duration_since(self.started),
            resumed: self.conn.handshake_kind() == Some(HandshakeKind::Resumed),
            version: match self.conn.protocol_version() {
                Some(ProtocolVersion::TLSv1_3) => "1.3",
                Some(ProtocolVersion::TLSv1_2) => "1.2",
                _ => "?",
            },
            suite: self
                .conn
                .negotiated_cipher_suite()
                .and_then(|s| s.suite().as_str())
                .unwrap_or("?"),
            at: now,
        }
    }

    /// The socket ended (EOF or an error): a TLS failure while the
    /// handshake was under way, else `after` (as over cleartext).
    fn ended(&mut self, news: &mut TlsNews, why: &str, after: Fill) -> Fill {
        if self.conn.is_handshaking() {
            news.failed = Some((true, format!("{why} during the handshake")));
            return Fill::Failed(ErrorClass::Tls);
        }
        self.peer_closed = true;
        after
    }
}

/// The socket as rustls's reader, noting whether it gave less than asked
/// (then it is drained, and edge-triggered epoll will report new bytes)
/// and the first byte the server ever sent.
struct Probe<'a> {
    sock: &'a Socket,
    short: bool,
    first: &'a mut Option<u8>,
}

impl Read for Probe<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = (&*self.sock).read(buf);
        self.short = got.as_ref().map_or(true, |&n| n < buf.len());
        if self.first.is_none() && got.as_ref().is_ok_and(|&n| n > 0) {
            *self.first = Some(buf[0]);
        }
        got
    }
}

/// The socket as rustls's writer.
struct SockIo<'a>(&'a Socket);

impl Write for SockIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.0).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        (&*self.0).write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
