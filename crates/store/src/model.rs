//! The public, serde-serialisable model of the history: a run (one study on
//! one host), one record per target of the run, and one measurement per
//! target × scenario × level × repetition. Histograms travel as HdrHistogram
//! V2 blobs in the database and as hex strings of the same blob in JSON.

use crate::capacity::CapacitySearch;
use crate::cluster::{ClusterRecord, Placement};
use crate::error::HistogramError;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use shootout_engine::{Second, Summary};

/// The machine a run was measured on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub cpu_model: String,
    pub cores: usize,
    pub mem_total_mib: u64,
    pub kernel: String,
    pub hostname: String,
}

/// How the cores were split between the servers and the load generator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    pub server_cpus: Vec<usize>,
    pub generator_cpus: Vec<usize>,
}

/// The life cycle of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            _ => return None,
        })
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the runner knows when a run begins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    pub study: String,
    /// RFC3339 UTC, e.g. `2026-01-02T03:04:05Z`.
    pub started_at: String,
    pub tool_version: String,
    pub git_commit: Option<String>,
    pub host: Host,
    pub pinning: Pinning,
    /// 1.0 for a full run; `--quick` and `--scale F` shrink it.
    pub scale: f64,
    /// The study file exactly as it was read.
    pub study_text: String,
    /// The PostgreSQL the database scenarios ran against, if any.
    pub database: Option<DatabaseRecord>,
    /// The seed of the random target order (`order = "random"`), if any.
    #[serde(default)]
    pub order_seed: Option<u64>,
}

/// The PostgreSQL cluster a run started for its database scenarios.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatabaseRecord {
    /// `SHOW server_version`.
    pub version: String,
    /// The settings shootout chose, as the server reported them.
    pub settings: std::collections::BTreeMap<String, String>,
    /// CPUs the cluster was pinned to (empty: not pinned).
    pub cpus: Vec<usize>,
    /// `DB_POOL_SIZE` given to every server.
    pub pool_size: u32,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: i64,
    pub study: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub tool_version: String,
    pub git_commit: Option<String>,
    pub host: Host,
    pub pinning: Pinning,
    pub scale: f64,
    pub study_text: String,
    #[serde(default)]
    pub database: Option<DatabaseRecord>,
    /// The seed of the random target order (`order = "random"`), if any.
    #[serde(default)]
    pub order_seed: Option<u64>,
    /// The Kubernetes cluster the run used ([`crate::Store::record_cluster`]);
    /// None for a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRecord>,
}

/// How a target fared in a run before any measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetStatus {
    Ok,
    BuildFailed,
    StartFailed,
    VerifyFailed,
    Skipped,
    /// Failed during a measurement (killed for memory).
    Failed,
}

impl TargetStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetStatus::Ok => "ok",
            TargetStatus::BuildFailed => "build_failed",
            TargetStatus::StartFailed => "start_failed",
            TargetStatus::VerifyFailed => "verify_failed",
            TargetStatus::Skipped => "skipped",
            TargetStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<TargetStatus> {
        Some(match s {
            "ok" => TargetStatus::Ok,
            "build_failed" => TargetStatus::BuildFailed,
            "start_failed" => TargetStatus::StartFailed,
            "verify_failed" => TargetStatus::VerifyFailed,
            "skipped" => TargetStatus::Skipped,
            "failed" => TargetStatus::Failed,
            _ => return None,
        })
    }
}

impl std::fmt::Display for TargetStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One target of a run: its identity, whether it could be measured, and its
/// build cost. Recording the same target twice in a run replaces the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRecord {
    pub target: String,
    pub language: String,
    pub framework: String,
    pub status: TargetStatus,
    /// One line on why it failed or was skipped.
    pub reason: Option<String>,
    /// The last lines of the build, server or verifier output on failure.
    pub log_tail: Option<String>,
    /// Per-check verifier results as JSON.
    pub verify: Option<serde_json::Value>,
    pub footprint_bytes: Option<u64>,
    pub build_s: Option<f64>,
    /// The manifest's description (workers, pools, runtime flags).
    #[serde(default)]
    pub description: Option<String>,
    /// The manifest's `run` line: the exact command the server ran as.
    #[serde(default)]
    pub run_command: Option<String>,
    /// What its build resolved: the framework's and main libraries'
    /// versions and the runtime's. None for targets never built and for
    /// runs recorded before provenance was.
    #[serde(default)]
    pub provenance: Option<Provenance>,
}

