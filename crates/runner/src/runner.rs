//! The run of one study, as named steps: [`open`] records the run (host,
//! pinning, study text) after marking dead runs interrupted; [`prepare`]
//! gets every target ready once (build if needed, verify against SPEC.md;
//! failures and missing toolchains are recorded and the study goes on);
//! [`measure`] runs the scheduled sessions (load levels through
//! `crate::measure`, capacity searches through `crate::capacity`),
//! committing each measurement as it ends; [`close`] closes the run as complete, interrupted or failed.
//! Everything the user should see goes to the [`Observer`].

use crate::capacity::run_capacity_session;
use crate::database::Database;
use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, Observer, RunStart};
use crate::interrupt::Interrupt;
use crate::liveness::RunLock;
use crate::measure::{run_session, SessionContext};
use crate::place::{local::LocalPlace, Place};
use crate::prepare::Entry;
use crate::schedule::{sessions, Session};
use crate::tls::RunTls;
use crate::unsaved::Unsaved;
use shootout_servers::Target;
use shootout_store::{NewRun, Pinning, RunStatus, Store, StoreError, TargetRecord, TargetStatus};
use shootout_study::scale::{
    level_seconds, settle_after_for, settle_for, BETWEEN_LEVELS_S, START_S, STOP_S,
};
use shootout_study::{Study, StudyError, TargetSelection};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Everything a run needs.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The study as parsed (unscaled); its text is recorded.
    pub study: Study,
    /// 1.0 for a full run.
    pub scale: f64,
    pub targets_dir: PathBuf,
    pub db: PathBuf,
    /// Only these targets of the study (`--targets`), if given.
    pub only: Option<Vec<String>>,
    /// Where to look for the git commit (the working directory).
    pub repo_dir: PathBuf,
    /// `--wait-quiet`: the longest wait for quiet CPUs before a level.
    pub wait_quiet: Option<Duration>,
    /// Where built targets are kept by content (`None`: `--no-cache`).
    pub build_cache: Option<shootout_servers::BuildCache>,
    /// `--kubernetes`: contestants run as pods on this cluster (None: as
    /// local processes).
    pub kubernetes: Option<crate::place::kubectl::KubeOptions>,
}

