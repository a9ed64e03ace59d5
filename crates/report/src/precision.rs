//! How precise a target's throughput is so far in a run: the half-width of
//! its cells' 95% interval as a fraction of the median, from the start-to-
//! start variance pooled over its cells (`stats::starts`). The runner's
//! stop rule (`precision = { width, max_repetitions }`, Laaber et al.)
//! reads it to decide whether a target gets another start, and the report
//! says which targets got more starts and which stayed wide: one definition
//! for both.

use crate::group::start_cells;
use crate::stats::Pooled;
use shootout_store::Measurement;

/// A target's interval width so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Width {
    /// The half-width of the interval of its throughput, as a fraction of
    /// the median (the larger side, e^h − 1); infinite while there is no
    /// pooled variance (fewer than two starts of any cell).
    pub half: f64,
    /// The fewest starts any of its cells has.
    pub starts: usize,
}

impl Width {
    /// Whether it is wider than `limit` (a fraction of the median).
    pub fn wider_than(&self, limit: f64) -> bool {
        self.half > limit
    }
}

/// The width of `target`'s throughput interval over the measurements `all`
/// (a run's); None when it has none.
pub fn target_width(all: &[Measurement], target: &str) -> Option<Width> {
    let cells = start_cells(all, Some(target), |m| m.summary.rps);
    let starts = cells.iter().map(Vec::len).min()?;
    let half = Pooled::of(cells.iter().map(|c| &c[..]))
        .map_or(f64::INFINITY, |p| p.half_log(starts).exp_m1());
    Some(Width { half, starts })
}

/// What the stop rule did, in a sentence: which targets got more starts
/// than the study's repetitions and which are still wider than its width
/// at the cap; None without `precision` or when no target needed more.
pub fn precision_line(
    data: &shootout_store::RunData,
    study: &shootout_study::Study,
) -> Option<String> {
    let study = study.scaled(data.run.scale);
    let p = study.precision?;
    let width = format!("±{}", pct(p.width));
    let targets = crate::group::target_order(data);
    let mut more = Vec::new();
    let mut wide = Vec::new();
    for t in targets {
        let Some(w) = target_width(&data.measurements, t) else {
            continue;
        };
        if w.starts > study.repetitions as usize {
            more.push(format!("{t} {}", w.starts));
        }
        if w.wider_than(p.width) {
            let half = if w.half.is_finite() {
                format!("±{}", pct(w.half))
            } else {
                "no interval".to_string()
            };
            wide.push(format!("{t} ({half} after {} starts)", w.starts));
        }
    }
    if more.is_empty() && wide.is_empty() {
        return None;
    }
    let mut line = format!(
        "Precision: the study asks for {} starts per target, and one more while a target's \
         throughput interval is wider than {width}, at most {} (Laaber et al.'s stop rule).",
        study.repetitions, p.max_repetitions
    );
    if !more.is_empty() {
        line.push_str(&format!(" More starts: {}.", more.join(", ")));
    }
    if !wide.is_empty() {
        line.push_str(&format!(
            " Still wider than {width}, shown as wide as they are: {}.",
            wide.join(", ")
        ));
    }
    Some(line)
}

/// A fraction as a percentage with the digits it needs: `5%`, `2.5%`,
/// `0.01%`, `176%`.
pub fn pct(fraction: f64) -> String {
    let p = fraction * 100.0;
    let s = match p.abs() {
        x if x >= 100.0 => format!("{p:.0}"),
        x if x >= 1.0 => format!("{p:.1}"),
        _ => format!("{p:.2}"),
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_report_fixtures::tls::{sample, Way};

    fn m(target: &str, scenario: &str, rps: f64) -> Measurement {
        let way = Way {
            tls: None,
            client_cert: false,
            keepalive: true,
            resumed: false,
        };
        let mut m = sample(target, way);
        m.scenario = scenario.to_string();
        m.summary.rps = rps;
        m
    }

    #[test]
    fn the_width_narrows_with_starts_and_is_unknown_with_one() {
        let one = [m("a", "json", 100.0), m("a", "plaintext", 200.0)];
        let w = target_width(&one, "a").expect("measured");
        assert!(w.half.is_infinite() && w.starts == 1, "{w:?}");
        assert!(w.wider_than(0.05));
        assert!(target_width(&one, "b").is_none());

        let spread = |n: usize| -> Vec<Measurement> {
            (0..n)
                .flat_map(|i| {
                    let f = if i % 2 == 0 { 1.04 } else { 0.96 };
                    [m("a", "json", 100.0 * f), m("a", "plaintext", 200.0 / f)]
                })
                .collect()
        };
        let w2 = target_width(&spread(2), "a").unwrap();
        let w6 = target_width(&spread(6), "a").unwrap();
        assert_eq!((w2.starts, w6.starts), (2, 6));
        assert!(w6.half < w2.half, "{w2:?} {w6:?}");
        assert!(w2.wider_than(0.05) && !w6.wider_than(0.05), "{w2:?} {w6:?}");
    }

    #[test]
    fn percentages_keep_the_digits_they_need() {
        assert_eq!(pct(0.05), "5%");
        assert_eq!(pct(0.025), "2.5%");
        assert_eq!(pct(0.0001), "0.01%");
        assert_eq!(pct(1.764), "176%");
        assert_eq!(pct(0.233), "23.3%");
    }
}
