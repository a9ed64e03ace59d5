//! One session: start a target pinned to the server CPUs, wait until it is
//! ready (the startup time), let it settle, read its idle memory, then for
//! each scenario level warm up (for a fixed time inside the measured plan,
//! or until steady first, [`crate::warmup`]) and load it through the engine while a
//! sampler reads its meter, settle again, read the after-memory and hand
//! the measurement over to be committed at once. Finally stop it (asked,
//! then killed after its grace). The target runs where the context's
//! place (`place.rs`) puts it; a figure that place cannot give
//! fails the level, never a zero.

use crate::budget;
pub use crate::context::{expect_for, plan_for, SessionContext};
use crate::error::{EngineRefusal, SessionError};
use crate::event::{Event, LoadLabel};
use crate::guard;
use crate::place::{Contestant, Liveness, Meter, StartSpec};
use crate::procfs::MIB;
use crate::quiet_wait;
use crate::sampler::{LoadUsage, Sampler};
use crate::schedule::Session;
use crate::warmup::{warm_up, WarmedUp};
use shootout_engine::{Control, HttpVersion, LoadReport, Plan};
use shootout_servers::{Limits, StartError};
use shootout_store::Measurement;
use shootout_study::{Level, Resources, Scenario};
use std::cell::Cell;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a target may take to answer its ready route.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// A started server and what is known of it.
pub(crate) struct Running {
    pub(crate) server: Box<dyn Contestant>,
    /// Where its ports are.
    host: IpAddr,
    /// Its CPU and memory, as its place reads them.
    meter: Arc<dyn Meter>,
    pub(crate) port: u16,
    /// Its TLS port, when the run has TLS levels and it serves them.
    pub(crate) tls_port: Option<u16>,
    /// Why its TLS levels are skipped (its manifest does not claim them).
    tls_refused: Option<String>,
    /// Why its HTTP/2 levels are skipped (its manifest does not claim h2).
    h2_refused: Option<String>,
    /// Where it serves `/ws` (`port`, or its own `WS_PORT` process), when
    /// the run has WebSocket levels and it claims `ws`.
    pub(crate) ws_port: Option<u16>,
    /// Why its WebSocket levels are skipped (its manifest does not claim ws).
    ws_refused: Option<String>,
    startup: Duration,
    /// Load this start has had so far (warm-ups and measured loads), to
    /// owe the target's `warmup_min` only once per start.
    loaded: Cell<Duration>,
}

impl Running {
    /// Its `port`, as the generator reaches it.
    pub(crate) fn at(&self, port: u16) -> SocketAddr {
        SocketAddr::new(self.host, port)
    }

    /// The port a level's load goes to, or why the server does not serve
    /// the level's protocol (its manifest's word).
    fn port_for(&self, level: &Level) -> Result<u16, &str> {
        if level.ws.is_some() {
            return self
                .ws_port
                .ok_or_else(|| self.ws_refused.as_deref().unwrap_or("no WebSocket port"));
        }
        if !level.protocol.is_tls() {
            return Ok(self.port);
        }
        if let Some(why) = self
            .h2_refused
            .as_deref()
            .filter(|_| level.protocol.version() == HttpVersion::Http2)
        {
            return Err(why);
        }
        self.tls_port
            .ok_or_else(|| self.tls_refused.as_deref().unwrap_or("no TLS port"))
    }

    /// A failed measurement: `reason` and the server log's tail.
    pub(crate) fn lost(&self, reason: impl std::fmt::Display) -> SessionError {
        SessionError::Failed {
            reason: reason.to_string(),
            log_tail: self.server.log_tail(20),
        }
    }
}

