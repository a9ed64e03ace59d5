//! The transport: one non-blocking TCP connection and the requests it
//! carries. It knows how to connect, write the pre-encoded requests and read
//! responses, and reports what happened; it never decides when to send.
//!
//! A connection holds a FIFO of the requests in flight on it (one, or up to
//! the pipeline depth): new requests append their bytes to what is still to
//! be written, and responses answer the queue's front in order. A read may
//! bring several responses; the bytes past one response are fed to the next
//! (see [`Conn::read`] and [`Conn::read_more`]).
//!
//! Over `https://` the same bytes go through the connection's TLS session
//! (`tls_conn`) instead of straight to the socket; everything above the
//! byte stream is the same.
//!
//! Over HTTP/2 the connection carries an `h2_conn` session instead of the
//! FIFO: requests are streams, answered in any order, and the worker takes
//! them as they end (`flight_h2`). The socket and TLS parts are shared.

use crate::checker::Checker;
use crate::expect::{Expect, Mismatch};
use crate::h2::H2Request;
use crate::h2_conn::{H2Conn, H2Fail};
use crate::handshake::TlsNews;
use crate::response::{Complete, ReadFailure, ResponseReader};
use crate::stats::ErrorClass;
use crate::tls::TlsClient;
use crate::tls_conn::{Fill, TlsSession};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

pub(crate) use crate::job::Job;

/// What an I/O step concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Waiting for the socket; nothing to record yet.
    Pending,
    /// The front request's response is whole.
    Done(Complete),
    Failed(ErrorClass),
}

/// The request bytes a run writes: the encoded request repeated, so that
/// several pipelined requests go out in one write.
#[derive(Debug)]
pub(crate) struct Wire {
    /// One request's length.
    pub len: usize,
    /// Whole copies of the request, back to back (at least one).
    pub batch: Vec<u8>,
}

impl Wire {
    /// A wire holding nothing yet: a mix writes each request into it.
    pub fn empty() -> Wire {
        Wire {
            len: 0,
            batch: Vec::new(),
        }
    }

    /// Copies enough for `depth` requests, but no more than about 64 KiB
    /// (a large body is written a copy at a time).
    pub fn new(request: &[u8], depth: usize) -> Wire {
        let copies = depth.min((64 * 1024 / request.len().max(1)).max(1));
        Wire {
            len: request.len(),
            batch: request.repeat(copies),
        }
    }

    /// The next bytes to write when `left` bytes of queued requests are
    /// unwritten: they start where a request's copy is cut by `left`.
    fn next(&self, left: usize) -> &[u8] {
        let b = &self.batch;
        let start = if left <= b.len() {
            b.len() - left
        } else {
            (self.len - left % self.len) % self.len
        };
        &b[start..b.len().min(start + left)]
    }
}

/// One connection slot. It keeps its socket across requests when keep-alive holds.
///
/// Over io_uring (`ring`) the slot's socket is blocking (the ring never
/// blocks on it), the ring connects, sends and receives, and the slot only
/// keeps the byte counts and parses what the ring hands it.
#[derive(Debug)]
pub(crate) struct Conn {
    sock: Option<Socket>,
    connecting: bool,
    /// Bytes of the queued requests not written yet (a suffix of the queue).
    unwritten: usize,
    reader: ResponseReader,
    /// Requests in flight, oldest first; responses answer the front.
    jobs: VecDeque<Job>,
    /// Bytes of the worker's read buffer past the last whole response,
    /// ending at `filled`; valid only within one readiness event.
    left: usize,
    filled: usize,
    /// The last read filled the buffer, or the peer hung up: read again.
    more: bool,
    /// Whether `sock` is in the worker's epoll set (registered once per socket).
    pub registered: bool,
    /// Whether the worker lists this slot as able to take a request.
    pub listed: bool,
    /// Over https: the configuration each new socket's session starts from.
    tls_client: Option<Arc<TlsClient>>,
    tls: Option<Box<TlsSession>>,
    /// What TLS did since the worker last took it (kept across closes).
    tls_news: TlsNews,
    /// Counts sockets opened and closed, so that an io_uring completion of
    /// an earlier socket is told from one of the current socket.
    pub generation: u32,
    /// Over io_uring: where a closed socket waits for the ring's next
    /// submission before its descriptor is closed (see [`Conn::close`]).
    graveyard: Option<Graveyard>,
    /// Over HTTP/2: the session, which then holds the requests in flight.
    pub h2: Option<Box<H2Conn>>,
    /// Over HTTP/2 and TLS: ALPN was seen to pick h2 on this socket.
    alpn_checked: bool,
}

