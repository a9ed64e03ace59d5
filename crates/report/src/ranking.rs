//! The one ranking rule, read by the findings text and by every ranked
//! chart: targets of a scenario × level ordered best first by their median,
//! each with its ratio to the best (≥ 1, "the best is 1.15× this one") and
//! that ratio's 95% interval, and a tie with the target ranked just above
//! it when the two do not differ at p < 0.05 on their own pooled start
//! variances or differ by no more than the study's practical margin
//! ([`crate::stats::starts`], the same test as `compare`). Without a cell
//! of two starts for a target nothing is tested, so nothing is called a
//! tie: the order is then only the order of single measurements, which the
//! findings say.

use crate::group::{floor, Column, Group};
use crate::metric::Metric;
use crate::stats::{decide, decide_starts, Floor, Label, Spread, TestKind, Verdict};
use shootout_store::Measurement;

/// What a ranking orders by: a metric of the tables, or one derived for
/// the efficiency and overhead charts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    Metric(Metric),
    /// Requests per second per MiB of peak RSS.
    ReqPerMib,
    /// A latency percentile (p50 or p99) minus the route's floor, in ms.
    Overhead {
        p99: bool,
        floor_ms: f64,
    },
}

impl Measure {
    pub fn value(self, m: &Measurement) -> f64 {
        match self {
            Measure::Metric(x) => crate::metric::value(x, m),
            Measure::ReqPerMib if m.rss_peak_mib > 0.0 => m.summary.rps / m.rss_peak_mib,
            Measure::ReqPerMib => f64::NAN,
            Measure::Overhead { p99, floor_ms } => {
                let l = &m.summary.latency_ms;
                (if p99 { l.p99 } else { l.p50 }) - floor_ms
            }
        }
    }

    pub fn higher_is_better(self) -> bool {
        match self {
            Measure::Metric(x) => x.higher_is_better(),
            Measure::ReqPerMib => true,
            Measure::Overhead { .. } => false,
        }
    }

    /// The unit printed after values ("req/s", "ms", …), in the words of
    /// the level's traffic (`msg/s` for a WebSocket echo).
    pub fn unit(self, traffic: crate::traffic::Traffic) -> std::borrow::Cow<'static, str> {
        match self {
            Measure::Metric(x) => traffic.symbol(x.unit()).into(),
            Measure::Overhead { .. } => "ms".into(),
            Measure::ReqPerMib => format!("{} per MiB", traffic.rate()).into(),
        }
    }
}

/// A ratio to the best with its 95% interval (None below two repetitions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub value: f64,
    pub ci: Option<(f64, f64)>,
}

/// One target's place in a ranking.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    pub column: Column<'a>,
    pub spread: Spread,
    /// How many times better the best is than this target (1 for the best).
    pub ratio: Ratio,
    /// The test against the target ranked just above; None for the first
    /// or when either has fewer than two repetitions.
    pub vs_above: Option<Verdict>,
}

impl Entry<'_> {
    pub fn target(&self) -> &str {
        self.column.target
    }

    /// True when this target and the one above it are a statistical tie.
    pub fn tied_above(&self) -> bool {
        self.vs_above.is_some_and(|v| v.label == Label::Tie)
    }
}

/// The targets of `g` with a value of `measure`, best first. Equal medians
/// keep the run's target order, so the ranking is deterministic.
pub fn rank<'a>(g: &Group<'a>, measure: Measure) -> Vec<Entry<'a>> {
    let value = |m: &Measurement| measure.value(m);
    let mut rows: Vec<(Column<'a>, Spread)> = g
        .columns
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = c.reps.iter().map(|m| measure.value(m)).collect();
            let s = Spread::of_starts(&v, c.pooled(value))?;
            Some((c.clone(), s))
        })
        .collect();
    let hib = measure.higher_is_better();
    rows.sort_by(|a, b| {
        let o = a.1.median.total_cmp(&b.1.median);
        if hib {
            o.reverse()
        } else {
            o
        }
    });
    let Some(best) = rows.first().map(|r| r.1) else {
        return Vec::new();
    };
    let mut out: Vec<Entry<'a>> = Vec::with_capacity(rows.len());
    for (i, (column, spread)) in rows.iter().enumerate() {
        let vs_above = (i > 0)
            .then(|| versus(g, &rows[i - 1].0, column, measure))
            .flatten();
        out.push(Entry {
            column: column.clone(),
            spread: *spread,
            ratio: if i == 0 {
                Ratio {
                    value: 1.0,
                    ci: None,
                }
            } else {
                ratio(&best, spread, hib)
            },
            vs_above,
        });
    }
    out
}

