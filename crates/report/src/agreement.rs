//! The article beside our run: for each scenario × level × metric the study
//! published figures of two or more measured targets for, the article's
//! order, ours, and the pairs that swapped (significantly, or untested with
//! one repetition) or are a statistical tie here. The figures themselves are
//! looked up in [`crate::published`]; the findings and the HTML page render
//! these agreements.

use crate::context::Context;
use crate::group::Group;
use crate::metric::Metric;
use crate::ranking::{rank, versus, Measure};
use crate::stats::Label;

/// The article beside our run for one scenario × level × metric: each
/// target's published value and ours, both orders, and the pairs that
/// swapped. Pairs the article gives equal values have no order to keep.
#[derive(Debug, Clone)]
pub struct Agreement {
    pub metric: Metric,
    /// (target, published, our median), in the article's order, best first.
    pub rows: Vec<(String, f64, f64)>,
    /// Our order of the same targets, best first.
    pub ours: Vec<String>,
    /// (article's better, article's worse) pairs that we measured the
    /// other way round, significantly (or untested, with one repetition).
    pub flipped: Vec<(String, String)>,
    /// Pairs the article orders but that are a statistical tie here.
    pub tied: Vec<(String, String)>,
}

impl Agreement {
    /// True when no pair swapped.
    pub fn reproduced(&self) -> bool {
        self.flipped.is_empty()
    }

    /// `a > b > c` (best first; `<` for a metric where lower is better).
    pub fn order_text(names: &[String], metric: Metric) -> String {
        let sep = if metric.higher_is_better() {
            " > "
        } else {
            " < "
        };
        names.join(sep)
    }

    /// The article's order in words, `=` between equal published values.
    pub fn published_text(&self) -> String {
        let mut s = String::new();
        for (i, r) in self.rows.iter().enumerate() {
            if i > 0 {
                let equal = self.rows[i - 1].1 == r.1;
                s.push_str(match (equal, self.metric.higher_is_better()) {
                    (true, _) => " = ",
                    (false, true) => " > ",
                    (false, false) => " < ",
                });
            }
            s.push_str(&r.0);
        }
        s
    }
}

/// Every metric of `g` for which the article published figures of two or
/// more targets we measured.
pub fn agreements(ctx: &Context, g: &Group) -> Vec<Agreement> {
    let mut out = Vec::new();
    for &metric in Metric::ALL {
        let ranked = rank(g, Measure::Metric(metric));
        let mut rows: Vec<(String, f64, f64)> = ranked
            .iter()
            .filter_map(|e| {
                let t = ctx.target(e.target())?;
                let p = ctx.published.get(t, g.scenario, g.level, metric)?;
                p.is_finite()
                    .then(|| (e.target().to_string(), p, e.spread.median))
            })
            .collect();
        if rows.len() < 2 {
            continue;
        }
        let hib = metric.higher_is_better();
        let ours: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
        rows.sort_by(|a, b| {
            let o = a.1.total_cmp(&b.1);
            if hib {
                o.reverse()
            } else {
                o
            }
        });
        let (mut flipped, mut tied) = (Vec::new(), Vec::new());
        for (i, a) in rows.iter().enumerate() {
            for b in &rows[i + 1..] {
                if a.1 == b.1 {
                    continue;
                }
                let pos = |n: &str| ours.iter().position(|o| o == n);
                let col = |n: &str| g.columns.iter().find(|c| c.target == n);
                let (Some(ca), Some(cb)) = (col(&a.0), col(&b.0)) else {
                    continue;
                };
                let tie = versus(g, ca, cb, Measure::Metric(metric))
                    .is_some_and(|v| v.label == Label::Tie);
                let pair = (a.0.clone(), b.0.clone());
                if tie {
                    tied.push(pair);
                } else if pos(&a.0) > pos(&b.0) {
                    flipped.push(pair);
                }
            }
        }
        out.push(Agreement {
            metric,
            rows,
            ours,
            flipped,
            tied,
        });
    }
    out
}
