//! Whether one level met the SLO: every rule holds on the level's
//! [`Summary`] (corrected, intended-start latency in open loop), the server
//! answered at least 99% of the offered rate, and the generator kept its
//! schedule. The reason is written in words, e.g. `p99 was 14.2 ms
//! (p99<=10ms)`. A Poisson step's arrivals are a random count, so it may
//! fall short of the schedule by chance (three standard deviations).
//!
//! Generator-limited rule, for a level that failed: the generator's CPU was
//! at least 90% busy, or the server's own answers (latency from the actual
//! send) met every latency rule while the send-lag p99 exceeded a quarter of the tightest latency bound (1 ms
//! at least) while the connection pool was not exhausted. Lag with the pool
//! exhausted is the server's doing (connections are sized so a server within
//! the SLO cannot exhaust them) and is judged as latency; lag without it is
//! the generator's, and says nothing about the server. The pool counts as
//! exhausted when at least 1% of sends found every connection busy, or when
//! Little's law says it was mostly busy (rate × uncorrected mean latency at
//! least half the connections), which also covers an engine that does not
//! count `all_busy`.

use crate::record::LevelVerdict;
use shootout_engine::{Arrival, Summary, Threshold};

/// The fraction of the target rate a level must achieve.
pub const MIN_ACHIEVED: f64 = 0.99;
/// Generator CPU utilisation at which a level is generator-limited.
pub const CPU_SATURATED: f64 = 0.9;
/// The send-lag p99 allowed, as a fraction of the tightest latency bound.
pub const LAG_FRACTION: f64 = 0.25;
/// The send-lag p99 always allowed (ms): timer and scheduling noise.
pub const LAG_FLOOR_MS: f64 = 1.0;
/// The error rule applied when no SLO mentions errors.
pub const DEFAULT_ERROR_RULE: &str = "error_rate<=0.1%";

/// The rules a level is judged by: the given SLOs, plus
/// [`DEFAULT_ERROR_RULE`] unless one of them already bounds errors.
pub fn effective_slo(slo: &[Threshold]) -> Vec<Threshold> {
    let mut rules = slo.to_vec();
    let bounds_errors = slo
        .iter()
        .any(|t| matches!(t.metric(), "errors" | "error_rate"));
    if !bounds_errors {
        rules.extend(Threshold::parse(DEFAULT_ERROR_RULE).ok());
    }
    rules
}

/// The tightest latency bound of the rules (ms), if any.
pub fn tightest_latency_ms(slo: &[Threshold]) -> Option<f64> {
    latency_bounds(slo).reduce(f64::min)
}

/// The loosest latency bound of the rules (ms), if any.
pub fn loosest_latency_ms(slo: &[Threshold]) -> Option<f64> {
    latency_bounds(slo).reduce(f64::max)
}

fn latency_bounds(slo: &[Threshold]) -> impl Iterator<Item = f64> + '_ {
    slo.iter().filter(|t| t.is_latency()).map(|t| t.value())
}

/// A level's verdict and why. `target` is None for the closed-loop probe,
/// which has no schedule to keep.
pub fn judge(s: &Summary, target: Option<f64>, slo: &[Threshold]) -> (LevelVerdict, String) {
    let mut failed: Vec<String> = slo
        .iter()
        .filter(|t| !not_judged(t, s) && !t.holds(s))
        .map(|t| describe(t, s))
        .collect();
    if let Some(t) = target {
        let rate = kept_up_rate(s);
        // A step holds a whole number of requests: at 45.7 req/s for 1 s,
        // 45 answered is on schedule, so one request short always passes.
        let short = (t - rate) * s.duration_s;
        if rate < MIN_ACHIEVED * t && short > allowed_short(s, t) {
            failed.push(format!(
                "kept up with {rate:.1} req/s, below 99% of {t:.1} req/s"
            ));
        }
    }
    if failed.is_empty() {
        let held: Vec<String> = slo.iter().map(|t| describe(t, s)).collect();
        return (LevelVerdict::Pass, held.join(", "));
    }
    // A failure the generator may have caused says nothing about the server.
    match target.and_then(|_| generator_limited(s, slo)) {
        Some(why) => (LevelVerdict::GeneratorLimited, why),
        None => (LevelVerdict::Fail, failed.join(", ")),
    }
}

