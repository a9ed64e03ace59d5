//! A scenario's `capacity` table: a search for the highest rate meeting
//! latency SLOs instead of fixed load levels. The SLO strings are the
//! engine's threshold language ([`Threshold::parse`]); the search itself
//! is `shootout_capacity`'s, and [`Capacity::settings`] hands it over.
//! Also the arithmetic of how long a search takes, for estimates and
//! `--quick`.

use crate::level::Level;
use crate::locator::{Locator, StudyError};
use crate::raw::{RawCapacity, RawFraction};
use serde::Serialize;
use shootout_capacity::{PrecisionError, Settings, SettingsError, SettingsField};
use shootout_engine::{Load, Stop, Threshold, Workload};
use std::time::Duration;
use toml::Spanned;

/// Levels the search runs besides bisection: the probe, about three of the
/// exponential search, the confirmation and the five of the curve
/// (`shootout_capacity::CURVE`).
const FIXED_LEVELS: f64 = 1.0 + 3.0 + 1.0 + shootout_capacity::CURVE.len() as f64;
/// The coarsest precision scaling may give (bisection ends within 20%).
const COARSEST: f64 = 0.2;

/// How a scenario's capacity is searched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Capacity {
    /// A level passes when every rule holds.
    pub slo: Vec<Threshold>,
    /// Load before each level's step, not counted.
    pub warmup: Duration,
    pub step: Duration,
    /// Bisection ends when the bracket is within this fraction.
    pub precision: f64,
    /// None: sized per level by the search (Little's law with headroom).
    pub connections: Option<usize>,
    pub keepalive: bool,
}

impl Capacity {
    /// What `shootout_capacity::run` takes, checked by its rules (which
    /// [`check`] applied and [`Capacity::scaled`] keeps).
    pub fn settings(&self) -> Result<Settings, SettingsError> {
        Settings::new(
            self.slo.clone(),
            self.warmup,
            self.step,
            self.precision,
            self.connections,
        )
    }

    /// A level standing for the search when a plan is built from the
    /// scenario: the search replaces its workload and warm-up per level.
    pub fn template_level(&self) -> Level {
        let connections = self.connections.unwrap_or(1);
        let stop = Stop {
            requests: None,
            duration: Some(self.step),
        };
        let workload = Workload::new(Load::Closed { connections }, stop)
            .unwrap_or_else(|_| unreachable!("connections >= 1 and step > 0 are checked"));
        Level {
            label: "capacity".to_string(),
            workload,
            keepalive: self.keepalive,
            pipeline: 1,
            queries: None,
            protocol: Default::default(),
            streams: 1,
            tls_resume: false,
            ws: None,
            resources: crate::resources::Resources::default(),
        }
    }

    /// How many levels a search is expected to run: the fixed ones plus
    /// bisection from a factor-of-two bracket down to `precision`.
    pub fn expected_levels(&self) -> f64 {
        FIXED_LEVELS + (1.0 / self.precision).log2().ceil()
    }

    /// Expected seconds of one search (warm-ups and steps).
    pub fn expected_seconds(&self) -> f64 {
        self.expected_levels() * (self.warmup + self.step).as_secs_f64()
    }

    /// Shrunk by `f` for `--scale`/`--quick`: shorter steps and warm-ups
    /// (floors 0.3 s and 0.1 s: a step still holds a few hundred requests at
    /// the lowest rates worth measuring) and a coarser precision, which cuts
    /// bisection levels (up to 20%).
    pub fn scaled(&mut self, f: f64) {
        let shrink = |d: Duration, floor: f64| {
            Duration::from_secs_f64((d.as_secs_f64() * f).max(floor.min(d.as_secs_f64())))
        };
        self.step = shrink(self.step, 0.3);
        self.warmup = shrink(self.warmup, 0.1);
        self.precision = (self.precision / f.sqrt()).clamp(self.precision, COARSEST);
    }
}

/// Validates a `capacity` table; `warmup` and `keepalive` are the scenario's.
pub(crate) fn check(
    at: &Locator<'_>,
    raw: &Spanned<RawCapacity>,
    warmup: Duration,
    keepalive: bool,
) -> Result<Capacity, StudyError> {
    let c = raw.get_ref();
    let err = |span: std::ops::Range<usize>, key: &str, msg: String| {
        at.error(Some(span), Some(&format!("capacity.{key}")), msg)
    };
    let slo = match &c.slo {
        None => shootout_capacity::default_slo(),
        Some(list) => list
            .iter()
            .map(|s| Threshold::parse(s.get_ref()).map_err(|m| err(s.span(), "slo", m.to_string())))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let precision = match &c.precision {
        None => shootout_capacity::DEFAULT_PRECISION,
        Some(p) => fraction(p.get_ref()).map_err(|m| err(p.span(), "precision", m.to_string()))?,
    };
    let settings = Settings::new(
        slo,
        c.warmup.as_ref().map_or(warmup, |d| d.get_ref().0),
        c.step
            .as_ref()
            .map_or(shootout_capacity::DEFAULT_STEP, |d| d.get_ref().0),
        precision,
        c.connections.as_ref().map(|n| *n.get_ref()),
    )
    .map_err(|e| {
        let span = match e.field() {
            SettingsField::Slo => None,
            SettingsField::Warmup => c.warmup.as_ref().map(Spanned::span),
            SettingsField::Step => c.step.as_ref().map(Spanned::span),
            SettingsField::Precision => c.precision.as_ref().map(Spanned::span),
            SettingsField::Connections => c.connections.as_ref().map(Spanned::span),
        };
        err(
            span.unwrap_or_else(|| raw.span()),
            e.field().as_str(),
            e.reason(),
        )
    })?;
    Ok(Capacity {
        slo: settings.slo().to_vec(),
        warmup: settings.warmup(),
        step: settings.step(),
        precision: settings.precision(),
        connections: settings.connections(),
        keepalive,
    })
}

/// `"2%"` or `0.02`: the capacity crate's one precision rule.
fn fraction(raw: &RawFraction) -> Result<f64, PrecisionError> {
    match raw {
        RawFraction::Number(v) => shootout_capacity::check_precision(*v),
        RawFraction::Text(t) => shootout_capacity::parse_precision(t),
    }
}
