//! The capacity searches of a run (`capacity = {..}` scenarios), grouped for
//! the reports: per scenario, one row per target with the capacity found
//! (median over repetitions, 95% CI when there are two or more), the
//! verdicts, the SLO, and the latency-vs-offered-load curve of the median
//! repetition; for a mix (the `service` study), each kind's p99 at the
//! capacity and at every step of the curve, and the kind that broke the
//! SLO first. Markdown tables ([`markdown`]) and the JSON part ([`json`])
//! live here; the HTML charts in `html::capacity`. The CSV report stays one
//! row per load measurement with fixed columns: a search has a different
//! shape (levels, a curve), and its numbers are in the JSON.

use crate::escape::md;
use crate::metric::num;
use crate::output::capacity::{kind_names, kind_p99};
use crate::stats::Spread;
use serde_json::{json, Value};
use shootout_capacity::LevelRecord;
use shootout_store::{CapacitySearch, RunData};
use std::fmt::Write;

/// One target of one capacity scenario.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    pub target: &'a str,
    /// Over the repetitions that found one; None when none did.
    pub capacity: Option<Spread>,
    pub searches: Vec<&'a CapacitySearch>,
    /// The curve of the repetition whose capacity is nearest the median.
    pub curve: &'a [LevelRecord],
    /// That repetition's search (the first when none has a curve).
    pub median: Option<&'a CapacitySearch>,
}

impl Row<'_> {
    /// The level standing for the capacity of the median repetition.
    pub fn at_capacity(&self) -> Option<&LevelRecord> {
        self.median.and_then(|s| s.result.at_capacity())
    }

    /// A kind's p99 at the capacity (ms), for a mix's search.
    pub fn kind_p99_at_capacity(&self, kind: &str) -> Option<f64> {
        self.at_capacity().and_then(|l| kind_p99(l, kind))
    }

    /// `updates (p99 81 ms at 420 req/s)`: the kind that broke the SLO
    /// first in the median repetition, if a kind did.
    pub fn broke_first(&self) -> Option<String> {
        let b = self.median?.result.broke_first.as_ref()?;
        Some(format!(
            "{} (p99 {} ms at {} req/s)",
            b.kind,
            num(b.p99_ms),
            num(b.rate_rps)
        ))
    }

    /// `found`, or each verdict with its count when repetitions differ;
    /// `, unstable` when a search was.
    pub fn verdict(&self) -> String {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for s in &self.searches {
            let v = s.result.verdict.as_str();
            match counts.iter_mut().find(|c| c.0 == v) {
                Some(c) => c.1 += 1,
                None => counts.push((v, 1)),
            }
        }
        let mut text = match counts.as_slice() {
            [(v, _)] => v.to_string(),
            many => many
                .iter()
                .map(|(v, n)| format!("{v} ×{n}"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        if self.searches.iter().any(|s| s.result.unstable) {
            text.push_str(", unstable");
        }
        text
    }

    /// The highest generator-limited lower bound of the repetitions.
    pub fn lower_bound(&self) -> Option<f64> {
        self.searches
            .iter()
            .filter_map(|s| s.result.lower_bound_rps)
            .reduce(f64::max)
    }

    /// `52000 ± 1200`, `52000`, `≥ 50300` (only a generator-limited
    /// lower bound), or `none`.
    pub fn capacity_cell(&self) -> String {
        match &self.capacity {
            None => self
                .lower_bound()
                .map_or("none".to_string(), |b| format!("≥ {}", num(b))),
            Some(s) => match s.half_ci {
                Some(h) => format!("{} ± {}", num(s.median), num(h)),
                None => num(s.median),
            },
        }
    }
}

/// One capacity scenario: its SLO and its targets, best first.
#[derive(Debug, Clone)]
pub struct Section<'a> {
    pub scenario: &'a str,
    /// The rules as written, joined (`p99<=10ms, error_rate<=0.1%`).
    pub slo: String,
    pub rows: Vec<Row<'a>>,
    /// A mix's request kinds, in its order (none without a mix).
    pub kinds: Vec<&'a str>,
    /// The CPUs the servers had in the search: the scenario's CPU quota
    /// as it binds, else the CPUs they were pinned to.
    pub cpus: f64,
}

impl Section<'_> {
    /// `0.42`: CPUs needed per 1,000 req/s under the SLO, from a row's
    /// capacity (the figure to size a deployment by); None without one.
    pub fn cpus_per_1k(&self, r: &Row) -> Option<f64> {
        let cap = r.capacity.as_ref()?.median;
        (cap > 0.0).then(|| self.cpus / (cap / 1000.0))
    }

    /// The same as a table cell, `—` without a capacity.
    pub fn cpus_per_1k_cell(&self, r: &Row) -> String {
        self.cpus_per_1k(r).map_or("—".to_string(), num)
    }
}

