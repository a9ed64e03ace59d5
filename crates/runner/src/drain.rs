//! Waiting for a server to finish the work a load left behind. A closed
//! loop ends with a request in flight on every connection; a server that
//! queues (sync workers, a listen backlog, a database pool) goes on serving
//! them after the generator hung up. On a slow route that is seconds of
//! work, which would otherwise land in the next level's warm-up and
//! measurement (seen: Django at 0 req/s on every level after the first of
//! a quick `tfb`). So after each load the runner waits until the server and
//! its database are quiet, for at most the scenario's request timeout.

use crate::interrupt::Interrupt;
use crate::procfs;
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

/// Waits until every `(pgid, root)` tree uses less than [`QUIET_SHARE`] of
/// a core over one [`WINDOW`], or `cap` passes.
pub fn wait_quiet(trees: &[(i32, i32)], cap: Duration, interrupt: &Interrupt) -> Drain {
    let t0 = Instant::now();
    let cpu = || -> f64 {
        trees
            .iter()
            .map(|&(pgid, root)| procfs::cpu_seconds_precise(pgid, root))
            .sum()
    };
    let mut before = cpu();
    loop {
        std::thread::sleep(WINDOW);
        let now = cpu();
        if now - before < QUIET_SHARE * WINDOW.as_secs_f64() {
            return Drain {
                waited: t0.elapsed(),
                quiet: true,
            };
        }
        if t0.elapsed() >= cap || interrupt.is_stopped() {
            return Drain {
                waited: t0.elapsed(),
                quiet: false,
            };
        }
        before = now;
    }
}