/// Runs one session; `record` commits each measurement the moment it ends.
pub fn run_session(
    cx: &SessionContext<'_>,
    session: &Session,
    estimate_of: &dyn Fn(&Scenario, &Level) -> f64,
    record: &mut dyn FnMut(&Measurement) -> Result<(), shootout_store::StoreError>,
) -> Result<(), SessionError> {
    let budgets: Vec<_> = session
        .scenarios
        .iter()
        .flat_map(|&si| cx.study.scenarios[si].levels.iter().map(|l| l.resources))
        .collect();
    let mut run = start(cx, &budget::limits(&budgets))?;
    cx.interrupt.sleep(cx.settle);
    let result = run
        .meter
        .memory(false)
        .rss
        .required("memory (RSS)")
        .map_err(|why| run.lost(why))
        .and_then(|mut idle| session_levels(cx, &mut run, session, estimate_of, record, &mut idle));
    stop(cx, run)?;
    result
}

/// Every level of a session's scenarios on its start, and the levels a
/// cost scenario derives from its last level's (a closed loop's)
/// throughput on this start, numbered after it.
fn session_levels(
    cx: &SessionContext<'_>,
    run: &mut Running,
    session: &Session,
    estimate_of: &dyn Fn(&Scenario, &Level) -> f64,
    record: &mut dyn FnMut(&Measurement) -> Result<(), shootout_store::StoreError>,
    idle_rss: &mut u64,
) -> Result<(), SessionError> {
    for &si in &session.scenarios {
        let sc = &cx.study.scenarios[si];
        for (li, level) in sc.levels.iter().enumerate() {
            // The first level of a start also pays the target's minimum.
            let owed = cx.warmup_min.saturating_sub(run.loaded.get());
            let step = Step {
                session,
                scenario: sc,
                index: li as u32,
                level,
                estimate_s: estimate_of(sc, level)
                    + owed.saturating_sub(sc.warmup.expected()).as_secs_f64(),
                derived: None,
            };
            if let Err(why) = run.port_for(level) {
                skip_level(cx, why, &step);
                continue;
            }
            let (mut m, after_rss) = measure_quietly(cx, run, &step, *idle_rss)?;
            *idle_rss = after_rss;
            // A cost scenario's capacity is its last level (a closed loop);
            // levels before it are measured as written.
            let Some(cost) = sc.cost.as_ref().filter(|_| li + 1 == sc.levels.len()) else {
                record(&m).map_err(SessionError::Record)?;
                continue;
            };
            m.parts.standing =
                crate::cost::standing(run.meter.as_ref(), cost.standing, cx.interrupt)
                    .map_err(|why| run.lost(why))?;
            record(&m).map_err(SessionError::Record)?;
            if cx.interrupt.is_stopped() {
                return Err(SessionError::Interrupted);
            }
            let derived = crate::cost::derived(level, cost, m.summary.rps)
                .map_err(|e| SessionError::Engine(EngineRefusal::from(e)))?;
            for (k, d) in derived.iter().enumerate() {
                let quick = derived_scenario(sc, d.overload.is_some());
                let step = Step {
                    session,
                    scenario: &quick,
                    index: (li + 1 + k) as u32,
                    level: &d.level,
                    estimate_s: estimate_of(&quick, &d.level),
                    derived: Some(d),
                };
                let (m, after_rss) = measure_quietly(cx, run, &step, *idle_rss)?;
                *idle_rss = after_rss;
                record(&m).map_err(SessionError::Record)?;
            }
        }
    }
    Ok(())
}

/// A cost scenario as its derived levels run it: the server is warm from
/// the closed loop of this start, so each derived level warms up for a
/// fixed half second at its own load inside its plan (an overload level
/// not at all: its phases start with the measurement, and it records none).
fn derived_scenario(sc: &Scenario, overload: bool) -> Scenario {
    let warmup = if overload {
        Duration::ZERO
    } else {
        shootout_study::cost::DERIVED_WARMUP
    };
    Scenario {
        warmup: shootout_study::Warmup::Fixed(warmup),
        ..sc.clone()
    }
}

/// A level over a protocol the server does not serve: said, with the
/// manifest's reason, and taken off the progress.
fn skip_level(cx: &SessionContext<'_>, reason: &str, step: &Step<'_>) {
    cx.observer.event(&Event::LevelSkipped {
        load: &step.label(cx).to_string(),
        reason,
    });
    cx.observer.event(&Event::Skip {
        measurements: 1,
        estimate_s: step.estimate_s,
    });
}

