//! Getting targets ready before any measurement: build each one if needed
//! (one at a time: builds use every core), then verify them against
//! targets/SPEC.md, a few at a time since verification mostly waits on
//! timers. With a database, one at a time: its checks count queries and
//! connections database-wide, so two servers at once would blur each
//! other's counts. A missing toolchain skips the target; a failed build,
//! start or check marks it failed with the log tail; the study goes on
//! without it. A built target's provenance (the versions its build
//! resolved, and its runtime's) is read as it is built.

use crate::event::{Event, Observer, Phase, Prepared};
use crate::interrupt::Interrupt;
use shootout_servers::{BuildCache, BuildOutcome, DatabaseAccess, Target, VerifyOptions};
use shootout_store::{TargetRecord, TargetStatus};
use shootout_study::scale::{VERIFY_DB_S, VERIFY_S};
use std::sync::Mutex;

/// Targets verified at once.
const PARALLEL_VERIFY: usize = 3;

/// A target of the study and what is known about it so far.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub target: Option<Target>,
    pub record: TargetRecord,
}

/// Builds every target (in order), then verifies the built ones, filling
/// their records; their TLS ports only when `tls` (the study has TLS
/// levels) and their `/ws` only when `ws` (it has WebSocket levels), each
/// server pinned to `cpus`, the run's server CPUs. Stops
/// early, marking the rest skipped, on Ctrl-C.
pub fn prepare_all(
    entries: &mut [Entry],
    database: Option<&DatabaseAccess>,
    (tls, ws): (bool, bool),
    cache: Option<&BuildCache>,
    cpus: &[usize],
    observer: &dyn Observer,
    interrupt: &Interrupt,
) {
    let verify_s = if database.is_some() {
        VERIFY_DB_S
    } else {
        VERIFY_S
    };
    let mut to_verify = Vec::new();
    for e in entries.iter_mut() {
        if interrupt.is_stopped() {
            break;
        }
        observer.event(&Event::Phase(Phase::Building { target: &e.name }));
        if build(e, cache, observer) {
            to_verify.push(e);
        } else {
            observer.event(&Event::Credit {
                estimate_s: verify_s,
            });
        }
    }
    let verifying = to_verify.len();
    observer.event(&Event::Phase(Phase::Verifying { targets: verifying }));
    let opts = VerifyOptions {
        database: database.cloned(),
        tls,
        ws,
        cpus: cpus.to_vec(),
        ..VerifyOptions::default()
    };
    verify_all(to_verify, &opts, observer, interrupt, verify_s);
    if verifying > 0 {
        observer.event(&Event::Phase(Phase::VerifyEnded { targets: verifying }));
    }
    for e in entries.iter_mut() {
        let unfinished = e.record.status == TargetStatus::Ok && e.record.verify.is_none();
        if interrupt.is_stopped() && (e.record.status != TargetStatus::Ok || unfinished) {
            // Ctrl-C also reaches build commands: not the target's fault.
            e.record.status = TargetStatus::Skipped;
            e.record.reason = Some("interrupted".into());
        }
    }
}

/// Verifies the built targets, a few at a time (one at a time with a
/// database), crediting each one's estimate as it ends.
fn verify_all(
    to_verify: Vec<&mut Entry>,
    opts: &VerifyOptions,
    observer: &dyn Observer,
    interrupt: &Interrupt,
    verify_s: f64,
) {
    // Longest first (the queue pops from its end): a JVM takes about 10 s
    // to start and answer, twice any other runtime here, so started last
    // it alone ends the phase (the default study's thirteen: 35.9 s with
    // java-spring verified last, 31.2 s with it first; 2026-11-28).
    let mut to_verify = to_verify;
    to_verify.sort_by_key(|e| {
        e.target
            .as_ref()
            .is_some_and(|t| t.toolchain == shootout_servers::Toolchain::Maven)
    });
    let queue = Mutex::new(to_verify);
    let parallel = if opts.database.is_some() {
        1
    } else {
        PARALLEL_VERIFY
    };
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                let Some(e) = next else { break };
                if interrupt.is_stopped() {
                    continue;
                }
                verify(e, opts, observer);
                observer.event(&Event::Credit {
                    estimate_s: verify_s,
                });
            });
        }
    });
}

