//! `shootout capacity`: the highest rate a server sustains while every SLO
//! holds, and its latency-vs-load curve. Turns flags into an engine plan
//! (the request flags are `shootout load`'s own parsers) and search
//! settings, runs `shootout_capacity::run` with a progress line on stderr,
//! and prints the result. Exit 0 when a capacity was found, 1 when no rate
//! met the SLO, 2 for usage errors, a dead server or a generator that could
//! not offer the rates needed to decide, 130 on Ctrl-C.

use crate::capacity_progress;
use crate::cmd::load::{expect, flag_error, threads, ExpectArgs, RequestArgs};
use crate::exit::Outcome;
use crate::units;
use anyhow::{bail, Context};
use shootout_capacity::{CapacityError, Event, Settings, SettingsError, SettingsField, Verdict};
use shootout_engine::{Endpoint, Expect, Load, Plan, StatusMatch, Stop, Threshold, Workload};
use shootout_report::output::capacity as capacity_output;
use shootout_report::Format;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Find the highest rate a server sustains under a latency SLO.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  shootout capacity http://127.0.0.1:8080/plaintext\n  \
    shootout capacity --slo 'p99<=10ms' --slo 'p999<=50ms' -o json http://127.0.0.1:8080/json\n  \
    shootout capacity --slo 'p99<=5ms' --step 10s --precision 1% http://localhost:8080/\n\n\
    The search: a closed-loop probe, then open-loop levels at constant rates (doubling, then \
    bisection to --precision), a confirm run of the best pass (5% lower if it fails), then the \
    curve at 25, 50, 75, 90 and 100% of the capacity.\n\
    Exit codes: 0 capacity found, 1 no rate met the SLO, 2 usage error, no successful answer, \
    or the generator could not offer the rates needed to decide; 130 Ctrl-C.\n\
    A response with a status other than 2xx or 3xx counts as an error (a mismatch) unless \
    --expect-status says which statuses are right."
)]
pub struct Args {
    /// Endpoint URL: http:// on 127.0.0.1, localhost or [::1] only.
    pub url: String,
    /// A rule every passing level meets, e.g. p99<=10ms, p999<=50ms, error_rate<=0.1% (repeatable) [default: p99<=10ms, error_rate<=0.1%].
    #[arg(long = "slo", value_parser = Threshold::parse, allow_hyphen_values = true)]
    pub slo: Vec<Threshold>,
    /// Each level's measured step [default: 5s].
    #[arg(long, value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub step: Option<Duration>,
    /// Load before each level's step, not counted [default: 2s].
    #[arg(long, value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub warmup: Option<Duration>,
    /// Bisection stops when the bracket is within this, e.g. 2% or 0.05 [default: 2%].
    #[arg(long, value_parser = shootout_capacity::parse_precision, allow_hyphen_values = true)]
    pub precision: Option<f64>,
    /// Connections for every level [default: sized per level by Little's law with headroom].
    #[arg(short = 'c', long = "connections", value_parser = units::parse_count, allow_hyphen_values = true)]
    pub connections: Option<u64>,
    /// Worker threads [default: the CPUs this process may use].
    #[arg(short = 't', long = "threads", allow_hyphen_values = true)]
    pub threads: Option<usize>,
    /// Pin generator threads to these CPUs (e.g. 1 or 2-3).
    #[arg(long, value_parser = units::parse_cpu_list, allow_hyphen_values = true)]
    pub cpus: Option<units::CpuList>,
    #[command(flatten)]
    pub request: RequestArgs,
    #[command(flatten)]
    pub mix: super::mix_args::MixArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    #[command(flatten)]
    pub http2: super::http2_args::Http2Args,
    /// Per-request timeout.
    #[arg(long, default_value = "10s", value_parser = units::parse_duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Output format on stdout.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
    #[command(flatten)]
    pub expect: ExpectArgs,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub lock: crate::lock::LockArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    // Raise the open-file limit before any level is sized to it.
    shootout_engine::connections_allowed();
    let (template, settings) = plan(&args)?;
    let _machine = crate::lock::take(&args.lock)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    // First press: stop after the level running now; second: quit at once.
    crate::interrupt::on_stop(move |press| match press {
        1 => flag.store(true, Ordering::SeqCst),
        _ => crate::interrupt::exit_now(),
    })?;
    let mut progress = capacity_progress::Progress::new(!args.quiet);
    let cancelled = || stop.load(Ordering::SeqCst);
    let result = shootout_capacity::run(&template, &settings, &cancelled, &mut |e: Event| {
        progress.event(&e)
    });
    let result = match result {
        Ok(r) => r,
        Err(CapacityError::Interrupted) => {
            eprintln!(
                "interrupted: the search stopped before a result; the levels above were finished"
            );
            return Ok(Outcome::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    out!("{}", capacity_output::render(&result, args.output));
    match result.verdict {
        Verdict::Found => Ok(Outcome::Ok),
        Verdict::None => {
            eprintln!(
                "no rate met the SLO ({})",
                capacity_output::slo_text(&result)
            );
            Ok(Outcome::Failed)
        }
        Verdict::GeneratorLimited => bail!(
            "the generator could not offer the rates needed to find the server's limit{}; \
             give it more CPU (-t/--threads, --cpus) or run the server elsewhere",
            result
                .lower_bound_rps
                .map(|r| format!(" (the server met the SLO at {r:.0} req/s and above)"))
                .unwrap_or_default()
        ),
    }
}

/// A search counts an error status as a failed request: an overloaded
/// server that sheds load with 503s must not pass on their latency. Unless
/// `--expect-status` says otherwise, any status but 2xx/3xx is a mismatch.
fn success_expected(mut e: Expect) -> Expect {
    if e.status.is_empty() {
        e.status = vec![StatusMatch::Class(2), StatusMatch::Class(3)];
    }
    e
}

/// The template plan (endpoint, request, threads, CPUs; its workload is
/// replaced per level) and the search settings; every error names its flag.
pub fn plan(args: &Args) -> anyhow::Result<(Plan, Settings)> {
    let endpoint = Endpoint::parse(&args.url)?;
    if endpoint.websocket {
        anyhow::bail!(
            "capacity searches HTTP only: a WebSocket load ({}) is run with `shootout load`",
            endpoint.url
        );
    }
    let connections = args
        .connections
        .map(usize::try_from)
        .transpose()
        .context("--connections is too large")?;
    let settings = Settings::new(
        if args.slo.is_empty() {
            shootout_capacity::default_slo()
        } else {
            args.slo.clone()
        },
        args.warmup.unwrap_or(shootout_capacity::DEFAULT_WARMUP),
        args.step.unwrap_or(shootout_capacity::DEFAULT_STEP),
        args.precision
            .unwrap_or(shootout_capacity::DEFAULT_PRECISION),
        connections,
    )
    .map_err(settings_error)?
    .with_arrival(args.mix.arrival);
    let placeholder = Workload::new(
        Load::Closed { connections: 1 },
        Stop {
            requests: None,
            duration: Some(settings.step()),
        },
    )
    .map_err(flag_error)?;
    let cpus = args.cpus.clone().map(|c| c.0).unwrap_or_default();
    let mix = args.mix.mix(&endpoint)?;
    super::mix_args::check_routes("--slo", settings.slo(), mix.as_ref())?;
    let template = args
        .mix
        .apply_draws(Plan::builder(endpoint, placeholder), mix)
        .request(args.request.spec()?)
        .timeout(args.timeout)
        .expect(success_expected(expect(&args.expect)?))
        .threads(threads(args.threads, &cpus))
        .cpus(cpus)
        .keepalive(!args.request.no_keepalive)
        .tls(args.tls.options())
        .http2(args.http2.streams())
        .build()
        .map_err(flag_error)?;
    Ok((template, settings))
}

/// A broken settings rule, named by its flag.
fn settings_error(e: SettingsError) -> anyhow::Error {
    let flag = match e.field() {
        SettingsField::Slo => "--slo",
        SettingsField::Warmup => "--warmup",
        SettingsField::Step => "--step",
        SettingsField::Precision => "--precision",
        SettingsField::Connections => "-c/--connections",
    };
    anyhow::anyhow!("{flag}: {} (see --help)", e.reason())
}
