//! The CSV report: a header and one row per measurement, RFC 4180 quoting.
//! Text cells that a spreadsheet would run as a formula (leading `=`, `+`,
//! `-`, `@`) get a leading apostrophe. Runs with database numbers get the
//! database columns appended after the others; runs without keep exactly
//! the columns they always had.

use shootout_store::{Measurement, RunData};

const HEADER: &[&str] = &[
    "run_id",
    "target",
    "scenario",
    "level",
    "level_label",
    "repetition",
    "rps",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_max_ms",
    "completed",
    "errors",
    "rss_idle_mib",
    "rss_peak_mib",
    "rss_after_mib",
    "pss_peak_mib",
    "server_cpu_s",
    "req_per_cpu_s",
    "generator_bound",
    "startup_s",
];

/// Appended when any measurement of the run has database numbers.
const DATABASE_HEADER: &[&str] = &["db_cpu_s", "db_rss_peak_mib", "req_per_total_cpu_s"];

/// Renders the CSV of a run.
pub fn render(data: &RunData) -> String {
    let database = data
        .measurements
        .iter()
        .any(|m| m.db_cpu_s.is_some() || m.db_rss_peak_mib.is_some());
    let mut header = HEADER.to_vec();
    if database {
        header.extend(DATABASE_HEADER);
    }
    let mut out = header.join(",");
    out.push('\n');
    for m in &data.measurements {
        let mut cells = row(data.run.id, m);
        if database {
            cells.extend(database_cells(m));
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The database columns: empty cells where a measurement has no value.
fn database_cells(m: &Measurement) -> Vec<String> {
    vec![
        m.db_cpu_s.map_or(String::new(), f),
        m.db_rss_peak_mib.map_or(String::new(), f),
        f(crate::metric::req_per_total_cpu_s(m)),
    ]
}

fn row(run_id: i64, m: &Measurement) -> Vec<String> {
    let l = &m.summary.latency_ms;
    vec![
        run_id.to_string(),
        text(&m.target),
        text(&m.scenario),
        m.level.to_string(),
        text(&m.level_label),
        m.repetition.to_string(),
        f(m.summary.rps),
        f(l.mean),
        f(l.p50),
        f(l.p90),
        f(l.p99),
        f(l.max),
        m.summary.requests.completed.to_string(),
        m.summary.errors.total().to_string(),
        f(m.rss_idle_mib),
        f(m.rss_peak_mib),
        f(m.rss_after_mib),
        m.pss_peak_mib.map_or(String::new(), f),
        f(m.server_cpu_s),
        f(m.req_per_cpu_s),
        m.generator_bound.to_string(),
        f(m.startup_s),
    ]
}

/// Numbers with up to 6 decimals, trailing zeros trimmed; empty when not finite.
fn f(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// Quotes a text cell when needed and defuses spreadsheet formulas.
pub fn text(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}
