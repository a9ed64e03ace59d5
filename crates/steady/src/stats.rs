//! The descriptive statistics the rule uses, on a window of throughputs.

/// The arithmetic mean (0 for no values).
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (n - 1) over the mean; 0 for fewer than two
/// values, infinite for a zero mean with spread.
pub fn coefficient_of_variation(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    let var = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64;
    if var == 0.0 {
        0.0
    } else {
        var.sqrt() / m
    }
}

/// The Theil-Sen slope per window: the median of the slopes of all pairs.
/// Robust to a single outlying window (a GC pause), unlike least squares.
pub fn sen_slope(x: &[f64]) -> f64 {
    let mut slopes = Vec::with_capacity(x.len() * x.len() / 2);
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            slopes.push((x[j] - x[i]) / (j - i) as f64);
        }
    }
    if slopes.is_empty() {
        return 0.0;
    }
    slopes.sort_by(f64::total_cmp);
    let n = slopes.len();
    if n % 2 == 1 {
        slopes[n / 2]
    } else {
        (slopes[n / 2 - 1] + slopes[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(mean(&[1.0, 2.0, 3.0]), 2.0);
        assert!((coefficient_of_variation(&[9.0, 10.0, 11.0]) - 0.1).abs() < 1e-12);
        assert_eq!(coefficient_of_variation(&[5.0; 4]), 0.0);
        assert_eq!(sen_slope(&[1.0, 3.0, 5.0, 7.0]), 2.0);
        // One outlier does not move the Theil-Sen slope of a flat series.
        assert_eq!(sen_slope(&[10.0, 10.0, 2.0, 10.0, 10.0]), 0.0);
    }
}
