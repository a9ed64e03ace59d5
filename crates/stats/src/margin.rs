//! The practical margin: the smallest difference between two contestants
//! that a ranking or a gate calls a difference at all, however significant
//! a smaller one is. It is a property of the question ("is this 5% faster?"),
//! not of the run: Datadog's regression detector holds every benchmark to a
//! fixed ±5% after an A/A calibration, and [`DEFAULT`] is that figure. A
//! study may set its own (`margin = "3%"`); `compare --margin` too.
//!
//! Ties are judged pair by pair ([`crate::decide_starts`]): each pair's own
//! pooled start variances give its p and its interval, and this margin is
//! the only figure all pairs share. A noisy target widens its own
//! intervals, never another pair's margin (docs/statistics.md, "Ties").

/// A practical margin, held on the log scale so that "5% faster" and "5%
/// slower" are the same distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    /// ln(1 + fraction).
    log: f64,
}

/// The margin when the study says none: 5%, Datadog's.
pub const DEFAULT: Margin = Margin {
    // ln(1.05), to f64 precision.
    log: 0.048_790_164_169_432_05,
};

impl Default for Margin {
    fn default() -> Self {
        DEFAULT
    }
}

impl Margin {
    /// The margin of `fraction` (0.05 for 5%); None unless it is finite and
    /// in [0, 1): a margin of 100% or more would tie every pair.
    pub fn of_fraction(fraction: f64) -> Option<Margin> {
        (fraction.is_finite() && (0.0..1.0).contains(&fraction)).then(|| Margin {
            log: fraction.ln_1p(),
        })
    }

    /// A study's `margin` (a fraction, already checked), else [`DEFAULT`]:
    /// the one place a run's margin is decided, read by the runner's stop
    /// rule and by the report alike.
    pub fn of_study(fraction: Option<f64>) -> Margin {
        fraction.and_then(Margin::of_fraction).unwrap_or_default()
    }

    /// On the log scale, ln(1 + fraction).
    pub fn log(self) -> f64 {
        self.log
    }

    /// As a percentage, for sentences (5.0 for 5%).
    pub fn pct(self) -> f64 {
        self.log.exp_m1() * 100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_five_percent_and_bad_fractions_are_refused() {
        assert!((DEFAULT.pct() - 5.0).abs() < 1e-9);
        let five = Margin::of_fraction(0.05).expect("5%");
        assert!((five.log() - DEFAULT.log()).abs() < 1e-15);
        for bad in [-0.01, 1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(Margin::of_fraction(bad), None, "{bad}");
        }
        assert_eq!(Margin::of_fraction(0.0).map(Margin::pct), Some(0.0));
    }
}
