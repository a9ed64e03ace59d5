//! Merges the workers' recorders into the run's [`LoadReport`]: counts,
//! percentiles, the per-second timeline, the generator's own CPU cost and
//! a mix's per-kind routes.

use crate::mix::Mix;
use crate::report::RouteSummary;
use crate::report::{
    GeneratorUsage, Intervals, LagSummary, LatencySummary, LoadReport, Protocol, RunClock, Summary,
    TlsSummary, WsSummary,
};
use crate::stats::{Recorder, RouteStats};
use crate::worker::Outcome;
use crate::HttpVersion;
use crate::{Load, Plan};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The run's report from its workers' outcomes: `cpu` is the process CPU
/// time spent in the measured phase, which began at `measure_start`;
/// `cert_asked`, over TLS, how many handshakes were asked for a client
/// certificate the plan did not have.
pub(crate) fn build(
    plan: &Plan,
    threads: usize,
    measure_start: Instant,
    outcomes: Vec<Outcome>,
    cpu: Duration,
    clock: RunClock,
    cert_asked: Option<u64>,
) -> LoadReport {
    let finished = outcomes
        .iter()
        .map(|o| o.finished_at)
        .max()
        .unwrap_or(measure_start);
    let duration = finished.saturating_duration_since(measure_start);
    let rec = merge(plan, measure_start, outcomes);
    let mut summary = summarize(plan, threads, &rec, duration, cpu);
    summary.tls = tls_summary(plan, &rec, cert_asked.unwrap_or(0));
    summary.protocol.tls = summary.tls.as_ref().and_then(|t| t.version.clone());
    let intervals = Intervals {
        errors: rec.timeline.iter().map(|s| s.errors()).collect(),
        latency: rec.timeline.iter().map(|s| s.latency.clone()).collect(),
        lag: rec.lag.clone(),
    };
    LoadReport {
        timeline: rec.seconds(duration),
        summary,
        histogram: rec.latency,
        uncorrected: rec.uncorrected,
        clock,
        intervals,
        handshakes: rec.tls.map(|t| t.latency),
    }
}

/// The handshake figures of an https plan; None over cleartext.
fn tls_summary(plan: &Plan, rec: &Recorder, cert_asked: u64) -> Option<TlsSummary> {
    let (client, tls) = (plan.tls_client()?, rec.tls.as_ref()?);
    // The count is of asks the plan could not answer, in handshakes that
    // got that far: with none completed (TLS 1.3 asks before the server's
    // certificate is checked), the failures' causes say what went wrong.
    let unanswered = if client.client_cert || !tls.any_completed() {
        0
    } else {
        cert_asked
    };
    Some(tls.summary(!client.insecure, client.client_cert, unanswered))
}

/// One recorder holding every worker's counts and histograms (an empty one
/// when no worker ran).
fn merge(plan: &Plan, measure_start: Instant, outcomes: Vec<Outcome>) -> Recorder {
    let mut recorders = outcomes.into_iter().map(|o| o.recorder);
    let mut rec = recorders.next().unwrap_or_else(|| {
        Recorder::new(
            plan.load().is_open_loop(),
            measure_start,
            plan.interval_histograms(),
            plan.mix().map_or(0, |m| m.kinds().len()),
        )
    });
    for other in recorders {
        rec.merge(other);
    }
    rec
}

