//! When is a server warm? A pure rule over the throughput of consecutive
//! load windows (for example one second each): the server is *steady* when
//! the last `k` windows have not moved from the `k` before them: neither a
//! step between the two stretches (a rank-sum test) nor a drift across all
//! `2k` (a Mann-Kendall test, sized by the Theil-Sen slope) that is both
//! significant and over a few percent (Kalibera & Jones 2013: consecutive
//! stretches agree; a JVM improves in steps and slowly for tens of
//! seconds); or *capped* when
//! a maximum number of windows passes first (Traini et al. 2022, Barrett et
//! al. 2017: some never settle, so say so rather than wait). The last `k`
//! windows' coefficient of variation (Georges et al. 2007's stopping
//! criterion) is reported, and above its bound marks the warm-up *noisy*:
//! on shared cores the machine varies more than a warm server does, and a
//! bound on it would wait for the noise, not the server. docs/steady-state.md
//! gives the rule, its defaults and why.
//!
//! Nothing here measures: the runner feeds windows and acts on the
//! [`Verdict`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod kendall;
pub mod rank;
mod stats;

pub use stats::{coefficient_of_variation, mean, sen_slope};

/// The rule's parameters; [`Rule::default`] is the documented choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Windows judged together (`k`): the last `k` against the `k` before.
    pub windows: usize,
    /// Largest coefficient of variation (standard deviation / mean) of the
    /// last `k` windows for a quiet warm-up; above it the warm-up is noisy
    /// ([`Rule::is_noisy`]), which does not stop it ending.
    pub max_cv: f64,
    /// Significance level of the step's rank-sum test and of the
    /// Mann-Kendall trend test over the last `2k` windows (both two-sided):
    /// only a significant change holds a server back.
    pub alpha: f64,
    /// Largest Theil-Sen change across the `2k` windows, relative to their
    /// mean, once the trend is significant.
    pub max_drift: f64,
    /// Largest change of the last `k` windows' mean from the `k` before
    /// them, relative, once the rank-sum test finds the step: a server
    /// still improving in steps has not stopped improving.
    pub max_step: f64,
    /// Windows after which warm-up ends unsteady (the cap).
    pub cap: usize,
}

/// The documented `k`: windows judged together (JMH's five warm-up
/// iterations).
pub const DEFAULT_WINDOWS: usize = 5;

/// The fewest windows after which the documented rule can say steady: the
/// last `k` and the `k` before them. Study files size their caps in it.
pub const MIN_WINDOWS: usize = 2 * DEFAULT_WINDOWS;

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            windows: DEFAULT_WINDOWS,
            max_cv: 0.03,
            alpha: 0.05,
            max_drift: 0.03,
            max_step: 0.03,
            cap: 60,
        }
    }
}

/// A rule or a series that cannot be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SteadyError {
    #[error("steady-state rule: {0}")]
    Rule(String),
    #[error("window {index} has throughput {value}, not a finite number >= 0")]
    Sample { index: usize, value: f64 },
}

/// The statistics of the last `2k` windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// The last `k` windows' mean.
    pub mean: f64,
    /// The last `k` windows' coefficient of variation.
    pub cv: f64,
    /// Kendall's S over the `2k` windows in time order.
    pub kendall_s: i64,
    /// Two-sided p-value of "no monotone trend" over the `2k` windows.
    pub p_value: f64,
    /// Two-sided p-value of "the last `k` windows are no faster or slower
    /// than the `k` before" (a rank-sum test).
    pub step_p_value: f64,
    /// Theil-Sen slope × (2k - 1) / their mean: the fitted change across
    /// the `2k` windows, signed.
    pub drift: f64,
    /// The last `k` windows' mean over the `k` before them, minus one.
    pub step: f64,
}

/// Why the last windows are not (yet) steady.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unsteady {
    /// Fewer windows than the rule judges together (`2k`).
    TooFew { have: usize, need: usize },
    /// No throughput at all in the last windows.
    NoThroughput,
    /// A significant trend, fitted to change more than `max_drift` across
    /// the `2k` windows.
    Drift(Stats),
    /// A significant step: the last `k` windows more than `max_step` from
    /// the `k` before.
    Step(Stats),
}

/// The answer after each window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Steady after `windows` windows: measure now.
    Steady { windows: usize, stats: Stats },
    /// Not yet: run another window.
    Warming(Unsteady),
    /// The cap was reached unsteady: measure anyway and flag it.
    Capped { windows: usize, last: Unsteady },
}

