//! A run's measurements grouped by start: the values of each target ×
//! scenario × level cell over its starts (repetitions), from them how wide
//! a target's throughput interval is so far (`shootout_stats::Width`), and
//! which adjacent pairs of a cell's ranking are still in doubt
//! ([`doubtful_pairs`]). Below both the runner (its stop rules) and the
//! report (cells, floors, the stop rules' sentences), so both read one
//! grouping.

use crate::model::Measurement;
use shootout_stats::{decide_starts, median, Margin, Pooled, Width};

/// A measured phase shorter than this carries no ranking of its own: in a
/// tenth of a second the first connections, a server's first allocations
/// and one scheduler tick weigh as much as the steady rate (the Rust trio
/// article's `n=10000, c=100` takes 0.1 s against today's Rust servers, and
/// ranked them in reverse of 3 s measurements).
pub const MIN_RANKED_S: f64 = 1.0;

/// Whether a measurement is a WebSocket hold: connections opened and kept
/// idle, whose `rps` counts their upgrades over the hold, not a
/// throughput. Its cells are pooled only with other holds' (see
/// [`throughput`]).
pub fn is_hold(m: &Measurement) -> bool {
    m.parts.hold.is_some() || m.summary.websocket.as_ref().is_some_and(|w| w.hold)
}

/// A measurement's throughput as the start statistics read it: its
/// `rps`, or NaN for a hold ([`is_hold`]), which [`start_cells`] leaves
/// out, so a hold's steady handshake rate never narrows a target's
/// throughput interval or the run's floor.
pub fn throughput(m: &Measurement) -> f64 {
    if is_hold(m) {
        f64::NAN
    } else {
        m.summary.rps
    }
}

/// The values of each target × scenario × level cell over its starts
/// (repetitions), of one target or of all.
pub fn start_cells(
    all: &[Measurement],
    target: Option<&str>,
    value: impl Fn(&Measurement) -> f64,
) -> Vec<Vec<f64>> {
    let mut cells: std::collections::BTreeMap<(&str, &str, u32), Vec<f64>> = Default::default();
    for m in all.iter().filter(|m| target.is_none_or(|t| m.target == t)) {
        let v = value(m);
        if v.is_finite() {
            cells
                .entry((m.target.as_str(), m.scenario.as_str(), m.level))
                .or_default()
                .push(v);
        }
    }
    cells.into_values().collect()
}

/// The width of `target`'s throughput interval over the measurements `all`
/// (a run's); None when it has none.
pub fn target_width(all: &[Measurement], target: &str) -> Option<Width> {
    Width::of(&start_cells(all, Some(target), throughput))
}

/// Two contestants adjacent in one cell's ranking by throughput whose
/// order is in doubt: tied, with a 95% interval of their difference that
/// still reaches past the margin ([`shootout_stats::Verdict::in_doubt`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Doubt {
    pub scenario: String,
    pub level: u32,
    /// The one ranked above (the higher median).
    pub above: String,
    pub below: String,
    /// `below` against `above`, in percent (negative: slower).
    pub change_pct: f64,
}

/// One cell's targets with their values over starts.
type Ranked<'a> = Vec<(&'a str, Vec<f64>)>;

/// Every adjacent pair, in every scenario × level of the measurements
/// `all` (a run's), whose order more starts could still settle: the same
/// ranking and test as the report's (each target's throughput start
/// variance pooled over its cells, the practical `margin`). Cells measured
/// too briefly to rank, derived cost levels and targets with one start
/// are left out: more starts do not settle those.
pub fn doubtful_pairs(all: &[Measurement], margin: Margin) -> Vec<Doubt> {
    let rps = |m: &Measurement| m.summary.rps;
    let mut cells: std::collections::BTreeMap<(&str, u32), Ranked<'_>> = Default::default();
    for m in all
        .iter()
        .filter(|m| m.parts.derived.is_none() && !is_hold(m))
    {
        let row = cells.entry((m.scenario.as_str(), m.level)).or_default();
        match row.iter_mut().find(|(t, _)| *t == m.target) {
            Some((_, v)) => v.push(rps(m)),
            None => row.push((m.target.as_str(), vec![rps(m)])),
        }
    }
    let short: std::collections::BTreeSet<(&str, &str, u32)> = all
        .iter()
        .filter(|m| m.summary.duration_s < MIN_RANKED_S)
        .map(|m| (m.target.as_str(), m.scenario.as_str(), m.level))
        .collect();
    let pooled = |t: &str| {
        let c = start_cells(all, Some(t), throughput);
        Pooled::of(c.iter().map(|c| &c[..]))
    };
    let mut out = Vec::new();
    for ((scenario, level), mut row) in cells {
        row.retain(|(t, v)| v.len() >= 2 && !short.contains(&(*t, scenario, level)));
        row.sort_by(|a, b| median(&b.1).total_cmp(&median(&a.1)));
        for pair in row.windows(2) {
            let ((a, va), (b, vb)) = (&pair[0], &pair[1]);
            let Some(v) = decide_starts(va, pooled(a), vb, pooled(b), margin, true) else {
                continue;
            };
            if v.in_doubt() {
                out.push(Doubt {
                    scenario: scenario.to_string(),
                    level,
                    above: a.to_string(),
                    below: b.to_string(),
                    change_pct: v.change_pct,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measurement of `target` in `scenario` at `rps` over `secs`.
    fn at(target: &str, scenario: &str, rps: f64, secs: f64) -> Measurement {
        let mut m = crate::tests::measurement(target, 0, &[1000]);
        m.scenario = scenario.into();
        m.summary.rps = rps;
        m.summary.duration_s = secs;
        m
    }

    /// Three targets in two scenarios, two starts each, each target's
    /// starts 1% apart (pooled ln variance 5e-5 over 2 df, so the
    /// difference of two means has se 0.71% at 4 df, t = 2.776):
    /// - in `a`, x and y are 3% apart: tied (p = 0.02 but within 5%), and
    ///   the interval of the difference, −4.9% to −1.0%, reaches past the
    ///   margin's −4.76% (1/1.05 − 1): in doubt;
    /// - y and z are 30% apart: told apart, settled;
    /// - in `b`, x and y are 0.2% apart: tied with an interval well
    ///   within ±5%: settled;
    /// - a cell measured for 0.5 s is never in doubt (too short to rank).
    #[test]
    fn only_adjacent_ties_that_more_starts_could_settle_are_in_doubt() {
        let mut all = Vec::new();
        for (t, a, b) in [
            ("x", 1000.0, 1000.0),
            ("y", 970.0, 998.0),
            ("z", 680.0, 600.0),
        ] {
            for k in [0.995, 1.005] {
                all.push(at(t, "a", a * k, 5.0));
                all.push(at(t, "b", b * k, 5.0));
            }
        }
        let doubts = doubtful_pairs(&all, shootout_stats::margin::DEFAULT);
        assert_eq!(doubts.len(), 1, "{doubts:?}");
        let d = &doubts[0];
        assert_eq!(
            (d.scenario.as_str(), d.above.as_str(), d.below.as_str()),
            ("a", "x", "y")
        );
        assert!((d.change_pct + 3.0).abs() < 0.01, "{d:?}");
        // Too short: the same figures over 0.5 s raise no doubt.
        for m in &mut all {
            m.summary.duration_s = 0.5;
        }
        assert!(doubtful_pairs(&all, shootout_stats::margin::DEFAULT).is_empty());
    }
}
