//! `shootout load`: turns hey/oha-style flags into a validated engine plan,
//! runs it with a progress bar on stderr, prints the result to stdout and
//! applies `--fail-if` thresholds. The `--expect-*` flags become the plan's
//! [`Expect`]: every response is then checked as it arrives, and one that
//! fails counts as a mismatch. `--shard I/N`, `--start-at` and `--hdr-log`
//! run one shard of a load split over machines and write what `shootout
//! merge` reads; `--remote` allows an address that is not loopback.
//! `--mix FILE` sends the weighted request kinds of a mix file (see
//! docs/mix.md) instead of one request, `--arrival poisson` spaces an open
//! loop's arrivals at random, and `--seed` repeats their draws. `--io`
//! chooses the transport (epoll readiness or io_uring completions). A
//! `ws://` or `wss://` URL loads a WebSocket echo (`ws_args`): messages of
//! `--message-size` bytes, each echo checked, or with `--hold` connections
//! kept open and idle. The hidden `--plan-stdin` takes the whole plan as
//! one line of JSON on stdin instead of a URL and flags (a runner's
//! generator pod, see `plan_stdin`), and `--progress-lines` reports the
//! live counts on stderr as lines a program reads.

mod plan_stdin;

use crate::exit::Outcome;
use crate::units;
use anyhow::{bail, Context};
use shootout_engine::{BodyMatch, Expect, Io, StatusMatch, Threshold};
use shootout_engine::{
    Control, Endpoint, Load, LoadReport, Plan, PlanError, PlanField, Reach, RequestSpec, Shard,
    StageUnit, Stop, Summary, Workload,
};
use shootout_report::output::load as load_output;
use shootout_report::Format;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Load one URL and report throughput, latency and errors.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  shootout load -c 64 -z 10s http://127.0.0.1:8080/plaintext\n  \
    shootout load -q 1000 -z 30s -o json http://127.0.0.1:8080/json\n  \
    shootout load --expect-status 200 --expect-body 'Hello, World!' --fail-if 'mismatches>0' http://127.0.0.1:8080/plaintext\n  \
    shootout load --stages 60s:100,60s:100 http://localhost:8080/json\n  \
    shootout load -c 64 --pipeline 16 -z 10s http://127.0.0.1:8080/plaintext\n  \
    shootout load --mix service.toml -q 2000 --arrival poisson -z 30s --fail-if 'db.p99>20ms' http://127.0.0.1:8080\n  \
    shootout load --remote --shard 1/2 --start-at \"$(date -u -d '+30 sec' +%FT%TZ)\" -q 2000 -z 5s --hdr-log s1.hlog http://10.0.0.5:8080/\n  \
    shootout load -n 10k -m POST -d '{\"payload\":\"x\"}' -H 'Content-Type: application/json' http://[::1]:8080/test/simple\n  \
    shootout load -c 64 -z 10s --message-size 4k ws://127.0.0.1:8080/ws\n  \
    shootout load -c 1000 --hold 60s --ping-every 10s ws://127.0.0.1:8080/ws"
)]
// Value flags take `allow_hyphen_values`: otherwise clap reads `-z -1s` as
// the flags -1 and -s and prints only the usage, instead of handing "-1s"
// to the parser, which names it ("'-1s' is a negative duration").
pub struct Args {
    /// Endpoint URL: http://, https://, ws:// or wss:// (WebSocket) on 127.0.0.1, localhost or [::1] (another address needs --remote).
    #[arg(required_unless_present = "plan_stdin")]
    pub url: Option<String>,
    /// Read the whole plan as one line of JSON on stdin (what a runner's
    /// `Plan::to_json` wrote) instead of a URL and load flags; only
    /// --shard, --start-at, --hdr-log, --quiet, -o and --progress-lines
    /// may go with it. The rest of stdin is watched: its end, or a line
    /// `cancel`, stops the load as Ctrl-C does.
    #[arg(long, hide = true, conflicts_with_all = plan_stdin::CONFLICTS)]
    pub plan_stdin: bool,
    /// While the load runs, write `shootout-progress completed=N errors=N
    /// measuring=0|1` to stderr at least every 100 ms (the live counts of
    /// the measured phase), and once more at the end.
    #[arg(long, hide = true)]
    pub progress_lines: bool,
    /// Allow a URL that is not loopback: load another machine on purpose.
    #[arg(long)]
    pub remote: bool,
    /// Run shard I of N (1-based) of this load: rate/N on interleaved arrival times, an even share of -c and -n.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse, allow_hyphen_values = true)]
    pub shard: Option<Shard>,
    /// Sleep until this wall-clock time (Unix milliseconds or RFC 3339), then warm up and measure; give every shard the same one (at most a day ahead).
    #[arg(long, value_name = "TIME", value_parser = shootout_shards::clock::parse_start_at)]
    pub start_at: Option<SystemTime>,
    /// Write an HdrHistogram interval log (one histogram per second) to FILE and a JSON sidecar to FILE.json, for shootout merge.
    #[arg(long, value_name = "FILE")]
    pub hdr_log: Option<std::path::PathBuf>,
    /// Connections (closed loop: concurrent requests; open loop: the pool the rate is spread over).
    #[arg(short = 'c', long = "connections", default_value = "50", value_parser = units::parse_count, allow_hyphen_values = true)]
    pub connections: u64,
    /// Stop after exactly this many requests (e.g. 1000, 10k).
    #[arg(short = 'n', long = "requests", value_parser = units::parse_count, allow_hyphen_values = true)]
    pub requests: Option<u64>,
    /// Stop at this deadline (e.g. 30s, 2m); in-flight requests are counted as cut. Default 10s when -n is absent.
    #[arg(short = 'z', long = "duration", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub duration: Option<Duration>,
    /// Open loop: a constant arrival rate in requests/s; latency counts from each intended send time.
    #[arg(short = 'q', long = "rate", value_parser = units::parse_rate, allow_hyphen_values = true)]
    pub rate: Option<f64>,
    /// Piecewise-linear ramp DURATION:LEVEL,... of connections (or of the rate with -q).
    #[arg(long, value_parser = units::parse_stage_list, allow_hyphen_values = true)]
    pub stages: Option<units::StageList>,
    /// Worker threads [default: the CPUs this process may use].
    #[arg(short = 't', long = "threads", allow_hyphen_values = true)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub request: RequestArgs,
    #[command(flatten)]
    pub mix: super::mix_args::MixArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    /// HTTP/1.1 pipelining: keep up to N requests in flight on each connection, written back to back and answered in order (1 to 1024; 1 is none).
    #[arg(long, value_name = "N", default_value = "1", value_parser = units::parse_count, allow_hyphen_values = true)]
    pub pipeline: u64,
    /// The transport: epoll (readiness; the worker sends and receives) or uring (io_uring completions: one system call per loop turn; cleartext HTTP/1.1 only) [default: $SHOOTOUT_IO, else epoll, the cheaper per request here].
    #[arg(long, value_name = "epoll|uring", value_parser = parse_io)]
    pub io: Option<Io>,
    #[command(flatten)]
    pub http2: super::http2_args::Http2Args,
    #[command(flatten)]
    pub ws: super::ws_args::WsArgs,
    /// Per-request timeout.
    #[arg(long, default_value = "10s", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Run load for this long before measuring; it is not counted.
    #[arg(long, default_value = "0s", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Pin generator threads to these CPUs (e.g. 1 or 2-3).
    #[arg(long, value_parser = units::parse_cpu_list, allow_hyphen_values = true)]
    pub cpus: Option<units::CpuList>,
    /// Output format on stdout.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
    /// Exit 1 when a condition holds, e.g. p99>50ms, errors>0, rps<1000 (repeatable).
    #[arg(long = "fail-if", value_parser = Threshold::parse)]
    pub fail_if: Vec<Threshold>,
    #[command(flatten)]
    pub expect: ExpectArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    // Only a pinned load (--cpus) takes the machine-wide lock.
    #[command(flatten)]
    pub lock: crate::lock::LockArgs,
}

