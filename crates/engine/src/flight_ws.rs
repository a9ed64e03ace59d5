//! The worker's side of a WebSocket connection: reading what an event
//! brought, recording each echo as a completed request (in the order sent;
//! latency from the message's own send, or its intended send in an open
//! loop; a mismatch when the echo differs), counting the server's closes
//! by code, and refilling the connection once its messages in flight fall
//! to the refill mark, as `flight` does for HTTP/1.1. A session that ends
//! (a close, a refused upgrade, a broken rule) fails what awaited its echo
//! with [`WsFail::class`] and the connection is opened anew when work is
//! offered to it; in hold mode it stays closed. Hold mode also pings every
//! open connection at the run's interval and, at the end, counts those
//! still open.
//!
//! At the end of a run (its deadline, its count reached, a cancel) every
//! open connection is closed politely (RFC 6455 §7): the messages still
//! awaiting their echo are cut, as any request in flight at the end is,
//! a close with code 1000 is sent, and the server's close awaited for at
//! most [`CLOSE_WAIT`] over all of the worker's connections; then the
//! sockets are dropped. Nothing read meanwhile is recorded but a close
//! the server made on its own (a code other than 1000, which crossed ours):
//! the server's 1000 is the expected answer (no error, no close counted),
//! and the run ended before, so the wait is no part of its duration or
//! rate.

use super::Worker;
use crate::conn::Step;
use crate::sys::{HANGUP, WRITABLE};
use crate::ws_conn::{Finished, WsConn, WsFail};
use crate::ws_frame::code;
use std::time::{Duration, Instant};

/// A WebSocket echo's status: the connection's own (101 Switching
/// Protocols), which makes it ok. The status map counts the 101s per
/// upgrade instead (`WsCounts::upgrades`), not per echo.
const SWITCHED: u16 = 101;

/// The longest a worker waits at the end for the server's answers to its
/// closes, over all of its connections (the run's timeout, when shorter).
const CLOSE_WAIT: Duration = Duration::from_secs(1);

