//! The transport: one non-blocking TCP connection and the request it carries.
//! It knows how to connect, write the pre-encoded request and read a
//! response, and reports what happened; it never decides when to send.

use crate::checker::Checker;
use crate::expect::Mismatch;
use crate::response::{Complete, ReadFailure, ResponseReader};
use crate::stats::ErrorClass;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Instant;

/// A request on the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    /// When the pacer meant it to start (the actual send in a closed loop).
    pub intended: Instant,
    pub sent_at: Instant,
    /// False for warm-up requests, which are never counted.
    pub measured: bool,
    pub deadline: Instant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Connecting,
    Writing,
    Reading,
}

/// What an I/O step concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Waiting for the socket; nothing to record yet.
    Pending,
    /// The response is whole.
    Done(Complete),
    Failed(ErrorClass),
}

/// One connection slot. It keeps its socket across requests when keep-alive holds.
#[derive(Debug)]
pub(crate) struct Conn {
    sock: Option<Socket>,
    phase: Phase,
    written: usize,
    reader: ResponseReader,
    pub job: Option<Job>,
    /// Whether `sock` is in the worker's epoll set (registered once per socket).
    pub registered: bool,
}

impl Conn {
    /// A slot; `check` is None when the run expects nothing of responses.
    pub fn new(is_head_request: bool, check: Option<Checker>) -> Conn {
        Conn {
            sock: None,
            phase: Phase::Reading,
            written: 0,
            reader: ResponseReader::new(is_head_request, check),
            job: None,
            registered: false,
        }
    }

    /// Why the last whole response failed the expectations, if it did.
    /// Valid until the next request begins.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.reader.mismatch()
    }

    pub fn has_socket(&self) -> bool {
        self.sock.is_some()
    }

    pub fn fd(&self) -> Option<i32> {
        self.sock.as_ref().map(|s| s.as_raw_fd())
    }

    pub fn wants_write(&self) -> bool {
        self.job.is_some() && matches!(self.phase, Phase::Connecting | Phase::Writing)
    }

    /// Drops the socket (which also removes it from epoll).
    pub fn close(&mut self) {
        self.sock = None;
        self.registered = false;
        self.reader.reset();
    }

    /// Opens a socket and starts a non-blocking connect.
    pub fn connect(&mut self, addr: SocketAddr) -> Result<(), ErrorClass> {
        let sock = Socket::new(
            Domain::for_address(addr),
            Type::STREAM.nonblocking(),
            Some(Protocol::TCP),
        )
        .map_err(|_| ErrorClass::Connect)?;
        let _ = sock.set_nodelay(true);
        self.phase = match sock.connect(&addr.into()) {
            Ok(()) => Phase::Writing,
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Phase::Connecting,
            Err(_) => return Err(ErrorClass::Connect),
        };
        self.sock = Some(sock);
        Ok(())
    }

    /// Begins a request on an open (or opening) socket.
    pub fn begin(&mut self, job: Job) {
        self.job = Some(job);
        self.written = 0;
        self.reader.reset();
        if self.phase == Phase::Reading {
            self.phase = Phase::Writing;
        }
    }

    /// Writes as much of the request as the socket takes.
    pub fn write(&mut self, request: &[u8]) -> Step {
        let Some(sock) = self.sock.as_mut() else {
            return Step::Failed(ErrorClass::Write);
        };
        if self.phase == Phase::Connecting {
            match sock.take_error() {
                Ok(None) => self.phase = Phase::Writing,
                _ => return Step::Failed(ErrorClass::Connect),
            }
        }
        while self.written < request.len() {
            match sock.write(&request[self.written..]) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Pending,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_not_connected(&e) => return Step::Failed(ErrorClass::Connect),
                Err(_) => return Step::Failed(ErrorClass::Write),
            }
        }
        self.phase = Phase::Reading;
        Step::Pending
    }

    /// Reads once into `buf` and feeds the response reader. Returns the step
    /// and the number of bytes received.
    ///
    /// `hangup` says the peer has shut down: then the socket is read until
    /// EOF, since its FIN raises no further edge.
    pub fn read(&mut self, buf: &mut [u8], hangup: bool) -> (Step, usize) {
        let Some(sock) = self.sock.as_mut() else {
            return (Step::Failed(ErrorClass::Read), 0);
        };
        if self.phase == Phase::Connecting {
            // An error or hang-up while connecting is a failed connect.
            return match sock.take_error() {
                Ok(None) => (Step::Pending, 0),
                _ => (Step::Failed(ErrorClass::Connect), 0),
            };
        }
        // Edge-triggered: one read drains the socket unless it filled the
        // buffer, so a whole response usually costs exactly one recv.
        let mut total = 0;
        loop {
            match sock.read(buf) {
                Ok(0) => return (eof_step(&mut self.reader), total),
                Ok(n) => {
                    total += n;
                    let step = feed_step(&mut self.reader, &buf[..n]);
                    if step != Step::Pending || (n < buf.len() && !hangup) {
                        return (step, total);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return (Step::Pending, total),
                Err(e) if is_not_connected(&e) => {
                    return (Step::Failed(ErrorClass::Connect), total)
                }
                Err(_) => return (Step::Failed(ErrorClass::Read), total),
            }
        }
    }
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
