//! The transport: one non-blocking TCP connection and the requests it
//! carries. It knows how to connect, write the pre-encoded requests and read
//! responses, and reports what happened; it never decides when to send.
//!
//! A connection holds one session ([`Session`]), the wire of the run's
//! [`HttpVersion`]: over HTTP/1.1 a FIFO of the requests in flight
//! (`h1_conn`: responses answer the queue's front in order; see
//! [`Conn::read`] and [`Conn::read_more`]), over HTTP/2 an `h2_conn`
//! session (requests are streams, answered in any order, taken by the
//! worker as they end: `flight_h2`). Every operation shared by the
//! versions dispatches on the session at one point (`impl Session`).
//!
//! Over `https://` the same bytes go through the connection's TLS session
//! (`tls_conn`) instead of straight to the socket; the socket, TLS and
//! io_uring parts here are the same for every version.

use crate::checker::Checker;
use crate::expect::{Expect, Mismatch};
use crate::h1_conn::H1Fifo;
use crate::h2::H2Request;
use crate::h2_conn::{H2Conn, H2Fail};
use crate::handshake::TlsNews;
use crate::http_version::HttpVersion;
use crate::stats::ErrorClass;
use crate::tls::TlsClient;
use crate::tls_conn::{Fill, TlsSession};
use crate::ws_conn::{WsConn, WsFail, WsMessage};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

pub(crate) use crate::job::Job;

pub(crate) use crate::h1_conn::{Step, Wire};

/// What each connection's session is made from: one arm per
/// [`HttpVersion`], built once by the plan (`Plan::session_spec`).
#[derive(Debug, Clone, Default)]
pub(crate) enum SessionSpec {
    #[default]
    Http1,
    /// The request's frames (the plan's build checked they can be made).
    Http2(Arc<H2Request>),
    /// The message every connection sends (echo checked), or in hold
    /// mode the upgrade's target only.
    WebSocket { message: Arc<WsMessage>, hold: bool },
}

impl SessionSpec {
    pub fn version(&self) -> HttpVersion {
        match self {
            SessionSpec::Http1 => HttpVersion::Http1,
            SessionSpec::Http2(_) => HttpVersion::Http2,
            SessionSpec::WebSocket { .. } => HttpVersion::WebSocket,
        }
    }

    /// A session for a connection with up to `depth` requests in flight;
    /// `expect` is what every response must look like.
    fn session(&self, is_head: bool, expect: &Arc<Expect>, depth: usize) -> Session {
        match self {
            SessionSpec::Http1 => {
                let check = Checker::for_expect(expect);
                Session::H1(H1Fifo::new(is_head, check, depth))
            }
            SessionSpec::Http2(request) => {
                Session::H2(Box::new(H2Conn::new(request.clone(), expect)))
            }
            SessionSpec::WebSocket { message, hold } => Session::Ws(Box::new(if *hold {
                WsConn::holding(message.clone())
            } else {
                WsConn::new(message.clone(), true)
            })),
        }
    }
}

/// The wire a connection speaks: one session per HTTP version, each in its
/// own module. Every operation the connection shares across versions
/// dispatches here, once; the socket and TLS under it are the `Conn`'s.
// HTTP/1.1's FIFO stays inline (as its fields were in `Conn`): it is the
// hot path of most runs, and each connection holds one session for good.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Session {
    H1(H1Fifo),
    H2(Box<H2Conn>),
    Ws(Box<WsConn>),
}

impl Session {
    fn version(&self) -> HttpVersion {
        match self {
            Session::H1(_) => HttpVersion::Http1,
            Session::H2(_) => HttpVersion::Http2,
            Session::Ws(_) => HttpVersion::WebSocket,
        }
    }

    fn room(&self, depth: usize) -> usize {
        match self {
            Session::H1(_) => depth,
            Session::H2(h2) => h2.room(depth),
            Session::Ws(ws) => ws.room(depth),
        }
    }

    fn outstanding(&self) -> usize {
        match self {
            Session::H1(h1) => h1.outstanding(),
            Session::H2(h2) => h2.outstanding(),
            Session::Ws(ws) => ws.outstanding(),
        }
    }

