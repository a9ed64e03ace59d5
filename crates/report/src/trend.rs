//! Trends: every run of one study in the results store, oldest first, and per
//! scenario × level × target the median throughput with its 95% interval
//! in each run, plus the `compare` verdict against the run before (the same
//! test and the same basis, repetitions or per-second values), so that a
//! regression stands out. Rendered by [`crate::html::trend`].

use crate::compare::compare;
use crate::error::ReportError;
use crate::group::groups;
use crate::metric::Metric;
use crate::stats::{Label, Spread, Verdict};
use shootout_store::{RunData, Store};
use std::path::{Path, PathBuf};

/// One run of the study, as the trend page dates and names it.
#[derive(Debug, Clone)]
pub struct TrendRun {
    pub id: i64,
    pub started_at: String,
    pub tool_version: String,
    pub git_commit: Option<String>,
    pub status: String,
}

/// One target's throughput in one run.
#[derive(Debug, Clone)]
pub struct Point {
    /// Index into [`Trend::runs`].
    pub run: usize,
    pub rps: Spread,
    pub p99: Option<Spread>,
    /// Against the previous run that measured this target here.
    pub vs_previous: Option<Verdict>,
}

/// Below this drop a significant slowdown is not called a regression: with
/// 1% noise three repetitions already make a 1% drop significant, and a
/// page that marks every such drop would hide the real ones.
pub const REGRESSION_PCT: f64 = 3.0;

impl Point {
    /// Significantly slower than the previous run, by more than [`REGRESSION_PCT`].
    pub fn regressed(&self) -> bool {
        self.vs_previous
            .is_some_and(|v| v.label == Label::Slower && v.change_pct < -REGRESSION_PCT)
    }
}

/// One target in one scenario × level, across runs.
#[derive(Debug, Clone)]
pub struct Series {
    pub target: String,
    pub points: Vec<Point>,
}

/// One scenario × level across runs.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub title: String,
    pub slug: String,
    /// What its throughput counts (`req/s`, a WebSocket echo's `msg/s`,
    /// a hold's `handshakes/s`).
    pub traffic: crate::traffic::Traffic,
    pub series: Vec<Series>,
}

/// Every run of a study and its series.
#[derive(Debug, Clone)]
pub struct Trend {
    pub study: String,
    pub runs: Vec<TrendRun>,
    pub scenarios: Vec<Scenario>,
    /// (target, language) of every target seen, for the palette.
    pub targets: Vec<(String, String)>,
}

impl Trend {
    /// Regressions against the previous run ([`Point::regressed`]), as sentences.
    pub fn regressions(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sc in &self.scenarios {
            for s in &sc.series {
                for p in &s.points {
                    let Some(v) = p.vs_previous.filter(|_| p.regressed()) else {
                        continue;
                    };
                    {
                        out.push(format!(
                            "{} on {}: run {} is {:.1}% slower than the run before ({}, p = {}).",
                            s.target,
                            sc.title,
                            self.runs[p.run].id,
                            -v.change_pct,
                            v.test.as_str(),
                            v.p_value.map_or("n/a".into(), crate::compare::p_text),
                        ));
                    }
                }
            }
        }
        out
    }
}

/// Where `shootout report --trend STUDY` writes by default: in the
/// database's reports folder ([`crate::paths::reports_dir`]), `trend-STUDY.html`
/// (the name made file-safe).
pub fn default_path(db: &Path, study: &str) -> PathBuf {
    let safe = crate::paths::file_safe(study);
    crate::paths::reports_dir(db).join(format!("trend-{safe}.html"))
}

/// Loads every run of `study` (None: the latest run's study), oldest first.
pub fn load(db: &Path, study: Option<&str>) -> Result<(String, Vec<RunData>), ReportError> {
    let store = Store::open_existing(db)?;
    let listing = store.runs()?;
    let study = match study {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => listing
            .first()
            .map(|r| r.study.clone())
            .ok_or_else(|| shootout_store::StoreError::NoSuchRun("latest".into()))?,
    };
    let mut ids: Vec<i64> = listing
        .iter()
        .filter(|r| r.study == study)
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    let runs = ids
        .into_iter()
        .map(|id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((study, runs))
}

/// The trend of `runs` (one study's, oldest first).
pub fn trend(study: &str, runs: &[RunData]) -> Trend {
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut targets: Vec<(String, String)> = Vec::new();
    for (ri, data) in runs.iter().enumerate() {
        for t in &data.targets {
            if !targets.iter().any(|(n, _)| *n == t.target) {
                targets.push((t.target.clone(), t.language.clone()));
            }
        }
        for g in groups(data) {
            let slug = g.slug();
            let idx = match scenarios.iter().position(|s| s.slug == slug) {
                Some(i) => i,
                None => {
                    scenarios.push(Scenario {
                        title: g.title(),
                        slug,
                        traffic: g.traffic,
                        series: Vec::new(),
                    });
                    scenarios.len() - 1
                }
            };
            for c in &g.columns {
                let Some(rps) = c.spread(Metric::Rps) else {
                    continue;
                };
                let series = &mut scenarios[idx].series;
                let si = match series.iter().position(|s| s.target == c.target) {
                    Some(i) => i,
                    None => {
                        series.push(Series {
                            target: c.target.to_string(),
                            points: Vec::new(),
                        });
                        series.len() - 1
                    }
                };
                let vs_previous = series[si]
                    .points
                    .last()
                    .and_then(|p| verdict(&runs[p.run], data, g.scenario, g.level, c.target));
                series[si].points.push(Point {
                    run: ri,
                    rps,
                    p99: c.spread(Metric::P99),
                    vs_previous,
                });
            }
        }
    }
    Trend {
        study: study.to_string(),
        runs: runs
            .iter()
            .map(|d| TrendRun {
                id: d.run.id,
                started_at: d.run.started_at.clone(),
                tool_version: d.run.tool_version.clone(),
                git_commit: d.run.git_commit.clone(),
                status: d.run.status.to_string(),
            })
            .collect(),
        scenarios,
        targets,
    }
}

/// `compare`'s RPS verdict for one target × scenario × level, from `a` to `b`.
fn verdict(a: &RunData, b: &RunData, scenario: &str, level: u32, target: &str) -> Option<Verdict> {
    compare(a, b, crate::group::run_margin(a))
        .rows
        .into_iter()
        .find(|r| r.scenario == scenario && r.level == level && r.target == target)
        .map(|r| r.rps_verdict)
}
