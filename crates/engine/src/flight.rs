//! The requests in flight on each connection, for the worker: queueing them
//! (while the pacer and stop rule allow and fewer than the pipeline depth
//! are in flight), answering them in order as responses arrive, and failing
//! or cutting every one of them when their connection is given up. A
//! connection is refilled, and listed as available, once its requests in
//! flight fall to the refill mark ([`super::refill_at`]): at once in an open
//! loop, at a quarter of the depth in a closed one (half for HTTP/2
//! streams), so pipelined writes come in batches.

use super::Worker;
use crate::conn::{Conn, Job, Lost, Step};
use crate::response::Complete;
use crate::stats::ErrorClass;
use crate::sys::{EDGE, HANGUP, READABLE, WRITABLE};
use std::time::Instant;

impl Worker<'_> {
    /// An event on an HTTP/1.1 connection.
    pub(super) fn on_event_h1(&mut self, idx: usize, events: u32) {
        if self.conns[idx].outstanding() == 0 {
            // Data or EOF on an idle keep-alive connection: the server closed
            // it or misbehaved; either way it cannot be reused.
            if events & !WRITABLE != 0 {
                self.conns[idx].close();
            }
            return;
        }
        if events & WRITABLE != 0 && self.conns[idx].wants_write() {
            let wire = super::wire_of(self.setup, &self.mix, idx);
            if let Step::Failed(class) = self.conns[idx].write(wire) {
                return self.fail_all(idx, class, Instant::now());
            }
        }
        if events & !WRITABLE != 0 {
            self.on_readable(idx, events & HANGUP != 0);
        }
        self.note_tls(idx);
    }

    /// Reads every response this readiness event brought, answering the
    /// requests in order, then refills the connection if it fell to the refill mark
    /// (once, after all of them; when none completed it has no more room
    /// than before).
    pub(super) fn on_readable(&mut self, idx: usize, hangup: bool) {
        self.answer(idx, hangup, |conn, buf, first| {
            if first {
                conn.read(buf, hangup)
            } else {
                conn.read_more(buf, hangup)
            }
        });
    }

    /// Answers the requests on connection `idx` with the steps `next` reads
    /// (`first` on its first call): from the socket over epoll, from the
    /// bytes the ring received over io_uring. `hangup`: the peer is gone.
    pub(super) fn answer(
        &mut self,
        idx: usize,
        hangup: bool,
        mut next: impl FnMut(&mut Conn, &mut [u8], bool) -> (Step, usize),
    ) {
        let mut first = true;
        let mut answered = None;
        loop {
            let conn = &mut self.conns[idx];
            let measured = conn.front().is_some_and(|j| j.measured);
            let (step, n) = next(conn, &mut self.buf, first);
            first = false;
            if measured {
                self.rec.bytes += n as u64;
            }
            match step {
                Step::Pending => break,
                Step::Failed(class) => return self.fail_all(idx, class, Instant::now()),
                Step::Done(done) => {
                    let now = Instant::now();
                    answered = Some(now);
                    if !self.complete(idx, done, now) {
                        break;
                    }
                }
            }
            let conn = &mut self.conns[idx];
            if conn.outstanding() == 0 {
                // A peer that hung up with its last answer takes no more
                // requests, and its FIN raises no further edge.
                if hangup {
                    conn.close();
                }
                break;
            }
            if !conn.has_more_input() {
                break;
            }
        }
        if let Some(now) = answered {
            if self.conns[idx].outstanding() <= self.low_water {
                self.refill(idx, now);
            }
        }
    }

    /// Records the front request's whole response. Returns false when the
    /// connection cannot carry more: then it is closed, and any request
    /// still in flight on it is lost (a read error).
    fn complete(&mut self, idx: usize, done: Complete, now: Instant) -> bool {
        let conn = &mut self.conns[idx];
        let Some(job) = conn.pop() else { return false };
        self.in_flight -= 1;
        if job.measured && done.passed {
            self.rec
                .completed(job.kind, done.status, job.intended, job.sent_at, now);
        } else if job.measured {
            let first = self.rec.first_mismatch.is_none();
            let details = first.then(|| conn.mismatch()).flatten();
            self.rec.mismatched(job.kind, done.status, details, now);
        }
        // Bytes past the response with nothing asked for are the server's
        // error; the connection is not trusted again.
        let garbage = conn.outstanding() == 0 && conn.has_leftover();
        if done.keep_alive && self.setup.keepalive && !garbage {
            return true;
        }
        if conn.outstanding() == 0 {
            conn.close();
        } else {
            self.fail_all(idx, ErrorClass::Read, now);
        }
        false
    }

    /// Gives the connection up: every request in flight on it fails once,
    /// and it waits in the available list (so a start that fails at once, a
    /// refused connect, never recurses). The request being answered fails
    /// with `cause`; those behind it were lost with the connection (read
    /// errors), except that a failed connect or a timeout fails them all
    /// alike and a failed write fails the requests it did not write.
    pub(super) fn fail_all(&mut self, idx: usize, cause: ErrorClass, now: Instant) {
        let conn = &mut self.conns[idx];
        let (jobs, lost) = conn.drain(super::wire_of(self.setup, &self.mix, idx).len);
        conn.close();
        self.in_flight -= jobs.len();
        for (i, job) in jobs.iter().enumerate() {
            if job.measured {
                let class = match lost {
                    Lost::InOrder { written } => lost_as(cause, i, written),
                    Lost::Alike => cause,
                };
                self.rec.failed(job.kind, class, now);
            }
        }
        self.list(idx);
    }

    /// Offers work to every available connection once.
    pub(super) fn fill_idle(&mut self, now: Instant) {
        if self.available.is_empty() || (self.open_loop && self.taken == self.due) {
            return;
        }
        let available = std::mem::take(&mut self.available);
        for idx in available {
            self.conns[idx].listed = false;
            self.refill(idx, now);
        }
    }

    /// Queues requests on connection `idx` while the pacer and stop rule
    /// allow and it has fewer than the pipeline depth in flight, then
    /// writes them together. Lists it as available when it is not full.
    pub(super) fn refill(&mut self, idx: usize, now: Instant) {
        let room = self.conns[idx].room(self.setup.depth);
        let mut queued = false;
        while self.conns[idx].outstanding() < room && self.take(idx, now) {
            queued = true;
        }
        if queued {
            if let Step::Failed(class) = self.start(idx) {
                return self.fail_all(idx, class, now);
            }
        }
        self.list(idx);
    }

    /// Lists connection `idx` as able to take requests, once, when it is at
    /// or below the refill mark.
    fn list(&mut self, idx: usize) {
        let conn = &mut self.conns[idx];
        if !conn.listed && conn.outstanding() <= self.low_water && !conn.held() {
            conn.listed = true;
            self.available.push(idx);
        }
    }

    /// Queues one request on connection `idx` if the pacer and stop rule allow.
    fn take(&mut self, idx: usize, now: Instant) -> bool {
        if self.stop.deadline_passed(now) || !self.pacer.allows_connection(idx, self.setup.t0, now)
        {
            return false;
        }
        let intended = if self.open_loop {
            if self.taken >= self.due {
                return false;
            }
            match self.pacer.intended(self.taken) {
                Some(t) => t,
                None => return false,
            }
        } else {
            now
        };
        let measured = intended >= self.setup.measure_start;
        if measured && !self.stop.take() {
            return false;
        }
        if self.open_loop {
            self.taken += 1;
        }
        let kind = self.draw(idx);
        if measured {
            self.rec.sent(kind, intended, now);
        }
        let job = Job {
            intended,
            sent_at: now,
            measured,
            deadline: now + self.setup.timeout,
            kind,
        };
        self.in_flight += 1;
        let len = super::wire_of(self.setup, &self.mix, idx).len;
        self.conns[idx].push(job, len);
        true
    }

    /// Connects if needed and writes the queued requests (over io_uring:
    /// queues the connect or the send).
    fn start(&mut self, idx: usize) -> Step {
        if matches!(self.driver, super::Driver::Uring(_)) {
            return self.start_ring(idx);
        }
        let conn = &mut self.conns[idx];
        if !conn.has_socket() {
            if let Err(class) = conn.connect(self.setup.addr) {
                return Step::Failed(class);
            }
        }
        let step = conn.write(super::wire_of(self.setup, &self.mix, idx));
        self.register(idx);
        step
    }

    /// Adds a new socket to the epoll set, once, for both directions.
    fn register(&mut self, idx: usize) {
        let conn = &mut self.conns[idx];
        let Some(fd) = conn.fd() else { return };
        if let (false, super::Driver::Epoll(poller)) = (conn.registered, &self.driver) {
            conn.registered = poller
                .add(fd, READABLE | WRITABLE | HANGUP | EDGE, idx)
                .is_ok();
        }
    }

    /// A request unanswered within the timeout fails its connection; the
    /// front request is the oldest, so it is the one to check. While a TLS
    /// handshake is still under way, the failure is the handshake's (`tls`).
    pub(super) fn sweep_timeouts(&mut self, now: Instant) {
        for idx in 0..self.conns.len() {
            if self.conns[idx].front().is_some_and(|j| j.deadline <= now) {
                let timeout = self.setup.timeout;
                let silent = || crate::tls_cause::silent(timeout);
                let cause = if self.conns[idx].handshake_given_up(silent) {
                    ErrorClass::Tls
                } else {
                    ErrorClass::Timeout
                };
                self.fail_all(idx, cause, now);
                self.note_tls(idx);
            }
        }
    }

    /// The deadline passed: every measured request in flight is cut. When
    /// this worker never completed a TLS handshake, the requests waiting
    /// on one instead fail as `tls`: the server never answered one (a
    /// healthy run's handshakes under way at its end are only cut).
    pub(super) fn cut_in_flight(&mut self) {
        let none_completed = self.rec.tls.as_ref().is_some_and(|t| !t.any_completed());
        let now = Instant::now();
        for idx in 0..self.conns.len() {
            let waiting = self.conns[idx].outstanding() > 0;
            if none_completed
                && waiting
                && self.conns[idx].handshake_given_up(crate::tls_cause::unfinished)
            {
                self.fail_all(idx, ErrorClass::Tls, now);
                self.note_tls(idx);
                continue;
            }
            let conn = &mut self.conns[idx];
            if let Some(why) = conn.stalled().filter(|_| waiting) {
                let _ = self.setup.stalled.set(why);
            }
            let (jobs, _) = conn.drain(super::wire_of(self.setup, &self.mix, idx).len);
            for job in jobs.iter().filter(|j| j.measured) {
                self.rec.cut(job.kind);
            }
            conn.close();
        }
        self.in_flight = 0;
    }
}

/// The class a request lost with its connection counts as: the `i`th in
/// flight (oldest first) when the first `written` were written whole and
/// the connection failed with `cause`.
fn lost_as(cause: ErrorClass, i: usize, written: usize) -> ErrorClass {
    match cause {
        ErrorClass::Connect | ErrorClass::Tls | ErrorClass::Timeout => cause,
        ErrorClass::Write if i >= written => cause,
        ErrorClass::Parse if i == 0 => cause,
        _ => ErrorClass::Read,
    }
}
