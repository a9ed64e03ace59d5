//! What a run tells its caller while it works: progress, measurements,
//! warnings and failures, as typed [`Event`]s handed to an [`Observer`]. The
//! runner never prints; the CLI renders events (a progress bar on a
//! terminal, log lines otherwise) and tests can simply collect them.
//! Observers are called from the run's threads (verification runs a few
//! targets at once), so they must be `Sync`. Every payload an event carries
//! is defined here or in another crate, never in the modules that emit
//! events, so this module is a leaf of the crate's import tree.

use crate::error::EngineRefusal;
use crate::quiet::Disturbance;
use shootout_capacity::{CapacityResult, Event as SearchEvent};
use shootout_cgroup::CgroupError;
use shootout_engine::Control;
use shootout_store::{Measurement, Pinning, TargetStatus};
use std::path::Path;
use std::sync::Arc;

/// Receives a run's events as they happen.
pub trait Observer: Sync {
    fn event(&self, e: &Event<'_>);
}

/// Ignores every event.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _: &Event<'_>) {}
}

/// Something that happened during a run.
#[derive(Debug)]
pub enum Event<'a> {
    /// A run left `running` by a process that died was marked interrupted;
    /// `killed_group` is the server group it left alive, now SIGKILLed.
    DeadRunMarked {
        run_id: i64,
        killed_group: Option<i32>,
    },
    /// The run is recorded; what it is about to do.
    RunStarted(&'a RunStart<'a>),
    /// Where its contestants run when that is not this machine's
    /// processes ("pods on Kubernetes node ..., figures from ...").
    Placed { description: &'a str },
    /// What happens between measurements (building, verifying).
    Phase(Phase<'a>),
    /// A target's build ended well: `build_s` when it was built now, `None`
    /// when it was already up to date. (A failed or skipped build is a
    /// [`Event::Prepared`].)
    Built {
        target: &'a str,
        build_s: Option<f64>,
    },
    /// A target's preparation ended (built and verified, or not).
    Prepared {
        target: &'a str,
        outcome: Prepared<'a>,
    },
    /// Work done outside measurements (verification, starts, stops), in
    /// estimated seconds, for the ETA.
    Credit { estimate_s: f64 },
    /// Work that will not happen (a failed target's sessions).
    Skip { measurements: u64, estimate_s: f64 },
    /// A measurement starts; `control` carries the engine's live counters.
    LoadStarted {
        load: &'a LoadLabel<'a>,
        control: &'a Arc<Control>,
        estimate_s: f64,
    },
    /// A window of an auto warm-up ended, before the measurement `load`:
    /// its throughput and, once there are enough windows, the variation of
    /// the last few (`shootout_steady::Stats::cv`).
    WarmingUp {
        load: &'a LoadLabel<'a>,
        /// 1-based.
        window: u32,
        /// The most windows it may run.
        cap: u32,
        rps: f64,
        cv: Option<f64>,
    },
    /// The measurement in flight ended: committed (`Some`) or dropped.
    LoadEnded {
        estimate_s: f64,
        measurement: Option<&'a Measurement>,
    },
    /// A capacity search starts (one per target, scenario and repetition).
    CapacityStarted {
        load: &'a LoadLabel<'a>,
        estimate_s: f64,
    },
    /// A level of the search in flight starts or ends.
    Capacity {
        load: &'a LoadLabel<'a>,
        event: &'a SearchEvent,
    },
    /// The search in flight ended: committed (`Some`) or dropped.
    CapacityEnded {
        estimate_s: f64,
        result: Option<&'a CapacityResult>,
    },
    /// A prepared target failed to start (or died) during the study; its
    /// remaining sessions are skipped.
    StartFailed { target: &'a str, reason: &'a str },
    /// A target failed during a measurement (killed for memory); its
    /// remaining sessions are skipped.
    TargetFailed { target: &'a str, reason: &'a str },
    /// The server (or its database) was still busy with the previous
    /// load's queued requests after `waited_s`: the next level may be
    /// slowed by them.
    StillBusy { target: &'a str, waited_s: f64 },
    /// A level the target cannot serve (a TLS level of a target whose
    /// manifest does not claim it): not measured, with the reason.
    LevelSkipped { load: &'a str, reason: &'a str },
    /// `--wait-quiet`: the CPUs were busy with other processes before a
    /// level; a probe of one second saw `seen`, after `waited_s` so far
    /// (`first`: the first such probe before this level).
    WaitingQuiet {
        load: &'a str,
        waited_s: f64,
        seen: &'a Disturbance,
        first: bool,
    },
    /// `--wait-quiet`: the CPUs did not quiet down within the cap; the
    /// level is measured anyway (and flagged if it comes out disturbed).
    NotQuiet { load: &'a str, waited_s: f64 },
    /// `--wait-quiet`: the measurement came out disturbed; it is dropped
    /// and the level measured once more (one more measurement to do).
    Remeasure {
        load: &'a str,
        seen: &'a Disturbance,
    },
    /// `precision`: after the planned starts, these targets' intervals are
    /// still wider than `width` (each with its half-width, fractions of the
    /// median), so each gets start number `repetition + 1` (of at most
    /// `max`); `measurements` and `estimate_s` are the work it adds.
    MoreStarts {
        repetition: u32,
        wide: &'a [(String, f64)],
        width: f64,
        max: u32,
        measurements: u64,
        estimate_s: f64,
    },
    /// `precision`: these targets reached `max` starts and are still wider
    /// than `width`; their cells are shown as wide as they are.
    StillWide {
        wide: &'a [(String, f64)],
        width: f64,
        max: u32,
    },
    /// `resolve`: after the planned starts, these adjacent pairs' order is
    /// still in doubt (tied, with an interval reaching past the margin),
    /// so both targets of each get start number `repetition + 1` (of at
    /// most `max`); `measurements` and `estimate_s` are the work it adds.
    InDoubt {
        repetition: u32,
        pairs: &'a [shootout_store::Doubt],
        max: u32,
        measurements: u64,
        estimate_s: f64,
    },
    /// `resolve`: these pairs are still in doubt after `max` starts; they
    /// are shown tied.
    StillInDoubt {
        pairs: &'a [shootout_store::Doubt],
        max: u32,
    },
    /// Processes of a stopped server survived SIGKILL to its group.
    Leftovers { target: &'a str },
    /// The engine refused to run: the study stops (every target would fail).
    EngineRefused { reason: &'a EngineRefusal },
    /// The runner-owned PostgreSQL of the database scenarios.
    Database(DatabaseEvent<'a>),
}

/// What happened to the database of a study with database scenarios.
#[derive(Debug, Clone, Copy)]
pub enum DatabaseEvent<'a> {
    /// initdb, start and seeding are under way.
    Starting,
    Started {
        version: &'a str,
        /// CPUs it is pinned to (empty: not pinned).
        cpus: &'a [usize],
        pool_size: u32,
        /// It runs on (some of) the servers' CPUs, so its time competes
        /// with the framework's.
        shares_server_cpus: bool,
    },
    /// No PostgreSQL here: the database scenarios were dropped.
    Unavailable {
        reason: &'a str,
        skipped_scenarios: usize,
    },
}

/// What a run is about to do.
#[derive(Debug)]
pub struct RunStart<'a> {
    pub run_id: i64,
    pub study: &'a str,
    pub targets: usize,
    pub measurements: u64,
    pub estimate_s: f64,
    pub pinning: &'a Pinning,
    pub db: &'a Path,
    /// Where servers' CPU time comes from: Ok, each server's own cgroup
    /// (the layout in one line); Err, why none can be made here, so
    /// `/proc` is sampled instead.
    pub cgroups: &'a Result<String, CgroupError>,
    /// Load and disturbance of the measured CPUs as the run starts.
    pub host_state: crate::host::HostState,
    /// The study as it runs (scaled, a random order's seed drawn): the
    /// console's order line, with the seed the store records.
    pub plan: &'a shootout_study::Study,
}

/// Preparation phases.
#[derive(Debug, Clone, Copy)]
pub enum Phase<'a> {
    Building {
        target: &'a str,
    },
    Verifying {
        targets: usize,
    },
    /// Every target handed to verification has its verdict (emitted only
    /// when there was at least one).
    VerifyEnded {
        targets: usize,
    },
}

/// How a target's preparation ended.
#[derive(Debug, Clone, Copy)]
pub enum Prepared<'a> {
    /// Not usable before anything ran: missing folder or bad manifest.
    Unusable {
        status: TargetStatus,
        reason: &'a str,
    },
    /// Its toolchain is missing.
    Skipped {
        reason: &'a str,
    },
    BuildFailed {
        reason: &'a str,
    },
    /// Ready to measure; `build_s` when it was built now.
    Verified {
        build_s: Option<f64>,
    },
    /// Failed to start or to pass verification.
    Failed {
        status: TargetStatus,
        reason: &'a str,
    },
}

/// Which measurement is running.
#[derive(Debug, Clone, Copy)]
pub struct LoadLabel<'a> {
    /// 0-based.
    pub repetition: u32,
    pub repetitions: u32,
    pub target: &'a str,
    pub scenario: &'a str,
    pub level: &'a str,
}

impl std::fmt::Display for LoadLabel<'_> {
    /// `rep 1/3 · go-nethttp · plaintext c=64`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rep {}/{} · {} · {} {}",
            self.repetition + 1,
            self.repetitions,
            self.target,
            self.scenario,
            self.level
        )
    }
}
