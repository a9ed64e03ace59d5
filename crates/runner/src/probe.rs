//! Probes: each turns what a level's load saw into its typed part of the
//! measurement (`shootout_store::parts`). A new figure is one probe here
//! and one field there; the session code, the row and every literal stay
//! as they are. The cost probe gives the server's CPU per request at an
//! open loop's rate, with why the point is not a cost when the rate was
//! not carried; the overload probe gives goodput within the deadline,
//! errors by class and the recovery time of an overload level; the derived
//! probe says which capacity a cost level was derived from; the hold probe
//! gives a WebSocket hold's memory per idle connection and CPU while held.
//! (The standing cost is measured between levels, with no load:
//! `cost::standing`.)

use crate::cost::{DerivedLevel, OverloadPlan};
use shootout_engine::{LoadReport, Summary};
use shootout_store::parts::{Cost, Hold, Overload, OverloadSecond, Parts};

/// What a level's load saw, for the probes.
pub(crate) struct Seen<'a> {
    pub report: &'a LoadReport,
    /// The server's CPU seconds over the measured phase.
    pub server_cpu_s: f64,
    /// Set for a level a cost scenario derived.
    pub derived: Option<&'a DerivedLevel>,
    /// The server's RSS, idle, before the level.
    pub rss_idle_bytes: u64,
    /// The highest RSS the sampler saw over the measured phase.
    pub rss_peak_bytes: u64,
}

/// Adds one part of a measurement.
trait Probe: Sync {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts);
}

/// Every probe, in the order they run.
const PROBES: [&dyn Probe; 4] = [&DerivedProbe, &CostProbe, &OverloadProbe, &HoldProbe];

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

/// A WebSocket hold: the server's memory per connection held open and
/// idle, (RSS while held − RSS idle before) / connections still open at
/// the end, and its CPU while it held them.
struct HoldProbe;

impl Probe for HoldProbe {
    fn add(&self, seen: &Seen<'_>, parts: &mut Parts) {
        let s = &seen.report.summary;
        let Some(ws) = s.websocket.as_ref().filter(|w| w.hold) else {
            return;
        };
        let connections = ws.held_open.unwrap_or(0);
        let mib = |b: u64| b as f64 / crate::procfs::MIB;
        let (idle, held) = (
            mib(seen.rss_idle_bytes),
            mib(seen.rss_peak_bytes.max(seen.rss_idle_bytes)),
        );
        parts.hold = Some(Hold {
            connections,
            seconds: s.duration_s,
            rss_idle_mib: idle,
            rss_held_mib: held,
            cpu_s: seen.server_cpu_s,
            kib_per_connection: Hold::kib_per(idle, held, connections),
        });
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
        let refusal = why_not_carried(s, offered);
        parts.cost = Some(Cost {
            offered_rps: offered,
            achieved_rps: s.rps,
            us_per_request: Cost::us_per(seen.server_cpu_s, s.requests.completed),
            generator_share: s.generator.cpu_utilization,
            not_offered: refusal.as_ref().is_some_and(|r| r.server.is_empty()),
            invalid: refusal.map(Refusal::text),
        });
    }
}

/// Why an open loop's point is not a cost at its rate, split by side. The
/// server's: short of the rate, requests failed, and requests due but
/// never sent or sent late (the generator holds the closed level's
/// connections and no more, so when all of them wait on the server the
/// next request waits too). The generator's alone: it sent nothing at
/// all, or its CPUs were full. With no reason on the server's side the
/// point was not offered, whatever it says of the server.
struct Refusal {
    server: Vec<String>,
    generator: Vec<String>,
}

impl Refusal {
    fn text(self) -> String {
        let mut all = self.server;
        all.extend(self.generator);
        all.join("; ")
    }
}

