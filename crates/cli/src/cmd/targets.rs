//! `shootout targets`, `build` and `verify`: pick targets from `targets/`,
//! then hand them to `shootout_servers` and print one line or one table row
//! per target. Results go to stdout; spinners, skips and warnings to stderr.

use crate::exit::Outcome;
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use shootout_report::output::targets::{self as table, StatusCell, StatusTable};
use shootout_runner::database::POOL_PER_SERVER_CPU;
use shootout_servers::database::{Cluster, ClusterOptions, DatabaseError};
use shootout_servers::verify::{verify_target, Column, VerifyOptions, VerifyReport};
use shootout_servers::{BuildCache, BuildError, BuildOutcome, Target};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// List the reference servers in targets/.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// The targets directory [default: $SHOOTOUT_TARGETS, else the nearest targets/ holding SPEC.md].
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,
}

/// Build reference servers (all when none is named); unchanged ones are
/// skipped, and one built before from the same inputs with the same
/// toolchain (in any clone) is restored from the build cache.
#[derive(Debug, clap::Args)]
#[command(after_help = "The build cache is $SHOOTOUT_CACHE_DIR/builds, else \
    $XDG_CACHE_HOME/shootout/builds, else ~/.cache/shootout/builds; it keeps at most \
    $SHOOTOUT_BUILD_CACHE_MAX_MB MiB (default 4096), the least recently used evicted first. \
    Its key is a SHA-256 of the build commands, the toolchain's version and every input \
    file's content.")]
pub struct BuildArgs {
    /// Targets to build [default: all].
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// The targets directory [default: $SHOOTOUT_TARGETS, else the nearest targets/ holding SPEC.md].
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// The build cache's flag, shared by `build`, `verify` and `run`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct CacheArgs {
    /// Build from source: run the build commands even where the target is
    /// up to date or the build cache holds the same build (store nothing).
    #[arg(long)]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The build cache to use, `None` under `--no-cache`; a bad
    /// `$SHOOTOUT_BUILD_CACHE_MAX_MB` or no home is an environment error.
    pub fn open(self) -> anyhow::Result<Option<BuildCache>> {
        if self.no_cache {
            return Ok(None);
        }
        Ok(Some(BuildCache::from_env().context(
            "the build cache (--no-cache builds without one)",
        )?))
    }
}

/// Check reference servers against targets/SPEC.md (all when none is named).
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Targets to verify [default: all].
    #[arg(value_name = "TARGET")]
    pub targets: Vec<String>,
    /// The targets directory [default: $SHOOTOUT_TARGETS, else the nearest targets/ holding SPEC.md].
    #[arg(long, value_name = "DIR")]
    pub targets_dir: Option<PathBuf>,
    /// Do not build first; verify whatever is there.
    #[arg(long)]
    pub no_build: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Start no PostgreSQL and skip the database routes' checks (their
    /// columns show "-"): for a new target whose database routes are not
    /// written yet.
    #[arg(long)]
    pub no_database: bool,
}

pub fn list(args: ListArgs) -> anyhow::Result<Outcome> {
    let (targets, _) = select(args.targets_dir, &[])?;
    let header = [
        "name",
        "language",
        "framework",
        "toolchain",
        "present",
        "built",
    ];
    let rows = targets
        .iter()
        .map(|t| {
            vec![
                StatusCell::Text(t.name.clone()),
                StatusCell::Text(t.language.clone()),
                StatusCell::Text(t.framework.clone()),
                StatusCell::Text(t.toolchain.to_string()),
                StatusCell::YesNo(t.toolchain.is_present()),
                StatusCell::YesNo(shootout_servers::is_built(t)),
            ]
        })
        .collect();
    outln!("{}", table::render(&status_table(header, rows)));
    Ok(Outcome::Ok)
}

pub fn build(args: BuildArgs) -> anyhow::Result<Outcome> {
    let (targets, broken) = select(args.targets_dir, &args.targets)?;
    let cache = args.cache.open()?;
    let mut failed = broken;
    for t in &targets {
        match build_with_spinner(t, cache.as_ref()) {
            Ok(outcome) => outln!("{}: {}", t.name, describe(&outcome)),
            Err(e) => {
                outln!(
                    "{}: FAILED, log: {}\n{}",
                    t.name,
                    e.log.display(),
                    indent(&e.tail)
                );
                failed = true;
            }
        }
    }
    // A failed build is an environment problem, not a failed check: exit 2.
    if failed {
        bail!("some targets did not build (or have broken manifests)");
    }
    Ok(Outcome::Ok)
}

