//! The one worker loop. It owns its connections, a driver (an epoll set or
//! an io_uring ring) and a [`Recorder`], and combines three independent
//! parts: the [`Pacer`] (when a request may start), the [`StopRule`] (when
//! the run ends) and the transport ([`Conn`]: how to send and read, with the
//! driver saying when: readiness events, or the ring's completions, handled
//! by the `completion` part). Every load mode runs through this loop.
//! When the run has expectations, each connection's reader checks its
//! responses as they stream in and a failed one is recorded as a mismatch.
//! The requests in flight on each connection (one, or up to the pipeline
//! depth) are kept by the `flight` part of the worker. With a mix, each
//! request's kind is drawn as it is taken and its bytes written into its
//! connection's own reusable wire (`request::Mixed`). Each connection
//! speaks one [`HttpVersion`]: a readiness event is handed to its
//! version's half at one point ([`Worker::on_event`]): HTTP/1.1's answers
//! in order (`flight`), HTTP/2's streams that end in any order
//! (`flight_h2`), WebSocket's echoes (`flight_ws`); the pacer and stop rule
//! are the same. A WebSocket hold pings its open connections at an
//! interval and counts those still open at the end.

use crate::conn::{Conn, Graveyard, SessionSpec, Wire};
use crate::control::Control;
use crate::expect::Expect;
use crate::http_version::HttpVersion;
use crate::pacer::Pacer;
use crate::request::{EncodedMix, Mixed};
use crate::ring::Ring;
use crate::stats::Recorder;
use crate::stop::StopRule;
use crate::sys::Poller;
use crate::tls::TlsClient;
use crate::transport::Io;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

#[path = "completion.rs"]
mod completion;
#[path = "flight.rs"]
mod flight;
#[path = "flight_h2.rs"]
mod flight_h2;
#[path = "flight_ws.rs"]
mod flight_ws;

const READ_BUF: usize = 64 * 1024;
/// How soon a connection that failed is offered work again.
const RETRY_AFTER: Duration = Duration::from_millis(1);

/// The refill policy: a connection with `depth` requests in flight is
/// written again, up to `depth`, once at most this many are left in flight.
///
/// A closed loop refills an HTTP/1.1 pipeline at a quarter of the depth, so
/// each write carries at least three quarters of it: refilled on every
/// answer, a connection at depth 16 wrote about 9 requests per `send` and
/// cost 1.39× wrk's CPU per request (wrk writes 16 at a time); refilled at
/// half, 0.90-1.08×; at a quarter, 0.93× of half in the same rounds with
/// the same requests per second (`bench/cpu_per_request.py --baseline`,
/// README). Waiting for all 16 (wrk's policy) saved a little more CPU but
/// lost requests per second, the connection standing idle while its last
/// answers travel. HTTP/2 streams stay at half: they are answered in any
/// order, and that is the policy its h2load comparison measured. An open
/// loop refills on every answer: a ticket that is due goes out as soon as a
/// connection has room, so the generator adds no wait of its own to the
/// latency it measures from the ticket's intended time. At depth 1 all are 0.
pub(crate) fn refill_at(depth: usize, open_loop: bool, version: HttpVersion) -> usize {
    match (open_loop, version) {
        (true, _) => depth.saturating_sub(1),
        (false, HttpVersion::Http2) => depth / 2,
        (false, HttpVersion::Http1 | HttpVersion::WebSocket) => depth / 4,
    }
}

/// What every worker shares, read-only.
#[derive(Debug)]
pub(crate) struct Setup<'a> {
    pub addr: SocketAddr,
    /// The request's bytes, ready to write one or several at a time.
    pub wire: Wire,
    /// A HEAD request's responses have no body.
    pub is_head: bool,
    pub keepalive: bool,
    /// Requests each connection may have in flight (1: no pipelining).
    pub depth: usize,
    pub timeout: Duration,
    pub t0: Instant,
    pub measure_start: Instant,
    pub control: &'a Control,
    /// How often the live counters of `control` are brought up to date.
    pub progress_every: Duration,
    /// What every response must look like (often nothing).
    pub expect: &'a Expect,
    /// Keep exact per-second histograms (for an interval log).
    pub exact_seconds: bool,
    /// The request kinds to draw from, instead of `wire` (depth 1 only).
    pub mix: Option<&'a EncodedMix>,
    /// Over https: what each connection's TLS session starts from.
    pub tls: Option<Arc<TlsClient>>,
    /// The transport: epoll readiness or io_uring completions.
    pub io: Io,
    /// What each connection's session is made from: its HTTP version
    /// (over HTTP/2 `depth` is the streams).
    pub session: SessionSpec,
    /// Set by the first connection that finds the server refusing HTTP/2:
    /// every worker then stops, and the run fails with this reason.
    pub refused: &'a OnceLock<String>,
    /// Set at the deadline by a connection still waiting on the server's
    /// HTTP/2 SETTINGS, or on a stream limit above 0: the run fails with
    /// this reason if no request completed at all.
    pub stalled: &'a OnceLock<&'static str>,
    /// WebSocket hold mode: how often every open connection is pinged.
    pub ping_every: Option<Duration>,
}