/// Why an open loop's point is not a cost at its rate; None: it is.
fn why_not_carried(s: &Summary, offered: f64) -> Option<Refusal> {
    let mut server = Vec::new();
    let mut generator = Vec::new();
    let unsent = s.lag.as_ref().map_or(0, |l| l.unsent);
    let errors = s.errors.total();
    if let Some(why) = crate::guard::generator_silent(s) {
        generator.push(why.to_string());
        return Some(Refusal { server, generator });
    }
    if s.requests.completed == 0 {
        server.push("no request completed".into());
        return Some(Refusal { server, generator });
    }
    // Short of the rate by more than counting allows (one request).
    let due = offered * s.duration_s;
    if s.rps < Cost::MIN_CARRIED * offered && due - s.requests.completed as f64 > 1.0 {
        server.push(format!(
            "carried {} of the {} req/s offered",
            rate(s.rps),
            rate(offered)
        ));
    }
    // A few due at the very end are the phase's edge, not a lag.
    if unsent as f64 > (0.001 * due).max(10.0) {
        server.push(format!("{unsent} requests due were never sent"));
    }
    if let Some(lag) = s.lag.as_ref().filter(|l| l.p99_ms > Cost::MAX_LAG_P99_MS) {
        server.push(format!(
            "requests left up to {:.1} ms late (p99 send lag)",
            lag.p99_ms
        ));
    }
    if s.generator.cpu_utilization >= Cost::MAX_GENERATOR {
        generator.push(format!(
            "the generator used {:.0}% of its CPUs",
            s.generator.cpu_utilization * 100.0
        ));
    }
    if errors as f64 > 0.001 * s.requests.sent.max(1) as f64 {
        server.push(format!("{errors} requests failed"));
    }
    (!server.is_empty() || !generator.is_empty()).then_some(Refusal { server, generator })
}

/// A rate as a reader compares it: whole requests per second, with one
/// decimal below 100 (36.2 of 36.5 is not "36 of 36").
fn rate(r: f64) -> String {
    if r < 100.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
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

    /// An open loop at 1,000 req/s for 2 s as `edit` leaves it.
    fn open_loop(edit: impl Fn(&mut Summary)) -> Summary {
        let mut s = shootout_testkit::summary::summary(10_000.0);
        s.mode = "open".into();
        s.rate = Some(1000.0);
        s.duration_s = 2.0;
        s.rps = 1000.0;
        s.requests.sent = 2000;
        s.requests.completed = 2000;
        s.errors = Default::default();
        s.generator.cpu_utilization = 0.3;
        s.lag = Some(shootout_engine::LagSummary {
            p99_ms: 1.0,
            ..Default::default()
        });
        edit(&mut s);
        s
    }

    /// Who fell short is said: nothing sent is the generator's, a server
    /// short of what it was sent is the server's, and a rate carried by
    /// a generator at its limit is "not offered", not a cost.
    #[test]
    fn a_refused_point_names_the_side_that_fell_short() {
        assert!(why_not_carried(&open_loop(|_| {}), 1000.0).is_none());
        let none_sent = open_loop(|s| {
            s.rps = 0.0;
            s.requests.sent = 0;
            s.requests.completed = 0;
            s.lag.get_or_insert_with(Default::default).unsent = 2000;
        });
        let r = why_not_carried(&none_sent, 1000.0).expect("refused");
        assert!(r.server.is_empty(), "{:?}", r.server);
        assert!(r.text().contains("the generator sent none of the 2000"));
        let slow = open_loop(|s| {
            s.rps = 600.0;
            s.requests.completed = 1200;
        });
        let r = why_not_carried(&slow, 1000.0).expect("refused");
        assert_eq!(r.server, ["carried 600 of the 1000 req/s offered"]);
        let busy_generator = open_loop(|s| s.generator.cpu_utilization = 0.95);
        let r = why_not_carried(&busy_generator, 1000.0).expect("refused");
        assert!(r.server.is_empty());
        assert_eq!(r.generator, ["the generator used 95% of its CPUs"]);
        let small = open_loop(|s| {
            s.rate = Some(36.5);
            s.rps = 35.0;
            s.requests.sent = 70;
            s.requests.completed = 70;
        });
        let r = why_not_carried(&small, 36.5).expect("refused");
        assert_eq!(r.server, ["carried 35.0 of the 36.5 req/s offered"]);
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
