//! Study files: a TOML description of what to measure (targets, scenarios,
//! load levels, repetitions, order, restarts, warm-up, the CPU split) and what
//! the article being reproduced published. Parsing is strict: an unknown key,
//! a bad value or a missing field is an error naming the file, the key and the
//! line. The format is documented in `studies/README.md`. This crate is the
//! only reader of study files: the runner measures what it returns and the
//! report shows its published figures, keyed by the one list of metric
//! names ([`Metric`]). Load values are checked by the engine's rules
//! (`shootout_engine::Workload`), default routes come from
//! `shootout_servers::spec`.

pub mod capacity;
mod check;
mod level;
pub mod metric;
mod published;
mod raw;
pub mod scale;

pub use capacity::Capacity;
pub use level::auto_label;
pub use metric::{Aggregate, Better, Metric, MetricInfo, Scope, Unit};
pub use raw::{Order, Restart, ScenarioName};
pub use scale::{quick_scale, Estimate};

use raw::RawStudy;
use serde::Serialize;
use shootout_engine::{Load, Stop, Workload};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A study file that could not be read; names the file, the key and the line.
pub type StudyError = shootout_servers::FileError;

/// Which targets a study measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TargetSelection {
    /// Every target in the targets directory.
    All,
    List(Vec<String>),
}

/// How cores are split between servers and the load generator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum CpuSplit {
    /// Half and half of the CPUs this process may use (no pinning on 1 CPU).
    Auto,
    Explicit {
        server: Vec<usize>,
        generator: Vec<usize>,
    },
}

/// One load level of a scenario, in the engine's terms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    /// e.g. `n=1000 c=10`.
    pub label: String,
    /// The load and its stop, checked by the engine's rules.
    #[serde(skip)]
    pub workload: Workload,
    pub keepalive: bool,
    /// Requests in flight per connection (HTTP/1.1 pipelining); 1 is none.
    pub pipeline: usize,
    /// `queries=Q` for the routes that take it (queries, updates).
    pub queries: Option<u32>,
}

impl Level {
    pub fn load(&self) -> &Load {
        self.workload.load()
    }

    pub fn stop(&self) -> &Stop {
        self.workload.stop()
    }

    /// The label a level gets when the study gives none: its query count,
    /// if any, then its load, then its pipeline depth if it pipelines
    /// (`q=20 c=64 4s`, `c=64 5s p=16`).
    pub fn auto_label(&self) -> String {
        let mut label = auto_label(self.load(), self.stop());
        if let Some(q) = self.queries {
            label = format!("q={q} {label}");
        }
        if self.pipeline > 1 {
            label = format!("{label} p={}", self.pipeline);
        }
        label
    }
}

/// One `[[scenario]]`: a route of SPEC.md and its load levels.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    pub name: ScenarioName,
    pub method: String,
    pub path: String,
    pub body: Vec<u8>,
    /// Warm-up before every level.
    pub warmup: Duration,
    pub timeout: Duration,
    /// Empty for a capacity search.
    pub levels: Vec<Level>,
    /// A capacity search instead of levels (`capacity = { slo = [..] }`).
    pub capacity: Option<Capacity>,
}

impl Scenario {
    /// Whether it needs the database (SPEC.md "Database routes").
    pub fn needs_database(&self) -> bool {
        self.name.route().needs_database()
    }

    /// The path a level requests: the scenario's, with `queries=Q` when the
    /// level sets a query count.
    pub fn path_for(&self, level: &Level) -> String {
        match level.queries {
            Some(q) => self.name.route().path_with_queries(q),
            None => self.path.clone(),
        }
    }
}

impl Study {
    /// Whether any scenario needs the database.
    pub fn needs_database(&self) -> bool {
        self.scenarios.iter().any(Scenario::needs_database)
    }
}

/// A figure an article published, to show next to what was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Published {
    /// None: the figure is about the study as a whole (e.g. one RAM peak).
    pub scenario: Option<ScenarioName>,
    pub level: Option<u32>,
    pub metric: Metric,
    pub values: BTreeMap<String, f64>,
}

/// A parsed, validated study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Study {
    pub name: String,
    pub description: String,
    pub source: String,
    pub targets: TargetSelection,
    pub repetitions: u32,
    pub order: Order,
    pub restart: Restart,
    pub threads: Option<usize>,
    pub cpus: CpuSplit,
    /// The metrics the article reported (rows of its tables).
    pub metrics: Vec<Metric>,
    /// `DB_POOL_SIZE` for every server; None: 4 per server CPU.
    pub db_pool_size: Option<u32>,
    pub scenarios: Vec<Scenario>,
    pub published: Vec<Published>,
    /// Where it was read from, and its text as read.
    pub file: PathBuf,
    #[serde(skip)]
    pub text: String,
}

const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads and validates a study file.
pub fn load(path: &Path) -> Result<Study, StudyError> {
    let text = std::fs::read_to_string(path).map_err(|e| StudyError {
        file: path.to_path_buf(),
        line: None,
        key: None,
        message: format!("cannot read: {e}"),
    })?;
    parse(path, &text)
}

/// Parses study text; `path` is only used in messages and recorded.
pub fn parse(path: &Path, text: &str) -> Result<Study, StudyError> {
    let at = check::Locator { path, text };
    let raw: RawStudy = toml::from_str(text).map_err(|e| at.toml_error(&e))?;
    // In file order, so the first bad key is the one reported.
    let name = check::name(&at, &raw.name)?;
    let targets = check::targets(&at, &raw.targets)?;
    let repetitions = check::at_least_one(&at, raw.repetitions.as_ref(), "repetitions")?;
    let threads = check::at_least_one(&at, raw.threads.as_ref(), "threads")?;
    let cpus = check::cpus(&at, raw.cpus.as_ref())?;
    let metrics = check::metrics(&at, &raw.metrics)?;
    let db_pool_size = check::at_least_one(&at, raw.db_pool_size.as_ref(), "db_pool_size")?;
    let defaults = check::ScenarioDefaults {
        warmup: raw.warmup.map_or(DEFAULT_WARMUP, |d| d.0),
        timeout: raw.timeout.map_or(DEFAULT_TIMEOUT, |d| d.0),
    };
    let scenarios = check::scenarios(&at, &raw.scenario, &defaults)?;
    let published = match &raw.published {
        None => Vec::new(),
        Some(p) => published::parse(p, &scenarios).map_err(|(key, msg)| {
            let start = published::locate(text, &key);
            at.error(start.map(|a| a..a), Some(&key), msg)
        })?,
    };
    Ok(Study {
        name,
        description: raw.description.trim().to_string(),
        source: raw.source.trim().to_string(),
        targets,
        repetitions: repetitions.unwrap_or(1),
        order: raw.order.unwrap_or_default(),
        restart: raw.restart.unwrap_or_default(),
        threads,
        cpus,
        metrics,
        db_pool_size,
        scenarios,
        published,
        file: path.to_path_buf(),
        text: text.to_string(),
    })
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
mod tests;
