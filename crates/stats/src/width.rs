//! How precise a target's figure is so far: the half-width of its 95%
//! interval as a fraction of the median, from the start-to-start variance
//! pooled over its cells ([`crate::starts::Pooled`]). The runner's stop rule
//! (`precision = { width, max_repetitions }`, Laaber et al.) reads it to
//! decide whether a target gets another start, and the report says which
//! targets got more starts and which stayed wide: one definition for both.

use crate::starts::Pooled;

/// A target's interval width so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Width {
    /// The half-width of the interval, as a fraction of the median (the
    /// larger side, e^h − 1); infinite while there is no pooled variance
    /// (fewer than two starts of any cell).
    pub half: f64,
    /// The fewest starts any of its cells has.
    pub starts: usize,
}

impl Width {
    /// The width over a target's cells (each the values of one cell's
    /// starts); None without a cell.
    pub fn of(cells: &[Vec<f64>]) -> Option<Width> {
        let starts = cells.iter().map(Vec::len).min()?;
        let half = Pooled::of(cells.iter().map(|c| &c[..]))
            .map_or(f64::INFINITY, |p| p.half_log(starts).exp_m1());
        Some(Width { half, starts })
    }

    /// Whether it is wider than `limit` (a fraction of the median).
    pub fn wider_than(&self, limit: f64) -> bool {
        self.half > limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_width_narrows_with_starts_and_is_unknown_with_one() {
        let w = Width::of(&[vec![100.0], vec![200.0]]).expect("measured");
        assert!(w.half.is_infinite() && w.starts == 1, "{w:?}");
        assert!(w.wider_than(0.05));
        assert!(Width::of(&[]).is_none());

        let spread = |n: usize| -> Vec<Vec<f64>> {
            let f = |i: usize| if i % 2 == 0 { 1.04 } else { 0.96 };
            vec![
                (0..n).map(|i| 100.0 * f(i)).collect(),
                (0..n).map(|i| 200.0 / f(i)).collect(),
            ]
        };
        let w2 = Width::of(&spread(2)).unwrap();
        let w6 = Width::of(&spread(6)).unwrap();
        assert_eq!((w2.starts, w6.starts), (2, 6));
        assert!(w6.half < w2.half, "{w2:?} {w6:?}");
        assert!(w2.wider_than(0.05) && !w6.wider_than(0.05), "{w2:?} {w6:?}");
    }
}
