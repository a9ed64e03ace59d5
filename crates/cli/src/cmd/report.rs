//! `shootout history`, `report` and `compare`: read the SQLite history and
//! hand the runs to the report crate. Reports go to stdout or `-o FILE`.
//! `history` lists the runs, or with `--target`/`--scenario` each
//! series' runs over time with its change points (`changes`). `compare`
//! refuses runs from different hosts unless `--force`.
//! `compare --fail-if-slower` exits 1 when a cell got slower by the verdict
//! (significant, and beyond the practical margin on starts), or with PCT
//! significantly by more than PCT percent; it exits 2 when it could not
//! judge: the runs share no cell, measured different studies or one is not
//! complete (unless `--force`), or a pair had nothing to test (unless
//! `--allow-untested`).

use crate::exit::Outcome;
use anyhow::Context as _;
use shootout_store::{Store, DEFAULT_DB_PATH};
use std::path::PathBuf;

/// `shootout history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The results store (a SQLite file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
    /// Show this target's series: its runs over time, with change points.
    #[arg(long, value_name = "NAME")]
    target: Option<String>,
    /// Show the series of scenarios whose name starts with this.
    #[arg(long, value_name = "NAME")]
    scenario: Option<String>,
    /// Only runs on this hostname.
    #[arg(long, value_name = "HOSTNAME")]
    host: Option<String>,
    /// Put runs of every host in one series (never mixed unless asked).
    #[arg(long)]
    all_hosts: bool,
    /// Mark results older than this as stale (a duration: 30d, 12w, 90d).
    #[arg(long, value_name = "AGE", value_parser = parse_age, default_value = "90d")]
    max_age: u64,
    /// What to write: the tables (md) or the series as JSON.
    #[arg(long, value_enum, default_value_t = HistoryFormat::Md)]
    format: HistoryFormat,
}

/// `shootout history --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryFormat {
    Md,
    Json,
}

/// An age in whole days: `90d`, `12w`, or a number of days.
pub(crate) fn parse_age(s: &str) -> Result<u64, String> {
    let (n, unit) = match s.strip_suffix('d') {
        Some(n) => (n, 1),
        None => match s.strip_suffix('w') {
            Some(n) => (n, 7),
            None => (s, 1),
        },
    };
    n.parse::<u64>()
        .ok()
        .filter(|n| *n > 0)
        .map(|n| n * unit)
        .ok_or_else(|| format!("'{s}' is not an age: give days or weeks, like 30d or 12w"))
}

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Md,
    Html,
    Json,
    Csv,
}

/// `shootout report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A run id, or `latest` (the default). With --trend and no STUDY:
    /// the trend of this run's study.
    run: Option<String>,
    /// Instead of one run, write the trend page of STUDY (default: the
    /// study of the run given, else of the latest run): every run of it in the results store, one HTML page,
    /// to -o FILE or trend-STUDY.html in the database's reports folder
    /// (`results/shootout/` for `results/shootout.db`).
    #[arg(long, value_name = "STUDY", num_args = 0..=1, default_missing_value = "", conflicts_with = "format")]
    trend: Option<String>,
    /// What to write.
    #[arg(long, value_enum, default_value_t = Format::Md)]
    format: Format,
    /// Write to this file instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The results store (a SQLite file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
}

/// `shootout compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The baseline run (an id, or `latest`).
    a: String,
    /// The run compared with it (an id, or `latest`).
    b: String,
    /// Exit 1 when any cell's RPS (or cost point) is worse in B: with no
    /// PCT, by the ranking's rule (significant on each target's own start
    /// variation and beyond the practical margin; two or more starts in
    /// each run); with PCT, significantly and by more than PCT percent
    /// (below 100). Exit 2 when the gate cannot judge: no cell in both
    /// runs, different studies or a run not complete (see --force), or a
    /// pair with nothing to test (see --allow-untested).
    #[arg(long, value_name = "PCT", value_parser = parse_gate_pct, num_args = 0..=1)]
    fail_if_slower: Option<Option<f64>>,
    /// Compare runs measured on different hosts (refused by default: one
    /// machine's figures say nothing about another's), and gate even when
    /// the runs measured different studies or a run is not complete
    /// (interrupted, running or failed): on the cells they share.
    #[arg(long)]
    force: bool,
    /// Let the gate pass over pairs it could not test (one value each
    /// side); by default such a pair keeps it from passing (exit 2).
    #[arg(long, requires = "fail_if_slower")]
    allow_untested: bool,
    /// Pair cells that differ only in resources (CPU quota, memory limit,
    /// pinned CPUs), to see what a change of resources did; by default a
    /// cell pairs only with the same cell.
    #[arg(long)]
    across_resources: bool,
    /// The practical margin a difference on starts must exceed to be called
    /// (e.g. 3%); default: the baseline study's `margin`, else 5%.
    #[arg(long, value_name = "PCT", value_parser = parse_margin)]
    margin: Option<f64>,
    /// The results store (a SQLite file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("'{s}' must be a percentage of 0 or more"))
    }
}