/// Sockets closed since the ring last submitted. Operations queued but not
/// yet submitted name their socket by descriptor number: closed at once, the
/// number could be reused by the slot's next socket, and those operations
/// (a stale receive among them) would act on it. The worker empties this
/// after each submission.
pub(crate) type Graveyard = std::rc::Rc<std::cell::RefCell<Vec<Socket>>>;

impl Conn {
    /// A slot for up to `depth` requests in flight; `check` is None when
    /// the run expects nothing of responses.
    pub fn new(
        is_head_request: bool,
        check: Option<Checker>,
        depth: usize,
        tls_client: Option<Arc<TlsClient>>,
    ) -> Conn {
        Conn {
            sock: None,
            connecting: false,
            unwritten: 0,
            reader: ResponseReader::new(is_head_request, check),
            jobs: VecDeque::with_capacity(depth),
            left: 0,
            filled: 0,
            more: false,
            registered: false,
            listed: false,
            tls_client,
            tls: None,
            tls_news: TlsNews::default(),
            generation: 0,
            graveyard: None,
            h2: None,
            alpn_checked: false,
        }
    }

    /// Makes this an HTTP/2 connection sending `request`.
    pub fn with_h2(mut self, request: Arc<H2Request>, expect: &Arc<Expect>) -> Conn {
        self.h2 = Some(Box::new(H2Conn::new(request, expect)));
        self
    }

    /// How many requests may be in flight: `depth`, or over HTTP/2 what
    /// the session allows of it.
    pub fn room(&self, depth: usize) -> usize {
        self.h2.as_ref().map_or(depth, |h| h.room(depth))
    }

    /// Prepares for the response to a mix's kind (see `ResponseReader::prepare`).
    pub fn prepare(&mut self, is_head: bool, expect: &Arc<Expect>) {
        self.reader.prepare(is_head, expect);
    }

    /// What TLS did since the last call (handshakes ended or failed).
    /// Whether a TLS handshake is under way on this connection, its TCP
    /// connect done; when it is, the server failed to complete one in
    /// time (a request's timeout, or the run's end), noted as a TLS
    /// failure with the cause `why` gives.
    pub fn handshake_given_up(&mut self, why: impl FnOnce() -> String) -> bool {
        let pending = !self.connecting && self.tls.as_ref().is_some_and(|t| t.handshaking());
        if pending {
            self.tls_news.failed = Some((true, why()));
        }
        pending
    }

    pub fn take_tls_news(&mut self) -> Option<TlsNews> {
        let news = &self.tls_news;
        (news.done.is_some() || news.failed.is_some()).then(|| std::mem::take(&mut self.tls_news))
    }

