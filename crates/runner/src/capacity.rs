//! The capacity scenarios of a session (`capacity = {..}` in a study): start
//! the target pinned like for any load, and for each scenario build the
//! plan exactly as a load level's ([`crate::measure::plan_for`]: endpoint,
//! request, expectations, generator CPUs), hand it to the capacity search
//! (`shootout_capacity::run`), pass its level events on to the
//! [`Observer`], stop when the [`Interrupt`] says so, and commit each
//! finished search. Load scenarios of the same session are measured by
//! [`crate::measure::run_session`] on their own server start.

use crate::event::{Event, LoadLabel};
use crate::measure::{plan_for, sleep_unless_stopped, SessionContext, SessionError, READY_TIMEOUT};
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
    let (mut server, port) = start(cx)?;
    sleep_unless_stopped(cx.settle, cx.interrupt);
    let mut result = Ok(());
    for &si in scenarios {
        let sc = &cx.study.scenarios[si];
        if let Err(e) = search(cx, session, sc, &server, port)
            .and_then(|s| record(&s).map_err(SessionError::Record))
        {
            result = Err(e);
            break;
        }
    }
    cx.alive.note_server(None);
    if cx.interrupt.is_stopped() {
        drop(server); // SIGKILL at once: the user is waiting
        return Err(SessionError::Interrupted);
    }
    if server.stop().leftovers {
        cx.observer.event(&Event::Leftovers {
            target: &cx.target.name,
        });
    }
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
    let outcome = shootout_capacity::run(&plan, &cap.settings(), &cancelled, &mut on_event);
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

/// Starts the target pinned to the server CPUs, as for a load session
/// (`measure`'s own start is private to it).
fn start(cx: &SessionContext<'_>) -> Result<(Server, u16), SessionError> {
    let start_err = |reason: String, log_tail: String| SessionError::Start { reason, log_tail };
    let log = cx.target.server_log("run");
    let port = shootout_servers::free_port()
        .map_err(|e| start_err(format!("no free port: {e}"), String::new()))?;
    let env = cx
        .database
        .map(|db| db.access().server_env())
        .unwrap_or_default();
    let mut server = Server::start_env(cx.target, port, &log, &cx.pinning.server_cpus, &env)
        .map_err(|e| start_err(e.to_string(), String::new()))?;
    cx.alive.note_server(Some(server.pgid()));
    match server.wait_ready(READY_TIMEOUT) {
        Ok(_) => Ok((server, port)),
        Err(e) => {
            drop(server);
            cx.alive.note_server(None);
            if cx.interrupt.is_stopped() {
                return Err(SessionError::Interrupted);
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default().to_string();
            Err(start_err(first, shootout_servers::tail::log_tail(&log, 20)))
        }
    }
}

/// `8000 req/s under p99<=10ms, error_rate<=0.1% (found, 15 levels)`.
pub fn brief(r: &CapacityResult) -> String {
    let slo: Vec<&str> = r.slo.iter().map(|t| t.text()).collect();
    let verdict = match r.verdict {
        Verdict::Found => "found",
        Verdict::None => "none",
        Verdict::GeneratorLimited => "generator-limited",
    };
    format!(
        "{} under {} ({verdict}{}, {} levels)",
        r.capacity_rps
            .map_or("no rate".to_string(), |c| format!("{c:.0} req/s")),
        slo.join(", "),
        if r.unstable { ", unstable" } else { "" },
        r.levels.len() + r.curve.len()
    )
}
