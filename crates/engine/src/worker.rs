//! The one worker loop. It owns its connections, an epoll set and a
//! [`Recorder`], and combines three independent parts: the [`Pacer`] (when a
//! request may start), the [`StopRule`] (when the run ends) and the transport
//! ([`Conn`]: how to send and read). Every load mode runs through this loop.
//! When the run has expectations, each connection's reader checks its
//! responses as they stream in and a failed one is recorded as a mismatch.

use crate::checker::Checker;
use crate::conn::{Conn, Job, Step};
use crate::control::Control;
use crate::expect::Expect;
use crate::pacer::Pacer;
use crate::request::EncodedRequest;
use crate::stats::{ErrorClass, Recorder};
use crate::stop::StopRule;
use crate::sys::{Poller, EDGE, HANGUP, READABLE, WRITABLE};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const READ_BUF: usize = 64 * 1024;
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// How soon a connection that failed is offered work again.
const RETRY_AFTER: Duration = Duration::from_millis(1);

/// What every worker shares, read-only.
#[derive(Debug)]
pub(crate) struct Setup<'a> {
    pub addr: SocketAddr,
    pub request: &'a EncodedRequest,
    pub keepalive: bool,
    pub timeout: Duration,
    pub t0: Instant,
    pub measure_start: Instant,
    pub control: &'a Control,
    /// What every response must look like (often nothing).
    pub expect: &'a Expect,
    /// Keep exact per-second histograms (for an interval log).
    pub exact_seconds: bool,
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
    idle: Vec<usize>,
    pending: VecDeque<Instant>,
    busy: usize,
    poller: Poller,
    rec: Recorder,
    buf: Box<[u8]>,
}

impl<'a> Worker<'a> {
    pub fn new(
        setup: &'a Setup<'a>,
        pacer: Pacer,
        stop: StopRule,
        open_loop: bool,
        conns: usize,
    ) -> std::io::Result<Self> {
        let expect = Arc::new(setup.expect.clone());
        Ok(Worker {
            setup,
            pacer,
            stop,
            open_loop,
            conns: (0..conns)
                .map(|_| Conn::new(setup.request.is_head, Checker::for_expect(&expect)))
                .collect(),
            idle: (0..conns).rev().collect(),
            pending: VecDeque::new(),
            busy: 0,
            poller: Poller::new(conns)?,
            rec: Recorder::new(open_loop, setup.measure_start, setup.exact_seconds),
            buf: vec![0; READ_BUF].into_boxed_slice(),
        })
    }

    /// Runs until the stop rule or the control ends the run.
    pub fn run(mut self) -> Outcome {
        let mut next_sweep = self.setup.t0;
        let mut next_flush = self.setup.t0 + PROGRESS_EVERY;
        let sweep_every =
            (self.setup.timeout / 20).clamp(Duration::from_millis(1), Duration::from_millis(100));
        let finished_at = loop {
            let now = Instant::now();
            if self.stop.deadline_passed(now) || self.setup.control.is_cancelled() {
                self.cut_in_flight();
                break now.min(self.stop.deadline().unwrap_or(now));
            }
            if self.stop.exhausted() && self.busy == 0 {
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
                next_flush = now + PROGRESS_EVERY;
            }
            let wait = self.wait_time(now, next_sweep.min(next_flush));
            self.poll(wait);
        };
        self.flush_progress();
        Outcome {
            recorder: self.rec,
            finished_at,
        }
    }

    /// Queues the requests whose intended time has come, and counts those
    /// that found every connection busy: more of them were due than
    /// connections were free once the requests already waiting are served.
    /// Sampled when released, i.e. within one loop turn of the intended time.
    fn release(&mut self, now: Instant) {
        let before = self.pending.len();
        self.pacer.release(now, &mut self.pending);
        if self.pending.len() == before {
            return;
        }
        let free = self.conns.len() - self.busy;
        let first_unserved = before.max(free);
        let measure_start = self.setup.measure_start;
        let waiting = self.pending.iter().skip(first_unserved);
        self.rec.all_busy += waiting.filter(|&&t| t >= measure_start).count() as u64;
    }

    /// How long epoll may sleep: until the next pacer, sweep or stop event.
    fn wait_time(&self, now: Instant, housekeeping: Instant) -> Duration {
        let mut until = housekeeping;
        if let Some(t) = self.pacer.next_wakeup(self.setup.t0, now) {
            until = until.min(t);
        }
        if let Some(t) = self.stop.deadline() {
            until = until.min(t);
        }
        if !self.idle.is_empty() && !self.open_loop && !self.stop.exhausted() {
            until = until.min(now + RETRY_AFTER);
        }
        until.saturating_duration_since(now)
    }

    fn poll(&mut self, wait: Duration) {
        let n = self.poller.wait(wait);
        for i in 0..n {
            let (idx, events) = self.poller.event(i);
            self.on_event(idx, events);
        }
    }

