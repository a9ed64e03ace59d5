//! A run's measurements grouped by start: the values of each target ×
//! scenario × level cell over its starts (repetitions), and from them how
//! wide a target's throughput interval is so far (`shootout_stats::Width`).
//! Below both the runner (its stop rule) and the report (cells, floors and
//! the stop rule's sentence), so both read one grouping.

use crate::model::Measurement;
use shootout_stats::Width;

/// The values of each target × scenario × level cell over its starts
/// (repetitions), of one target or of all.
pub fn start_cells(
    all: &[Measurement],
    target: Option<&str>,
    value: impl Fn(&Measurement) -> f64,
) -> Vec<Vec<f64>> {
    let mut cells: std::collections::BTreeMap<(&str, &str, u32), Vec<f64>> = Default::default();
    for m in all.iter().filter(|m| target.is_none_or(|t| m.target == t)) {
        cells
            .entry((m.target.as_str(), m.scenario.as_str(), m.level))
            .or_default()
            .push(value(m));
    }
    cells.into_values().collect()
}

/// The width of `target`'s throughput interval over the measurements `all`
/// (a run's); None when it has none.
pub fn target_width(all: &[Measurement], target: &str) -> Option<Width> {
    Width::of(&start_cells(all, Some(target), |m| m.summary.rps))
}
