//! Shared, lock-free controls of a running load: cancellation from the caller
//! and live progress counters for bars. Workers flush their local counts here
//! ten times a second by default (`Plan::progress_every`), never per
//! request. A load run in another process (a generator pod) is counted
//! here too, by whoever reads its progress ([`Control::add`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Cancellation and live progress for one run. Share it by reference.
#[derive(Debug, Default)]
pub struct Control {
    cancel: AtomicBool,
    measuring: AtomicBool,
    completed: AtomicU64,
    errors: AtomicU64,
}

impl Control {
    pub fn new() -> Control {
        Control::default()
    }

    /// Asks every worker to stop soon; in-flight requests are counted as cut.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// True once warm-up is over and counts are being kept.
    pub fn is_measuring(&self) -> bool {
        self.measuring.load(Ordering::Relaxed)
    }

    /// Completed requests in the measured phase so far.
    pub fn completed(&self) -> u64 {
        self.completed.load(Ordering::Relaxed)
    }

    /// Errors in the measured phase so far.
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    /// Marks the measured phase as begun. The engine's run calls it; it is
    /// public for a load run in another process whose counts arrive here
    /// (a generator that reports its progress), so that this control reads
    /// as the one of a local run does.
    pub fn set_measuring(&self) {
        self.measuring.store(true, Ordering::Relaxed);
    }

    /// Adds completed requests and errors of the measured phase. The
    /// engine's workers call it; it is public for a load run in another
    /// process whose counts arrive here (added as they come: give the
    /// increase since the last report, not the total).
    pub fn add(&self, completed: u64, errors: u64) {
        if completed > 0 {
            self.completed.fetch_add(completed, Ordering::Relaxed);
        }
        if errors > 0 {
            self.errors.fetch_add(errors, Ordering::Relaxed);
        }
    }
}