/// One level's measurement, checked to be the contestant's. With
/// `--wait-quiet` it waits for quiet CPUs first, and a measurement that
/// still came out disturbed is dropped and taken once more (the second is
/// kept, flagged if it is disturbed too).
fn measure_quietly(
    cx: &SessionContext<'_>,
    run: &mut Running,
    step: &Step<'_>,
    idle_rss: u64,
) -> Result<(Measurement, u64), SessionError> {
    let Some(cap) = cx.wait_quiet else {
        return measure_checked(cx, run, step, idle_rss);
    };
    let load = step.label(cx).to_string();
    quiet_wait::before_level(cx, &load, cap);
    let (m, rss) = measure_checked(cx, run, step, idle_rss)?;
    let Some(seen) = quiet_wait::disturbance(&m) else {
        return Ok((m, rss));
    };
    cx.observer.event(&Event::Remeasure {
        load: &load,
        seen: &seen,
    });
    quiet_wait::before_level(cx, &load, cap);
    measure_checked(cx, run, step, rss)
}

/// One level's measurement if the server was there and answering before,
/// during and after it.
fn measure_checked(
    cx: &SessionContext<'_>,
    run: &mut Running,
    step: &Step<'_>,
    idle_rss: u64,
) -> Result<(Measurement, u64), SessionError> {
    guard::check_server(run.server.as_ref(), run.port, "before the level")
        .map_err(|r| run.lost(r))?;
    if let Some(tls) = run.tls_port.filter(|_| step.level.protocol.is_tls()) {
        guard::check_server(run.server.as_ref(), tls, "before the level")
            .map_err(|r| run.lost(r))?;
    }
    if let Some(ws) = run
        .ws_port
        .filter(|&p| step.level.ws.is_some() && p != run.port)
    {
        guard::check_server(run.server.as_ref(), ws, "before the level")
            .map_err(|r| run.lost(r))?;
    }
    let (m, rss) = measure_level(cx, run, step, idle_rss)?;
    theirs(run, &m, step.level)?;
    Ok((m, rss))
}

/// Whether a measurement is the contestant's: it was alive, runnable and
/// alone on its port through the level, it answered, and no process of it
/// was killed for memory. Otherwise the level fails with the reason and is
/// not recorded: a failure is never a number. One exception: a cost level
/// derived from the capacity (not an overload) that the generator did not
/// offer at all is recorded, its cost part saying "not offered" and why,
/// so the target keeps its other points and the server is not blamed.
fn theirs(run: &mut Running, m: &Measurement, level: &Level) -> Result<(), SessionError> {
    guard::check_server(run.server.as_ref(), run.port, "during the level")
        .map_err(|r| run.lost(r))?;
    let unoffered_point = m.parts.derived.is_some()
        && m.parts.overload.is_none()
        && m.parts.cost.as_ref().is_some_and(|c| c.not_offered);
    if !unoffered_point {
        guard::check_answered(&m.summary, &m.timeline).map_err(|r| run.lost(r))?;
    }
    if m.oom_killed.unwrap_or(0) > 0 {
        return Err(run.lost(budget::oom_reason(level.resources.memory)));
    }
    Ok(())
}

