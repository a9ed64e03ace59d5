//! `shootout history`'s series: per study, host, scenario × level and
//! target, the runs over time with their throughput and its 95% interval
//! (the figures of the trend page, [`crate::trend`]), the change points E-Divisive
//! means finds in them ([`crate::stats::changepoint`]), and for each what
//! changed at that run (against the run before it): the target's
//! source (its build's inputs, when no listed version explains it), the target's framework or library versions, its
//! runtime, shootout's version or commit, the host, or the database. A
//! change that nothing recorded explains is said as such.
//!
//! Runs from different hosts (hostname, CPU model, cores) are never put in
//! one series unless asked (`all_hosts`). A row is marked stale when it
//! is older than the age asked for, comes from another host than the one
//! asking, or ran on another release line of its runtime than the
//! series' latest run ([`release_line`]).

use crate::group::{groups, run_margin};
use crate::metric::Metric;
use crate::stats::changepoint::{changes, Search};
use crate::stats::Spread;
use serde::Serialize;
use shootout_store::{Host, RunData, TargetRecord};

/// What `shootout history` asks for.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only this target.
    pub target: Option<String>,
    /// Only scenarios whose name starts with this.
    pub scenario: Option<String>,
    /// Only runs on this hostname.
    pub host: Option<String>,
    /// Put runs of every host in one series.
    pub all_hosts: bool,
    /// Rows older than this many days are stale.
    pub max_age_days: Option<u64>,
    /// Now, in seconds since the Unix epoch (the caller's clock).
    pub now: i64,
    /// The host asking: rows from another are stale.
    pub here: Option<Host>,
}

/// One series.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesHistory {
    pub study: String,
    pub scenario: String,
    pub target: String,
    /// The host's label, or "every host" with `all_hosts`.
    pub host: String,
    pub rows: Vec<Row>,
    pub changes: Vec<ChangeAt>,
}

/// One run of a series.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub run: i64,
    pub started_at: String,
    /// Median requests per second over the run's starts.
    pub rps: f64,
    /// Its 95% interval, on the log scale (never below zero); None with
    /// one start.
    pub interval: Option<(f64, f64)>,
    /// Why the row is stale, if it is.
    pub stale: Vec<String>,
}

/// A change point: the first run of a new level.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeAt {
    /// The run it starts at, and its index in `rows`.
    pub run: i64,
    pub row: usize,
    /// Geometric mean after / before, with its 95% interval.
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    pub p_value: f64,
    /// What changed between the run before and this one; empty: nothing
    /// recorded did.
    pub causes: Vec<String>,
}

/// The series `runs` hold (any order), filtered by `query`.
pub fn history(runs: &[RunData], query: &Query) -> Vec<SeriesHistory> {
    let mut runs: Vec<&RunData> = runs
        .iter()
        .filter(|r| {
            query
                .host
                .as_ref()
                .is_none_or(|h| r.run.host.hostname == *h)
        })
        .collect();
    runs.sort_by_key(|r| r.run.id);
    // Groups of runs one series may span: one study on one host (the
    // runs by reference: a run is never copied).
    let mut groups: Vec<(String, String, Vec<&RunData>)> = Vec::new();
    for r in runs {
        let host = if query.all_hosts {
            "every host".to_string()
        } else {
            host_label(&r.run.host)
        };
        match groups
            .iter_mut()
            .find(|(s, h, _)| *s == r.run.study && *h == host)
        {
            Some(g) => g.2.push(r),
            None => groups.push((r.run.study.clone(), host, vec![r])),
        }
    }
    let mut out = Vec::new();
    for (study, host, group) in &groups {
        for (scenario, target, points) in figures(group) {
            let (slug, title) = &scenario;
            if query
                .scenario
                .as_ref()
                .is_some_and(|s| !slug.starts_with(s.as_str()) && !title.starts_with(s.as_str()))
            {
                continue;
            }
            if query.target.as_ref().is_some_and(|t| *t != target) {
                continue;
            }
            out.push(series(study, host, title, &target, group, &points, query));
        }
    }
    out
}

