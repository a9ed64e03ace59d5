//! The capacity crate's errors, apart from the code that raises them:
//! settings that break a rule ([`SettingsError`], naming its
//! [`SettingsField`]), a precision that is not one ([`PrecisionError`]),
//! and why a search could not run ([`CapacityError`]).

use std::fmt;

/// Text or a number that is not a usable precision.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrecisionError {
    #[error("'{0}' is not a precision (e.g. 2% or 0.02)")]
    NotAPrecision(String),
    #[error("precision {0} is out of range: give more than 0 and at most 50%")]
    OutOfRange(f64),
}

/// The part of the settings a rule concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SettingsField {
    Slo,
    Warmup,
    Step,
    Precision,
    Connections,
}

impl SettingsField {
    /// The field's name, e.g. `step`.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingsField::Slo => "slo",
            SettingsField::Warmup => "warmup",
            SettingsField::Step => "step",
            SettingsField::Precision => "precision",
            SettingsField::Connections => "connections",
        }
    }
}

impl fmt::Display for SettingsField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A broken rule of the search settings.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("slo: give at least one rule")]
    NoSlo,
    #[error("step: must be more than 0")]
    ZeroStep,
    #[error("step: is longer than the 30-day limit")]
    StepTooLong,
    #[error("warmup: is longer than the 30-day limit")]
    WarmupTooLong,
    #[error("{0}")]
    Precision(#[from] PrecisionError),
    #[error("connections: must be at least 1")]
    ZeroConnections,
}

impl SettingsError {
    /// The field the broken rule concerns.
    pub fn field(&self) -> SettingsField {
        match self {
            SettingsError::NoSlo => SettingsField::Slo,
            SettingsError::ZeroStep | SettingsError::StepTooLong => SettingsField::Step,
            SettingsError::WarmupTooLong => SettingsField::Warmup,
            SettingsError::Precision(_) => SettingsField::Precision,
            SettingsError::ZeroConnections => SettingsField::Connections,
        }
    }

    /// Why, without the field's name (for front ends that name it themselves).
    pub fn reason(&self) -> String {
        match self {
            SettingsError::NoSlo => "give at least one rule".to_string(),
            SettingsError::ZeroStep => "must be more than 0".to_string(),
            SettingsError::ZeroConnections => "must be at least 1".to_string(),
            SettingsError::StepTooLong | SettingsError::WarmupTooLong => {
                "is longer than the 30-day limit".to_string()
            }
            SettingsError::Precision(e) => e.to_string(),
        }
    }
}

/// Why a search could not run (a server's failures are levels, not errors).
#[derive(Debug, thiserror::Error)]
pub enum CapacityError {
    /// Transparent: with `{0}` and `#[from]` a chained message (`{:#}`)
    /// said the engine's reason twice.
    #[error(transparent)]
    Engine(#[from] shootout_engine::EngineError),
    #[error("invalid load: {0}")]
    Plan(#[from] shootout_engine::PlanError),
    #[error("interrupted")]
    Interrupted,
    /// The probe got no successful answer at all: nothing to search.
    #[error("{url} gave no successful answer to the probe: {why}")]
    Unreachable { url: String, why: String },
}