/// Starts the target pinned to the server CPUs under `limits` and waits
/// until it is ready; a start the OOM killer ended fails the target.
pub(crate) fn start(cx: &SessionContext<'_>, limits: &Limits) -> Result<Running, SessionError> {
    let target = cx.target;
    let log = target.server_log("run");
    // Picked at once, so no two of the ports are one.
    let [port, tls_pick, ws_pick] = cx
        .place
        .free_ports()
        .map_err(|e| start_err(format!("no free port: {e}"), ""))?;
    let mut env = cx
        .database
        .map(|db| db.access().server_env())
        .unwrap_or_default();
    let (tls_port, tls_refused) = tls_port(cx, tls_pick, &mut env);
    let (ws_port, ws_refused) = ws_port(cx, port, ws_pick, &mut env);
    let spec = StartSpec {
        target,
        port,
        log: &log,
        cpus: &cx.pinning.server_cpus,
        env: &env,
        limits,
    };
    let mut server = cx
        .place
        .start(&spec)
        .map_err(|e| start_err(e.to_string(), ""))?;
    cx.alive.note_server(server.process_group());
    let host = server.host();
    let at = |p: Option<u16>| p.map(|p| SocketAddr::new(host, p));
    let ready = budget::wait_ready(server.as_mut(), limits, READY_TIMEOUT, cx.interrupt)
        .map_err(NotReady::from)
        .and_then(|startup| tls_ready(cx, at(tls_port)).map(|()| startup))
        .and_then(|startup| ws_ready(cx, at(ws_port.filter(|&p| p != port))).map(|()| startup));
    match ready {
        Ok(startup) => Ok(Running {
            meter: server.meter(),
            host,
            loaded: Cell::new(Duration::ZERO),
            server,
            port,
            tls_port,
            tls_refused,
            h2_refused: (!target.protocols.h2).then(|| {
                format!(
                    "{} does not claim \"h2\" in its manifest's protocols",
                    target.name
                )
            }),
            ws_port,
            ws_refused,
            startup,
        }),
        Err(e) => {
            let oom = budget::oom_kills(server.as_ref()).unwrap_or(0);
            drop(server);
            cx.alive.note_server(None);
            if cx.interrupt.is_stopped() {
                return Err(SessionError::Interrupted);
            }
            let tail = shootout_servers::tail::log_tail(&log, 20);
            if oom > 0 {
                return Err(SessionError::Failed {
                    reason: budget::oom_reason(limits.budget.memory),
                    log_tail: tail,
                });
            }
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default().to_string();
            Err(start_err(first, &tail))
        }
    }
}

/// With TLS levels in the run: `port` as the server's TLS port and the
/// variables that start it (added to `env`), or why it cannot serve them.
fn tls_port(
    cx: &SessionContext<'_>,
    port: u16,
    env: &mut Vec<(String, String)>,
) -> (Option<u16>, Option<String>) {
    let Some(tls) = cx.tls else {
        return (None, None);
    };
    match tls.server_env(cx.target, port) {
        Ok(vars) => {
            env.extend(vars);
            (Some(port), None)
        }
        Err(why) => (None, Some(why.to_string())),
    }
}

/// With WebSocket levels in the run: where the target serves `/ws` (on
/// `port`, or on `pick` as its `WS_PORT`, added to `env`), or why it
/// cannot serve them.
fn ws_port(
    cx: &SessionContext<'_>,
    port: u16,
    pick: u16,
    env: &mut Vec<(String, String)>,
) -> (Option<u16>, Option<String>) {
    if !cx.study.scenarios.iter().any(Scenario::is_websocket) {
        return (None, None);
    }
    let t = cx.target;
    match shootout_servers::ws_env(&t.name, t.protocols, t.ws_place, pick) {
        Ok(vars) => {
            let own = t.ws_place == shootout_servers::WsPlace::OwnPort;
            env.extend(vars);
            (Some(if own { pick } else { port }), None)
        }
        Err(why) => (None, Some(why.to_string())),
    }
}

