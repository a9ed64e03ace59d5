//! The stop rules the engine's test files share (a request budget or a
//! deadline alone) and the accounting every finished run must satisfy:
//! each sent request completed, was cut at the deadline, or failed once.

use shootout_engine::{Stop, Summary};
use std::time::Duration;

/// Stop after `n` requests, with no deadline.
pub fn requests(n: u64) -> Stop {
    Stop {
        requests: Some(n),
        duration: None,
    }
}

/// Stop at a deadline `d` into the measured phase, with no request budget.
pub fn duration(d: Duration) -> Stop {
    Stop {
        requests: None,
        duration: Some(d),
    }
}

/// Sent = completed + cut + errors: no request lost or counted twice.
pub fn assert_accounted(s: &Summary) {
    assert_eq!(
        s.requests.sent,
        s.requests.completed + s.requests.cut + s.errors.total(),
        "invariant: {s:?}"
    );
}
