//! When is a server warm? A pure rule over the throughput of consecutive
//! load windows (for example one second each): the server is *steady* when
//! the last `k` windows vary little (a coefficient of variation under a
//! bound, as Georges et al. 2007 stop JVM iterations), show no significant
//! monotone trend (a Mann-Kendall test, answering Kalibera & Jones 2013's
//! objection that a low variation can hide a slow drift) and drift little
//! across the window (the Theil-Sen slope) and have not moved from the `k`
//! windows before them (a server still improving in steps or slowly, as a
//! JVM does for tens of seconds), or *capped* when a maximum
//! number of windows passes first (Traini et al. 2022, Barrett et al. 2017:
//! some never settle, so say so rather than wait). docs/steady-state.md
//! gives the rule, its defaults and why.
//!
//! Nothing here measures: the runner feeds windows and acts on the
//! [`Verdict`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod kendall;
mod stats;

pub use stats::{coefficient_of_variation, mean, sen_slope};

/// The rule's parameters; [`Rule::default`] is the documented choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Windows judged together (`k`): the last `k` must be steady.
    pub windows: usize,
    /// Largest coefficient of variation (standard deviation / mean) of the
    /// last `k` windows.
    pub max_cv: f64,
    /// Significance level of the Mann-Kendall trend test (two-sided).
    pub alpha: f64,
    /// Largest Theil-Sen change across the `k` windows, relative to their
    /// mean.
    pub max_drift: f64,
    /// Largest change of the last `k` windows' mean from the `k` before
    /// them, relative: a server still improving in steps, or too slowly for
    /// `k` windows to show, has not stopped improving.
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

/// The statistics of the last `k` windows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean: f64,
    pub cv: f64,
    /// Kendall's S over the windows in time order.
    pub kendall_s: i64,
    /// Two-sided p-value of "no monotone trend".
    pub p_value: f64,
    /// Theil-Sen slope × (k - 1) / mean: the fitted change across the
    /// windows, signed.
    pub drift: f64,
    /// The last `k` windows' mean over the `k` before them, minus one
    /// (0 until there are `2k` windows).
    pub step: f64,
}

/// Why the last windows are not (yet) steady.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unsteady {
    /// Fewer windows than the rule judges together.
    TooFew { have: usize, need: usize },
    /// No throughput at all in the last windows.
    NoThroughput,
    /// Too variable.
    Variable(Stats),
    /// A significant monotone trend.
    Trend(Stats),
    /// Too large a change across the windows.
    Drift(Stats),
    /// Too large a change from the `k` windows before.
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

    /// The statistics of the last `k` windows, or why they are not steady:
    /// first the last `k` alone (variation, trend, drift), then, once there
    /// are `2k`, their step from the `k` before.
    fn last_windows(&self, series: &[f64]) -> Result<Stats, Unsteady> {
        let k = self.windows;
        if series.len() < k {
            return Err(Unsteady::TooFew {
                have: series.len(),
                need: self.min_windows(),
            });
        }
        let w = &series[series.len() - k..];
        let m = mean(w);
        if m <= 0.0 {
            return Err(Unsteady::NoThroughput);
        }
        let stats = Stats {
            mean: m,
            cv: coefficient_of_variation(w),
            kendall_s: kendall::s_statistic(w),
            p_value: kendall::p_value(w),
            drift: sen_slope(w) * (k - 1) as f64 / m,
            step: 0.0,
        };
        if stats.cv > self.max_cv {
            return Err(Unsteady::Variable(stats));
        } else if stats.p_value < self.alpha {
            return Err(Unsteady::Trend(stats));
        } else if stats.drift.abs() > self.max_drift {
            return Err(Unsteady::Drift(stats));
        }
        let need = self.min_windows();
        if series.len() < need {
            return Err(Unsteady::TooFew {
                have: series.len(),
                need,
            });
        }
        let before = mean(&series[series.len() - need..series.len() - k]);
        let stats = Stats {
            step: if before > 0.0 {
                m / before - 1.0
            } else {
                f64::INFINITY
            },
            ..stats
        };
        if stats.step.abs() > self.max_step {
            Err(Unsteady::Step(stats))
        } else {
            Ok(stats)
        }
    }

    /// Feeds `series` one window at a time, as the runner would, and returns
    /// the verdict that ends warm-up (or the last one if none does).
    pub fn run(&self, series: &[f64]) -> Result<Verdict, SteadyError> {
        let mut last = Verdict::Warming(Unsteady::TooFew {
            have: 0,
            need: self.windows,
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
