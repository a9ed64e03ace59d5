//! Per-thread counters and histograms. Each worker owns one [`Recorder`];
//! nothing here is shared or locked. Recorders are merged once, at the end,
//! into the run's [`LoadReport`](crate::LoadReport). The per-second
//! timeline keeps coarse histograms, or exact ones (the same precision as
//! the run's, so that the seconds add up to it) when an interval log wants them.
//! A mix's kinds each get their own counts and histogram ([`RouteStats`])
//! beside the totals, kept by the same calls.

use crate::expect::Mismatch;
use crate::handshake::TlsRecorder;
use crate::report::{ErrorCounts, RequestCounts, Second};
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// Highest latency a histogram holds exactly (1 h in microseconds); larger
/// values saturate rather than being lost.
const MAX_US: u64 = 3_600_000_000;
/// Open-loop requests sent more than this after their intended time are late.
pub(crate) const LATE_AFTER: Duration = Duration::from_millis(1);

/// Error classes, as counted in [`ErrorCounts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorClass {
    Connect,
    Write,
    Read,
    Timeout,
    Parse,
    /// A whole response that failed the expectations.
    Mismatch,
    /// The TLS handshake failed, or TLS ended the connection.
    Tls,
    /// HTTP/2: the server reset the stream (RST_STREAM).
    StreamReset,
    /// HTTP/2: the server's GOAWAY left the stream unprocessed, or ended
    /// the connection with an error.
    GoAway,
    /// HTTP/2 or WebSocket: the server broke a rule of the protocol (a
    /// malformed or forbidden frame, a header block HPACK cannot decode, a
    /// stream ended without its response's HEADERS, a wrong
    /// Sec-WebSocket-Accept).
    Protocol,
    /// WebSocket: the server answered the upgrade with another status than 101.
    HandshakeRefused,
    /// WebSocket: the server closed the connection while messages awaited
    /// their echo (its close codes are counted apart, per code).
    Closed,
}

pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, 3).expect("static histogram bounds are valid")
}

/// One second of the timeline; a coarse histogram keeps memory per second
/// small, an exact one grows only as far as the second's slowest response.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    completed: u64,
    errors: u64,
    pub latency: Histogram<u32>,
}

impl Slot {
    fn new(exact: bool) -> Slot {
        let latency = if exact {
            // Auto-resizing, lowest value 1 and 3 digits like the run's
            // histogram: the same buckets, so seconds add up to it exactly.
            Histogram::new(3)
        } else {
            Histogram::new_with_bounds(1, MAX_US, 2)
        };
        Slot {
            completed: 0,
            errors: 0,
            latency: latency.expect("static histogram bounds are valid"),
        }
    }

    pub fn errors(&self) -> u64 {
        self.errors
    }
}

/// A worker's measurements.
#[derive(Debug)]
pub(crate) struct Recorder {
    pub counts: RequestCounts,
    pub errors: ErrorCounts,
    pub status: Vec<u64>,
    pub bytes: u64,
    pub latency: Histogram<u64>,
    pub uncorrected: Option<Histogram<u64>>,
    pub lag: Option<Histogram<u64>>,
    pub late: u64,
    /// Open loop: requests whose intended send time found every connection busy.
    pub all_busy: u64,
    /// Open loop: requests due in the measured phase but never sent.
    pub unsent: u64,
    /// This thread's first mismatch and when it arrived.
    pub first_mismatch: Option<(Instant, Mismatch)>,
    /// HTTP/2: the first rule this thread saw the server break, and when.
    pub first_violation: Option<(Instant, &'static str)>,
    pub timeline: Vec<Slot>,
    /// A mix's kinds, by index (empty without a mix).
    pub routes: Vec<RouteStats>,
    /// Over TLS: the handshakes.
    pub tls: Option<TlsRecorder>,
    /// WebSocket: pings, pongs and the connections open at the end.
    pub ws: WsCounts,
    exact_seconds: bool,
    measure_start: Instant,
    /// Unflushed progress since the last [`Recorder::take_progress`].
    progress: (u64, u64),
}

/// A status that counts as ok: 2xx, 3xx, and a WebSocket echo's 101 (the
/// connection's status, which every echo carries).
fn is_ok(status: u16) -> bool {
    (200..400).contains(&status) || status == 101
}

/// WebSocket figures apart from the messages (a hold's above all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WsCounts {
    /// Pings sent in the measured phase.
    pub pings: u64,
    /// Pongs that answered them.
    pub pongs: u64,
    /// Connections open (upgraded, not closed) at the end.
    pub held_open: u64,
    /// Upgrades the server accepted (its 101s) in the measured phase: the
    /// status map's 101, one per handshake (an echo carries none).
    pub upgrades: u64,
}

impl WsCounts {
    fn add(&mut self, other: &WsCounts) {
        self.pings += other.pings;
        self.pongs += other.pongs;
        self.held_open += other.held_open;
        self.upgrades += other.upgrades;
    }
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(MAX_US as u128) as u64
}

