//! How many connections a level opens: enough that the pool cannot be the
//! bottleneck at the rate tried. By Little's law a server answering within
//! latency L at rate λ keeps λ·L requests in flight on average; the pool is
//! that times [`HEADROOM`] for bursts, clamped to sane bounds. L is the
//! loosest latency bound of the SLO (a server that passes is within it), or
//! the probe's observed p99 when the SLO bounds no latency.

/// Multiplier over the Little's-law estimate.
pub const HEADROOM: f64 = 3.0;
/// Never fewer: a tiny pool turns one slow answer into queueing.
pub const MIN_CONNECTIONS: usize = 4;
/// Never more: about what a default hard open-file limit allows with room
/// to spare (the engine checks the real limit and says how to raise it).
pub const MAX_CONNECTIONS: usize = 4096;
/// The smallest latency used for sizing (ms).
pub const MIN_LATENCY_MS: f64 = 1.0;

/// The pool for `rate` (req/s) when answers take up to `latency_ms`.
pub fn connections(rate: f64, latency_ms: f64) -> usize {
    let in_flight = rate * latency_ms.max(MIN_LATENCY_MS) / 1000.0;
    let n = (in_flight * HEADROOM).ceil();
    if n.is_finite() {
        (n as usize).clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
    } else {
        MAX_CONNECTIONS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn littles_law_with_headroom_and_bounds() {
        assert_eq!(connections(1000.0, 10.0), 30);
        assert_eq!(connections(200.0, 50.0), 30);
        assert_eq!(connections(10.0, 10.0), MIN_CONNECTIONS);
        assert_eq!(connections(1e7, 100.0), MAX_CONNECTIONS);
        assert_eq!(connections(1000.0, 0.0), MIN_CONNECTIONS, "1 ms floor: 3");
    }
}
