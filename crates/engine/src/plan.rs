//! The validated description of one load run: where to send, what to send,
//! how fast (a [`Workload`]), and when to stop. A [`Plan`] can only be built
//! through [`PlanBuilder::build`], which checks every rule, so a bad value is
//! reported by the field it concerns ([`crate::PlanField`]) and nothing is sent.
//! Front ends name the field in their own terms (a flag, a study key).
//!
//! A plan may be one [`Shard`] of a load split over processes: it keeps the
//! whole workload (what every shard agrees on) and runs its share of it, from
//! a wall-clock instant all shards share ([`PlanBuilder::start_at`]).

use crate::arrival::Arrival;
use crate::conn::SessionSpec;
use crate::error::{PlanError, PlanField};
use crate::expect::Expect;
use crate::http_version::HttpVersion;
use crate::mix::Mix;
use crate::shard::Shard;
use crate::tls::{TlsClient, TlsOptions};
use crate::transport::Io;
use crate::workload::Workload;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The server to load: a socket address (loopback unless allowed otherwise
/// on purpose) plus the Host header and path, over TLS for `https://`.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub addr: SocketAddr,
    pub host_header: String,
    pub path: String,
    /// `https://` or `wss://`: TLS, with `host` as the server name (SNI,
    /// certificate).
    pub tls: bool,
    /// `ws://` or `wss://`: the plan speaks WebSocket ([`WsOptions`]).
    pub websocket: bool,
    /// The URL's host without brackets (`localhost`, `127.0.0.1`, `::1`).
    pub host: String,
}

/// Which addresses an [`Endpoint`] may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// 127.0.0.1, localhost or [::1] only: the default, so that a typo
    /// cannot load a shared machine.
    Loopback,
    /// Any address, asked for explicitly (`shootout load --remote`).
    Remote,
}

impl Endpoint {
    /// Parses an `http[s]://host[:port][/path]` URL. Only loopback hosts are accepted.
    pub fn parse(url: &str) -> Result<Endpoint, PlanError> {
        Endpoint::parse_with(url, Reach::Loopback)
    }

    /// Parses a URL whose host must be within `reach`. The syntax is
    /// checked strictly first (see `crate::url`): nothing that would make
    /// a bad request line or header is accepted, and the fragment is dropped.
    pub fn parse_with(url: &str, reach: Reach) -> Result<Endpoint, PlanError> {
        let bad = |why: &str| PlanError::Url(printable(url), why.to_string());
        let parts = crate::url::split(url).map_err(|why| bad(&why.to_string()))?;
        let is_loopback_name = parts.host.eq_ignore_ascii_case("localhost");
        let addrs: Vec<SocketAddr> = (parts.host.trim_matches(['[', ']']), parts.port)
            .to_socket_addrs()
            .map_err(|e| bad(&format!("cannot resolve host: {e}")))?
            .collect();
        // Prefer IPv4 for localhost, as most servers bind 127.0.0.1 only.
        let addr = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or_else(|| addrs.first())
            .copied()
            .ok_or_else(|| bad("host resolves to no address"))?;
        let loopback = addr.ip().is_loopback()
            && (is_loopback_name || addrs.iter().all(|a| a.ip().is_loopback()));
        if !loopback && reach == Reach::Loopback {
            return Err(PlanError::NotLoopback(parts.url.to_string()));
        }
        Ok(Endpoint::of_parts(parts, addr))
    }

    /// The endpoint of `url` at an address resolved where the plan was
    /// built (a plan that travelled: [`Plan::from_json`]): the URL's
    /// syntax checked as [`Endpoint::parse`] checks it, nothing resolved
    /// again, and `addr` on the URL's port. Its reach was checked where
    /// the plan was built.
    pub(crate) fn at(url: &str, addr: SocketAddr) -> Result<Endpoint, PlanError> {
        let bad = |why: &str| PlanError::Url(printable(url), why.to_string());
        let parts = crate::url::split(url).map_err(|why| bad(&why.to_string()))?;
        if parts.port != addr.port() {
            let why = format!("the address {addr} is not on the URL's port {}", parts.port);
            return Err(bad(&why));
        }
        Ok(Endpoint::of_parts(parts, addr))
    }

