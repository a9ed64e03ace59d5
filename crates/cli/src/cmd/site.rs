//! `shootout site DIR`: writes the results site ([`shootout_report::site`])
//! of every run in the results store into DIR: `index.html`, a page per
//! target and a page per run, static and self-contained, to open from the
//! file system or serve as they are. Nothing goes to stdout; the count of
//! pages written goes to stderr. An absent or empty store, or a DIR that
//! cannot be written, is exit 2 with a message that names it.

use crate::exit::Outcome;
use anyhow::Context as _;
use shootout_store::DEFAULT_DB_PATH;
use std::path::PathBuf;

/// `shootout site`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder to write the site into (created if needed; its pages are replaced).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// The results store (a SQLite file).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DB_PATH)]
    db: PathBuf,
    /// Mark results older than this as stale (a duration: 30d, 12w, 90d).
    #[arg(long, value_name = "AGE", value_parser = super::report::parse_age, default_value = "90d")]
    max_age: u64,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let store = super::report::open(&args.db)?;
    let runs = shootout_report::site::load(&store)?;
    if runs.is_empty() {
        anyhow::bail!(
            "no runs in {}: nothing to make a site of (run `shootout run` first, or pass --db PATH)",
            args.db.display()
        );
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let opts = shootout_report::site::Options {
        max_age_days: Some(args.max_age),
        now,
        here: Some(shootout_runner::host::host()),
    };
    let pages = shootout_report::site::write(&runs, &args.dir, &opts)
        .with_context(|| format!("cannot write the site to {}", args.dir.display()))?;
    eprintln!(
        "wrote {} pages to {} (open {})",
        pages.len(),
        args.dir.display(),
        args.dir.join("index.html").display()
    );
    Ok(Outcome::Ok)
}