/// Whether `t` is a rule on a kind of a mix that got no response in this
/// level: a short step at a low rate may hold none of a rare kind, which
/// says nothing about its latency either way, so the rule is left out of
/// the verdict (and said so) rather than passed as 0 ms or failed. A rule
/// on the whole load with no response at all fails.
pub fn not_judged(t: &Threshold, s: &Summary) -> bool {
    t.route().is_some() && t.actual(s).is_nan()
}

/// How many requests short of the schedule a step may end without
/// failing to keep up: one (rounding) for evenly spaced arrivals. A Poisson
/// step's count of arrivals is itself random (standard deviation the square
/// root of its mean: 17 of 300 at 1,000 req/s for 0.3 s), so it may also
/// fall three standard deviations short, which a server keeping up does by
/// chance once in 740 steps.
fn allowed_short(s: &Summary, target: f64) -> f64 {
    match s.arrival {
        Some(Arrival::Poisson) => 1.0_f64.max(3.0 * (target * s.duration_s).sqrt()),
        _ => 1.0,
    }
}

/// Requests answered, or still in flight at the step's deadline, per second.
/// A request sent on schedule but cut by the deadline is not held against
/// the rate: at latency L a step of length d cuts about L/d of its requests
/// (5% at 50 ms and a 1 s step), which says nothing about keeping up.
/// Errors are left to the error rule.
pub fn kept_up_rate(s: &Summary) -> f64 {
    let r = &s.requests;
    (r.completed + r.cut) as f64 / s.duration_s.max(1e-9)
}

/// `p99 was 14.2 ms (p99<=10ms)`; a rule on one kind of a mix names it
/// (`db.p99 was 20.5 ms (db.p99<=20ms)`).
fn describe(t: &Threshold, s: &Summary) -> String {
    let v = t.actual(s);
    let m = match t.route() {
        Some(kind) => format!("{kind}.{}", t.metric()),
        None => t.metric().to_string(),
    };
    let value = match t.metric() {
        _ if not_judged(t, s) => format!("{m}: no responses, not judged"),
        _ if v.is_nan() => format!("{m} had no responses"),
        _ if t.is_latency() => format!("{m} was {v:.1} ms"),
        "error_rate" => format!("{m} was {}%", round(v * 100.0)),
        _ => format!("{m} was {}", round(v)),
    };
    format!("{value} ({})", t.text())
}

