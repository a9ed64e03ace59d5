//! The worker's io_uring side: starting a connection through the ring and
//! handling the ring's completions. The requests in flight, their answers
//! and failures are the `flight` part's, exactly as over epoll; only where
//! the bytes come from differs. A connection has at most one send queued at
//! a time (so its bytes go out in order; requests queued meanwhile go in the
//! next send) and one multishot receive armed while its socket lives.

use super::{Driver, Worker};
use crate::conn::Step;
use crate::ring::{same_generation, Done, Op, Ring};
use crate::stats::ErrorClass;
use std::time::Instant;

impl Worker<'_> {
    fn ring(&mut self) -> &mut Ring {
        match &mut self.driver {
            Driver::Uring(ring) => ring,
            Driver::Epoll(_) => unreachable!("the completion transport runs over a ring"),
        }
    }

    /// Opens a socket and queues its connect, or queues the next send.
    pub(super) fn start_ring(&mut self, idx: usize) -> Step {
        let conn = &mut self.conns[idx];
        if conn.has_socket() {
            self.send_next(idx);
            return Step::Pending;
        }
        if let Err(class) = conn.open(self.setup.addr, &self.graveyard) {
            return Step::Failed(class);
        }
        let (generation, fd) = (conn.generation, conn.fd().unwrap_or(-1));
        self.sending[idx] = false;
        self.ring().connect(idx, generation, fd);
        Step::Pending
    }

    /// Queues a send of connection `idx`'s unwritten bytes, unless one is
    /// already queued (its completion sends the rest).
    fn send_next(&mut self, idx: usize) {
        if self.sending[idx] {
            return;
        }
        // The bytes are the run's request (in `setup`, which outlives the
        // worker) or this connection's mix wire, rewritten only when its
        // next request is drawn: after this one's response, so after this
        // send completed.
        let wire = super::wire_of(self.setup, &self.mix, idx);
        let conn = &self.conns[idx];
        let Some(bytes) = conn.to_send(wire) else {
            return;
        };
        if let Driver::Uring(ring) = &mut self.driver {
            ring.send(idx, conn.generation, conn.fd().unwrap_or(-1), bytes);
            self.sending[idx] = true;
        }
    }

    /// Handles one completion; those of a socket since closed are dropped
    /// (their buffer, if any, returned to the kernel).
    pub(super) fn on_completion(&mut self, d: &Done) {
        let conn = &self.conns[d.idx];
        if !conn.has_socket() || !same_generation(d.generation, conn.generation) {
            if let Some(bid) = d.buffer {
                self.ring().recycle(bid);
            }
            return;
        }
        match d.op {
            Op::Connect => self.on_connect(d),
            Op::Send => self.on_sent(d),
            Op::Recv => self.on_recv(d),
        }
        self.rearm(d);
    }

    fn on_connect(&mut self, d: &Done) {
        if d.res < 0 {
            return self.fail_all(d.idx, ErrorClass::Connect, Instant::now());
        }
        let conn = &mut self.conns[d.idx];
        conn.connected();
        let (generation, fd) = (conn.generation, conn.fd().unwrap_or(-1));
        self.ring().recv(d.idx, generation, fd);
        self.send_next(d.idx);
    }

    fn on_sent(&mut self, d: &Done) {
        self.sending[d.idx] = false;
        if d.res < 0 {
            let class = match -d.res {
                libc::ECONNREFUSED => ErrorClass::Connect,
                _ => ErrorClass::Write,
            };
            return self.fail_all(d.idx, class, Instant::now());
        }
        self.conns[d.idx].sent(d.res as usize);
        self.send_next(d.idx);
    }

    /// Bytes (parsed at once, their buffer handed back), the peer's end of
    /// the stream, or a failure of the connection.
    fn on_recv(&mut self, d: &Done) {
        let idx = d.idx;
        if let (Some(bid), true) = (d.buffer, d.res > 0) {
            let n = d.res as usize;
            let Driver::Uring(ring) = &mut self.driver else {
                return;
            };
            self.buf[..n].copy_from_slice(ring.bytes(bid, n));
            ring.recycle(bid);
            let conn = &mut self.conns[idx];
            if conn.outstanding() == 0 {
                // Bytes nobody asked for: the connection is not reused.
                return conn.close();
            }
            if conn.front().is_some_and(|j| j.measured) {
                self.rec.bytes += n as u64;
            }
            conn.received(n);
            return self.answer(idx, false, |c, buf, _| c.read_more(buf, false));
        }
        if d.res == 0 {
            return self.on_peer_closed(d);
        }
        if d.res == -libc::ENOBUFS {
            return; // every buffer was in use: re-armed below
        }
        if self.conns[idx].outstanding() == 0 {
            return self.conns[idx].close();
        }
        let class = match -d.res {
            libc::ECONNREFUSED => ErrorClass::Connect,
            _ => ErrorClass::Read,
        };
        self.fail_all(idx, class, Instant::now());
    }

    /// The peer closed: the front response may end there (read to EOF);
    /// the socket is then closed unless a new one already took its place.
    fn on_peer_closed(&mut self, d: &Done) {
        let idx = d.idx;
        if self.conns[idx].outstanding() > 0 {
            self.answer(idx, true, |c, _, first| {
                if first {
                    (c.ended(), 0)
                } else {
                    (Step::Pending, 0)
                }
            });
        }
        let conn = &mut self.conns[idx];
        if conn.has_socket() && same_generation(d.generation, conn.generation) {
            conn.close();
        }
    }

    /// A multishot receive that ended while its socket lives is armed again.
    fn rearm(&mut self, d: &Done) {
        let conn = &self.conns[d.idx];
        if d.op != Op::Recv || d.more || !conn.has_socket() {
            return;
        }
        if !same_generation(d.generation, conn.generation) {
            return;
        }
        let (generation, fd) = (conn.generation, conn.fd().unwrap_or(-1));
        self.ring().recv(d.idx, generation, fd);
    }
}