    fn of_parts(parts: crate::url::Parts<'_>, addr: SocketAddr) -> Endpoint {
        Endpoint {
            url: parts.url.to_string(),
            addr,
            host_header: parts.authority.to_string(),
            path: parts.target,
            tls: parts.tls,
            websocket: parts.websocket,
            host: parts.host.trim_matches(['[', ']']).to_string(),
        }
    }
}

impl Endpoint {
    /// The parts of this endpoint an HTTP/2 request carries.
    pub(crate) fn h2_target(&self) -> crate::h2::Target<'_> {
        crate::h2::Target {
            tls: self.tls,
            authority: &self.host_header,
            path: &self.path,
        }
    }
}

/// `url` with control characters escaped (`\r`, `\n`, `\u{1b}`), so an
/// error message cannot break a line or drive a terminal.
fn printable(url: &str) -> String {
    url.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

pub use crate::request_spec::RequestSpec;

mod json;

/// A complete, validated load run. Built only by [`PlanBuilder::build`].
#[derive(Debug, Clone)]
pub struct Plan {
    endpoint: Endpoint,
    request: RequestSpec,
    /// The whole load, as every shard was given it.
    workload: Workload,
    shard: Shard,
    /// This shard's part of `workload` (all of it for the whole load).
    share: Workload,
    start_at: Option<SystemTime>,
    interval_histograms: bool,
    /// How often workers add their counts to the [`Control`](crate::Control)'s.
    progress_every: Duration,
    warmup: Duration,
    timeout: Duration,
    threads: usize,
    cpus: Vec<usize>,
    keepalive: bool,
    pipeline: usize,
    expect: Expect,
    /// Several request kinds drawn by weight, instead of `request`.
    mix: Option<Arc<Mix>>,
    /// The seed of every random draw (kinds, path ranges, Poisson gaps).
    seed: u64,
    arrival: Arrival,
    tls: TlsOptions,
    /// Built from `tls` for an https endpoint by [`PlanBuilder::build`].
    tls_client: Option<TlsClient>,
    /// The transport asked for (None: the default, see [`Io::resolve`]).
    io: Option<Io>,
    /// The HTTP version spoken (apart from the transport: `endpoint.tls`).
    version: HttpVersion,
    /// What each connection's session is made from, for `version`: built
    /// by [`PlanBuilder::build`] (HTTP/2: the request's frames).
    session: SessionSpec,
    /// HTTP/2: the streams each connection keeps in flight, at most.
    streams: usize,
    /// WebSocket: the message, and hold mode.
    ws: WsOptions,
}

/// What a WebSocket load sends (a `ws://` or `wss://` endpoint): messages
/// of `message_size` bytes, text unless `binary`, each echo checked; or in
/// `hold` mode none, the connections kept open and idle, pinged every
/// `ping_every` when given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsOptions {
    pub message_size: usize,
    pub binary: bool,
    pub hold: bool,
    pub ping_every: Option<Duration>,
}

/// 64-byte text messages, no hold.
impl Default for WsOptions {
    fn default() -> WsOptions {
        WsOptions {
            message_size: 64,
            binary: false,
            hold: false,
            ping_every: None,
        }
    }
}

/// Requests per second above which one generator thread is certainly
/// behind: a request costs a thread about a microsecond of CPU or more
/// (`bench/cpu_per_request.py` measures it; deep pipelines come nearest),
/// so no thread sends a million a second, let alone more.
pub const RATE_PER_THREAD: f64 = 1e6;

/// How often workers update the live counters by default: a progress
/// bar's refresh, never per request.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// The finest [`Plan::with_progress_every`] allows.
pub const FINEST_PROGRESS: Duration = Duration::from_millis(1);

/// The deepest HTTP/1.1 pipeline a plan may ask for.
pub const MAX_PIPELINE: usize = 1024;

