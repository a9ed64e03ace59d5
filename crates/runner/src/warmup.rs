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

use crate::context::{plan_for, SessionContext};
use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, LoadLabel, Observer};
use crate::interrupt::Interrupt;
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
    /// Auto only: the coefficient of variation of the last windows the
    /// rule judged (None for a fixed warm-up or too few windows).
    pub window_cv: Option<f64>,
}

/// The window of the priming that a fixed warm-up runs first when the
/// target is owed load (`warmup_min`): short enough for live progress.
const PRIME_WINDOW: Duration = Duration::from_secs(1);

/// Warms the server on `port` up for `level` as the scenario says, first
/// loading it for `owed` (what is left of its `warmup_min` this start):
/// for a fixed warm-up, windows for `owed` here and then the fixed
/// duration inside the measured plan; for an auto one, windows until
/// steady, the rule's verdict heeded only once `owed` has passed.
#[allow(clippy::too_many_arguments)] // the level's whole context, read-only
pub fn warm_up(
    cx: &SessionContext<'_>,
    port: u16,
    label: &LoadLabel<'_>,
    sc: &Scenario,
    level: &Level,
    owed: Duration,
    alive: &dyn Fn() -> Result<(), SessionError>,
) -> Result<WarmedUp, SessionError> {
    let window = match sc.warmup {
        Warmup::Auto { window, .. } => window,
        Warmup::Fixed(_) if owed.is_zero() => {
            return Ok(WarmedUp {
                seconds: sc.warmup.engine().as_secs_f64(),
                steady: None,
                window_cv: None,
            })
        }
        Warmup::Fixed(_) => PRIME_WINDOW,
    };
    let plan =
        plan_for(cx, sc, &window_level(level, window)?, port).map_err(EngineRefusal::from)?;
    let primed = owed_windows(owed, window);
    let windows = Windows {
        plan: &plan,
        rule: Rule {
            cap: rule_for(&sc.warmup).cap + primed as usize,
            ..Rule::default()
        },
        owed,
        interrupt: cx.interrupt,
        observer: cx.observer,
        label,
    };
    if let Warmup::Fixed(fixed) = sc.warmup {
        let seconds = prime(&windows, primed, alive)?;
        return Ok(WarmedUp {
            seconds: seconds + fixed.as_secs_f64(),
            steady: None,
            window_cv: None,
        });
    }
    until_steady(&windows, alive)
}

/// How many windows of `window` cover `owed`.
fn owed_windows(owed: Duration, window: Duration) -> u32 {
    (owed.as_secs_f64() / window.as_secs_f64()).ceil() as u32
}

/// Runs `count` windows without judging them (a fixed warm-up's share of
/// `warmup_min`); returns their wall seconds.
fn prime(
    w: &Windows<'_>,
    count: u32,
    alive: &dyn Fn() -> Result<(), SessionError>,
) -> Result<f64, SessionError> {
    let started = Instant::now();
    for n in 1..=count {
        alive()?;
        let rps = one_window(w.interrupt, w.plan)?;
        w.observer.event(&Event::WarmingUp {
            load: w.label,
            window: n,
            cap: count,
            rps,
            cv: None,
        });
    }
    Ok(started.elapsed().as_secs_f64())
}

/// The steady-state rule of a warm-up: the documented one, capped at the
/// warm-up's `max / window` windows.
pub fn rule_for(w: &Warmup) -> Rule {
    Rule {
        cap: w.cap_windows() as usize,
        ..Rule::default()
    }
}

/// What an auto warm-up runs and tells.
pub struct Windows<'a> {
    /// One window's load ([`window_level`]), with no warm-up of its own.
    pub plan: &'a Plan,
    pub rule: Rule,
    /// Load the target is owed before the rule's verdict counts
    /// (`warmup_min`); the rule's cap is already extended by it.
    pub owed: Duration,
    pub interrupt: &'a Interrupt,
    pub observer: &'a dyn Observer,
    pub label: &'a LoadLabel<'a>,
}

impl std::fmt::Debug for Windows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Windows")
            .field("rule", &self.rule)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// Runs windows until the rule says steady or capped; `alive` is asked
/// before each (a dead server would otherwise be loaded up to the cap).
pub fn until_steady(
    w: &Windows<'_>,
    alive: &dyn Fn() -> Result<(), SessionError>,
) -> Result<WarmedUp, SessionError> {
    let (rule, label) = (w.rule, w.label);
    let started = Instant::now();
    let mut series = Vec::new();
    loop {
        alive()?;
        series.push(one_window(w.interrupt, w.plan)?);
        // The series is finite and non-negative and the rule valid (its
        // cap is at least k), so judging cannot fail; were it to, the
        // server is not known to be steady.
        let verdict = rule.judge(&series).unwrap_or(Verdict::Capped {
            windows: series.len(),
            last: Unsteady::NoThroughput,
        });
        w.observer.event(&Event::WarmingUp {
            load: label,
            window: series.len() as u32,
            cap: rule.cap as u32,
            rps: series[series.len() - 1],
            cv: cv_of(&verdict),
        });
        // A runtime that declares a minimum may look steady on a plateau
        // before a later JIT tier: only the cap ends its warm-up early.
        let owed = started.elapsed() < w.owed && matches!(verdict, Verdict::Steady { .. });
        if verdict.is_done() && !owed {
            return Ok(WarmedUp {
                seconds: started.elapsed().as_secs_f64(),
                steady: Some(matches!(verdict, Verdict::Steady { .. })),
                window_cv: cv_of(&verdict),
            });
        }
    }
}

/// The level of one warm-up window: the level's request (route, queries,
/// keep-alive, pipeline) as a closed loop at its (peak) connections for
/// `window`.
pub fn window_level(level: &Level, window: Duration) -> Result<Level, EngineRefusal> {
    let load = Load::Closed {
        connections: level.load().max_connections().max(1),
    };
    let stop = Stop {
        requests: None,
        duration: Some(window),
    };
    Ok(Level {
        workload: Workload::new(load, stop)?,
        ..level.clone()
    })
}

/// Runs one window and returns its completed requests per second; the
/// interrupt can stop it midway.
fn one_window(interrupt: &Interrupt, plan: &Plan) -> Result<f64, SessionError> {
    if interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let control = Arc::new(Control::new());
    interrupt.set_control(Some(control.clone()));
    let report = shootout_engine::run(plan, &control);
    interrupt.set_control(None);
    if interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let s = report.map_err(EngineRefusal::from)?.summary;
    let rps = s.requests.completed as f64 / s.duration_s;
    Ok(if rps.is_finite() { rps } else { 0.0 })
}

/// The coefficient of variation of the last windows, once there are enough.
fn cv_of(v: &Verdict) -> Option<f64> {
    let stats = |u: &Unsteady| match u {
        Unsteady::Drift(s) | Unsteady::Step(s) => Some(s.cv),
        Unsteady::TooFew { .. } | Unsteady::NoThroughput => None,
    };
    match v {
        Verdict::Steady { stats, .. } => Some(stats.cv),
        Verdict::Warming(u) | Verdict::Capped { last: u, .. } => stats(u),
    }
}

#[cfg(test)]
#[path = "warmup_tests.rs"]
mod tests;