    fn front(&self) -> Option<&Job> {
        match self {
            Session::H1(h1) => h1.front(),
            Session::H2(h2) => h2.front(),
            Session::Ws(ws) => ws.front(),
        }
    }

    fn push(&mut self, job: Job, len: usize) {
        match self {
            Session::H1(h1) => h1.push(job, len),
            Session::H2(h2) => h2.push(job),
            Session::Ws(ws) => ws.push(job),
        }
    }

    fn drain(&mut self, request_len: usize) -> (VecDeque<Job>, Lost) {
        match self {
            Session::H1(h1) => {
                let (jobs, written) = h1.drain(request_len);
                (jobs, Lost::InOrder { written })
            }
            Session::H2(h2) => (h2.drain(), Lost::Alike),
            Session::Ws(ws) => (ws.drain(), Lost::Alike),
        }
    }

    /// The bytes owed to the server (empty: none).
    fn pending<'a>(&'a self, wire: &'a Wire) -> &'a [u8] {
        match self {
            Session::H1(h1) => h1.pending(wire),
            Session::H2(h2) => h2.pending(),
            Session::Ws(ws) => ws.pending(),
        }
    }

    fn wrote(&mut self, n: usize) {
        match self {
            Session::H1(h1) => h1.wrote(n),
            Session::H2(h2) => h2.wrote(n),
            Session::Ws(ws) => ws.wrote(n),
        }
    }

    /// Whether the connection wants the socket's writable events: HTTP/1.1
    /// while requests are in flight and bytes of them unwritten; HTTP/2
    /// whenever frames are owed (even on an idle connection: SETTINGS
    /// acknowledgements, PING answers). `open`: a socket is connecting or
    /// TLS has records to flush.
    fn wants_write(&self, has_socket: bool, open: bool) -> bool {
        match self {
            Session::H1(h1) => h1.outstanding() > 0 && (open || h1.has_pending()),
            Session::H2(h2) => has_socket && (open || !h2.pending().is_empty()),
            Session::Ws(ws) => has_socket && (open || !ws.pending().is_empty()),
        }
    }

    /// Which stalled start the session is waiting on at the deadline.
    fn stalled(&self) -> Option<&'static str> {
        match self {
            Session::H1(_) | Session::Ws(_) => None,
            Session::H2(h2) => h2.stalled(),
        }
    }

    fn reset(&mut self) {
        match self {
            Session::H1(h1) => h1.reset(),
            Session::H2(h2) => h2.reset(),
            Session::Ws(ws) => ws.reset(),
        }
    }
}

/// How the requests drained from a connection given up were lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lost {
    /// Answered in order (HTTP/1.1): the first `written` were written
    /// whole, and the class of each follows from its place.
    InOrder { written: usize },
    /// Independent streams (HTTP/2): all fail alike.
    Alike,
}

/// A session that reads whatever an event brings, on an idle connection
/// too (HTTP/2, WebSocket): what [`Conn::read_session`] needs of it.
pub(crate) trait ReadSession {
    /// Why the session cannot go on; a failure of the socket or TLS under
    /// it becomes one through `From<ErrorClass>`.
    type Fail: From<ErrorClass>;

    /// The connection's session, when it is of this kind.
    fn of(conn: &mut Conn) -> Option<&mut Self>;

    /// Reads the bytes the server sent.
    fn feed(&mut self, data: &[u8]) -> Result<(), Self::Fail>;

    /// The server ended the connection: Ok when that is an expected end
    /// (the read still fails the connection), else why it is not.
    fn on_eof(&mut self) -> Result<(), Self::Fail>;

    /// A server whose ALPN refused the version (`why`, the sentence):
    /// the failure that stops the run, for a version that needs ALPN.
    fn refused(_why: String) -> Option<Self::Fail> {
        None
    }
}

impl ReadSession for H2Conn {
    type Fail = H2Fail;

    fn of(conn: &mut Conn) -> Option<&mut H2Conn> {
        conn.h2_mut()
    }

    fn feed(&mut self, data: &[u8]) -> Result<(), H2Fail> {
        H2Conn::feed(self, data)
    }

