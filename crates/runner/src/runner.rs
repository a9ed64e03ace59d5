//! The run of one study: record the run (host, pinning, study text), prepare
//! every target once (build if needed, verify against SPEC.md; failures and
//! missing toolchains are recorded and the study goes on), then run the
//! scheduled sessions, committing each measurement as it ends, and close the
//! run as complete, interrupted or failed.

use crate::interrupt::Interrupt;
use crate::measure::{run_session, SessionContext, SessionError};
use crate::prepare::Entry;
use crate::progress::{Progress, ProgressMode};
use crate::schedule::{format_eta, sessions};
use crate::study::scale::{level_seconds, settle_after_for, settle_for, START_S, STOP_S};
use crate::study::{Study, TargetSelection};
use shootout_store::{NewRun, RunStatus, Store, TargetRecord, TargetStatus};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    pub progress: ProgressMode,
    /// Where to look for the git commit (the working directory).
    pub repo_dir: PathBuf,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: i64,
    pub status: RunStatus,
    pub measurements: usize,
    /// Targets that failed to build, start or verify: (name, status, reason).
    pub failed: Vec<(String, TargetStatus, String)>,
    /// Targets skipped (missing toolchain or target): (name, reason).
    pub skipped: Vec<(String, String)>,
    pub elapsed: Duration,
}

/// Runs a study to the end (or until interrupted) and records it.
pub fn run_study(cfg: &RunConfig, interrupt: &Arc<Interrupt>) -> anyhow::Result<RunOutcome> {
    let t0 = Instant::now();
    let study = cfg.study.scaled(cfg.scale);
    let allowed = crate::host::allowed_cpus();
    let pinning = crate::host::split_cpus(&study.cpus, &allowed).map_err(anyhow::Error::msg)?;
    let mut entries = select_targets(&study, &cfg.targets_dir, cfg.only.as_deref())?;
    let store = Store::open(&cfg.db)?;
    for id in crate::liveness::reap_dead_runs(&store, &cfg.db)? {
        eprintln!("run #{id} was left running by a process that died; marked interrupted");
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
    })?;
    let _alive = crate::liveness::hold(&cfg.db, run_id)?;
    interrupt.set_run(cfg.db.clone(), run_id);
    let est = study.estimate(entries.len(), cfg.scale);
    let progress = Progress::new(cfg.progress, est.measurements as u64, est.total_s);
    progress.println(&format!(
        "run #{run_id}: study {} ({} target(s), {} measurement(s), about {}; servers on CPUs {:?}, generator on {:?}; db {})",
        study.name,
        entries.len(),
        est.measurements,
        format_eta(est.total_s),
        pinning.server_cpus,
        pinning.generator_cpus,
        cfg.db.display()
    ));

    let mut outcome = RunOutcome {
        run_id,
        status: RunStatus::Running,
        measurements: 0,
        failed: Vec::new(),
        skipped: Vec::new(),
        elapsed: Duration::ZERO,
    };
    let per_target = |s: &Study| s.estimate(1, cfg.scale);
    crate::prepare::prepare_all(&mut entries, &progress, interrupt);
    for e in &entries {
        store.record_target(run_id, &e.record)?;
        if e.record.status != TargetStatus::Ok {
            let one = per_target(&study);
            progress.skip(one.measurements as u64, one.total_s);
        }
    }

    let ok: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.record.status == TargetStatus::Ok && e.target.is_some())
        .collect();
    let threads = study.threads.unwrap_or(pinning.generator_cpus.len().max(1));
    let plan = sessions(
        ok.len(),
        study.repetitions,
        study.scenarios.len(),
        study.order,
        study.restart,
    );
    let mut dead: Vec<Option<(TargetStatus, String)>> = vec![None; ok.len()];
    let mut engine_error = None;
    let estimate_of = |sc: &crate::study::Scenario, l: &crate::study::Level| {
        sc.warmup.as_secs_f64() + level_seconds(l, sc.name.nominal_service_s())
    };
    for session in &plan {
        if interrupt.is_stopped() || engine_error.is_some() {
            break;
        }
        let entry = ok[session.target];
        let Some(target) = entry.target.as_ref() else {
            continue;
        };
        if dead[session.target].is_some() {
            continue;
        }
        let cx = SessionContext {
            study: &study,
            target,
            pinning: &pinning,
            threads,
            settle: settle_for(cfg.scale),
            settle_after: settle_after_for(cfg.scale),
            interrupt,
            progress: &progress,
        };
        let mut record = |m: shootout_store::Measurement| {
            store
                .record_measurement(run_id, &m)
                .map(|_| outcome.measurements += 1)
                .map_err(|e| e.to_string())
        };
        let result = run_session(&cx, session, &estimate_of, &mut record);
        let levels: usize = session
            .scenarios
            .iter()
            .map(|&i| study.scenarios[i].levels.len())
            .sum();
        progress.advance(
            START_S
                + STOP_S
                + cx.settle.as_secs_f64()
                + levels as f64 * cx.settle_after.as_secs_f64(),
        );
        match result {
            Ok(()) => {}
            Err(SessionError::Interrupted) => break,
            Err(SessionError::Start { reason, log_tail }) => {
                progress.println(&format!("{}: failed to start: {reason}", entry.name));
                let mut rec = entry.record.clone();
                rec.status = TargetStatus::StartFailed;
                rec.reason = Some(reason.clone());
                rec.log_tail = Some(log_tail);
                store.record_target(run_id, &rec)?;
                dead[session.target] = Some((TargetStatus::StartFailed, reason));
            }
            Err(SessionError::Engine(e)) => engine_error = Some(e),
            Err(SessionError::Record(e)) => anyhow::bail!("cannot record a measurement: {e}"),
        }
    }
    progress.finish();

    for e in &entries {
        match e.record.status {
            TargetStatus::Ok => {}
            TargetStatus::Skipped => outcome
                .skipped
                .push((e.name.clone(), e.record.reason.clone().unwrap_or_default())),
            s => outcome.failed.push((
                e.name.clone(),
                s,
                e.record.reason.clone().unwrap_or_default(),
            )),
        }
    }
    for (i, d) in dead.into_iter().enumerate() {
        if let Some((s, reason)) = d {
            outcome.failed.push((ok[i].name.clone(), s, reason));
        }
    }
    outcome.status = if interrupt.is_stopped() {
        RunStatus::Interrupted
    } else if let Some(e) = &engine_error {
        eprintln!("error: the load engine refused to run: {e}");
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    store.finish_run(run_id, outcome.status)?;
    outcome.elapsed = t0.elapsed();
    Ok(outcome)
}

/// Resolves the study's target names against the targets directory.
fn select_targets(
    study: &Study,
    dir: &Path,
    only: Option<&[String]>,
) -> anyhow::Result<Vec<Entry>> {
    let found = shootout_servers::discover(dir)
        .map_err(|e| anyhow::anyhow!("cannot read targets directory {}: {e}", dir.display()))?;
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
            anyhow::bail!(
                "--targets: '{bad}' is not a target of study {} ({})",
                study.name,
                names.join(", ")
            );
        }
        names.retain(|n| only.contains(n));
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
            };
            if target.is_none() {
                match found
                    .broken
                    .iter()
                    .find(|b| broken_name(b).as_deref() == Some(&name))
                {
                    Some(b) => {
                        record.status = TargetStatus::BuildFailed;
                        record.reason = Some(format!("bad manifest: {b}"));
                    }
                    None => {
                        record.status = TargetStatus::Skipped;
                        record.reason = Some(format!("no target '{name}' in {}", dir.display()));
                    }
                }
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