/// Why a started target is not ready to be measured.
#[derive(Debug, thiserror::Error)]
enum NotReady {
    #[error(transparent)]
    Start(#[from] StartError),
    /// Its TLS port, which may open after the cleartext one, did not.
    #[error("its TLS port {port} did not open within {secs} s")]
    TlsPort { port: u16, secs: u64 },
    /// Its WebSocket process's port (`WS_PORT`) did not open.
    #[error("its WebSocket port {port} (WS_PORT) did not open within {secs} s")]
    WsPort { port: u16, secs: u64 },
}

/// Waits for a second process's WebSocket port, which opens on its own.
fn ws_ready(cx: &SessionContext<'_>, at: Option<SocketAddr>) -> Result<(), NotReady> {
    match at {
        Some(a) if !crate::tls::wait_port(a, READY_TIMEOUT, &|| cx.interrupt.is_stopped()) => {
            Err(NotReady::WsPort {
                port: a.port(),
                secs: READY_TIMEOUT.as_secs(),
            })
        }
        _ => Ok(()),
    }
}

/// Waits for the TLS port, which may open after the cleartext one.
fn tls_ready(cx: &SessionContext<'_>, at: Option<SocketAddr>) -> Result<(), NotReady> {
    match at {
        Some(a) if !crate::tls::wait_port(a, READY_TIMEOUT, &|| cx.interrupt.is_stopped()) => {
            Err(NotReady::TlsPort {
                port: a.port(),
                secs: READY_TIMEOUT.as_secs(),
            })
        }
        _ => Ok(()),
    }
}

/// One level of one scenario, within a session.
struct Step<'a> {
    session: &'a Session,
    scenario: &'a Scenario,
    index: u32,
    level: &'a Level,
    estimate_s: f64,
    /// A level a cost scenario derived on this start (its probes' input).
    derived: Option<&'a crate::cost::DerivedLevel>,
}

impl Step<'_> {
    fn label<'a>(&'a self, cx: &'a SessionContext<'_>) -> LoadLabel<'a> {
        LoadLabel {
            repetition: self.session.repetition,
            repetitions: cx.study.repetitions.max(self.session.repetition + 1),
            target: &cx.target.name,
            scenario: self.scenario.shown_name(),
            level: &self.level.label,
        }
    }
}

/// A finished load and what the samplers saw while it ran.
struct Loaded {
    report: LoadReport,
    usage: LoadUsage,
    /// The database's own tree, for the scenarios that use it.
    db_usage: Option<LoadUsage>,
}

/// Before a capacity search: loads the server for what is left of its
/// `warmup_min` this start (a JIT's compile time), with the scenario's
/// warm-up rule over `level`'s closed loop, so the search's probe does not
/// size every level by a cold server. Nothing owed, nothing run.
pub(crate) fn pay_warmup_min(
    cx: &SessionContext<'_>,
    run: &Running,
    sc: &Scenario,
    level: &Level,
    label: &LoadLabel<'_>,
) -> Result<(), SessionError> {
    let owed = cx.warmup_min.saturating_sub(run.loaded.get());
    if owed.is_zero() {
        return Ok(());
    }
    let alive = || ensure_alive(cx, run);
    let started = Instant::now();
    warm_up(cx, run.at(run.port), label, sc, level, owed, &alive)?;
    run.loaded.set(run.loaded.get() + started.elapsed());
    Ok(())
}

