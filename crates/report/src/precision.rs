//! The stop rules in words. `precision`: which targets got more starts
//! than the study's repetitions and which stayed wider than its width at
//! the cap (the width is `shootout_stats::Width` over
//! `shootout_store::target_width`, which the runner's stop rule reads
//! too). `resolve`: which adjacent pairs got more starts because their
//! order was in doubt, and what they came to
//! (`shootout_store::doubtful_pairs`, the runner's rule).

pub use shootout_stats::Width;
pub use shootout_store::target_width;

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

/// What `resolve` did, in a sentence: each adjacent pair of a ranking
/// whose two targets both got more starts than the study's repetitions in
/// that cell, with its verdict now, and the pairs still in doubt at the
/// cap; None without `resolve` or when no pair needed more.
pub fn resolve_line(
    data: &shootout_store::RunData,
    study: &shootout_study::Study,
) -> Option<String> {
    let study = study.scaled(data.run.scale);
    let r = study.resolve?;
    let margin = crate::group::study_margin(&study);
    let planned = study.repetitions as usize;
    let mut resolved = Vec::new();
    for g in crate::group::groups(data) {
        let ranked = crate::ranking::rank(
            &g,
            crate::ranking::Measure::Metric(crate::metric::Metric::Rps),
        );
        for pair in ranked.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            if a.column.reps.len() <= planned || b.column.reps.len() <= planned {
                continue;
            }
            let Some(v) = b.vs_above else { continue };
            let now = match v.label {
                shootout_stats::Label::Tie if v.in_doubt() => "still tied, in doubt".to_string(),
                shootout_stats::Label::Tie => {
                    format!("tied within the {} margin", pct(margin.pct() / 100.0))
                }
                _ => format!("told apart, p = {:.3}", v.p_value.unwrap_or(f64::NAN)),
            };
            resolved.push(format!(
                "{} / {} in {} ({} and {} starts): {:+.1}%, {now}",
                a.target(),
                b.target(),
                g.title(),
                a.column.reps.len(),
                b.column.reps.len(),
                v.change_pct
            ));
        }
    }
    if resolved.is_empty() {
        return None;
    }
    Some(format!(
        "Order in doubt: the study asks for {} starts per target, and one more for both \
         targets of an adjacent pair while their order is in doubt (tied, with an interval \
         reaching past the {} margin), at most {}. Pairs that got them: {}.",
        study.repetitions,
        pct(margin.pct() / 100.0),
        r.max_repetitions,
        resolved.join("; ")
    ))
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
    use shootout_store::Measurement;

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

    /// The stop rule's width over stored measurements: cells by target,
    /// scenario and level, throughput, the fewest starts.
    #[test]
    fn a_targets_width_reads_its_own_throughput_cells() {
        let one = [m("a", "json", 100.0), m("a", "plaintext", 200.0)];
        let w = target_width(&one, "a").expect("measured");
        assert!(w.half.is_infinite() && w.starts == 1, "{w:?}");
        assert!(target_width(&one, "b").is_none());
        let two = [
            m("a", "json", 104.0),
            m("a", "json", 96.0),
            m("b", "json", 50.0),
            m("b", "json", 150.0),
        ];
        let w = target_width(&two, "a").expect("measured");
        assert_eq!(w, Width::of(&[vec![104.0, 96.0]]).unwrap());
        assert!(target_width(&two, "b").unwrap().half > w.half);
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