/// Builds one target if needed; true when it is ready to verify.
fn build(e: &mut Entry, cache: Option<&BuildCache>, observer: &dyn Observer) -> bool {
    let Some(target) = &e.target else {
        let outcome = Prepared::Unusable {
            status: e.record.status,
            reason: e.record.reason.as_deref().unwrap_or_default(),
        };
        observer.event(&Event::Prepared {
            target: &e.name,
            outcome,
        });
        return false;
    };
    let rec = &mut e.record;
    match shootout_servers::build_or_rebuild(target, cache) {
        Ok(BuildOutcome::Skipped { reason }) => {
            observer.event(&Event::Prepared {
                target: &e.name,
                outcome: Prepared::Skipped { reason: &reason },
            });
            rec.status = TargetStatus::Skipped;
            rec.reason = Some(reason);
            return false;
        }
        Ok(BuildOutcome::Built { took, .. }) => rec.build_s = Some(took.as_secs_f64()),
        Ok(BuildOutcome::Restored { .. } | BuildOutcome::UpToDate) => {}
        Err(err) => {
            observer.event(&Event::Prepared {
                target: &e.name,
                outcome: Prepared::BuildFailed { reason: &err.what },
            });
            rec.status = TargetStatus::BuildFailed;
            rec.reason = Some(err.what.clone());
            rec.log_tail = Some(err.tail.clone());
            return false;
        }
    }
    observer.event(&Event::Built {
        target: &e.name,
        build_s: rec.build_s,
    });
    rec.footprint_bytes = Some(shootout_servers::footprint_bytes(target));
    rec.provenance = Some(provenance(target));
    true
}

/// What the build resolved (shootout_servers::provenance), as stored.
fn provenance(target: &Target) -> shootout_store::Provenance {
    use shootout_servers::provenance::{Found, NotRecorded};
    use shootout_store::{PackageVersion, Recorded};
    let recorded = |r: Result<Found, NotRecorded>| match r {
        Ok(f) => Recorded::Found {
            version: f.version,
            source: f.source,
        },
        Err(e) => Recorded::Missing {
            not_recorded: e.to_string(),
        },
    };
    let p = shootout_servers::provenance::provenance(target);
    shootout_store::Provenance {
        packages: p
            .packages
            .into_iter()
            .map(|pkg| PackageVersion {
                name: pkg.name,
                recorded: recorded(pkg.version),
            })
            .collect(),
        runtime: recorded(p.runtime),
        build: shootout_servers::build_cache::key(target)
            .ok()
            .map(|k| k.hex().chars().take(12).collect()),
    }
}

/// Verifies one built target against SPEC.md.
fn verify(e: &mut Entry, opts: &VerifyOptions, observer: &dyn Observer) {
    let Some(target) = &e.target else { return };
    let rec = &mut e.record;
    let report = shootout_servers::verify_target(target, opts);
    rec.verify = Some(verify_json(&report));
    if report.passed() {
        observer.event(&Event::Prepared {
            target: &e.name,
            outcome: Prepared::Verified {
                build_s: rec.build_s,
            },
        });
        return;
    }
    let first = report
        .failures()
        .map(|(c, f)| format!("{}: {f}", c.column.name()))
        .next()
        .unwrap_or_else(|| "verification failed".into());
    let first = first.lines().next().unwrap_or_default().to_string();
    rec.status = if report.ready_after.is_none() {
        TargetStatus::StartFailed
    } else {
        TargetStatus::VerifyFailed
    };
    rec.log_tail = Some(shootout_servers::tail::log_tail(&report.log, 20));
    observer.event(&Event::Prepared {
        target: &e.name,
        outcome: Prepared::Failed {
            status: rec.status,
            reason: &first,
        },
    });
    rec.reason = Some(first);
}

fn verify_json(r: &shootout_servers::VerifyReport) -> serde_json::Value {
    serde_json::json!({
        "passed": r.passed(),
        "ready_s": r.ready_after.map(|d| d.as_secs_f64()),
        "cpus": r.cpu_use.map(|u| serde_json::json!({
            "given": u.given,
            "used": u.used,
            "others": u.others,
            "needed": u.needed(),
        })),
        "checks": r.checks.iter().map(|c| serde_json::json!({
            "column": c.column.name(),
            "aspect": format!("{:?}", c.aspect).to_lowercase(),
            "ok": c.result.is_ok(),
            "failure": c.result.as_ref().err().map(|f| f.to_string()),
        })).collect::<Vec<_>>(),
    })
}