/// The request flags, shared by `load` and `capacity`.
#[derive(Debug, clap::Args)]
pub struct RequestArgs {
    /// HTTP method.
    #[arg(short = 'm', long = "method", default_value = "GET")]
    pub method: String,
    /// Extra header "Name: value" (repeatable).
    #[arg(short = 'H', long = "header")]
    pub headers: Vec<String>,
    /// Request body.
    #[arg(short = 'd', long = "body", conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the request body from a file.
    #[arg(long)]
    pub body_file: Option<std::path::PathBuf>,
    /// Open a new connection for every request (like ab without -k).
    #[arg(long)]
    pub no_keepalive: bool,
}

/// The response checks, shared by `load` and `capacity`.
#[derive(Debug, clap::Args)]
pub struct ExpectArgs {
    /// Count a response whose status is not this as a mismatch: a code (200) or a class (2xx). Repeatable: any listed status passes.
    #[arg(long = "expect-status", value_name = "CODE", value_parser = StatusMatch::parse, allow_hyphen_values = true)]
    pub expect_status: Vec<StatusMatch>,
    /// Count a response whose body is not exactly this as a mismatch.
    #[arg(
        long = "expect-body",
        value_name = "TEXT",
        conflicts_with = "expect_body_file"
    )]
    pub expect_body: Option<String>,
    /// Like --expect-body, with the exact bytes of a file.
    #[arg(long = "expect-body-file", value_name = "FILE")]
    pub expect_body_file: Option<std::path::PathBuf>,
    /// Count a response whose Content-Type does not start with this (case-insensitive) as a mismatch, e.g. application/json.
    #[arg(long = "expect-type", value_name = "MEDIA", value_parser = shootout_engine::expect::parse_media_type, allow_hyphen_values = true)]
    pub expect_type: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    shootout_engine::connections_allowed();
    let control = Arc::new(Control::new());
    let (plan, stdin_stop) = if args.plan_stdin {
        let plan = plan_stdin::plan(&plan_stdin::Here {
            shard: args.shard,
            start_at: args.start_at,
            hdr_log: args.hdr_log.is_some(),
            cpus: args.cpus.clone().map(|c| c.0).unwrap_or_default(),
        })?;
        (plan, Some(plan_stdin::watch(control.clone())?))
    } else {
        (plan(&args)?, None)
    };
    check_io(plan.io(), plan.epoll_only())?;
    super::mix_args::check_routes("--fail-if", &args.fail_if, plan.mix())?;
    if let Some(warning) = plan.rate_warning() {
        eprintln!("warning: {warning}");
    }
    // A pinned load measures this machine: one at a time (unpinned, it
    // may be a shard or a quick check, and stays free).
    let _machine = args
        .cpus
        .is_some()
        .then(|| crate::lock::take(&args.lock))
        .transpose()?;
    let handler_control = control.clone();
    // First press: stop and report what was measured; second: quit at once.
    crate::interrupt::on_stop(move |press| match press {
        1 => handler_control.cancel(),
        _ => crate::interrupt::exit_now(),
    })?;
    let bar = (!args.quiet && !args.progress_lines && crate::term::stderr_is_tty())
        .then(|| crate::progress::LoadBar::start(&plan, &control));
    let lines = args
        .progress_lines
        .then(|| plan_stdin::ProgressLines::start(plan.progress_every(), control.clone()))
        .transpose()?;
    let result = shootout_engine::run(&plan, &control);
    if let Some(bar) = bar {
        bar.finish();
    }
    if let Some(lines) = lines {
        lines.finish();
    }
    let report = result?;
    out!("{}", load_output::render(&report, args.output));
    let stdin_why = stdin_stop.as_ref().and_then(|s| s.get().copied());
    notes(&report, &control, stdin_why);
    if let Some(path) = &args.hdr_log {
        shootout_shards::write(path, &plan, &report, control.is_cancelled())?;
    }
    let outcome = verdict(&args.fail_if, &report.summary);
    // Nothing measured a server: an environment error (exit 2), not a pass.
    if let Some(hint) = load_output::nothing_connected(&report.summary)
        .or_else(|| load_output::no_tls_session(&report.summary))
        .or_else(|| {
            super::tls_args::client_cert_rejected(
                args.tls.cert.as_deref(),
                plan.client_cert_requests(),
                &report.summary,
            )
        })
        .or_else(|| load_output::nothing_answered(&report.summary))
    {
        bail!("{hint}");
    }
    Ok(outcome)
}