impl Verdict {
    /// Whether warm-up is over (steady or capped).
    pub fn is_done(&self) -> bool {
        !matches!(self, Verdict::Warming(_))
    }
}

impl Rule {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), SteadyError> {
        let bad = |why: String| Err(SteadyError::Rule(why));
        if self.windows < 3 {
            return bad(format!(
                "windows = {}: a trend needs at least 3",
                self.windows
            ));
        }
        if !(self.max_cv > 0.0 && self.max_cv.is_finite()) {
            return bad(format!("max_cv = {}: must be positive", self.max_cv));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad(format!("alpha = {}: must be between 0 and 1", self.alpha));
        }
        if !(self.max_drift > 0.0 && self.max_drift.is_finite()) {
            return bad(format!("max_drift = {}: must be positive", self.max_drift));
        }
        if !(self.max_step > 0.0 && self.max_step.is_finite()) {
            return bad(format!("max_step = {}: must be positive", self.max_step));
        }
        if self.cap < self.min_windows() {
            return bad(format!(
                "cap = {} is under the {} windows the rule needs (2 × windows)",
                self.cap,
                self.min_windows()
            ));
        }
        Ok(())
    }

    /// The fewest windows after which the rule can say steady: `2k`.
    pub fn min_windows(&self) -> usize {
        2 * self.windows
    }

    /// Judges the throughputs of every window so far (oldest first).
    pub fn judge(&self, series: &[f64]) -> Result<Verdict, SteadyError> {
        self.validate()?;
        if let Some((index, &value)) = series
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(SteadyError::Sample { index, value });
        }
        let state = self.last_windows(series);
        Ok(match state {
            Ok(stats) => Verdict::Steady {
                windows: series.len(),
                stats,
            },
            Err(last) if series.len() >= self.cap => Verdict::Capped {
                windows: series.len(),
                last,
            },
            Err(why) => Verdict::Warming(why),
        })
    }

    /// The statistics of the last `2k` windows, or why they are not steady:
    /// a change is one when its test finds it (rank-sum for the step,
    /// Mann-Kendall for the drift) *and* it is larger than its margin, so
    /// noise alone never holds a server back (it is reported in `cv`, see
    /// [`Rule::is_noisy`]).
    fn last_windows(&self, series: &[f64]) -> Result<Stats, Unsteady> {
        let k = self.windows;
        let need = self.min_windows();
        if series.len() < need {
            return Err(Unsteady::TooFew {
                have: series.len(),
                need,
            });
        }
        let both = &series[series.len() - need..];
        let (before, last) = both.split_at(k);
        let m = mean(last);
        if m <= 0.0 {
            return Err(Unsteady::NoThroughput);
        }
        let b = mean(before);
        let stats = Stats {
            mean: m,
            cv: coefficient_of_variation(last),
            kendall_s: kendall::s_statistic(both),
            p_value: kendall::p_value(both),
            drift: sen_slope(both) * (need - 1) as f64 / mean(both),
            step: if b > 0.0 { m / b - 1.0 } else { f64::INFINITY },
            step_p_value: rank::mann_whitney_p(before, last).unwrap_or(1.0),
        };
        if stats.step_p_value < self.alpha && stats.step.abs() > self.max_step {
            Err(Unsteady::Step(stats))
        } else if stats.p_value < self.alpha && stats.drift.abs() > self.max_drift {
            Err(Unsteady::Drift(stats))
        } else {
            Ok(stats)
        }
    }

    /// Whether windows whose coefficient of variation is `cv` (a verdict's
    /// `Stats::cv`) varied more than `max_cv`: the machine's noise, not the
    /// server, which the rule then cannot judge finer than that noise (the
    /// measurement says so).
    pub fn is_noisy(&self, cv: f64) -> bool {
        cv > self.max_cv
    }

    /// Feeds `series` one window at a time, as the runner would, and returns
    /// the verdict that ends warm-up (or the last one if none does).
    pub fn run(&self, series: &[f64]) -> Result<Verdict, SteadyError> {
        let mut last = Verdict::Warming(Unsteady::TooFew {
            have: 0,
            need: self.min_windows(),
        });
        for n in 1..=series.len() {
            last = self.judge(&series[..n])?;
            if last.is_done() {
                break;
            }
        }
        Ok(last)
    }
}

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;