/// What tells the loop that sockets have something for it.
#[derive(Debug)]
enum Driver {
    /// Readiness: the worker then sends and receives itself.
    Epoll(Poller),
    /// Completions: the ring has sent and received (cleartext only).
    Uring(Box<Ring>),
}

/// A worker's result.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub recorder: Recorder,
    pub finished_at: Instant,
}

pub(crate) struct Worker<'a> {
    setup: &'a Setup<'a>,
    pacer: Pacer,
    stop: StopRule,
    open_loop: bool,
    conns: Vec<Conn>,
    /// Connections at or below the refill mark (`low_water` in flight).
    available: Vec<usize>,
    /// Open loop: this thread's tickets taken so far. Tickets `taken..due`
    /// are due and waiting for a connection (the backlog), oldest first.
    taken: u64,
    /// Open loop: this thread's tickets due so far (the pacer's count).
    due: u64,
    /// Open loop: the first ticket of the measured phase.
    first_measured: u64,
    /// Requests in flight over all connections.
    in_flight: usize,
    /// A connection is refilled (up to the depth) once it has at most this
    /// many requests in flight: [`refill_at`].
    low_water: usize,
    driver: Driver,
    /// io_uring: whether each connection has a send queued in the ring.
    sending: Vec<bool>,
    /// io_uring: sockets closed since the last submission.
    graveyard: Graveyard,
    rec: Recorder,
    buf: Box<[u8]>,
    /// A mix's generator and each connection's request (None: `setup.wire`).
    mix: Option<Mixed<'a>>,
}

impl<'a> Worker<'a> {
    pub fn new(
        setup: &'a Setup<'a>,
        mut pacer: Pacer,
        stop: StopRule,
        open_loop: bool,
        conns: usize,
    ) -> std::io::Result<Self> {
        let expect = Arc::new(setup.expect.clone());
        let first_measured = pacer.first_at_or_after(setup.measure_start);
        Ok(Worker {
            setup,
            pacer,
            stop,
            open_loop,
            conns: (0..conns)
                .map(|_| {
                    let mut c = Conn::new(
                        &setup.session,
                        setup.is_head,
                        &expect,
                        setup.depth,
                        setup.tls.clone(),
                    );
                    c.listed = true;
                    c
                })
                .collect(),
            available: (0..conns).rev().collect(),
            taken: 0,
            due: 0,
            first_measured,
            in_flight: 0,
            low_water: refill_at(setup.depth, open_loop, setup.session.version()),
            driver: match setup.io {
                Io::Epoll => Driver::Epoll(Poller::new(conns)?),
                Io::Uring => Driver::Uring(Box::new(Ring::new(conns, setup.addr)?)),
            },
            sending: vec![false; conns],
            graveyard: Graveyard::default(),
            rec: Recorder::new(
                open_loop,
                setup.measure_start,
                setup.exact_seconds,
                setup.mix.map_or(0, |m| m.kinds.len()),
            )
            .with_tls(setup.tls.is_some()),
            buf: vec![0; READ_BUF].into_boxed_slice(),
            mix: None,
        })
    }

    /// Runs until the stop rule or the control ends the run.
    pub fn run(mut self) -> Outcome {
        let mut next_sweep = self.setup.t0;
        let every = self.setup.progress_every;
        let mut next_flush = self.setup.t0 + every;
        let sweep_every =
            (self.setup.timeout / 20).clamp(Duration::from_millis(1), Duration::from_millis(100));
        let mut next_ping = self.setup.ping_every.map(|every| self.setup.t0 + every);
        let finished_at = loop {
            let now = Instant::now();
            if self.stop.deadline_passed(now)
                || self.setup.control.is_cancelled()
                || self.setup.refused.get().is_some()
            {
                self.count_held_open();
                self.close_open();
                self.cut_in_flight();
                let end = now.min(self.stop.deadline().unwrap_or(now));
                self.count_unsent(end);
                break end;
            }
            if self.stop.exhausted() && self.in_flight == 0 {
                self.close_open();
                break now;
            }
            self.release(now);
            self.fill_idle(now);
            if now >= next_sweep {
                self.sweep_timeouts(now);
                next_sweep = now + sweep_every;
            }
            if now >= next_flush {
                self.flush_progress();
                next_flush = now + every;
            }
            if let (Some(at), Some(every)) = (next_ping, self.setup.ping_every) {
                if now >= at {
                    self.ping_open(now);
                    next_ping = Some(now + every);
                }
            }
            let stuck = self.stuck();
            let housekeeping = next_sweep.min(next_flush);
            let wait = self.wait_time(
                now,
                next_ping.map_or(housekeeping, |p| p.min(housekeeping)),
                stuck,
            );
            self.poll(wait, stuck);
        };
        self.flush_progress();
        Outcome {
            recorder: self.rec,
            finished_at,
        }
    }

