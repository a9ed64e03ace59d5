//! How many connections a level opens: enough that the pool cannot be the
//! bottleneck at the rate tried. By Little's law a server answering within
//! latency L at rate λ keeps λ·L requests in flight on average; the pool is
//! that times [`HEADROOM`] for bursts, clamped to sane bounds. L is the
//! loosest latency bound of the SLO (a server that passes is within it), or
//! the probe's observed p99 when the SLO bounds no latency. The pool never
//! exceeds what the open-file limit allows (after raising it to the hard
//! limit, see `shootout_engine::connections_allowed`).

/// Multiplier over the Little's-law estimate.
pub const HEADROOM: f64 = 3.0;
/// Never fewer: a tiny pool turns one slow answer into queueing.
pub const MIN_CONNECTIONS: usize = 4;
/// Never more, even where the open-file limit would allow it: a pool this
/// large is never the bottleneck of one server on one machine.
pub const MAX_CONNECTIONS: usize = 4096;
/// The smallest latency used for sizing (ms).
pub const MIN_LATENCY_MS: f64 = 1.0;

/// The pool for `rate` (req/s) when answers take up to `latency_ms`, within
/// this process's open-file limit.
pub fn connections(rate: f64, latency_ms: f64) -> usize {
    connections_within(rate, latency_ms, shootout_engine::connections_allowed())
}

/// The pool for `rate` when each connection carries up to `per_connection`
/// requests at once (HTTP/2's streams): the same requests in flight on
/// proportionally fewer connections, never fewer than [`MIN_CONNECTIONS`].
pub fn connections_carrying(rate: f64, latency_ms: f64, per_connection: usize) -> usize {
    let n = connections(rate, latency_ms);
    n.div_ceil(per_connection.max(1))
        .max(MIN_CONNECTIONS.min(n))
}

/// The pool for `rate` when answers take up to `latency_ms`, on a machine
/// that allows at most `allowed` connections (at least one is asked for).
pub fn connections_within(rate: f64, latency_ms: f64, allowed: usize) -> usize {
    let most = MAX_CONNECTIONS.min(allowed).max(1);
    let in_flight = rate * latency_ms.max(MIN_LATENCY_MS) / 1000.0;
    let n = (in_flight * HEADROOM).ceil();
    if n.is_finite() {
        (n as usize).clamp(MIN_CONNECTIONS.min(most), most)
    } else {
        most
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn littles_law_with_headroom_and_bounds() {
        let c = |rate, ms| connections_within(rate, ms, usize::MAX);
        assert_eq!(c(1000.0, 10.0), 30);
        assert_eq!(c(200.0, 50.0), 30);
        assert_eq!(c(10.0, 10.0), MIN_CONNECTIONS);
        assert_eq!(c(1e7, 100.0), MAX_CONNECTIONS);
        assert_eq!(c(1000.0, 0.0), MIN_CONNECTIONS, "1 ms floor: 3");
    }

    #[test]
    fn streams_share_the_requests_in_flight() {
        // 30 in flight over 16-stream connections: 2, raised to the floor.
        assert_eq!(connections_carrying(1000.0, 10.0, 16), MIN_CONNECTIONS);
        assert_eq!(connections_carrying(10000.0, 10.0, 16), 19, "300 / 16");
        assert_eq!(connections_carrying(1000.0, 10.0, 1), 30);
    }

    #[test]
    fn the_open_file_limit_caps_the_pool() {
        // A soft limit of 1024 less the engine's spare descriptors.
        assert_eq!(connections_within(1e7, 100.0, 992), 992);
        assert_eq!(connections_within(f64::INFINITY, 1.0, 992), 992);
        assert_eq!(
            connections_within(1000.0, 10.0, 992),
            30,
            "below it: unchanged"
        );
        assert_eq!(connections_within(10.0, 10.0, 2), 2, "even under the floor");
        assert_eq!(connections_within(10.0, 10.0, 0), 1);
        assert!(connections(1e9, 1000.0) <= shootout_engine::connections_allowed());
    }
}
