//! Study files: a TOML description of what to measure (targets, scenarios,
//! load levels, repetitions, order, restarts, warm-up, the CPU split) and what
//! the article being reproduced published. Parsing is strict: an unknown key,
//! a bad value or a missing field is an error naming the file, the key and the
//! line. The format is documented in `studies/README.md`. This crate is the
//! only reader of study files: the runner measures what it returns and the
//! report shows its published figures, keyed by the one list of metric
//! names ([`Metric`]). Load values are checked by the engine's rules
//! (`shootout_engine::Workload`), default routes come from
//! `shootout_contract::spec`.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod capacity;
mod check;
pub mod cost;
mod level;
pub mod limits;
mod locator;
pub mod metric;
pub mod mix;
mod model;
mod precision;
mod published;
mod quota;
mod raw;
mod resolve;
pub mod resources;
pub mod scale;
mod secs;
mod warmup;
pub mod ws;

pub use capacity::Capacity;
pub use cost::CostPlan;
pub use level::{auto_label, Level};
pub use locator::StudyError;
pub use metric::{Aggregate, Better, Metric, MetricInfo, Scope, Unit};
pub use mix::ScenarioMix;
pub use model::{CpuSplit, Published, Scenario, Study, TargetSelection};
pub use precision::Precision;
pub use raw::{Order, Restart};
pub use resolve::Resolve;
pub use resources::Resources;
pub use scale::{quick_scale, Estimate};
pub use warmup::{Warmup, STEADY_WINDOWS};

use locator::Locator;
use raw::RawStudy;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// A study's warm-up when it gives none: until steady (docs/steady-state.md).
const DEFAULT_WARMUP: Warmup = Warmup::AUTO;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads and validates a study file.
pub fn load(path: &Path) -> Result<Study, StudyError> {
    let text = limits::read(path)?;
    parse(path, &text)
}

/// Parses study text; `path` is only used in messages and recorded.
pub fn parse(path: &Path, text: &str) -> Result<Study, StudyError> {
    let at = Locator { path, text };
    let raw: RawStudy = toml::from_str(text).map_err(|e| at.toml_error(&e))?;
    // In file order, so the first bad key is the one reported.
    let name = check::name(&at, &raw.name)?;
    let targets = check::targets(&at, &raw.targets)?;
    let repetitions = check::at_least_one(&at, raw.repetitions.as_ref(), "repetitions")?;
    limits::repetitions(&at, raw.repetitions.as_ref(), "repetitions")?;
    let most = |t: Option<&Spanned<_>>, key| limits::repetitions(&at, t, key);
    most(
        raw.precision.as_ref().map(|p| &p.get_ref().max_repetitions),
        "precision.max_repetitions",
    )?;
    most(
        raw.resolve.as_ref().map(|r| &r.get_ref().max_repetitions),
        "resolve.max_repetitions",
    )?;
    let order = raw.order.unwrap_or_default();
    let seed = check::seed(&at, raw.seed.as_ref(), order)?;
    let precision = precision::check(&at, raw.precision.as_ref(), repetitions.unwrap_or(1))?;
    let margin = resolve::margin(&at, raw.margin.as_ref())?;
    let resolve = resolve::check(&at, raw.resolve.as_ref(), repetitions.unwrap_or(1))?;
    let threads = check::at_least_one(&at, raw.threads.as_ref(), "threads")?;
    let cpus = check::cpus(&at, raw.cpus.as_ref())?;
    let metrics = check::metrics(&at, &raw.metrics)?;
    let db_pool_size = check::at_least_one(&at, raw.db_pool_size.as_ref(), "db_pool_size")?;
    let resources = resources::check(&at, raw.resources.as_ref())?;
    let defaults = check::ScenarioDefaults {
        warmup: warmup::read(&at, raw.warmup.as_ref(), DEFAULT_WARMUP)?,
        timeout: raw.timeout.map_or(DEFAULT_TIMEOUT, |d| d.0),
        resources,
    };
    let scenarios = check::scenarios(&at, &raw.scenario, &defaults)?;
    let published = match &raw.published {
        None => Vec::new(),
        Some(p) => published::parse(p, &scenarios).map_err(|e| {
            let start = published::locate(text, &e.key);
            at.error(start.map(|a| a..a), Some(&e.key), e.message)
        })?,
    };
    let study = Study {
        name,
        description: raw.description.trim().to_string(),
        source: raw.source.trim().to_string(),
        targets,
        repetitions: repetitions.unwrap_or(1),
        order,
        seed,
        precision,
        margin,
        resolve,
        restart: raw.restart.unwrap_or_default(),
        threads,
        cpus,
        metrics,
        db_pool_size,
        resources,
        scenarios,
        published,
        file: path.to_path_buf(),
        text: text.to_string(),
    };
    limits::duration(&at, raw.repetitions.as_ref(), &study)?;
    Ok(study)
}

/// Whether a study text has a `[published]` table, read as TOML only:
/// true even when the study itself no longer parses (the report then says
/// why its published figures are missing).
pub fn declares_published(text: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key("published"))
}

/// Every `*.toml` study in `dir`, sorted by name; unreadable ones as errors.
pub fn discover(dir: &Path) -> std::io::Result<Vec<Result<Study, StudyError>>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    Ok(paths.iter().map(|p| load(p)).collect())
}

#[cfg(test)]
mod capacity_tests;
#[cfg(test)]
mod cost_tests;
#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod mix_tests;
#[cfg(test)]
mod protocol_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod warmup_tests;
#[cfg(test)]
mod ws_tests;
