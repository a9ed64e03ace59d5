//! How each metric of the catalogue (`shootout_study::Metric`: name,
//! label, unit, direction, aggregation) is read from a stored measurement,
//! and the number formatting shared by all formats. The database metrics
//! only have values for database scenarios, the handshake metrics only for
//! TLS levels without keep-alive, the hold metrics only for WebSocket
//! holds; tables show their rows only where some measurement has them.

use shootout_store::{Measurement, TargetRecord};
pub use shootout_study::Metric;

const MIB: f64 = 1024.0 * 1024.0;

/// The metric's value in one measurement; NaN where it has none (a
/// database metric outside a database scenario, a per-target metric),
/// which the statistics skip and the renderers show as "—".
pub fn value(metric: Metric, m: &Measurement) -> f64 {
    let s = &m.summary;
    let (l, e) = (&s.latency_ms, &s.errors);
    match metric {
        Metric::Rps => s.rps,
        Metric::RpsStdev => second_rates_stdev(m),
        Metric::RpsMax => second_rates(m).fold(f64::NAN, f64::max),
        Metric::Mean => l.mean,
        Metric::Stdev => l.stdev,
        Metric::Min => l.min,
        Metric::Median => l.p50,
        Metric::P90 => l.p90,
        Metric::P99 => l.p99,
        Metric::P999 => l.p999,
        Metric::Max => l.max,
        Metric::Errors => e.total() as f64,
        Metric::ErrorsTimeout => e.timeout as f64,
        Metric::ErrorsConnect => e.connect as f64,
        Metric::ErrorsRead => e.read as f64,
        Metric::ErrorsWrite => e.write as f64,
        Metric::ErrorsParse => e.parse as f64,
        Metric::Mismatches => e.mismatch as f64,
        Metric::Status2xx => status_count(m, true),
        Metric::StatusOther => status_count(m, false),
        Metric::Throughput if s.duration_s > 0.0 => s.bytes_received as f64 / MIB / s.duration_s,
        Metric::Throughput => f64::NAN,
        Metric::RssIdle => m.rss_idle_mib,
        Metric::RssPeak => m.rss_peak_mib,
        Metric::RssAfter => m.rss_after_mib,
        Metric::PssPeak => m.pss_peak_mib.unwrap_or(f64::NAN),
        Metric::CpuS => m.server_cpu_s,
        // Undefined when the server's CPU time was below the clock's resolution.
        Metric::ReqPerCpuS if m.server_cpu_s <= 0.0 => f64::NAN,
        Metric::ReqPerCpuS => m.req_per_cpu_s,
        Metric::DbRssPeak => m.db_rss_peak_mib.unwrap_or(f64::NAN),
        Metric::DbCpuS => m.db_cpu_s.unwrap_or(f64::NAN),
        Metric::ReqPerTotalCpuS => req_per_total_cpu_s(m),
        Metric::Startup => m.startup_s,
        Metric::Throttled => crate::budget::throttled_s(m),
        Metric::CpuQuota => m.resources_cpus.unwrap_or(f64::NAN),
        Metric::MemoryLimit => m.resources_memory_mib.unwrap_or(f64::NAN),
        Metric::ReqPerQuotaCpuS => crate::budget::req_per_quota_cpu_s(m),
        Metric::RpsPerLimitGib => crate::budget::rps_per_limit_gib(m),
        Metric::MemoryPeak => m.memory_peak_mib.unwrap_or(f64::NAN),
        // Time to steady state: only an auto warm-up measures it.
        Metric::WarmupS if m.steady.is_some() => m.warmup_s.unwrap_or(f64::NAN),
        Metric::WarmupS => f64::NAN,
        Metric::Footprint => f64::NAN,
        Metric::Handshakes => handshake(m, |t| t.handshakes.done as f64),
        Metric::HandshakesResumed => handshake(m, |t| t.handshakes.resumed as f64),
        Metric::HandshakesFailed => handshake(m, |t| t.handshakes.failed as f64),
        Metric::HandshakeP99 => handshake(m, |t| t.handshake_ms.p99),
        Metric::KibPerIdleConnection => hold(m, |h| h.kib_per_connection.unwrap_or(f64::NAN)),
        Metric::HoldCpu => hold(m, shootout_store::parts::Hold::cpu_ms_per_s),
    }
}

/// A figure of a WebSocket hold level (its `hold` part); NaN for every
/// other level.
fn hold(m: &Measurement, f: fn(&shootout_store::parts::Hold) -> f64) -> f64 {
    m.parts.hold.as_ref().map_or(f64::NAN, f)
}

/// A handshake figure of a TLS measurement without keep-alive; NaN over
/// cleartext and with keep-alive, whose connections shook hands in the
/// warm-up (a count of 0 there would read as a server that never shakes
/// hands).
fn handshake(m: &Measurement, f: fn(&shootout_engine::TlsSummary) -> f64) -> f64 {
    match &m.summary.tls {
        Some(t) if !m.summary.keepalive => f(t),
        _ => f64::NAN,
    }
}

/// The value of a per-target metric (`Scope::Target`) in the run's record
/// of the target; NaN for the others and where the record has none.
pub fn target_value(metric: Metric, t: &TargetRecord) -> f64 {
    match metric {
        Metric::Footprint => t.footprint_bytes.map_or(f64::NAN, |b| b as f64 / MIB),
        _ => f64::NAN,
    }
}

/// Responses whose status was 2xx (`two_xx`) or anything else.
fn status_count(m: &Measurement, two_xx: bool) -> f64 {
    let n: u64 = m
        .summary
        .status
        .iter()
        .filter(|(code, _)| code.starts_with('2') == two_xx)
        .map(|(_, n)| n)
        .sum();
    n as f64
}

/// The completed-request rate of each whole second of the measured phase.
fn second_rates(m: &Measurement) -> impl Iterator<Item = f64> + '_ {
    m.timeline.iter().filter_map(|s| second_rate(m, s, 1.0))
}

/// The sample standard deviation of the per-second rates; NaN below two.
fn second_rates_stdev(m: &Measurement) -> f64 {
    let rates: Vec<f64> = second_rates(m).collect();
    if rates.len() < 2 {
        return f64::NAN;
    }
    let mean = rates.iter().sum::<f64>() / rates.len() as f64;
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (rates.len() - 1) as f64;
    var.sqrt()
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