/// A gate's percentage: below 100, since no throughput falls by 100% or
/// more and a gate that can never fire would pass silently.
fn parse_gate_pct(s: &str) -> Result<f64, String> {
    let v = parse_pct(s)?;
    if v < 100.0 {
        Ok(v)
    } else {
        Err(format!(
            "'{s}': throughput cannot fall by 100% or more, so this gate could never fire; give a percentage below 100"
        ))
    }
}

/// `--margin`: a percentage above 0 and at most 50, as a study's `margin`.
fn parse_margin(s: &str) -> Result<f64, String> {
    let v = parse_pct(s)?;
    if v > 0.0 && v <= 50.0 {
        Ok(v / 100.0)
    } else {
        Err(format!("'{s}' must be a percentage above 0 and at most 50"))
    }
}

pub(crate) fn open(db: &PathBuf) -> anyhow::Result<Store> {
    if !db.exists() {
        anyhow::bail!(
            "no results store at {} (run `shootout run` first, or pass --db PATH)",
            db.display()
        );
    }
    match Store::open_existing(db) {
        Ok(store) => Ok(store),
        // That error names the file already.
        Err(e) if e.names_file() => Err(e.into()),
        Err(e) => Err(e).with_context(|| format!("cannot open {}", db.display())),
    }
}

pub fn history(args: HistoryArgs) -> anyhow::Result<Outcome> {
    let store = open(&args.db)?;
    let listing = store.runs()?;
    if listing.is_empty() {
        eprintln!("no runs in {}", args.db.display());
        return Ok(Outcome::Ok);
    }
    let runs = listing
        .iter()
        .map(|r| store.load_run_figures(r.id))
        .collect::<Result<Vec<_>, _>>()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let query = shootout_report::changes::Query {
        target: args.target.clone(),
        scenario: args.scenario.clone(),
        host: args.host.clone(),
        all_hosts: args.all_hosts,
        max_age_days: Some(args.max_age),
        now,
        here: Some(shootout_runner::host::host()),
    };
    let series = shootout_report::changes::history(&runs, &query);
    let asked = args.target.is_some() || args.scenario.is_some();
    if asked && series.is_empty() {
        anyhow::bail!(
            "no series in {} matches{}{} (`shootout history` lists the runs)",
            args.db.display(),
            args.target
                .as_ref()
                .map_or(String::new(), |t| format!(" --target {t}")),
            args.scenario
                .as_ref()
                .map_or(String::new(), |s| format!(" --scenario {s}")),
        );
    }
    use shootout_report::output::history as out;
    match args.format {
        HistoryFormat::Json => outln!("{}", serde_json::to_string_pretty(&series)?),
        HistoryFormat::Md if asked => outln!("{}", out::render_series(&series)),
        HistoryFormat::Md => {
            let shown: Vec<_> = listing
                .into_iter()
                .filter(|r| args.host.as_ref().is_none_or(|h| r.host.hostname == *h))
                .collect();
            outln!("{}", out::render(&shown));
            outln!("\nChange points (E-Divisive means, 5% false-alarm rate per series; `--target NAME` shows a series):\n");
            out!("{}", out::render_changes(&series));
        }
    }
    Ok(Outcome::Ok)
}

pub fn report(args: ReportArgs) -> anyhow::Result<Outcome> {
    if let Some(study) = &args.trend {
        let store = open(&args.db)?;
        let of_run = match &args.run {
            Some(run) if study.is_empty() => Some(store.load_run(store.resolve(run)?)?.run.study),
            Some(run) => anyhow::bail!(
                "give a run ({run}) or a study ({study}) to --trend, not both: the trend page \
                 shows every run of one study"
            ),
            None => None,
        };
        let study = of_run
            .as_deref()
            .or(Some(study.as_str()))
            .filter(|s| !s.is_empty());
        let (path, runs) = shootout_report::write_trend(&args.db, study, args.output.as_deref())?;
        if runs == 0 {
            anyhow::bail!(
                "no runs of study {} in {}",
                study.unwrap_or("?"),
                args.db.display()
            );
        }
        eprintln!("wrote {} ({runs} run(s))", path.display());
        return Ok(Outcome::Ok);
    }
    let store = open(&args.db)?;
    let id = store.resolve(args.run.as_deref().unwrap_or("latest"))?;
    let data = store.load_run(id)?;
    let text = match args.format {
        Format::Md => shootout_report::markdown(&data),
        Format::Html => shootout_report::html(&data),
        Format::Json => shootout_report::json(&data),
        Format::Csv => shootout_report::csv(&data),
    };
    match &args.output {
        Some(path) => {
            shootout_report::write_file(path, &text)?;
            eprintln!("wrote {}", path.display());
        }
        None => out!("{text}"),
    }
    Ok(Outcome::Ok)
}