impl Recorder {
    /// `exact_seconds`: keep exact per-second histograms (see [`Slot`]);
    /// `kinds`: a mix's request kinds (0 without a mix).
    pub fn new(
        open_loop: bool,
        measure_start: Instant,
        exact_seconds: bool,
        kinds: usize,
    ) -> Recorder {
        Recorder {
            counts: RequestCounts::default(),
            errors: ErrorCounts::default(),
            status: vec![0; 1000],
            bytes: 0,
            latency: latency_histogram(),
            uncorrected: open_loop.then(latency_histogram),
            lag: open_loop.then(latency_histogram),
            late: 0,
            all_busy: 0,
            unsent: 0,
            first_mismatch: None,
            first_violation: None,
            timeline: Vec::new(),
            routes: (0..kinds).map(|_| RouteStats::new()).collect(),
            tls: None,
            ws: WsCounts::default(),
            exact_seconds,
            measure_start,
            progress: (0, 0),
        }
    }

    /// Keeps handshake figures too (an https run).
    pub fn with_tls(mut self, tls: bool) -> Recorder {
        self.tls = tls.then(|| TlsRecorder::new(latency_histogram()));
        self
    }

    // Each call names the request's kind; without a mix there are no
    // routes and `get_mut` finds none.
    pub fn sent(&mut self, kind: u16, intended: Instant, sent_at: Instant) {
        self.counts.sent += 1;
        if let Some(r) = self.routes.get_mut(usize::from(kind)) {
            r.counts.sent += 1;
        }
        if let Some(lag) = &mut self.lag {
            let late_by = sent_at.saturating_duration_since(intended);
            lag.saturating_record(micros(late_by));
            if late_by > LATE_AFTER {
                self.late += 1;
            }
        }
    }

    pub fn completed(
        &mut self,
        kind: u16,
        status: u16,
        intended: Instant,
        sent_at: Instant,
        now: Instant,
    ) {
        self.counts.completed += 1;
        if is_ok(status) {
            self.counts.ok += 1;
        }
        self.status[usize::from(status).min(999)] += 1;
        let corrected = micros(now.saturating_duration_since(intended)).max(1);
        self.latency.saturating_record(corrected);
        if let Some(r) = self.routes.get_mut(usize::from(kind)) {
            r.completed(status, corrected);
        }
        if let Some(h) = &mut self.uncorrected {
            h.saturating_record(micros(now.saturating_duration_since(sent_at)).max(1));
        }
        let slot = self.slot(now);
        slot.completed += 1;
        // `record`, not `saturating_record`: an exact slot grows to hold the
        // value (values never exceed MAX_US, which a coarse one holds).
        if slot.latency.record(corrected).is_err() {
            slot.latency.saturating_record(corrected);
        }
        self.progress.0 += 1;
    }

    pub fn failed(&mut self, kind: u16, class: ErrorClass, now: Instant) {
        self.errors.count(class);
        if let Some(r) = self.routes.get_mut(usize::from(kind)) {
            r.failed(class);
        }
        self.slot(now).errors += 1;
        self.progress.1 += 1;
    }

    /// A whole response that failed the expectations: an error of class
    /// mismatch, never completed or ok. Its status is still counted in the
    /// status map, which says what the server answered. `details` is only
    /// built for the thread's first mismatch.
    pub fn mismatched(&mut self, kind: u16, status: u16, details: Option<Mismatch>, now: Instant) {
        self.status[usize::from(status).min(999)] += 1;
        self.failed(kind, ErrorClass::Mismatch, now);
        if let Some(m) = details.filter(|_| self.first_mismatch.is_none()) {
            self.first_mismatch = Some((now, m));
        }
    }

    /// The server broke an HTTP/2 rule on a connection: `why` is kept if it
    /// is the thread's first (the streams it ends fail as `protocol`).
    pub fn violated(&mut self, why: &'static str, now: Instant) {
        self.first_violation.get_or_insert((now, why));
    }

    /// WebSocket: the server closed a connection with `code` (counted in
    /// the measured phase only, as requests are).
    pub fn closed_with(&mut self, code: u16, now: Instant) {
        if now >= self.measure_start {
            *self.errors.close_codes.entry(code).or_default() += 1;
        }
    }

    pub fn cut(&mut self, kind: u16) {
        self.counts.cut += 1;
        if let Some(r) = self.routes.get_mut(usize::from(kind)) {
            r.counts.cut += 1;
        }
    }

    /// Completed and failed requests since the last call.
    pub fn take_progress(&mut self) -> (u64, u64) {
        std::mem::take(&mut self.progress)
    }

    fn slot(&mut self, now: Instant) -> &mut Slot {
        let i = now.saturating_duration_since(self.measure_start).as_secs() as usize;
        if self.timeline.len() <= i {
            let exact = self.exact_seconds;
            self.timeline.resize_with(i + 1, || Slot::new(exact));
        }
        &mut self.timeline[i]
    }

