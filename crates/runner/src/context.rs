//! What every part of a session reads: the [`SessionContext`] (the study,
//! the target, where it runs, the CPUs, the observers) and the engine plan of one level
//! against the running server ([`plan_for`]), with what every response must
//! be ([`expect_for`]). The session (`crate::measure`), its warm-up
//! (`crate::warmup`) and capacity searches (`crate::capacity`) build on it.

use crate::database::Database;
use crate::event::Observer;
use crate::interrupt::Interrupt;
use crate::liveness::RunLock;
use crate::place::Place;
use crate::tls::RunTls;
use shootout_contract::expect::expect_request;
use shootout_engine::{Expect, HttpVersion, Plan, RequestSpec, WsOptions};
use shootout_servers::Target;
use shootout_store::Pinning;
use shootout_study::{Level, Scenario, Study};
use std::net::SocketAddr;
use std::time::Duration;

/// What a session needs besides the session itself.
pub struct SessionContext<'a> {
    pub study: &'a Study,
    pub target: &'a Target,
    pub pinning: &'a Pinning,
    /// Where the target runs, picked once for the run.
    pub(crate) place: &'a dyn Place,
    /// Generator threads.
    pub threads: usize,
    pub settle: Duration,
    pub settle_after: Duration,
    pub interrupt: &'a Interrupt,
    pub observer: &'a dyn Observer,
    /// Where the running server is recorded for a later run to clean up.
    pub alive: &'a RunLock,
    /// The database scenarios' PostgreSQL, when the study has any.
    pub database: Option<&'a Database>,
    /// `--wait-quiet`: wait up to this long for quiet CPUs before each
    /// level, and measure a disturbed level once more.
    pub wait_quiet: Option<Duration>,
    /// The run's certificates, when the study has TLS levels.
    pub tls: Option<&'a RunTls>,
    /// The target's `warmup_min`, scaled like every duration of the run:
    /// load each start of it gets before its first measurement.
    pub warmup_min: Duration,
}

impl std::fmt::Debug for SessionContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionContext")
            .field("target", &self.target.name)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

/// The engine plan for one level against the server at `at` (its TLS
/// port for a TLS level, verified against the run's CA). The level's
/// workload is already valid; what can still fail is the part known only
/// now (threads, generator CPUs). Every response is checked against
/// [`expect_for`] the level.
pub fn plan_for(
    cx: &SessionContext<'_>,
    sc: &Scenario,
    level: &Level,
    at: SocketAddr,
) -> Result<Plan, shootout_engine::PlanError> {
    builder_for(cx, sc, level, at)?.build()
}

/// [`plan_for`]'s plan before it is built, for a level that changes a
/// setting (an overload level's warm-up and per-second histograms).
pub(crate) fn builder_for(
    cx: &SessionContext<'_>,
    sc: &Scenario,
    level: &Level,
    at: SocketAddr,
) -> Result<shootout_engine::PlanBuilder, shootout_engine::PlanError> {
    let path = sc.path_for(level);
    let scheme = match (level.ws.is_some(), level.protocol.is_tls()) {
        (true, _) => "ws",
        (false, true) => "https",
        (false, false) => "http",
    };
    let url = format!("{scheme}://{at}{path}");
    let expect = expect_for(sc, level);
    let mut headers = Vec::new();
    if !sc.body.is_empty() {
        headers.push(("Content-Type".to_string(), "application/json".to_string()));
    }
    let mut builder = Plan::builder(
        shootout_engine::Endpoint::parse_with(&url, cx.place.reach())?,
        level.workload.clone(),
    );
    if let Some(tls) = cx.tls.filter(|_| level.protocol.is_tls()) {
        builder = builder.tls(tls.options(level.protocol, level.tls_resume));
    }
    if let Some(m) = &sc.mix {
        builder = builder.mix(Some(m.mix.clone()));
    }
    match level.protocol.version() {
        // A WebSocket level speaks it through its ws:// URL.
        HttpVersion::Http1 | HttpVersion::WebSocket => {}
        HttpVersion::Http2 => builder = builder.http2(Some(level.streams)),
    }
    if let Some(ws) = level.ws {
        builder = builder.websocket(WsOptions {
            message_size: ws.message_size,
            binary: ws.binary,
            hold: ws.hold,
            ping_every: ws.ping_every,
        });
    }
    if let Some(seed) = sc.seed {
        builder = builder.seed(seed);
    }
    // Poisson arrivals need a rate: a closed loop (an auto warm-up's
    // windows, a capacity search's probe) has none.
    if level.load().is_open_loop() {
        builder = builder.arrival(sc.arrival);
    }
    Ok(builder
        .request(RequestSpec {
            method: sc.method.clone(),
            headers,
            body: sc.body.clone(),
        })
        .warmup(sc.warmup.engine())
        .timeout(sc.timeout)
        .threads(cx.threads)
        .cpus(cx.pinning.generator_cpus.clone())
        .keepalive(level.keepalive)
        .pipeline(level.pipeline)
        .expect(expect))
}

/// What every response of a level must be: what SPEC.md says the
/// request's route answers (see [`shootout_contract::expect`]), so a
/// wrong answer counts as a mismatch, not as a request served.
pub fn expect_for(sc: &Scenario, level: &Level) -> Expect {
    if level.ws.is_some() {
        // The engine checks every echo against its message.
        return Expect::default();
    }
    expect_request(&sc.method, &sc.path_for(level), &sc.body)
}