    /// Counts the tickets whose intended time has come, and of them those
    /// that found every connection busy: more were due than connections had
    /// room (free requests up to the pipeline depth) once the backlog is
    /// served. Sampled within one loop turn of the intended time.
    fn release(&mut self, now: Instant) {
        let before = self.due - self.taken;
        let due = self.pacer.release(now);
        if due == self.due {
            return;
        }
        self.due = due;
        let free = (self.conns.len() * self.setup.depth - self.in_flight) as u64;
        let first_unserved = (self.taken + before.max(free)).max(self.first_measured);
        self.rec.all_busy += due.saturating_sub(first_unserved);
    }

    /// Open loop: tickets due in the measured phase that were never sent,
    /// counted at the end (`end`: the deadline or the cancel), within what
    /// a `-n` budget had left.
    fn count_unsent(&mut self, end: Instant) {
        if !self.open_loop {
            return;
        }
        let due = self.pacer.release(end);
        let unsent = due.saturating_sub(self.taken.max(self.first_measured));
        self.rec.unsent += self
            .stop
            .remaining()
            .map_or(unsent, |left| unsent.min(left));
    }

    /// Open loop: tickets are waiting and every connection is busy. Then
    /// the next ticket only joins the backlog, so the loop sleeps until a
    /// connection frees (an epoll event), not until that ticket's time.
    fn stuck(&self) -> bool {
        self.open_loop && self.taken < self.due && self.available.is_empty()
    }

    /// How long epoll may sleep: until the next pacer, sweep or stop event
    /// (not the pacer's while `stuck`).
    fn wait_time(&self, now: Instant, housekeeping: Instant, stuck: bool) -> Duration {
        let mut until = housekeeping;
        if let Some(t) = self
            .pacer
            .next_wakeup(self.setup.t0, now)
            .filter(|_| !stuck)
        {
            until = until.min(t);
        }
        if let Some(t) = self.stop.deadline() {
            until = until.min(t);
        }
        if !self.available.is_empty() && !self.open_loop && !self.stop.exhausted() {
            until = until.min(now + RETRY_AFTER);
        }
        until.saturating_duration_since(now)
    }

    /// Waits for the driver (the ring also submits the turn's operations
    /// in the same call) and handles what it reports.
    fn poll(&mut self, wait: Duration, stuck: bool) {
        let n = match &mut self.driver {
            Driver::Epoll(poller) => poller.wait(wait),
            Driver::Uring(ring) => {
                ring.wait(wait);
                // Submitted: the operations naming these sockets have them.
                self.graveyard.borrow_mut().clear();
                0
            }
        };
        if stuck {
            // The tickets that fell due while asleep found every connection
            // busy: count them before the events free any. None falls due
            // past the deadline (a late wake-up must not add any).
            let now = Instant::now();
            self.release(self.stop.deadline().map_or(now, |d| now.min(d)));
        }
        for i in 0..n {
            let Driver::Epoll(poller) = &self.driver else {
                break;
            };
            let (idx, events) = poller.event(i);
            self.on_event(idx, events);
        }
        if let Driver::Uring(ring) = &mut self.driver {
            let done = ring.take_done();
            for d in &done {
                self.on_completion(d);
            }
            if let Driver::Uring(ring) = &mut self.driver {
                ring.give_back(done);
            }
        }
    }

    /// A readiness event on connection `idx`: the one point where the
    /// worker hands a connection to its version's half.
    fn on_event(&mut self, idx: usize, events: u32) {
        match self.conns[idx].version() {
            HttpVersion::Http1 => self.on_event_h1(idx, events),
            HttpVersion::Http2 => self.on_event_h2(idx, events),
            HttpVersion::WebSocket => self.on_event_ws(idx, events),
        }
    }

    /// Records what the connection's TLS did in this event.
    fn note_tls(&mut self, idx: usize) {
        if let (Some(news), Some(tls)) = (self.conns[idx].take_tls_news(), &mut self.rec.tls) {
            tls.record(news, self.setup.measure_start, Instant::now());
        }
    }

    /// Draws from `rng` (the worker's request stream) when the setup has a mix.
    pub fn with_mix(mut self, rng: fastrand::Rng) -> Self {
        self.mix = self.setup.mix.map(|m| Mixed::new(m, rng, self.conns.len()));
        self
    }

    /// The kind of the request about to be queued on connection `idx`,
    /// written into the connection's wire; 0 without a mix.
    fn draw(&mut self, idx: usize) -> u16 {
        let Some(m) = &mut self.mix else { return 0 };
        let (kind, encoded) = m.draw(idx);
        self.conns[idx].prepare(encoded.is_head, &encoded.expect);
        kind
    }

    fn flush_progress(&mut self) {
        let (completed, errors) = self.rec.take_progress();
        self.setup.control.add(completed, errors);
    }
}

/// The bytes connection `idx` writes: its own with a mix, else the run's.
fn wire_of<'w>(setup: &'w Setup<'_>, mix: &'w Option<Mixed<'_>>, idx: usize) -> &'w Wire {
    match mix {
        Some(m) => m.wire(idx),
        None => &setup.wire,
    }
}
