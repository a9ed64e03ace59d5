//! `shootout run [STUDY]` and `shootout studies`: find the study file, run it
//! through the runner (its events rendered by [`crate::run_view`], Ctrl-C
//! wired to its [`Interrupt`] through [`crate::interrupt`]), then print
//! the Markdown tables on stdout, write report.md/report.html next to the
//! database, and say where everything is. Exit 0 when every target was
//! measured, 1 when some failed to build, start or verify, 2 on usage or
//! environment errors, 128 + the signal's number when stopped by one
//! (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).

use crate::exit::Outcome;
use crate::run_view::{ProgressMode, RunView};
use shootout_report::output::studies::StudyRow;
use shootout_runner::{Interrupt, RunConfig, RunOutcome};
use shootout_store::{RunStatus, DEFAULT_DB_PATH};
use shootout_study::{quick_scale, Study, TargetSelection};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Environment variable naming the studies directory.
const STUDIES_ENV: &str = "SHOOTOUT_STUDIES";

/// `shootout run`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit codes:\n  \
    0    the run completed and every target was measured\n  \
    1    the run completed, but some target failed to build, start or verify, or failed\n       \
    during a level (it died, froze, lost its port, answered nothing or was killed for\n       \
    memory: that level is recorded as a failure with its reason, never as a number)\n  \
    2    a usage or environment error (study, flags, database; the machine lock held, with --no-wait;\n       \
    the results store refusing a measurement for 120 s: the run stops as interrupted, the\n       \
    measurement kept in <db>.run-<id>.unsaved.json, the report written from the rest)\n  \
    130  stopped by Ctrl-C, 143 by SIGTERM, 129 by SIGHUP (128 + the signal): the run is\n       \
    interrupted, its finished measurements and its report kept\n\n\
    One run, capacity search or pinned load measures at a time: the others wait for the\n\
    machine-wide lock /tmp/shootout.lock ($SHOOTOUT_LOCK), or refuse with --no-wait.")]
pub struct Args {
    /// A study name from the studies directory, or a path to a study file.
    #[arg(default_value = "default")]
    study: String,
    /// Shrink every count and duration so the study runs in about a minute.
    #[arg(long, conflicts_with = "scale")]
    quick: bool,
    /// Multiply every count and duration by F (0 < F <= 1).
    #[arg(long, value_name = "F", value_parser = parse_scale)]
    scale: Option<f64>,
    /// Only these targets of the study (comma-separated).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    targets: Option<Vec<String>>,
    /// The results store (a SQLite file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
    /// The targets directory (default: targets/ above the working directory).
    #[arg(long, value_name = "DIR", env = "SHOOTOUT_TARGETS")]
    targets_dir: Option<PathBuf>,
    /// The studies directory (default: studies/ above the working directory).
    #[arg(long, value_name = "DIR", env = STUDIES_ENV)]
    studies_dir: Option<PathBuf>,
    /// No progress bar or progress lines.
    #[arg(long)]
    quiet: bool,
    /// Before each level, wait up to DURATION (default 60s) until other
    /// processes leave the server's and the generator's CPUs quiet; a level
    /// that still comes out disturbed is measured once more.
    #[arg(
        long,
        value_name = "DURATION",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "60s",
        value_parser = crate::units::parse_duration
    )]
    wait_quiet: Option<std::time::Duration>,
    #[command(flatten)]
    kube: KubeArgs,
    #[command(flatten)]
    cache: crate::cmd::targets::CacheArgs,
    #[command(flatten)]
    lock: crate::lock::LockArgs,
}

/// Where contestants run: this machine's processes, or pods on a cluster.
#[derive(Debug, Default, clap::Args)]
pub struct KubeArgs {
    /// Run each start of each target as a pod on a Kubernetes cluster (its
    /// server node: the one labeled shootout.dev/role=server, or the only
    /// node), from its image, and the load in generator pods on its client
    /// nodes (--shards).
    #[arg(long, help_heading = "Kubernetes")]
    kubernetes: bool,
    /// The cluster's kubeconfig (default: kubectl's own, $KUBECONFIG).
    #[arg(
        long,
        value_name = "PATH",
        requires = "kubernetes",
        help_heading = "Kubernetes"
    )]
    kubeconfig: Option<PathBuf>,
    /// The namespace every pod of the run is made in (made when absent).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "shootout",
        requires = "kubernetes",
        help_heading = "Kubernetes"
    )]
    namespace: String,
    /// Each target's image; {target} is replaced by its name.
    #[arg(
        long,
        value_name = "TEMPLATE",
        default_value = "localhost/{target}:e2e",
        requires = "kubernetes",
        help_heading = "Kubernetes"
    )]
    image: String,
    /// Generator pods, each one shard of every load, merged exactly; on
    /// the nodes labeled shootout.dev/role=client (or the only node). 0:
    /// the load runs in this process.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        requires = "kubernetes",
        value_parser = clap::value_parser!(u16).range(0..=64),
        help_heading = "Kubernetes"
    )]
    shards: u16,
    /// The image generator pods run: it has `shootout` on its PATH.
    #[arg(
        long,
        value_name = "IMAGE",
        default_value = "localhost/shootout:e2e",
        requires = "kubernetes",
        help_heading = "Kubernetes"
    )]
    generator_image: String,
}