impl Plan {
    /// Starts a plan to send `workload` to `endpoint`: GET with no extra
    /// headers, no warm-up, a 10 s timeout, one thread per CPU this process
    /// may use, no pinning, keep-alive, no pipelining.
    pub fn builder(endpoint: Endpoint, workload: Workload) -> PlanBuilder {
        PlanBuilder(Plan {
            endpoint,
            request: RequestSpec::default(),
            share: workload.clone(),
            workload,
            shard: Shard::WHOLE,
            start_at: None,
            interval_histograms: false,
            progress_every: PROGRESS_EVERY,
            warmup: Duration::ZERO,
            timeout: Duration::from_secs(10),
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpus: Vec::new(),
            keepalive: true,
            pipeline: 1,
            expect: Expect::default(),
            mix: None,
            seed: crate::seed::random_seed(),
            arrival: Arrival::Uniform,
            tls: TlsOptions::default(),
            tls_client: None,
            io: None,
            version: HttpVersion::Http1,
            session: SessionSpec::Http1,
            streams: 1,
            ws: WsOptions::default(),
        })
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }
    pub fn request(&self) -> &RequestSpec {
        &self.request
    }
    /// The whole load, before any split over shards.
    pub fn workload(&self) -> &Workload {
        &self.workload
    }
    /// The load this process offers: its shard's share of the whole.
    pub fn load(&self) -> &Load {
        self.share.load()
    }
    /// This process's stop rule (its shard's share of `-n`).
    pub fn stop(&self) -> &Stop {
        self.share.stop()
    }
    /// Which part of the whole load this process runs.
    pub fn shard(&self) -> Shard {
        self.shard
    }
    /// The wall-clock instant the run (its warm-up, then the measured
    /// phase) starts; `None` starts at once.
    pub fn start_at(&self) -> Option<SystemTime> {
        self.start_at
    }
    /// Whether the report keeps exact per-second latency histograms (for
    /// an interval log); otherwise the timeline keeps coarse ones.
    pub fn interval_histograms(&self) -> bool {
        self.interval_histograms
    }
    /// How often each worker adds its counts to the live ones of the
    /// run's [`Control`](crate::Control) ([`PROGRESS_EVERY`] unless set finer).
    pub fn progress_every(&self) -> Duration {
        self.progress_every
    }
    /// The same plan with live counters brought up to date every `every`
    /// (at least [`FINEST_PROGRESS`]): fine enough for a caller that cuts
    /// a running load into sub-second windows from [`Control::completed`](crate::Control::completed)
    /// (an auto warm-up). Each update is one atomic add per thread.
    pub fn with_progress_every(mut self, every: Duration) -> Plan {
        self.progress_every = every.max(FINEST_PROGRESS);
        self
    }
    /// Load run before the measured phase, not counted.
    pub fn warmup(&self) -> Duration {
        self.warmup
    }
    /// Per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
    /// Worker threads asked for (see [`Plan::effective_threads`]).
    pub fn threads(&self) -> usize {
        self.threads
    }
    /// CPUs to pin worker threads to (round-robin); empty means no pinning.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }
    pub fn keepalive(&self) -> bool {
        self.keepalive
    }
    /// The HTTP version the run speaks.
    pub fn version(&self) -> HttpVersion {
        self.version
    }

    /// Whether the run needs the epoll transport: io_uring carries
    /// cleartext HTTP/1.1 only.
    pub fn epoll_only(&self) -> bool {
        self.endpoint.tls || !self.version.over_uring()
    }

    /// What each connection's session is made from.
    pub(crate) fn session_spec(&self) -> &SessionSpec {
        &self.session
    }

    /// WebSocket: the message and hold mode (unused by other versions).
    pub fn websocket(&self) -> &WsOptions {
        &self.ws
    }

    /// WebSocket hold mode: how often every open connection is pinged.
    pub fn ping_every(&self) -> Option<Duration> {
        self.ws
            .ping_every
            .filter(|_| self.version == HttpVersion::WebSocket)
    }

    /// HTTP/2: the streams per connection asked for; None for a version
    /// without streams.
    pub fn http2_streams(&self) -> Option<usize> {
        match self.version {
            HttpVersion::Http1 | HttpVersion::WebSocket => None,
            HttpVersion::Http2 => Some(self.streams),
        }
    }

    /// HTTP/2: the concurrent streams per connection asked for (the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS may allow fewer).
    pub fn streams(&self) -> usize {
        self.streams
    }

