//! Resource budgets in a session: the limits a server starts under (the
//! first level's budget, with the `cpu` controller joined from the start
//! when any later level sets a quota), the budget applied to its cgroup
//! before each level (levels of one server may differ), and the OOM kills
//! counted over a whole level (warm-up and settle included), which fail
//! the target with "killed: out of memory (limit N MiB)".

use crate::error::SessionError;
use crate::interrupt::Interrupt;
use crate::place::Contestant;
use shootout_cgroup::Budget;
use shootout_servers::{Limits, StartError};
use shootout_study::Resources;
use std::time::{Duration, Instant};

/// The cgroup budget of a study's `resources` (no CPU list: pinning is
/// separate).
pub fn budget_of(r: &Resources) -> Budget {
    Budget {
        cpus: r.cpus,
        memory: r.memory,
        cpuset: None,
    }
}

/// What a server runs under from its start, given the budgets of the
/// levels it will serve in order: the first one's, and room for a quota
/// when any sets one. `SERVER_CPUS` follows the first level's quota.
pub fn limits(budgets: &[Resources]) -> Limits {
    Limits {
        budget: budgets.first().map(budget_of).unwrap_or_default(),
        quota_ready: budgets.iter().any(|r| r.cpus.is_some()),
    }
}

/// Applies a level's budget to the running server's cgroup. A server
/// without one started without limits, so only an unset budget fits it.
pub(crate) fn apply(server: &dyn Contestant, r: &Resources) -> Result<(), SessionError> {
    let want = budget_of(r);
    match server.budget() {
        Some(now) if now == want => Ok(()),
        Some(_) => match server.set_budget(&want) {
            Ok(()) => Ok(()),
            Err(e @ crate::place::BudgetError::Gone) => Err(failed(e.to_string())),
            Err(e) => Err(failed(format!("cannot apply resources {}: {e}", r.label()))),
        },
        None if r.is_set() => Err(failed(format!(
            "resources {} need a cgroup, and this server has none",
            r.label()
        ))),
        None => Ok(()),
    }
}

fn failed(reason: String) -> SessionError {
    SessionError::Failed {
        reason,
        log_tail: String::new(),
    }
}

/// The failure reason of a server killed for memory.
pub fn oom_reason(memory: Option<u64>) -> String {
    match memory {
        Some(b) => format!(
            "killed: out of memory (limit {} MiB)",
            (b as f64 / (1024.0 * 1024.0)).round() as u64
        ),
        None => "killed: out of memory".to_string(),
    }
}

/// [`Contestant::wait_ready`], which under a memory limit gives up as soon as
/// the OOM killer struck: a supervisor (gunicorn, a cluster master) that
/// respawns killed workers would otherwise keep it waiting the whole
/// `timeout`. The startup time is from this call, as without a limit.
pub(crate) fn wait_ready(
    server: &mut dyn Contestant,
    limits: &Limits,
    timeout: Duration,
    interrupt: &Interrupt,
) -> Result<Duration, StartError> {
    if limits.budget.memory.is_none() {
        return server.wait_ready(timeout);
    }
    let t0 = Instant::now();
    loop {
        let slice = timeout
            .saturating_sub(t0.elapsed())
            .min(Duration::from_secs(1));
        match server.wait_ready(slice) {
            Ok(_) => return Ok(t0.elapsed()),
            Err(StartError::NotReady { .. })
                if t0.elapsed() < timeout
                    && oom_kills(server).unwrap_or(0) == 0
                    && !interrupt.is_stopped() => {}
            // Say the whole wait, not the last slice.
            Err(StartError::NotReady {
                target,
                last,
                log,
                tail,
                ..
            }) => {
                return Err(StartError::NotReady {
                    target,
                    timeout,
                    last,
                    log,
                    tail,
                })
            }
            Err(e) => return Err(e),
        }
    }
}

/// The server's OOM-kill counter now (None: no cgroup or unreadable).
pub(crate) fn oom_kills(server: &dyn Contestant) -> Option<u64> {
    server.meter().counters().map(|c| c.oom_kills)
}

/// OOM kills since `before` (0 when either read is missing).
pub(crate) fn oom_since(server: &dyn Contestant, before: Option<u64>) -> u64 {
    match (before, oom_kills(server)) {
        (Some(b), Some(a)) => a.saturating_sub(b),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_budget_starts_and_any_quota_joins_the_cpu_controller() {
        let mem = Resources {
            cpus: None,
            memory: Some(512 << 20),
        };
        let half = Resources {
            cpus: Some(0.5),
            memory: Some(512 << 20),
        };
        let l = limits(&[mem, half]);
        assert_eq!(l.budget.cpus, None);
        assert_eq!(l.budget.memory, Some(512 << 20));
        assert!(l.quota_ready);
        assert!(!limits(&[mem]).quota_ready);
        assert!(!limits(&[]).any());
    }

    #[test]
    fn oom_reason_names_the_limit() {
        assert_eq!(
            oom_reason(Some(256 << 20)),
            "killed: out of memory (limit 256 MiB)"
        );
        assert_eq!(oom_reason(None), "killed: out of memory");
    }
}
