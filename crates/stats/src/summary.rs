//! Describing one sample of repetitions: median, mean, sample variance and
//! standard deviation, coefficient of variation, and the 95% confidence
//! interval from the Student-t half-width, gathered for a report cell in
//! [`Spread`]. The two-sample tests (`significance.rs`) build on these.

use super::special;

/// Arithmetic mean; NaN for an empty sample.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Median (mean of the two middle values for even n); NaN for an empty sample.
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// Sample variance (n − 1 denominator); NaN below two values.
pub fn variance(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
}

/// Sample standard deviation; NaN below two values.
pub fn stdev(xs: &[f64]) -> f64 {
    variance(xs).sqrt()
}

/// Coefficient of variation, stdev / mean; NaN below two values or for a zero mean.
pub fn cv(xs: &[f64]) -> f64 {
    let m = mean(xs);
    if m == 0.0 {
        return f64::NAN;
    }
    stdev(xs) / m.abs()
}

/// The two-sided 95% Student-t quantile t(0.975, df).
pub fn t95(df: f64) -> f64 {
    special::t_quantile(0.975, df)
}

/// Half-width of the 95% CI of the mean, t(0.975, n−1)·s/√n; None below two values.
pub fn half_ci95(xs: &[f64]) -> Option<f64> {
    let n = xs.len();
    if n < 2 {
        return None;
    }
    Some(t95((n - 1) as f64) * stdev(xs) / (n as f64).sqrt())
}

/// 95% CI of the mean: mean ± half-width. None below two values.
pub fn ci95_mean(xs: &[f64]) -> Option<(f64, f64)> {
    let m = mean(xs);
    half_ci95(xs).map(|h| (m - h, m + h))
}

/// The interval the reports print as `median ± h`: the median with the
/// Student-t half-width of the mean. None below two values.
pub fn ci95_median(xs: &[f64]) -> Option<(f64, f64)> {
    let m = median(xs);
    half_ci95(xs).map(|h| (m - h, m + h))
}

/// Everything a report cell needs about one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    /// Half-width of the 95% CI; None below two values.
    pub half_ci: Option<f64>,
    /// Coefficient of variation; None below two values.
    pub cv: Option<f64>,
}

impl Spread {
    /// Summarises a sample; None when it is empty.
    pub fn of(xs: &[f64]) -> Option<Spread> {
        let xs: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        if xs.is_empty() {
            return None;
        }
        Some(Spread {
            n: xs.len(),
            median: median(&xs),
            mean: mean(&xs),
            half_ci: half_ci95(&xs),
            cv: Some(cv(&xs)).filter(|c| c.is_finite() && xs.len() > 1),
        })
    }

    pub fn ci_low(&self) -> f64 {
        self.median - self.half_ci.unwrap_or(0.0)
    }

    pub fn ci_high(&self) -> f64 {
        self.median + self.half_ci.unwrap_or(0.0)
    }
}
