//! Runs the search for real: the closed-loop probe, then each level the
//! search asks for, through the engine at a constant open-loop rate with its
//! own warm-up and measured step. Every outcome is judged and fed back; the
//! caller sees each level through events and can cancel between polls.

use crate::error::CapacityError;
use crate::event::Event;
use crate::judge::{self, judge};
use crate::record::{
    CapacityResult, KindRecord, LevelRecord, LevelVerdict, Phase, SearchRecord, Verdict,
};
use crate::search::{self, Action, Outcome, Tried};
use crate::settings::Settings;
use crate::sizing;
use shootout_engine::{Arrival, Control, Load, Plan, Protocol, Stop, Summary, Threshold, Workload};
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
    let mut driver = Driver {
        template,
        settings,
        cancelled,
        on_event,
        slo: judge::effective_slo(settings.slo()),
        levels: Vec::new(),
        tried: Vec::new(),
    };
    let probe = driver.probe()?;
    let outcome = driver.search(&probe)?;
    Ok(driver.result(&probe, outcome))
}

/// One search in progress: what its levels share, and the levels so far.
struct Driver<'a> {
    template: &'a Plan,
    settings: &'a Settings,
    cancelled: &'a (dyn Fn() -> bool + Sync),
    on_event: &'a mut dyn FnMut(Event),
    /// The rules each level is judged by (the settings' SLO with the
    /// default error rule when none bounds errors).
    slo: Vec<Threshold>,
    /// Every level run, in order, the probe first.
    levels: Vec<LevelRecord>,
    /// The open-loop levels as the search sees them.
    tried: Vec<Tried>,
}

/// What the probe tells the rest of the search.
struct Probe {
    /// Its achieved rate: where the exponential search starts.
    rps: f64,
    /// The latency (ms) the pool of each level is sized for: the SLO's
    /// loosest latency bound, or the probe's p99 when it bounds none.
    sizing_ms: f64,
    /// What it spoke, as negotiated.
    protocol: Protocol,
}

impl Driver<'_> {
    /// Level 0: a closed loop that estimates the server's peak rate. A
    /// probe without one successful answer ends the search.
    fn probe(&mut self) -> Result<Probe, CapacityError> {
        (self.on_event)(Event::LevelStarting {
            index: 0,
            phase: Phase::Probe,
            target_rps: 0.0,
            bracket: (None, None),
        });
        let connections = self.settings.connections().unwrap_or(PROBE_CONNECTIONS);
        let load = Load::Closed { connections };
        let summary = run_level(self.template, load, self.settings, self.cancelled)?;
        if summary.requests.ok == 0 {
            return Err(CapacityError::Unreachable {
                url: self.template.endpoint().url.clone(),
                why: why_unreachable(&summary),
            });
        }
        let probe = record(Phase::Probe, None, None, &summary, &self.slo);
        let found = Probe {
            rps: probe.achieved_rps,
            sizing_ms: judge::loosest_latency_ms(&self.slo).unwrap_or(probe.latency_ms.p99),
            protocol: summary.protocol.clone(),
        };
        self.finish(0, probe);
        Ok(found)
    }

    /// Runs the levels the search asks for until it decides.
    fn search(&mut self, probe: &Probe) -> Result<Outcome, CapacityError> {
        loop {
            match search::decide(&self.tried, probe.rps, self.settings.precision()) {
                Action::Run {
                    phase,
                    rate,
                    fraction,
                } => self.open_level(phase, rate, fraction, probe.sizing_ms)?,
                Action::Done(outcome) => return Ok(outcome),
            }
        }
    }

    /// One open-loop level at `rate` (a curve level's `fraction` of the
    /// capacity), on a pool sized for `sizing_ms` unless the settings fix it.
    fn open_level(
        &mut self,
        phase: Phase,
        rate: f64,
        fraction: Option<f64>,
        sizing_ms: f64,
    ) -> Result<(), CapacityError> {
        let index = self.levels.len();
        (self.on_event)(Event::LevelStarting {
            index,
            phase,
            target_rps: rate,
            bracket: search::bracket(&self.tried),
        });
        let connections = self.settings.connections().unwrap_or_else(|| {
            sizing::connections_carrying(rate, sizing_ms, self.template.depth())
        });
        let load = Load::Open { rate, connections };
        let summary = run_level(self.template, load, self.settings, self.cancelled)?;
        let rec = record(phase, Some(rate), fraction, &summary, &self.slo);
        self.tried.push(Tried {
            phase,
            rate,
            verdict: rec.verdict,
        });
        self.finish(index, rec);
        Ok(())
    }

    /// Reports a finished level and keeps it.
    fn finish(&mut self, index: usize, record: LevelRecord) {
        (self.on_event)(Event::LevelDone {
            index,
            record: record.clone(),
        });
        self.levels.push(record);
    }

    /// The search's record: the levels before the curve, the curve, and the
    /// capacity (found) or its lower bound (generator-limited).
    fn result(self, probe: &Probe, outcome: Outcome) -> CapacityResult {
        let (levels, curve): (Vec<_>, Vec<_>) = self
            .levels
            .into_iter()
            .partition(|l| l.phase != Phase::Curve);
        let when = |verdict: Verdict| {
            (outcome.verdict == verdict)
                .then_some(outcome.capacity)
                .flatten()
        };
        CapacityResult {
            url: self.template.endpoint().url.clone(),
            method: method(self.template),
            slo: self.slo,
            capacity_rps: when(Verdict::Found),
            lower_bound_rps: when(Verdict::GeneratorLimited),
            verdict: outcome.verdict,
            unstable: outcome.unstable,
            probe_rps: probe.rps,
            search: SearchRecord {
                warmup_s: self.settings.warmup().as_secs_f64(),
                step_s: self.settings.step().as_secs_f64(),
                precision: self.settings.precision(),
                threads: self.template.threads(),
                protocol: probe.protocol.clone(),
                streams: self.template.http2_streams(),
            },
            broke_first: crate::record::broke_first(&levels, outcome.capacity),
            levels,
            curve,
        }
    }
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
        duration: Some(settings.step()),
    };
    // Poisson arrivals need a rate: the closed-loop probe has none.
    let arrival = if load.is_open_loop() {
        settings.arrival()
    } else {
        Arrival::Uniform
    };
    let plan = template
        .to_builder()
        .arrival(arrival)
        .workload(Workload::new(load, stop)?)
        .warmup(settings.warmup())
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
        pass: verdict == LevelVerdict::Pass,
        verdict,
        reason,
        fraction,
        routes: kinds(s, slo),
    }
}

/// Each kind of a mix at this level, with how far its failed rules were
/// past their bounds.
fn kinds(s: &Summary, slo: &[Threshold]) -> Vec<KindRecord> {
    s.routes
        .iter()
        .map(|r| {
            let over = slo
                .iter()
                .filter(|t| t.route() == Some(r.name.as_str()))
                .filter(|t| !judge::not_judged(t, s) && !t.holds(s))
                .map(|t| match t.value() {
                    v if v > 0.0 => t.actual(s) / v,
                    _ => f64::MAX,
                })
                .reduce(f64::max);
            KindRecord {
                name: r.name.clone(),
                sent: r.requests.sent,
                completed: r.requests.completed,
                errors: r.errors.total(),
                latency_ms: r.latency_ms.clone(),
                over,
            }
        })
        .collect()
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
