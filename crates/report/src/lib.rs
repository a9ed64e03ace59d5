//! Reports made from the stored data alone: seed-shaped Markdown tables, one
//! self-contained HTML page with charts, JSON with a committed schema, CSV,
//! and `compare` with real significance tests. Everything starts from a
//! [`shootout_store::RunData`]; the statistics live in [`stats`]. The
//! outputs of one load, one capacity search and a merged load live in
//! [`output`]. Renderers return Strings; only the CLI prints.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agreement;
pub mod budget;
pub mod capacity;
pub mod changes;
pub mod cluster;
pub mod colour;
pub mod compare;
pub mod context;
pub mod cost;
pub mod cpus;
pub mod csv;
pub mod database;
mod error;
pub mod escape;
pub mod findings;
pub mod group;
pub mod html;
pub mod json;
pub mod markdown;
pub mod metric;
pub mod noise;
pub mod output;
pub mod paths;
pub mod planned;
pub mod precision;
pub mod protocol;
pub mod provenance;
pub mod published;
pub mod ranking;
pub mod site;
pub mod stats;
pub mod tls_cost;
pub mod traffic;
pub mod trend;

pub use context::Context;
pub use error::ReportError;
pub use output::Format;
pub use shootout_store::RunData;

/// Renders the self-contained HTML report of a run.
pub fn html(data: &RunData) -> String {
    html::render(&Context::new(data))
}

/// Renders the JSON report of a run (pretty-printed, schema `docs/report.schema.json`).
pub fn json(data: &RunData) -> String {
    let v = json::render(data);
    serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into()) + "\n"
}

/// Renders the CSV report of a run: one row per measurement.
pub fn csv(data: &RunData) -> String {
    csv::render(data)
}

/// Renders the Markdown report of a run.
pub fn markdown(data: &RunData) -> String {
    markdown::render(&Context::new(data))
}

use std::path::{Path, PathBuf};

pub use paths::{reports_dir, run_reports_dir};

/// Opens the database and loads the run named by `spec` (`latest` or an id).
pub fn load(db: &Path, spec: &str) -> Result<RunData, ReportError> {
    let store = shootout_store::Store::open_existing(db)?;
    let id = store.resolve(spec)?;
    Ok(store.load_run(id)?)
}

/// Writes `report.md` and `report.html` of a loaded run into `dir` (created
/// if needed) and returns their paths.
pub fn write_reports(data: &RunData, dir: &Path) -> Result<(PathBuf, PathBuf), ReportError> {
    std::fs::create_dir_all(dir).map_err(|cause| ReportError::Write {
        path: dir.to_path_buf(),
        cause,
    })?;
    let md_path = dir.join("report.md");
    let html_path = dir.join("report.html");
    write_file(&md_path, &markdown(data))?;
    write_file(&html_path, &html(data))?;
    Ok((md_path, html_path))
}

/// Loads run `run_id` from the database at `db` and writes its `report.md`
/// and `report.html` into `dir`; returns their paths. `shootout run` calls
/// this at the end with the database's folder.
pub fn write_run_reports(
    db: &Path,
    run_id: i64,
    dir: &Path,
) -> Result<(PathBuf, PathBuf), ReportError> {
    let data = load(db, &run_id.to_string())?;
    write_reports(&data, dir)
}

/// Writes one report file (`-o FILE`, report.md, a trend page): an error
/// names the file, and a folder that does not exist as such.
pub fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|cause| ReportError::write(path, cause))
}

/// Writes the trend page of `study` (None: the latest run's study) from
/// every run of it in the results store at `db` to `out` (None: the
/// database's reports folder, [`trend::default_path`]); returns the path and the run count.
pub fn write_trend(
    db: &Path,
    study: Option<&str>,
    out: Option<&Path>,
) -> Result<(PathBuf, usize), ReportError> {
    let (study, runs) = trend::load(db, study)?;
    let path = out.map_or_else(|| trend::default_path(db, &study), Path::to_path_buf);
    if out.is_none() {
        let dir = reports_dir(db);
        std::fs::create_dir_all(&dir).map_err(|cause| ReportError::Write { path: dir, cause })?;
    }
    write_file(&path, &html::trend::render(&trend::trend(&study, &runs)))?;
    Ok((path, runs.len()))
}
