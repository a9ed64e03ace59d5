//! One request in flight, as the worker and every transport (the HTTP/1.1
//! FIFO in `conn`, the HTTP/2 streams in `h2_conn`) keep it: when it was
//! meant to start and did, whether it counts, and when it times out.

use std::time::Instant;

/// A request on the wire.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    /// When the pacer meant it to start (the actual send in a closed loop).
    pub intended: Instant,
    pub sent_at: Instant,
    /// False for warm-up requests, which are never counted.
    pub measured: bool,
    pub deadline: Instant,
    /// The request kind of a mix (0 without one).
    pub kind: u16,
}
