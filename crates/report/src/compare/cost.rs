//! The cost points of two runs compared (docs/cost.md): each target's
//! server CPU µs per request at each fixed rate, and at each overload
//! multiple its goodput share and its recovery time. A point pairs when
//! both runs have it for the target in the same scenario; its verdict is
//! the per-pair rule of the throughput cells (Welch's t on ln(value) with
//! the target's start variance pooled over its points, and the practical
//! margin) where each run has two starts, else "not tested".

use super::gate::Call;
use crate::metric::num;
use crate::stats::{decide, decide_starts, median, Margin, Pooled, Verdict};
use shootout_store::{Measurement, RunData};
use std::collections::BTreeMap;

/// Which cost figure a pair compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Figure {
    /// Server CPU µs per completed request at a fixed rate (lower is better).
    UsPerRequest,
    /// Goodput within the deadline over the rate offered (higher is better).
    Goodput,
    /// Seconds to recover after the overload (lower is better).
    Recovery,
}

impl Figure {
    pub fn as_str(self) -> &'static str {
        match self {
            Figure::UsPerRequest => "µs per request",
            Figure::Goodput => "goodput (% of offered)",
            Figure::Recovery => "recovery (s)",
        }
    }

    fn higher_is_better(self) -> bool {
        self == Figure::Goodput
    }
}

/// What a cost pair is: the scenario, the target, the figure and the point
/// (`1000 req/s`, `25% of capacity`, `200% of capacity`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PointKey {
    pub scenario: String,
    pub target: String,
    pub figure: Figure,
    pub point: String,
}

impl PointKey {
    pub fn describe(&self) -> String {
        format!(
            "{} {} on {} at {}",
            self.target,
            self.figure.as_str(),
            self.scenario,
            self.point
        )
    }
}

/// One cost point in both runs.
#[derive(Debug, Clone)]
pub struct CostPair {
    pub key: PointKey,
    /// Medians over the starts with a value, A then B (NaN: none).
    pub values: (f64, f64),
    /// None when either side has no value to test.
    pub verdict: Option<Verdict>,
    pub call: Call,
    /// Why a side has fewer values than starts (a rate not carried, a
    /// server that did not recover).
    pub note: Option<String>,
}

/// One run's values of each point: the values per start, and what the
/// starts without a value were.
#[derive(Debug, Default)]
struct Cell {
    values: Vec<f64>,
    missing: Vec<String>,
}

fn point_of(m: &Measurement) -> Option<String> {
    let d = m.parts.derived.as_ref();
    if let Some(o) = &m.parts.overload {
        return Some(format!("{}% of capacity", num(o.factor * 100.0)));
    }
    let c = m.parts.cost.as_ref()?;
    Some(match d.and_then(|d| d.fraction) {
        None => format!("{} req/s", num(c.offered_rps)),
        Some(f) => format!("{}% of capacity", num(f * 100.0)),
    })
}

fn cells(data: &RunData) -> BTreeMap<PointKey, Cell> {
    let mut out: BTreeMap<PointKey, Cell> = BTreeMap::new();
    for m in &data.measurements {
        let Some(point) = point_of(m) else { continue };
        let key = |figure| PointKey {
            scenario: m.scenario.clone(),
            target: m.target.clone(),
            figure,
            point: point.clone(),
        };
        if let Some(o) = &m.parts.overload {
            let g = out.entry(key(Figure::Goodput)).or_default();
            g.values
                .push(100.0 * o.goodput_rps / o.offered_rps.max(1e-9));
            let r = out.entry(key(Figure::Recovery)).or_default();
            match o.recovery_s {
                Some(s) => r.values.push(s),
                None => r
                    .missing
                    .push(format!("did not recover within {} s", num(o.recover_s))),
            }
        } else if let Some(c) = &m.parts.cost {
            let cell = out.entry(key(Figure::UsPerRequest)).or_default();
            match &c.invalid {
                None if c.us_per_request > 0.0 => cell.values.push(c.us_per_request),
                why => cell.missing.push(format!(
                    "{} {} req/s: {}",
                    if c.not_offered {
                        "was not offered"
                    } else {
                        "cannot sustain"
                    },
                    num(c.offered_rps),
                    why.as_deref().unwrap_or("no CPU measured")
                )),
            }
        }
    }
    out
}