    /// Requests each connection may have in flight: the pipeline's depth,
    /// or over HTTP/2 the streams; over WebSocket the messages awaiting
    /// their echo (`pipeline`).
    pub fn depth(&self) -> usize {
        match self.version {
            HttpVersion::Http1 | HttpVersion::WebSocket => self.pipeline,
            HttpVersion::Http2 => self.streams,
        }
    }

    /// Requests each connection keeps in flight, written back to back and
    /// answered in order (HTTP/1.1 pipelining); 1 is none.
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }
    /// What every response must look like; the default checks nothing.
    pub fn expect(&self) -> &Expect {
        &self.expect
    }
    /// The TLS settings (used only by an https endpoint).
    pub fn tls(&self) -> &TlsOptions {
        &self.tls
    }
    pub(crate) fn tls_client(&self) -> Option<&TlsClient> {
        self.tls_client.as_ref()
    }
    /// Over TLS, the handshakes so far (of every run of this plan) in which
    /// the server asked for a client certificate, whether the plan had one
    /// or not; None over cleartext. With a certificate sent and no request
    /// served, the server likely rejected it.
    pub fn client_cert_requests(&self) -> Option<u64> {
        self.tls_client.as_ref().map(TlsClient::cert_asked)
    }
    /// The transport asked for; None takes the default ([`Io::resolve`]).
    pub fn io(&self) -> Option<Io> {
        self.io
    }

    /// The request kinds drawn by weight, when the plan has a mix (then
    /// [`Plan::request`] is unused).
    pub fn mix(&self) -> Option<&Mix> {
        self.mix.as_deref()
    }
    /// The seed of the run's random draws (the same seed, the same draws).
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// How an open loop's requests arrive.
    pub fn arrival(&self) -> Arrival {
        self.arrival
    }

    /// The worker threads actually used: never more than the connections.
    pub fn effective_threads(&self) -> usize {
        self.threads.min(self.load().max_connections()).max(1)
    }

    /// Said at the start when the plan offers an arrival rate its threads
    /// cannot send: above [`RATE_PER_THREAD`] each. Such a run still runs
    /// in bounded memory; the requests it cannot send on time are sent late
    /// (their latency counted from when they were due) and those never sent
    /// are counted as unsent.
    pub fn rate_warning(&self) -> Option<String> {
        let peak = match self.load() {
            Load::Open { rate, .. } => *rate,
            Load::Stages {
                unit: crate::StageUnit::Rate,
                stages,
                ..
            } => stages.iter().map(|s| s.to).fold(0.0, f64::max),
            _ => return None,
        };
        let threads = self.effective_threads();
        let most = threads as f64 * RATE_PER_THREAD;
        (peak > most).then(|| {
            format!(
                "{peak} req/s is more than {threads} generator thread(s) can send (at most about \
                 {most} req/s); requests are sent as fast as they can be, latency counting from \
                 when each was due, and those never sent are reported as unsent"
            )
        })
    }

    /// A builder holding this plan's values, to derive a changed plan.
    pub fn to_builder(&self) -> PlanBuilder {
        PlanBuilder(self.clone())
    }
}

/// Sets a [`Plan`]'s optional parts; [`PlanBuilder::build`] checks them.
#[derive(Debug, Clone)]
pub struct PlanBuilder(Plan);

