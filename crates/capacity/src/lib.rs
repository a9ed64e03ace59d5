//! Capacity under a latency service-level objective: how many requests per
//! second a server sustains while every SLO (`p99<=10ms`,
//! `error_rate<=0.1%`, in the engine's [`Threshold`] language) holds on
//! intended-start latency, and how its latency grows on the way there.
//!
//! The search (`search`) is pure: it decides the next rate from the levels
//! seen so far and never touches a socket, so it is tested against simulated
//! servers. The driver ([`run`]) runs each level through the engine at a
//! constant rate and feeds the outcome back. Data flows one way: levels,
//! records, [`CapacityResult`].

mod driver;
pub mod judge;
mod record;
pub mod search;
pub mod sizing;

pub use driver::PROBE_CONNECTIONS;
pub use record::{CapacityResult, LevelRecord, LevelVerdict, Phase, SearchRecord, Verdict};

use shootout_engine::{Plan, Threshold};
use std::time::Duration;

/// The default SLOs when none is given.
pub const DEFAULT_SLO: [&str; 2] = ["p99<=10ms", "error_rate<=0.1%"];
/// The curve's fractions of the capacity found.
pub const CURVE: [f64; 5] = [0.25, 0.5, 0.75, 0.9, 1.0];
/// Each level's measured step when none is given.
pub const DEFAULT_STEP: Duration = Duration::from_secs(5);
/// Each level's uncounted warm-up when none is given.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
/// Bisection stops when the bracket is within 2% unless told otherwise.
pub const DEFAULT_PRECISION: f64 = 0.02;
/// The widest precision accepted: a wider bracket is not a measurement.
pub const MAX_PRECISION: f64 = 0.5;

/// Parses a precision, `2%` or `0.02`, and checks its range.
pub fn parse_precision(s: &str) -> Result<f64, String> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => s.trim().parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a precision (e.g. 2% or 0.02)"))?;
    check_precision(v)
}

/// A precision must be above 0 and at most [`MAX_PRECISION`] (50%).
pub fn check_precision(v: f64) -> Result<f64, String> {
    if v > 0.0 && v <= MAX_PRECISION {
        Ok(v)
    } else {
        Err(format!(
            "precision {v} is out of range: give more than 0 and at most 50%"
        ))
    }
}

/// How to search.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub slo: Vec<Threshold>,
    /// Load before each level's measured step, not counted.
    pub warmup: Duration,
    /// Each level's measured step.
    pub step: Duration,
    /// Bisection ends when the bracket is within this fraction (0.02).
    pub precision: f64,
    /// Connections per level; None sizes them by Little's law with headroom.
    pub connections: Option<usize>,
}

/// What the search reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A level is about to run; `bracket` is (highest pass, lowest fail) so far.
    LevelStarting {
        index: usize,
        phase: Phase,
        target_rps: f64,
        bracket: (Option<f64>, Option<f64>),
    },
    /// A level finished.
    LevelDone { index: usize, record: LevelRecord },
}

/// Why a search could not run (a server's failures are levels, not errors).
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    #[error("{0}")]
    Engine(#[from] shootout_engine::EngineError),
    #[error("invalid load: {0}")]
    Plan(#[from] shootout_engine::PlanError),
    #[error("interrupted")]
    Interrupted,
    /// The probe got no successful answer at all: nothing to search.
    #[error("{url} gave no successful answer to the probe: {why}")]
    Unreachable { url: String, why: String },
}

/// Runs the search against the endpoint, request, expectations, threads and
/// CPUs of `template` (its workload and warm-up are replaced per level).
/// `cancelled` is polled while levels run; `on_event` sees each level.
pub fn run(
    template: &Plan,
    settings: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
    on_event: &mut dyn FnMut(Event),
) -> Result<CapacityResult, CapacityError> {
    driver::run(template, settings, cancelled, on_event)
}

#[cfg(test)]
mod tests {
    use super::parse_precision;

    #[test]
    fn precision_takes_percent_or_fraction_within_bounds() {
        assert_eq!(parse_precision("2%"), Ok(0.02));
        assert_eq!(parse_precision("0.05"), Ok(0.05));
        assert!(parse_precision("0").unwrap_err().contains("out of range"));
        assert!(parse_precision("60%").unwrap_err().contains("out of range"));
        assert!(parse_precision("fine")
            .unwrap_err()
            .contains("not a precision"));
    }
}