pub fn verify(args: VerifyArgs) -> anyhow::Result<Outcome> {
    let (targets, broken) = select(args.targets_dir, &args.targets)?;
    let cache = args.cache.open()?;
    // Servers run in their own process groups, out of reach of the
    // terminal's SIGINT: kill them ourselves on Ctrl-C.
    crate::interrupt::on_stop(|_| {
        shootout_servers::kill_all_servers();
        shootout_servers::database::stop_all_clusters();
        crate::interrupt::exit_now();
    })?;
    let database = if args.no_database {
        eprintln!("database routes not checked (--no-database)");
        None
    } else {
        start_database()?
    };
    let opts = VerifyOptions {
        database: database.as_ref().map(Cluster::access),
        ..VerifyOptions::default()
    };
    let mut rows = Vec::new();
    for t in &targets {
        if let Some(binary) = t.toolchain.missing() {
            eprintln!(
                "{}: skipped: {binary} not found on PATH ({} toolchain)",
                t.name, t.toolchain
            );
            continue;
        }
        rows.push(verify_one(t, args.no_build, cache.as_ref(), &opts));
    }
    drop(database);
    if !rows.is_empty() {
        print_verify_table(&rows);
    }
    let all_passed = rows.iter().all(|r| r.passed()) && !broken;
    Ok(if all_passed {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// One target's verify result: a build failure, or the verifier's report.
enum Row {
    BuildFailed(String, BuildError),
    /// The report, and whether the build ran (None with --no-build).
    Verified(VerifyReport, Option<bool>),
}

impl Row {
    fn passed(&self) -> bool {
        matches!(self, Row::Verified(r, _) if r.passed())
    }
}

/// The PostgreSQL the database routes are checked against; None, said in
/// one line, on a machine without it (those columns then show "-").
fn start_database() -> anyhow::Result<Option<Cluster>> {
    let spinner = spinner("starting PostgreSQL for the database routes".into());
    let started = Cluster::start(&ClusterOptions::for_pool(POOL_PER_SERVER_CPU, vec![]));
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    match started {
        Ok(c) => Ok(Some(c)),
        Err(e @ DatabaseError::NotInstalled { .. }) => {
            eprintln!("database routes not checked: {e}");
            Ok(None)
        }
        Err(e) => Err(e).context("cannot start PostgreSQL for the database routes"),
    }
}

fn verify_one(t: &Target, no_build: bool, cache: Option<&BuildCache>, opts: &VerifyOptions) -> Row {
    if !no_build {
        match build_with_spinner(t, cache) {
            Ok(o @ (BuildOutcome::Built { .. } | BuildOutcome::Restored { .. })) => {
                eprintln!("{}: {}", t.name, describe(&o))
            }
            Ok(_) => {}
            Err(e) => return Row::BuildFailed(t.name.clone(), e),
        }
    }
    let spinner = spinner(format!("verifying {}", t.name));
    let report = verify_target(t, opts);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    Row::Verified(report, (!no_build).then_some(true))
}

fn print_verify_table(rows: &[Row]) {
    let header = ["target", "build"]
        .into_iter()
        .chain(Column::ALL.iter().map(|c| c.name()))
        .chain(["cpus used"]);
    let cells = rows
        .iter()
        .map(|row| {
            let (name, built) = match row {
                Row::BuildFailed(name, _) => (name, Some(false)),
                Row::Verified(r, built) => (&r.target, *built),
            };
            let columns = Column::ALL.iter().map(|&c| match row {
                Row::BuildFailed(..) => StatusCell::Verdict(None),
                Row::Verified(r, _) => StatusCell::Verdict(r.column(c)),
            });
            let used = match row {
                Row::Verified(r, _) => r.cpu_use.map(|u| format!("{:.2} of {}", u.used, u.given)),
                Row::BuildFailed(..) => None,
            };
            [StatusCell::Text(name.clone()), StatusCell::Verdict(built)]
                .into_iter()
                .chain(columns)
                .chain([StatusCell::Text(used.unwrap_or_else(|| "-".into()))])
                .collect()
        })
        .collect();
    outln!("{}", table::render(&status_table(header, cells)));
    for row in rows {
        print_reasons(row);
    }
}

fn print_reasons(row: &Row) {
    match row {
        Row::BuildFailed(name, e) => {
            outln!(
                "\n{name}: build FAILED ({}), log: {}\n{}",
                e.what,
                e.log.display(),
                indent(&e.tail)
            );
        }
        Row::Verified(r, _) => {
            let verdict = if r.passed() { "passed" } else { "FAILED" };
            let log = r.log.display();
            outln!(
                "\n{}: {verdict}, {} (server log: {log})",
                r.target,
                lifecycle(r)
            );
            if let Some(u) = r.cpu_use {
                outln!(
                    "  cpus: {:.2} of {} busy under a saturating bcrypt load (other processes {:.2}; needs more than {:.2})",
                    u.used,
                    u.given,
                    u.others,
                    u.needed()
                );
            }
            for (check, failure) in r.failures() {
                let text = failure.to_string();
                let request = check
                    .request
                    .as_deref()
                    .map_or(String::new(), |r| format!(", {r}"));
                outln!(
                    "  {} ({:?}{request}): {}",
                    check.column.name(),
                    check.aspect,
                    indent(&text).trim_start()
                );
            }
            let (skipped, notes): (Vec<_>, Vec<_>) = r.notes().partition(|(c, _)| c.is_skipped());
            for (check, note) in notes {
                outln!(
                    "  note: {} ({:?}): {note}",
                    check.column.name(),
                    check.aspect
                );
            }
            // One line per reason, naming the columns skipped for it (no
            // database; a machine too busy to measure the CPUs).
            let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
            for (check, why) in &skipped {
                let why = why.trim_start_matches("skipped: ");
                match reasons.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, columns)) => columns.push(check.column.name()),
                    None => reasons.push((why, vec![check.column.name()])),
                }
            }
            for (why, columns) in reasons {
                outln!("  not checked: {} ({why})", columns.join(", "));
            }
        }
    }
}