/// The CPUs a scenario's servers had: its quota as it binds (the stored
/// study says the quota; it may no longer parse, then the pinning alone).
fn search_cpus(data: &RunData, scenario: &str) -> f64 {
    let pinned = data.run.pinning.server_cpus.len().max(1);
    let study = crate::group::stored_study(data).ok();
    study
        .and_then(|s| {
            let sc = s.scenarios.iter().find(|sc| sc.shown_name() == scenario)?;
            sc.resources.binding_cpus(pinned)
        })
        .unwrap_or(pinned as f64)
}

/// The run's capacity scenarios in the order first measured.
pub fn sections(data: &RunData) -> Vec<Section<'_>> {
    let mut scenarios: Vec<&str> = Vec::new();
    for s in &data.capacity {
        if !scenarios.contains(&s.scenario.as_str()) {
            scenarios.push(&s.scenario);
        }
    }
    scenarios.into_iter().map(|sc| section(data, sc)).collect()
}

fn section<'a>(data: &'a RunData, scenario: &'a str) -> Section<'a> {
    let searches: Vec<&CapacitySearch> = data
        .capacity
        .iter()
        .filter(|s| s.scenario == scenario)
        .collect();
    let slo = searches.first().map_or(String::new(), |s| {
        let rules: Vec<&str> = s.result.slo.iter().map(|t| t.text()).collect();
        rules.join(", ")
    });
    let mut targets: Vec<&str> = searches.iter().map(|s| s.target.as_str()).collect();
    targets.dedup();
    let mut rows: Vec<Row> = targets
        .into_iter()
        .map(|t| {
            row(
                t,
                searches.iter().copied().filter(|s| s.target == t).collect(),
            )
        })
        .collect();
    // Best first; targets without a capacity last, by name.
    rows.sort_by(|a, b| {
        // A lower bound ranks where it is known to be at least.
        let key = |r: &Row| {
            r.capacity
                .map(|s| s.median)
                .or(r.lower_bound())
                .unwrap_or(f64::NEG_INFINITY)
        };
        key(b).total_cmp(&key(a)).then(a.target.cmp(b.target))
    });
    let kinds = searches
        .first()
        .map_or_else(Vec::new, |s| kind_names(&s.result));
    Section {
        scenario,
        slo,
        rows,
        kinds,
        cpus: search_cpus(data, scenario),
    }
}

fn row<'a>(target: &'a str, searches: Vec<&'a CapacitySearch>) -> Row<'a> {
    let found: Vec<f64> = searches
        .iter()
        .filter_map(|s| s.result.capacity_rps)
        .collect();
    let capacity = Spread::of(&found);
    let median = capacity.map_or(0.0, |s| s.median);
    let nearest = searches
        .iter()
        .copied()
        .filter(|s| !s.result.curve.is_empty())
        .min_by(|a, b| {
            let d = |s: &CapacitySearch| (s.result.capacity_rps.unwrap_or(0.0) - median).abs();
            d(a).total_cmp(&d(b))
        });
    let curve = nearest.map_or(&[][..], |s| &s.result.curve[..]);
    Row {
        target,
        capacity,
        median: nearest.or(searches.first().copied()),
        searches,
        curve,
    }
}

/// The Markdown sections of the capacity scenarios (nothing without any).
pub fn markdown(out: &mut String, data: &RunData) {
    for sec in sections(data) {
        let _ = writeln!(
            out,
            "\n## {} — capacity under {}\n",
            md(sec.scenario),
            md(&sec.slo)
        );
        out.push_str(
            "The highest constant rate (open loop, intended-start latency) meeting every SLO, \
             confirmed; median over the repetitions `± half-width of the 95% CI` when there \
             are two or more. Best first. *CPUs per 1k req/s*: the servers' CPUs in the \
             search over the capacity in thousands, what a deployment needs per 1,000 req/s \
             under this SLO.\n\n",
        );
        if sec.kinds.is_empty() {
            out.push_str(
                "| Target | Capacity (req/s) | CPUs per 1k req/s | Verdict | SLO |\n\
                 |---|---:|---:|---|---|\n",
            );
        } else {
            mix_head(out, &sec);
        }
        for r in &sec.rows {
            let by_kind: String = sec
                .kinds
                .iter()
                .map(|k| {
                    format!(
                        " {} |",
                        r.kind_p99_at_capacity(k).map_or("—".to_string(), num)
                    )
                })
                .collect();
            let broke = match sec.kinds.is_empty() {
                true => String::new(),
                false => format!(" {} |", md(&r.broke_first().unwrap_or_else(|| "—".into()))),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |{by_kind}{broke} {} |",
                md(r.target),
                r.capacity_cell(),
                sec.cpus_per_1k_cell(r),
                md(&r.verdict()),
                md(&sec.slo)
            );
        }
        curve_table(out, &sec);
        kinds_curve_table(out, &sec);
    }
}