/// Loads one level while the sampler watches the server, settles, and
/// returns the measurement and the server's RSS after it.
fn measure_level(
    cx: &SessionContext<'_>,
    run: &Running,
    step: &Step<'_>,
    idle_rss: u64,
) -> Result<(Measurement, u64), SessionError> {
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    budget::apply(run.server.as_ref(), &step.level.resources)?;
    let oom_before = budget::oom_kills(run.server.as_ref());
    let at = run.at(run.port_for(step.level).unwrap_or(run.port));
    let plan = match step.derived.and_then(|d| d.overload) {
        // An overload level's phases start with the measurement, and its
        // goodput is counted per second.
        Some(_) => crate::context::builder_for(cx, step.scenario, step.level, at)
            .and_then(|b| b.warmup(Duration::ZERO).interval_histograms(true).build()),
        None => plan_for(cx, step.scenario, step.level, at),
    }
    .map_err(EngineRefusal::from)?;
    let alive = || ensure_alive(cx, run);
    let label = step.label(cx);
    let owed = cx.warmup_min.saturating_sub(run.loaded.get());
    let loaded = warm_up(cx, at, &label, step.scenario, step.level, owed, &alive)
        .and_then(|w| {
            let started_at = shootout_store::now_rfc3339_millis();
            load_sampled(cx, run, step, &plan).map(|l| (w, started_at, l))
        })
        .and_then(|(w, started_at, l)| match figures_missing(run, &l) {
            Some(why) => Err(run.lost(why)),
            None => Ok((w, started_at, l)),
        })
        .inspect_err(|_| {
            cx.observer.event(&Event::LoadEnded {
                estimate_s: step.estimate_s,
                measurement: None,
            });
        });
    let (warmed, started_at, loaded) = loaded?;
    run.loaded.set(
        run.loaded.get()
            + Duration::from_secs_f64(warmed.seconds + loaded.report.summary.duration_s),
    );
    drain(cx, run, step.scenario);
    cx.interrupt.sleep(cx.settle_after);
    let after_rss = run
        .meter
        .memory(false)
        .rss
        .required("memory (RSS)")
        .map_err(|why| run.lost(why))?;
    let oom_killed = oom_before.map(|_| budget::oom_since(run.server.as_ref(), oom_before));
    let parts = crate::probe::parts(&crate::probe::Seen {
        report: &loaded.report,
        server_cpu_s: loaded.usage.cpu_s,
        derived: step.derived,
        rss_idle_bytes: idle_rss,
        rss_peak_bytes: loaded.usage.rss_peak_bytes,
    });
    let m = measurement(MeasurementParts {
        target: &cx.target.name,
        scenario: step.scenario.shown_name(),
        level: step.index,
        level_label: &step.level.label,
        repetition: step.session.repetition,
        started_at,
        loaded,
        idle_rss,
        after_rss,
        startup: run.startup,
        // Stored as the budget it was: a quota above the pinned CPUs
        // cannot bind (docs/columns.md `cpu_quota`).
        resources: Resources {
            cpus: step
                .level
                .resources
                .binding_cpus(shootout_servers::server_cpus(&cx.pinning.server_cpus)),
            ..step.level.resources
        },
        oom_killed,
        warmed,
        parts,
    });
    cx.observer.event(&Event::LoadEnded {
        estimate_s: step.estimate_s,
        measurement: Some(&m),
    });
    Ok((m, after_rss))
}

/// Why a load's server (or database) figures cannot be recorded: a figure
/// its place could not give is a failed level, never a zero. A server that
/// died or froze during the load is the reason then, not the figures it
/// left (a deleted pod is no longer in its kubelet's summary).
fn figures_missing(run: &Running, l: &Loaded) -> Option<String> {
    let db = l.db_usage.as_ref().and_then(|u| u.unavailable.as_ref());
    let completed = l.report.summary.requests.completed;
    // A server that answered requests used CPU: a kubelet's figure that
    // did not move over the level is stale (seen once on the local
    // cluster: 0.00 s over 544 req/s), not a zero.
    let still = (l.usage.cpu_source == Some(crate::place::Source::Kubelet)
        && l.usage.cpu_s <= 0.0
        && completed > 0)
        .then(|| {
            format!(
                "the server's CPU time from its kubelet did not move over a level it answered \
                 {completed} requests in: the figure is stale"
            )
        });
    let why = l.usage.unavailable.as_ref().or(db).or(still.as_ref())?;
    Some(
        guard::check_server(run.server.as_ref(), run.port, "during the level")
            .err()
            .map_or_else(|| why.clone(), |r| r.to_string()),
    )
}

/// A start failure when no process of the server is left.
pub(crate) fn ensure_alive(cx: &SessionContext<'_>, run: &Running) -> Result<(), SessionError> {
    match run.server.liveness() {
        Liveness::Gone
        | Liveness::Exited {
            others_left: false, ..
        } => {}
        _ => return Ok(()),
    }
    let tail = run.server.log_tail(20);
    Err(start_err(
        format!("{} exited during the study", cx.target.name),
        &tail,
    ))
}