    /// Why the last whole response failed the expectations, if it did.
    /// Valid until the next read.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.reader.mismatch()
    }

    pub fn has_socket(&self) -> bool {
        self.sock.is_some()
    }

    pub fn fd(&self) -> Option<i32> {
        self.sock.as_ref().map(|s| s.as_raw_fd())
    }

    /// Requests in flight.
    pub fn outstanding(&self) -> usize {
        match &self.h2 {
            Some(h2) => h2.outstanding(),
            None => self.jobs.len(),
        }
    }

    /// The oldest request in flight: the one the next response answers.
    pub fn front(&self) -> Option<&Job> {
        match &self.h2 {
            Some(h2) => h2.front(),
            None => self.jobs.front(),
        }
    }

    pub fn wants_write(&self) -> bool {
        if let Some(h2) = &self.h2 {
            return self.sock.is_some()
                && (self.connecting
                    || !h2.pending().is_empty()
                    || self.tls.as_ref().is_some_and(|t| t.wants_write()));
        }
        !self.jobs.is_empty()
            && (self.connecting
                || self.unwritten > 0
                || self.tls.as_ref().is_some_and(|t| t.wants_write()))
    }

    /// Whether bytes of this event remain to be parsed or read: true only
    /// while requests are in flight (anything else is the caller's to judge).
    pub fn has_more_input(&self) -> bool {
        self.left > 0 || self.more
    }

    /// Bytes left over after the last whole response (unasked for when no
    /// request is in flight).
    pub fn has_leftover(&self) -> bool {
        self.left > 0
    }

    /// Takes the front request, whose response is whole.
    pub fn pop(&mut self) -> Option<Job> {
        self.jobs.pop_front()
    }

    /// Takes every request in flight (the connection is being given up) with
    /// how many of them were written whole, the oldest first.
    pub fn drain(&mut self, request_len: usize) -> (VecDeque<Job>, usize) {
        if let Some(h2) = self.h2.as_mut() {
            return (h2.drain(), 0);
        }
        let unwritten = self.unwritten.div_ceil(request_len.max(1));
        let jobs = std::mem::take(&mut self.jobs);
        let written = jobs.len().saturating_sub(unwritten);
        self.unwritten = 0;
        (jobs, written)
    }

    /// Drops the socket (which also removes it from epoll).
    pub fn close(&mut self) {
        if let Some(sock) = self.sock.take() {
            self.generation = self.generation.wrapping_add(1);
            if let Some(graves) = &self.graveyard {
                // A receive armed in the ring holds the socket open past its
                // close; a shutdown completes that receive and lets it go.
                let _ = sock.shutdown(std::net::Shutdown::Both);
                graves.borrow_mut().push(sock);
            }
        }
        self.tls = None;
        self.registered = false;
        self.connecting = false;
        self.unwritten = 0;
        self.left = 0;
        self.more = false;
        self.reader.reset();
        self.alpn_checked = false;
        if let Some(h2) = self.h2.as_mut() {
            h2.reset();
        }
    }

    /// Opens a socket and starts a non-blocking connect.
    pub fn connect(&mut self, addr: SocketAddr) -> Result<(), ErrorClass> {
        let started = Instant::now();
        let sock = Socket::new(
            Domain::for_address(addr),
            Type::STREAM.nonblocking(),
            Some(Protocol::TCP),
        )
        .map_err(|_| ErrorClass::Connect)?;
        let _ = sock.set_nodelay(true);
        self.connecting = match sock.connect(&addr.into()) {
            Ok(()) => false,
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => true,
            Err(_) => return Err(ErrorClass::Connect),
        };
        self.sock = Some(sock);
        if let Some(client) = &self.tls_client {
            match TlsSession::new(client, started) {
                Ok(session) => self.tls = Some(Box::new(session)),
                Err(why) => {
                    let why = crate::tls_cause::sentence(&why, client.cause);
                    self.tls_news.failed = Some((true, why));
                    return Err(ErrorClass::Tls);
                }
            }
        }
        Ok(())
    }

    /// io_uring: opens a blocking socket for the ring to connect; the slot
    /// is connecting until [`Conn::connected`].
    pub fn open(&mut self, addr: SocketAddr, graveyard: &Graveyard) -> Result<(), ErrorClass> {
        let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(|_| ErrorClass::Connect)?;
        let _ = sock.set_nodelay(true);
        self.sock = Some(sock);
        self.generation = self.generation.wrapping_add(1);
        self.connecting = true;
        self.graveyard = Some(graveyard.clone());
        Ok(())
    }

    /// io_uring: the ring's connect succeeded.
    pub fn connected(&mut self) {
        self.connecting = false;
    }

    /// io_uring: the next bytes to send, when the socket is connected and
    /// queued requests are unwritten.
    pub fn to_send<'w>(&self, wire: &'w Wire) -> Option<&'w [u8]> {
        (self.sock.is_some() && !self.connecting && self.unwritten > 0)
            .then(|| wire.next(self.unwritten))
    }

    /// io_uring: the ring sent `n` of the unwritten bytes.
    pub fn sent(&mut self, n: usize) {
        self.unwritten -= n.min(self.unwritten);
    }

    /// io_uring: the ring received `n` bytes, copied to the start of the
    /// worker's buffer; [`Conn::read_more`] then feeds them to the responses
    /// without reading the socket.
    pub fn received(&mut self, n: usize) {
        self.filled = n;
        self.left = n;
        self.more = false;
    }

    /// io_uring: the peer closed its side; ends the front response there.
    pub fn ended(&mut self) -> Step {
        self.left = 0;
        self.more = false;
        eof_step(&mut self.reader)
    }

    /// Queues a request of `len` bytes behind those in flight.
    pub fn push(&mut self, job: Job, len: usize) {
        if let Some(h2) = self.h2.as_mut() {
            return h2.push(job);
        }
        self.jobs.push_back(job);
        self.unwritten += len;
    }

    /// Writes as much of the queued requests as the socket takes.
    pub fn write(&mut self, wire: &Wire) -> Step {
        let Some(sock) = self.sock.as_mut() else {
            return Step::Failed(ErrorClass::Write);
        };
        if self.connecting {
            match sock.take_error() {
                Ok(None) => self.connecting = false,
                _ => return Step::Failed(ErrorClass::Connect),
            }
        }
        if let Some(h2) = self.h2.as_mut() {
            // Over TLS no frame leaves before ALPN said h2: a refusing
            // server must not see even the preface.
            let tls = self.tls.as_deref_mut();
            return write_h2(h2, sock, tls, self.alpn_checked);
        }
        if let Some(tls) = self.tls.as_mut() {
            while self.unwritten > 0 {
                self.unwritten -= tls.send(wire.next(self.unwritten));
            }
            return match tls.flush(sock) {
                Ok(()) => Step::Pending,
                Err(e) if is_not_connected(&e) => Step::Failed(ErrorClass::Connect),
                Err(_) => Step::Failed(ErrorClass::Write),
            };
        }
        while self.unwritten > 0 {
            match sock.write(wire.next(self.unwritten)) {
                Ok(n) => self.unwritten -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_not_connected(&e) => return Step::Failed(ErrorClass::Connect),
                Err(_) => return Step::Failed(ErrorClass::Write),
            }
        }
        Step::Pending
    }

    /// Starts reading on a readiness event: the socket is read into `buf`
    /// and the front request's response fed. Returns the step and the bytes
    /// received. After [`Step::Done`] the event may hold more responses:
    /// call [`Conn::read_more`] while [`Conn::has_more_input`].
    ///
    /// `hangup` says the peer has shut down: then the socket is read until
    /// EOF, since its FIN raises no further edge.
    pub fn read(&mut self, buf: &mut [u8], hangup: bool) -> (Step, usize) {
        if self.connecting {
            // An error or hang-up while connecting is a failed connect.
            return match self.sock.as_ref().map(Socket::take_error) {
                Some(Ok(None)) => (Step::Pending, 0),
                _ => (Step::Failed(ErrorClass::Connect), 0),
            };
        }
        self.left = 0;
        self.more = true;
        if let Some(tls) = self.tls.as_mut() {
            tls.on_event();
        }
        self.read_more(buf, hangup)
    }

    /// Continues after a whole response: feeds the bytes left over in `buf`
    /// to the next response, then reads the socket again if the last read
    /// filled the buffer or the peer hung up.
    pub fn read_more(&mut self, buf: &mut [u8], hangup: bool) -> (Step, usize) {
        let mut total = 0;
        loop {
            if self.left > 0 {
                let step = feed_step(&mut self.reader, &buf[self.filled - self.left..self.filled]);
                self.left = match step {
                    Step::Done(done) => done.extra,
                    _ => 0,
                };
                if step != Step::Pending {
                    return (step, total);
                }
            }
            if !self.more {
                return (Step::Pending, total);
            }
            match self.recv(buf) {
                Fill::Eof => {
                    self.more = false;
                    return (eof_step(&mut self.reader), total);
                }
                Fill::Data(n) => {
                    total += n;
                    self.filled = n;
                    self.left = n;
                    let more = match &self.tls {
                        Some(tls) => tls.more(),
                        None => n == buf.len(),
                    };
                    self.more = more || hangup;
                }
                Fill::Blocked => {
                    self.more = false;
                    return (Step::Pending, total);
                }
                Fill::Failed(class) => return (Step::Failed(class), total),
            }
        }
    }

    /// Over HTTP/2: reads what this event brought into the session (whose
    /// ended streams then wait in its `done`) and writes what the session
    /// owes the server. Returns the bytes received.
    pub fn read_h2(&mut self, buf: &mut [u8], hangup: bool) -> (Result<(), H2Fail>, usize) {
        if self.connecting {
            return match self.sock.as_ref().map(Socket::take_error) {
                Some(Ok(None)) => (Ok(()), 0),
                _ => (Err(ErrorClass::Connect.into()), 0),
            };
        }
        if let Some(tls) = self.tls.as_mut() {
            tls.on_event();
        }
        let mut total = 0;
        loop {
            let fill = self.recv(buf);
            if let Err(fail) = self.check_alpn() {
                return (Err(fail), total);
            }
            let Some(h2) = self.h2.as_mut() else {
                return (Err(ErrorClass::Read.into()), total);
            };
            match fill {
                Fill::Data(n) => {
                    total += n;
                    if let Err(fail) = h2.feed(&buf[..n]) {
                        // Best effort: the GOAWAY naming a broken rule.
                        let _ = self.write(&Wire::empty());
                        return (Err(fail), total);
                    }
                    let more = match &self.tls {
                        Some(tls) => tls.more(),
                        None => n == buf.len(),
                    };
                    if !more && !hangup {
                        break;
                    }
                }
                Fill::Blocked => break,
                Fill::Eof => return (h2.on_eof().and(Err(ErrorClass::Read.into())), total),
                Fill::Failed(class) => return (Err(class.into()), total),
            }
        }
        match self.write(&Wire::empty()) {
            Step::Failed(class) => (Err(class.into()), total),
            _ => (Ok(()), total),
        }
    }

    /// Over HTTP/2 and TLS, once the handshake is done: a server whose
    /// ALPN did not pick h2 refuses HTTP/2 (there is no falling back).
    fn check_alpn(&mut self) -> Result<(), H2Fail> {
        if self.alpn_checked || self.h2.is_none() {
            return Ok(());
        }
        let Some(chosen) = self.tls.as_ref().and_then(|t| t.alpn()) else {
            return Ok(());
        };
        if chosen == Some(b"h2".as_slice()) {
            self.alpn_checked = true;
            return Ok(());
        }
        let chosen = chosen.map_or("no protocol".to_string(), |p| {
            format!("'{}'", String::from_utf8_lossy(p))
        });
        Err(H2Fail::Refused(format!(
            "the server refused HTTP/2: ALPN chose {chosen} instead of h2 \
             (it offers no HTTP/2 on this port)"
        )))
    }

    /// One read of response bytes: from the socket, or through TLS.
    fn recv(&mut self, buf: &mut [u8]) -> Fill {
        let Some(sock) = self.sock.as_mut() else {
            return Fill::Failed(ErrorClass::Read);
        };
        if let Some(tls) = self.tls.as_mut() {
            return tls.fill(sock, buf, &mut self.tls_news);
        }
        // Edge-triggered: one read drains the socket unless it filled the
        // buffer, so a whole response usually costs exactly one recv.
        loop {
            return match sock.read(buf) {
                Ok(0) => Fill::Eof,
                Ok(n) => Fill::Data(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Fill::Blocked,
                Err(e) if is_not_connected(&e) => Fill::Failed(ErrorClass::Connect),
                Err(_) => Fill::Failed(ErrorClass::Read),
            };
        }
    }
}