/// A mix's table head: each kind's p99 at the capacity, and the kind
/// that broke the SLO first.
fn mix_head(out: &mut String, sec: &Section) {
    out.push_str(
        "Each kind's p99 is at the capacity (the curve's level at that rate); *broke first* is the \
         kind whose rule was furthest past its bound at the lowest failing rate.\n\n",
    );
    out.push_str("| Target | Capacity (req/s) | CPUs per 1k req/s | Verdict |");
    for k in &sec.kinds {
        let _ = write!(out, " {} p99 (ms) |", md(k));
    }
    out.push_str(" Broke first | SLO |\n|---|---:|---:|---|");
    out.push_str(&"---:|".repeat(sec.kinds.len()));
    out.push_str("---|---|\n");
}

/// A mix's curve: each kind's p99 beside the total at every step.
fn kinds_curve_table(out: &mut String, sec: &Section) {
    if sec.kinds.is_empty() || sec.rows.iter().all(|r| r.curve.is_empty()) {
        return;
    }
    out.push_str(
        "\nPer-kind p99 (ms) at every step of the curve (the repetition nearest the median).\n\n\
         | Target | Step | req/s | p99 (ms) |",
    );
    for k in &sec.kinds {
        let _ = write!(out, " {} |", md(k));
    }
    out.push_str("\n|---|---:|---:|---:|");
    out.push_str(&"---:|".repeat(sec.kinds.len()));
    out.push('\n');
    for r in &sec.rows {
        for l in r.curve {
            let step = l
                .fraction
                .map_or("—".to_string(), |f| format!("{:.0}%", f * 100.0));
            let _ = write!(
                out,
                "| {} | {step} | {} | {} |",
                md(r.target),
                num(l.target_rps),
                num(l.latency_ms.p99)
            );
            for k in &sec.kinds {
                let _ = write!(out, " {} |", kind_p99(l, k).map_or("—".to_string(), num));
            }
            out.push('\n');
        }
    }
}

/// Latency against offered load: one row per target, one column per
/// fraction of its capacity.
fn curve_table(out: &mut String, sec: &Section) {
    if sec.rows.iter().all(|r| r.curve.is_empty()) {
        return;
    }
    out.push_str(
        "\nLatency vs offered load (the repetition nearest the median): each cell is \
         `target req/s: p50 / p99 ms`.\n\n| Target |",
    );
    let fractions = shootout_capacity::CURVE;
    for f in fractions {
        let _ = write!(out, " {:.0}% |", f * 100.0);
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(fractions.len()));
    out.push('\n');
    for r in sec.rows.iter().filter(|r| !r.curve.is_empty()) {
        let _ = write!(out, "| {} |", md(r.target));
        for f in fractions {
            let cell = r
                .curve
                .iter()
                .find(|l| l.fraction.is_some_and(|x| (x - f).abs() < 1e-6))
                .map_or("—".to_string(), |l| {
                    format!(
                        "{}: {} / {}",
                        num(l.target_rps),
                        num(l.latency_ms.p50),
                        num(l.latency_ms.p99)
                    )
                });
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
}

/// The JSON part: every search whole, and a summary per scenario and target.
pub fn json(data: &RunData) -> Value {
    let searches: Vec<Value> = data
        .capacity
        .iter()
        .map(|s| {
            json!({
                "target": s.target,
                "scenario": s.scenario,
                "repetition": s.repetition,
                "result": serde_json::to_value(&s.result).unwrap_or(Value::Null),
            })
        })
        .collect();
    let mut summary = Vec::new();
    for sec in sections(data) {
        for r in &sec.rows {
            let cap = r.capacity.as_ref();
            let ci = |f: fn(&Spread) -> f64| {
                cap.filter(|s| s.half_ci.is_some())
                    .map_or(Value::Null, |s| json!(f(s)))
            };
            summary.push(json!({
                "target": r.target,
                "scenario": sec.scenario,
                "slo": sec.slo,
                "repetitions": r.searches.len(),
                "capacity_rps": {
                    "median": cap.map_or(Value::Null, |s| json!(s.median)),
                    "ci_low": ci(Spread::ci_low),
                    "ci_high": ci(Spread::ci_high),
                },
                "verdict": r.verdict(),
                "cpus": sec.cpus,
                "cpus_per_1k_rps": sec.cpus_per_1k(r).map_or(Value::Null, |v| json!(v)),
                "p99_ms_by_kind": sec.kinds.iter().map(|k| {
                    (k.to_string(), r.kind_p99_at_capacity(k).map_or(Value::Null, |v| json!(v)))
                }).collect::<serde_json::Map<_, _>>(),
                "broke_first": r.median
                    .and_then(|s| s.result.broke_first.as_ref())
                    .map_or(Value::Null, |b| json!(b)),
            }));
        }
    }
    json!({ "searches": searches, "summary": summary })
}