/// Runs `plan` through the engine, its live counters announced to the
/// observer and the interrupt, while samplers watch the server's process
/// tree (and the database's, for the scenarios that use it).
fn load_sampled(
    cx: &SessionContext<'_>,
    run: &Running,
    step: &Step<'_>,
    plan: &Plan,
) -> Result<Loaded, SessionError> {
    let control = Arc::new(Control::new());
    cx.interrupt.set_control(Some(control.clone()));
    cx.observer.event(&Event::LoadStarted {
        load: &step.label(cx),
        control: &control,
        estimate_s: step.estimate_s,
    });
    let cpus = &cx.pinning.generator_cpus;
    let watch = crate::quiet::watched_cpus(&cx.pinning.server_cpus, cpus);
    let sampler = Sampler::watching(run.meter.clone(), control.clone(), cpus.clone(), watch);
    let db_sampler = cx
        .database
        .filter(|_| step.scenario.needs_database())
        .map(|db| Sampler::watching(db.meter(), control.clone(), cpus.clone(), vec![]));
    let report = cx.place.generator().run(plan, &control);
    let usage = sampler.finish();
    let db_usage = db_sampler.map(Sampler::finish);
    cx.interrupt.set_control(None);
    if cx.interrupt.is_stopped() {
        return Err(SessionError::Interrupted);
    }
    Ok(Loaded {
        report: report?,
        usage,
        db_usage,
    })
}

/// Waits for the server (and the database) to finish what the load left
/// queued, so it does not spill into the next level; warns when it did not.
pub(crate) fn drain(cx: &SessionContext<'_>, run: &Running, sc: &Scenario) {
    let db = cx.database.map(|db| db.meter());
    let mut meters: Vec<&dyn Meter> = vec![run.meter.as_ref()];
    if let Some(m) = &db {
        meters.push(m.as_ref());
    }
    let d = crate::drain::wait_quiet(&meters, sc.timeout, cx.interrupt);
    if !d.quiet && !cx.interrupt.is_stopped() {
        cx.observer.event(&Event::StillBusy {
            target: &cx.target.name,
            waited_s: d.waited.as_secs_f64(),
        });
    }
}

/// Stops the server: SIGKILL at once when interrupted (no 5 s grace while
/// the user waits), else SIGTERM with grace, warning about leftovers.
pub(crate) fn stop(cx: &SessionContext<'_>, run: Running) -> Result<(), SessionError> {
    if cx.interrupt.is_stopped() {
        drop(run);
        cx.alive.note_server(None);
        return Err(SessionError::Interrupted);
    }
    let leftovers = run.server.stop().leftovers;
    cx.alive.note_server(None);
    if leftovers {
        cx.observer.event(&Event::Leftovers {
            target: &cx.target.name,
        });
    }
    Ok(())
}

fn start_err(reason: String, tail: &str) -> SessionError {
    SessionError::Start {
        reason,
        log_tail: tail.to_string(),
    }
}

struct MeasurementParts<'a> {
    target: &'a str,
    scenario: &'a str,
    level: u32,
    level_label: &'a str,
    repetition: u32,
    started_at: String,
    loaded: Loaded,
    idle_rss: u64,
    after_rss: u64,
    startup: Duration,
    resources: Resources,
    /// OOM kills over the whole level (None: no cgroup).
    oom_killed: Option<u64>,
    warmed: WarmedUp,
    parts: shootout_store::parts::Parts,
}

