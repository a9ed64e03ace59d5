//! `shootout compare A B`: for each target × scenario × level present in
//! both runs, the change in RPS and p99 from A (the baseline) to B with a
//! significance test. Samples are the repetitions when both runs have two or
//! more; otherwise the per-second timeline values (noted as such).

use crate::escape::md;
use crate::group::{groups, Column};
use crate::metric::{num, second_rate, Metric};
use crate::stats::{decide, median, Label, Verdict};
use shootout_store::RunData;
use std::fmt::Write;

/// What the samples of a row were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    Repetitions,
    Seconds,
}

/// One target × scenario × level in both runs.
#[derive(Debug, Clone)]
pub struct Row {
    pub target: String,
    pub scenario: String,
    pub level: u32,
    pub level_label: String,
    pub basis: Basis,
    pub rps: (f64, f64),
    pub rps_verdict: Verdict,
    pub p99: (f64, f64),
    pub p99_verdict: Verdict,
}

/// The comparison of two runs.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: i64,
    pub b: i64,
    pub rows: Vec<Row>,
}

/// Compares run `b` against the baseline `a`.
pub fn compare(a: &RunData, b: &RunData) -> Comparison {
    let gb = groups(b);
    let mut rows = Vec::new();
    for ga in groups(a) {
        let Some(other) = gb
            .iter()
            .find(|g| g.scenario == ga.scenario && g.level == ga.level)
        else {
            continue;
        };
        for ca in &ga.columns {
            if let Some(cb) = other.columns.iter().find(|c| c.target == ca.target) {
                rows.push(row(ca, cb, ga.scenario, ga.level, ga.level_label));
            }
        }
    }
    Comparison {
        a: a.run.id,
        b: b.run.id,
        rows,
    }
}

fn row(a: &Column, b: &Column, scenario: &str, level: u32, label: &str) -> Row {
    let by_reps = a.reps.len() >= 2 && b.reps.len() >= 2;
    let (basis, rps_a, rps_b, p99_a, p99_b) = if by_reps {
        let v = |c: &Column, m| c.values(m);
        (
            Basis::Repetitions,
            v(a, Metric::Rps),
            v(b, Metric::Rps),
            v(a, Metric::P99),
            v(b, Metric::P99),
        )
    } else {
        let (ra, pa) = seconds(a);
        let (rb, pb) = seconds(b);
        (Basis::Seconds, ra, rb, pa, pb)
    };
    Row {
        target: a.target.to_string(),
        scenario: scenario.to_string(),
        level,
        level_label: label.to_string(),
        basis,
        rps: (
            median(&a.values(Metric::Rps)),
            median(&b.values(Metric::Rps)),
        ),
        rps_verdict: decide(&rps_a, &rps_b, true),
        p99: (
            median(&a.values(Metric::P99)),
            median(&b.values(Metric::P99)),
        ),
        p99_verdict: decide(&p99_a, &p99_b, false),
    }
}

/// Per-second req/s and p99 over every repetition's timeline, leaving out
/// seconds of which less than half was measured.
fn seconds(c: &Column) -> (Vec<f64>, Vec<f64>) {
    let mut rps = Vec::new();
    let mut p99 = Vec::new();
    for m in &c.reps {
        for s in &m.timeline {
            if let Some(r) = second_rate(m, s, 0.5) {
                rps.push(r);
                p99.push(s.p99_ms);
            }
        }
    }
    (rps, p99)
}

impl Comparison {
    /// Rows whose RPS is significantly lower in B by more than `pct` percent.
    pub fn slower_than(&self, pct: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.rps_verdict.label == Label::Slower && r.rps_verdict.change_pct < -pct)
            .collect()
    }

    /// A Markdown table of every row.
    pub fn render(&self) -> String {
        let mut out = format!(
            "# Compare run {} (baseline) → run {}\n\n\
             | Target | Scenario | RPS A | RPS B | ΔRPS | RPS test | RPS | p99 A (ms) | p99 B (ms) | Δp99 | p99 test | p99 |\n\
             |---|---|---:|---:|---:|---|---|---:|---:|---:|---|---|\n",
            self.a, self.b
        );
        for r in &self.rows {
            let scenario = if r.level_label.is_empty() {
                r.scenario.clone()
            } else {
                format!("{} ({})", r.scenario, r.level_label)
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md(&r.target),
                md(&scenario),
                num(r.rps.0),
                num(r.rps.1),
                pct(r.rps_verdict.change_pct),
                test_text(&r.rps_verdict, r.basis),
                r.rps_verdict.label.as_str(),
                num(r.p99.0),
                num(r.p99.1),
                pct(r.p99_verdict.change_pct),
                test_text(&r.p99_verdict, r.basis),
                r.p99_verdict.label.as_str(),
            );
        }
        if self.rows.is_empty() {
            out.push_str("\nNo target × scenario × level is present in both runs.\n");
        }
        out.push_str(
            "\nΔ is the change of the mean from A to B. A difference is called only at p < 0.05; \
             \"faster\" means higher RPS or lower p99 in B.\n",
        );
        out
    }
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}%")
    } else {
        "n/a".into()
    }
}

fn test_text(v: &Verdict, basis: Basis) -> String {
    let per = match basis {
        Basis::Repetitions => "reps",
        Basis::Seconds => "per-second",
    };
    match v.p_value {
        Some(p) => format!("{}, {per}, p={}", v.test.as_str(), p_text(p)),
        None => format!("{} ({per})", v.test.as_str()),
    }
}

/// `<0.001` or three decimals.
pub(crate) fn p_text(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}
