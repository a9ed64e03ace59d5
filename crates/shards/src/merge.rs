//! Adds N shards into one [`LoadReport`], the same type a single run
//! produces, so it renders, serialises and meets `--fail-if` the same way.
//! Histograms are added second by second on the shared clock (exact:
//! HdrHistograms merge by adding counts); counters are summed. `rps` is the
//! sum of the shards' rates, `duration_s` their mean measured duration.
//! Shards stopped by a signal are merged only when a partial window is
//! accepted; every shard is then trimmed to the whole seconds all of them
//! measured ([`trim`]), so every count and rate belongs to the one window
//! [`Merged::partial`] states. What the interval log does not place in time
//! (latency from the actual send, send lag) is left out of such a merge;
//! totals it cannot split exactly (several status codes or error classes)
//! refuse the merge by name.

use crate::check;
use crate::clock::format_time;
use crate::log::ShardLog;
use hdrhistogram::Histogram;
use serde::Serialize;
use shootout_engine::{
    ErrorCounts, GeneratorUsage, Intervals, LagSummary, LatencySummary, LoadReport, RunClock,
    Second, Shard, Summary,
};
use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

/// The shards do not belong together; each string names one broken rule.
#[derive(Debug, thiserror::Error)]
#[error("these logs cannot be merged:\n  - {}", .0.join("\n  - "))]
pub struct Mismatch(pub Vec<String>);

/// One shard as the merged report lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShardRow {
    pub shard: Shard,
    pub file: String,
    /// Start of its measured phase, RFC 3339.
    pub measured_from: String,
    /// How long after the earliest shard it started measuring.
    pub start_offset_ms: f64,
    /// How late it started after `--start-at`.
    pub late_ms: f64,
    pub rate: Option<f64>,
    pub sent: u64,
    pub completed: u64,
    pub rps: f64,
    pub duration_s: f64,
    /// Stopped by a signal before its end.
    pub interrupted: bool,
}

/// The window a merge with interrupted shards covers: the first whole
/// seconds every shard measured, against the load's planned duration.
/// Every count of the merged report is over this window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartialWindow {
    /// The interrupted shards' files.
    pub interrupted: Vec<String>,
    /// Start of the window (the earliest shard's start), RFC 3339.
    pub from: String,
    /// Its end, `window_s` later, RFC 3339.
    pub until: String,
    /// Whole seconds counted from each shard's start: the merged
    /// `duration_s`.
    pub window_s: f64,
    /// The shortest time a shard measured before its stop.
    pub shortest_s: f64,
    /// The load's planned duration (None: stopped by a request count).
    pub planned_s: Option<f64>,
}

/// The merged report and its shards.
#[derive(Debug, Clone)]
pub struct Merged {
    pub report: LoadReport,
    pub shards: Vec<ShardRow>,
    /// Largest start difference between shards.
    pub start_skew_ms: f64,
    /// Set when interrupted shards were merged (a partial window accepted).
    pub partial: Option<PartialWindow>,
}

/// Checks the shards, then merges them; `accept_partial` lets shards
/// stopped by a signal in, over their shortened window.
pub fn merge(logs: Vec<ShardLog>, accept_partial: bool) -> Result<Merged, Mismatch> {
    merge_accepting(
        logs,
        check::Accept {
            partial: accept_partial,
            short_rates: false,
        },
    )
}

