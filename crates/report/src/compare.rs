//! `shootout compare A B`: for each cell present in both runs, the change
//! in RPS and p99 from A (the baseline) to B with a verdict. A cell is what
//! was measured ([`key::CellKey`]: target, scenario, load and resources),
//! never a level's position, so two different workloads are never paired;
//! a cell in one run only is listed as such, and two runs of different
//! studies, or a run that is not complete, are said first. When each run
//! has a cell of two starts for the target, the verdict is the ranking's
//! ([`crate::stats::starts`]): Welch's t on ln(value) with the target's
//! start variance pooled in each run, and a difference within the
//! practical margin (the baseline's study's, or `--margin`) is a tie. The
//! A/A floor of the two runs is said as a figure of their noise and
//! decides nothing. Otherwise the samples are the repetitions when both
//! have two or more, else the per-second timeline values (noted as such:
//! seconds of one start know nothing of the next start, so such a verdict
//! is weaker); with nothing to test the pair is "not tested", never a tie.
//! The cost points are compared by the same rule ([`cost`]), and
//! `--fail-if-slower` is judged in [`gate`].

pub mod cost;
pub mod gate;
pub mod key;
mod render;

use crate::group::{groups, start_cells, Column};
use crate::metric::{second_rate, Metric};
use crate::stats::{decide, decide_starts, median, Floor, Margin, Pooled, TestKind, Verdict};
use gate::{Call, Judged, Refusal};
use key::CellKey;
use shootout_store::{Measurement, RunData, RunStatus};

/// What the samples of a row were.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Starts, with pooled start variances and the practical margin.
    Starts,
    Repetitions,
    Seconds,
}

/// One cell in both runs.
#[derive(Debug, Clone)]
pub struct Row {
    pub key: CellKey,
    pub target: String,
    pub scenario: String,
    /// The level's index in A's study (B's may differ).
    pub level: u32,
    pub level_label: String,
    pub basis: Basis,
    pub rps: (f64, f64),
    pub rps_verdict: Verdict,
    pub p99: (f64, f64),
    pub p99_verdict: Verdict,
}

impl Row {
    /// The call on throughput: "not tested" without a test.
    pub fn rps_call(&self) -> Call {
        Call::of(&self.rps_verdict)
    }

    pub fn p99_call(&self) -> Call {
        Call::of(&self.p99_verdict)
    }

    /// `rust-axum on plaintext (n=1000 c=10)`.
    pub fn what(&self) -> String {
        if self.level_label.is_empty() {
            format!("{} on {}", self.target, self.scenario)
        } else {
            format!(
                "{} on {} ({})",
                self.target, self.scenario, self.level_label
            )
        }
    }
}

/// A cell in one run only: its key and level label.
#[derive(Debug, Clone)]
pub struct Lone {
    pub key: CellKey,
    pub level_label: String,
}

/// One run as the comparison names it.
#[derive(Debug, Clone)]
pub struct Side {
    pub id: i64,
    pub study: String,
    pub status: RunStatus,
}

/// The comparison of two runs.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: i64,
    pub b: i64,
    pub sides: (Side, Side),
    /// Both runs' study files, byte for byte, when the study names agree.
    pub same_study_text: bool,
    pub rows: Vec<Row>,
    pub only_a: Vec<Lone>,
    pub only_b: Vec<Lone>,
    pub costs: Vec<cost::CostPair>,
    pub costs_only_a: Vec<cost::PointKey>,
    pub costs_only_b: Vec<cost::PointKey>,
    /// The A/A floor of throughput over both runs' pairs of starts (said,
    /// deciding nothing).
    pub floor: Option<Floor>,
    /// The practical margin every verdict on starts was held to.
    pub margin: Margin,
    /// How cells were paired.
    pub pairing: Pairing,
}

/// How `compare` pairs the two runs' cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// By target, scenario, load and resources: the same cell.
    #[default]
    Exact,
    /// By target, scenario and load, whatever the resources (CPU quota,
    /// memory limit, pinned CPUs): what a change of resources does
    /// (`--across-resources`).
    AcrossResources,
}

