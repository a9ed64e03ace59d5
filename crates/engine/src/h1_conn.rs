//! One connection's HTTP/1.1 session, without I/O: a FIFO of the requests
//! in flight (one, or up to the pipeline depth), how many of their bytes
//! are still to be written, and the reader parsing the responses that
//! answer the queue's front in order. The transport (`conn`) writes what
//! [`H1Fifo::pending`] gives and hands the reads to
//! [`H1Fifo::read_more`], as it does for an `h2_conn` session.
//!
//! New requests append their bytes to what is still to be written. A read
//! may bring several responses; the bytes past one response are fed to
//! the next: `left` bytes of the worker's buffer, ending at `filled`, are
//! still to be parsed, valid only within one readiness event.
//!
//! The request bytes a run writes ([`Wire`]) and what an I/O step
//! concluded ([`Step`]) live here too; `conn` re-exports them.

use crate::checker::Checker;
use crate::expect::{Expect, Mismatch};
use crate::job::Job;
use crate::response::{Complete, ReadFailure, ResponseReader};
use crate::stats::ErrorClass;
use crate::tls_conn::Fill;
use std::collections::VecDeque;
use std::sync::Arc;

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
    pub(crate) fn next(&self, left: usize) -> &[u8] {
        let b = &self.batch;
        let start = if left <= b.len() {
            b.len() - left
        } else {
            (self.len - left % self.len) % self.len
        };
        &b[start..b.len().min(start + left)]
    }
}

#[derive(Debug)]
pub(crate) struct H1Fifo {
    /// Requests in flight, oldest first; responses answer the front.
    jobs: VecDeque<Job>,
    /// Bytes of the queued requests not written yet (a suffix of the queue).
    unwritten: usize,
    reader: ResponseReader,
    /// Bytes of the worker's read buffer past the last whole response,
    /// ending at `filled`; valid only within one readiness event.
    left: usize,
    filled: usize,
    /// The last read filled the buffer, or the peer hung up: read again.
    more: bool,
}

impl H1Fifo {
    /// A FIFO for up to `depth` requests in flight; `check` is None when
    /// the run expects nothing of responses.
    pub fn new(is_head_request: bool, check: Option<Checker>, depth: usize) -> H1Fifo {
        H1Fifo {
            jobs: VecDeque::with_capacity(depth),
            unwritten: 0,
            reader: ResponseReader::new(is_head_request, check),
            left: 0,
            filled: 0,
            more: false,
        }
    }

    /// Prepares for the response to a mix's kind (see `ResponseReader::prepare`).
    pub fn prepare(&mut self, is_head: bool, expect: &Arc<Expect>) {
        self.reader.prepare(is_head, expect);
    }

    /// Why the last whole response failed the expectations, if it did.
    /// Valid until the next read.
    pub fn mismatch(&self) -> Option<Mismatch> {
        self.reader.mismatch()
    }

    pub fn outstanding(&self) -> usize {
        self.jobs.len()
    }

    pub fn front(&self) -> Option<&Job> {
        self.jobs.front()
    }

    /// Takes the front request, whose response is whole.
    pub fn pop(&mut self) -> Option<Job> {
        self.jobs.pop_front()
    }

    /// Queues a request of `len` bytes behind those in flight.
    pub fn push(&mut self, job: Job, len: usize) {
        self.jobs.push_back(job);
        self.unwritten += len;
    }

    /// Takes every request in flight with how many of them were written
    /// whole (requests of `request_len` bytes), the oldest first.
    pub fn drain(&mut self, request_len: usize) -> (VecDeque<Job>, usize) {
        let unwritten = self.unwritten.div_ceil(request_len.max(1));
        let jobs = std::mem::take(&mut self.jobs);
        let written = jobs.len().saturating_sub(unwritten);
        self.unwritten = 0;
        (jobs, written)
    }

    /// The next bytes to write (empty: all written): they continue the
    /// queue's requests in `wire`.
    pub fn pending<'w>(&self, wire: &'w Wire) -> &'w [u8] {
        if self.unwritten == 0 {
            return &[];
        }
        wire.next(self.unwritten)
    }

    /// `n` of the pending bytes were written.
    pub fn wrote(&mut self, n: usize) {
        self.unwritten -= n.min(self.unwritten);
    }

    pub fn has_pending(&self) -> bool {
        self.unwritten > 0
    }

    /// Whether bytes of this event remain to be parsed or read.
    pub fn has_more_input(&self) -> bool {
        self.left > 0 || self.more
    }

    /// Bytes left over after the last whole response.
    pub fn has_leftover(&self) -> bool {
        self.left > 0
    }

    /// A readiness event starts: nothing is left over, and the socket is
    /// to be read.
    pub fn start_event(&mut self) {
        self.left = 0;
        self.more = true;
    }

    /// io_uring: the ring received `n` bytes, copied to the start of the
    /// worker's buffer; [`H1Fifo::read_more`] then parses them without
    /// reading the socket.
    pub fn received(&mut self, n: usize) {
        self.filled = n;
        self.left = n;
        self.more = false;
    }

    /// The peer closed its side; ends the front response there.
    pub fn ended(&mut self) -> Step {
        self.left = 0;
        self.more = false;
        eof_step(&mut self.reader)
    }

    /// Feeds the bytes left over in `buf` to the next response, then reads
    /// again with `recv` (one read into `buf`, and whether more is waiting
    /// after it) if the last read filled the buffer or the peer hung up.
    /// Returns the step and the bytes received.
    pub fn read_more(
        &mut self,
        buf: &mut [u8],
        hangup: bool,
        mut recv: impl FnMut(&mut [u8]) -> (Fill, bool),
    ) -> (Step, usize) {
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
            match recv(buf) {
                (Fill::Eof, _) => {
                    self.more = false;
                    return (eof_step(&mut self.reader), total);
                }
                (Fill::Data(n), more) => {
                    total += n;
                    self.filled = n;
                    self.left = n;
                    self.more = more || hangup;
                }
                (Fill::Blocked, _) => {
                    self.more = false;
                    return (Step::Pending, total);
                }
                (Fill::Failed(class), _) => return (Step::Failed(class), total),
            }
        }
    }

    /// Starts over for the next socket (the requests were drained).
    pub fn reset(&mut self) {
        self.unwritten = 0;
        self.left = 0;
        self.more = false;
        self.reader.reset();
    }
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
