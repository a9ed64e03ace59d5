//! The Mann-Whitney (Wilcoxon rank-sum) test of "the last `k` windows are
//! no faster or slower than the `k` before them": the step criterion's
//! significance. A step between two flat stretches is not a monotone
//! trend (Mann-Kendall gives eight windows' worth of S to ten), so it gets
//! the test made for two samples. The p-value is exact: every split of the
//! `2k` mid-ranks is enumerated (252 for `k = 5`), so ties are exact too.

/// The most windows the exact test enumerates (`C(20, 10)` splits).
pub const MAX_WINDOWS: usize = 20;

/// Two-sided exact p-value of the rank-sum test between `before` and
/// `after`; 1 for an empty side. At most [`MAX_WINDOWS`] values in all
/// (the rule validates that).
pub fn p_value(before: &[f64], after: &[f64]) -> f64 {
    let all: Vec<f64> = before.iter().chain(after).copied().collect();
    let n = all.len();
    if before.is_empty() || after.is_empty() || n > MAX_WINDOWS {
        return 1.0;
    }
    let ranks = midranks(&all);
    let m = after.len();
    let expected = m as f64 * (n as f64 + 1.0) / 2.0;
    let observed = (ranks[before.len()..].iter().sum::<f64>() - expected).abs();
    let (mut extreme, mut splits) = (0u64, 0u64);
    for mask in 0u32..(1u32 << n) {
        if mask.count_ones() as usize != m {
            continue;
        }
        splits += 1;
        let sum: f64 = (0..n)
            .filter(|i| mask >> i & 1 == 1)
            .map(|i| ranks[i])
            .sum();
        // Mid-ranks are halves, so a tolerance far under 0.5 is exact.
        if (sum - expected).abs() >= observed - 1e-9 {
            extreme += 1;
        }
    }
    extreme as f64 / splits as f64
}

/// Ranks from 1, tied values sharing the mean of their ranks.
fn midranks(x: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            ranks[o] = rank;
        }
        i = j + 1;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Every later value above every earlier one: 2 of C(10,5) = 252.
        let p = p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // Interleaved: nothing to see.
        assert_eq!(p_value(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]), 0.7);
        // All tied: every split is as extreme as the observed one.
        assert_eq!(p_value(&[7.0; 5], &[7.0; 5]), 1.0);
        assert_eq!(
            midranks(&[10.0, 20.0, 10.0, 30.0]),
            vec![1.5, 3.0, 1.5, 4.0]
        );
        assert_eq!(p_value(&[], &[1.0]), 1.0);
    }
}
