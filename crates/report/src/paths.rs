//! Where a results store's reports go: a folder of their own beside the
//! database, named after it, one definition read by the run, `report`
//! and the trend page; and how a name (a study's, a target's) becomes a
//! file name ([`file_safe`]).

use std::path::{Path, PathBuf};

/// The folder of a database's reports, its own so that two databases in
/// one folder never write over each other's: beside the database, named
/// after it (`results/shootout.db` → `results/shootout/`).
pub fn reports_dir(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map_or_else(|| "shootout".into(), |s| s.to_string_lossy().into_owned());
    db.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(stem)
}

/// The folder of one run's `report.md` and `report.html`.
pub fn run_reports_dir(db: &Path, run_id: i64) -> PathBuf {
    reports_dir(db).join(format!("run-{run_id}"))
}

/// A name made file-safe: ASCII letters, digits, `-` and `_` kept, every
/// other character `_` (the trend page's `trend-STUDY.html`, the results
/// site's `targets/NAME.html`).
pub fn file_safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