/// The versions a target's build resolved, recorded at the run
/// (`shootout_servers::provenance` reads them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The framework's and main libraries' versions, from the lockfile.
    pub packages: Vec<PackageVersion>,
    /// The runtime's short version (`rustc 1.91.0`, `go1.26.8`).
    pub runtime: Recorded,
    /// The build's key (its inputs' content, toolchain and commands:
    /// `shootout_servers::build_cache::key`), first 12 hex digits: a
    /// change of the target's own source shows here. None when it could
    /// not be read, and for runs recorded before it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

/// One package's recorded version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageVersion {
    pub name: String,
    #[serde(flatten)]
    pub recorded: Recorded,
}

/// A version and the file or command it was read from, or why there is
/// none (`not recorded: targets/x/package-lock.json has no ...`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Recorded {
    Found { version: String, source: String },
    Missing { not_recorded: String },
}

impl Recorded {
    /// The version, or None when not recorded.
    pub fn version(&self) -> Option<&str> {
        match self {
            Recorded::Found { version, .. } => Some(version),
            Recorded::Missing { .. } => None,
        }
    }

    /// The version, or the sentence saying why it is not recorded.
    pub fn text(&self) -> &str {
        match self {
            Recorded::Found { version, .. } => version,
            Recorded::Missing { not_recorded } => not_recorded,
        }
    }
}

/// Above this share of the measured CPUs' time used by other processes a
/// measurement is `disturbed` (docs/columns.md, "disturbed", says why).
pub const OTHERS_CPU_LIMIT: f64 = 0.10;

/// Above this share of the measured CPUs' time stolen by the hypervisor a
/// measurement is `disturbed`.
pub const STEAL_LIMIT: f64 = 0.05;

/// One measurement: a target under one load level, one repetition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub target: String,
    pub scenario: String,
    /// Index of the level in the scenario (0 when it has one load).
    pub level: u32,
    /// e.g. `n=1000 c=10`.
    pub level_label: String,
    /// 0-based repetition.
    pub repetition: u32,
    pub started_at: String,
    pub summary: Summary,
    /// Latency in microseconds (corrected in open loop).
    #[serde(with = "hist_hex")]
    pub histogram: Histogram<u64>,
    /// Open loop only: latency from the actual send, in microseconds.
    #[serde(with = "opt_hist_hex", default)]
    pub histogram_uncorrected: Option<Histogram<u64>>,
    pub timeline: Vec<Second>,
    pub rss_idle_mib: f64,
    pub rss_peak_mib: f64,
    pub rss_after_mib: f64,
    /// None where smaps_rollup was not readable.
    pub pss_peak_mib: Option<f64>,
    /// User + system CPU seconds of the server's process tree during the load.
    pub server_cpu_s: f64,
    /// Completed requests per server CPU second.
    pub req_per_cpu_s: f64,
    /// The generator used 90% or more of its cores: the numbers are a floor.
    pub generator_bound: bool,
    /// Seconds from spawn to the first 200 from the ready route.
    pub startup_s: f64,
    /// Database scenarios only: CPU seconds of the PostgreSQL process tree
    /// during the measured phase, counted apart from the server's.
    #[serde(default)]
    pub db_cpu_s: Option<f64>,
    /// Database scenarios only: the PostgreSQL tree's peak RSS.
    #[serde(default)]
    pub db_rss_peak_mib: Option<f64>,
    /// The level's CPU quota in CPUs (`resources.cpus`); None: unlimited.
    #[serde(default)]
    pub resources_cpus: Option<f64>,
    /// The level's memory limit in MiB (`resources.memory`); None: unlimited.
    #[serde(default)]
    pub resources_memory_mib: Option<f64>,
    /// Seconds the server's threads spent throttled by its CPU quota during
    /// the load (the cgroup's counter); None without a cgroup.
    #[serde(default)]
    pub throttled_s: Option<f64>,
    /// CFS periods (100 ms) in which the quota ran out during the load.
    #[serde(default)]
    pub throttled_periods: Option<u64>,
    /// Processes of the server the kernel's OOM killer killed during the
    /// level; more than 0 fails the target.
    #[serde(default)]
    pub oom_killed: Option<u64>,
    /// The server's cgroup memory high-water mark over the level (every
    /// process, page cache included), in MiB.
    #[serde(default)]
    pub memory_peak_mib: Option<f64>,
    /// Database scenarios only: the PostgreSQL cgroup's memory high-water
    /// mark over the load (postmaster and every backend), in MiB.
    #[serde(default)]
    pub db_memory_peak_mib: Option<f64>,
    /// Wall seconds of warm-up before the measured phase (fixed or until
    /// steady); None in runs recorded before it was kept.
    #[serde(default)]
    pub warmup_s: Option<f64>,
    /// Auto warm-up only: whether the server reached steady state (false:
    /// the cap ended warm-up, flagged "not steady"); None for a fixed one.
    #[serde(default)]
    pub steady: Option<bool>,
    /// Auto warm-up only: the coefficient of variation of its last windows
    /// (`shootout_steady::Stats::cv`); over the rule's `max_cv` the warm-up
    /// was noisy. None for a fixed one.
    #[serde(default)]
    pub warmup_cv: Option<f64>,
    /// Share of the server's and generator's CPUs' time that other
    /// processes used during the measured phase; None when not read.
    #[serde(default)]
    pub others_cpu_share: Option<f64>,
    /// Share of those CPUs' time stolen by the hypervisor.
    #[serde(default)]
    pub steal_share: Option<f64>,
    /// Either share was over its limit: the figures are not the
    /// contestant's alone (flagged "disturbed").
    #[serde(default)]
    pub disturbed: bool,
    /// What the level's probes added (cost at a fixed rate, standing cost,
    /// overload and recovery: `parts.rs`).
    #[serde(default, skip_serializing_if = "crate::parts::Parts::is_empty")]
    pub parts: crate::parts::Parts,
}

