//! Probes: each turns what a level's load saw into its typed part of the
//! measurement (`shootout_store::parts`). A new figure is one probe here
//! and one field there; the session code, the row and every literal stay
//! as they are. The cost probe gives the server's CPU per request at an
//! open loop's rate, with why the point is not a cost when the rate was
//! not carried; the overload probe gives goodput within the deadline,
//! errors by class and the recovery time of an overload level; the derived
//! probe says which capacity a cost level was derived from. (The standing
//! cost is measured between levels, with no load: `cost::standing`.)

use crate::cost::{DerivedLevel, OverloadPlan};
use shootout_engine::LoadReport;
use shootout_store::parts::{Cost, Overload, OverloadSecond, Parts};

/// What a level's load saw, for the probes.
pub(crate) struct Seen<'a> {
    pub report: &'a LoadReport,
    /// The server's CPU seconds over the measured phase.
    pub server_cpu_s: f64,
    /// Set for a level a cost scenario derived.
    pub derived: Option<&'a DerivedLevel>,
}

/// Adds one part of a measurement.
trait Probe: Sync {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts);
}

/// Every probe, in the order they run.
const PROBES: [&dyn Probe; 3] = [&DerivedProbe, &CostProbe, &OverloadProbe];

/// The parts every probe adds for `seen`.
pub(crate) fn parts(seen: &Seen<'_>) -> Parts {
    let mut parts = Parts::default();
    for p in PROBES {
        p.add(seen, &mut parts);
    }
    parts
}

struct DerivedProbe;

impl Probe for DerivedProbe {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts) {
        parts.derived = seen.derived.map(|d| d.derived.clone());
    }
}

/// The server's CPU per request at a constant offered rate (open loop).
struct CostProbe;

impl Probe for CostProbe {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts) {
        let s = &seen.report.summary;
        let Some(offered) = s.rate.filter(|_| s.mode == "open") else {
            return;
        };
        parts.cost = Some(Cost {
            offered_rps: offered,
            achieved_rps: s.rps,
            us_per_request: Cost::us_per(seen.server_cpu_s, s.requests.completed),
            generator_share: s.generator.cpu_utilization,
            invalid: why_not_carried(seen.report, offered),
        });
    }
}

