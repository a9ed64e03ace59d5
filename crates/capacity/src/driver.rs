//! Runs the search for real: the closed-loop probe, then each level the
//! search asks for, through the engine at a constant open-loop rate with its
//! own warm-up and measured step. Every outcome is judged and fed back; the
//! caller sees each level through events and can cancel between polls.

use crate::judge::{self, judge};
use crate::record::{CapacityResult, LevelRecord, Phase, SearchRecord, Verdict};
use crate::search::{self, Action, Tried};
use crate::{sizing, CapacityError, Event, Settings};
use shootout_engine::{Control, Load, Plan, Stop, Summary, Threshold, Workload};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Connections of the closed-loop probe unless `--connections` is given:
/// enough to saturate a small server without queueing much at a big one.
pub const PROBE_CONNECTIONS: usize = 16;
/// How often `cancelled` is polled while a level runs.
const POLL: Duration = Duration::from_millis(20);

pub(crate) fn run(
    template: &Plan,
    settings: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
    on_event: &mut dyn FnMut(Event),
) -> Result<CapacityResult, CapacityError> {
    let slo = judge::effective_slo(&settings.slo);
    let level = |load, phase, target, fraction| -> Result<LevelRecord, CapacityError> {
        let summary = run_level(template, load, settings, cancelled)?;
        Ok(record(phase, target, fraction, &summary, &slo))
    };
    on_event(Event::LevelStarting {
        index: 0,
        phase: Phase::Probe,
        target_rps: 0.0,
        bracket: (None, None),
    });
    let connections = settings.connections.unwrap_or(PROBE_CONNECTIONS);
    let summary = run_level(template, Load::Closed { connections }, settings, cancelled)?;
    if summary.requests.ok == 0 {
        return Err(CapacityError::Unreachable {
            url: template.endpoint().url.clone(),
            why: why_unreachable(&summary),
        });
    }
    let probe = record(Phase::Probe, None, None, &summary, &slo);
    let sizing_ms = judge::loosest_latency_ms(&slo).unwrap_or(probe.latency_ms.p99);
    let probe_rps = probe.achieved_rps;
    on_event(Event::LevelDone {
        index: 0,
        record: probe.clone(),
    });
    let mut levels = vec![probe];
    let mut tried: Vec<Tried> = Vec::new();
    let outcome = loop {
        let (phase, rate, fraction) = match search::decide(&tried, probe_rps, settings.precision) {
            Action::Run {
                phase,
                rate,
                fraction,
            } => (phase, rate, fraction),
            Action::Done(outcome) => break outcome,
        };
        let index = levels.len();
        on_event(Event::LevelStarting {
            index,
            phase,
            target_rps: rate,
            bracket: search::bracket(&tried),
        });
        let connections = settings
            .connections
            .unwrap_or_else(|| sizing::connections(rate, sizing_ms));
        let rec = level(
            Load::Open { rate, connections },
            phase,
            Some(rate),
            fraction,
        )?;
        tried.push(Tried {
            phase,
            rate,
            verdict: rec.verdict,
        });
        on_event(Event::LevelDone {
            index,
            record: rec.clone(),
        });
        levels.push(rec);
    };
    let (levels, curve): (Vec<_>, Vec<_>) =
        levels.into_iter().partition(|l| l.phase != Phase::Curve);
    Ok(CapacityResult {
        url: template.endpoint().url.clone(),
        method: method(template),
        slo,
        capacity_rps: (outcome.verdict == Verdict::Found)
            .then_some(outcome.capacity)
            .flatten(),
        lower_bound_rps: (outcome.verdict == Verdict::GeneratorLimited)
            .then_some(outcome.capacity)
            .flatten(),
        verdict: outcome.verdict,
        unstable: outcome.unstable,
        probe_rps,
        search: SearchRecord {
            warmup_s: settings.warmup.as_secs_f64(),
            step_s: settings.step.as_secs_f64(),
            precision: settings.precision,
            threads: template.threads(),
        },
        levels,
        curve,
    })
}

fn method(template: &Plan) -> String {
    match template.request().method.as_str() {
        "" => "GET".to_string(),
        m => m.to_string(),
    }
}

/// One level through the engine: `load` for the warm-up, then the measured
/// step. A watcher thread turns `cancelled` into the engine's cancel.
fn run_level(
    template: &Plan,
    load: Load,
    settings: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Summary, CapacityError> {
    let stop = Stop {
        requests: None,
        duration: Some(settings.step),
    };
    let plan = template
        .to_builder()
        .workload(Workload::new(load, stop)?)
        .warmup(settings.warmup)
        .build()?;
    let control = Control::new();
    let finished = AtomicBool::new(false);
    let report = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if cancelled() {
                    control.cancel();
                    return;
                }
                std::thread::sleep(POLL);
            }
        });
        let report = shootout_engine::run(&plan, &control);
        finished.store(true, Ordering::Relaxed);
        report
    })?;
    if cancelled() || control.is_cancelled() {
        return Err(CapacityError::Interrupted);
    }
    Ok(report.summary)
}

fn record(
    phase: Phase,
    target: Option<f64>,
    fraction: Option<f64>,
    s: &Summary,
    slo: &[Threshold],
) -> LevelRecord {
    let (verdict, reason) = judge(s, target, slo);
    let lag = s.lag.clone().unwrap_or_default();
    LevelRecord {
        phase,
        target_rps: target.unwrap_or(s.rps),
        achieved_rps: s.rps,
        connections: s.connections,
        latency_ms: s.latency_ms.clone(),
        sent: s.requests.sent,
        completed: s.requests.completed,
        errors: s.errors.clone(),
        error_rate: s.errors.total() as f64 / s.requests.sent.max(1) as f64,
        all_busy: lag.all_busy,
        send_lag_p99_ms: lag.p99_ms,
        generator_cpu: s.generator.cpu_utilization,
        pass: verdict == crate::LevelVerdict::Pass,
        verdict,
        reason,
        fraction,
    }
}

/// Why the probe got no successful answer, in words.
fn why_unreachable(s: &Summary) -> String {
    let e = &s.errors;
    if s.requests.completed > 0 {
        let statuses: Vec<String> = s.status.iter().map(|(k, n)| format!("{n}× {k}")).collect();
        return format!(
            "no answer had a 2xx or 3xx status ({})",
            statuses.join(", ")
        );
    }
    if e.connect > 0 && e.connect == e.total() {
        return format!(
            "no connection succeeded ({} connect errors); is a server listening?",
            e.connect
        );
    }
    format!(
        "no whole answer in the probe ({} sent: {} connect, {} read, {} write, {} timeout, {} parse errors, {} cut)",
        s.requests.sent, e.connect, e.read, e.write, e.timeout, e.parse, s.requests.cut
    )
}