/// A run in the history list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunListing {
    pub id: i64,
    pub study: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub tool_version: String,
    pub git_commit: Option<String>,
    pub host: Host,
    pub scale: f64,
    /// Targets recorded for the run, and how many of them were `ok`.
    pub targets: u64,
    pub targets_ok: u64,
    pub measurements: u64,
}

/// Everything stored about one run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunData {
    pub run: Run,
    pub targets: Vec<TargetRecord>,
    /// Ordered by target, scenario, level, repetition.
    pub measurements: Vec<Measurement>,
    /// Capacity searches, ordered by target, scenario, repetition.
    #[serde(default)]
    pub capacity: Vec<CapacitySearch>,
    /// The host's latest calibration (`shootout calibrate`), when it has
    /// one: the report reads it for runs with one start per cell.
    #[serde(default)]
    pub calibration: Option<Calibration>,
    /// Which node ran each start's server, on a cluster
    /// ([`crate::Store::record_placement`]); empty for a local run.
    /// Ordered by target, scenario, repetition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placements: Vec<Placement>,
}

impl RunData {
    /// The node that ran the server of measurement `m`'s start, when
    /// the run recorded one.
    pub fn placement(&self, m: &Measurement) -> Option<&str> {
        self.placements
            .iter()
            .find(|p| {
                p.target == m.target && p.scenario == m.scenario && p.repetition == m.repetition
            })
            .map(|p| p.node.as_str())
    }
}

/// A host's calibrated between-start variation of throughput
/// (`shootout calibrate`; computed in `calibration.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The calibration run.
    pub run_id: i64,
    pub started_at: String,
    /// The reference server(s) it started.
    pub targets: Vec<String>,
    /// How many starts it rests on.
    pub starts: usize,
    /// The pooled variance of ln(req/s) between starts, and its degrees of
    /// freedom.
    pub var_log: f64,
    pub df: f64,
}

/// Encodes a histogram as an HdrHistogram V2 blob.
pub fn encode_histogram(h: &Histogram<u64>) -> Result<Vec<u8>, HistogramError> {
    use hdrhistogram::serialization::{Serializer, V2Serializer};
    let mut out = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut out)
        .map_err(HistogramError::Encode)?;
    Ok(out)
}

/// Decodes a V2 (or V2 deflate) HdrHistogram blob.
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, HistogramError> {
    let mut cursor = std::io::Cursor::new(bytes);
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut cursor)
        .map_err(HistogramError::Decode)
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> Result<Vec<u8>, HistogramError> {
    if s.len() & 1 == 1 {
        return Err(HistogramError::OddHex);
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(HistogramError::Hex))
        .collect()
}

mod hist_hex {
    use hdrhistogram::Histogram;
    use serde::{de::Error as _, ser::Error as _, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(h: &Histogram<u64>, s: S) -> Result<S::Ok, S::Error> {
        let blob = super::encode_histogram(h).map_err(S::Error::custom)?;
        s.serialize_str(&super::to_hex(&blob))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Histogram<u64>, D::Error> {
        let s = String::deserialize(d)?;
        let blob = super::from_hex(&s).map_err(D::Error::custom)?;
        super::decode_histogram(&blob).map_err(D::Error::custom)
    }
}

mod opt_hist_hex {
    use hdrhistogram::Histogram;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(h: &Option<Histogram<u64>>, s: S) -> Result<S::Ok, S::Error> {
        match h {
            Some(h) => super::hist_hex::serialize(h, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Histogram<u64>>, D::Error> {
        use serde::de::Error as _;
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) => {
                let blob = super::from_hex(&s).map_err(D::Error::custom)?;
                super::decode_histogram(&blob)
                    .map(Some)
                    .map_err(D::Error::custom)
            }
        }
    }
}