impl KubeArgs {
    fn options(&self) -> anyhow::Result<Option<shootout_runner::KubeOptions>> {
        if !self.kubernetes {
            return Ok(None);
        }
        if let Some(k) = &self.kubeconfig {
            anyhow::ensure!(k.is_file(), "--kubeconfig {}: no such file", k.display());
        }
        anyhow::ensure!(
            self.image.contains("{target}"),
            "--image {:?} does not name the target: put {{target}} where its name goes",
            self.image
        );
        Ok(Some(shootout_runner::KubeOptions {
            kubeconfig: self.kubeconfig.clone(),
            namespace: self.namespace.clone(),
            image: self.image.clone(),
            shards: usize::from(self.shards),
            generator_image: self.generator_image.clone(),
            ..shootout_runner::KubeOptions::default()
        }))
    }
}

/// `shootout calibrate`: the calibration study (`studies/calibrate.toml`)
/// run like any study, then this host's figure.
#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    /// Shrink the calibration (fewer, shorter starts: a rougher figure).
    #[arg(long)]
    quick: bool,
    /// The results store (a SQLite file); the calibration is a run in it.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
    /// The targets directory (default: targets/ above the working directory).
    #[arg(long, value_name = "DIR", env = "SHOOTOUT_TARGETS")]
    targets_dir: Option<PathBuf>,
    /// The studies directory (default: studies/ above the working directory).
    #[arg(long, value_name = "DIR", env = STUDIES_ENV)]
    studies_dir: Option<PathBuf>,
    /// No progress bar or progress lines.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    cache: crate::cmd::targets::CacheArgs,
    #[command(flatten)]
    lock: crate::lock::LockArgs,
}

/// Runs the calibration study, then says this host's between-start
/// variation (stdout) as later reports will read it.
pub fn calibrate(c: CalibrateArgs) -> anyhow::Result<Outcome> {
    let db = c.db.clone();
    let outcome = run(Args {
        study: shootout_store::CALIBRATION_STUDY.to_string(),
        quick: c.quick,
        scale: None,
        targets: None,
        db: c.db,
        targets_dir: c.targets_dir,
        studies_dir: c.studies_dir,
        quiet: c.quiet,
        wait_quiet: None,
        kube: KubeArgs::default(),
        cache: c.cache,
        lock: c.lock,
    })?;
    if outcome != Outcome::Ok {
        return Ok(outcome);
    }
    let store = shootout_store::Store::open_existing(&db)?;
    let host = store.runs()?.first().map(|r| r.host.clone());
    let found = match host {
        Some(h) => store.calibration(&h, None)?,
        None => None,
    };
    let Some(cal) = found else {
        anyhow::bail!(
            "the calibration run has no two starts of one cell to measure a variation from"
        );
    };
    outln!(
        "this host's noise: {} differed by {:.1}% between starts (sd of ln req/s over {} starts, \
         run #{}); a run here with one start per cell is tested on it",
        cal.targets.join(", "),
        cal.sd_pct(),
        cal.starts,
        cal.run_id
    );
    Ok(Outcome::Ok)
}

/// `shootout studies`.
#[derive(Debug, clap::Args)]
pub struct StudiesArgs {
    /// The studies directory (default: studies/ above the working directory).
    #[arg(long, value_name = "DIR", env = STUDIES_ENV)]
    studies_dir: Option<PathBuf>,
    /// The targets directory, to count `targets = "all"`.
    #[arg(long, value_name = "DIR", env = "SHOOTOUT_TARGETS")]
    targets_dir: Option<PathBuf>,
    /// Estimate durations for `--quick` runs.
    #[arg(long)]
    quick: bool,
}

fn parse_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!("'{s}' is not a scale in (0, 1]")),
    }
}

/// The studies directory: the flag, else `studies/` with a .toml file above the cwd.
fn studies_dir(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(d) = flag {
        anyhow::ensure!(
            d.is_dir(),
            "studies directory {} does not exist",
            d.display()
        );
        return Ok(d.to_path_buf());
    }
    let cwd = std::env::current_dir()?;
    cwd.ancestors()
        .map(|a| a.join("studies"))
        .find(|d| d.join("default.toml").is_file())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no studies/ folder found above {}; pass --studies-dir or set {STUDIES_ENV}",
                cwd.display()
            )
        })
}