/// A series' points: (index into the group, the run's throughput).
type Points = Vec<(usize, Spread)>;

/// Every (scenario × level, target) of `group` with its throughput in
/// each run that measured it, in order of first appearance.
fn figures(group: &[&RunData]) -> Vec<((String, String), String, Points)> {
    let mut out: Vec<((String, String), String, Points)> = Vec::new();
    for (ri, data) in group.iter().enumerate() {
        for g in groups(data) {
            let key = (g.slug(), g.title());
            for c in &g.columns {
                let Some(rps) = c.spread(Metric::Rps) else {
                    continue;
                };
                match out.iter_mut().find(|(k, t, _)| *k == key && t == c.target) {
                    Some(s) => s.2.push((ri, rps)),
                    None => out.push((key.clone(), c.target.to_string(), vec![(ri, rps)])),
                }
            }
        }
    }
    out
}

fn series(
    study: &str,
    host: &str,
    scenario: &str,
    target: &str,
    group: &[&RunData],
    points: &Points,
    query: &Query,
) -> SeriesHistory {
    let data: Vec<&RunData> = points.iter().map(|(ri, _)| group[*ri]).collect();
    let latest_line = data
        .last()
        .and_then(|d| record(d, target))
        .and_then(runtime)
        .map(release_line);
    let rows: Vec<Row> = points
        .iter()
        .zip(&data)
        .map(|((_, rps), d)| Row {
            run: d.run.id,
            started_at: d.run.started_at.clone(),
            rps: rps.median,
            interval: rps.log_bounds(),
            stale: stale(d, target, latest_line.as_deref(), query),
        })
        .collect();
    let figures: Vec<f64> = rows.iter().map(|r| r.rps).collect();
    let search = Search {
        margin: data.last().map_or_else(Default::default, |d| run_margin(d)),
        ..Search::default()
    };
    let changes = changes(&figures, &search)
        .into_iter()
        .map(|c| ChangeAt {
            run: rows[c.index].run,
            row: c.index,
            ratio: c.ratio,
            interval: c.interval,
            p_value: c.p_value,
            causes: causes(data[c.index - 1], data[c.index], target),
        })
        .collect();
    SeriesHistory {
        study: study.to_string(),
        scenario: scenario.to_string(),
        target: target.to_string(),
        host: host.to_string(),
        rows,
        changes,
    }
}

/// A host as the history names it: hostname, CPU model and cores.
pub fn host_label(h: &Host) -> String {
    format!("{} ({}, {} cores)", h.hostname, h.cpu_model, h.cores)
}

/// Whether two runs' hosts are the same machine for comparing figures.
pub fn same_host(a: &Host, b: &Host) -> bool {
    a.hostname == b.hostname && a.cpu_model == b.cpu_model && a.cores == b.cores
}

fn record<'a>(d: &'a RunData, target: &str) -> Option<&'a TargetRecord> {
    d.targets.iter().find(|t| t.target == target)
}

fn runtime(t: &TargetRecord) -> Option<&str> {
    t.provenance.as_ref().and_then(|p| p.runtime.version())
}

/// The release line of a runtime's version: its first number, or its
/// first two where the first never moves (Rust 1.x, Go 1.x, Python 3.x:
/// `rustc 1.91.0` → `rustc 1.91`, `node v20.19.2` → `node v20`).
pub fn release_line(version: &str) -> String {
    let start = version
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(version.len());
    let (name, rest) = version.split_at(start);
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next().unwrap_or("");
    let keep_minor = matches!(major.parse::<u32>(), Ok(m) if m <= 3);
    match parts.next().filter(|m| keep_minor && !m.is_empty()) {
        Some(minor) => format!("{name}{major}.{minor}"),
        None => format!("{name}{major}"),
    }
}