impl PlanBuilder {
    pub fn request(mut self, request: RequestSpec) -> Self {
        self.0.request = request;
        self
    }
    /// The whole load (split by [`PlanBuilder::shard`] when one is set).
    pub fn workload(mut self, workload: Workload) -> Self {
        self.0.workload = workload;
        self
    }
    /// Runs only this shard's part of the workload (see [`Shard`]).
    pub fn shard(mut self, shard: Shard) -> Self {
        self.0.shard = shard;
        self
    }
    /// Sleeps until this wall-clock instant before starting, so that shards
    /// on several machines share one clock. A late start is reported.
    pub fn start_at(mut self, at: Option<SystemTime>) -> Self {
        self.0.start_at = at;
        self
    }
    /// Keeps exact (3 significant digits) per-second latency histograms.
    pub fn interval_histograms(mut self, on: bool) -> Self {
        self.0.interval_histograms = on;
        self
    }
    pub fn warmup(mut self, warmup: Duration) -> Self {
        self.0.warmup = warmup;
        self
    }
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.0.timeout = timeout;
        self
    }
    pub fn threads(mut self, threads: usize) -> Self {
        self.0.threads = threads;
        self
    }
    pub fn cpus(mut self, cpus: Vec<usize>) -> Self {
        self.0.cpus = cpus;
        self
    }
    pub fn keepalive(mut self, keepalive: bool) -> Self {
        self.0.keepalive = keepalive;
        self
    }
    /// The pipeline depth: 1 to [`MAX_PIPELINE`], and more than 1 only with keep-alive.
    pub fn pipeline(mut self, depth: usize) -> Self {
        self.0.pipeline = depth;
        self
    }
    pub fn expect(mut self, expect: Expect) -> Self {
        self.0.expect = expect;
        self
    }
    /// Sends a mix of request kinds (the endpoint's path is then unused).
    pub fn mix(mut self, mix: Option<Mix>) -> Self {
        self.0.mix = mix.map(Arc::new);
        self
    }
    /// The seed of the random draws; a plan has a random one until set.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
    /// The arrival process of an open loop (uniform by default).
    pub fn arrival(mut self, arrival: Arrival) -> Self {
        self.0.arrival = arrival;
        self
    }
    /// How an https endpoint is verified, the client certificate, and
    /// whether sessions resume; its files are read by `build`.
    pub fn tls(mut self, tls: TlsOptions) -> Self {
        self.0.tls = tls;
        self
    }
    /// The transport: epoll or io_uring (cleartext only).
    pub fn io(mut self, io: Io) -> Self {
        self.0.io = Some(io);
        self
    }
    /// The transport when one is given, else the default ([`Io::resolve`]).
    pub fn io_if(mut self, io: Option<Io>) -> Self {
        self.0.io = io.or(self.0.io);
        self
    }

    /// What a WebSocket load sends (used when the endpoint is `ws://` or
    /// `wss://`; `build` refuses it on another).
    pub fn websocket(mut self, ws: WsOptions) -> Self {
        self.0.ws = ws;
        self
    }

    /// Speaks HTTP/2 with up to `streams` concurrent streams per connection.
    pub fn http2(mut self, streams: Option<usize>) -> Self {
        self.0.version = match streams {
            Some(_) => HttpVersion::Http2,
            None => HttpVersion::Http1,
        };
        self.0.streams = streams.unwrap_or(1);
        self
    }

    /// Checks the rules that are not the workload's own (those were checked
    /// when it was made): the shard's split, threads, CPUs, timeout and
    /// pipeline depth.
    pub fn build(self) -> Result<Plan, PlanError> {
        let mut plan = self.0;
        plan.share = plan.shard.split(&plan.workload)?;
        if plan.threads == 0 {
            return Err(PlanError::invalid(PlanField::Threads, "must be at least 1"));
        }
        if plan.timeout.is_zero() {
            return Err(PlanError::invalid(
                PlanField::Timeout,
                "must be more than 0",
            ));
        }
        check_pipeline(plan.pipeline, plan.keepalive)?;
        if plan.mix.is_some() && plan.pipeline > 1 {
            return Err(PlanError::invalid(
                PlanField::Mix,
                "a mix sends one request at a time on each connection: it cannot be pipelined",
            ));
        }
        if plan.arrival == Arrival::Poisson && !plan.workload.load().is_open_loop() {
            return Err(PlanError::invalid(
                PlanField::Arrival,
                "Poisson arrivals need an arrival rate (an open loop)",
            ));
        }
        plan.version = version(&plan)?;
        plan.session = session_spec(&plan)?;
        plan.tls_client = tls_client(&plan.endpoint, &plan.tls, plan.version)?;
        if plan.io == Some(Io::Uring) && plan.epoll_only() {
            return Err(PlanError::invalid(
                PlanField::Io,
                "io_uring carries cleartext HTTP/1.1 only: use epoll for https, HTTP/2 and WebSocket",
            ));
        }
        let allowed = crate::affinity::allowed_cpus();
        if let Some(cpu) = plan.cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(PlanError::invalid(
                PlanField::Cpus,
                format!("CPU {cpu} is not available to this process (allowed: {allowed:?})"),
            ));
        }
        Ok(plan)
    }
}

