//! Two-sample tests and the compare decision. Welch's t-test (unequal
//! variances) is the default; the Mann-Whitney U test is the fallback when
//! the t-test cannot be formed (a sample with fewer than two values, or both
//! samples without spread). A difference is called only at p < [`ALPHA`].

use super::special::t_two_sided_p;
use super::summary::{mean, variance};
pub use shootout_steady::rank::mann_whitney_p;

/// The significance level of every decision in the reports.
pub const ALPHA: f64 = 0.05;

/// Which test produced a p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    Welch,
    MannWhitney,
    /// Welch's t on ln(value) with each target's start variance pooled
    /// over its cells (`starts.rs`).
    Starts,
    /// The test on starts with the host's calibrated start variance
    /// standing in for targets measured once (`shootout calibrate`).
    Calibrated,
    /// Not enough data for any test.
    None,
}

impl TestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TestKind::Welch => "Welch t",
            TestKind::MannWhitney => "Mann-Whitney U",
            TestKind::Starts => "t on starts",
            TestKind::Calibrated => "t on the host's calibrated noise",
            TestKind::None => "no test",
        }
    }
}

/// The decision on one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    Faster,
    Slower,
    Tie,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Faster => "faster",
            Label::Slower => "slower",
            Label::Tie => "tie (not significant)",
        }
    }
}

/// A comparison of a baseline sample with a new one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// (mean(new) − mean(base)) / mean(base) in percent; NaN for a zero base.
    pub change_pct: f64,
    pub p_value: Option<f64>,
    pub test: TestKind,
    pub label: Label,
    /// The practical margin the difference was held to, in percent; None
    /// for tests that hold to none (Welch's t on repetitions).
    pub margin_pct: Option<f64>,
    /// True when the label is a tie because the difference is within the
    /// margin (it may still be significant).
    pub within_margin: bool,
    /// The 95% interval of `change_pct` from the pair's own variances
    /// (the test on starts only): (low, high) in percent.
    pub interval_pct: Option<(f64, f64)>,
}

/// Welch's two-sided t-test: (t, df, p). None below two values per sample or
/// when both variances are zero.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let se2 = va + vb;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let t = (mean(a) - mean(b)) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some((t, df, t_two_sided_p(t, df)))
}

/// Compares `new` with `base`. `higher_is_better` is true for throughput and
/// false for latency; "faster" means the new sample is significantly better.
pub fn decide(base: &[f64], new: &[f64], higher_is_better: bool) -> Verdict {
    let (mb, mn) = (mean(base), mean(new));
    let change_pct = if mb != 0.0 && mb.is_finite() {
        (mn - mb) / mb.abs() * 100.0
    } else {
        f64::NAN
    };
    let (test, p) = match welch(new, base) {
        Some((_, _, p)) => (TestKind::Welch, Some(p)),
        None => match (base.len() >= 2 || new.len() >= 2, mann_whitney_p(new, base)) {
            (true, Some(p)) => (TestKind::MannWhitney, Some(p)),
            _ => (TestKind::None, None),
        },
    };
    let significant = p.is_some_and(|p| p < ALPHA);
    let better = if higher_is_better { mn > mb } else { mn < mb };
    let label = match (significant, better) {
        (false, _) => Label::Tie,
        (true, true) => Label::Faster,
        (true, false) => Label::Slower,
    };
    Verdict {
        change_pct,
        p_value: p,
        test,
        label,
        margin_pct: None,
        within_margin: false,
        interval_pct: None,
    }
}

impl Verdict {
    /// A tie whose interval still reaches past the margin on either side:
    /// more starts could tell the two apart. A tie whose whole interval
    /// lies within ±margin is settled (the two are equivalent to within
    /// the margin), and so is any difference called. False without an
    /// interval (nothing the starts could resolve).
    pub fn in_doubt(&self) -> bool {
        let (Some((lo, hi)), Some(m)) = (self.interval_pct, self.margin_pct) else {
            return false;
        };
        // The margin is symmetric on the log scale: 5% up is 1/1.05 down.
        let below = (1.0 / (1.0 + m / 100.0) - 1.0) * 100.0;
        self.label == Label::Tie && (hi > m || lo < below)
    }
}
