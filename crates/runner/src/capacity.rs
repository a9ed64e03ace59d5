//! The capacity scenarios of a session (`capacity = {..}` in a study): start
//! the target pinned like for any load, and for each scenario build the
//! plan exactly as a load level's ([`crate::measure::plan_for`]: endpoint,
//! request, expectations, generator CPUs), hand it to the capacity search
//! (`shootout_capacity::run`), pass its level events on to the
//! [`Observer`], stop when the [`Interrupt`] says so, and commit each
//! finished search. Load scenarios of the same session are measured by
//! [`crate::measure::run_session`] on their own server start.

use crate::event::{Event, LoadLabel};
use crate::measure::{
    drain, plan_for, sleep_unless_stopped, start, stop, SessionContext, SessionError,
};
use crate::schedule::Session;
use crate::study::Scenario;
use shootout_capacity::CapacityError;
pub use shootout_capacity::{
    CapacityResult, Event as SearchEvent, LevelRecord, LevelVerdict, Phase as SearchPhase, Verdict,
};
use shootout_servers::Server;
use shootout_store::{CapacitySearch, StoreError};

/// Runs the capacity scenarios `scenarios` (indices into the study) of
/// `session` on one server start; `record` commits each search.
pub fn run_capacity_session(
    cx: &SessionContext<'_>,
    session: &Session,
    scenarios: &[usize],
    record: &mut dyn FnMut(&CapacitySearch) -> Result<(), StoreError>,
) -> Result<(), SessionError> {
    let run = start(cx)?;
    sleep_unless_stopped(cx.settle, cx.interrupt);
    let mut result = Ok(());
    for &si in scenarios {
        let sc = &cx.study.scenarios[si];
        let searched = search(cx, session, sc, &run.server, run.port);
        if searched.is_ok() {
            drain(cx, &run, sc);
        }
        if let Err(e) = searched.and_then(|s| record(&s).map_err(SessionError::Record)) {
            result = Err(e);
            break;
        }
    }
    stop(cx, run)?;
    result
}

/// One search of one scenario against the running server.
fn search(
    cx: &SessionContext<'_>,
    session: &Session,
    sc: &Scenario,
    server: &Server,
    port: u16,
) -> Result<CapacitySearch, SessionError> {
    let Some(cap) = &sc.capacity else {
        return Err(SessionError::Engine(format!(
            "scenario {} has no capacity search",
            sc.name
        )));
    };
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    if !shootout_servers::process::group_alive(server.pgid()) {
        return Err(SessionError::Start {
            reason: format!("{} exited during the study", cx.target.name),
            log_tail: String::new(),
        });
    }
    let label = LoadLabel {
        repetition: session.repetition,
        repetitions: cx.study.repetitions,
        target: &cx.target.name,
        scenario: sc.name.as_str(),
        level: "capacity",
    };
    let plan = plan_for(cx, sc, &cap.template_level(), port)
        .map_err(|e| SessionError::Engine(e.to_string()))?;
    let settings = cap
        .settings()
        .map_err(|e| SessionError::Engine(e.to_string()))?;
    let estimate_s = cap.expected_seconds();
    cx.observer.event(&Event::CapacityStarted {
        load: &label,
        estimate_s,
    });
    let started_at = shootout_store::now_rfc3339_millis();
    let cancelled = || cx.interrupt.is_stopped();
    let mut on_event = |e: SearchEvent| {
        cx.observer.event(&Event::Capacity {
            load: &label,
            event: &e,
        });
    };
    let outcome = shootout_capacity::run(&plan, &settings, &cancelled, &mut on_event);
    let ended = |result: Option<&CapacityResult>| {
        cx.observer
            .event(&Event::CapacityEnded { estimate_s, result });
    };
    match outcome {
        Ok(result) => {
            ended(Some(&result));
            Ok(CapacitySearch {
                target: cx.target.name.clone(),
                scenario: sc.name.as_str().to_string(),
                repetition: session.repetition,
                started_at,
                result,
            })
        }
        Err(e) => {
            ended(None);
            Err(match e {
                CapacityError::Interrupted => SessionError::Interrupted,
                _ if cx.interrupt.is_stopped() => SessionError::Interrupted,
                e => SessionError::Engine(e.to_string()),
            })
        }
    }
}

/// `8000 req/s under p99<=10ms, error_rate<=0.1% (found, 15 levels)`.
pub fn brief(r: &CapacityResult) -> String {
    let slo: Vec<&str> = r.slo.iter().map(|t| t.text()).collect();
    let verdict = r.verdict.as_str();
    format!(
        "{} under {} ({verdict}{}, {} levels)",
        match (r.capacity_rps, r.lower_bound_rps) {
            (Some(c), _) => format!("{c:.0} req/s"),
            (None, Some(b)) => format!("at least {b:.0} req/s"),
            (None, None) => "no rate".to_string(),
        },
        slo.join(", "),
        if r.unstable { ", unstable" } else { "" },
        r.levels.len() + r.curve.len()
    )
}
