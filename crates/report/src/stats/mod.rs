//! Statistics for small samples of repetitions. Each sample is described
//! in [`summary`] (median, mean, spread, 95% confidence intervals); two
//! samples are compared and a faster/slower/tie decision taken in
//! [`significance`]; the special functions both rest on are in
//! [`special`]; the unit tests, against SciPy's values, in `tests.rs`.
//! This module only gathers their items under `stats::`.

pub mod significance;
pub mod special;
pub mod summary;

#[cfg(test)]
mod tests;

pub use significance::{decide, mann_whitney_p, welch, Label, TestKind, Verdict, ALPHA};
pub use summary::{
    ci95_mean, ci95_median, cv, half_ci95, mean, median, stdev, t95, variance, Spread,
};
