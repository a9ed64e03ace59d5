//! The pure search: from the levels tried so far (rate and verdict) and the
//! probe's rate, decide the next level or the outcome. No sockets and no
//! clocks, so it is tested against simulated servers.
//!
//! Order: exponential search from half the probe's rate (doubling until a
//! level fails, quartering until one passes), bisection until the bracket
//! (highest pass, lowest fail) is within `precision`, a confirm run of the
//! best pass (5% lower after a failure, a few times at most), then the curve
//! at [`CURVE`] fractions of the capacity. A generator-limited level is
//! neither pass nor fail: rates at or above it are not tried again, and when
//! only such rates could decide, the verdict is `generator-limited`.

use crate::record::{LevelVerdict, Phase, Verdict};

/// The curve's fractions of the capacity found.
pub const CURVE: [f64; 5] = [0.25, 0.5, 0.75, 0.9, 1.0];
/// Search levels at most (probe, confirm and curve levels not counted).
pub const MAX_SEARCH_LEVELS: usize = 24;
/// Confirm runs at most: the best pass, then up to three 5% step-downs.
pub const MAX_CONFIRMS: usize = 4;
/// Each confirm after a failed one offers this fraction of the previous rate.
pub const STEP_DOWN: f64 = 0.95;
/// With no pass yet, each level offers this fraction of the lowest fail:
/// a tight SLO may sit far below the closed-loop peak.
pub const DESCENT: f64 = 0.25;
/// The search goes down to this fraction of the probe's rate, and never
/// below [`MIN_RATE`], before concluding that no rate meets the SLO.
pub const LOWEST_FRACTION: f64 = 1.0 / 512.0;
/// The lowest rate tried (req/s).
pub const MIN_RATE: f64 = 1.0;
/// Generator-limited levels tolerated before any pass: each is retried at
/// the same rate (a busy machine's hiccup), then the search gives up.
pub const GENERATOR_RETRIES: usize = 3;

/// One level already run, as the search sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tried {
    pub phase: Phase,
    pub rate: f64,
    pub verdict: LevelVerdict,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub verdict: Verdict,
    /// Found: the confirmed rate. Generator-limited: the highest pass, a
    /// lower bound, when there is one.
    pub capacity: Option<f64>,
    /// A rate passed above one that failed; the lower bracket was kept.
    pub unstable: bool,
}

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    Run {
        phase: Phase,
        rate: f64,
        /// Curve levels: the fraction of the capacity.
        fraction: Option<f64>,
    },
    Done(Outcome),
}

/// The bracket of the search levels: (highest pass below the lowest fail,
/// lowest fail).
pub fn bracket(tried: &[Tried]) -> (Option<f64>, Option<f64>) {
    let search = || tried.iter().filter(|t| t.phase == Phase::Search);
    let low_fail = min(search()
        .filter(|t| t.verdict == LevelVerdict::Fail)
        .map(|t| t.rate));
    let high_pass = max(search()
        .filter(|t| t.verdict == LevelVerdict::Pass)
        .map(|t| t.rate)
        .filter(|r| low_fail.is_none_or(|f| *r < f)));
    (high_pass, low_fail)
}

/// True when a level passed at a rate above one that failed: the server's
/// answer to a rate was not repeatable. Search levels are compared with
/// each other until a confirm runs, then confirm and curve levels with each
/// other (a failed confirm below a search pass is the step-down's job).
pub fn unstable(tried: &[Tried]) -> bool {
    let group = compared(tried);
    lowest_fail(&group).is_some_and(|f| passes(&group).any(|r| r > f))
}

/// The capacity to report once the curve is done: the confirmed rate, or,
/// when the result is unstable, the highest rate that passed below the
/// lowest that failed (the lower one).
fn reported(tried: &[Tried], confirmed: f64) -> Option<f64> {
    let group = compared(tried);
    match lowest_fail(&group) {
        Some(f) if unstable(tried) => max(passes(&group).filter(|r| *r < f)),
        _ => Some(confirmed),
    }
}

fn compared(tried: &[Tried]) -> Vec<Tried> {
    let confirmed = tried.iter().any(|t| t.phase == Phase::Confirm);
    tried
        .iter()
        .filter(|t| match t.phase {
            Phase::Probe => false,
            Phase::Search => !confirmed,
            Phase::Confirm | Phase::Curve => confirmed,
        })
        .copied()
        .collect()
}

fn passes(group: &[Tried]) -> impl Iterator<Item = f64> + '_ {
    group
        .iter()
        .filter(|t| t.verdict == LevelVerdict::Pass)
        .map(|t| t.rate)
}

fn lowest_fail(group: &[Tried]) -> Option<f64> {
    min(group
        .iter()
        .filter(|t| t.verdict == LevelVerdict::Fail)
        .map(|t| t.rate))
}

/// The next action, given every level run so far (in order) and the probe.
pub fn decide(tried: &[Tried], probe_rps: f64, precision: f64) -> Action {
    let confirms: Vec<&Tried> = tried.iter().filter(|t| t.phase == Phase::Confirm).collect();
    if confirms.is_empty() {
        if let Some(action) = search_step(tried, probe_rps, precision) {
            return action;
        }
    }
    confirm_or_curve(tried, &confirms)
}