/// What stderr says after the report: a stop before the end (by a signal
/// or, with `--plan-stdin`, by stdin: `stdin_why`), requests never sent,
/// a late start.
fn notes(report: &LoadReport, control: &Control, stdin_why: Option<&'static str>) {
    if control.is_cancelled() {
        // A signal is named first: it may have come before stdin ended.
        let by = match (crate::interrupt::received(), stdin_why) {
            (None, Some(why)) => why,
            _ => crate::interrupt::stop_name(),
        };
        eprintln!("interrupted: results cover the time until {by}");
    }
    if let Some(unsent) = report
        .summary
        .lag
        .as_ref()
        .map(|l| l.unsent)
        .filter(|&n| n > 0)
    {
        eprintln!(
            "warning: {unsent} requests due at the offered rate were never sent (the generator \
             fell behind); they are in no latency figure"
        );
    }
    if report.clock.late_by > Duration::from_millis(1) {
        eprintln!(
            "warning: started {:.1} ms after --start-at",
            report.clock.late_by.as_secs_f64() * 1000.0
        );
    }
}

/// Prints each `--fail-if` that holds; failed when any does. Shared with
/// `shootout merge`.
pub(crate) fn verdict(fail_if: &[Threshold], summary: &Summary) -> Outcome {
    let violations: Vec<String> = fail_if
        .iter()
        .filter_map(|t| t.violation(summary))
        .collect();
    for v in &violations {
        eprintln!("{v}");
    }
    if violations.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    }
}