    fn on_event(&mut self, idx: usize, events: u32) {
        if self.conns[idx].job.is_none() {
            // Data or EOF on an idle keep-alive connection: the server closed
            // it or misbehaved; either way it cannot be reused.
            if events & !WRITABLE != 0 {
                self.conns[idx].close();
            }
            return;
        }
        if events & WRITABLE != 0 && self.conns[idx].wants_write() {
            let step = self.conns[idx].write(&self.setup.request.bytes);
            if let Step::Failed(class) = step {
                return self.finish(idx, Step::Failed(class), Instant::now());
            }
        }
        if events & !WRITABLE != 0 {
            let (step, n) = self.conns[idx].read(&mut self.buf, events & HANGUP != 0);
            if self.conns[idx].job.is_some_and(|j| j.measured) {
                self.rec.bytes += n as u64;
            }
            if step != Step::Pending {
                self.finish(idx, step, Instant::now());
            }
        }
    }

    /// Records the end of the request on `idx` and starts the next one there.
    /// After a failure the connection waits in the idle list instead, so a
    /// start that fails at once (a refused connect) never recurses.
    fn finish(&mut self, idx: usize, step: Step, now: Instant) {
        let conn = &mut self.conns[idx];
        let Some(job) = conn.job.take() else { return };
        self.busy -= 1;
        let reusable = match step {
            Step::Done(done) => {
                if job.measured && done.passed {
                    self.rec
                        .completed(done.status, job.intended, job.sent_at, now);
                } else if job.measured {
                    let first = self.rec.first_mismatch.is_none();
                    let details = first.then(|| conn.mismatch()).flatten();
                    self.rec.mismatched(done.status, details, now);
                }
                done.keep_alive && done.extra == 0 && self.setup.keepalive
            }
            Step::Failed(class) => {
                if job.measured {
                    self.rec.failed(class, now);
                }
                false
            }
            Step::Pending => true,
        };
        if !reusable {
            conn.close();
        }
        if matches!(step, Step::Failed(_)) || !self.dispatch(idx, now) {
            self.idle.push(idx);
        }
    }

    /// Offers work to every idle connection once.
    fn fill_idle(&mut self, now: Instant) {
        if self.idle.is_empty() || (self.open_loop && self.pending.is_empty()) {
            return;
        }
        let idle = std::mem::take(&mut self.idle);
        for idx in idle {
            if !self.dispatch(idx, now) {
                self.idle.push(idx);
            }
        }
    }

    /// Starts a request on connection `idx` if the pacer and stop rule allow.
    fn dispatch(&mut self, idx: usize, now: Instant) -> bool {
        if self.stop.deadline_passed(now) || !self.pacer.allows_connection(idx, self.setup.t0, now)
        {
            return false;
        }
        let intended = if self.open_loop {
            match self.pending.front() {
                Some(&t) => t,
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
            self.pending.pop_front();
        }
        if measured {
            self.rec.sent(intended, now);
        }
        let job = Job {
            intended,
            sent_at: now,
            measured,
            deadline: now + self.setup.timeout,
        };
        self.busy += 1;
        self.conns[idx].job = Some(job);
        match self.start(idx, job) {
            Step::Pending => {}
            step => self.finish(idx, step, now),
        }
        true
    }

    /// Connects if needed and writes the request.
    fn start(&mut self, idx: usize, job: Job) -> Step {
        let conn = &mut self.conns[idx];
        if !conn.has_socket() {
            if let Err(class) = conn.connect(self.setup.addr) {
                return Step::Failed(class);
            }
        }
        conn.begin(job);
        let step = conn.write(&self.setup.request.bytes);
        self.register(idx);
        step
    }

    /// Adds a new socket to the epoll set, once, for both directions.
    fn register(&mut self, idx: usize) {
        let conn = &mut self.conns[idx];
        let Some(fd) = conn.fd() else { return };
        if !conn.registered {
            conn.registered = self
                .poller
                .add(fd, READABLE | WRITABLE | HANGUP | EDGE, idx)
                .is_ok();
        }
    }

    fn sweep_timeouts(&mut self, now: Instant) {
        for idx in 0..self.conns.len() {
            if self.conns[idx].job.is_some_and(|j| j.deadline <= now) {
                self.finish(idx, Step::Failed(ErrorClass::Timeout), now);
            }
        }
    }

    fn cut_in_flight(&mut self) {
        for conn in &mut self.conns {
            if conn.job.take().is_some_and(|j| j.measured) {
                self.rec.cut();
            }
            conn.close();
        }
        self.busy = 0;
    }

    fn flush_progress(&mut self) {
        let (completed, errors) = self.rec.take_progress();
        self.setup.control.add(completed, errors);
    }
}
