//! The JSON file beside each interval log: everything about a shard that a
//! histogram does not hold. Its `summary` is the shard's own report (counts
//! by status and error class, bytes, generator CPU, send lag), `settings`
//! are the whole load as every shard of it was given it (what the merge
//! compares), and `measured_from` places the shard on the shared clock.
//! `interrupted` marks a shard stopped by a signal before its end: its
//! window is shorter than the load's, which the merge refuses unless asked.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use shootout_engine::{Load, LoadReport, Plan, Shard, Summary};

/// Names this file's layout; the merge refuses any other.
pub const FORMAT: &str = "shootout-shard/1";

/// The whole load's settings, identical in every shard of one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub url: String,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body_bytes: usize,
    pub mode: String,
    /// The whole open-loop rate, before the split.
    pub rate: Option<f64>,
    /// The whole load's connections.
    pub connections: usize,
    /// The whole `-n` budget.
    pub requests: Option<u64>,
    pub duration_s: Option<f64>,
    /// Ramp stages as `[seconds, level]`, levels of the whole load.
    pub stages: Option<Vec<(f64, f64)>>,
    pub warmup_s: f64,
    pub timeout_s: f64,
    pub keepalive: bool,
    /// Requests in flight per connection (`--pipeline`); 1 in logs written
    /// before pipelining.
    #[serde(default = "one")]
    pub pipeline: usize,
    /// The `--expect-*` checks.
    pub expect: serde_json::Value,
    /// The shared `--start-at`, in Unix milliseconds.
    pub start_at_unix_ms: Option<u64>,
}

impl Settings {
    pub fn of(plan: &Plan) -> Settings {
        let whole = plan.workload();
        let load = whole.load();
        let method = match plan.request().method.as_str() {
            "" => "GET".to_string(),
            m => m.to_string(),
        };
        Settings {
            url: plan.endpoint().url.clone(),
            method,
            headers: plan.request().headers.clone(),
            body_bytes: plan.request().body.len(),
            mode: load.mode_name().to_string(),
            rate: match load {
                Load::Open { rate, .. } => Some(*rate),
                _ => None,
            },
            connections: load.max_connections(),
            requests: whole.stop().requests,
            duration_s: whole.stop().duration.map(|d| d.as_secs_f64()),
            stages: match load {
                Load::Stages { stages, .. } => Some(
                    stages
                        .iter()
                        .map(|s| (s.duration.as_secs_f64(), s.to))
                        .collect(),
                ),
                _ => None,
            },
            warmup_s: plan.warmup().as_secs_f64(),
            timeout_s: plan.timeout().as_secs_f64(),
            keepalive: plan.keepalive(),
            pipeline: plan.pipeline(),
            expect: serde_json::to_value(plan.expect()).unwrap_or_default(),
            start_at_unix_ms: plan.start_at().map(|t| {
                t.duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_millis() as u64
            }),
        }
    }

    /// The settings that differ from `other`'s, by name: `rate (2000 vs 3000)`.
    pub fn differences(&self, other: &Settings) -> Vec<String> {
        let (a, b) = (
            serde_json::to_value(self).unwrap_or_default(),
            serde_json::to_value(other).unwrap_or_default(),
        );
        let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
            return vec!["settings".into()];
        };
        a.iter()
            .filter(|(k, v)| b.get(*k) != Some(*v))
            .map(|(k, v)| {
                let theirs = b.get(k).cloned().unwrap_or_default();
                format!("{k} ({v} vs {theirs})")
            })
            .collect()
    }
}

fn one() -> usize {
    1
}

/// A handshake histogram as the sidecar keeps it: every recorded value
/// (its bucket's highest equivalent value, as HdrHistogram iterates) with
/// its count.
pub fn handshake_pairs(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect()
}

/// One shard's sidecar.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    pub format: String,
    pub shard: Shard,
    pub settings: Settings,
    /// Wall-clock start of the measured phase, Unix seconds.
    pub measured_from_unix_s: f64,
    /// How late the shard started after `--start-at`, in milliseconds.
    pub late_ms: f64,
    /// The interval log this sidecar belongs to (its file name).
    pub hlog: String,
    /// Failed requests in each second of the measured phase (the log holds
    /// the completed ones).
    pub errors_per_second: Vec<u64>,
    /// The shard's own report.
    pub summary: Summary,
    /// Over TLS: its handshake latency histogram as `[µs, count]` pairs
    /// (absent over cleartext and in sidecars written before TLS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_us: Option<Vec<[u64; 2]>>,
    /// Stopped by a signal before its planned end (false in sidecars
    /// written before this field).
    #[serde(default)]
    pub interrupted: bool,
}

impl Sidecar {
    /// The sidecar of a finished shard (`interrupted`: stopped by a
    /// signal before its end).
    pub fn of(plan: &Plan, report: &LoadReport, hlog: String, interrupted: bool) -> Sidecar {
        Sidecar {
            format: FORMAT.to_string(),
            shard: plan.shard(),
            settings: Settings::of(plan),
            measured_from_unix_s: crate::clock::unix_seconds(report.clock.measured_from),
            late_ms: report.clock.late_by.as_secs_f64() * 1000.0,
            hlog,
            errors_per_second: report.intervals.errors.clone(),
            summary: report.summary.clone(),
            handshake_us: report.handshakes.as_ref().map(handshake_pairs),
            interrupted,
        }
    }

    /// When the shard's measured phase ended, Unix seconds.
    pub fn measured_until_unix_s(&self) -> f64 {
        self.measured_from_unix_s + self.summary.duration_s
    }
}