    fn on_eof(&mut self) -> Result<(), H2Fail> {
        H2Conn::on_eof(self)
    }

    fn refused(why: String) -> Option<H2Fail> {
        Some(H2Fail::Refused(why))
    }
}

impl ReadSession for WsConn {
    type Fail = WsFail;

    fn of(conn: &mut Conn) -> Option<&mut WsConn> {
        conn.ws_mut()
    }

    fn feed(&mut self, data: &[u8]) -> Result<(), WsFail> {
        WsConn::feed(self, data)
    }

    fn on_eof(&mut self) -> Result<(), WsFail> {
        WsConn::on_eof(self)
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
    /// The requests in flight and their parsing, for the run's version.
    session: Session,
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
    /// Over TLS: ALPN was seen to choose what the session requires on
    /// this socket (see [`HttpVersion::alpn_required`]).
    alpn_checked: bool,
}

/// Sockets closed since the ring last submitted. Operations queued but not
/// yet submitted name their socket by descriptor number: closed at once, the
/// number could be reused by the slot's next socket, and those operations
/// (a stale receive among them) would act on it. The worker empties this
/// after each submission.
pub(crate) type Graveyard = std::rc::Rc<std::cell::RefCell<Vec<Socket>>>;

impl Conn {
    /// A slot for up to `depth` requests in flight, speaking what `spec`
    /// makes; `expect` is what every response must look like.
    pub fn new(
        spec: &SessionSpec,
        is_head_request: bool,
        expect: &Arc<Expect>,
        depth: usize,
        tls_client: Option<Arc<TlsClient>>,
    ) -> Conn {
        Conn {
            sock: None,
            connecting: false,
            session: spec.session(is_head_request, expect, depth),
            registered: false,
            listed: false,
            tls_client,
            tls: None,
            tls_news: TlsNews::default(),
            generation: 0,
            graveyard: None,
            alpn_checked: false,
        }
    }

    /// The HTTP version the connection speaks.
    pub fn version(&self) -> HttpVersion {
        self.session.version()
    }

    /// The HTTP/1.1 session, when it is one.
    fn h1(&self) -> Option<&H1Fifo> {
        match &self.session {
            Session::H1(h1) => Some(h1),
            _ => None,
        }
    }

    fn h1_mut(&mut self) -> Option<&mut H1Fifo> {
        match &mut self.session {
            Session::H1(h1) => Some(h1),
            _ => None,
        }
    }

    /// The HTTP/2 session, when it is one (for the worker's `flight_h2`).
    pub fn h2_mut(&mut self) -> Option<&mut H2Conn> {
        match &mut self.session {
            Session::H2(h2) => Some(h2),
            _ => None,
        }
    }

    /// The WebSocket session, when it is one (for the worker's `flight_ws`).
    pub fn ws_mut(&mut self) -> Option<&mut WsConn> {
        match &mut self.session {
            Session::Ws(ws) => Some(ws),
            _ => None,
        }
    }

    /// Whether the connection takes no more work for good: a WebSocket
    /// connection of hold mode that was opened once.
    pub fn held(&self) -> bool {
        matches!(&self.session, Session::Ws(ws) if ws.retired())
    }

    /// How many requests may be in flight: `depth`, or over HTTP/2 what
    /// the session allows of it.
    pub fn room(&self, depth: usize) -> usize {
        self.session.room(depth)
    }

    /// HTTP/1.1: prepares for the response to a mix's kind (see
    /// `ResponseReader::prepare`; a mix is HTTP/1.1 only).
    pub fn prepare(&mut self, is_head: bool, expect: &Arc<Expect>) {
        if let Some(h1) = self.h1_mut() {
            h1.prepare(is_head, expect);
        }
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

    /// HTTP/1.1: why the last whole response failed the expectations, if
    /// it did. Valid until the next read.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.h1().and_then(H1Fifo::mismatch)
    }

    pub fn has_socket(&self) -> bool {
        self.sock.is_some()
    }

    pub fn fd(&self) -> Option<i32> {
        self.sock.as_ref().map(|s| s.as_raw_fd())
    }

