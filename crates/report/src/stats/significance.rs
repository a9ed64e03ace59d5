//! Two-sample tests and the compare decision. Welch's t-test (unequal
//! variances) is the default; the Mann-Whitney U test is the fallback when
//! the t-test cannot be formed (a sample with fewer than two values, or both
//! samples without spread). A difference is called only at p < [`ALPHA`].

use super::special::{normal_cdf, t_two_sided_p};
use super::summary::{mean, variance};

/// The significance level of every decision in the reports.
pub const ALPHA: f64 = 0.05;

/// Which test produced a p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    Welch,
    MannWhitney,
    /// Not enough data for any test.
    None,
}

impl TestKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TestKind::Welch => "Welch t",
            TestKind::MannWhitney => "Mann-Whitney U",
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

/// Average ranks (1-based) of the pooled sample, ties sharing their mean rank.
fn ranks(pooled: &[f64]) -> (Vec<f64>, f64) {
    let mut idx: Vec<usize> = (0..pooled.len()).collect();
    idx.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut r = vec![0.0; pooled.len()];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && pooled[idx[j + 1]] == pooled[idx[i]] {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = avg;
        }
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    (r, tie_term)
}

/// Two-sided p-value of the Mann-Whitney U test. Exact (by counting) for
/// small samples without ties, else the normal approximation with tie and
/// continuity corrections. None when a sample is empty.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let (r, tie_term) = ranks(&pooled);
    let (n1, n2) = (a.len(), b.len());
    let r1: f64 = r[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u = u1.min((n1 * n2) as f64 - u1);
    if tie_term == 0.0 && n1 + n2 <= 40 {
        return Some(exact_u_p(n1, n2, u as usize));
    }
    let (f1, f2) = (n1 as f64, n2 as f64);
    let n = f1 + f2;
    let var = f1 * f2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = ((f1 * f2 / 2.0 - u) - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

/// Exact two-sided p for the smaller U statistic `u`: 2·P(U ≤ u), capped at 1.
fn exact_u_p(n1: usize, n2: usize, u: usize) -> f64 {
    let max_u = n1 * n2;
    // counts[i][j][k]: arrangements of i and j values with U = k (rolling over i).
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0;
    }
    for _i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for k in 0..=max_u {
                // The largest value is from sample 1 (adds j to U) or from sample 2.
                let from_a = if k >= j { prev[j][k - j] } else { 0.0 };
                cur[j][k] = from_a + cur[j - 1][k];
            }
        }
        prev = cur;
    }
    let dist = &prev[n2];
    let total: f64 = dist.iter().sum();
    let tail: f64 = dist[..=u.min(max_u)].iter().sum();
    (2.0 * tail / total).min(1.0)
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
    }
}
