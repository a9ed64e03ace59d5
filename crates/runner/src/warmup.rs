//! Warm-up before a level's measured load. A fixed warm-up
//! (`warmup = "2s"`) runs inside the measured plan, in the engine; an auto
//! one (`warmup = "auto"`, docs/steady-state.md) runs here first, in
//! windows: each window is its own engine run, so its throughput is exact
//! (completed requests over the window's measured time; the live counters
//! of a [`Control`] are flushed too coarsely for sub-second windows), and
//! the windows' throughputs go to `shootout_steady::Rule` until it says
//! steady or the cap is reached. Every window is a closed loop at the
//! level's connections, whatever the level's own load: an open loop or a
//! request count warms up the same server code, and saturating it warms
//! it fastest (a JIT compiles what runs most, so the most requests per
//! second reach steady code soonest). The measured plan then runs with no
//! engine warm-up, right after the last window.

use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, LoadLabel};
use crate::measure::{plan_for, SessionContext};
use shootout_engine::{Control, Load, Plan, Stop, Workload};
use shootout_steady::{Rule, Unsteady, Verdict};
use shootout_study::{Level, Scenario, Warmup};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the warm-up of one measurement went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmedUp {
    /// Wall seconds of warm-up (the fixed duration, or the windows' time).
    pub seconds: f64,
    /// None for a fixed warm-up; whether the rule found the server steady
    /// before the cap for an auto one.
    pub steady: Option<bool>,
}

/// Warms the server on `port` up for `level` as the scenario says: nothing
/// to do here for a fixed warm-up (the measured plan carries it), windows
/// until steady for an auto one.
pub fn warm_up(
    cx: &SessionContext<'_>,
    port: u16,
    label: &LoadLabel<'_>,
    sc: &Scenario,
    level: &Level,
    alive: &dyn Fn() -> Result<(), SessionError>,
) -> Result<WarmedUp, SessionError> {
    let Warmup::Auto { window, .. } = sc.warmup else {
        return Ok(WarmedUp {
            seconds: sc.warmup.engine().as_secs_f64(),
            steady: None,
        });
    };
    let rule = Rule {
        cap: sc.warmup.cap_windows() as usize,
        ..Rule::default()
    };
    let plan = window_plan(cx, port, sc, level, window)?;
    let started = Instant::now();
    let mut series = Vec::new();
    loop {
        alive()?;
        series.push(one_window(cx, &plan)?);
        // The series is finite and non-negative and the rule valid (its
        // cap is at least k), so judging cannot fail; were it to, the
        // server is not known to be steady.
        let verdict = rule.judge(&series).unwrap_or(Verdict::Capped {
            windows: series.len(),
            last: Unsteady::NoThroughput,
        });
        cx.observer.event(&Event::WarmingUp {
            load: label,
            window: series.len() as u32,
            cap: rule.cap as u32,
            rps: series[series.len() - 1],
            cv: cv_of(&verdict),
        });
        if verdict.is_done() {
            return Ok(WarmedUp {
                seconds: started.elapsed().as_secs_f64(),
                steady: Some(matches!(verdict, Verdict::Steady { .. })),
            });
        }
    }
}

/// The plan of one warm-up window: the level's request against the same
/// route, as a closed loop at the level's (peak) connections for `window`,
/// with no warm-up of its own.
fn window_plan(
    cx: &SessionContext<'_>,
    port: u16,
    sc: &Scenario,
    level: &Level,
    window: Duration,
) -> Result<Plan, SessionError> {
    let load = Load::Closed {
        connections: level.load().max_connections().max(1),
    };
    let stop = Stop {
        requests: None,
        duration: Some(window),
    };
    let workload = Workload::new(load, stop).map_err(EngineRefusal::from)?;
    let windowed = Level {
        workload,
        ..level.clone()
    };
    Ok(plan_for(cx, sc, &windowed, port).map_err(EngineRefusal::from)?)
}

/// Runs one window and returns its completed requests per second; the
/// interrupt can stop it midway.
fn one_window(cx: &SessionContext<'_>, plan: &Plan) -> Result<f64, SessionError> {
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let control = Arc::new(Control::new());
    cx.interrupt.set_control(Some(control.clone()));
    let report = shootout_engine::run(plan, &control);
    cx.interrupt.set_control(None);
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let s = report.map_err(EngineRefusal::from)?.summary;
    let rps = s.requests.completed as f64 / s.duration_s;
    Ok(if rps.is_finite() { rps } else { 0.0 })
}

/// The coefficient of variation of the last windows, once there are enough.
fn cv_of(v: &Verdict) -> Option<f64> {
    let stats = |u: &Unsteady| match u {
        Unsteady::Variable(s) | Unsteady::Trend(s) | Unsteady::Drift(s) => Some(s.cv),
        Unsteady::TooFew { .. } | Unsteady::NoThroughput => None,
    };
    match v {
        Verdict::Steady { stats, .. } => Some(stats.cv),
        Verdict::Warming(u) | Verdict::Capped { last: u, .. } => stats(u),
    }
}
