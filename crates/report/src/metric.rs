//! The metrics every report shows, in the order the seed articles' tables
//! used: how each is read from a stored measurement, its unit, which
//! direction is better, and its name in the one list of metric names
//! (`shootout_study::MetricName`). Also the number formatting shared by all formats.
//! The database metrics only have values for database scenarios; tables
//! show their rows only where some measurement has them.

use shootout_store::Measurement;
use shootout_study::MetricName;

/// One row of a seed-shaped table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Rps,
    Mean,
    Median,
    P90,
    P99,
    Max,
    Errors,
    RssIdle,
    RssPeak,
    RssAfter,
    DbRssPeak,
    CpuS,
    DbCpuS,
    ReqPerCpuS,
    ReqPerTotalCpuS,
}

impl Metric {
    pub const ALL: [Metric; 15] = [
        Metric::Rps,
        Metric::Mean,
        Metric::Median,
        Metric::P90,
        Metric::P99,
        Metric::Max,
        Metric::Errors,
        Metric::RssIdle,
        Metric::RssPeak,
        Metric::RssAfter,
        Metric::DbRssPeak,
        Metric::CpuS,
        Metric::DbCpuS,
        Metric::ReqPerCpuS,
        Metric::ReqPerTotalCpuS,
    ];

    /// The row label, with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Rps => "RPS (req/s)",
            Metric::Mean => "Mean latency (ms)",
            Metric::Median => "Median latency (ms)",
            Metric::P90 => "p90 latency (ms)",
            Metric::P99 => "p99 latency (ms)",
            Metric::Max => "Max latency (ms)",
            Metric::Errors => "Errors",
            Metric::RssIdle => "RSS idle (MiB)",
            Metric::RssPeak => "RSS peak (MiB)",
            Metric::RssAfter => "RSS after (MiB)",
            Metric::DbRssPeak => "DB RSS peak (MiB)",
            Metric::CpuS => "Server CPU (s)",
            Metric::DbCpuS => "DB CPU (s)",
            Metric::ReqPerCpuS => "Req per CPU-s",
            Metric::ReqPerTotalCpuS => "Req per CPU-s (server + DB)",
        }
    }

    /// The metric's name in the one list of metric names (study files,
    /// `[published]`).
    pub fn name(self) -> MetricName {
        match self {
            Metric::Rps => MetricName::Rps,
            Metric::Mean => MetricName::MeanMs,
            Metric::Median => MetricName::MedianMs,
            Metric::P90 => MetricName::P90Ms,
            Metric::P99 => MetricName::P99Ms,
            Metric::Max => MetricName::MaxMs,
            Metric::Errors => MetricName::Errors,
            Metric::RssIdle => MetricName::RssIdleMib,
            Metric::RssPeak => MetricName::RssPeakMib,
            Metric::RssAfter => MetricName::RssAfterMib,
            Metric::DbRssPeak => MetricName::DbRssPeakMib,
            Metric::CpuS => MetricName::ServerCpuS,
            Metric::DbCpuS => MetricName::DbCpuS,
            Metric::ReqPerCpuS => MetricName::ReqPerCpuS,
            Metric::ReqPerTotalCpuS => MetricName::ReqPerTotalCpuS,
        }
    }

    /// True for the metrics only database scenarios have.
    pub fn database_only(self) -> bool {
        matches!(
            self,
            Metric::DbRssPeak | Metric::DbCpuS | Metric::ReqPerTotalCpuS
        )
    }

    /// True when a larger value is better.
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Metric::Rps | Metric::ReqPerCpuS | Metric::ReqPerTotalCpuS
        )
    }

    /// The metric's value in one measurement; NaN where it has none (a
    /// database metric outside a database scenario), which the statistics
    /// skip and the renderers show as "—".
    pub fn value(self, m: &Measurement) -> f64 {
        let l = &m.summary.latency_ms;
        match self {
            Metric::Rps => m.summary.rps,
            Metric::Mean => l.mean,
            Metric::Median => l.p50,
            Metric::P90 => l.p90,
            Metric::P99 => l.p99,
            Metric::Max => l.max,
            Metric::Errors => m.summary.errors.total() as f64,
            Metric::RssIdle => m.rss_idle_mib,
            Metric::RssPeak => m.rss_peak_mib,
            Metric::RssAfter => m.rss_after_mib,
            Metric::CpuS => m.server_cpu_s,
            // Undefined when the server's CPU time was below the clock's resolution.
            Metric::ReqPerCpuS if m.server_cpu_s <= 0.0 => f64::NAN,
            Metric::ReqPerCpuS => m.req_per_cpu_s,
            Metric::DbRssPeak => m.db_rss_peak_mib.unwrap_or(f64::NAN),
            Metric::DbCpuS => m.db_cpu_s.unwrap_or(f64::NAN),
            Metric::ReqPerTotalCpuS => req_per_total_cpu_s(m),
        }
    }
}

/// Completed requests per CPU second of the server and the database
/// together: the one definition of `req_per_total_cpu_s`. NaN outside
/// database scenarios and when the total is below the clock's resolution.
pub fn req_per_total_cpu_s(m: &Measurement) -> f64 {
    match m.db_cpu_s {
        Some(db) if m.server_cpu_s + db > 0.0 => {
            m.summary.requests.completed as f64 / (m.server_cpu_s + db)
        }
        _ => f64::NAN,
    }
}

/// Formats a number with a precision that suits its size (4 significant
/// digits up to 1000, whole numbers above).
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let a = v.abs();
    let decimals = if a >= 1000.0 || a == 0.0 || v.fract() == 0.0 && a >= 1.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 0.1 {
        3
    } else {
        4
    };
    format!("{v:.decimals$}")
}

/// An axis tick: like [`num`] but without trailing zeros, so a tick reads
/// `4.5`, never `4.500`.
pub fn axis_num(v: f64) -> String {
    let s = num(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Decimals that suit a whole row: none when every value is whole, else
/// what [`num`] would use for the largest magnitude.
pub fn row_decimals(values: &[f64]) -> usize {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.iter().all(|v| v.fract() == 0.0) {
        return 0;
    }
    let max = finite.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    decimals(num(max).as_str())
}

/// Formats with a fixed number of decimals; "n/a" when not finite.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "n/a".to_string()
    }
}

fn decimals(s: &str) -> usize {
    s.split_once('.').map_or(0, |(_, d)| d.len())
}

/// How much of second `t` the measured phase covered (the last one is partial).
pub fn second_span(m: &Measurement, t: u32) -> f64 {
    (m.summary.duration_s - f64::from(t)).clamp(0.0, 1.0)
}

/// Completed requests per second in one timeline entry, scaled up for a
/// partial last second; None when less than `min_span` of it was measured.
pub fn second_rate(m: &Measurement, s: &shootout_engine::Second, min_span: f64) -> Option<f64> {
    let span = second_span(m, s.t);
    (span >= min_span && span > 0.0).then(|| s.completed as f64 / span)
}