/// "ready in 0.4s, stopped by SIGTERM in 0.1s": how start-up and shutdown went.
fn lifecycle(r: &VerifyReport) -> String {
    let ready = match r.ready_after {
        Some(d) => format!("ready in {:.1}s", d.as_secs_f64()),
        None => "never ready".into(),
    };
    let stop = match &r.stop {
        Some(s) if s.graceful => format!("stopped by SIGTERM in {:.1}s", s.took.as_secs_f64()),
        Some(_) => "ignored SIGTERM for 5s, killed".into(),
        None => "never started".into(),
    };
    format!("{ready}, {stop}")
}

/// Locates the targets directory and picks the named targets (all when
/// none is named). Broken manifests of selected targets are reported on
/// stderr; the bool says whether there were any.
fn select(dir: Option<PathBuf>, names: &[String]) -> anyhow::Result<(Vec<Target>, bool)> {
    let dir = shootout_servers::locate_targets_dir(dir.as_deref())?;
    let found =
        shootout_servers::discover(&dir).with_context(|| format!("reading {}", dir.display()))?;
    let folder_of = |e: &shootout_servers::ManifestError| {
        e.file
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let mut broken = Vec::new();
    for e in &found.broken {
        let folder = folder_of(e).unwrap_or_default();
        if names.is_empty() || names.contains(&folder) {
            eprintln!("warning: {e}");
            broken.push(folder);
        }
    }
    if names.is_empty() {
        return Ok((found.targets, !broken.is_empty()));
    }
    let mut picked = Vec::new();
    for name in names {
        match found.targets.iter().find(|t| &t.name == name) {
            Some(t) => picked.push(t.clone()),
            None if broken.contains(name) => {}
            None => {
                let known: Vec<&str> = found.targets.iter().map(|t| t.name.as_str()).collect();
                bail!(
                    "unknown target {name:?}; known targets: {}",
                    known.join(", ")
                );
            }
        }
    }
    if picked.is_empty() {
        bail!("no target to work on: every named target has a broken manifest");
    }
    Ok((picked, !broken.is_empty()))
}

fn build_with_spinner(t: &Target, cache: Option<&BuildCache>) -> Result<BuildOutcome, BuildError> {
    let spinner = spinner(format!("building {}", t.name));
    let result = shootout_servers::build_or_rebuild(t, cache);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    result
}

fn describe(outcome: &BuildOutcome) -> String {
    match outcome {
        BuildOutcome::Built { took, cache } => {
            format!("built in {:.1}s ({cache})", took.as_secs_f64())
        }
        BuildOutcome::Restored { took, key } => format!(
            "restored from the build cache ({key}) in {:.1}s",
            took.as_secs_f64()
        ),
        BuildOutcome::UpToDate => "up to date".into(),
        BuildOutcome::Skipped { reason } => format!("skipped: {reason}"),
    }
}

/// A spinner on stderr, only when stderr is a terminal.
fn spinner(message: String) -> Option<ProgressBar> {
    if !crate::term::stderr_is_tty() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(100));
    Some(bar)
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Colour only when allowed (NO_COLOR unset, a terminal on stderr) and the
/// table itself goes to a terminal.
fn use_color() -> bool {
    crate::term::color_enabled() && std::io::stdout().is_terminal()
}

fn status_table<'a>(
    header: impl IntoIterator<Item = &'a str>,
    rows: Vec<Vec<StatusCell>>,
) -> StatusTable {
    StatusTable {
        header: header.into_iter().map(String::from).collect(),
        rows,
        colour: use_color(),
    }
}