/// Writes the session's pending frames: through TLS (which takes them
/// all, once `alpn_ok`), or to the socket as far as it takes them.
fn write_h2(
    h2: &mut H2Conn,
    sock: &mut Socket,
    tls: Option<&mut TlsSession>,
    alpn_ok: bool,
) -> Step {
    let failed = |e: io::Error| {
        Step::Failed(if is_not_connected(&e) {
            ErrorClass::Connect
        } else {
            ErrorClass::Write
        })
    };
    if let Some(tls) = tls {
        if alpn_ok {
            let n = tls.send(h2.pending());
            h2.wrote(n);
        }
        return tls.flush(sock).map_or_else(failed, |()| Step::Pending);
    }
    while !h2.pending().is_empty() {
        match sock.write(h2.pending()) {
            Ok(n) => h2.wrote(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return failed(e),
        }
    }
    Step::Pending
}

fn is_not_connected(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ECONNREFUSED)
}

fn eof_step(reader: &mut ResponseReader) -> Step {
    match reader.on_eof() {
        Ok(done) => Step::Done(done),
        Err(_) => Step::Failed(ErrorClass::Read),
    }
}

fn feed_step(reader: &mut ResponseReader, data: &[u8]) -> Step {
    match reader.feed(data) {
        Ok(Some(done)) => Step::Done(done),
        Ok(None) => Step::Pending,
        Err(ReadFailure::Parse) => Step::Failed(ErrorClass::Parse),
        Err(ReadFailure::Eof) => Step::Failed(ErrorClass::Read),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever is left to write, the next bytes continue the queue of
    /// identical requests exactly, with or without a shortened batch.
    #[test]
    fn wire_continues_any_unwritten_suffix() {
        let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        for depth in [1, 3, 16] {
            let whole = request.repeat(depth);
            for wire in [
                Wire::new(request, depth),
                Wire {
                    len: request.len(),
                    batch: request.to_vec(),
                },
            ] {
                for left in 1..=whole.len() {
                    let mut out = Vec::new();
                    let mut rest = left;
                    while rest > 0 {
                        let next = wire.next(rest);
                        assert!(!next.is_empty());
                        out.extend_from_slice(next);
                        rest -= next.len();
                    }
                    assert_eq!(
                        out,
                        &whole[whole.len() - left..],
                        "depth {depth} left {left}"
                    );
                }
            }
        }
    }
}