/// Builds and validates the engine plan; every error names its flag.
pub fn plan(args: &Args) -> anyhow::Result<Plan> {
    let reach = if args.remote {
        Reach::Remote
    } else {
        Reach::Loopback
    };
    let url = args.url.as_deref().context("give a URL")?;
    check_websocket(args, url)?;
    let endpoint = Endpoint::parse_with(url, reach).map_err(flag_error)?;
    let connections = usize::try_from(args.connections).context("--connections is too large")?;
    let load = match (&args.stages, args.rate) {
        (Some(units::StageList(stages)), rate) => Load::Stages {
            unit: if rate.is_some() {
                StageUnit::Rate
            } else {
                StageUnit::Connections
            },
            stages: stages.clone(),
            connections,
        },
        (None, Some(rate)) => Load::Open { rate, connections },
        (None, None) => Load::Closed { connections },
    };
    let stage_total = args
        .stages
        .as_ref()
        .map(|s| s.0.iter().map(|s| s.duration).sum::<Duration>());
    let duration = match (args.ws.hold.or(args.duration), args.requests) {
        (Some(d), _) => Some(d),
        (None, None) => Some(stage_total.unwrap_or(Duration::from_secs(10))),
        (None, Some(_)) => stage_total,
    };
    let stop = Stop {
        requests: args.requests,
        duration,
    };
    let cpus = args.cpus.clone().map(|c| c.0).unwrap_or_default();
    let threads = threads(args.threads, &cpus);
    let workload = Workload::new(load, stop).map_err(flag_error)?;
    let mix = args.mix.mix(&endpoint)?;
    args.mix
        .apply(Plan::builder(endpoint, workload), mix)
        .request(args.request.spec()?)
        .warmup(args.warmup)
        .timeout(args.timeout)
        .threads(threads)
        .cpus(cpus)
        .keepalive(!args.request.no_keepalive)
        .tls(args.tls.options())
        .pipeline(usize::try_from(args.pipeline).unwrap_or(usize::MAX))
        .io_if(args.io)
        .http2(args.http2.streams())
        .websocket(args.ws.options())
        .expect(expect(&args.expect)?)
        .shard(args.shard.unwrap_or_default())
        .start_at(args.start_at)
        .interval_histograms(args.hdr_log.is_some())
        .build()
        .map_err(flag_error)
}

/// The WebSocket flags against the URL and the rest (see `ws_args`).
fn check_websocket(args: &Args, url: &str) -> anyhow::Result<()> {
    let websocket = super::ws_args::is_websocket(url);
    let (r, e) = (&args.request, &args.expect);
    args.ws.check(
        websocket,
        &super::ws_args::Others {
            method: &r.method,
            headers: !r.headers.is_empty(),
            body: r.body.is_some() || r.body_file.is_some(),
            no_keepalive: r.no_keepalive,
            http2: args.http2.http2,
            mix: args.mix.mix.is_some(),
            expect: !e.expect_status.is_empty()
                || e.expect_body.is_some()
                || e.expect_body_file.is_some()
                || e.expect_type.is_some(),
            uring: args.io == Some(Io::Uring),
            requests: args.requests.is_some(),
            duration: args.duration.is_some(),
            rate: args.rate.is_some(),
            stages: args.stages.is_some(),
            pipeline: args.pipeline,
        },
    )
}

fn parse_io(s: &str) -> Result<Io, shootout_engine::transport::ParseIoError> {
    s.parse()
}

/// A chosen `--io uring` the kernel refuses is an error; a default of
/// io_uring (from `SHOOTOUT_IO`) falls back to epoll with a one-line note.
fn check_io(io: Option<Io>, epoll_only: bool) -> anyhow::Result<()> {
    if io == Some(Io::Uring) {
        if let Some(why) = shootout_engine::transport::uring_unavailable() {
            bail!("--io uring: {why}; use --io epoll");
        }
    } else if let (None, (_, Some(note))) = (io, Io::resolve(None, epoll_only)) {
        eprintln!("note: {note}");
    }
    Ok(())
}

