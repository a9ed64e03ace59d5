//! Shared, lock-free controls of a running load: cancellation from the caller
//! and live progress counters for bars. Workers flush their local counts here
//! ten times a second by default (`Plan::progress_every`), never per
//! request.

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

    pub(crate) fn set_measuring(&self) {
        self.measuring.store(true, Ordering::Relaxed);
    }

    pub(crate) fn add(&self, completed: u64, errors: u64) {
        if completed > 0 {
            self.completed.fetch_add(completed, Ordering::Relaxed);
        }
        if errors > 0 {
            self.errors.fetch_add(errors, Ordering::Relaxed);
        }
    }
}