/// The verdict on `b` against `a` (ranked above it) for `measure`: tied
/// when either is too short to rank; else the test on starts with each
/// target's pooled start variance and the group's practical margin; else,
/// for throughput, with the host's calibrated start variance standing in
/// for a target measured once; else, without pooled variances, Welch's t on
/// two or more repetitions each; None when nothing can be tested.
pub fn versus(g: &Group, a: &Column, b: &Column, measure: Measure) -> Option<Verdict> {
    let value = |m: &Measurement| measure.value(m);
    let margin = g.margin;
    let finite = |c: &Column| -> Vec<f64> {
        c.reps
            .iter()
            .map(|m| measure.value(m))
            .filter(|x| x.is_finite())
            .collect()
    };
    let (va, vb) = (finite(a), finite(b));
    let hib = measure.higher_is_better();
    if a.too_short() || b.too_short() {
        // Too short to carry a ranking: tied with its neighbours.
        return Some(Verdict {
            label: Label::Tie,
            test: TestKind::None,
            ..decide(&va, &vb, hib)
        });
    }
    let (pa, pb) = (a.pooled(value), b.pooled(value));
    let calibrated = match (g.calibration, measure) {
        (Some(c), Measure::Metric(Metric::Rps)) if pa.is_none() || pb.is_none() => Some(c),
        _ => None,
    };
    if let Some(c) = calibrated {
        return decide_starts(&va, pa.or(Some(c)), &vb, pb.or(Some(c)), margin, hib).map(|v| {
            Verdict {
                test: TestKind::Calibrated,
                ..v
            }
        });
    }
    decide_starts(&va, pa, &vb, pb, margin, hib)
        .or_else(|| (va.len() >= 2 && vb.len() >= 2).then(|| decide(&va, &vb, hib)))
}

/// The run's A/A floor of `measure` (over every target's starts): a figure
/// that describes the run's noise, deciding nothing.
pub fn floor_of(g: &Group, measure: Measure) -> Option<Floor> {
    g.columns
        .first()
        .and_then(|c| floor(c.all, |m: &Measurement| measure.value(m)))
}

/// The columns (indices into `g.columns`) a table marks best and worst for
/// `metric`: by value, widened to every column the ranking ties with the
/// best or with the worst (a chain of ties from either end), so a table
/// never bolds one of two contestants it cannot tell apart. Empty when
/// every column is tied with the best.
pub fn best_and_worst(g: &Group, metric: Metric) -> (Vec<usize>, Vec<usize>) {
    let spreads: Vec<Option<Spread>> = g.columns.iter().map(|c| c.spread(metric)).collect();
    let (mut best, mut worst) = extremes(&spreads, metric.higher_is_better());
    // Fewer than two values, or all equal: nothing is best or worst, and
    // the ranking's order among equals must not invent one.
    if best.is_empty()
        || metric.aggregate() != shootout_study::Aggregate::Median
        || metric.info().scope == shootout_study::Scope::Target
    {
        return (best, worst);
    }
    let ranked = rank(g, Measure::Metric(metric));
    if ranked.len() < 2 {
        return (best, worst);
    }
    let index = |e: &Entry| g.columns.iter().position(|c| c.target == e.target());
    let top = ranked.iter().skip(1).take_while(|e| e.tied_above()).count();
    if top + 1 >= ranked.len() {
        return (Vec::new(), Vec::new());
    }
    for e in &ranked[..=top] {
        if let Some(i) = index(e) {
            if !best.contains(&i) {
                best.push(i);
            }
        }
    }
    let bottom = ranked.iter().rev().take_while(|e| e.tied_above()).count();
    for e in ranked.iter().rev().take(bottom + 1) {
        if let Some(i) = index(e) {
            if !worst.contains(&i) && !best.contains(&i) {
                worst.push(i);
            }
        }
    }
    (best, worst)
}

/// Indices of the best and of the worst medians (all of them when tied);
/// empty when fewer than two columns have values or all are equal.
pub fn extremes(spreads: &[Option<Spread>], higher_is_better: bool) -> (Vec<usize>, Vec<usize>) {
    let vals: Vec<(usize, f64)> = spreads
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|s| (i, s.median)))
        .collect();
    let lo = vals.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
    let hi = vals.iter().map(|v| v.1).fold(f64::NEG_INFINITY, f64::max);
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    if vals.len() < 2 || same(lo, hi) {
        return (Vec::new(), Vec::new());
    }
    let at = |x: f64| {
        vals.iter()
            .filter(|v| same(v.1, x))
            .map(|v| v.0)
            .collect::<Vec<_>>()
    };
    if higher_is_better {
        (at(hi), at(lo))
    } else {
        (at(lo), at(hi))
    }
}

/// best/this (higher is better) or this/best (lower is better), with a 95%
/// interval from the two half-widths added in quadrature on the log scale
/// (the delta method for a log ratio), as docs/statistics.md says: each
/// half-width `median·sinh(h)` (stats::starts) is taken back to its log
/// half-width `h` (exactly where it came from the log scale, as every
/// start interval does; to first order otherwise), so the interval
/// `value·e^(±H)` is never below zero.
pub(crate) fn ratio(best: &Spread, this: &Spread, higher_is_better: bool) -> Ratio {
    let (num, den) = if higher_is_better {
        (best, this)
    } else {
        (this, best)
    };
    let value = num.median / den.median;
    let ci = match (num.half_ci, den.half_ci) {
        (Some(hn), Some(hd)) if num.median != 0.0 && den.median != 0.0 => {
            let h = |half: f64, median: f64| (half / median).abs().asinh();
            let log_half = h(hn, num.median).hypot(h(hd, den.median));
            Some((value * (-log_half).exp(), value * log_half.exp()))
        }
        _ => None,
    };
    Ratio { value, ci }
}

