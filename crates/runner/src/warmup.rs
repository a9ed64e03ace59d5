//! Warm-up before a level's measured load. A fixed warm-up
//! (`warmup = "2s"`) runs inside the measured plan, in the engine; an auto
//! one (`warmup = "auto"`, docs/steady-state.md) runs here first, as one
//! continuous load cut into windows: at each window's end the engine's
//! live count of completed requests (brought up to date every fiftieth of
//! a window) gives the window's throughput, and the throughputs go to
//! `shootout_steady::Rule` until it says steady or the cap is reached; the
//! load is then cancelled. One load, not one run per window: runs per
//! window reconnected every window and left each one's requests in flight
//! to the server, which answered them while the next window counted; on a
//! slow route (node-express file_read, about 300 req/s at 64 connections)
//! a 250 ms window then completed next to nothing and windows varied by
//! 224%. The load is a closed loop at the level's connections, whatever
//! the level's own load: an open loop or a request count warms up the
//! same server code, and saturating it warms it fastest (a JIT compiles
//! what runs most, so the most requests per second reach steady code
//! soonest). The measured plan then runs with no engine warm-up, after a
//! pause long enough for the server to answer what the cancelled load
//! left in flight ([`settle_pause`]), so it does not queue behind them.

use crate::context::{plan_for, SessionContext};
use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, LoadLabel, Observer};
use crate::interrupt::Interrupt;
use crate::place::Generator;
use shootout_engine::{Control, EngineError, Load, Plan, Stop, Workload};
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

/// Live counters are brought up to date this many times a window: a
/// window's count is then off by at most this share at either end.
const UPDATES_PER_WINDOW: u32 = 50;

/// The longest pause after a warm-up for the requests it left in flight.
const MAX_SETTLE: Duration = Duration::from_secs(2);

/// How much longer than its windows a warm-up's load is planned: windows
/// end on the wall clock, and the load is cancelled once the rule is done,
/// so this only keeps a slow window's end from finding the load over.
const SLACK: Duration = Duration::from_secs(10);

