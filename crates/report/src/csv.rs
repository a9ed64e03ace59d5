//! The CSV report: a header and one row per measurement, RFC 4180 quoting;
//! metric columns are named as in the catalogue (docs/columns.md).
//! Text cells that a spreadsheet would run as a formula (leading `=`, `+`,
//! `-`, `@`) get a leading apostrophe. Runs with database numbers get the
//! database columns appended after the others, runs under a resource
//! budget the budget columns after those, runs with TLS levels the
//! protocol spoken and the handshake figures after those, runs with cost
//! parts (docs/cost.md) their figures after those, a run with a random
//! order its seed (`order_seed`) after those, and runs with a mix a
//! `<kind>_p99_ms` column per request kind last; runs without keep exactly
//! the columns they always had.

use shootout_store::parts::Parts;
use shootout_store::{Measurement, RunData};
use shootout_study::Metric;

/// The columns of every run; metrics under their catalogue names.
pub fn header() -> Vec<&'static str> {
    vec![
        "run_id",
        "target",
        "scenario",
        "level",
        "level_label",
        "repetition",
        Metric::Rps.name(),
        Metric::Mean.name(),
        Metric::Median.name(),
        Metric::P90.name(),
        Metric::P99.name(),
        Metric::Max.name(),
        "completed",
        Metric::Errors.name(),
        Metric::RssIdle.name(),
        Metric::RssPeak.name(),
        Metric::RssAfter.name(),
        Metric::PssPeak.name(),
        Metric::CpuS.name(),
        Metric::ReqPerCpuS.name(),
        "generator_bound",
        Metric::Startup.name(),
        Metric::WarmupS.name(),
        "steady",
        "warmup_cv",
        "others_cpu_share",
        "steal_share",
        "disturbed",
    ]
}

/// Appended when any measurement of the run has database numbers.
const DATABASE_HEADER: [Metric; 3] = [Metric::DbCpuS, Metric::DbRssPeak, Metric::ReqPerTotalCpuS];

/// Appended when any measurement of the run ran under a budget.
const BUDGET_HEADER: [Metric; 6] = [
    Metric::CpuQuota,
    Metric::MemoryLimit,
    Metric::Throttled,
    Metric::ReqPerQuotaCpuS,
    Metric::RpsPerLimitGib,
    Metric::MemoryPeak,
];

/// Budget columns that are counts, not catalogue metrics.
const BUDGET_COUNTS: [&str; 2] = ["throttled_periods", "oom_killed"];

/// Appended when any measurement of the run was over TLS: the protocol
/// spoken (HTTP version, TLS version, client certificate), then the
/// handshake metrics (empty with keep-alive and in cleartext).
pub fn tls_header() -> Vec<&'static str> {
    let mut h = vec!["http_version", "tls_version", "client_cert"];
    h.extend(TLS_METRICS.map(Metric::name));
    h
}

const TLS_METRICS: [Metric; 4] = [
    Metric::Handshakes,
    Metric::HandshakesResumed,
    Metric::HandshakesFailed,
    Metric::HandshakeP99,
];

/// Appended when any measurement of the run has a cost part (a cost
/// scenario's probes, docs/cost.md): the fixed rate's cost, the standing
/// cost and the overload with its recovery, each empty where the
/// measurement has no such part.
pub const COST_HEADER: [&str; 15] = [
    "cost_offered_rps",
    "cost_achieved_rps",
    "us_per_request",
    "cost_invalid",
    "standing_s",
    "standing_cpu_ms_per_s",
    "standing_rss_mib",
    "overload_factor",
    "overload_offered_rps",
    "deadline_ms",
    "throughput_rps",
    "goodput_rps",
    "overload_errors",
    "unsent",
    "recovery_s",
];

