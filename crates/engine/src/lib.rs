//! The shootout load engine: an HTTP/1.1 load generator library with no CLI,
//! storage or rendering in it.
//!
//! Data flows one way: a validated [`Plan`] goes into [`run`], worker threads
//! (one epoll loop each, see `worker`) produce per-thread [`stats::Recorder`]s,
//! and those are merged into one [`LoadReport`]. Each worker combines three
//! independent parts: a pacer (when to send), a stop condition (when to end)
//! and the transport (how to send and parse).

pub mod plan;
pub mod report;

pub use plan::{Load, Plan, PlanError, RequestSpec, Stage, StageUnit, Stop, Target};
pub use report::{ErrorCounts, LatencySummary, LoadReport, RequestCounts, Second, Summary};

mod control;
pub use control::Control;

/// Errors that stop a run before or while it starts (a bad server is never one:
/// its failures are counted, not raised).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Setup(String),
}

/// Runs the plan to completion (or until `control` cancels it) and merges the
/// per-thread results.
pub fn run(plan: &Plan, control: &Control) -> Result<LoadReport, EngineError> {
    plan.validate()?;
    let _ = control;
    Err(EngineError::Setup("engine not implemented yet".into()))
}
