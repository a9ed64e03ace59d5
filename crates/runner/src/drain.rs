//! Waiting for a server to finish the work a load left behind. A closed
//! loop ends with a request in flight on every connection; a server that
//! queues (sync workers, a listen backlog, a database pool) goes on serving
//! them after the generator hung up. On a slow route that is seconds of
//! work, which would otherwise land in the next level's warm-up and
//! measurement (seen: Django at 0 req/s on every level after the first of
//! a quick `tfb`). So after each load the runner waits until the server and
//! its database are quiet, for at most the scenario's request timeout.

use crate::interrupt::Interrupt;
use crate::place::Meter;
use std::time::{Duration, Instant};

/// How long each look at the CPU counters lasts.
const WINDOW: Duration = Duration::from_millis(100);
/// Below this share of one core over a window, a process tree is quiet.
const QUIET_SHARE: f64 = 0.2;

/// How the wait ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drain {
    pub waited: Duration,
    /// False when `cap` ran out (or a stop was asked for) first.
    pub quiet: bool,
}

/// Waits until the servers `meters` read use, together, less than
/// [`QUIET_SHARE`] of a core over one [`WINDOW`], or `cap` passes. A
/// server whose CPU cannot be read is never known to be quiet: the wait
/// ends at once, not quiet.
pub(crate) fn wait_quiet(meters: &[&dyn Meter], cap: Duration, interrupt: &Interrupt) -> Drain {
    let t0 = Instant::now();
    let cpu = || -> Option<f64> {
        meters
            .iter()
            .map(|m| m.cpu().required("CPU time").ok())
            .sum()
    };
    let Some(mut before) = cpu() else {
        return Drain {
            waited: t0.elapsed(),
            quiet: false,
        };
    };
    loop {
        std::thread::sleep(WINDOW);
        let now = cpu().unwrap_or(f64::INFINITY);
        if now - before < QUIET_SHARE * WINDOW.as_secs_f64() {
            return Drain {
                waited: t0.elapsed(),
                quiet: true,
            };
        }
        if t0.elapsed() >= cap || interrupt.is_stopped() || now.is_infinite() {
            return Drain {
                waited: t0.elapsed(),
                quiet: false,
            };
        }
        before = now;
    }
}