fn round(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Why a failed level is the generator's doing, if it is: its CPU was
/// saturated, or it sent late with connections free while the server's own
/// answers (latency from the actual send) met every latency rule.
fn generator_limited(s: &Summary, slo: &[Threshold]) -> Option<String> {
    let cpu = s.generator.cpu_utilization;
    if cpu >= CPU_SATURATED {
        return Some(format!("its CPU was {:.0}% busy", cpu * 100.0));
    }
    let lag = s.lag.as_ref()?;
    let allowed =
        tightest_latency_ms(slo).map_or(LAG_FLOOR_MS, |b| (b * LAG_FRACTION).max(LAG_FLOOR_MS));
    let pool_exhausted = lag.all_busy as f64 > 0.01 * s.requests.sent as f64 || mostly_busy(s);
    (lag.p99_ms > allowed && !pool_exhausted && server_met_latency(s, slo)).then(|| {
        format!(
            "send lag p99 was {:.1} ms (allowed {allowed:.1} ms) with connections free",
            lag.p99_ms
        )
    })
}

/// Whether every latency rule holds on the latency from the actual send
/// (true when it was not measured: nothing shows the server was slow).
fn server_met_latency(s: &Summary, slo: &[Threshold]) -> bool {
    let Some(own) = &s.latency_uncorrected_ms else {
        return true;
    };
    let mut server = s.clone();
    server.latency_ms = own.clone();
    slo.iter()
        .filter(|t| t.is_latency())
        .all(|t| t.holds(&server))
}

/// Little's law on the sends: mean connections in use, from the rate and the
/// uncorrected (actual-send) latency, is at least half the pool.
fn mostly_busy(s: &Summary) -> bool {
    let Some(l) = &s.latency_uncorrected_ms else {
        return false;
    };
    kept_up_rate(s) * l.mean / 1000.0 >= 0.5 * s.connections as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_engine::{LagSummary, LatencySummary, RequestCounts};

    fn summary(p99: f64, completed: u64, errors: u64, lag_p99: f64, all_busy: u64) -> Summary {
        summary_sent_at(p99, p99 - lag_p99, completed, errors, lag_p99, all_busy)
    }

    fn summary_sent_at(
        p99: f64,
        own_p99: f64,
        completed: u64,
        errors: u64,
        lag_p99: f64,
        all_busy: u64,
    ) -> Summary {
        let json = serde_json::json!({
            "mode": "open", "url": "http://127.0.0.1:1/", "method": "GET",
            "connections": 4, "threads": 1, "keepalive": true, "rate": 100.0,
            "duration_s": 1.0, "rps": completed as f64,
            "requests": {"sent": completed + errors, "completed": completed, "ok": completed, "cut": 0},
            "errors": {"connect": 0, "write": 0, "read": errors, "timeout": 0, "parse": 0},
            "status": {}, "bytes_received": 0,
            "latency_ms": LatencySummary { p99, ..LatencySummary::default() },
            "latency_uncorrected_ms": LatencySummary { p99: own_p99, ..LatencySummary::default() },
            "lag": LagSummary { p99_ms: lag_p99, all_busy, ..LagSummary::default() },
            "generator": {"cpu_seconds": 0.1, "cpu_utilization": 0.1, "cpu_us_per_request": 1.0}
        });
        let s: Summary = serde_json::from_value(json).unwrap();
        assert_eq!(
            s.requests,
            RequestCounts {
                sent: completed + errors,
                completed,
                ok: completed,
                cut: 0
            }
        );
        s
    }

    fn slo(rules: &[&str]) -> Vec<Threshold> {
        effective_slo(
            &rules
                .iter()
                .map(|r| Threshold::parse(r).unwrap())
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn passes_and_fails_with_reasons() {
        let rules = slo(&["p99<=10ms"]);
        assert_eq!(rules.len(), 2, "the default error rule is added");
        let (v, why) = judge(&summary(4.0, 100, 0, 0.1, 0), Some(100.0), &rules);
        assert_eq!(v, LevelVerdict::Pass, "{why}");
        let (v, why) = judge(&summary(14.2, 100, 0, 0.1, 0), Some(100.0), &rules);
        assert_eq!(
            (v, why.as_str()),
            (LevelVerdict::Fail, "p99 was 14.2 ms (p99<=10ms)")
        );
        let (v, why) = judge(&summary(4.0, 90, 10, 0.1, 0), Some(100.0), &rules);
        assert_eq!(v, LevelVerdict::Fail);
        assert!(why.contains("error_rate was 10%"), "{why}");
        let (v, why) = judge(&summary(4.0, 90, 0, 0.1, 0), Some(100.0), &rules);
        assert_eq!(v, LevelVerdict::Fail);
        assert!(
            why.contains("kept up with 90.0 req/s, below 99% of 100.0 req/s"),
            "{why}"
        );
    }

    #[test]
    fn one_request_short_at_a_low_rate_keeps_up() {
        // 1 s at 45.7 req/s: 45 answered is the schedule, rounded.
        let rules = slo(&["p99<=50ms"]);
        let (v, why) = judge(&summary(6.0, 45, 0, 0.1, 0), Some(45.7), &rules);
        assert_eq!(v, LevelVerdict::Pass, "{why}");
        // Two short at that rate is not rounding.
        let (v, why) = judge(&summary(6.0, 43, 0, 0.1, 0), Some(45.7), &rules);
        assert_eq!(v, LevelVerdict::Fail, "{why}");
    }

    /// At 1,000 req/s for 0.3 s a Poisson step expects 300 arrivals with a
    /// standard deviation of 17: 40 short (2.3σ) is chance, 60 short (3.5σ)
    /// is a server not keeping up; evenly spaced arrivals allow one.
    #[test]
    fn a_poisson_step_may_fall_short_by_chance() {
        let rules = slo(&["p99<=50ms"]);
        let step = |answered: u64, arrival: Option<Arrival>| {
            let mut s = summary(6.0, answered, 0, 0.1, 0);
            s.duration_s = 0.3;
            s.arrival = arrival;
            judge(&s, Some(1000.0), &rules).0
        };
        assert_eq!(step(260, Some(Arrival::Poisson)), LevelVerdict::Pass);
        assert_eq!(step(240, Some(Arrival::Poisson)), LevelVerdict::Fail);
        assert_eq!(step(260, Some(Arrival::Uniform)), LevelVerdict::Fail);
        assert_eq!(step(260, None), LevelVerdict::Fail);
        assert_eq!(step(299, None), LevelVerdict::Pass);
    }

    #[test]
    fn lag_is_the_generators_only_with_connections_free() {
        let rules = slo(&["p99<=10ms"]);
        let (v, why) = judge(&summary(14.0, 100, 0, 8.0, 0), Some(100.0), &rules);
        assert_eq!(v, LevelVerdict::GeneratorLimited, "{why}");
        let (v, _) = judge(&summary(14.0, 100, 0, 8.0, 50), Some(100.0), &rules);
        assert_eq!(v, LevelVerdict::Fail);
        let (v, _) = judge(&summary(4.0, 100, 0, 2.0, 0), Some(100.0), &rules);
        assert_eq!(
            v,
            LevelVerdict::Pass,
            "2 ms lag is within a quarter of 10 ms"
        );
    }

    #[test]
    fn no_response_is_no_evidence_for_a_latency_rule() {
        // Under a rate of one per step, none answered is on schedule, and
        // a p99 of nothing must not pass as 0 ms.
        let rules = slo(&["p99<=50ms"]);
        let (v, why) = judge(&summary(0.0, 0, 0, 0.0, 0), Some(0.9), &rules);
        assert_eq!(v, LevelVerdict::Fail, "{why}");
        assert_eq!(why, "p99 had no responses (p99<=50ms)");
    }

    #[test]
    fn a_kind_without_responses_is_not_judged_either_way() {
        let rules = slo(&["p99<=50ms", "queries.p99<=10ms"]);
        let mut s = summary(4.0, 10, 0, 0.1, 0);
        let kind = |name: &str, completed: u64, p99: f64| {
            serde_json::from_value::<shootout_engine::RouteSummary>(serde_json::json!({
                "name": name, "weight": 1, "path": "/",
                "sent": completed, "completed": completed, "ok": completed, "cut": 0,
                "errors": {"connect": 0, "write": 0, "read": 0, "timeout": 0, "parse": 0},
                "latency_ms": LatencySummary { p99, ..LatencySummary::default() },
            }))
            .unwrap()
        };
        s.routes = vec![kind("db", 10, 4.0), kind("queries", 0, 0.0)];
        let (v, why) = judge(&s, Some(10.0), &rules);
        assert_eq!(v, LevelVerdict::Pass, "{why}");
        assert!(
            why.contains("queries.p99: no responses, not judged"),
            "{why}"
        );
        // With an answer, the same rule is judged.
        s.routes[1] = kind("queries", 1, 12.0);
        let (v, why) = judge(&s, Some(10.0), &rules);
        assert_eq!(
            (v, why.as_str()),
            (
                LevelVerdict::Fail,
                "queries.p99 was 12.0 ms (queries.p99<=10ms)"
            )
        );
    }

    #[test]
    fn an_error_rule_given_replaces_the_default() {
        assert_eq!(slo(&["p99<=10ms", "errors<=5"]).len(), 2);
        assert_eq!(
            tightest_latency_ms(&slo(&["p99<=10ms", "p999<=50ms"])),
            Some(10.0)
        );
        assert_eq!(
            loosest_latency_ms(&slo(&["p99<=10ms", "p999<=50ms"])),
            Some(50.0)
        );
    }
}