/// Warms the server at `at` up for `level` as the scenario says, first
/// loading it for `owed` (what is left of its `warmup_min` this start):
/// for a fixed warm-up, windows for `owed` here and then the fixed
/// duration inside the measured plan; for an auto one, windows until
/// steady, the rule's verdict heeded only once `owed` has passed.
#[allow(clippy::too_many_arguments)] // the level's whole context, read-only
pub fn warm_up(
    cx: &SessionContext<'_>,
    at: std::net::SocketAddr,
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
    let primed = owed_windows(owed, window);
    let rule = Rule {
        cap: rule_for(&sc.warmup).cap + primed as usize,
        ..Rule::default()
    };
    let most = match sc.warmup {
        Warmup::Fixed(_) => primed,
        Warmup::Auto { .. } => rule.cap as u32,
    };
    let length = window * most + SLACK;
    let plan = plan_for(cx, sc, &window_level(level, length)?, at)
        .map_err(EngineRefusal::from)?
        .with_progress_every(window / UPDATES_PER_WINDOW);
    let windows = Windows {
        plan: &plan,
        window,
        rule,
        owed,
        interrupt: cx.interrupt,
        observer: cx.observer,
        label,
        generator: cx.place.generator(),
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
    if count > 0 {
        in_windows(w, alive, &mut |n, rps| {
            w.observer.event(&Event::WarmingUp {
                load: w.label,
                window: n,
                cap: count,
                rps,
                cv: None,
            });
            n >= count
        })?;
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
    /// The warm-up's load ([`window_level`]), long enough for every window
    /// it may run, with no warm-up of its own.
    pub plan: &'a Plan,
    /// One window's length.
    pub window: Duration,
    pub rule: Rule,
    /// Load the target is owed before the rule's verdict counts
    /// (`warmup_min`); the rule's cap is already extended by it.
    pub owed: Duration,
    pub interrupt: &'a Interrupt,
    pub observer: &'a dyn Observer,
    pub label: &'a LoadLabel<'a>,
    /// Where the load is generated (the run's place says).
    pub(crate) generator: &'a dyn Generator,
}

impl std::fmt::Debug for Windows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Windows")
            .field("window", &self.window)
            .field("rule", &self.rule)
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

/// Runs windows until the rule says steady or capped; `alive` is asked
/// after each (a dead server would otherwise be loaded up to the cap).
pub fn until_steady(
    w: &Windows<'_>,
    alive: &dyn Fn() -> Result<(), SessionError>,
) -> Result<WarmedUp, SessionError> {
    let (rule, label) = (w.rule, w.label);
    let started = Instant::now();
    let mut series = Vec::new();
    let mut ended = None;
    in_windows(w, alive, &mut |n, rps| {
        series.push(rps);
        // The series is finite and non-negative and the rule valid (its
        // cap is at least k), so judging cannot fail; were it to, the
        // server is not known to be steady.
        let verdict = rule.judge(&series).unwrap_or(Verdict::Capped {
            windows: series.len(),
            last: Unsteady::NoThroughput,
        });
        w.observer.event(&Event::WarmingUp {
            load: label,
            window: n,
            cap: rule.cap as u32,
            rps,
            cv: cv_of(&verdict),
        });
        // A runtime that declares a minimum may look steady on a plateau
        // before a later JIT tier: only the cap ends its warm-up early.
        let owed = started.elapsed() < w.owed && matches!(verdict, Verdict::Steady { .. });
        let done = verdict.is_done() && !owed;
        if done {
            ended = Some(verdict);
        }
        done
    })?;
    // `in_windows` returns only once a window said done or the cap passed.
    let verdict = ended.unwrap_or(Verdict::Capped {
        windows: series.len(),
        last: Unsteady::NoThroughput,
    });
    Ok(WarmedUp {
        seconds: started.elapsed().as_secs_f64(),
        steady: Some(matches!(verdict, Verdict::Steady { .. })),
        window_cv: cv_of(&verdict),
    })
}

/// Runs `w.plan` as one load and hands `each` every window's number
/// (the first is 1) and completed requests per second as the window ends,
/// until `each` says done; then cancels the load and pauses for what it
/// left in flight ([`settle_pause`]). An interrupt, a dead server (`alive`) or a load
/// that ends by itself (refused by the engine, or past its length) ends it
/// with the error.
fn in_windows(
    w: &Windows<'_>,
    alive: &dyn Fn() -> Result<(), SessionError>,
    each: &mut dyn FnMut(u32, f64) -> bool,
) -> Result<(), SessionError> {
    if w.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let control = Arc::new(Control::new());
    w.interrupt.set_control(Some(control.clone()));
    let (judged, load) = std::thread::scope(|s| {
        let load = s.spawn(|| w.generator.run(w.plan, &control));
        let judged = cut_windows(w, &control, &|| load.is_finished(), alive, each);
        control.cancel();
        (judged, load.join())
    });
    w.interrupt.set_control(None);
    if w.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    let report = match load {
        Ok(report) => report?,
        Err(_) => return Err(EngineRefusal::from(EngineError::WorkerPanicked).into()),
    };
    let last_rps = judged?;
    let in_flight = report.summary.requests.cut;
    w.interrupt.sleep(settle_pause(in_flight, last_rps));
    Ok(())
}

/// Whether the warm-up may wait on: not when a stop was asked for, nor
/// when its load ended by itself (before `what`).
fn going_on(
    w: &Windows<'_>,
    load_ended: &dyn Fn() -> bool,
    what: &str,
) -> Result<(), SessionError> {
    if w.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    if load_ended() {
        return Err(SessionError::Failed {
            reason: format!("the warm-up load ended before {what}"),
            log_tail: String::new(),
        });
    }
    Ok(())
}

/// Reads the running load's count at each window's end; returns the last
/// window's throughput once `each` says done.
fn cut_windows(
    w: &Windows<'_>,
    control: &Control,
    load_ended: &dyn Fn() -> bool,
    alive: &dyn Fn() -> Result<(), SessionError>,
    each: &mut dyn FnMut(u32, f64) -> bool,
) -> Result<f64, SessionError> {
    // A load generated elsewhere starts on a shared clock a moment after
    // it is asked for: windows count from its measured start.
    while !control.is_measuring() {
        going_on(w, load_ended, "it started")?;
        std::thread::sleep(Duration::from_millis(5));
    }
    let t0 = Instant::now();
    let (mut at, mut count) = (t0, control.completed());
    let mut n = 0;
    loop {
        n += 1;
        let end = t0 + w.window * n;
        while Instant::now() < end {
            going_on(w, load_ended, "warm-up did")?;
            let left = end.saturating_duration_since(Instant::now());
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
        alive()?;
        let (now, completed) = (Instant::now(), control.completed());
        let rps = completed.saturating_sub(count) as f64 / (now - at).as_secs_f64();
        let rps = if rps.is_finite() { rps } else { 0.0 };
        (at, count) = (now, completed);
        if each(n, rps) {
            return Ok(rps);
        }
    }
}

/// How long the server needs to answer the `in_flight` requests a warm-up
/// left when it was cancelled, at `rps` (Little's law), at most
/// [`MAX_SETTLE`]: a measurement started at once would queue behind them
/// (about 0.3 s of a slow route's 3 s at 64 connections).
pub fn settle_pause(in_flight: u64, rps: f64) -> Duration {
    if in_flight == 0 || rps.is_nan() || rps <= 0.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(in_flight as f64 / rps).min(MAX_SETTLE)
}

/// The level of a warm-up's load: the level's request (route, queries,
/// keep-alive, pipeline) as a closed loop at its (peak) connections for
/// `length`, however many windows that holds.
pub fn window_level(level: &Level, length: Duration) -> Result<Level, EngineRefusal> {
    let load = Load::Closed {
        connections: level.load().max_connections().max(1),
    };
    let stop = Stop {
        requests: None,
        duration: Some(length),
    };
    Ok(Level {
        workload: Workload::new(load, stop)?,
        ..level.clone()
    })
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