/// A run's cells in table order: each with its key, the ordinal of that
/// key among the run's cells (a study may measure one load twice), its
/// level and label, and its column.
fn cells(data: &RunData, pairing: Pairing) -> Vec<(CellKey, usize, u32, String, Column<'_>)> {
    let mut out: Vec<(CellKey, usize, u32, String, Column<'_>)> = Vec::new();
    for g in groups(data) {
        for c in g.columns {
            // A level derived from each target's capacity is a cost point
            // ([`cost`]), never a throughput cell.
            let Some(first) = c.reps.first().filter(|m| m.parts.derived.is_none()) else {
                continue;
            };
            let mut key = CellKey::of(&data.run, first);
            if pairing == Pairing::AcrossResources {
                key.resources = key::Resources::default();
            }
            let nth = out.iter().filter(|x| x.0 == key).count();
            out.push((key, nth, g.level, g.level_label.to_string(), c));
        }
    }
    out
}

fn side(d: &RunData) -> Side {
    Side {
        id: d.run.id,
        study: d.run.study.clone(),
        status: d.run.status,
    }
}

/// Compares run `b` against the baseline `a`, holding each difference on
/// starts to `margin` ([`crate::group::run_margin`] of `a` unless the
/// user says otherwise).
pub fn compare(a: &RunData, b: &RunData, margin: Margin) -> Comparison {
    compare_with(a, b, margin, Pairing::Exact)
}

/// [`compare`], with the cells paired as `pairing` says.
pub fn compare_with(a: &RunData, b: &RunData, margin: Margin, pairing: Pairing) -> Comparison {
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
    let (ca, cb) = (cells(a, pairing), cells(b, pairing));
    let mut rows = Vec::new();
    let mut only_a = Vec::new();
    for (key, nth, level, label, col) in &ca {
        match cb.iter().find(|x| x.0 == *key && x.1 == *nth) {
            Some((_, _, _, _, other)) => {
                rows.push(row(key, col, other, *level, label, margin, calibration));
            }
            None => only_a.push(Lone {
                key: key.clone(),
                level_label: label.clone(),
            }),
        }
    }
    let only_b = cb
        .iter()
        .filter(|(k, n, ..)| !ca.iter().any(|x| x.0 == *k && x.1 == *n))
        .map(|(k, _, _, label, _)| Lone {
            key: k.clone(),
            level_label: label.clone(),
        })
        .collect();
    let (costs, costs_only_a, costs_only_b) = cost::pairs(a, b, margin);
    Comparison {
        a: a.run.id,
        b: b.run.id,
        sides: (side(a), side(b)),
        same_study_text: a.run.study_text == b.run.study_text,
        rows,
        only_a,
        only_b,
        costs,
        costs_only_a,
        costs_only_b,
        floor,
        margin,
        pairing,
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
    key: &CellKey,
    a: &Column,
    b: &Column,
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
        key: key.clone(),
        target: a.target.to_string(),
        scenario: key.scenario.clone(),
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
            .filter(|r| r.rps_call() == Call::Slower)
            .collect()
    }

    /// Rows whose RPS is significantly lower in B by more than `pct` percent.
    pub fn slower_than(&self, pct: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.rps_call() == Call::Slower && r.rps_verdict.change_pct < -pct)
            .collect()
    }

    /// The runs' study names differ.
    pub fn different_studies(&self) -> bool {
        self.sides.0.study != self.sides.1.study
    }

    /// What keeps a gate from judging these runs unless forced: different
    /// studies, a run that is not complete.
    pub fn refusals(&self) -> Vec<Refusal> {
        let mut out = Vec::new();
        if self.different_studies() {
            out.push(Refusal::DifferentStudies {
                a: self.sides.0.study.clone(),
                b: self.sides.1.study.clone(),
            });
        }
        for s in [&self.sides.0, &self.sides.1] {
            if s.status != RunStatus::Complete {
                out.push(Refusal::Incomplete {
                    run: s.id,
                    status: s.status.as_str(),
                });
            }
        }
        out
    }

    /// Every pair a gate judges: each cell's throughput, then each cost
    /// point, with how much worse B is in percent.
    pub fn judged(&self) -> Vec<Judged> {
        let mut out: Vec<Judged> = self
            .rows
            .iter()
            .map(|r| Judged {
                what: format!("{} throughput", r.what()),
                call: r.rps_call(),
                worse_pct: -r.rps_verdict.change_pct,
            })
            .collect();
        for c in &self.costs {
            let change = c.verdict.map_or(f64::NAN, |v| v.change_pct);
            out.push(Judged {
                what: c.key.describe(),
                call: c.call,
                worse_pct: if c.key.figure == cost::Figure::Goodput {
                    -change
                } else {
                    change
                },
            });
        }
        out
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