/// A study by path (contains '/' or ends in .toml) or by name.
fn find_study(spec: &str, dir: Option<&Path>) -> anyhow::Result<Study> {
    let path = Path::new(spec);
    let file = if spec.ends_with(".toml") || spec.contains('/') {
        path.to_path_buf()
    } else {
        let dir = studies_dir(dir)?;
        let file = dir.join(format!("{spec}.toml"));
        if !file.is_file() {
            let names: Vec<String> = shootout_study::discover(&dir)?
                .into_iter()
                .flatten()
                .map(|s| s.name)
                .collect();
            anyhow::bail!(
                "no study '{spec}' in {} (studies: {})",
                dir.display(),
                names.join(", ")
            );
        }
        file
    };
    Ok(shootout_study::load(&file)?)
}

fn target_count(study: &Study, targets_dir: Option<&Path>) -> usize {
    target_minimums(study, targets_dir).len()
}

/// Each of the study's targets' declared `warmup_min` (zero for none, and
/// for a target not found or broken), one per target, for estimates.
fn target_minimums(study: &Study, targets_dir: Option<&Path>) -> Vec<Duration> {
    let found = shootout_servers::locate_targets_dir(targets_dir)
        .ok()
        .and_then(|d| shootout_servers::discover(&d).ok());
    let min_of = |name: &str| {
        found
            .as_ref()
            .and_then(|d| d.targets.iter().find(|t| t.name == name))
            .and_then(|t| t.warmup_min)
            .unwrap_or_default()
    };
    match &study.targets {
        TargetSelection::List(l) => l.iter().map(|n| min_of(n)).collect(),
        TargetSelection::All => match &found {
            Some(d) => d
                .targets
                .iter()
                .map(|t| t.warmup_min.unwrap_or_default())
                .chain(d.broken.iter().map(|_| Duration::ZERO))
                .collect(),
            None => vec![Duration::ZERO],
        },
    }
}

pub fn run(a: Args) -> anyhow::Result<Outcome> {
    let study = find_study(&a.study, a.studies_dir.as_deref())?;
    let kubernetes = a.kube.options()?;
    let targets_dir = shootout_servers::locate_targets_dir(a.targets_dir.as_deref())?;
    let scale = scale_for(&a, &study, &targets_dir);
    // A plan this machine cannot honour fails before any wait for the lock.
    let (_, cannot_bind) = shootout_runner::check_cpus(&study)?;
    for why in cannot_bind {
        eprintln!("warning: {why}");
    }
    let _machine = crate::lock::take(&a.lock)?;
    let view = Arc::new(RunView::new(ProgressMode::detect(a.quiet)));
    let interrupt = Interrupt::new();
    stop_on_ctrl_c(&interrupt, &view, &a.db, kubernetes.clone())?;
    let studies_dir = study.file.parent().map(Path::to_path_buf);
    let needs_database = study.needs_database();
    let build_cache = a.cache.open()?;
    let cfg = RunConfig {
        study,
        scale,
        targets_dir,
        db: a.db.clone(),
        only: a.targets,
        repo_dir: std::env::current_dir()?,
        wait_quiet: a.wait_quiet,
        build_cache,
        kubernetes,
    };
    let out = shootout_runner::run_study(&cfg, &interrupt, view.as_ref());
    view.finish();
    let out = out?;
    let reported = report(&a.db, &out);
    if let Some(u) = &out.unsaved {
        if let Err(e) = &reported {
            eprintln!("warning: no report from what the store holds: {e:#}");
        }
        let kept = match &u.file {
            Some(f) => format!("it is kept in {}", f.display()),
            None => "and it could not be written beside the database either".into(),
        };
        anyhow::bail!(
            "the results store refused a measurement ({}); the run stopped as interrupted, every earlier measurement is in {}, {kept}",
            u.error,
            a.db.display()
        );
    }
    reported?;
    if !needs_database {
        if let Some(line) = studies_dir.as_deref().and_then(database_studies_line) {
            eprintln!("{line}");
        }
    }
    Ok(match out.status {
        RunStatus::Interrupted => Outcome::Interrupted,
        RunStatus::Complete if out.failed.is_empty() => Outcome::Ok,
        _ => Outcome::Failed,
    })
}

/// The scale of this run: `--quick` shrinks the study to about a minute
/// for the targets it will run, `--scale F` is taken as given.
fn scale_for(a: &Args, study: &Study, targets_dir: &Path) -> f64 {
    let n = a
        .targets
        .as_ref()
        .map_or_else(|| target_count(study, Some(targets_dir)), Vec::len);
    match (a.quick, a.scale) {
        (true, _) => quick_scale(study, n),
        (false, Some(f)) => f,
        (false, None) => 1.0,
    }
}

