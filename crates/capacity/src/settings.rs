//! How a search runs ([`Settings`]) and the one place its rules are
//! checked: the SLO, each level's warm-up and measured step, the bisection's
//! precision and the connections. A `Settings` is only made by
//! [`Settings::new`], so the search never sees a zero step, an SLO-less
//! search or a precision that is not a measurement, and the front ends (the
//! `capacity` command, a study's `capacity` table) do not check them again.

use crate::error::{PrecisionError, SettingsError};
use shootout_engine::units::MAX_DURATION;
use shootout_engine::{Arrival, Threshold};
use std::time::Duration;

/// The default SLOs when none is given.
pub const DEFAULT_SLO: [&str; 2] = ["p99<=10ms", "error_rate<=0.1%"];
/// Each level's measured step when none is given.
pub const DEFAULT_STEP: Duration = Duration::from_secs(5);
/// Each level's uncounted warm-up when none is given.
pub const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
/// Bisection stops when the bracket is within 2% unless told otherwise.
pub const DEFAULT_PRECISION: f64 = 0.02;
/// The widest precision accepted: a wider bracket is not a measurement.
pub const MAX_PRECISION: f64 = 0.5;

/// [`DEFAULT_SLO`], parsed.
pub fn default_slo() -> Vec<Threshold> {
    DEFAULT_SLO
        .iter()
        .filter_map(|t| Threshold::parse(t).ok())
        .collect()
}

/// Parses a precision, `2%` or `0.02`, and checks its range.
pub fn parse_precision(s: &str) -> Result<f64, PrecisionError> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => s.trim().parse::<f64>(),
    }
    .map_err(|_| PrecisionError::NotAPrecision(s.to_string()))?;
    check_precision(v)
}

/// A precision must be above 0 and at most [`MAX_PRECISION`] (50%).
pub fn check_precision(v: f64) -> Result<f64, PrecisionError> {
    if v > 0.0 && v <= MAX_PRECISION {
        Ok(v)
    } else {
        Err(PrecisionError::OutOfRange(v))
    }
}

/// How to search: checked as a whole by [`Settings::new`].
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    slo: Vec<Threshold>,
    warmup: Duration,
    step: Duration,
    precision: f64,
    connections: Option<usize>,
    /// How the open-loop levels' requests arrive (the probe is a closed
    /// loop and has no arrivals).
    arrival: Arrival,
}

impl Settings {
    /// Checks every rule: at least one SLO rule, a step above 0 (and within
    /// the engine's 30-day limit, like the warm-up), a precision above 0 and
    /// at most [`MAX_PRECISION`], and at least one connection when the count
    /// is fixed (`None` sizes each level by Little's law with headroom).
    pub fn new(
        slo: Vec<Threshold>,
        warmup: Duration,
        step: Duration,
        precision: f64,
        connections: Option<usize>,
    ) -> Result<Settings, SettingsError> {
        if slo.is_empty() {
            return Err(SettingsError::NoSlo);
        }
        if step.is_zero() {
            return Err(SettingsError::ZeroStep);
        }
        if step > MAX_DURATION {
            return Err(SettingsError::StepTooLong);
        }
        if warmup > MAX_DURATION {
            return Err(SettingsError::WarmupTooLong);
        }
        check_precision(precision)?;
        if connections == Some(0) {
            return Err(SettingsError::ZeroConnections);
        }
        Ok(Settings {
            slo,
            warmup,
            step,
            precision,
            connections,
            arrival: Arrival::Uniform,
        })
    }

    /// These settings with the open-loop levels' arrival process.
    pub fn with_arrival(mut self, arrival: Arrival) -> Settings {
        self.arrival = arrival;
        self
    }

    /// A level passes when every rule holds.
    pub fn slo(&self) -> &[Threshold] {
        &self.slo
    }
    /// Load before each level's measured step, not counted.
    pub fn warmup(&self) -> Duration {
        self.warmup
    }
    /// Each level's measured step.
    pub fn step(&self) -> Duration {
        self.step
    }
    /// Bisection ends when the bracket is within this fraction (0.02).
    pub fn precision(&self) -> f64 {
        self.precision
    }
    /// Connections per level; `None` sizes them by Little's law with headroom.
    pub fn connections(&self) -> Option<usize> {
        self.connections
    }
    /// How the open-loop levels' requests arrive.
    pub fn arrival(&self) -> Arrival {
        self.arrival
    }
}

/// The defaults: [`DEFAULT_SLO`], [`DEFAULT_WARMUP`], [`DEFAULT_STEP`],
/// [`DEFAULT_PRECISION`] and connections sized per level.
impl Default for Settings {
    fn default() -> Settings {
        Settings {
            slo: default_slo(),
            warmup: DEFAULT_WARMUP,
            step: DEFAULT_STEP,
            precision: DEFAULT_PRECISION,
            connections: None,
            arrival: Arrival::Uniform,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::SettingsField;

    #[test]
    fn precision_takes_percent_or_fraction_within_bounds() {
        assert_eq!(parse_precision("2%"), Ok(0.02));
        assert_eq!(parse_precision("0.05"), Ok(0.05));
        assert!(parse_precision("0")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(parse_precision("60%")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
        assert!(parse_precision("fine")
            .unwrap_err()
            .to_string()
            .contains("not a precision"));
    }

    #[test]
    fn the_defaults_are_valid_settings() {
        let d = Settings::default();
        assert_eq!(
            d.slo().len(),
            DEFAULT_SLO.len(),
            "every default rule parses"
        );
        let again = Settings::new(
            d.slo().to_vec(),
            d.warmup(),
            d.step(),
            d.precision(),
            d.connections(),
        );
        assert_eq!(again, Ok(d));
    }

    #[test]
    fn each_broken_rule_is_named_by_its_field() {
        let ok = Settings::default();
        let with = |slo: Vec<Threshold>, warmup, step, precision, connections| {
            Settings::new(slo, warmup, step, precision, connections)
                .unwrap_err()
                .field()
        };
        let (slo, w, s, p) = (ok.slo().to_vec(), ok.warmup(), ok.step(), ok.precision());
        assert_eq!(with(vec![], w, s, p, None), SettingsField::Slo);
        assert_eq!(
            with(slo.clone(), w, Duration::ZERO, p, None),
            SettingsField::Step
        );
        let month = MAX_DURATION + Duration::from_secs(1);
        assert_eq!(with(slo.clone(), w, month, p, None), SettingsField::Step);
        assert_eq!(with(slo.clone(), month, s, p, None), SettingsField::Warmup);
        for bad in [0.0, -0.1, 0.51, f64::NAN] {
            assert_eq!(with(slo.clone(), w, s, bad, None), SettingsField::Precision);
        }
        assert_eq!(
            with(slo.clone(), w, s, p, Some(0)),
            SettingsField::Connections
        );
        let fixed = Settings::new(slo, Duration::ZERO, s, MAX_PRECISION, Some(1)).unwrap();
        assert_eq!(fixed.connections(), Some(1));
        assert_eq!(fixed.warmup(), Duration::ZERO, "no warm-up is allowed");
    }
}
