//! What a capacity search produces: every level tried, in order, the curve,
//! and the verdict. This is the JSON contract of `shootout capacity -o json`
//! (`docs/capacity.schema.json`) and what the store keeps for studies.

use serde::{Deserialize, Serialize};
use shootout_engine::{ErrorCounts, LatencySummary, Protocol, Threshold};

/// Which part of the search a level belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The closed-loop run that estimates the maximum rate.
    Probe,
    /// Exponential search, then bisection.
    Search,
    /// The best passing rate, run again (and 5% lower if it fails).
    Confirm,
    /// A fraction of the capacity found, for the latency-vs-load curve.
    Curve,
}

/// How one level ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LevelVerdict {
    Pass,
    Fail,
    /// The generator could not keep the schedule (send lag or its own CPU):
    /// says nothing about the server.
    GeneratorLimited,
}

/// One level: a constant rate held for the measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelRecord {
    pub phase: Phase,
    /// The offered rate (requests/s); the probe's is its achieved rate.
    pub target_rps: f64,
    /// Completed requests per second of the measured step.
    pub achieved_rps: f64,
    pub connections: usize,
    /// Corrected (intended-start) latency in open loop.
    pub latency_ms: LatencySummary,
    pub sent: u64,
    pub completed: u64,
    pub errors: ErrorCounts,
    /// `errors.total() / sent`.
    pub error_rate: f64,
    /// Requests whose send time found every connection busy.
    pub all_busy: u64,
    /// The p99 of how late requests were sent (ms).
    pub send_lag_p99_ms: f64,
    /// Generator CPU utilisation (1.0: every generator thread busy).
    pub generator_cpu: f64,
    /// `verdict == pass`.
    pub pass: bool,
    pub verdict: LevelVerdict,
    /// Why it passed or failed, e.g. `p99 was 14.2 ms (p99<=10ms)`.
    pub reason: String,
    /// Curve levels only: the fraction of the capacity offered.
    pub fraction: Option<f64>,
    /// A mix's request kinds at this level, in the mix's order (empty
    /// without a mix).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<KindRecord>,
}

/// One request kind of a mix at one level: its counts, its latency and how
/// far past its bound its worst failed rule was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindRecord {
    pub name: String,
    pub sent: u64,
    pub completed: u64,
    /// Errors of every class.
    pub errors: u64,
    /// Corrected (intended-start) latency of this kind's answers.
    pub latency_ms: LatencySummary,
    /// The largest actual/bound ratio of the rules naming this kind that
    /// failed at this level (1.6: 60% over); None when none failed.
    pub over: Option<f64>,
}

/// The request kind that broke the SLO first: the kind whose rule was
/// furthest past its bound at the lowest failed rate above the capacity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BrokeFirst {
    pub kind: String,
    /// The offered rate at which it broke.
    pub rate_rps: f64,
    /// Its p99 there (ms).
    pub p99_ms: f64,
}

/// Which kind broke the SLO first, from a search's levels (the curve
/// aside): the failed search or confirm level with the lowest offered rate
/// above `capacity` (any, when none was found), and its kind furthest past
/// a bound. None without a mix or when only whole-load rules failed.
pub fn broke_first(levels: &[LevelRecord], capacity: Option<f64>) -> Option<BrokeFirst> {
    let above = |l: &&LevelRecord| capacity.is_none_or(|c| l.target_rps > c);
    let level = levels
        .iter()
        .filter(|l| l.phase != Phase::Probe && l.verdict == LevelVerdict::Fail)
        .filter(above)
        .filter(|l| l.routes.iter().any(|k| k.over.is_some()))
        .min_by(|a, b| a.target_rps.total_cmp(&b.target_rps))?;
    let kind = level
        .routes
        .iter()
        .filter(|k| k.over.is_some())
        .max_by(|a, b| a.over.unwrap_or(0.0).total_cmp(&b.over.unwrap_or(0.0)))?;
    Some(BrokeFirst {
        kind: kind.name.clone(),
        rate_rps: level.target_rps,
        p99_ms: kind.latency_ms.p99,
    })
}

/// The outcome of a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A rate met every SLO and was confirmed.
    Found,
    /// No rate met the SLO (the lowest tried failed).
    None,
    /// The generator, not the server, limited every level that would decide.
    GeneratorLimited,
}

impl Verdict {
    /// The name used in every output: `found`, `none`, `generator-limited`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Found => "found",
            Verdict::None => "none",
            Verdict::GeneratorLimited => "generator-limited",
        }
    }
}

/// The settings a search ran with, recorded beside its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    pub warmup_s: f64,
    pub step_s: f64,
    /// The bracket width at which bisection stops, as a fraction (0.02).
    pub precision: f64,
    pub threads: usize,
    /// What the probe spoke (HTTP version, TLS version as negotiated, a
    /// client certificate or not); searches recorded before it spoke
    /// cleartext HTTP/1.1.
    #[serde(default)]
    pub protocol: Protocol,
    /// HTTP/2's concurrent streams per connection; absent over HTTP/1.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<usize>,
}

/// Everything `shootout capacity` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    pub url: String,
    pub method: String,
    /// The parsed rules; a level passes when every one holds.
    pub slo: Vec<Threshold>,
    /// The highest confirmed rate meeting every SLO; null when none did.
    pub capacity_rps: Option<f64>,
    /// Generator-limited only: the highest rate that passed, a lower bound
    /// of the capacity (null otherwise).
    #[serde(default)]
    pub lower_bound_rps: Option<f64>,
    pub verdict: Verdict,
    /// A higher level passed after a lower one failed; the lower is reported.
    pub unstable: bool,
    /// The closed-loop probe's rate, the search's starting estimate.
    pub probe_rps: f64,
    pub search: SearchRecord,
    /// Every level tried before the curve, in order: the probe, the search
    /// and the confirm runs.
    pub levels: Vec<LevelRecord>,
    /// 25, 50, 75, 90 and 100% of the capacity; empty when none was found.
    pub curve: Vec<LevelRecord>,
    /// A mix's kind that broke the SLO first ([`broke_first`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_first: Option<BrokeFirst>,
}

impl CapacityResult {
    /// The level that stands for the capacity: the curve's level at the
    /// reported rate, or the passing confirm run when there is no curve.
    /// That is the 100% level when the search was stable; when it was not,
    /// the capacity is the highest curve level that passed below one that
    /// failed, and the 100% level (which may have failed) is not it.
    pub fn at_capacity(&self) -> Option<&LevelRecord> {
        let c = self.capacity_rps?;
        let at = |l: &&LevelRecord| (l.target_rps - c).abs() <= 1e-6 * c.max(1.0);
        self.curve.iter().find(at).or_else(|| {
            self.levels
                .iter()
                .filter(|l| l.phase == Phase::Confirm && l.pass)
                .find(at)
        })
    }
}