/// First Ctrl-C, SIGTERM or SIGHUP: stop the run and keep what was measured. Second: kill the
/// servers and the database, mark the run interrupted and exit at once.
fn stop_on_ctrl_c(
    interrupt: &Arc<Interrupt>,
    view: &Arc<RunView>,
    db: &Path,
    kubernetes: Option<shootout_runner::KubeOptions>,
) -> anyhow::Result<()> {
    let (stop, shown, db) = (interrupt.clone(), view.clone(), db.to_path_buf());
    crate::interrupt::on_stop(move |presses| {
        if presses == 1 {
            stop.stop();
            eprintln!(
                "\ninterrupted ({}): stopping, killing the servers and keeping the finished measurements{}",
                crate::interrupt::stop_name(),
                crate::interrupt::again_hint()
            );
            return;
        }
        shootout_servers::kill_all_servers();
        shootout_servers::database::stop_all_clusters();
        if let Some(k) = &kubernetes {
            if let Err(e) = shootout_runner::delete_all_of_this_process(k) {
                eprintln!(
                    "\nwarning: this run's pods may be left in namespace {}: {e}",
                    k.namespace
                );
            }
        }
        if let Some(id) = shown.run_id() {
            // Best effort: the next run marks it interrupted anyway.
            if let Ok(store) = shootout_store::Store::open(&db) {
                let _ = store.finish_run(id, RunStatus::Interrupted);
            }
        }
        eprintln!("\ninterrupted twice: servers and database killed, exiting");
        crate::interrupt::exit_now();
    })
}

/// The run's Markdown tables on stdout, report.md and report.html in the
/// database's reports folder, and on stderr what happened and where everything is.
fn report(db: &Path, out: &RunOutcome) -> anyhow::Result<()> {
    let data = shootout_report::load(db, &out.run_id.to_string())?;
    outln!("{}", shootout_report::markdown(&data));
    // Hook: the report crate writes report.md and report.html for the run.
    let dir = shootout_report::run_reports_dir(db, out.run_id);
    let reports = shootout_report::write_run_reports(db, out.run_id, &dir);
    eprintln!(
        "run #{} {} in {:.0} s: {} measurement(s); results store {}",
        out.run_id,
        out.status,
        out.elapsed.as_secs_f64(),
        out.measurements,
        db.display()
    );
    match reports {
        Ok((md, html)) => eprintln!("reports: {} and {}", md.display(), html.display()),
        Err(e) => eprintln!("warning: could not write the reports: {e:#}"),
    }
    for s in &out.skipped {
        eprintln!("skipped {}: {}", s.target, s.reason);
    }
    for f in &out.failed {
        eprintln!("{} {}: {}", f.status, f.target, f.reason);
    }
    Ok(())
}

/// `with a database behind the framework: shootout run tfb, shootout run ...`.
fn database_studies_line(dir: &Path) -> Option<String> {
    let names: Vec<String> = shootout_study::discover(dir)
        .ok()?
        .into_iter()
        .flatten()
        .filter(|s| s.needs_database())
        .map(|s| format!("shootout run {}", s.name))
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "with a database behind the framework (PostgreSQL): {}",
            names.join(", ")
        )
    })
}

pub fn studies(a: StudiesArgs) -> anyhow::Result<Outcome> {
    let dir = studies_dir(a.studies_dir.as_deref())?;
    let mut broken = false;
    let mut rows = Vec::new();
    for s in shootout_study::discover(&dir)? {
        let s = match s {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                broken = true;
                continue;
            }
        };
        let mins = target_minimums(&s, a.targets_dir.as_deref());
        let n = mins.len();
        let scale = if a.quick { quick_scale(&s, n) } else { 1.0 };
        let scaled: Vec<Duration> = mins
            .iter()
            .map(|&m| shootout_study::scale::scaled_min(m, scale))
            .collect();
        let est = s.scaled(scale).estimate_for(&scaled, scale);
        let targets = match &s.targets {
            TargetSelection::All => format!("all ({n})"),
            TargetSelection::List(l) => l.join(", "),
        };
        let scenarios: Vec<String> = s
            .scenarios
            .iter()
            .map(|sc| match sc.levels.len() {
                1 => sc.name.to_string(),
                k => format!("{} ×{k}", sc.name),
            })
            .collect();
        rows.push(StudyRow {
            name: s.name.clone(),
            targets,
            scenarios: scenarios.join(", "),
            measurements: est.measurements,
            estimate: shootout_runner::schedule::format_eta(est.total_s),
            source: s.source.clone(),
        });
    }
    outln!("{}", shootout_report::output::studies::render(&rows));
    // A broken study file is a usage error, as for `run` (exit 2); the
    // others are still listed.
    Ok(if broken { Outcome::Usage } else { Outcome::Ok })
}
