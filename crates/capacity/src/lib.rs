//! Capacity under a latency service-level objective: how many requests per
//! second a server sustains while every SLO (`p99<=10ms`,
//! `error_rate<=0.1%`, in the engine's [`shootout_engine::Threshold`] language) holds on
//! intended-start latency, and how its latency grows on the way there.
//!
//! The search (`search`) is pure: it decides the next rate from the levels
//! seen so far and never touches a socket, so it is tested against simulated
//! servers. The driver ([`run`]) runs each level through the engine at a
//! constant rate and feeds the outcome back. Data flows one way: validated
//! [`Settings`], levels, records, [`CapacityResult`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod driver;
mod error;
mod event;
pub mod judge;
mod record;
pub mod search;
mod settings;
pub mod sizing;

pub use driver::PROBE_CONNECTIONS;
pub use error::{CapacityError, PrecisionError, SettingsError, SettingsField};
pub use event::Event;
pub use record::{
    broke_first, BrokeFirst, CapacityResult, KindRecord, LevelRecord, LevelVerdict, Phase,
    SearchRecord, Verdict,
};
pub use search::CURVE;
pub use settings::{
    check_precision, default_slo, parse_precision, Settings, DEFAULT_PRECISION, DEFAULT_SLO,
    DEFAULT_STEP, DEFAULT_WARMUP, MAX_PRECISION,
};

use shootout_engine::Plan;

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
