//! Statistics for small samples of repetitions. Each sample is described
//! in [`summary`] (median, mean, spread, 95% confidence intervals); two
//! samples are compared and a faster/slower/tie decision taken in
//! [`significance`]; the special functions both rest on are in
//! [`special`]; the unit tests, against SciPy's values, in `tests.rs`.
//! Repetitions are separate server starts: [`starts`] pools their spread
//! per target and measures the run's A/A noise floor (a figure that
//! describes the run), two contestants are told apart by their own
//! variances and the question's practical [`margin`], and [`width`] says
//! how wide a target's interval is so far (the stop rule's measure).
//! Change points in a history of runs are found in [`changepoint`].
//! Pure arithmetic, below both the runner and the report (which re-exports
//! it as `shootout_report::stats`); each formula once, cited where it is.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod changepoint;
pub mod margin;
pub mod significance;
pub mod special;
pub mod starts;
pub mod summary;
pub mod width;

#[cfg(test)]
mod tests;

pub use margin::Margin;
pub use significance::{decide, mann_whitney_p, welch, Label, TestKind, Verdict, ALPHA};
pub use starts::{decide_starts, Floor, Pooled};
pub use summary::{
    ci95_mean, ci95_median, cv, half_ci95, mean, median, stdev, t95, variance, Spread,
};
pub use width::Width;