    /// Requests in flight.
    pub fn outstanding(&self) -> usize {
        self.session.outstanding()
    }

    /// The oldest request in flight: the one the next response answers.
    pub fn front(&self) -> Option<&Job> {
        self.session.front()
    }

    pub fn wants_write(&self) -> bool {
        let open = self.connecting || self.tls.as_ref().is_some_and(|t| t.wants_write());
        self.session.wants_write(self.sock.is_some(), open)
    }

    /// The session's stalled start at the deadline, if it waits on one.
    pub fn stalled(&self) -> Option<&'static str> {
        self.session.stalled()
    }

    /// HTTP/1.1: whether bytes of this event remain to be parsed or read:
    /// true only while requests are in flight (anything else is the
    /// caller's to judge).
    pub fn has_more_input(&self) -> bool {
        self.h1().is_some_and(H1Fifo::has_more_input)
    }

    /// HTTP/1.1: bytes left over after the last whole response (unasked
    /// for when no request is in flight).
    pub fn has_leftover(&self) -> bool {
        self.h1().is_some_and(H1Fifo::has_leftover)
    }

    /// HTTP/1.1: takes the front request, whose response is whole.
    pub fn pop(&mut self) -> Option<Job> {
        self.h1_mut()?.pop()
    }

    /// Takes every request in flight (the connection is being given up)
    /// with how they were lost, the oldest first.
    pub fn drain(&mut self, request_len: usize) -> (VecDeque<Job>, Lost) {
        self.session.drain(request_len)
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
        self.alpn_checked = false;
        self.session.reset();
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
    /// bytes are owed.
    pub fn to_send<'w>(&'w self, wire: &'w Wire) -> Option<&'w [u8]> {
        if self.sock.is_none() || self.connecting {
            return None;
        }
        let pending = self.session.pending(wire);
        (!pending.is_empty()).then_some(pending)
    }

    /// io_uring: the ring sent `n` of the pending bytes.
    pub fn sent(&mut self, n: usize) {
        self.session.wrote(n);
    }

    /// io_uring (HTTP/1.1 only: the plan refuses it for other versions):
    /// the ring received `n` bytes, copied to the start of the worker's
    /// buffer; [`Conn::read_more`] then feeds them to the responses
    /// without reading the socket.
    pub fn received(&mut self, n: usize) {
        if let Some(h1) = self.h1_mut() {
            h1.received(n);
        }
    }

    /// io_uring (HTTP/1.1 only): the peer closed its side; ends the front
    /// response there.
    pub fn ended(&mut self) -> Step {
        match self.h1_mut() {
            Some(h1) => h1.ended(),
            None => Step::Failed(ErrorClass::Read),
        }
    }

    /// Queues a request of `len` bytes behind those in flight.
    pub fn push(&mut self, job: Job, len: usize) {
        self.session.push(job, len);
    }

    /// Writes as much of what the session owes the server (`wire`: the
    /// HTTP/1.1 requests' bytes) as the socket takes.
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
        let failed = |e: io::Error| {
            Step::Failed(if is_not_connected(&e) {
                ErrorClass::Connect
            } else {
                ErrorClass::Write
            })
        };
        let session = &mut self.session;
        if let Some(tls) = self.tls.as_mut() {
            // Over TLS nothing leaves before ALPN chose what the version
            // requires: a refusing server must not see even the preface.
            if self.alpn_checked || session.version().alpn_required().is_none() {
                loop {
                    let pending = session.pending(wire);
                    if pending.is_empty() {
                        break;
                    }
                    match tls.send(pending) {
                        0 => break,
                        n => session.wrote(n),
                    }
                }
            }
            return tls.flush(sock).map_or_else(failed, |()| Step::Pending);
        }
        loop {
            let pending = session.pending(wire);
            if pending.is_empty() {
                return Step::Pending;
            }
            match sock.write(pending) {
                Ok(n) => session.wrote(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return failed(e),
            }
        }
    }

    /// HTTP/1.1: starts reading on a readiness event: the socket is read
    /// into `buf` and the front request's response fed. Returns the step
    /// and the bytes received. After [`Step::Done`] the event may hold more
    /// responses: call [`Conn::read_more`] while [`Conn::has_more_input`].
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
        if let Some(tls) = self.tls.as_mut() {
            tls.on_event();
        }
        match self.h1_mut() {
            Some(h1) => h1.start_event(),
            None => return (Step::Failed(ErrorClass::Read), 0),
        }
        self.read_more(buf, hangup)
    }