/// The TLS client of an https endpoint (its files read and checked); TLS
/// settings on a cleartext one are refused rather than ignored.
fn tls_client(
    endpoint: &Endpoint,
    tls: &TlsOptions,
    version: HttpVersion,
) -> Result<Option<TlsClient>, PlanError> {
    if endpoint.tls {
        return TlsClient::new(tls, &endpoint.host, version).map(Some);
    }
    if *tls != TlsOptions::default() {
        return Err(PlanError::invalid(
            PlanField::Url,
            "TLS settings (CA file, client certificate, insecure, resume) need an https:// URL",
        ));
    }
    Ok(None)
}

/// The version the plan speaks: WebSocket for a `ws://` or `wss://`
/// endpoint (never with HTTP/2), else the one asked for; WebSocket
/// options on another endpoint are refused rather than ignored.
fn version(plan: &Plan) -> Result<HttpVersion, PlanError> {
    if !plan.endpoint.websocket {
        if plan.ws != WsOptions::default() {
            return Err(PlanError::invalid(
                PlanField::Message,
                "a message size, binary messages or hold mode need a ws:// or wss:// URL",
            ));
        }
        return Ok(plan.version);
    }
    if plan.version == HttpVersion::Http2 {
        return Err(PlanError::invalid(
            PlanField::Streams,
            "a ws:// or wss:// URL speaks WebSocket over HTTP/1.1 (its upgrade, RFC 6455); \
             WebSocket over HTTP/2 (RFC 8441) is not supported",
        ));
    }
    Ok(HttpVersion::WebSocket)
}

/// Checks the rules of the plan's HTTP version (HTTP/1.1's, pipeline and
/// mix, are checked for every plan) and makes what each connection's
/// session starts from. HTTP/2: 1..=[`MAX_PIPELINE`] streams, keep-alive,
/// one request (no mix, no pipelining: streams are HTTP/2's pipeline)
/// that fits the frames this engine sends.
fn session_spec(plan: &Plan) -> Result<SessionSpec, PlanError> {
    match plan.version {
        HttpVersion::Http1 => Ok(SessionSpec::Http1),
        HttpVersion::Http2 => {
            check_streams(
                plan.streams,
                plan.pipeline,
                plan.keepalive,
                plan.mix.is_some(),
            )?;
            crate::h2::H2Request::new(&plan.endpoint.h2_target(), &plan.request)
                .map(|request| SessionSpec::Http2(Arc::new(request)))
                .map_err(|why| PlanError::invalid(PlanField::Streams, why.to_string()))
        }
        HttpVersion::WebSocket => ws_session(plan),
    }
}

/// WebSocket's rules: messages on connections kept open (keep-alive, no
/// mix), no HTTP request of its own (a GET upgrade with no header or body
/// given, no response checks: every echo is checked against its message),
/// a message of 1 B to 16 MiB, and hold mode sending one message at a time
/// at most (none). The message's filler is drawn from the run's seed.
fn ws_session(plan: &Plan) -> Result<SessionSpec, PlanError> {
    let bad = |why: &str| Err(PlanError::invalid(PlanField::Message, why.to_string()));
    let r = &plan.request;
    if !(r.method.is_empty() || r.method == "GET") || !r.headers.is_empty() || !r.body.is_empty() {
        return bad(
            "a WebSocket load sends messages, not an HTTP request: no method, header or body",
        );
    }
    if plan.expect != Expect::default() {
        return bad("every echo is checked against its message: response checks do not apply");
    }
    if plan.mix.is_some() {
        return bad("a mix cannot be sent over WebSocket");
    }
    if !plan.keepalive {
        return bad("WebSocket keeps its connections open: it cannot open one per message");
    }
    if plan.ws.hold && (plan.pipeline > 1 || plan.workload.load().is_open_loop()) {
        return bad("hold mode sends no message: no pipeline, no rate");
    }
    if plan.ws.ping_every.is_some_and(|d| d.is_zero()) {
        return bad("the ping interval must be more than 0");
    }
    let mut rng = crate::seed::rng(plan.seed, Shard::WHOLE, 0, crate::seed::Stream::Requests);
    let message = crate::ws_conn::WsMessage::new(
        &plan.endpoint.host_header,
        &plan.endpoint.path,
        plan.ws.message_size,
        !plan.ws.binary,
        &mut rng,
    )
    .map_err(|e| PlanError::invalid(PlanField::Message, e.to_string()))?;
    Ok(SessionSpec::WebSocket {
        message: Arc::new(message),
        hold: plan.ws.hold,
    })
}