/// -t, else one thread per pinned CPU, else one per CPU this process may
/// use. Shared with `shootout capacity`.
pub(crate) fn threads(threads: Option<usize>, cpus: &[usize]) -> usize {
    match threads {
        Some(t) => t,
        None if !cpus.is_empty() => cpus.len(),
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// The flag that sets an engine field.
fn flag(field: PlanField) -> &'static str {
    match field {
        PlanField::Url => "URL",
        PlanField::Connections => "-c/--connections",
        PlanField::Requests => "-n/--requests",
        PlanField::Duration => "-z/--duration",
        PlanField::Stop => "-n or -z",
        PlanField::Rate => "-q/--rate",
        PlanField::Stages => "--stages",
        PlanField::Threads => "-t/--threads",
        PlanField::Cpus => "--cpus",
        PlanField::Timeout => "--timeout",
        PlanField::Pipeline => "--pipeline",
        PlanField::Streams => "--http2/--streams",
        PlanField::Mix => "--mix",
        PlanField::Arrival => "--arrival",
        PlanField::CaFile => "--cacert",
        PlanField::ClientCert => "--cert",
        PlanField::ClientKey => "--key",
        PlanField::Io => "--io",
        PlanField::Message => "--message-size",
        PlanField::Json => "--plan-stdin",
    }
}

/// A plan error in the CLI's terms: the flag, then why.
pub(crate) fn flag_error(e: PlanError) -> anyhow::Error {
    if let PlanError::NotLoopback(url) = &e {
        return anyhow::anyhow!(
            "refusing to load '{url}': shootout only sends load to 127.0.0.1, localhost or [::1] \
             unless --remote is given (to load another machine on purpose)"
        );
    }
    match e.field() {
        PlanField::Url => anyhow::anyhow!("{e}"),
        field => anyhow::anyhow!("{}: {} (see --help)", flag(field), e.reason()),
    }
}

/// The `--expect-*` flags as the plan's expectations (empty: none checked).
pub fn expect(args: &ExpectArgs) -> anyhow::Result<Expect> {
    let body = match (&args.expect_body, &args.expect_body_file) {
        (Some(b), _) => Some(b.clone().into_bytes()),
        (None, Some(path)) => Some(
            std::fs::read(path)
                .with_context(|| format!("--expect-body-file {}: cannot read", path.display()))?,
        ),
        (None, None) => None,
    };
    Ok(Expect {
        status: args.expect_status.clone(),
        media_type: args.expect_type.clone(),
        body: body.map(BodyMatch::Exact),
    })
}

impl RequestArgs {
    /// The flags -m, -H, -d and --body-file as the engine's request; every
    /// error names its flag.
    pub fn spec(&self) -> anyhow::Result<RequestSpec> {
        let method = self.method.to_ascii_uppercase();
        if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
            bail!("--method '{}' is not an HTTP method", self.method);
        }
        let headers = self
            .headers
            .iter()
            .map(|h| match h.split_once(':') {
                Some((k, v))
                    if !k.trim().is_empty()
                        && !k.contains(char::is_whitespace)
                        && !v.contains(['\r', '\n']) =>
                {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => bail!("--header '{h}' should look like 'Name: value'"),
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let body = match (&self.body, &self.body_file) {
            (Some(b), _) => b.as_bytes().to_vec(),
            (None, Some(path)) => std::fs::read(path)
                .with_context(|| format!("--body-file {}: cannot read", path.display()))?,
            (None, None) => Vec::new(),
        };
        Ok(RequestSpec {
            method,
            headers,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every flag of `shootout load` is refused with `--plan-stdin` but
    /// the few it takes, so a flag added later cannot be silently ignored.
    #[test]
    fn plan_stdin_refuses_every_flag_but_its_own() {
        let load = <Args as clap::Args>::augment_args(clap::Command::new("load"));
        let taken = [
            "plan_stdin",
            "progress_lines",
            "shard",
            "start_at",
            "hdr_log",
            "quiet",
            "output",
            "cpus",
        ];
        let ids: Vec<String> = load
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        for id in &ids {
            assert!(
                taken.contains(&id.as_str()) || plan_stdin::CONFLICTS.contains(&id.as_str()),
                "--plan-stdin neither takes nor refuses '{id}'"
            );
        }
        for id in plan_stdin::CONFLICTS {
            assert!(
                ids.iter().any(|i| i == id),
                "'{id}' is no flag of shootout load"
            );
        }
    }
}
