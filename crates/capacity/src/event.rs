//! What a running search reports to its caller, level by level: the
//! front ends turn these into a progress line or a study's events.

use crate::record::{LevelRecord, Phase};

/// What the search reports while it runs.
// A few events a second at most, each moved once: boxing the record would
// only add an allocation and change every caller's pattern.
#[allow(clippy::large_enum_variant)]
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