/// The start variance of `target`'s `figure`, pooled over its points.
fn pooled(cells: &BTreeMap<PointKey, Cell>, target: &str, figure: Figure) -> Option<Pooled> {
    Pooled::of(
        cells
            .iter()
            .filter(|(k, _)| k.target == target && k.figure == figure)
            .map(|(_, c)| &c.values[..]),
    )
}

/// The verdict on one pair of value sets: on starts where both runs have
/// two, else the plain test; None when a side has no value.
pub fn judge(
    a: &[f64],
    a_pool: Option<Pooled>,
    b: &[f64],
    b_pool: Option<Pooled>,
    margin: Margin,
    higher_is_better: bool,
) -> Option<Verdict> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    decide_starts(a, a_pool, b, b_pool, margin, higher_is_better)
        .filter(|_| a.len() >= 2 && b.len() >= 2)
        .or_else(|| Some(decide(a, b, higher_is_better)))
}

/// The cost points of both runs: the pairs, then the points only in A and
/// only in B.
pub fn pairs(
    a: &RunData,
    b: &RunData,
    margin: Margin,
) -> (Vec<CostPair>, Vec<PointKey>, Vec<PointKey>) {
    let (ca, cb) = (cells(a), cells(b));
    let mut out = Vec::new();
    let mut only_a = Vec::new();
    for (key, x) in &ca {
        let Some(y) = cb.get(key) else {
            only_a.push(key.clone());
            continue;
        };
        let verdict = judge(
            &x.values,
            pooled(&ca, &key.target, key.figure),
            &y.values,
            pooled(&cb, &key.target, key.figure),
            margin,
            key.figure.higher_is_better(),
        );
        let note: Vec<String> = [("A", x), ("B", y)]
            .iter()
            .filter_map(|(side, c)| {
                c.missing.first().map(|why| {
                    format!(
                        "{side}: {} of {} starts {why}",
                        c.missing.len(),
                        c.missing.len() + c.values.len()
                    )
                })
            })
            .collect();
        out.push(CostPair {
            key: key.clone(),
            values: (median(&x.values), median(&y.values)),
            call: verdict.as_ref().map_or(Call::NotTested, Call::of),
            verdict,
            note: (!note.is_empty()).then(|| note.join("; ")),
        });
    }
    let only_b = cb.keys().filter(|k| !ca.contains_key(k)).cloned().collect();
    (out, only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(var: f64) -> Option<Pooled> {
        Some(Pooled { var, df: 4.0 })
    }

    #[test]
    fn one_start_each_is_not_tested_and_two_are_held_to_the_margin() {
        // One start each: a test of nothing.
        let one = judge(&[50.0], None, &[80.0], None, Margin::default(), false);
        assert_eq!(one.map(|v| Call::of(&v)), Some(Call::NotTested));
        // Two starts each, 1% noise: 60% dearer is slower (cost: lower is better).
        let v = judge(
            &[50.0, 50.5],
            pool(1e-4),
            &[80.0, 80.8],
            pool(1e-4),
            Margin::default(),
            false,
        )
        .expect("tested");
        assert_eq!(Call::of(&v), Call::Slower);
        // 2% apart is within the 5% margin: a tie.
        let v = judge(
            &[50.0, 50.5],
            pool(1e-4),
            &[51.0, 51.5],
            pool(1e-4),
            Margin::default(),
            false,
        )
        .expect("tested");
        assert_eq!(Call::of(&v), Call::Tie);
        // No value on a side (the rate not carried): nothing to test.
        assert!(judge(&[], None, &[1.0, 2.0], pool(0.1), Margin::default(), false).is_none());
    }
}