/// The HTTP/2 load's rules, apart from the request (which a study checks
/// against its routes): 1..=[`MAX_PIPELINE`] streams per connection, no
/// pipelining, keep-alive, and no mix.
pub fn check_streams(
    streams: usize,
    pipeline: usize,
    keepalive: bool,
    mixed: bool,
) -> Result<(), PlanError> {
    let bad = |field, why: &str| Err(PlanError::invalid(field, why.to_string()));
    if !(1..=MAX_PIPELINE).contains(&streams) {
        let why = format!("{streams} is not a stream count from 1 to {MAX_PIPELINE}");
        return bad(PlanField::Streams, &why);
    }
    if pipeline > 1 {
        return bad(
            PlanField::Pipeline,
            "HTTP/2 multiplexes streams instead of pipelining: give the streams per connection",
        );
    }
    if !keepalive {
        return bad(
            PlanField::Streams,
            "HTTP/2 keeps its connections open: it cannot open one per request",
        );
    }
    if mixed {
        return bad(PlanField::Mix, "a mix cannot be sent over HTTP/2 yet");
    }
    Ok(())
}

/// The pipeline depth's rules: 1..=[`MAX_PIPELINE`], and a connection
/// closed after every response cannot carry a second request.
pub fn check_pipeline(depth: usize, keepalive: bool) -> Result<(), PlanError> {
    if !(1..=MAX_PIPELINE).contains(&depth) {
        return Err(PlanError::invalid(
            PlanField::Pipeline,
            format!("{depth} is not a depth from 1 to {MAX_PIPELINE}"),
        ));
    }
    if depth > 1 && !keepalive {
        return Err(PlanError::invalid(
            PlanField::Pipeline,
            "pipelining needs keep-alive connections",
        ));
    }
    Ok(())
}

