//! A scenario's `cost` table: what a request costs the server at fixed
//! rates, what it costs standing idle, and what happens past its knee
//! (docs/cost.md). The scenario's last level is a closed loop; its
//! throughput on that start is the server's capacity (levels before it, as
//! an article's fixed-rate sweep, are measured as written). Then, on the same
//! start: the server with no load for `standing`, open-loop levels at each
//! common rate of `rates` and at each of `fractions` of that capacity, and
//! for each of `overload` a level offering that multiple of the capacity
//! for `overload_for`, then half of it for `recover_for`. Checked here with
//! file, line and key; the runner derives the levels.

use crate::level::Level;
use crate::locator::{Locator, StudyError};
use crate::raw::{percent, Dur, RawCost};
use serde::Serialize;
use shootout_engine::{Load, Stop, Workload};
use std::time::Duration;
use toml::Spanned;

/// What a cost scenario measures after its closed-loop level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostPlan {
    /// Common rates offered to every target (requests per second).
    pub rates: Vec<f64>,
    /// Fractions of each target's own capacity.
    pub fractions: Vec<f64>,
    /// Multiples of the capacity offered in an overload phase.
    pub overload: Vec<f64>,
    /// A response later than this is not good (goodput), and recovery is
    /// p99 back within it.
    pub deadline: Duration,
    /// Each fixed-rate level's measured time.
    pub duration: Duration,
    /// No load for this long after the closed-loop level; zero: not measured.
    pub standing: Duration,
    pub overload_for: Duration,
    pub recover_for: Duration,
}

/// Where a [`CostPlan`] leaves a key out.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(10);
pub const DEFAULT_STANDING: Duration = Duration::from_secs(10);
pub const DEFAULT_OVERLOAD_FOR: Duration = Duration::from_secs(5);
pub const DEFAULT_RECOVER_FOR: Duration = Duration::from_secs(10);
/// `duration` when the closed level is counted in requests, not time.
pub const DEFAULT_COUNTED_DURATION: Duration = Duration::from_secs(2);
/// The shortest recovery phase scaling gives: recovery is three good
/// seconds in a row (`shootout_store::parts::Overload::RECOVERED_SECONDS`)
/// and the first may take one.
pub const MIN_RECOVER: Duration = Duration::from_secs(4);
/// The shortest `recover_for` a study may give: recovery is three good
/// seconds in a row (`shootout_store::parts::Overload::RECOVERED_SECONDS`),
/// so a shorter phase could never show one.
pub const MIN_RECOVER_GIVEN: Duration = Duration::from_secs(3);
/// The shortest `overload_for` and `duration` a study may give: goodput is
/// counted per whole second of the overload phase, and no scaled study
/// measures a fixed-rate point for less.
pub const MIN_PHASE: Duration = Duration::from_secs(1);
/// The warm-up of a fixed-rate level derived on a start whose closed loop
/// already warmed the server: at its own rate, inside its plan.
pub const DERIVED_WARMUP: Duration = Duration::from_millis(500);
/// The recovery phase offers this fraction of the capacity.
pub const RECOVERY_FRACTION: f64 = 0.5;

impl CostPlan {
    /// Seconds its derived levels and standing take on one start, without
    /// warm-ups, for estimates.
    pub fn expected_seconds(&self) -> f64 {
        let fixed = (self.rates.len() + self.fractions.len()) as f64 * self.duration.as_secs_f64();
        let over =
            self.overload.len() as f64 * (self.overload_for + self.recover_for).as_secs_f64();
        fixed + over + self.standing.as_secs_f64()
    }

    /// A copy with every duration multiplied by `f` (`--quick`, `--scale`),
    /// none below 1 s, the recovery phase not below [`MIN_RECOVER`], and
    /// the deadline as it is (a property of the service).
    pub fn scaled(&mut self, f: f64) {
        let s = |d: Duration| d.mul_f64(f).max(Duration::from_secs(1));
        // At least one request due at the slowest common rate, as parsed.
        let slowest = self.rates.iter().copied().fold(f64::INFINITY, f64::min);
        let one_due = Duration::from_secs_f64((1.0 / slowest).min(f64::from(u32::MAX)));
        self.duration = s(self.duration).max(one_due.min(self.duration));
        if !self.standing.is_zero() {
            self.standing = s(self.standing);
        }
        self.overload_for = s(self.overload_for);
        self.recover_for = self
            .recover_for
            .mul_f64(f)
            .max(MIN_RECOVER)
            .min(self.recover_for);
    }
}

/// The level whose throughput is the capacity: the last, a closed loop.
fn capacity_level<'l>(
    at: &Locator<'_>,
    raw: &Spanned<RawCost>,
    levels: &'l [Level],
) -> Result<&'l Level, StudyError> {
    levels
        .last()
        .filter(|l| matches!(l.load(), Load::Closed { .. }))
        .ok_or_else(|| {
            at.at(
                raw,
                "cost",
                "needs a closed-loop `load`, or a closed loop as the last of `levels` (its \
                 throughput is the capacity the fractions and overloads are of)",
            )
        })
}

/// Common rates, fractions and overload multiples, as checked.
type Points = (Vec<f64>, Vec<f64>, Vec<f64>);

