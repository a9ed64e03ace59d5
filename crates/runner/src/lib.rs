//! Studies: take a parsed study file (`shootout_study`), schedule its work with rotation
//! and restarts ([`schedule`]), and run it ([`run_study`]): each target is
//! built if needed and verified once, then started pinned to the server
//! CPUs where the run's place puts it (`place`: local process groups),
//! loaded through the engine (the generator pinned to its own CPUs) while
//! its CPU and memory are sampled, stopped, and every
//! measurement is committed to the store the moment it ends. A scenario
//! may instead ask for a capacity search ([`capacity`]), run per target on
//! a pinned server start and recorded with all its levels, or a cost
//! table: levels derived on the same start from its capacity ([`cost`]),
//! each measurement's typed parts added by probes ([`probe`]). One measuring
//! command at a time per machine holds the [`machine_lock`]. The runner
//! never prints, exits or handles signals: it reports through an
//! [`Observer`] ([`event`]) and is stopped through an [`Interrupt`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod budget;
pub mod capacity;
pub mod context;
mod cost;
pub mod database;
pub mod drain;
pub mod error;
pub mod event;
#[cfg(test)]
mod event_tests;
pub mod guard;
pub mod host;
pub mod interrupt;
pub mod liveness;
pub mod machine_lock;
pub mod measure;
mod place;
pub mod prepare;
mod probe;
pub mod procfs;
pub mod quiet;
mod quiet_wait;
pub mod runner;
pub mod sampler;
pub mod schedule;
pub mod tls;
pub mod unsaved;
pub mod warmup;

pub use error::{EngineRefusal, SessionError};
pub use event::{Event, Observer, Silent};
pub use interrupt::Interrupt;
pub use place::kube::{delete_all_of_this_process, ClusterError};
pub use place::kubectl::KubeOptions;
pub use runner::{check_cpus, run_study, RunConfig, RunError, RunOutcome, Skipped, TargetFailure};