impl Worker<'_> {
    /// An event on a WebSocket connection. As over HTTP/2, bytes on an
    /// idle connection are normal (a ping, a close) and are read.
    pub(super) fn on_event_ws(&mut self, idx: usize, events: u32) {
        let conn = &mut self.conns[idx];
        if events & WRITABLE != 0 && conn.wants_write() {
            let wire = super::wire_of(self.setup, &self.mix, idx);
            if let Step::Failed(class) = conn.write(wire) {
                return self.fail_all(idx, class, Instant::now());
            }
        }
        if events & !WRITABLE != 0 {
            self.on_readable_ws(idx, events & HANGUP != 0);
        }
        self.note_tls(idx);
    }

    fn on_readable_ws(&mut self, idx: usize, hangup: bool) {
        let conn = &mut self.conns[idx];
        let measured = conn.front().is_some_and(|j| j.measured);
        let (result, n) = conn.read_session::<WsConn>(&mut self.buf, hangup);
        if measured {
            self.rec.bytes += n as u64;
        }
        let now = Instant::now();
        let Some(ws) = self.conns[idx].ws_mut() else {
            return;
        };
        // Taken and given back, so the buffers keep their capacity.
        let mut done = std::mem::take(&mut ws.done);
        let mut closes = std::mem::take(&mut ws.closes);
        let pongs = std::mem::take(&mut ws.pongs);
        let upgrades = std::mem::take(&mut ws.upgrades);
        let answered = !done.is_empty();
        for echo in done.drain(..) {
            self.record_ws(echo, now);
        }
        for code in closes.drain(..) {
            self.rec.closed_with(code, now);
        }
        if now >= self.setup.measure_start {
            self.rec.ws.pongs += pongs;
            self.rec.ws.upgrades += upgrades;
        }
        if let Some(ws) = self.conns[idx].ws_mut() {
            ws.done = done;
            ws.closes = closes;
        }
        match result {
            Err(WsFail::Violation(why)) => {
                self.rec.violated(why, now);
                return self.fail_all(idx, crate::stats::ErrorClass::Protocol, now);
            }
            Err(fail) => return self.fail_all(idx, fail.class(), now),
            Ok(()) => {}
        }
        if self.conns[idx].ws_mut().is_some_and(|ws| ws.is_closed()) {
            // Our close answered (or the session over): nothing more comes.
            return self.fail_all(idx, crate::stats::ErrorClass::Closed, now);
        }
        if answered && self.conns[idx].outstanding() <= self.low_water {
            self.refill(idx, now);
        }
    }

    fn record_ws(&mut self, echo: Finished, now: Instant) {
        self.in_flight -= 1;
        let job = echo.job;
        if !job.measured {
            return;
        }
        match echo.outcome {
            Ok(()) if echo.passed => {
                self.rec
                    .completed(job.kind, SWITCHED, job.intended, job.sent_at, now);
            }
            Ok(()) => self.rec.mismatched(job.kind, SWITCHED, echo.mismatch, now),
            Err(class) => self.rec.failed(job.kind, class, now),
        }
    }

    /// Hold mode: pings every open connection (and writes the pings).
    pub(super) fn ping_open(&mut self, now: Instant) {
        for idx in 0..self.conns.len() {
            let Some(ws) = self.conns[idx].ws_mut().filter(|ws| ws.is_open()) else {
                continue;
            };
            ws.ping();
            if now >= self.setup.measure_start {
                self.rec.ws.pings += 1;
            }
            let wire = super::wire_of(self.setup, &self.mix, idx);
            if let Step::Failed(class) = self.conns[idx].write(wire) {
                self.fail_all(idx, class, now);
            }
        }
    }

    /// At the end: counts the WebSocket connections still open.
    pub(super) fn count_held_open(&mut self) {
        for conn in &mut self.conns {
            if conn.ws_mut().is_some_and(|ws| ws.is_open()) {
                self.rec.ws.held_open += 1;
            }
        }
    }

    /// At the end of the run: cuts the messages still awaiting their echo
    /// on every open connection, sends each a close with 1000 and waits
    /// for the servers' closes (see the module's text). Connections not
    /// open (their upgrade under way) are left to `cut_in_flight`.
    pub(super) fn close_open(&mut self) {
        let mut closing = 0;
        for idx in 0..self.conns.len() {
            let conn = &mut self.conns[idx];
            if !conn.ws_mut().is_some_and(|ws| ws.is_open()) {
                continue;
            }
            let wire = super::wire_of(self.setup, &self.mix, idx);
            let (jobs, _) = conn.drain(wire.len);
            self.in_flight -= jobs.len();
            for job in jobs.iter().filter(|j| j.measured) {
                self.rec.cut(job.kind);
            }
            if let Some(ws) = conn.ws_mut() {
                ws.close(code::NORMAL);
            }
            match conn.write(wire) {
                Step::Failed(_) => conn.close(),
                _ => closing += 1,
            }
        }
        let until = Instant::now() + CLOSE_WAIT.min(self.setup.timeout);
        while closing > 0 {
            let now = Instant::now();
            if now >= until {
                break;
            }
            let super::Driver::Epoll(poller) = &mut self.driver else {
                break;
            };
            for i in 0..poller.wait(until - now) {
                let super::Driver::Epoll(poller) = &self.driver else {
                    break;
                };
                let (idx, events) = poller.event(i);
                if self.on_closing_event(idx, events) {
                    closing -= 1;
                }
            }
        }
    }

    /// An event on a connection at the end: writes what it owes, reads
    /// (recording nothing) and drops the socket once the session is over
    /// (the server's close came) or failed. Whether it dropped a socket
    /// that awaited the server's close.
    fn on_closing_event(&mut self, idx: usize, events: u32) -> bool {
        let conn = &mut self.conns[idx];
        if !conn.has_socket() || !conn.ws_mut().is_some_and(|ws| ws.is_closing()) {
            return false;
        }
        let mut over = false;
        if events & WRITABLE != 0 && conn.wants_write() {
            let wire = super::wire_of(self.setup, &self.mix, idx);
            over = matches!(conn.write(wire), Step::Failed(_));
        }
        if !over && events & !WRITABLE != 0 {
            let (result, _) = conn.read_session::<WsConn>(&mut self.buf, events & HANGUP != 0);
            over = result.is_err() || conn.ws_mut().is_some_and(|ws| ws.is_closed());
            // A close the server made on its own, before its answer to
            // ours reached us (any code but 1000), is still its close.
            let closes = conn.ws_mut().map(|ws| std::mem::take(&mut ws.closes));
            for code in closes.into_iter().flatten().filter(|&c| c != code::NORMAL) {
                self.rec.closed_with(code, Instant::now());
            }
        }
        let conn = &mut self.conns[idx];
        if over {
            conn.close();
        }
        over
    }
}