/// The table's common rates, fractions and overload multiples.
fn points(at: &Locator<'_>, raw: &Spanned<RawCost>) -> Result<Points, StudyError> {
    let c = raw.get_ref();
    let mut rates = Vec::new();
    for r in &c.rates {
        let v = *r.get_ref();
        if !(v.is_finite() && v > 0.0) {
            return Err(at.at(r, "cost.rates", format!("{v} is not a positive rate")));
        }
        rates.push(v);
    }
    let pcts = |list: &[Spanned<String>], key: &str, max: f64| {
        list.iter()
            .map(|p| match percent(p.get_ref()) {
                Some(v) if v <= max => Ok(v),
                _ => Err(at.at(
                    p,
                    key,
                    format!(
                        "'{}' is not a percentage above 0 and at most {}%",
                        p.get_ref(),
                        max * 100.0
                    ),
                )),
            })
            .collect::<Result<Vec<f64>, StudyError>>()
    };
    let fractions = pcts(&c.fractions, "cost.fractions", 1.0)?;
    let overload = pcts(&c.overload, "cost.overload", 10.0)?;
    if let Some(o) = c.overload.iter().zip(&overload).find(|(_, v)| **v <= 1.0) {
        return Err(at.at(
            o.0,
            "cost.overload",
            "an overload is more than 100% of the capacity",
        ));
    }
    if rates.is_empty() && fractions.is_empty() && overload.is_empty() {
        return Err(at.at(
            raw,
            "cost",
            "give at least one of `rates`, `fractions` or `overload`",
        ));
    }
    Ok((rates, fractions, overload))
}

/// Checks the table against the scenario's levels (the last a closed loop).
pub(crate) fn check(
    at: &Locator<'_>,
    raw: &Spanned<RawCost>,
    levels: &[Level],
) -> Result<CostPlan, StudyError> {
    let c = raw.get_ref();
    let capacity = capacity_level(at, raw, levels)?;
    let (rates, fractions, overload) = points(at, raw)?;
    let dur = |d: &Option<Spanned<Dur>>, key: &str, default: Duration, least: Duration| match d {
        None => Ok(default),
        Some(v) if v.get_ref().0.is_zero() && !least.is_zero() => {
            Err(at.at(v, key, "must be more than 0"))
        }
        Some(v) if v.get_ref().0 < least => Err(at.at(v, key, too_short(key, least))),
        Some(v) => Ok(v.get_ref().0),
    };
    let duration = match &c.duration {
        Some(_) => dur(&c.duration, "cost.duration", Duration::ZERO, MIN_PHASE)?,
        None => capacity.stop().duration.unwrap_or(DEFAULT_COUNTED_DURATION),
    };
    for (r, &v) in c.rates.iter().zip(&rates) {
        runnable(at, r, v, capacity, duration, c.duration.is_some())?;
    }
    Ok(CostPlan {
        rates,
        fractions,
        overload,
        deadline: dur(
            &c.deadline,
            "cost.deadline",
            DEFAULT_DEADLINE,
            Duration::from_nanos(1),
        )?,
        duration,
        standing: dur(
            &c.standing,
            "cost.standing",
            DEFAULT_STANDING,
            Duration::ZERO,
        )?,
        overload_for: dur(
            &c.overload_for,
            "cost.overload_for",
            DEFAULT_OVERLOAD_FOR,
            MIN_PHASE,
        )?,
        recover_for: dur(
            &c.recover_for,
            "cost.recover_for",
            DEFAULT_RECOVER_FOR,
            MIN_RECOVER_GIVEN,
        )?,
    })
}

/// Why a phase of `key` shorter than `least` is refused.
fn too_short(key: &str, least: Duration) -> String {
    let why = match key {
        "cost.recover_for" => {
            "recovery is three good seconds in a row, so a shorter phase could never show one"
        }
        "cost.overload_for" => "goodput is counted per whole second of the overload phase",
        _ => "no scaled study measures a fixed-rate point for less",
    };
    format!("must be at least {}s: {why}", least.as_secs_f64())
}

/// A common rate is refused here, not after the build and the first load,
/// when the engine would refuse its level (a rate it cannot pace) or when
/// not one request is due in its `duration`.
fn runnable(
    at: &Locator<'_>,
    r: &Spanned<f64>,
    rate: f64,
    capacity: &Level,
    duration: Duration,
    given: bool,
) -> Result<(), StudyError> {
    let load = Load::Open {
        rate,
        connections: capacity.load().max_connections(),
    };
    let stop = Stop {
        requests: None,
        duration: Some(duration),
    };
    if let Err(e) = Workload::new(load, stop) {
        return Err(at.at(r, "cost.rates", e.reason()));
    }
    if rate * duration.as_secs_f64() < 1.0 {
        let whose = if given {
            "`cost.duration`"
        } else {
            "the closed level's duration, the default of `cost.duration`"
        };
        return Err(at.at(
            r,
            "cost.rates",
            format!(
                "at {rate} req/s not one request is due in {}s ({whose}): give a rate and a \
                 duration whose product is at least 1 request",
                duration.as_secs_f64(),
            ),
        ));
    }
    Ok(())
}
