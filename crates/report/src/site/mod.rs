//! The results site (`shootout site DIR`): a static folder of HTML pages
//! made from every run in the results store, that works opened from the
//! file system with no network (each page is self-contained under the
//! report's Content-Security-Policy, [`crate::html::csp`], and links to the
//! others by relative paths). Three kinds of page:
//!
//! - `index.html` ([`index`]): per study the latest run's ranking of every
//!   scenario, drawn by the report's own first screen
//!   ([`crate::html::glance`]), each target linking to its page, the
//!   targets and every run;
//! - `targets/NAME.html` ([`target`]): the target's throughput per
//!   scenario over the runs with intervals, the change points of
//!   [`crate::changes`] drawn on them with their ratio and cause, stale
//!   runs marked, and its versions per run ([`crate::provenance`]);
//! - `runs/ID.html`: the run's whole report ([`crate::html`]), unchanged.

mod index;
mod links;
mod target;

pub use links::{run_page, target_page};

use crate::changes::{history, Query, SeriesHistory};
use crate::error::ReportError;
use shootout_store::{Host, RunData, Store};
use std::path::{Path, PathBuf};

/// What the site marks as stale, and when it was made.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Results older than this many days are stale.
    pub max_age_days: Option<u64>,
    /// Now, in seconds since the Unix epoch.
    pub now: i64,
    /// The host the site is made on: results from another are stale.
    pub here: Option<Host>,
}

/// Every run of `store`, oldest first.
pub fn load(store: &Store) -> Result<Vec<RunData>, ReportError> {
    let mut runs = store
        .runs()?
        .iter()
        .map(|r| store.load_run(r.id))
        .collect::<Result<Vec<_>, _>>()?;
    runs.sort_by_key(|r| r.run.id);
    Ok(runs)
}

/// Every target measured or recorded in `runs`, each once, in the order
/// first seen, with its language (for the palette).
pub(crate) fn targets(runs: &[RunData]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in runs {
        for t in &r.targets {
            if !out.iter().any(|(n, _)| *n == t.target) {
                out.push((t.target.clone(), t.language.clone()));
            }
        }
    }
    out
}

/// Writes the site of `runs` into `dir` (created if needed): the index,
/// a page per target and a page per run. Returns the pages written, the
/// index first.
pub fn write(runs: &[RunData], dir: &Path, opts: &Options) -> Result<Vec<PathBuf>, ReportError> {
    let mut sorted: Vec<&RunData> = runs.iter().collect();
    sorted.sort_by_key(|r| r.run.id);
    let series = history(
        runs,
        &Query {
            max_age_days: opts.max_age_days,
            now: opts.now,
            here: opts.here.clone(),
            ..Query::default()
        },
    );
    let targets = targets(runs);
    for d in [dir.to_path_buf(), dir.join("targets"), dir.join("runs")] {
        std::fs::create_dir_all(&d).map_err(|cause| ReportError::Write { path: d, cause })?;
    }
    let mut written = Vec::new();
    let mut page = |rel: &str, text: String| -> Result<(), ReportError> {
        let path = dir.join(rel);
        crate::write_file(&path, &text)?;
        written.push(path);
        Ok(())
    };
    page("index.html", index::render(&sorted, &series, &targets))?;
    for (name, _) in &targets {
        let mine: Vec<&SeriesHistory> = series.iter().filter(|s| s.target == *name).collect();
        page(
            &target_page(name),
            target::render(name, &sorted, &mine, &targets),
        )?;
    }
    for r in &sorted {
        page(&run_page(r.run.id), crate::html(r))?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_page_name_is_file_safe_and_unique() {
        assert_eq!(target_page("rust-axum"), "targets/rust-axum.html");
        let a = target_page("a b");
        let b = target_page("a_b");
        assert_ne!(a, b);
        assert!(a.starts_with("targets/a_b-") && a.ends_with(".html"), "{a}");
        let hostile = target_page("<script>alert(1)</script>");
        assert!(!hostile[8..].contains(['<', '>', '/', '(']), "{hostile}");
    }
}