    /// Adds another thread's measurements into this one.
    pub fn merge(&mut self, other: Recorder) {
        let c = &mut self.counts;
        c.sent += other.counts.sent;
        c.completed += other.counts.completed;
        c.ok += other.counts.ok;
        c.cut += other.counts.cut;
        self.errors.add(&other.errors);
        for (a, b) in self.status.iter_mut().zip(&other.status) {
            *a += b;
        }
        self.bytes += other.bytes;
        self.late += other.late;
        self.all_busy += other.all_busy;
        self.unsent += other.unsent;
        self.ws.add(&other.ws);
        // Across threads, the first mismatch is the earliest to arrive.
        if let Some((at, m)) = other.first_mismatch {
            if self
                .first_mismatch
                .as_ref()
                .is_none_or(|(mine, _)| at < *mine)
            {
                self.first_mismatch = Some((at, m));
            }
        }
        if let Some((at, why)) = other.first_violation {
            if self.first_violation.is_none_or(|(mine, _)| at < mine) {
                self.first_violation = Some((at, why));
            }
        }
        for (a, b) in self.routes.iter_mut().zip(&other.routes) {
            a.merge(b);
        }
        match (&mut self.tls, other.tls) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (mine @ None, theirs) => *mine = theirs,
            _ => {}
        }
        merge_hist(&mut self.latency, &other.latency);
        merge_opt(&mut self.uncorrected, &other.uncorrected);
        merge_opt(&mut self.lag, &other.lag);
        if self.timeline.len() < other.timeline.len() {
            let exact = self.exact_seconds;
            self.timeline
                .resize_with(other.timeline.len(), || Slot::new(exact));
        }
        for (a, b) in self.timeline.iter_mut().zip(other.timeline) {
            a.completed += b.completed;
            a.errors += b.errors;
            let _ = a.latency.add(&b.latency);
        }
    }

    /// The per-second series, cut to the measured duration.
    pub fn seconds(&self, duration: Duration) -> Vec<Second> {
        let n = (duration.as_secs_f64().ceil() as usize).max(1);
        (0..n)
            .map(|i| match self.timeline.get(i) {
                Some(s) => Second::new(i as u32, s.completed, s.errors, &s.latency),
                None => Second::new(i as u32, 0, 0, &Slot::new(false).latency),
            })
            .collect()
    }
}

/// One kind's measurements in one thread.
#[derive(Debug, Clone)]
pub(crate) struct RouteStats {
    pub counts: RequestCounts,
    pub errors: ErrorCounts,
    /// Latency in microseconds, as the run's (corrected in open loop).
    pub latency: Histogram<u64>,
}

impl RouteStats {
    pub fn new() -> RouteStats {
        RouteStats {
            counts: RequestCounts::default(),
            errors: ErrorCounts::default(),
            latency: latency_histogram(),
        }
    }

    pub fn completed(&mut self, status: u16, corrected_us: u64) {
        self.counts.completed += 1;
        if is_ok(status) {
            self.counts.ok += 1;
        }
        self.latency.saturating_record(corrected_us);
    }

    pub fn failed(&mut self, class: ErrorClass) {
        self.errors.count(class);
    }

    pub fn merge(&mut self, other: &RouteStats) {
        let c = &mut self.counts;
        c.sent += other.counts.sent;
        c.completed += other.counts.completed;
        c.ok += other.counts.ok;
        c.cut += other.counts.cut;
        self.errors.add(&other.errors);
        // Both share the same bounds, so adding cannot fail.
        let _ = self.latency.add(&other.latency);
    }
}

impl ErrorCounts {
    /// Counts one failure of `class`.
    pub(crate) fn count(&mut self, class: ErrorClass) {
        match class {
            ErrorClass::Connect => self.connect += 1,
            ErrorClass::Write => self.write += 1,
            ErrorClass::Read => self.read += 1,
            ErrorClass::Timeout => self.timeout += 1,
            ErrorClass::Parse => self.parse += 1,
            ErrorClass::Mismatch => self.mismatch += 1,
            ErrorClass::Tls => self.tls += 1,
            ErrorClass::StreamReset => self.stream_reset += 1,
            ErrorClass::GoAway => self.goaway += 1,
            ErrorClass::Protocol => self.protocol += 1,
            ErrorClass::HandshakeRefused => self.handshake_refused += 1,
            ErrorClass::Closed => self.closed += 1,
        }
    }
}

fn merge_hist(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Both share the same bounds, so adding cannot fail.
    let _ = into.add(from);
}

fn merge_opt(into: &mut Option<Histogram<u64>>, from: &Option<Histogram<u64>>) {
    if let (Some(a), Some(b)) = (into.as_mut(), from.as_ref()) {
        merge_hist(a, b);
    }
}