/// Groups of consecutive tied entries (indices into the ranking), only
/// those of two or more.
pub fn ties(entries: &[Entry]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.tied_above() {
            match out.last_mut() {
                Some(run) if run.last() == Some(&(i - 1)) => run.push(i),
                _ => out.push(vec![i - 1, i]),
            }
        }
    }
    out
}

/// `1.15×` or `1.15× [1.08–1.22]`… written before the name, as hyperfine does.
pub fn ratio_text(r: &Ratio) -> String {
    match r.ci {
        Some((lo, hi)) => format!(
            "{}× [{}–{}]",
            ratio_num(r.value),
            ratio_num(lo),
            ratio_num(hi)
        ),
        None => format!("{}×", ratio_num(r.value)),
    }
}

/// Two decimals below 10, one below 100, whole numbers above.
pub fn ratio_num(v: f64) -> String {
    if !v.is_finite() {
        "n/a".into()
    } else if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(median: f64, half: f64) -> Spread {
        Spread {
            n: 2,
            median,
            mean: median,
            half_ci: Some(half),
            cv: None,
        }
    }

    /// A wide interval (±120% of one median) stays above zero: hand values
    /// asinh(0.1) = 0.099834 and asinh(1.2) = 1.015973 in quadrature give
    /// H = 1.020866, so 2·e^(∓H) = 0.72057 and 5.55120. The linear rule
    /// gave 2·(1 − 1.204) < 0.
    #[test]
    fn a_ratio_interval_is_on_the_log_scale_and_never_below_zero() {
        let r = ratio(&spread(100.0, 10.0), &spread(50.0, 60.0), true);
        assert_eq!(r.value, 2.0);
        let (lo, hi) = r.ci.expect("an interval");
        assert!((lo - 0.720_565_3).abs() < 1e-6, "{lo}");
        assert!((hi - 5.551_197_1).abs() < 1e-6, "{hi}");
        // Lower is better: this/best, the same half-widths.
        let r = ratio(&spread(100.0, 10.0), &spread(50.0, 60.0), false);
        let (lo, hi) = r.ci.expect("an interval");
        assert!(lo > 0.0 && lo < 0.5 && hi > 0.5, "{lo} {hi}");
        assert!(
            (lo * hi - 0.25).abs() < 1e-9,
            "symmetric around 0.5 on the log scale"
        );
    }

    /// A measurement of `target` in cleartext over keep-alive connections,
    /// with no error.
    fn plain(target: &str) -> Measurement {
        let way = shootout_report_fixtures::tls::Way {
            tls: None,
            client_cert: false,
            keepalive: true,
            resumed: false,
        };
        shootout_report_fixtures::tls::sample(target, way)
    }

    /// A one-level `json` table of requests with a column per (target,
    /// measurements), each measurement a repetition.
    fn group<'a>(columns: &[(&'a str, &'a [Measurement])]) -> Group<'a> {
        Group {
            scenario: "json",
            level: 0,
            level_label: "",
            sweep: false,
            columns: columns
                .iter()
                .map(|&(target, all)| Column {
                    target,
                    reps: all.iter().collect(),
                    record: None,
                    all,
                })
                .collect(),
            listed: Vec::new(),
            spec: None,
            protocol: None,
            traffic: crate::traffic::Traffic::Requests,
            warmup_window_s: None,
            margin: crate::stats::Margin::default(),
            calibration: None,
        }
    }

    /// A metric no column has (every value NaN) ranks nothing and marks
    /// nothing, without indexing an empty ranking.
    #[test]
    fn a_metric_nobody_has_marks_nothing() {
        let mut m = plain("a");
        m.pss_peak_mib = None;
        let all = vec![m];
        let g = group(&[("a", &all)]);
        assert_eq!(best_and_worst(&g, Metric::PssPeak), (vec![], vec![]));
        assert_eq!(best_and_worst(&g, Metric::Rps), (vec![], vec![]));
    }

    /// A row where every target has the same value (no errors anywhere)
    /// has no best and no worst, whatever order the ranking lists them in.
    #[test]
    fn a_row_of_equal_values_marks_nothing() {
        let (a, b) = (vec![plain("a")], vec![plain("b")]);
        assert_eq!(a[0].summary.errors.total(), 0);
        assert_eq!(b[0].summary.errors.total(), 0);
        let g = group(&[("a", &a), ("b", &b)]);
        assert_eq!(best_and_worst(&g, Metric::Errors), (vec![], vec![]));
    }
}