/// [`merge`], letting through what `accept` names.
pub fn merge_accepting(mut logs: Vec<ShardLog>, accept: check::Accept) -> Result<Merged, Mismatch> {
    let problems = check::problems_but(&logs, accept);
    if !problems.is_empty() {
        return Err(Mismatch(problems));
    }
    logs.sort_by_key(|l| l.sidecar.shard.index());
    let origin = logs
        .iter()
        .map(|l| l.sidecar.measured_from_unix_s)
        .fold(f64::INFINITY, f64::min);
    let partial = partial_window(&logs, origin);
    cut(&mut logs, partial.as_ref())?;
    let summaries: Vec<&Summary> = logs.iter().map(|l| &l.sidecar.summary).collect();
    let duration_s = summaries.iter().map(|s| s.duration_s).sum::<f64>() / logs.len() as f64;
    let n = (duration_s.ceil() as usize).max(1);

    let mut latency = histogram();
    let mut seconds: Vec<Histogram<u64>> = (0..n).map(|_| histogram()).collect();
    let mut errors = vec![0u64; n];
    for log in &logs {
        for (at, h) in &log.seconds {
            add(&mut latency, h);
            if let Some(slot) = seconds.get_mut(slot_of(*at, origin)) {
                add(slot, h);
            }
        }
        let from = log.sidecar.measured_from_unix_s;
        for (i, e) in log.sidecar.errors_per_second.iter().enumerate() {
            if let Some(slot) = errors.get_mut(slot_of(from + i as f64, origin)) {
                *slot += e;
            }
        }
    }
    let timeline = seconds
        .iter()
        .zip(&errors)
        .enumerate()
        .map(|(t, (h, e))| Second::new(t as u32, h.len(), *e, h))
        .collect();
    let uncorrected = sum_all(logs.iter().map(|l| l.uncorrected.as_ref()));
    let lag = sum_all(logs.iter().map(|l| l.lag.as_ref()));
    let mut summary = summary(&logs, &summaries, duration_s, &latency, &uncorrected, &lag);
    let handshakes = crate::tls::merge_into(&mut summary, &logs);
    let shards = logs
        .iter()
        .map(|l| {
            let s = &l.sidecar;
            ShardRow {
                shard: s.shard,
                file: l.path.display().to_string(),
                measured_from: format_time(unix(s.measured_from_unix_s)),
                start_offset_ms: (s.measured_from_unix_s - origin) * 1000.0,
                late_ms: s.late_ms,
                rate: s.summary.rate,
                sent: s.summary.requests.sent,
                completed: s.summary.requests.completed,
                rps: s.summary.rps,
                duration_s: s.summary.duration_s,
                interrupted: s.interrupted,
            }
        })
        .collect::<Vec<_>>();
    let start_skew_ms = shards.iter().map(|r| r.start_offset_ms).fold(0.0, f64::max);
    let late = logs.iter().map(|l| l.sidecar.late_ms).fold(0.0, f64::max);
    Ok(Merged {
        report: LoadReport {
            summary,
            histogram: latency,
            uncorrected,
            timeline,
            clock: RunClock {
                measured_from: unix(origin),
                late_by: Duration::from_secs_f64(late / 1000.0),
            },
            intervals: Intervals::default(),
            handshakes,
        },
        partial,
        shards,
        start_skew_ms,
    })
}

/// Cuts every shard to the partial window's whole seconds ([`trim`]).
fn cut(logs: &mut [ShardLog], window: Option<&PartialWindow>) -> Result<(), Mismatch> {
    let Some(w) = window else { return Ok(()) };
    let seconds = w.window_s as usize;
    let problems: Vec<String> = logs
        .iter_mut()
        .filter_map(|l| trim(l, seconds).err())
        .map(|e| e.to_string())
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Mismatch(problems))
    }
}

/// The common window of shards some of which were interrupted: the whole
/// seconds every shard measured; None when none was interrupted.
fn partial_window(logs: &[ShardLog], origin: f64) -> Option<PartialWindow> {
    let interrupted: Vec<String> = logs
        .iter()
        .filter(|l| l.sidecar.interrupted)
        .map(|l| l.path.display().to_string())
        .collect();
    if interrupted.is_empty() {
        return None;
    }
    let shortest_s = logs
        .iter()
        .map(|l| l.sidecar.summary.duration_s)
        .fold(f64::INFINITY, f64::min);
    let window_s = whole_seconds(shortest_s) as f64;
    Some(PartialWindow {
        interrupted,
        from: format_time(unix(origin)),
        until: format_time(unix(origin + window_s)),
        window_s,
        shortest_s,
        planned_s: logs[0].sidecar.settings.duration_s,
    })
}

/// The whole seconds a shard that measured `duration_s` covered (a
/// millisecond short of a second still counts it whole).
fn whole_seconds(duration_s: f64) -> usize {
    (duration_s + 0.001).floor().max(0.0) as usize
}

/// A shard that cannot be cut to the common window of a partial merge.
#[derive(Debug, thiserror::Error)]
pub enum Untrimmable {
    #[error("{file} (shard {shard}) measured {measured:.2} s: the shards share no whole second to merge")]
    NoWholeSecond {
        file: String,
        shard: Shard,
        measured: f64,
    },
    /// `what`: the totals its log does not place in time.
    #[error(
        "{file} (shard {shard}) {what}, which its log does not place in time: \
         its counts cannot be cut to the common window"
    )]
    NotInTime {
        file: String,
        shard: Shard,
        what: &'static str,
    },
}