pub fn compare(args: CompareArgs) -> anyhow::Result<Outcome> {
    let store = open(&args.db)?;
    let a = store.load_run(store.resolve(&args.a)?)?;
    let b = store.load_run(store.resolve(&args.b)?)?;
    if !args.force && two_hosts(&a, &b) {
        return Ok(Outcome::Usage);
    }
    let margin = match args.margin {
        Some(m) => shootout_report::stats::Margin::of_study(Some(m)),
        None => shootout_report::group::run_margin(&a),
    };
    let pairing = match args.across_resources {
        true => shootout_report::compare::Pairing::AcrossResources,
        false => shootout_report::compare::Pairing::Exact,
    };
    let cmp = shootout_report::compare::compare_with(&a, &b, margin, pairing);
    out!("{}", cmp.render());
    trend_hint(&store, &args.db, &a, &b)?;
    let Some(gate) = args.fail_if_slower else {
        return Ok(Outcome::Ok);
    };
    use shootout_report::compare::gate::{self, Outcome as Gate, Rule};
    let rule = gate.map_or(Rule::Verdict, Rule::Pct);
    let setting = gate::Setting {
        refusals: cmp.refusals(),
        force: args.force,
        allow_untested: args.allow_untested,
    };
    Ok(match gate::gate(&cmp.judged(), rule, &setting) {
        Gate::Pass => Outcome::Ok,
        Gate::Slower(pairs) => {
            for p in &pairs {
                let by = match gate {
                    Some(pct) => format!("more than {pct}%"),
                    None => {
                        "significant on its own variation, beyond the margin where on starts".into()
                    }
                };
                eprintln!("slower: {} by {:.1}% ({by})", p.what, p.worse_pct);
            }
            Outcome::Failed
        }
        Gate::Undecided { refusals, untested } => {
            for r in &refusals {
                eprintln!("compare: cannot gate: {r}");
            }
            for p in &untested {
                eprintln!(
                    "not tested: {} ({}): nothing to test it on (one value each side)",
                    p.what,
                    pct_text(p.worse_pct)
                );
            }
            if !untested.is_empty() {
                eprintln!(
                    "compare: cannot gate: {} pair(s) could not be tested; give the study two or \
                     more repetitions, or --allow-untested to pass over them",
                    untested.len()
                );
            }
            Outcome::Usage
        }
    })
}

/// `52.3% worse`, `4.1% better`, or `change unknown`.
fn pct_text(worse: f64) -> String {
    if !worse.is_finite() {
        "change unknown".into()
    } else if worse >= 0.0 {
        format!("{worse:.1}% worse")
    } else {
        format!("{:.1}% better", -worse)
    }
}

/// Runs from two hosts: said on stderr (true), unless they are one host's.
fn two_hosts(a: &shootout_store::RunData, b: &shootout_store::RunData) -> bool {
    use shootout_report::changes::{host_label, same_host};
    if same_host(&a.run.host, &b.run.host) {
        return false;
    }
    eprintln!(
        "compare: runs {} and {} were measured on different hosts ({} and {}): one machine's \
         figures say nothing about another's; give --force to compare them anyway",
        a.run.id,
        b.run.id,
        host_label(&a.run.host),
        host_label(&b.run.host)
    );
    true
}

/// Two runs of one study: the trend page shows them among all the others.
fn trend_hint(
    store: &Store,
    db: &std::path::Path,
    a: &shootout_store::RunData,
    b: &shootout_store::RunData,
) -> anyhow::Result<()> {
    if a.run.study == b.run.study {
        let runs = store
            .runs()?
            .iter()
            .filter(|r| r.study == a.run.study)
            .count();
        let path = shootout_report::trend::default_path(db, &a.run.study);
        let seen = if path.exists() {
            format!(", last written to {}", path.display())
        } else {
            String::new()
        };
        outln!(
            "\nEvery run of {0} ({runs} in the results store): `shootout report --trend {0}`{seen}.",
            a.run.study
        );
    }
    Ok(())
}