/// Why an open loop's point is not a cost at its rate; None: it is.
fn why_not_carried(report: &LoadReport, offered: f64) -> Option<String> {
    let s = &report.summary;
    let mut why = Vec::new();
    if s.requests.completed == 0 {
        return Some("no request completed".into());
    }
    // Short of the rate by more than counting allows (one request).
    let due = offered * s.duration_s;
    if s.rps < Cost::MIN_CARRIED * offered && due - s.requests.completed as f64 > 1.0 {
        why.push(format!(
            "carried {:.0} of the {:.0} req/s offered",
            s.rps, offered
        ));
    }
    if let Some(lag) = &s.lag {
        // A few due at the very end are the phase's edge, not a lag.
        if lag.unsent as f64 > (0.001 * offered * s.duration_s).max(10.0) {
            why.push(format!("{} requests due were never sent", lag.unsent));
        }
        if lag.p99_ms > Cost::MAX_LAG_P99_MS {
            why.push(format!(
                "requests left up to {:.1} ms late (p99 send lag)",
                lag.p99_ms
            ));
        }
    }
    if s.generator.cpu_utilization >= Cost::MAX_GENERATOR {
        why.push(format!(
            "the generator used {:.0}% of its CPUs",
            s.generator.cpu_utilization * 100.0
        ));
    }
    let errors = s.errors.total();
    if errors as f64 > 0.001 * s.requests.sent.max(1) as f64 {
        why.push(format!("{errors} requests failed"));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// Goodput, errors and recovery of an overload level.
struct OverloadProbe;

impl Probe for OverloadProbe {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts) {
        if let Some(plan) = seen.derived.and_then(|d| d.overload) {
            parts.overload = Some(overload(seen.report, &plan));
        }
    }
}

/// The overload part of `report`, an overload level run as `plan` (its
/// per-second histograms asked for).
pub(crate) fn overload(report: &LoadReport, plan: &OverloadPlan) -> Overload {
    let deadline_us = plan.deadline.as_micros() as u64;
    let deadline_ms = plan.deadline.as_secs_f64() * 1e3;
    let seconds: Vec<OverloadSecond> = report
        .timeline
        .iter()
        .map(|sec| OverloadSecond {
            t: sec.t,
            completed: sec.completed,
            good: report
                .intervals
                .latency
                .get(sec.t as usize)
                .map_or(0, |h| h.count_between(0, deadline_us)),
            errors: sec.errors,
            p99_ms: sec.p99_ms,
        })
        .collect();
    // Whole seconds inside the overload phase.
    let over = (plan.overload_for.as_secs_f64().floor() as usize).max(1);
    let in_over: Vec<&OverloadSecond> = seconds.iter().filter(|s| (s.t as usize) < over).collect();
    let per_s = |f: &dyn Fn(&OverloadSecond) -> u64| {
        in_over.iter().map(|s| f(s)).sum::<u64>() as f64 / over as f64
    };
    Overload {
        factor: plan.factor,
        capacity_rps: plan.capacity_rps,
        deadline_ms,
        overload_s: plan.overload_for.as_secs_f64(),
        recover_s: plan.recover_for.as_secs_f64(),
        offered_rps: plan.factor * plan.capacity_rps,
        throughput_rps: per_s(&|s| s.completed),
        goodput_rps: per_s(&|s| s.good),
        errors: report.summary.errors.clone(),
        unsent: report.summary.lag.as_ref().map_or(0, |l| l.unsent),
        recovery_s: recovery(&seconds, over, deadline_ms),
        seconds,
    }
}

/// Seconds from the end of the overload (second `over`) to the first of
/// [`Overload::RECOVERED_SECONDS`] seconds in a row that answered, failed
/// nothing and kept p99 within the deadline; None: no such run.
fn recovery(seconds: &[OverloadSecond], over: usize, deadline_ms: f64) -> Option<f64> {
    let ok = |s: &OverloadSecond| s.completed > 0 && s.errors == 0 && s.p99_ms <= deadline_ms;
    let after: Vec<&OverloadSecond> = seconds.iter().filter(|s| s.t as usize >= over).collect();
    after
        .windows(Overload::RECOVERED_SECONDS)
        .find(|w| w.iter().all(|s| ok(s)))
        .map(|w| (w[0].t as usize - over) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(t: u32, p99_ms: f64) -> OverloadSecond {
        OverloadSecond {
            t,
            completed: 100,
            good: 100,
            errors: 0,
            p99_ms,
        }
    }

    #[test]
    fn recovery_is_the_first_run_of_good_seconds_after_the_overload() {
        // Overload in seconds 0-2; p99 back under 10 ms from second 5 on.
        let s: Vec<_> = [900.0, 950.0, 990.0, 400.0, 30.0, 4.0, 3.0, 3.5, 3.0]
            .iter()
            .enumerate()
            .map(|(t, &p)| sec(t as u32, p))
            .collect();
        assert_eq!(recovery(&s, 3, 10.0), Some(2.0));
        // A good second alone is not a recovery.
        let s: Vec<_> = [900.0, 4.0, 400.0, 4.0, 4.0]
            .iter()
            .enumerate()
            .map(|(t, &p)| sec(t as u32, p))
            .collect();
        assert_eq!(recovery(&s, 1, 10.0), None);
        // Never overloaded past the deadline: recovered at once.
        let s: Vec<_> = (0..6).map(|t| sec(t, 2.0)).collect();
        assert_eq!(recovery(&s, 2, 10.0), Some(0.0));
        // A second with errors is not good.
        let mut s: Vec<_> = (0..8).map(|t| sec(t, 2.0)).collect();
        s[3].errors = 1;
        assert_eq!(recovery(&s, 2, 10.0), Some(2.0));
    }
}
