//! Study files: a TOML description of what to measure (targets, scenarios,
//! load levels, repetitions, order, restarts, warm-up, the CPU split) and what
//! the article being reproduced published. Parsing is strict: an unknown key,
//! a bad value or a missing field is an error naming the file, the key and the
//! line. The format is documented in `studies/README.md`. This crate is the
//! only reader of study files: the runner measures what it returns and the
//! report shows its published figures, keyed by the one list of metric
//! names ([`MetricName`]). Load values are checked by the engine's rules
//! (`shootout_engine::Workload`), default routes come from
//! `shootout_servers::spec`.

mod level;
pub mod metric;
mod published;
mod raw;
pub mod scale;

pub use level::auto_label;
pub use metric::MetricName;
pub use raw::{Order, Restart, ScenarioName};
pub use scale::{quick_scale, Estimate};

use raw::{RawCpus, RawLoad, RawStudy, RawTargets};
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
}

impl Level {
    pub fn load(&self) -> &Load {
        self.workload.load()
    }

    pub fn stop(&self) -> &Stop {
        self.workload.stop()
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
    pub levels: Vec<Level>,
}

/// A figure an article published, to show next to what was measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Published {
    /// None: the figure is about the study as a whole (e.g. one RAM peak).
    pub scenario: Option<ScenarioName>,
    pub level: Option<u32>,
    pub metric: MetricName,
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
    pub metrics: Vec<MetricName>,
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
    let err = |span: Option<std::ops::Range<usize>>, key: Option<&str>, message: String| {
        let line = span
            .as_ref()
            .map(|s| shootout_servers::located::line_at(text, s.start));
        let key = key
            .map(str::to_string)
            .or_else(|| span.and_then(|s| shootout_servers::located::key_at(text, s.start)));
        StudyError {
            file: path.to_path_buf(),
            line,
            key,
            message,
        }
    };
    let raw: RawStudy = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        let key = message
            .strip_prefix("unknown field `")
            .and_then(|r| r.split('`').next())
            .map(str::to_string);
        let mut se = err(e.span(), None, message);
        if key.is_some() {
            se.key = key;
        }
        se
    })?;

    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(
            Some(raw.name.span()),
            Some("name"),
            format!("'{name}' must be non-empty letters, digits, '-' or '_'"),
        ));
    }
    let targets = match raw.targets.get_ref() {
        RawTargets::All(s) if s == "all" => TargetSelection::All,
        RawTargets::All(s) => {
            return Err(err(
                Some(raw.targets.span()),
                Some("targets"),
                format!("'{s}' is neither \"all\" nor a list of target names"),
            ))
        }
        RawTargets::List(l) if l.is_empty() => {
            return Err(err(
                Some(raw.targets.span()),
                Some("targets"),
                "no targets listed".into(),
            ))
        }
        RawTargets::List(l) => TargetSelection::List(l.clone()),
    };
    let repetitions = match &raw.repetitions {
        Some(r) if *r.get_ref() == 0 => {
            return Err(err(
                Some(r.span()),
                Some("repetitions"),
                "must be at least 1".into(),
            ))
        }
        Some(r) => *r.get_ref(),
        None => 1,
    };
    let threads = match &raw.threads {
        Some(t) if *t.get_ref() == 0 => {
            return Err(err(
                Some(t.span()),
                Some("threads"),
                "must be at least 1".into(),
            ))
        }
        t => t.as_ref().map(|t| *t.get_ref()),
    };
    let cpus = match &raw.cpus {
        None => CpuSplit::Auto,
        Some(c) => match c.get_ref() {
            RawCpus::Auto(s) if s == "auto" => CpuSplit::Auto,
            RawCpus::Auto(s) => {
                return Err(err(
                    Some(c.span()),
                    Some("cpus"),
                    format!("'{s}' is not \"auto\""),
                ))
            }
            RawCpus::Split { server, generator } => {
                if server.is_empty() || generator.is_empty() {
                    return Err(err(
                        Some(c.span()),
                        Some("cpus"),
                        "server and generator each need at least one CPU".into(),
                    ));
                }
                CpuSplit::Explicit {
                    server: server.clone(),
                    generator: generator.clone(),
                }
            }
        },
    };
    let mut metrics = Vec::new();
    for m in &raw.metrics {
        let Some(name) = MetricName::parse(m.get_ref()) else {
            return Err(err(
                Some(m.span()),
                Some("metrics"),
                format!(
                    "unknown metric '{}'; known: {}",
                    m.get_ref(),
                    MetricName::known()
                ),
            ));
        };
        metrics.push(name);
    }
    let warmup = raw.warmup.map_or(DEFAULT_WARMUP, |d| d.0);
    let timeout = raw.timeout.map_or(DEFAULT_TIMEOUT, |d| d.0);
    if raw.scenario.is_empty() {
        return Err(err(None, Some("scenario"), "no [[scenario]] given".into()));
    }
    let mut scenarios = Vec::new();
    for s in &raw.scenario {
        let span = s.span();
        let s = s.get_ref();
        let route = s.name.route();
        let keepalive = s.keepalive.unwrap_or(true);
        let loads: Vec<&toml::Spanned<RawLoad>> = match (&s.load, &s.levels) {
            (Some(l), None) => vec![l],
            (None, Some(ls)) if !ls.is_empty() => ls.iter().collect(),
            (Some(_), Some(_)) => {
                return Err(err(
                    Some(span),
                    Some("load"),
                    "give either `load` or `levels`, not both".into(),
                ))
            }
            _ => {
                return Err(err(
                    Some(span),
                    Some("load"),
                    format!(
                        "scenario '{}' needs a `load` or a non-empty `levels`",
                        s.name
                    ),
                ))
            }
        };
        let mut levels = Vec::new();
        for l in loads {
            let level = level::level_from(l.get_ref(), keepalive)
                .map_err(|(key, msg)| err(Some(l.span()), Some(key), msg))?;
            levels.push(level);
        }
        let t = s.timeout.map_or(timeout, |d| d.0);
        if t.is_zero() {
            return Err(err(
                Some(span),
                Some("timeout"),
                "must be more than 0".into(),
            ));
        }
        let path = match &s.path {
            None => route.path.to_string(),
            Some(p) if p.get_ref().starts_with('/') => p.get_ref().clone(),
            Some(p) => {
                return Err(err(
                    Some(p.span()),
                    Some("path"),
                    format!("'{}' must start with '/'", p.get_ref()),
                ))
            }
        };
        scenarios.push(Scenario {
            name: s.name,
            method: s
                .method
                .clone()
                .unwrap_or_else(|| route.method.as_str().to_string()),
            path,
            body: match &s.body {
                Some(b) => b.clone().into_bytes(),
                None => route.default_body(),
            },
            warmup: s.warmup.map_or(warmup, |d| d.0),
            timeout: t,
            levels,
        });
    }
    let published = match &raw.published {
        None => Vec::new(),
        Some(p) => published::parse(p, &scenarios).map_err(|(key, msg)| {
            let at = published::locate(text, &key);
            err(at.map(|a| a..a), Some(&key), msg)
        })?,
    };
    Ok(Study {
        name,
        description: raw.description.trim().to_string(),
        source: raw.source.trim().to_string(),
        targets,
        repetitions,
        order: raw.order.unwrap_or_default(),
        restart: raw.restart.unwrap_or_default(),
        threads,
        cpus,
        metrics,
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
mod tests;