/// Cuts a shard down to its first `seconds` whole seconds: its latency and
/// error seconds past them are dropped and its sidecar's counts recounted
/// from what is left. A request counts in the window it ended in (`sent`
/// = completed + failed, none cut). Totals the log does not place in time
/// are split only when exact: one status code, one error class; otherwise
/// the shard cannot be trimmed. Bytes and generator CPU are scaled to the
/// completed requests and the window kept; send lag and the latency from
/// the actual send, logged over the whole phase only, are dropped.
pub fn trim(log: &mut ShardLog, seconds: usize) -> Result<(), Untrimmable> {
    let (file, shard) = (log.path.display().to_string(), log.sidecar.shard);
    let not_in_time = |what| Untrimmable::NotInTime {
        file: file.clone(),
        shard,
        what,
    };
    if seconds == 0 {
        return Err(Untrimmable::NoWholeSecond {
            file: file.clone(),
            shard,
            measured: log.sidecar.summary.duration_s,
        });
    }
    let from = log.sidecar.measured_from_unix_s;
    log.seconds.retain(|(at, _)| slot_of(*at, from) < seconds);
    log.sidecar.errors_per_second.truncate(seconds);
    log.uncorrected = None;
    log.lag = None;
    let completed: u64 = log.seconds.iter().map(|(_, h)| h.len()).sum();
    let failed: u64 = log.sidecar.errors_per_second.iter().sum();
    let s = &mut log.sidecar.summary;
    if !s.errors.close_codes.is_empty() {
        return Err(not_in_time(
            "had connections closed by the server (counted by code)",
        ));
    }
    let errors = split_errors(&s.errors, failed)
        .ok_or_else(|| not_in_time("failed requests of several kinds"))?;
    let answered = completed + errors.mismatch;
    let status = match s.status.len() {
        _ if answered == 0 => BTreeMap::new(),
        1 => s.status.keys().map(|k| (k.clone(), answered)).collect(),
        _ => return Err(not_in_time("was answered with several status codes")),
    };
    let ok = match s.requests.ok {
        0 => 0,
        n if n == s.requests.completed => completed,
        _ => return Err(not_in_time("has completed responses both ok and not")),
    };
    let window = seconds as f64;
    s.bytes_received =
        share(s.bytes_received as f64, completed, s.requests.completed).round() as u64;
    s.generator.cpu_seconds *= if s.duration_s > 0.0 {
        window / s.duration_s
    } else {
        0.0
    };
    s.requests.sent = completed + failed;
    s.requests.completed = completed;
    s.requests.ok = ok;
    s.requests.cut = 0;
    s.errors = errors;
    s.status = status;
    s.duration_s = window;
    s.rps = completed as f64 / window;
    s.lag = None;
    s.latency_uncorrected_ms = None;
    Ok(())
}