/// Renders the CSV of a run.
pub fn render(data: &RunData) -> String {
    let database = data
        .measurements
        .iter()
        .any(|m| m.db_cpu_s.is_some() || m.db_rss_peak_mib.is_some());
    let tls = data.measurements.iter().any(|m| m.summary.tls.is_some());
    let mut header = header();
    if database {
        header.extend(DATABASE_HEADER.map(Metric::name));
    }
    let budget = data.measurements.iter().any(|m| {
        m.resources_cpus.is_some() || m.resources_memory_mib.is_some() || m.oom_killed.is_some()
    });
    if budget {
        header.extend(BUDGET_HEADER.map(Metric::name));
        header.extend(BUDGET_COUNTS);
    }
    if tls {
        header.extend(tls_header());
    }
    let cost = data.measurements.iter().any(|m| {
        m.parts.cost.is_some() || m.parts.standing.is_some() || m.parts.overload.is_some()
    });
    if cost {
        header.extend(COST_HEADER);
    }
    let seed = data.run.order_seed;
    if seed.is_some() {
        header.push("order_seed");
    }
    let kinds = kinds(data);
    let kind_columns: Vec<String> = kinds.iter().map(|k| format!("{k}_p99_ms")).collect();
    header.extend(kind_columns.iter().map(String::as_str));
    let mut out = header.join(",");
    out.push('\n');
    for m in &data.measurements {
        let mut cells = row(data.run.id, m);
        if database {
            cells.extend(database_cells(m));
        }
        if budget {
            cells.extend(budget_cells(m));
        }
        if tls {
            cells.extend(tls_cells(m));
        }
        if cost {
            cells.extend(cost_cells(&m.parts));
        }
        if let Some(seed) = seed {
            cells.push(seed.to_string());
        }
        cells.extend(kinds.iter().map(|k| {
            let kind = m.summary.routes.iter().find(|r| r.name == *k);
            kind.map_or(String::new(), |r| f(r.latency_ms.p99))
        }));
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// The request kinds of the run's mixes, in the order first seen: each
/// gets a `<kind>_p99_ms` column (none in a run without a mix).
fn kinds(data: &RunData) -> Vec<&str> {
    let mut kinds: Vec<&str> = Vec::new();
    for r in data.measurements.iter().flat_map(|m| &m.summary.routes) {
        if !kinds.contains(&r.name.as_str()) {
            kinds.push(&r.name);
        }
    }
    kinds
}

/// The database columns: empty cells where a measurement has no value.
fn database_cells(m: &Measurement) -> Vec<String> {
    DATABASE_HEADER
        .iter()
        .map(|x| f(crate::metric::value(*x, m)))
        .collect()
}

/// The budget columns: empty cells where a measurement has no value.
fn budget_cells(m: &Measurement) -> Vec<String> {
    let count = |c: Option<u64>| c.map_or(String::new(), |c| c.to_string());
    let mut cells: Vec<String> = BUDGET_HEADER
        .iter()
        .map(|x| f(crate::metric::value(*x, m)))
        .collect();
    cells.push(count(m.throttled_periods));
    cells.push(count(m.oom_killed));
    cells
}

/// The protocol spoken and the handshake figures of one measurement.
fn tls_cells(m: &Measurement) -> Vec<String> {
    let p = &m.summary.protocol;
    let mut cells = vec![
        text(&p.http),
        p.tls.as_deref().map_or(String::new(), text),
        p.client_cert.to_string(),
    ];
    cells.extend(TLS_METRICS.iter().map(|x| f(crate::metric::value(*x, m))));
    cells
}

/// The cost figures of one measurement ([`COST_HEADER`]): empty cells
/// for the parts it does not have, and for a recovery that did not come
/// within the recovery phase.
fn cost_cells(p: &Parts) -> Vec<String> {
    let mut cells = match &p.cost {
        Some(c) => vec![
            f(c.offered_rps),
            f(c.achieved_rps),
            f(c.us_per_request),
            c.invalid.as_deref().map_or(String::new(), quoted),
        ],
        None => vec![String::new(); 4],
    };
    match &p.standing {
        Some(s) => cells.extend([f(s.seconds), f(s.cpu_ms_per_s()), f(s.rss_mib)]),
        None => cells.extend(vec![String::new(); 3]),
    }
    match &p.overload {
        Some(o) => cells.extend([
            f(o.factor),
            f(o.offered_rps),
            f(o.deadline_ms),
            f(o.throughput_rps),
            f(o.goodput_rps),
            o.errors.total().to_string(),
            o.unsent.to_string(),
            o.recovery_s.map_or(String::new(), f),
        ]),
        None => cells.extend(vec![String::new(); 8]),
    }
    cells
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
        m.warmup_s.map_or(String::new(), f),
        m.steady.map_or(String::new(), |s| s.to_string()),
        m.warmup_cv.map_or(String::new(), f),
        m.others_cpu_share.map_or(String::new(), f),
        m.steal_share.map_or(String::new(), f),
        m.disturbed.to_string(),
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

/// A text cell always in quotes (inner quotes doubled), for free text such
/// as a URL or a reason.
pub fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
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