/// Why a run could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The study's CPU split does not fit this machine.
    #[error(transparent)]
    Cpus(#[from] crate::host::CpuError),
    /// This process could not be pinned to the generator CPUs.
    #[error("cannot pin shootout to the generator CPUs {cpus:?}: {source}")]
    Pin {
        cpus: Vec<usize>,
        source: std::io::Error,
    },
    /// The Kubernetes cluster cannot run the study.
    #[error("kubernetes")]
    Cluster(#[from] crate::place::kube::ClusterError),
    /// A CPU quota above every CPU of this machine, named where it is written.
    #[error(transparent)]
    Quota(StudyError),
    #[error("cannot read targets directory {}: {source}", .dir.display())]
    TargetsDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// A selected target's manifest is broken: a usage error, named with
    /// its file, line and key, before anything runs.
    #[error("bad target manifest: {0}")]
    Manifest(shootout_servers::ManifestError),
    #[error("--targets: '{name}' is not a target of study {study} ({known})")]
    UnknownTarget {
        name: String,
        study: String,
        known: String,
    },
    /// The database scenarios' PostgreSQL could not be started.
    #[error("cannot start PostgreSQL for the database scenarios")]
    Database(#[from] crate::database::StartDatabaseError),
    #[error(transparent)]
    Tls(#[from] shootout_servers::CertDirError),
    #[error("cannot mark the run as alive: {0}")]
    Lock(std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A target that could not be measured (to the end).
#[derive(Debug, Clone, PartialEq)]
pub struct TargetFailure {
    pub target: String,
    pub status: TargetStatus,
    pub reason: String,
}

/// A target left out (missing toolchain or target).
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub target: String,
    pub reason: String,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: i64,
    pub status: RunStatus,
    pub measurements: usize,
    /// Targets that failed to build, start or verify.
    pub failed: Vec<TargetFailure>,
    pub skipped: Vec<Skipped>,
    pub elapsed: Duration,
    /// A measurement the results store refused (the run then stopped as
    /// interrupted), and the file that holds it instead.
    pub unsaved: Option<Unsaved>,
}

/// A run in progress: what every step shares.
struct Run<'a> {
    cfg: &'a RunConfig,
    study: Study,
    pinning: Pinning,
    /// Where every target runs: picked here, once.
    place: Box<dyn Place>,
    store: Store,
    run_id: i64,
    /// Tells later runs this one is alive, and which server it runs.
    alive: RunLock,
    interrupt: &'a Interrupt,
    observer: &'a dyn Observer,
    measurements: usize,
    /// The database scenarios' PostgreSQL, stopped and removed on drop.
    database: Option<Database>,
    /// The certificates of the TLS levels, removed on drop.
    tls: Option<RunTls>,
    /// Set when the store refused a measurement: measuring stops.
    unsaved: Option<Unsaved>,
}

/// A target that passed preparation and is being measured.
struct Measured<'a> {
    entry: &'a Entry,
    target: &'a Target,
    /// Set when it failed to start (or died) during the study.
    failure: Option<TargetFailure>,
}

/// Runs a study to the end (or until interrupted) and records it.
pub fn run_study(
    cfg: &RunConfig,
    interrupt: &Interrupt,
    observer: &dyn Observer,
) -> Result<RunOutcome, RunError> {
    let t0 = Instant::now();
    let (mut run, mut entries) = open(cfg, interrupt, observer)?;
    run.prepare(&mut entries)?;
    let mut measured: Vec<Measured<'_>> = entries
        .iter()
        .filter(|e| e.record.status == TargetStatus::Ok)
        .filter_map(|entry| {
            entry.target.as_ref().map(|target| Measured {
                entry,
                target,
                failure: None,
            })
        })
        .collect();
    let engine_error = run.measure(&mut measured)?;
    let mut outcome = run.close(&entries, measured, engine_error)?;
    outcome.elapsed = t0.elapsed();
    Ok(outcome)
}

/// The study's CPUs on this machine: its split (servers and generator),
/// no CPU quota above the CPUs there are, and the quotas above the
/// servers' own CPUs (they cannot bind), each named with its place for the
/// caller to say. The CLI calls it before it takes the machine lock, so
/// that a plan this machine cannot honour fails at once instead of after
/// a wait; the run checks again.
pub fn check_cpus(study: &Study) -> Result<(Pinning, Vec<StudyError>), RunError> {
    let allowed = shootout_engine::affinity::allowed_cpus();
    let pinning = crate::host::split_cpus(&study.cpus, &allowed)?;
    let which = if pinning.server_cpus.is_empty() {
        format!("not pinned: {allowed:?}")
    } else {
        format!("{:?}", pinning.server_cpus)
    };
    let servers = shootout_servers::server_cpus(&pinning.server_cpus);
    let named = study
        .quotas_fit(allowed.len().max(1), servers, &which)
        .map_err(RunError::Quota)?;
    Ok((pinning, named))
}

/// Where the run's contestants run: this machine's processes, or pods on
/// the cluster `--kubernetes` names (a cluster that cannot be used fails
/// the run, recorded as failed).
fn place_for(
    kube: Option<&crate::KubeOptions>,
    run_id: i64,
    generator_cpus: &[usize],
    store: &Store,
    observer: &dyn Observer,
) -> Result<Box<dyn Place>, RunError> {
    let Some(k) = kube else {
        return Ok(Box::new(LocalPlace));
    };
    match crate::place::kube::KubePlace::connect(k, run_id, generator_cpus) {
        Ok(p) => {
            observer.event(&Event::Placed {
                description: &p.describe(),
            });
            Ok(Box::new(p))
        }
        Err(e) => {
            let _ = store.finish_run(run_id, RunStatus::Failed);
            Err(e.into())
        }
    }
}

/// Selects the targets, marks dead runs interrupted and records the run.
fn open<'a>(
    cfg: &'a RunConfig,
    interrupt: &'a Interrupt,
    observer: &'a dyn Observer,
) -> Result<(Run<'a>, Vec<Entry>), RunError> {
    let mut study = cfg.study.scaled(cfg.scale);
    let (pinning, _) = check_cpus(&study)?;
    let entries = select_targets(&study, &cfg.targets_dir, cfg.only.as_deref())?;
    let store = Store::open(&cfg.db)?;
    for dead in crate::liveness::reap_dead_runs(&store, &cfg.db)? {
        observer.event(&Event::DeadRunMarked {
            run_id: dead.run_id,
            killed_group: dead.killed_group,
        });
    }
    let kube = cfg.kubernetes.as_ref();
    if let Some(k) = kube {
        crate::place::kube::supports(&study, k)?;
        // Everything this process does from here (kubectl, the agents'
        // progress, the kubelet's figures) runs where a local run's
        // generator does: off the servers' CPUs when the cluster is this
        // machine (measured: unpinned, it flagged 16 of 20 levels of a
        // five-target run disturbed, 10 to 30% of the server's CPU).
        let cpus = &pinning.generator_cpus;
        shootout_engine::affinity::pin_current_thread(cpus).map_err(|source| RunError::Pin {
            cpus: cpus.clone(),
            source,
        })?;
    }
    let tls = RunTls::for_study(&study)?;
    let database = crate::database::start_for(&mut study, &pinning, kube, observer)?;
    if study.order == shootout_study::Order::Random && study.seed.is_none() {
        study.seed = Some(shootout_engine::seed::random_seed());
    }
    let run_id = store.begin_run(&NewRun {
        study: study.name.clone(),
        started_at: shootout_store::now_rfc3339(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: crate::host::git_commit(&cfg.repo_dir),
        host: crate::host::host(),
        pinning: pinning.clone(),
        scale: cfg.scale,
        study_text: cfg.study.text.clone(),
        database: database.as_ref().map(Database::record),
        order_seed: study.seed,
    })?;
    let alive = crate::liveness::hold(&cfg.db, run_id).map_err(RunError::Lock)?;
    let mins: Vec<Duration> = entries
        .iter()
        .map(|e| warmup_min(e.target.as_ref(), cfg.scale))
        .collect();
    let est = study.estimate_for(&mins, cfg.scale);
    let cgroups = shootout_servers::cgroup::probe();
    let watched = crate::quiet::watched_cpus(&pinning.server_cpus, &pinning.generator_cpus);
    observer.event(&Event::RunStarted(&RunStart {
        run_id,
        study: &study.name,
        targets: entries.len(),
        measurements: est.measurements as u64,
        estimate_s: est.total_s,
        pinning: &pinning,
        db: &cfg.db,
        cgroups: &cgroups,
        host_state: crate::host::state(&watched),
        plan: &study,
    }));
    let place = place_for(kube, run_id, &pinning.generator_cpus, &store, observer)?;
    if let Some((cluster, _)) = place.cluster() {
        store.record_cluster(run_id, cluster)?;
    }
    let run = Run {
        cfg,
        study,
        pinning,
        place,
        store,
        run_id,
        alive,
        interrupt,
        observer,
        measurements: 0,
        database,
        tls,
        unsaved: None,
    };
    Ok((run, entries))
}

impl Run<'_> {
    /// Builds and verifies every target, records each, and takes the work of
    /// the unusable ones off the plan.
    fn prepare(&mut self, entries: &mut [Entry]) -> Result<(), RunError> {
        let access = self.database.as_ref().map(Database::access);
        // The run has certificates exactly when its study has TLS levels;
        // /ws is verified only for a study with WebSocket levels (a broken
        // /ws keeps no target out of an HTTP study).
        let tls = self.tls.is_some();
        let ws = self
            .study
            .scenarios
            .iter()
            .flat_map(|s| &s.levels)
            .any(|l| l.protocol == shootout_contract::protocol::Protocol::Ws);
        crate::prepare::prepare_all(
            entries,
            access.as_ref(),
            (tls, ws),
            self.cfg.build_cache.as_ref(),
            &self.pinning.server_cpus,
            self.observer,
            self.interrupt,
        );
        for e in entries.iter() {
            self.store.record_target(self.run_id, &e.record)?;
            if e.record.status != TargetStatus::Ok {
                let min = warmup_min(e.target.as_ref(), self.cfg.scale);
                let one = self.study.estimate_for(&[min], self.cfg.scale);
                self.observer.event(&Event::Skip {
                    measurements: one.measurements as u64,
                    estimate_s: one.total_s,
                });
            }
        }
        Ok(())
    }

    /// Runs every session in schedule order, then (with `precision`) more
    /// starts of the targets still too wide. Returns the engine's refusal,
    /// if it refused (the study stops there).
    fn measure(
        &mut self,
        measured: &mut [Measured<'_>],
    ) -> Result<Option<EngineRefusal>, RunError> {
        let study = &self.study;
        let plan = sessions(
            measured.len(),
            study.repetitions,
            study.scenarios.len(),
            study.order,
            study.seed.unwrap_or(0),
            study.restart,
        );
        let mut taken = Vec::new();
        for session in &plan {
            match self.session(measured, session, &mut taken)? {
                Flow::Go => {}
                Flow::Stop => return Ok(None),
                Flow::Refused(e) => return Ok(Some(e)),
            }
        }
        self.more_starts(measured, &mut taken)
    }

    /// `precision` and `resolve`: rounds of one more start for every
    /// target whose interval is still wider than the study's width, and
    /// for both targets of every adjacent pair whose order is still in
    /// doubt, in a fresh seeded order among them, until none is or they
    /// have the most starts each rule allows (then said).
    fn more_starts(
        &mut self,
        measured: &mut [Measured<'_>],
        taken: &mut Vec<shootout_store::Measurement>,
    ) -> Result<Option<EngineRefusal>, RunError> {
        let (precision, resolve) = (self.study.precision, self.study.resolve);
        let Some(cap) = precision
            .map(|p| p.max_repetitions)
            .max(resolve.map(|r| r.max_repetitions))
        else {
            return Ok(None);
        };
        let (repetitions, seed) = (self.study.repetitions, self.study.seed.unwrap_or(0));
        let (scenarios, order, restart) = (
            self.study.scenarios.len(),
            self.study.order,
            self.study.restart,
        );
        for rep in repetitions..cap {
            if self.interrupt.is_stopped() {
                return Ok(None);
            }
            let (wide, doubts, targets) = self.needing_starts(measured, taken, Some(rep));
            if targets.is_empty() {
                break;
            }
            let drawn = crate::schedule::target_order(
                targets.len(),
                rep,
                shootout_study::Order::Random,
                seed,
            );
            let round: Vec<Session> = drawn
                .into_iter()
                .flat_map(|k| {
                    let target = targets[k];
                    sessions(1, 1, scenarios, order, 0, restart)
                        .into_iter()
                        .map(move |s| Session {
                            repetition: rep,
                            target,
                            ..s
                        })
                })
                .collect();
            self.say_round(rep, &wide, &doubts, targets.len() - wide.len());
            for session in &round {
                match self.session(measured, session, taken)? {
                    Flow::Go => {}
                    Flow::Stop => return Ok(None),
                    Flow::Refused(e) => return Ok(Some(e)),
                }
            }
        }
        if !self.interrupt.is_stopped() {
            let (wide, doubts, _) = self.needing_starts(measured, taken, None);
            if let (Some(p), false) = (precision, wide.is_empty()) {
                let wide: Vec<(String, f64)> = wide.into_iter().map(|(_, n, h)| (n, h)).collect();
                self.observer.event(&Event::StillWide {
                    wide: &wide,
                    width: p.width,
                    max: p.max_repetitions,
                });
            }
            if let (Some(r), false) = (resolve, doubts.is_empty()) {
                self.observer.event(&Event::StillInDoubt {
                    pairs: &doubts,
                    max: r.max_repetitions,
                });
            }
        }
        Ok(None)
    }

    /// Who needs another start: the targets still wider than `precision`'s
    /// width (index, name, half-width), the pairs `resolve` finds in doubt,
    /// and every target of either, each once, wide ones first. With `rep`,
    /// only the rules whose cap is above it; without, both (what is left).
    fn needing_starts(
        &self,
        measured: &[Measured<'_>],
        taken: &[shootout_store::Measurement],
        rep: Option<u32>,
    ) -> (Vec<Wide>, Vec<shootout_store::Doubt>, Vec<usize>) {
        let below = |max: u32| rep.is_none_or(|r| r < max);
        let live = |name: &str| {
            measured
                .iter()
                .position(|m| m.failure.is_none() && m.entry.name == name)
        };
        let wide: Vec<Wide> = match self.study.precision {
            Some(p) if below(p.max_repetitions) => measured
                .iter()
                .enumerate()
                .filter(|(_, m)| m.failure.is_none())
                .filter_map(|(i, m)| {
                    let w = shootout_store::target_width(taken, &m.entry.name)?;
                    w.wider_than(p.width)
                        .then(|| (i, m.entry.name.clone(), w.half))
                })
                .collect(),
            _ => Vec::new(),
        };
        let doubts: Vec<shootout_store::Doubt> = match self.study.resolve {
            Some(r) if below(r.max_repetitions) => {
                let margin = shootout_stats::Margin::of_study(self.study.margin);
                shootout_store::doubtful_pairs(taken, margin)
                    .into_iter()
                    .filter(|d| live(&d.above).is_some() && live(&d.below).is_some())
                    .collect()
            }
            _ => Vec::new(),
        };
        let mut targets: Vec<usize> = wide.iter().map(|w| w.0).collect();
        for i in doubts
            .iter()
            .flat_map(|d| [live(&d.above), live(&d.below)])
            .flatten()
        {
            if !targets.contains(&i) {
                targets.push(i);
            }
        }
        (wide, doubts, targets)
    }

    /// Says a round of more starts: the wide targets, the pairs in doubt
    /// (`added` targets beyond the wide ones), and the work each adds.
    fn say_round(&self, rep: u32, wide: &[Wide], doubts: &[shootout_store::Doubt], added: usize) {
        let one = self.study.estimate(1, self.cfg.scale);
        let reps = self.study.repetitions.max(1);
        let work = |n: usize| {
            (
                (one.measurements / reps as usize * n) as u64,
                one.total_s / reps as f64 * n as f64,
            )
        };
        if let (Some(p), false) = (self.study.precision, wide.is_empty()) {
            let named: Vec<(String, f64)> = wide.iter().map(|(_, n, h)| (n.clone(), *h)).collect();
            let (measurements, estimate_s) = work(wide.len());
            self.observer.event(&Event::MoreStarts {
                repetition: rep,
                wide: &named,
                width: p.width,
                max: p.max_repetitions,
                measurements,
                estimate_s,
            });
        }
        if let (Some(r), false) = (self.study.resolve, doubts.is_empty()) {
            let (measurements, estimate_s) = work(added);
            self.observer.event(&Event::InDoubt {
                repetition: rep,
                pairs: doubts,
                max: r.max_repetitions,
                measurements,
                estimate_s,
            });
        }
    }

    /// Runs one session, its measurements committed and kept in `taken`.
    fn session(
        &mut self,
        measured: &mut [Measured<'_>],
        session: &Session,
        taken: &mut Vec<shootout_store::Measurement>,
    ) -> Result<Flow, RunError> {
        let study = &self.study;
        if self.interrupt.is_stopped() {
            return Ok(Flow::Stop);
        }
        let m = &mut measured[session.target];
        if m.failure.is_some() {
            return Ok(Flow::Go);
        }
        let threads = study
            .threads
            .unwrap_or(self.pinning.generator_cpus.len().max(1));
        let estimate_of = |sc: &shootout_study::Scenario, l: &shootout_study::Level| {
            sc.warmup.expected().as_secs_f64() + level_seconds(l, sc.name.nominal_service_s())
        };
        let cx = SessionContext {
            study,
            target: m.target,
            pinning: &self.pinning,
            place: self.place.as_ref(),
            threads,
            settle: settle_for(self.cfg.scale),
            settle_after: settle_after_for(self.cfg.scale),
            interrupt: self.interrupt,
            observer: self.observer,
            alive: &self.alive,
            database: self.database.as_ref(),
            wait_quiet: self.cfg.wait_quiet,
            tls: self.tls.as_ref(),
            warmup_min: warmup_min(Some(m.target), self.cfg.scale),
        };
        let mut sink = Sink {
            store: &self.store,
            db: &self.cfg.db,
            run_id: self.run_id,
            count: &mut self.measurements,
            kept_in: None,
            taken,
        };
        let result = run_split(&cx, session, &estimate_of, &mut sink);
        let kept_in = sink.kept_in.take();
        let levels: usize = session
            .scenarios
            .iter()
            .map(|&i| study.scenarios[i].levels.len())
            .sum();
        self.observer.event(&Event::Credit {
            estimate_s: START_S
                + STOP_S
                + cx.settle.as_secs_f64()
                + levels as f64 * (cx.settle_after.as_secs_f64() + BETWEEN_LEVELS_S),
        });
        match result {
            Ok(()) => {}
            Err(SessionError::Interrupted) => return Ok(Flow::Stop),
            Err(SessionError::Start { reason, log_tail }) => {
                self.start_failed(m, reason, log_tail)?;
            }
            Err(SessionError::Failed { reason, log_tail }) => {
                self.target_failed(m, TargetStatus::Failed, reason, log_tail)?;
            }
            Err(SessionError::Engine(e)) => return Ok(Flow::Refused(e)),
            Err(SessionError::Record(e)) => {
                self.unsaved = Some(Unsaved {
                    error: e.to_string(),
                    file: kept_in,
                });
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// Records that a measured target failed to start (or died) during
    /// the study; its remaining sessions are skipped.
    fn start_failed(
        &self,
        m: &mut Measured<'_>,
        reason: String,
        log_tail: String,
    ) -> Result<(), RunError> {
        self.target_failed(m, TargetStatus::StartFailed, reason, log_tail)
    }

    /// Records that a measured target failed with `status` (to start, or
    /// during a measurement); its remaining sessions are skipped.
    fn target_failed(
        &self,
        m: &mut Measured<'_>,
        status: TargetStatus,
        reason: String,
        log_tail: String,
    ) -> Result<(), RunError> {
        if status == TargetStatus::StartFailed {
            self.observer.event(&Event::StartFailed {
                target: &m.entry.name,
                reason: &reason,
            });
        } else {
            self.observer.event(&Event::TargetFailed {
                target: &m.entry.name,
                reason: &reason,
            });
        }
        let mut rec = m.entry.record.clone();
        rec.status = status;
        rec.reason = Some(reason.clone());
        rec.log_tail = Some(log_tail);
        self.store.record_target(self.run_id, &rec)?;
        m.failure = Some(TargetFailure {
            target: m.entry.name.clone(),
            status,
            reason,
        });
        Ok(())
    }

    /// Collects what failed or was skipped and closes the run.
    fn close(
        self,
        entries: &[Entry],
        measured: Vec<Measured<'_>>,
        engine_error: Option<EngineRefusal>,
    ) -> Result<RunOutcome, RunError> {
        let mut failed = Vec::new();
        let mut skipped = Vec::new();
        for e in entries {
            let reason = e.record.reason.clone().unwrap_or_default();
            let target = e.name.clone();
            match e.record.status {
                TargetStatus::Ok => {}
                TargetStatus::Skipped => skipped.push(Skipped { target, reason }),
                status => failed.push(TargetFailure {
                    target,
                    status,
                    reason,
                }),
            }
        }
        failed.extend(measured.into_iter().filter_map(|m| m.failure));
        let status = if self.interrupt.is_stopped() || self.unsaved.is_some() {
            RunStatus::Interrupted
        } else if let Some(reason) = &engine_error {
            self.observer.event(&Event::EngineRefused { reason });
            RunStatus::Failed
        } else {
            RunStatus::Complete
        };
        match self.store.finish_run(self.run_id, status) {
            // The store is why the run stopped; the next run marks it
            // interrupted (it is no longer alive).
            Err(_) if self.unsaved.is_some() => {}
            other => other?,
        }
        Ok(RunOutcome {
            run_id: self.run_id,
            status,
            measurements: self.measurements,
            failed,
            skipped,
            elapsed: Duration::ZERO,
            unsaved: self.unsaved,
        })
    }
}

/// What the schedule does after a session.
enum Flow {
    Go,
    /// Interrupted, or the store refused a measurement.
    Stop,
    Refused(EngineRefusal),
}

/// A target still wider than `precision`'s width: its index, name and
/// half-width (a fraction of its median).
type Wide = (usize, String, f64);

/// Where a session's results go: committed to the store the moment each
/// ends, or, when the store refuses one, kept in the run's unsaved file.
struct Sink<'a> {
    store: &'a Store,
    db: &'a Path,
    run_id: i64,
    count: &'a mut usize,
    /// The unsaved file, once the store refused something.
    kept_in: Option<PathBuf>,
    /// The run's measurements so far, for the `precision` stop rule.
    taken: &'a mut Vec<shootout_store::Measurement>,
}

impl Sink<'_> {
    fn commit<T: serde::Serialize>(
        &mut self,
        item: &T,
        write: impl FnOnce(&Store, i64, &T) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match write(self.store, self.run_id, item) {
            Ok(()) => {
                *self.count += 1;
                Ok(())
            }
            Err(e) => {
                self.kept_in = crate::unsaved::keep(self.db, self.run_id, item);
                Err(e)
            }
        }
    }
}

/// A session's load scenarios on one server start, then its capacity
/// searches on another; each measurement or search is committed the moment
/// it ends.
fn run_split(
    cx: &SessionContext<'_>,
    session: &Session,
    estimate_of: &dyn Fn(&shootout_study::Scenario, &shootout_study::Level) -> f64,
    sink: &mut Sink<'_>,
) -> Result<(), SessionError> {
    let (searches, loads): (Vec<usize>, Vec<usize>) = session
        .scenarios
        .iter()
        .partition(|&&i| cx.study.scenarios[i].capacity.is_some());
    if !loads.is_empty() {
        let loads = Session {
            scenarios: loads,
            ..session.clone()
        };
        let node = cx.place.cluster().map(|(_, node)| node);
        run_session(cx, &loads, estimate_of, &mut |m| {
            sink.commit(m, |st, id, m| {
                st.record_measurement(id, m)?;
                placed(st, id, node, &m.target, &m.scenario, m.repetition)
            })?;
            sink.taken.push(m.clone());
            Ok(())
        })?;
    }
    if !searches.is_empty() {
        let node = cx.place.cluster().map(|(_, node)| node);
        run_capacity_session(cx, session, &searches, &mut |s| {
            sink.commit(s, |st, id, s| {
                st.record_capacity(id, s)?;
                placed(st, id, node, &s.target, &s.scenario, s.repetition)
            })
        })?;
    }
    Ok(())
}

/// Records which node ran one start's server, when it ran on a cluster.
fn placed(
    st: &Store,
    run_id: i64,
    node: Option<&str>,
    target: &str,
    scenario: &str,
    repetition: u32,
) -> Result<(), StoreError> {
    let Some(node) = node else {
        return Ok(());
    };
    st.record_placement(
        run_id,
        &shootout_store::Placement {
            target: target.into(),
            scenario: scenario.into(),
            repetition,
            node: node.into(),
        },
    )
}

/// The load a start of `target` owes before its first measurement, scaled
/// like every duration (`--quick`, `--scale`).
fn warmup_min(target: Option<&Target>, scale: f64) -> Duration {
    target
        .and_then(|t| t.warmup_min)
        .map_or(Duration::ZERO, |d| {
            shootout_study::scale::scaled_min(d, scale)
        })
}

/// Resolves the study's target names against the targets directory.
fn select_targets(
    study: &Study,
    dir: &Path,
    only: Option<&[String]>,
) -> Result<Vec<Entry>, RunError> {
    let mut found = shootout_servers::discover(dir).map_err(|source| RunError::TargetsDir {
        dir: dir.to_path_buf(),
        source,
    })?;
    let mut names: Vec<String> = match &study.targets {
        TargetSelection::All => {
            let mut n: Vec<String> = found.targets.iter().map(|t| t.name.clone()).collect();
            n.extend(found.broken.iter().filter_map(broken_name));
            n.sort();
            n
        }
        TargetSelection::List(l) => l.clone(),
    };
    if let Some(only) = only {
        if let Some(bad) = only.iter().find(|o| !names.contains(o)) {
            return Err(RunError::UnknownTarget {
                name: bad.clone(),
                study: study.name.clone(),
                known: names.join(", "),
            });
        }
        names.retain(|n| only.contains(n));
    }
    let selected =
        |b: &shootout_servers::ManifestError| broken_name(b).is_some_and(|n| names.contains(&n));
    if let Some(i) = found.broken.iter().position(selected) {
        return Err(RunError::Manifest(found.broken.swap_remove(i)));
    }
    Ok(names
        .into_iter()
        .map(|name| {
            let target = found.targets.iter().find(|t| t.name == name).cloned();
            let mut record = TargetRecord {
                target: name.clone(),
                language: target
                    .as_ref()
                    .map_or_else(String::new, |t| t.language.clone()),
                framework: target
                    .as_ref()
                    .map_or_else(String::new, |t| t.framework.clone()),
                status: TargetStatus::Ok,
                reason: None,
                log_tail: None,
                verify: None,
                footprint_bytes: None,
                build_s: None,
                description: target.as_ref().map(|t| t.description.clone()),
                run_command: target.as_ref().map(|t| t.run.clone()),
                provenance: None,
            };
            if target.is_none() {
                record.status = TargetStatus::Skipped;
                record.reason = Some(format!("no target '{name}' in {}", dir.display()));
            }
            Entry {
                name,
                target,
                record,
            }
        })
        .collect())
}

fn broken_name(b: &shootout_servers::ManifestError) -> Option<String> {
    b.file.parent()?.file_name()?.to_str().map(str::to_string)
}