fn measurement(p: MeasurementParts<'_>) -> Measurement {
    let Loaded {
        report,
        usage,
        db_usage,
    } = p.loaded;
    let completed = report.summary.requests.completed as f64;
    let cpu = usage.cpu_s;
    let quiet = crate::quiet::assess(
        usage.cpus.as_ref(),
        crate::quiet::Ours {
            server_s: usage.cpu_s,
            generator_s: report.summary.generator.cpu_seconds,
            database_s: db_usage.as_ref().map(|d| d.cpu_s),
        },
    );
    Measurement {
        target: p.target.to_string(),
        scenario: p.scenario.to_string(),
        level: p.level,
        level_label: p.level_label.to_string(),
        repetition: p.repetition,
        started_at: p.started_at,
        generator_bound: report.summary.generator.cpu_utilization
            >= shootout_capacity::judge::CPU_SATURATED,
        summary: report.summary,
        histogram: report.histogram,
        histogram_uncorrected: report.uncorrected,
        timeline: report.timeline,
        rss_idle_mib: p.idle_rss as f64 / MIB,
        rss_peak_mib: usage.rss_peak_bytes.max(p.idle_rss) as f64 / MIB,
        rss_after_mib: p.after_rss as f64 / MIB,
        pss_peak_mib: usage.pss_peak_bytes.map(|b| b as f64 / MIB),
        server_cpu_s: cpu,
        req_per_cpu_s: if cpu > 0.0 { completed / cpu } else { 0.0 },
        startup_s: p.startup.as_secs_f64(),
        db_cpu_s: db_usage.as_ref().map(|u| u.cpu_s),
        db_rss_peak_mib: db_usage.as_ref().map(|u| u.rss_peak_bytes as f64 / MIB),
        resources_cpus: p.resources.cpus,
        resources_memory_mib: p.resources.memory_mib(),
        throttled_s: usage.cgroup.map(|d| d.throttled.as_secs_f64()),
        throttled_periods: usage.cgroup.map(|d| d.throttled_periods),
        oom_killed: p.oom_killed,
        memory_peak_mib: usage.cgroup_memory_peak_bytes.map(|b| b as f64 / MIB),
        db_memory_peak_mib: db_usage
            .and_then(|u| u.cgroup_memory_peak_bytes)
            .map(|b| b as f64 / MIB),
        warmup_s: Some(p.warmed.seconds),
        steady: p.warmed.steady,
        warmup_cv: p.warmed.window_cv,
        others_cpu_share: quiet.map(|d| d.others_cpu_share),
        steal_share: quiet.map(|d| d.steal_share),
        disturbed: quiet.is_some_and(|d| d.disturbed()),
        parts: p.parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_engine::{BodyMatch, Expect, StatusMatch};

    fn study(scenarios: &str) -> shootout_study::Study {
        let text = format!(
            "name = \"e\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"t\"]\n{scenarios}"
        );
        shootout_study::parse(std::path::Path::new("e.toml"), &text)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn an_overload_level_records_no_warm_up_and_a_fixed_rate_one_its_half_second() {
        let s = study(
            "[[scenario]]\nname = \"json\"\nload = { connections = 2, duration = \"2s\" }\n\
             cost = { rates = [100], overload = [\"200%\"] }\n",
        );
        let sc = &s.scenarios[0];
        // What `warm_up` records for a fixed warm-up with nothing owed.
        let recorded = |overload| derived_scenario(sc, overload).warmup.engine();
        assert_eq!(recorded(true), Duration::ZERO);
        assert_eq!(recorded(false), shootout_study::cost::DERIVED_WARMUP);
    }

    #[test]
    fn every_level_expects_what_its_route_answers() {
        let s = study(
            "[[scenario]]\nname = \"simple\"\nbody = '{\"payload\":\"abc\"}'\n\
             load = { connections = 1, requests = 5 }\n\
             [[scenario]]\nname = \"queries\"\n\
             levels = [{ connections = 1, requests = 5, queries = 20 }]\n\
             [[scenario]]\nname = \"json\"\npath = \"/plaintext\"\n\
             load = { connections = 1, requests = 5 }\n\
             [[scenario]]\nname = \"plaintext\"\npath = \"/elsewhere\"\n\
             load = { connections = 1, requests = 5 }\n",
        );
        let e: Vec<Expect> = s
            .scenarios
            .iter()
            .map(|sc| expect_for(sc, &sc.levels[0]))
            .collect();
        let exact = |b: &[u8]| Some(BodyMatch::Exact(b.to_vec()));
        assert_eq!(e[0].body, exact(br#"{"payload":"Hello, abc"}"#));
        assert_eq!(e[0].status, vec![StatusMatch::Code(200)]);
        assert!(matches!(e[1].body, Some(BodyMatch::Shape { .. })));
        assert_eq!(e[1].media_type.as_deref(), Some("application/json"));
        assert_eq!(e[2].body, exact(b"Hello, World!"), "the path's route");
        assert!(e[3].is_empty(), "no route, nothing known");
    }
}
