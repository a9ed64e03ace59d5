//! The capacity scenarios of a session (`capacity = {..}` in a study): start
//! the target pinned like for any load, and for each scenario build the
//! plan exactly as a load level's ([`crate::measure::plan_for`]: endpoint,
//! request, expectations, generator CPUs), hand it to the capacity search
//! (`shootout_capacity::run`), pass its level events on to the
//! [`Observer`], stop when the [`Interrupt`] says so, and commit each
//! finished search. A target owed `warmup_min` (a JIT) is loaded for it
//! before its first search. Load scenarios of the same session are measured by
//! [`crate::measure::run_session`] on their own server start.

use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, LoadLabel};
use crate::measure::{
    drain, ensure_alive, pay_warmup_min, plan_for, start, stop, Running, SessionContext,
};
use crate::schedule::Session;
use shootout_capacity::{CapacityError, Event as SearchEvent};
use shootout_engine::{Load, Workload};
use shootout_store::{CapacitySearch, StoreError};
use shootout_study::{Capacity, Level, Scenario};

/// Runs the capacity scenarios `scenarios` (indices into the study) of
/// `session` on one server start; `record` commits each search.
pub fn run_capacity_session(
    cx: &SessionContext<'_>,
    session: &Session,
    scenarios: &[usize],
    record: &mut dyn FnMut(&CapacitySearch) -> Result<(), StoreError>,
) -> Result<(), SessionError> {
    let budgets: Vec<_> = scenarios
        .iter()
        .map(|&si| cx.study.scenarios[si].resources)
        .collect();
    let run = start(cx, &crate::budget::limits(&budgets))?;
    cx.interrupt.sleep(cx.settle);
    let mut result = Ok(());
    for &si in scenarios {
        let sc = &cx.study.scenarios[si];
        let searched = crate::budget::apply(run.server.as_ref(), &sc.resources)
            .and_then(|()| search(cx, session, sc, &run));
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
    run: &Running,
) -> Result<CapacitySearch, SessionError> {
    let Some(cap) = &sc.capacity else {
        return Err(EngineRefusal::NoSearch {
            scenario: sc.shown_name().to_string(),
        }
        .into());
    };
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    ensure_alive(cx, run)?;
    let label = LoadLabel {
        repetition: session.repetition,
        repetitions: cx.study.repetitions.max(session.repetition + 1),
        target: &cx.target.name,
        scenario: sc.shown_name(),
        level: "capacity",
    };
    pay_warmup_min(cx, run, sc, &probe_level(cap), &label)?;
    let plan =
        plan_for(cx, sc, &cap.template_level(), run.at(run.port)).map_err(EngineRefusal::from)?;
    let settings = cap
        .settings()
        .map_err(EngineRefusal::from)?
        .with_arrival(sc.arrival);
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
    cx.observer.event(&Event::CapacityEnded {
        estimate_s,
        result: outcome.as_ref().ok(),
    });
    match outcome {
        Ok(result) => Ok(CapacitySearch {
            target: cx.target.name.clone(),
            scenario: sc.shown_name().to_string(),
            repetition: session.repetition,
            started_at,
            result,
        }),
        Err(CapacityError::Interrupted) => Err(SessionError::Interrupted),
        Err(_) if cx.interrupt.is_stopped() => Err(SessionError::Interrupted),
        Err(e) => Err(EngineRefusal::from(e).into()),
    }
}

/// The search's closed-loop probe as a level: its connections (the
/// scenario's, else the search's own probe pool), for loading a server that
/// is owed `warmup_min` the way the probe will.
fn probe_level(cap: &Capacity) -> Level {
    let level = cap.template_level();
    let connections = cap
        .connections
        .unwrap_or(shootout_capacity::PROBE_CONNECTIONS);
    let workload = Workload::new(Load::Closed { connections }, *level.stop())
        .unwrap_or_else(|_| level.workload.clone());
    Level { workload, ..level }
}