/// The JSON summary: what was asked for (from the plan) beside what
/// happened in `duration` of measured phase (from the merged recorder).
fn summarize(
    plan: &Plan,
    threads: usize,
    rec: &Recorder,
    duration: Duration,
    cpu: Duration,
) -> Summary {
    let secs = duration.as_secs_f64();
    Summary {
        mode: plan.load().mode_name().to_string(),
        url: plan.endpoint().url.clone(),
        method: if plan.mix().is_some() {
            "mix".into()
        } else if plan.request().method.is_empty() {
            "GET".into()
        } else {
            plan.request().method.clone()
        },
        connections: plan.load().max_connections(),
        threads,
        keepalive: plan.keepalive(),
        pipeline: plan.pipeline(),
        streams: plan.http2_streams(),
        pipeline_refill_at: (plan.pipeline() > 1).then(|| {
            crate::worker::refill_at(plan.pipeline(), plan.load().is_open_loop(), plan.version())
        }),
        rate: match plan.load() {
            Load::Open { rate, .. } => Some(*rate),
            _ => None,
        },
        duration_s: secs,
        rps: if secs > 0.0 {
            rec.counts.completed as f64 / secs
        } else {
            0.0
        },
        requests: rec.counts.clone(),
        errors: rec.errors.clone(),
        status: status_map(plan, rec),
        bytes_received: rec.bytes,
        latency_ms: LatencySummary::from_histogram(&rec.latency),
        latency_uncorrected_ms: rec.uncorrected.as_ref().map(LatencySummary::from_histogram),
        lag: lag_summary(rec),
        first_mismatch: rec.first_mismatch.as_ref().map(|(_, m)| m.clone()),
        first_violation: rec.first_violation.map(|(_, why)| why.to_string()),
        generator: generator_usage(cpu, secs, threads, rec.counts.sent),
        arrival: plan.load().is_open_loop().then(|| plan.arrival()),
        seed: Some(plan.seed()),
        routes: route_summaries(plan.mix(), &rec.routes),
        protocol: Protocol {
            http: plan.version().label().into(),
            client_cert: plan.tls_client().is_some_and(|c| c.client_cert),
            ..Protocol::default()
        },
        tls: None,
        websocket: ws_summary(plan, rec),
    }
}

/// The WebSocket figures of a `ws://` or `wss://` plan; None otherwise.
fn ws_summary(plan: &Plan, rec: &Recorder) -> Option<WsSummary> {
    if plan.version() != HttpVersion::WebSocket {
        return None;
    }
    let ws = plan.websocket();
    Some(WsSummary {
        message_size: (!ws.hold).then_some(ws.message_size),
        binary: !ws.hold && ws.binary,
        hold: ws.hold,
        ping_every_s: ws.ping_every.map(|d| d.as_secs_f64()),
        held_open: ws.hold.then_some(rec.ws.held_open),
        pings: rec.ws.pings,
        pongs: rec.ws.pongs,
    })
}

/// How late open-loop sends were, in ms; `None` in closed loop.
fn lag_summary(rec: &Recorder) -> Option<LagSummary> {
    rec.lag.as_ref().map(|h| LagSummary {
        late: rec.late,
        mean_ms: h.mean() / 1000.0,
        p99_ms: h.value_at_quantile(0.99) as f64 / 1000.0,
        max_ms: h.max() as f64 / 1000.0,
        all_busy: rec.all_busy,
        unsent: rec.unsent,
    })
}

/// The generator's CPU cost over `secs` seconds on `threads` threads that
/// sent `sent` requests.
fn generator_usage(cpu: Duration, secs: f64, threads: usize, sent: u64) -> GeneratorUsage {
    let cpu_seconds = cpu.as_secs_f64();
    GeneratorUsage {
        cpu_seconds,
        cpu_utilization: if secs > 0.0 {
            cpu_seconds / (secs * threads as f64)
        } else {
            0.0
        },
        cpu_us_per_request: if sent > 0 {
            cpu_seconds * 1e6 / sent as f64
        } else {
            0.0
        },
        io: None,
    }
}

/// The status codes counted: one per response, or over WebSocket one 101
/// per accepted upgrade (its messages carry no status of their own).
fn status_map(plan: &Plan, rec: &Recorder) -> BTreeMap<String, u64> {
    if plan.version() == HttpVersion::WebSocket {
        let upgrades = rec.ws.upgrades;
        return (upgrades > 0)
            .then(|| ("101".to_string(), upgrades))
            .into_iter()
            .collect();
    }
    rec.status
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(code, &n)| (code.to_string(), n))
        .collect()
}

/// The routes of a report: one per kind of `mix`, in the mix's order
/// (`stats` is empty when nothing was recorded).
fn route_summaries(mix: Option<&Mix>, stats: &[RouteStats]) -> Vec<RouteSummary> {
    let Some(mix) = mix else { return Vec::new() };
    let empty = RouteStats::new();
    mix.kinds()
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let s = stats.get(i).unwrap_or(&empty);
            RouteSummary {
                name: kind.name.clone(),
                weight: kind.weight,
                path: kind.path.to_string(),
                requests: s.counts.clone(),
                errors: s.errors.clone(),
                latency_ms: LatencySummary::from_histogram(&s.latency),
            }
        })
        .collect()
}