fn stale(d: &RunData, target: &str, latest_line: Option<&str>, q: &Query) -> Vec<String> {
    let mut why = Vec::new();
    if let (Some(days), Some(at)) = (
        q.max_age_days,
        shootout_store::unix_from_rfc3339(&d.run.started_at),
    ) {
        let age = (q.now - at).max(0) as u64 / 86_400;
        if age > days {
            why.push(format!("{age} days old (over --max-age {days}d)"));
        }
    }
    if let Some(here) = &q.here {
        if !same_host(here, &d.run.host) {
            why.push(format!("another host: {}", host_label(&d.run.host)));
        }
    }
    if let (Some(latest), Some(v)) = (latest_line, record(d, target).and_then(runtime)) {
        let line = release_line(v);
        if line != latest {
            why.push(format!("runtime {line}, the latest run has {latest}"));
        }
    }
    why
}

/// What changed from run `a` to run `b` for `target`.
fn causes(a: &RunData, b: &RunData, target: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (ta, tb) = (record(a, target), record(b, target));
    let (pa, pb) = (
        ta.and_then(|t| t.provenance.as_ref()),
        tb.and_then(|t| t.provenance.as_ref()),
    );
    if let (Some(pa), Some(pb)) = (pa, pb) {
        for new in &pb.packages {
            let old = pa.packages.iter().find(|p| p.name == new.name);
            match (old.map(|p| p.recorded.version()), new.recorded.version()) {
                (Some(Some(o)), Some(n)) if o != n => {
                    out.push(format!("{} {o} → {n}", new.name));
                }
                (None, Some(n)) => out.push(format!("{} {n} added", new.name)),
                _ => {}
            }
        }
        if let (Some(o), Some(n)) = (pa.runtime.version(), pb.runtime.version()) {
            if o != n {
                out.push(format!("runtime {o} → {n}"));
            }
        }
        if let (Some(o), Some(n)) = (&pa.build, &pb.build) {
            if o != n && out.is_empty() {
                // Neither a listed package nor the runtime moved: the
                // target's own source (or its build) did.
                out.push(format!("the target's build inputs (source) {o} → {n}"));
            }
        }
    }
    if ta.and_then(|t| t.run_command.as_ref()) != tb.and_then(|t| t.run_command.as_ref()) {
        out.push("the target's run command".to_string());
    }
    if a.run.tool_version != b.run.tool_version {
        out.push(format!(
            "shootout {} → {}",
            a.run.tool_version, b.run.tool_version
        ));
    } else if a.run.git_commit != b.run.git_commit {
        let short = |c: &Option<String>| {
            c.as_deref()
                .map_or("unknown".to_string(), |c| c.chars().take(10).collect())
        };
        out.push(format!(
            "shootout's commit {} → {}",
            short(&a.run.git_commit),
            short(&b.run.git_commit)
        ));
    }
    let (ha, hb) = (&a.run.host, &b.run.host);
    if !same_host(ha, hb) {
        out.push(format!("host {} → {}", host_label(ha), host_label(hb)));
    } else if ha.kernel != hb.kernel {
        out.push(format!("kernel {} → {}", ha.kernel, hb.kernel));
    }
    let db = |d: &RunData| d.run.database.as_ref().map(|x| x.version.clone());
    if let (Some(o), Some(n)) = (db(a), db(b)) {
        if o != n {
            out.push(format!("PostgreSQL {o} → {n}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_line_keeps_what_moves() {
        assert_eq!(release_line("rustc 1.91.0"), "rustc 1.91");
        assert_eq!(release_line("go1.26.8"), "go1.26");
        assert_eq!(release_line("CPython 3.11.2"), "CPython 3.11");
        assert_eq!(release_line("node v20.19.2"), "node v20");
        assert_eq!(release_line("Java 17.0.13"), "Java 17");
        assert_eq!(release_line("unknown"), "unknown");
    }
}
