//! The shootout load engine: an HTTP/1.1, HTTP/2 or WebSocket (cleartext or
//! TLS) load generator library with no CLI, storage or rendering in it.
//!
//! Data flows one way: a validated [`Plan`] goes into [`run`], worker threads
//! (one event loop each, over epoll or io_uring: see `worker`) produce
//! per-thread [`stats::Recorder`]s, and those are merged into one
//! [`LoadReport`]. Each worker combines three
//! independent parts: a pacer (when to send), a stop condition (when to end)
//! and the transport (how to send and parse). A plan may be one [`Shard`] of
//! a load split over processes, started at a shared wall-clock instant.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod affinity;
pub mod arrival;
mod error;
pub mod expect;
pub mod http_version;
pub mod mix;
pub mod plan;
pub mod report;
pub mod seed;
pub mod shard;
pub mod template;
pub mod threshold;
pub mod tls;
pub mod transport;
pub mod units;
pub mod workload;

pub use arrival::Arrival;
pub use error::{EngineError, PlanError, PlanField};
pub use expect::{BodyMatch, Expect, Mismatch, StatusMatch, StatusMatchError};
pub use http_version::HttpVersion;
pub use mix::{Mix, MixError, RequestKind};
pub use plan::{
    check_pipeline, check_streams, Endpoint, Plan, PlanBuilder, Reach, RequestSpec, WsOptions,
    MAX_PIPELINE, RATE_PER_THREAD,
};
pub use report::{
    ErrorCounts, Handshakes, Intervals, LatencySummary, LoadReport, Protocol, RequestCounts,
    RouteSummary, RunClock, Second, Summary, TlsSummary, WsSummary,
};
pub use shard::{Shard, ShardError};
pub use template::{Template, TemplateError};
pub use threshold::{Threshold, ThresholdError};
pub use tls::{ClientCert, TlsOptions, Verify};
pub use transport::Io;
pub use workload::{Load, Stage, StageUnit, Stop, Workload, MAX_RATE};

mod cert_der;
mod checker;
mod conn;
mod control;
mod h1_conn;
mod h2;
mod h2_conn;
mod h2_flow;
mod handshake;
mod job;
mod pacer;
#[cfg(test)]
mod props;
mod request;
mod request_spec;
mod response;
mod ring;
mod stats;
mod stop;
mod summary;
mod sys;
mod tls_cause;
mod tls_conn;
mod url;
mod worker;
mod ws_conn;
mod ws_frame;
mod ws_handshake;

pub use url::{check_request_target, UrlError};

pub use control::Control;
pub use report::{GeneratorUsage, LagSummary};

use std::time::{Duration, Instant, SystemTime};
use stop::StopRule;

/// File descriptors kept free for everything but the connections.
const SPARE_FDS: u64 = 32;

/// Runs the plan to completion (or until `control` cancels it) and merges the
/// per-thread results. Blocks the calling thread.
pub fn run(plan: &Plan, control: &Control) -> Result<LoadReport, EngineError> {
    check_fd_limit(plan.load().max_connections() as u64)?;
    let request = request::encode(plan.endpoint(), plan.request(), plan.keepalive());
    let mix = plan
        .mix()
        .map(|m| request::EncodedMix::new(m, plan.endpoint(), plan.keepalive(), plan.expect()));
    let threads = plan.effective_threads();
    let late_by = wait_for_start(plan.start_at(), control);
    let (t0, wall_t0) = (Instant::now(), SystemTime::now());
    let clock = RunClock {
        measured_from: wall_t0 + plan.warmup(),
        late_by,
    };
    let measure_start = t0 + plan.warmup();
    let (refused, stalled) = (std::sync::OnceLock::new(), std::sync::OnceLock::new());
    let setup = worker::Setup {
        addr: plan.endpoint().addr,
        wire: conn::Wire::new(&request.bytes, plan.pipeline()),
        is_head: request.is_head,
        keepalive: plan.keepalive(),
        depth: plan.depth(),
        timeout: plan.timeout(),
        t0,
        measure_start,
        control,
        progress_every: plan.progress_every(),
        expect: plan.expect(),
        exact_seconds: plan.interval_histograms(),
        mix: mix.as_ref(),
        tls: plan.tls_client().cloned().map(std::sync::Arc::new),
        io: Io::resolve(plan.io(), plan.epoll_only()).0,
        session: plan.session_spec().clone(),
        refused: &refused,
        stalled: &stalled,
        ping_every: plan.ping_every(),
    };
    let cert_asked = plan.tls_client().map(|c| c.cert_asked());
    let deadline = plan.stop().duration.map(|d| measure_start + d);
    let (outcomes, cpu) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let setup = &setup;
                scope.spawn(move || run_thread(plan, setup, i, threads, deadline))
            })
            .collect();
        let cpu_start = wait_for_measuring(measure_start, control);
        let outcomes: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (outcomes, sys::process_cpu_time().saturating_sub(cpu_start))
    });
    if let Some(why) = refused.get() {
        return Err(EngineError::Http2Refused {
            url: plan.endpoint().url.clone(),
            why: why.clone(),
        });
    }
    let mut merged = Vec::with_capacity(threads);
    for outcome in outcomes {
        match outcome {
            Ok(Ok(o)) => merged.push(o),
            Ok(Err(e)) => return Err(EngineError::WorkerSetup(e)),
            Err(_) => return Err(EngineError::WorkerPanicked),
        }
    }
    let mut report = summary::build(
        plan,
        threads,
        measure_start,
        merged,
        cpu,
        clock,
        cert_asked.map(|before| plan.tls_client().map_or(0, |c| c.cert_asked()) - before),
    );
    report.summary.generator.io = Some(setup.io.to_string());
    // Only when the stall is all that happened: a connection that broke a
    // rule and was opened anew also waits on SETTINGS at the deadline.
    let only_stalled = |s: &Summary| s.requests.completed == 0 && s.errors.total() == 0;
    if let Some(why) = stalled.get().filter(|_| only_stalled(&report.summary)) {
        return Err(EngineError::Http2Refused {
            url: plan.endpoint().url.clone(),
            why: why.to_string(),
        });
    }
    Ok(report)
}

