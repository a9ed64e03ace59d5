//! The Mann-Whitney U (Wilcoxon rank-sum) test, used in two places: the
//! steady-state rule's step criterion ("the last `k` windows are no faster
//! or slower than the `k` before them": a step between two flat stretches
//! is not a monotone trend, so it gets the test made for two samples) and
//! the report's comparison of two runs' repetitions. Exact (by counting)
//! for small samples without ties, else the normal approximation with tie
//! and continuity corrections.

use crate::kendall::normal_cdf;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Every later value above every earlier one: 2 of C(10,5) = 252.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p.unwrap() - 2.0 / 252.0).abs() < 1e-12, "{p:?}");
        // Interleaved: nothing to see.
        assert_eq!(
            mann_whitney_p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]),
            Some(0.7)
        );
        // All tied: no evidence of a difference.
        assert_eq!(mann_whitney_p(&[7.0; 5], &[7.0; 5]), Some(1.0));
        assert_eq!(ranks(&[10.0, 20.0, 10.0, 30.0]).0, vec![1.5, 3.0, 1.5, 4.0]);
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
    }
}