/// `total` times `part / whole`; 0 for an empty whole.
fn share(total: f64, part: u64, whole: u64) -> f64 {
    if whole > 0 {
        total * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `failed` requests of a shard whose errors were `all`, by class: exact
/// when there are none or they are all of one class; None otherwise.
/// (WebSocket closes by code are per connection, not per request: a shard
/// with any is not trimmed at all.)
fn split_errors(all: &ErrorCounts, failed: u64) -> Option<ErrorCounts> {
    let mut errors = all.clone();
    if failed == 0 {
        return Some(ErrorCounts::default());
    }
    if classes(&mut errors).iter().filter(|n| ***n > 0).count() != 1 {
        return None;
    }
    for n in classes(&mut errors) {
        if *n > 0 {
            *n = failed;
        }
    }
    Some(errors)
}

fn summary(
    logs: &[ShardLog],
    s: &[&Summary],
    duration_s: f64,
    latency: &Histogram<u64>,
    uncorrected: &Option<Histogram<u64>>,
    lag: &Option<Histogram<u64>>,
) -> Summary {
    let first = s[0];
    let settings = &logs[0].sidecar.settings;
    let sum = |f: fn(&Summary) -> u64| s.iter().copied().map(f).sum::<u64>();
    let mut requests = first.requests.clone();
    requests.sent = sum(|x| x.requests.sent);
    requests.completed = sum(|x| x.requests.completed);
    requests.ok = sum(|x| x.requests.ok);
    requests.cut = sum(|x| x.requests.cut);
    let mut errors = ErrorCounts::default();
    let mut status: BTreeMap<String, u64> = BTreeMap::new();
    for x in s {
        errors.add(&x.errors);
        for (code, n) in &x.status {
            *status.entry(code.clone()).or_default() += n;
        }
    }
    let cpu_seconds: f64 = s.iter().map(|x| x.generator.cpu_seconds).sum();
    let thread_seconds: f64 = s.iter().map(|x| x.duration_s * x.threads as f64).sum();
    Summary {
        mode: first.mode.clone(),
        url: first.url.clone(),
        method: first.method.clone(),
        connections: s.iter().map(|x| x.connections).sum(),
        threads: s.iter().map(|x| x.threads).sum(),
        keepalive: first.keepalive,
        pipeline: settings.pipeline,
        pipeline_refill_at: first.pipeline_refill_at,
        streams: first.streams,
        rate: settings.rate,
        duration_s,
        rps: s.iter().map(|x| x.rps).sum(),
        requests: requests.clone(),
        errors,
        status,
        bytes_received: sum(|x| x.bytes_received),
        latency_ms: LatencySummary::from_histogram(latency),
        latency_uncorrected_ms: uncorrected.as_ref().map(LatencySummary::from_histogram),
        lag: lag.as_ref().map(|h| LagSummary {
            late: s
                .iter()
                .filter_map(|x| x.lag.as_ref())
                .map(|l| l.late)
                .sum(),
            mean_ms: h.mean() / 1000.0,
            p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
            max_ms: h.max() as f64 / 1000.0,
            all_busy: s
                .iter()
                .filter_map(|x| x.lag.as_ref())
                .map(|l| l.all_busy)
                .sum(),
            unsent: s
                .iter()
                .filter_map(|x| x.lag.as_ref())
                .map(|l| l.unsent)
                .sum(),
        }),
        first_mismatch: s.iter().find_map(|x| x.first_mismatch.clone()),
        first_violation: s.iter().find_map(|x| x.first_violation.clone()),
        // Shards share the seed (each draws from its own stream of it) and
        // the arrival process. A mix's per-kind latency is not in the
        // interval logs, so a merged load has no routes.
        arrival: s.first().and_then(|x| x.arrival),
        seed: s.first().and_then(|x| x.seed),
        routes: Vec::new(),
        protocol: first.protocol.clone(),
        tls: None,
        websocket: first.websocket.clone(),
        generator: GeneratorUsage {
            cpu_seconds,
            cpu_utilization: if thread_seconds > 0.0 {
                cpu_seconds / thread_seconds
            } else {
                0.0
            },
            cpu_us_per_request: if requests.sent > 0 {
                cpu_seconds * 1e6 / requests.sent as f64
            } else {
                0.0
            },
            io: first.generator.io.clone(),
        },
    }
}

/// Every error class's count, to split a shard's errors by class.
fn classes(e: &mut ErrorCounts) -> [&mut u64; 12] {
    [
        &mut e.connect,
        &mut e.write,
        &mut e.read,
        &mut e.timeout,
        &mut e.parse,
        &mut e.mismatch,
        &mut e.tls,
        &mut e.stream_reset,
        &mut e.goaway,
        &mut e.protocol,
        &mut e.handshake_refused,
        &mut e.closed,
    ]
}

/// Latency in microseconds at the engine's precision (3 digits, lowest 1).
fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("static histogram precision is valid")
}

fn add(into: &mut Histogram<u64>, from: &Histogram<u64>) {
    // Auto-resizing with the same precision: adding cannot fail.
    let _ = into.add(from);
}

fn sum_all<'a>(all: impl Iterator<Item = Option<&'a Histogram<u64>>>) -> Option<Histogram<u64>> {
    let mut out: Option<Histogram<u64>> = None;
    for h in all {
        let h = h?;
        match &mut out {
            Some(o) => add(o, h),
            None => {
                let mut o = histogram();
                add(&mut o, h);
                out = Some(o);
            }
        }
    }
    out
}

/// The merged second an interval starting at `at` falls in (skew < 50 ms
/// keeps each shard's second `i` in second `i`).
fn slot_of(at: f64, origin: f64) -> usize {
    (at - origin).round().max(0.0) as usize
}

fn unix(s: f64) -> std::time::SystemTime {
    UNIX_EPOCH + Duration::from_secs_f64(s.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class is split, the WebSocket ones too: a shard whose only
    /// failures were closes keeps them as closes in the window.
    #[test]
    fn errors_of_one_class_split_exactly_whatever_the_class() {
        let mut all = ErrorCounts::default();
        let n = classes(&mut all).len();
        assert_eq!(n, 12, "a class added to ErrorCounts is missing here");
        for i in 0..n {
            let mut one = ErrorCounts::default();
            *classes(&mut one)[i] = 9;
            let mut want = ErrorCounts::default();
            *classes(&mut want)[i] = 4;
            assert_eq!(split_errors(&one, 4), Some(want), "class {i}");
        }
        let two = ErrorCounts {
            handshake_refused: 1,
            closed: 1,
            ..ErrorCounts::default()
        };
        assert_eq!(split_errors(&two, 2), None);
    }

    /// Each class adds up when shards merge, and so do the closes by code.
    #[test]
    fn websocket_classes_and_close_codes_add_up() {
        let mut a = ErrorCounts {
            closed: 2,
            close_codes: BTreeMap::from([(1011, 2)]),
            ..ErrorCounts::default()
        };
        a.add(&ErrorCounts {
            handshake_refused: 3,
            closed: 1,
            close_codes: BTreeMap::from([(1011, 1)]),
            ..ErrorCounts::default()
        });
        assert_eq!((a.handshake_refused, a.closed), (3, 3));
        assert_eq!(a.close_codes, BTreeMap::from([(1011, 3)]));
    }
}
