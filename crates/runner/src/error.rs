//! Why a session ended early, and why the engine refused a load: typed
//! errors shared by the session code ([`crate::measure`],
//! [`crate::capacity`]), the run ([`crate::runner`]) and the events that
//! report a refusal ([`crate::event`]). A leaf: it imports nothing of this
//! crate, so every module may use it without an import circle.

use shootout_capacity::{CapacityError, SettingsError};
use shootout_engine::{EngineError, PlanError};
use shootout_store::StoreError;

/// Why a session ended early.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The target could not be started or died: a one-line reason and the log tail.
    #[error("{reason}")]
    Start { reason: String, log_tail: String },
    /// The target failed during a measurement (killed for memory, a budget
    /// that cannot be applied): recorded as failed, the run goes on.
    #[error("{reason}")]
    Failed { reason: String, log_tail: String },
    /// The user asked to stop.
    #[error("interrupted")]
    Interrupted,
    /// The engine refused to run (a setup error that affects every target).
    #[error(transparent)]
    Engine(#[from] EngineRefusal),
    /// The store could not record a measurement.
    #[error("cannot record a measurement: {0}")]
    Record(StoreError),
}

/// Why the engine (or the capacity search over it) refused to load: a
/// setup problem of this machine or study, not of one target, so the
/// study stops.
#[derive(Debug, thiserror::Error)]
pub enum EngineRefusal {
    /// The level's plan could not be completed (threads, generator CPUs).
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Load(#[from] EngineError),
    #[error(transparent)]
    Search(#[from] CapacityError),
    /// The study's capacity settings failed their validation.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("scenario {scenario} has no capacity search")]
    NoSearch { scenario: String },
    /// A load generated elsewhere (generator pods) failed or its shards
    /// could not be brought back and merged: what failed, in its words.
    #[error("the load's generator: {0}")]
    Generator(String),
}
