//! `shootout merge FILE...`: reads the interval logs and sidecars of a
//! sharded load's N shards, refuses (exit 2, naming each problem) shards
//! that do not belong together, and prints the merged report in the formats
//! and JSON schema of `shootout load`, with a `shards` section; `--fail-if`
//! applies to it as to a single load. A shard stopped by a signal (its
//! sidecar says `interrupted`) is refused by name unless `--accept-partial`
//! is given; then every shard is cut to the whole seconds all of them
//! measured, the window said on stderr and as `partial_window` in JSON.

use crate::exit::Outcome;
use shootout_engine::Threshold;
use shootout_report::Format;
use shootout_shards::PartialWindow;
use std::path::PathBuf;

/// Merge the interval logs of a load's shards into one exact report.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  shootout merge shard-1.hlog shard-2.hlog\n  \
    shootout merge -o json --fail-if 'p99>10ms' logs/*.hlog\n  \
    shootout merge --accept-partial shard-1.hlog shard-2.hlog"
)]
pub struct Args {
    /// Each shard's interval log (--hdr-log FILE) or its sidecar (FILE.json), every shard once.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Merge shards that a signal stopped before their end too, cut to the whole seconds every shard measured (said on stderr and in JSON).
    #[arg(long)]
    pub accept_partial: bool,
    /// Output format on stdout.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    pub output: Format,
    /// Exit 1 when a condition holds on the merged result, e.g. p99>50ms (repeatable).
    #[arg(long = "fail-if", value_parser = Threshold::parse)]
    pub fail_if: Vec<Threshold>,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let logs = args
        .files
        .iter()
        .map(|f| shootout_shards::read(f))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = shootout_shards::merge(logs, args.accept_partial)?;
    if let Some(p) = &merged.partial {
        eprintln!("{}", partial_line(p));
    }
    out!(
        "{}",
        shootout_report::output::merge::render(&merged, args.output)
    );
    Ok(crate::cmd::load::verdict(
        &args.fail_if,
        &merged.report.summary,
    ))
}

/// `partial window: shard-2.hlog interrupted; counted over the first 1 s
/// every shard measured (the shortest measured 1.2 s of the planned 5.0
/// s), from ... until ...`.
fn partial_line(p: &PartialWindow) -> String {
    let planned = p
        .planned_s
        .map(|s| format!(" of the planned {s:.1} s"))
        .unwrap_or_default();
    format!(
        "partial window: {} interrupted; counted over the first {} s every shard measured \
         (the shortest measured {:.2} s{planned}), from {} until {}",
        p.interrupted.join(", "),
        p.window_s,
        p.shortest_s,
        p.from,
        p.until
    )
}