    /// HTTP/1.1: continues after a whole response: feeds the bytes left
    /// over in `buf` to the next response, then reads the socket again if
    /// the last read filled the buffer or the peer hung up.
    pub fn read_more(&mut self, buf: &mut [u8], hangup: bool) -> (Step, usize) {
        let Conn {
            session,
            sock,
            tls,
            tls_news,
            ..
        } = self;
        let Session::H1(h1) = session else {
            return (Step::Failed(ErrorClass::Read), 0);
        };
        h1.read_more(buf, hangup, |buf| {
            let fill = recv(sock, tls, tls_news, buf);
            let more = match (&fill, tls.as_ref()) {
                (Fill::Data(_), Some(tls)) => tls.more(),
                (Fill::Data(n), None) => *n == buf.len(),
                _ => false,
            };
            (fill, more)
        })
    }

    /// HTTP/2 or WebSocket: reads what this event brought into the
    /// session `S` (whose ended streams or echoes then wait in its `done`)
    /// and writes what the session owes the server (SETTINGS
    /// acknowledgements, PING answers, pongs, a close in reply). Returns
    /// the bytes received. `hangup` says the peer has shut down: then the
    /// socket is read until EOF, since its FIN raises no further edge.
    pub fn read_session<S: ReadSession>(
        &mut self,
        buf: &mut [u8],
        hangup: bool,
    ) -> (Result<(), S::Fail>, usize) {
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
            let fill = recv(&mut self.sock, &mut self.tls, &mut self.tls_news, buf);
            if let Some(fail) = self.alpn_refusal().and_then(S::refused) {
                return (Err(fail), total);
            }
            let Some(session) = S::of(self) else {
                return (Err(ErrorClass::Read.into()), total);
            };
            match fill {
                Fill::Data(n) => {
                    total += n;
                    if let Err(fail) = session.feed(&buf[..n]) {
                        // Best effort: what the failure owes the server
                        // (HTTP/2's GOAWAY naming a broken rule, the
                        // WebSocket close in reply).
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
                Fill::Eof => return (session.on_eof().and(Err(ErrorClass::Read.into())), total),
                Fill::Failed(class) => return (Err(class.into()), total),
            }
        }
        match self.write(&Wire::empty()) {
            Step::Failed(class) => (Err(class.into()), total),
            _ => (Ok(()), total),
        }
    }

    /// Over TLS, once the handshake is done: a server whose ALPN did not
    /// choose what the session's version requires refuses that version
    /// (there is no falling back): the sentence saying so, if it did.
    fn alpn_refusal(&mut self) -> Option<String> {
        let version = self.session.version();
        let wanted = version.alpn_required().filter(|_| !self.alpn_checked)?;
        let chosen = self.tls.as_ref().and_then(|t| t.alpn())?;
        if chosen == Some(wanted) {
            self.alpn_checked = true;
            return None;
        }
        let chosen = chosen.map_or("no protocol".to_string(), |p| {
            format!("'{}'", String::from_utf8_lossy(p))
        });
        let wanted = String::from_utf8_lossy(wanted);
        Some(format!(
            "the server refused {version}: ALPN chose {chosen} instead of {wanted} \
             (it offers no {version} on this port)"
        ))
    }
}

/// One read of response bytes: from the socket, or through TLS.
fn recv(
    sock: &mut Option<Socket>,
    tls: &mut Option<Box<TlsSession>>,
    news: &mut TlsNews,
    buf: &mut [u8],
) -> Fill {
    let Some(sock) = sock.as_mut() else {
        return Fill::Failed(ErrorClass::Read);
    };
    if let Some(tls) = tls.as_mut() {
        return tls.fill(sock, buf, news);
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

fn is_not_connected(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ECONNREFUSED)
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