/// The next search level, or None when the search is over and the best
/// pass should be confirmed (or Done when there is nothing to confirm).
fn search_step(tried: &[Tried], probe_rps: f64, precision: f64) -> Option<Action> {
    let run = |rate: f64| {
        Some(Action::Run {
            phase: Phase::Search,
            rate,
            fraction: None,
        })
    };
    let (high_pass, low_fail) = bracket(tried);
    let unstable = unstable(tried);
    // The lowest generator-limited rate above the best pass: the ceiling
    // of what this generator can offer.
    // A rate counts only once the generator missed it twice: on a shared
    // machine one descheduled moment is common and says nothing.
    let ceiling = min(tried
        .iter()
        .filter(|t| t.phase == Phase::Search && limited_at(tried, t.rate) >= 2)
        .map(|t| t.rate)
        .filter(|r| high_pass.is_none_or(|p| *r > p)));
    let searched = tried.iter().filter(|t| t.phase == Phase::Search).count();
    let done = |verdict, capacity| {
        Some(Action::Done(Outcome {
            verdict,
            capacity,
            unstable,
        }))
    };
    if let Some(last) = tried
        .last()
        .filter(|t| t.phase == Phase::Search && t.verdict == LevelVerdict::GeneratorLimited)
    {
        if limited_at(tried, last.rate) == 1 && searched < MAX_SEARCH_LEVELS {
            return run(last.rate);
        }
    }
    if searched >= MAX_SEARCH_LEVELS {
        return match high_pass {
            Some(_) => None,
            None => done(Verdict::None, None),
        };
    }
    let Some(pass) = high_pass else {
        let limited = tried
            .iter()
            .filter(|t| t.verdict == LevelVerdict::GeneratorLimited)
            .count();
        if limited >= GENERATOR_RETRIES {
            return done(Verdict::GeneratorLimited, None);
        }
        return match (low_fail, ceiling) {
            (None, None) => run(probe_rps / 2.0),
            (Some(f), _) if f * DESCENT < (probe_rps * LOWEST_FRACTION).max(MIN_RATE) => {
                done(Verdict::None, None)
            }
            (Some(f), _) => run(f * DESCENT),
            // The generator missed the first rate: half of it.
            (None, Some(c)) => run(c / 2.0),
        };
    };
    // The upper end the generator can decide: a fail, else its ceiling.
    let upper = match (low_fail, ceiling) {
        (Some(f), Some(c)) => Some(f.min(c)),
        (f, c) => f.or(c),
    };
    match upper {
        None => run(pass * 2.0),
        Some(u) if (u - pass) / pass > precision => run((pass + u) / 2.0),
        // Converged below a fail: confirm.
        Some(u) if Some(u) == low_fail => None,
        // Converged below the generator's ceiling: the server's limit is
        // above what this generator can offer.
        Some(_) => done(Verdict::GeneratorLimited, Some(pass)),
    }
}

/// How many search levels at `rate` the generator could not keep.
fn limited_at(tried: &[Tried], rate: f64) -> usize {
    tried
        .iter()
        .filter(|t| {
            t.phase == Phase::Search
                && t.rate == rate
                && t.verdict == LevelVerdict::GeneratorLimited
        })
        .count()
}

fn confirm_or_curve(tried: &[Tried], confirms: &[&Tried]) -> Action {
    let unstable = unstable(tried);
    let done = |verdict, capacity| {
        Action::Done(Outcome {
            verdict,
            capacity,
            unstable,
        })
    };
    let confirm = |rate| Action::Run {
        phase: Phase::Confirm,
        rate,
        fraction: None,
    };
    let Some(last) = confirms.last() else {
        return match bracket(tried).0 {
            Some(pass) => confirm(pass),
            None => done(Verdict::None, None),
        };
    };
    match last.verdict {
        LevelVerdict::Pass => curve_step(tried, last.rate, unstable),
        _ if confirms.len() >= MAX_CONFIRMS => match last.verdict {
            LevelVerdict::GeneratorLimited => done(Verdict::GeneratorLimited, bracket(tried).0),
            _ => done(Verdict::None, None),
        },
        // The generator missed the schedule: the same rate once more.
        LevelVerdict::GeneratorLimited => confirm(last.rate),
        LevelVerdict::Fail => confirm(last.rate * STEP_DOWN),
    }
}

fn curve_step(tried: &[Tried], confirmed: f64, unstable: bool) -> Action {
    let done = tried.iter().filter(|t| t.phase == Phase::Curve).count();
    if let Some(&fraction) = CURVE.get(done) {
        return Action::Run {
            phase: Phase::Curve,
            rate: confirmed * fraction,
            fraction: Some(fraction),
        };
    }
    let capacity = reported(tried, confirmed);
    Action::Done(Outcome {
        verdict: if capacity.is_some() {
            Verdict::Found
        } else {
            Verdict::None
        },
        capacity,
        unstable,
    })
}

fn min(rates: impl Iterator<Item = f64>) -> Option<f64> {
    rates.fold(None, |m, r| Some(m.map_or(r, |m: f64| m.min(r))))
}

fn max(rates: impl Iterator<Item = f64>) -> Option<f64> {
    rates.fold(None, |m, r| Some(m.map_or(r, |m: f64| m.max(r))))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
