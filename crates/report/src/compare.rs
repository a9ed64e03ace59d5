//! `shootout compare A B`: for each target × scenario × level present in
//! both runs, the change in RPS and p99 from A (the baseline) to B with a
//! verdict. When each run has a cell of two starts for the target, the
//! verdict is the ranking's ([`crate::stats::starts`]): Welch's t on
//! ln(value) with the target's start variance pooled in each run, and a
//! difference within the practical margin (the baseline's study's, or
//! `--margin`) is a tie; `--fail-if-slower` with no percentage gates on
//! that verdict. The A/A floor of the two runs is said as a figure of
//! their noise and decides nothing. Otherwise the samples are the repetitions when
//! both have two or more, else the per-second timeline values (noted as
//! such: seconds of one start know nothing of the next start, so such a
//! verdict is weaker).

use crate::escape::md;
use crate::group::{groups, start_cells, Column};
use crate::metric::{num, second_rate, Metric};
use crate::stats::{
    decide, decide_starts, median, Floor, Label, Margin, Pooled, TestKind, Verdict,
};
use shootout_store::Measurement;
use shootout_store::RunData;
use std::fmt::Write;

/// What the samples of a row were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Starts, with pooled start variances and the practical margin.
    Starts,
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
    /// The A/A floor of throughput over both runs' pairs of starts (said,
    /// deciding nothing).
    pub floor: Option<Floor>,
    /// The practical margin every verdict on starts was held to.
    pub margin: Margin,
}

/// Compares run `b` against the baseline `a`, holding each difference on
/// starts to `margin` ([`crate::group::run_margin`] of `a` unless the
/// user says otherwise).
pub fn compare(a: &RunData, b: &RunData, margin: Margin) -> Comparison {
    let rps = |m: &Measurement| crate::metric::value(Metric::Rps, m);
    let floor_of = |f: &dyn Fn(&Measurement) -> f64| {
        let mut cells = start_cells(&a.measurements, None, f);
        cells.extend(start_cells(&b.measurements, None, f));
        Floor::of(cells.iter().map(|c| &c[..]))
    };
    let floor = floor_of(&rps);
    // The host's calibrated noise (`shootout calibrate`) stands in for the
    // throughput of a target measured once in either run.
    let calibration = b
        .calibration
        .as_ref()
        .or(a.calibration.as_ref())
        .map(|c| c.pooled());
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
                rows.push(row(
                    ca,
                    cb,
                    ga.scenario,
                    ga.level,
                    ga.level_label,
                    margin,
                    calibration,
                ));
            }
        }
    }
    Comparison {
        a: a.run.id,
        b: b.run.id,
        rows,
        floor,
        margin,
    }
}

/// The verdict on starts with each run's pooled variance; None when either
/// run has no cell of two starts for the target.
fn on_starts(a: &Column, b: &Column, metric: Metric, margin: Margin) -> Option<Verdict> {
    let f = |m: &Measurement| crate::metric::value(metric, m);
    decide_starts(
        &a.values(metric),
        a.pooled(f),
        &b.values(metric),
        b.pooled(f),
        margin,
        metric.higher_is_better(),
    )
}

fn row(
    a: &Column,
    b: &Column,
    scenario: &str,
    level: u32,
    label: &str,
    margin: Margin,
    calibration: Option<Pooled>,
) -> Row {
    let starts = (
        on_starts(a, b, Metric::Rps, margin),
        on_starts(a, b, Metric::P99, margin),
    );
    let rps = |m: &Measurement| crate::metric::value(Metric::Rps, m);
    let calibrated = calibration.filter(|_| starts.0.is_none()).and_then(|c| {
        decide_starts(
            &a.values(Metric::Rps),
            a.pooled(rps).or(Some(c)),
            &b.values(Metric::Rps),
            b.pooled(rps).or(Some(c)),
            margin,
            true,
        )
        .map(|v| Verdict {
            test: TestKind::Calibrated,
            ..v
        })
    });
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
    let (basis, rps_verdict, p99_verdict) = match starts {
        (Some(r), Some(p)) => (Basis::Starts, r, p),
        _ => (
            basis,
            calibrated.unwrap_or_else(|| decide(&rps_a, &rps_b, true)),
            decide(&p99_a, &p99_b, false),
        ),
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
        rps_verdict,
        p99: (
            median(&a.values(Metric::P99)),
            median(&b.values(Metric::P99)),
        ),
        p99_verdict,
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
    /// Rows whose RPS is lower in B by the verdict: significant and beyond
    /// the practical margin where the runs have starts to test.
    pub fn slower(&self) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.rps_verdict.label == Label::Slower)
            .collect()
    }

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
        let _ = writeln!(
            out,
            "\nΔ is the change of the mean from A to B (of ln(value) where the test is on starts). \
             A difference is called only at p < 0.05 and, on starts, beyond the {} margin; \
             \"faster\" means higher RPS or lower p99 in B.",
            crate::precision::pct(self.margin.pct() / 100.0)
        );
        if let Some(f) = self.floor {
            let _ = writeln!(
                out,
                "\nNoise (A/A): two starts of the same server differed in throughput by up to \
                 {:.1}% (95th percentile of {} pairs of starts in the two runs). Each pair is held \
                 to its own variation, not to this figure (docs/statistics.md).",
                f.pct(),
                f.pairs
            );
        }
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
    // "t on starts" already says what its samples were.
    let per = match basis {
        _ if v.test == TestKind::Calibrated => String::new(),
        Basis::Starts => String::new(),
        Basis::Repetitions => ", reps".into(),
        Basis::Seconds => ", per-second".into(),
    };
    let floor = match (v.within_margin, v.margin_pct) {
        (true, Some(m)) => format!(", within the {} margin", crate::precision::pct(m / 100.0)),
        _ => String::new(),
    };
    match v.p_value {
        Some(p) => format!("{}{per}, p={}{floor}", v.test.as_str(), p_text(p)),
        None => format!("{} ({})", v.test.as_str(), per.trim_start_matches(", ")),
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
