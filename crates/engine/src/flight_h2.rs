//! The worker's side of an HTTP/2 connection: reading what an event
//! brought, recording each stream the server ended (in whatever order it
//! ends them; latency from the stream's own send, or intended send in an
//! open loop) and refilling the connection's streams once they fall to the
//! refill mark, as `flight` does for HTTP/1.1. A connection after a GOAWAY
//! takes no new stream and is closed once its last one ends; a server that
//! refuses HTTP/2 stops the run.

use super::Worker;
use crate::h2_conn::{Finished, H2Conn, H2Fail};
use crate::stats::ErrorClass;
use crate::sys::WRITABLE;
use std::time::Instant;

impl Worker<'_> {
    /// An event on an HTTP/2 connection. Unlike HTTP/1.1, bytes on an idle
    /// one are normal (PING, SETTINGS, GOAWAY) and are read.
    pub(super) fn on_event_h2(&mut self, idx: usize, events: u32) {
        let conn = &mut self.conns[idx];
        if events & WRITABLE != 0 && conn.wants_write() {
            let wire = super::wire_of(self.setup, &self.mix, idx);
            if let crate::conn::Step::Failed(class) = conn.write(wire) {
                return self.fail_all(idx, class, Instant::now());
            }
        }
        if events & !WRITABLE != 0 {
            self.on_readable_h2(idx, events & crate::sys::HANGUP != 0);
        }
        self.note_tls(idx);
    }

    fn on_readable_h2(&mut self, idx: usize, hangup: bool) {
        let conn = &mut self.conns[idx];
        let measured = conn.front().is_some_and(|j| j.measured);
        let (result, n) = conn.read_session::<H2Conn>(&mut self.buf, hangup);
        if measured {
            self.rec.bytes += n as u64;
        }
        let now = Instant::now();
        let Some(h2) = self.conns[idx].h2_mut() else {
            return;
        };
        let mut done = std::mem::take(&mut h2.done);
        let answered = !done.is_empty();
        for stream in done.drain(..) {
            self.record(stream, now);
        }
        if let Some(h2) = self.conns[idx].h2_mut() {
            h2.done = done;
        }
        match result {
            Err(H2Fail::Refused(why)) => {
                let _ = self.setup.refused.set(why);
                return self.fail_all(idx, ErrorClass::Connect, now);
            }
            Err(H2Fail::Class(class)) => return self.fail_all(idx, class, now),
            Err(H2Fail::Violation(why)) => {
                self.rec.violated(why, now);
                return self.fail_all(idx, ErrorClass::Protocol, now);
            }
            Ok(()) => {}
        }
        let conn = &mut self.conns[idx];
        if conn.outstanding() == 0 && conn.h2_mut().is_some_and(|h| h.going_away) {
            conn.close();
        }
        if answered && self.conns[idx].outstanding() <= self.low_water {
            self.refill(idx, now);
        }
    }

    fn record(&mut self, stream: Finished, now: Instant) {
        self.in_flight -= 1;
        let job = stream.job;
        if !job.measured {
            return;
        }
        match stream.outcome {
            Ok(status) if stream.passed => {
                self.rec
                    .completed(job.kind, status, job.intended, job.sent_at, now);
            }
            Ok(status) => self.rec.mismatched(job.kind, status, stream.mismatch, now),
            Err(class) => self.rec.failed(job.kind, class, now),
        }
    }
}