fn run_thread(
    plan: &Plan,
    setup: &worker::Setup<'_>,
    i: usize,
    threads: usize,
    deadline: Option<Instant>,
) -> std::io::Result<worker::Outcome> {
    if !plan.cpus().is_empty() {
        affinity::pin_current_thread(&[plan.cpus()[i % plan.cpus().len()]])?;
    }
    if plan.load().is_open_loop() {
        sys::tighten_timer_slack();
    }
    let conns = StopRule::share(plan.load().max_connections() as u64, i, threads) as usize;
    let budget = plan.stop().requests.map(|n| StopRule::share(n, i, threads));
    let phase = plan.shard().phase();
    let stream = |s| seed::rng(plan.seed(), plan.shard(), i, s);
    let arrivals = (plan.arrival() == Arrival::Poisson).then(|| stream(seed::Stream::Arrivals));
    let pacer = pacer::Pacer::new(
        plan.load(),
        plan.warmup(),
        setup.t0,
        (i, threads),
        phase,
        arrivals,
    );
    let stop = StopRule::new(budget, deadline);
    let worker = worker::Worker::new(setup, pacer, stop, plan.load().is_open_loop(), conns)?
        .with_mix(stream(seed::Stream::Requests));
    Ok(worker.run())
}

/// Sleeps until the planned start on the wall clock (checking for a cancel
/// every 50 ms) and returns how late the run starts: zero without a planned
/// start, or the time past it when this process came too late.
fn wait_for_start(at: Option<SystemTime>, control: &Control) -> Duration {
    let Some(at) = at else {
        return Duration::ZERO;
    };
    loop {
        match at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() && !control.is_cancelled() => {
                std::thread::sleep(left.min(Duration::from_millis(50)));
            }
            Ok(_) => return Duration::ZERO,
            Err(past) => return past.duration(),
        }
    }
}

/// Sleeps through the warm-up, then marks the measured phase and returns the
/// process CPU time at its start.
fn wait_for_measuring(measure_start: Instant, control: &Control) -> Duration {
    while Instant::now() < measure_start && !control.is_cancelled() {
        let left = measure_start.saturating_duration_since(Instant::now());
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
    control.set_measuring();
    sys::process_cpu_time()
}

/// Raises this process's soft open-file limit to its hard limit (as wrk and
/// oha do; idempotent) and returns how many connections a run may then
/// open: the limit less the descriptors kept for everything else.
pub fn connections_allowed() -> usize {
    let limit = sys::raise_nofile_limit();
    usize::try_from(limit.saturating_sub(SPARE_FDS)).unwrap_or(usize::MAX)
}

fn check_fd_limit(connections: u64) -> Result<(), EngineError> {
    let limit = sys::raise_nofile_limit();
    let needed = connections + SPARE_FDS;
    if needed > limit {
        return Err(EngineError::FdLimit {
            connections,
            needed,
            limit,
        });
    }
    Ok(())
}
