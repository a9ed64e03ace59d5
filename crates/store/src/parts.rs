//! The typed parts a level's probes add to its measurement (the runner's
//! `probe.rs`): what a request cost the server at a fixed rate, what the
//! server cost standing idle, and how it fared past its knee. They are one
//! JSON column, `parts`, so a new figure is a new field here and a probe in
//! the runner, and no table, row or literal elsewhere changes. Each part is
//! absent where its probe did not apply (a closed loop has no cost at a
//! fixed rate) and in rows stored before it existed.

use serde::{Deserialize, Serialize};
use shootout_engine::ErrorCounts;

/// Every part a measurement may carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Parts {
    /// Open loop: the server's CPU per request at the offered rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
    /// The server with no load for a while after this level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<Standing>,
    /// An overload phase and the recovery after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overload: Option<Overload>,
    /// What the level was, when the run derived it (a cost study's rates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<Derived>,
    /// A WebSocket hold: the server's memory and CPU per connection held
    /// open and idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
}

impl Parts {
    pub fn is_empty(&self) -> bool {
        *self == Parts::default()
    }
}

/// How a run derived a level from an earlier one of the same start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// The capacity it was derived from (the saturated rate of this start).
    pub capacity_rps: f64,
    /// The fraction of that capacity offered (None: a common rate).
    pub fraction: Option<f64>,
}

/// What a request cost the server at a fixed offered rate. Valid only when
/// the rate was carried: achieved/offered at least [`Cost::MIN_CARRIED`],
/// the send lag bounded and the generator below [`Cost::MAX_GENERATOR`]
/// of its CPUs; otherwise `invalid` says why and nothing ranks by it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub offered_rps: f64,
    /// Completed requests per second (errors are not carried).
    pub achieved_rps: f64,
    /// Server CPU microseconds per completed request (its own cgroup).
    pub us_per_request: f64,
    /// Share of its CPUs the generator used.
    pub generator_share: f64,
    /// Why the point is not a cost at this rate; None: valid.
    pub invalid: Option<String>,
    /// The point was refused for the generator's reasons alone: it sent
    /// none of the requests due, or the server carried the rate but the
    /// generator used [`Cost::MAX_GENERATOR`] of its CPUs or more. The
    /// rate was not offered as intended, so the point says nothing of the
    /// server ("not offered", never "cannot sustain").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_offered: bool,
}

impl Cost {
    /// Achieved over offered below this: the rate was not sustained (the
    /// capacity search's own rule for a level that held its rate).
    pub const MIN_CARRIED: f64 = shootout_capacity::judge::MIN_ACHIEVED;
    /// The generator at or above this share of its CPUs: it may have been
    /// what limited the rate (the capacity search's generator-limited
    /// rule, and the reports' generator-bound ‡).
    pub const MAX_GENERATOR: f64 = shootout_capacity::judge::CPU_SATURATED;
    /// The 99th percentile of the send lag above this: requests left so
    /// late that the generator was falling behind (a backlog that grows
    /// over a level reaches hundreds of milliseconds; a busy machine's
    /// scheduling hiccups stay within tens), so the rate offered was not
    /// the rate intended.
    pub const MAX_LAG_P99_MS: f64 = 50.0;

    pub fn valid(&self) -> bool {
        self.invalid.is_none()
    }

    /// Server CPU microseconds per completed request: the one formula,
    /// read by the cost probe and held to the kernel's own accounting by
    /// the nginx test (`crates/runner/tests/cost_nginx.rs`). 0 without a
    /// completed request.
    pub fn us_per(cpu_s: f64, completed: u64) -> f64 {
        if completed == 0 {
            return 0.0;
        }
        cpu_s * 1e6 / completed as f64
    }
}

/// The server standing with no load: its CPU and memory over a fixed time
/// after a warm level (a runtime that burns CPU while idle shows here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    pub seconds: f64,
    pub cpu_s: f64,
    pub rss_mib: f64,
}

impl Standing {
    /// CPU milliseconds per second of standing.
    pub fn cpu_ms_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cpu_s * 1e3 / self.seconds
        } else {
            0.0
        }
    }
}

/// The server holding WebSocket connections open and idle (a hold level):
/// its RSS idle before the level and while they were held, and its CPU
/// while it held them (pings answered, timers run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    /// Connections open at the end of the hold.
    pub connections: u64,
    /// How long they were held.
    pub seconds: f64,
    /// The server's RSS, idle, before the level.
    pub rss_idle_mib: f64,
    /// Its RSS while the connections were held (the highest sampled).
    pub rss_held_mib: f64,
    /// Its CPU seconds while they were held.
    pub cpu_s: f64,
    /// (held − idle) / connections, in KiB: [`Hold::kib_per`]. None with
    /// no connection held.
    pub kib_per_connection: Option<f64>,
}

impl Hold {
    /// Memory per idle connection in KiB: (RSS held − RSS idle) /
    /// connections held, the one formula. None with none held; it may be
    /// below 0 when the server gave memory back as the connections opened.
    pub fn kib_per(rss_idle_mib: f64, rss_held_mib: f64, connections: u64) -> Option<f64> {
        (connections > 0).then(|| (rss_held_mib - rss_idle_mib) * 1024.0 / connections as f64)
    }

    /// CPU milliseconds per second of the hold.
    pub fn cpu_ms_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.cpu_s * 1e3 / self.seconds
        } else {
            0.0
        }
    }
}

/// An overload phase at `factor` × the capacity, then a recovery phase at
/// half of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Overload {
    pub factor: f64,
    pub capacity_rps: f64,
    /// A response later than this (from its intended send time) is not
    /// good, whatever its status.
    pub deadline_ms: f64,
    /// How long the overload lasted, then the recovery phase.
    pub overload_s: f64,
    pub recover_s: f64,
    /// The rate offered in the overload phase.
    pub offered_rps: f64,
    /// Responses per second in the overload phase, and those within the
    /// deadline (goodput).
    pub throughput_rps: f64,
    pub goodput_rps: f64,
    /// Failed requests over the whole level, by class (shed load: refused,
    /// reset, timed out; never counted as latency).
    pub errors: ErrorCounts,
    /// Requests the generator could not send on time (due, never sent).
    pub unsent: u64,
    /// Seconds from the end of the overload until p99 stayed within the
    /// deadline for [`Overload::RECOVERED_SECONDS`] seconds in a row; None:
    /// it did not within the recovery phase.
    pub recovery_s: Option<f64>,
    /// Each second of the level.
    pub seconds: Vec<OverloadSecond>,
}

impl Overload {
    /// Consecutive seconds within the deadline that count as recovered.
    pub const RECOVERED_SECONDS: usize = 3;
}

/// One second of an overload level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverloadSecond {
    pub t: u32,
    pub completed: u64,
    /// Completed within the deadline.
    pub good: u64,
    pub errors: u64,
    pub p99_ms: f64,
}