pub use crate::workload::{Load, Stage, StageUnit, Stop};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loopback_urls() {
        let t = Endpoint::parse("http://127.0.0.1:8080/json?x=1").unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.path, "/json?x=1");
        assert_eq!(t.host_header, "127.0.0.1:8080");
        let t = Endpoint::parse("http://localhost:9").unwrap();
        assert_eq!(t.path, "/");
        assert!(t.addr.ip().is_loopback());
        let t = Endpoint::parse("http://[::1]:81/").unwrap();
        assert!(t.addr.is_ipv6());
    }

    fn workload() -> Workload {
        Workload::new(
            Load::Closed { connections: 2 },
            Stop {
                requests: Some(10),
                duration: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn build_names_the_field_of_each_broken_rule() {
        let b = || Plan::builder(Endpoint::parse("http://127.0.0.1:9/").unwrap(), workload());
        let field = |b: PlanBuilder| b.build().unwrap_err().field();
        assert_eq!(field(b().threads(0)), PlanField::Threads);
        assert_eq!(field(b().timeout(Duration::ZERO)), PlanField::Timeout);
        assert_eq!(field(b().cpus(vec![usize::MAX])), PlanField::Cpus);
        assert_eq!(field(b().pipeline(0)), PlanField::Pipeline);
        assert_eq!(field(b().pipeline(MAX_PIPELINE + 1)), PlanField::Pipeline);
        let closing = b().pipeline(2).keepalive(false);
        assert_eq!(field(closing), PlanField::Pipeline);
        assert_eq!(
            b().pipeline(MAX_PIPELINE).build().unwrap().pipeline(),
            MAX_PIPELINE
        );
        assert_eq!(b().keepalive(false).build().unwrap().pipeline(), 1);
        let plan = b().threads(8).build().unwrap();
        assert_eq!(plan.effective_threads(), 2, "never more than connections");
        assert_eq!(plan.stop().requests, Some(10));
        let e = Endpoint::parse("http://10.0.0.1/").unwrap_err();
        assert_eq!(e.field(), PlanField::Url);
        assert_eq!(field(b().arrival(Arrival::Poisson)), PlanField::Arrival);
        let mix = crate::Mix::new(vec![crate::RequestKind {
            name: "a".into(),
            weight: 1,
            path: crate::Template::parse("/").unwrap(),
            request: RequestSpec::default(),
            expect: None,
        }]);
        assert_eq!(field(b().mix(mix.ok()).pipeline(2)), PlanField::Mix);
    }

    #[test]
    fn refuses_non_loopback_and_bad_urls() {
        assert!(matches!(
            Endpoint::parse("http://10.0.0.1:80/"),
            Err(PlanError::NotLoopback(_))
        ));
        assert!(Endpoint::parse("https://127.0.0.1/").is_ok_and(|e| e.tls && e.addr.port() == 443));
        assert!(Endpoint::parse("ftp://127.0.0.1/").is_err());
        assert!(Endpoint::parse("127.0.0.1:80").is_err());
        assert!(Endpoint::parse("http://127.0.0.1:notaport/").is_err());
    }

    /// A ws:// URL speaks WebSocket, with WebSocket's rules; its options
    /// on an http:// URL are refused rather than ignored.
    #[test]
    fn a_ws_url_speaks_websocket_by_its_rules() {
        let ws = || Plan::builder(Endpoint::parse("ws://127.0.0.1:9/ws").unwrap(), workload());
        let plan = ws().pipeline(4).build().unwrap();
        assert_eq!(plan.version(), HttpVersion::WebSocket);
        assert_eq!((plan.depth(), plan.http2_streams()), (4, None));
        assert!(plan.epoll_only());
        let field = |b: PlanBuilder| b.build().unwrap_err().field();
        assert_eq!(field(ws().http2(Some(4))), PlanField::Streams);
        let sized = |n| WsOptions {
            message_size: n,
            ..WsOptions::default()
        };
        assert_eq!(field(ws().websocket(sized(0))), PlanField::Message);
        assert_eq!(
            field(ws().websocket(sized((16 << 20) + 1))),
            PlanField::Message
        );
        assert!(ws().websocket(sized(16 << 20)).build().is_ok());
        let hold = WsOptions {
            hold: true,
            ..WsOptions::default()
        };
        assert_eq!(
            field(ws().websocket(hold.clone()).pipeline(2)),
            PlanField::Message
        );
        assert_eq!(field(ws().keepalive(false)), PlanField::Message);
        let post = RequestSpec {
            method: "POST".into(),
            ..RequestSpec::default()
        };
        assert_eq!(field(ws().request(post)), PlanField::Message);
        assert_eq!(field(ws().io(Io::Uring)), PlanField::Io);
        let http = Plan::builder(Endpoint::parse("http://127.0.0.1:9/").unwrap(), workload());
        assert_eq!(field(http.websocket(hold)), PlanField::Message);
        let wss = Endpoint::parse("wss://127.0.0.1:9/ws").unwrap();
        assert!(wss.tls && wss.websocket);
    }

    #[test]
    fn remote_addresses_only_when_asked() {
        let t = Endpoint::parse_with("http://10.213.0.1:8080/x", Reach::Remote).unwrap();
        assert_eq!(t.addr.to_string(), "10.213.0.1:8080");
        assert!(Endpoint::parse_with("http://10.213.0.1/", Reach::Loopback).is_err());
    }

    #[test]
    fn a_shard_runs_its_share_and_keeps_the_whole() {
        let b = Plan::builder(Endpoint::parse("http://127.0.0.1:9/").unwrap(), workload())
            .shard(Shard::new(2, 2).unwrap());
        let plan = b.clone().build().unwrap();
        assert_eq!(plan.stop().requests, Some(5));
        assert_eq!(plan.load().max_connections(), 1);
        assert_eq!(plan.workload().stop().requests, Some(10));
        // Rebuilding a derived plan splits the whole again, not the share.
        let again = plan.to_builder().build().unwrap();
        assert_eq!(again.stop().requests, Some(5));
        let e = b.shard(Shard::new(3, 3).unwrap()).build().unwrap_err();
        assert_eq!(e.field(), PlanField::Connections, "2 connections, 3 shards");
    }
}
