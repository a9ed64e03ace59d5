//! The Mann-Kendall test for a monotone trend in a short series: Kendall's
//! S over time order, and its two-sided p-value. Without ties the p-value is
//! exact (the null distribution of S is that of inversions in a random
//! permutation, the Mahonian numbers) up to [`EXACT_MAX`] values; with ties
//! or longer series it is the normal approximation with the tie-corrected
//! variance and a continuity correction (Kendall 1975; Hollander & Wolfe).

/// Longest series whose p-value is computed exactly.
pub const EXACT_MAX: usize = 20;

/// Kendall's S: concordant minus discordant pairs in time order (ties
/// count 0). Positive for a rising series.
pub fn s_statistic(x: &[f64]) -> i64 {
    let mut s = 0i64;
    for (i, a) in x.iter().enumerate() {
        for b in &x[i + 1..] {
            s += match b.partial_cmp(a) {
                Some(std::cmp::Ordering::Greater) => 1,
                Some(std::cmp::Ordering::Less) => -1,
                _ => 0,
            };
        }
    }
    s
}

/// The two-sided p-value of "no monotone trend" for series `x`.
pub fn p_value(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 3 {
        return 1.0;
    }
    let s = s_statistic(x);
    let ties = tie_groups(x);
    if ties.is_empty() && n <= EXACT_MAX {
        exact_p(n, s)
    } else {
        normal_p(n, s, &ties)
    }
}

/// Sizes of the groups of equal values (only groups of two or more).
fn tie_groups(x: &[f64]) -> Vec<usize> {
    let mut v: Vec<f64> = x.to_vec();
    v.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut run = 1;
    for w in v.windows(2) {
        if w[0] == w[1] {
            run += 1;
        } else {
            if run > 1 {
                groups.push(run);
            }
            run = 1;
        }
    }
    if run > 1 {
        groups.push(run);
    }
    groups
}

/// Permutations of `n` items by number of inversions (Mahonian numbers),
/// as f64: exact while below 2^53 (n ≤ 18), a relative error near 1e-16
/// beyond, which a p-value does not feel.
pub fn mahonian(n: usize) -> Vec<f64> {
    let mut row = vec![1.0];
    for m in 2..=n {
        let max = m * (m - 1) / 2;
        let mut next = vec![0.0; max + 1];
        for (i, slot) in next.iter_mut().enumerate() {
            // Placing the m-th item adds 0..m-1 inversions.
            let lo = i.saturating_sub(m - 1);
            *slot = row
                .get(lo..=i.min(row.len() - 1))
                .map_or(0.0, |r| r.iter().sum());
        }
        row = next;
    }
    row
}

/// Exact two-sided p: P(|S| >= |s|) for a random permutation, where
/// S = pairs - 2 × inversions.
fn exact_p(n: usize, s: i64) -> f64 {
    let counts = mahonian(n);
    let total: f64 = counts.iter().sum();
    let pairs = (n * (n - 1) / 2) as i64;
    let tail: f64 = counts
        .iter()
        .enumerate()
        .filter(|(inv, _)| (pairs - 2 * *inv as i64).abs() >= s.abs())
        .map(|(_, c)| c)
        .sum();
    (tail / total).min(1.0)
}

fn normal_p(n: usize, s: i64, ties: &[usize]) -> f64 {
    let var_term = |t: usize| (t * (t - 1) * (2 * t + 5)) as f64;
    let var = (var_term(n) - ties.iter().map(|&t| var_term(t)).sum::<f64>()) / 18.0;
    if var <= 0.0 || s == 0 {
        return 1.0;
    }
    let z = (s.abs() - 1) as f64 / var.sqrt();
    erfc(z / std::f64::consts::SQRT_2).min(1.0)
}

/// CDF of the standard normal distribution.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' `erfcc`, fractional
/// error under 1.2e-7 everywhere): std has none.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mahonian_rows_sum_to_n_factorial() {
        assert_eq!(mahonian(3), vec![1.0, 2.0, 2.0, 1.0]);
        assert_eq!(mahonian(4), vec![1.0, 3.0, 5.0, 6.0, 5.0, 3.0, 1.0]);
        let f: f64 = (1..=10).map(|i| i as f64).product();
        assert_eq!(mahonian(10).iter().sum::<f64>(), f);
    }

    #[test]
    fn exact_p_values_match_the_table() {
        // n = 5: S = ±10 only for the two monotone orders.
        assert!((p_value(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 2.0 / 120.0).abs() < 1e-12);
        assert!((p_value(&[5.0, 4.0, 3.0, 2.0, 1.0]) - 2.0 / 120.0).abs() < 1e-12);
        // One swap: S = 8, inversions 1 → P(|S| >= 8) = 2 × (1 + 4) / 120.
        assert!((p_value(&[1.0, 3.0, 2.0, 4.0, 5.0]) - 10.0 / 120.0).abs() < 1e-12);
        assert_eq!(s_statistic(&[1.0, 3.0, 2.0, 4.0, 5.0]), 8);
        assert_eq!(p_value(&[1.0, 2.0]), 1.0);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        assert_eq!(p_value(&[7.0; 6]), 1.0);
        let p = p_value(&[1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        assert!(p < 0.01, "{p}");
        // Beyond the exact range the approximation agrees with the exact test.
        let x: Vec<f64> = (0..20).map(|i| ((i * 7) % 20) as f64).collect();
        let exact = p_value(&x);
        let approx = normal_p(20, s_statistic(&x), &[]);
        assert!((exact - approx).abs() < 0.01, "{exact} vs {approx}");
    }

    #[test]
    fn erfc_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        assert!(erfc(6.0) < 1e-15);
    }
}
