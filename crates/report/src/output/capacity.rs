//! Renders a capacity search for `shootout capacity -o text|json|markdown|csv`
//! and the lines of its progress (the CLI draws them on stderr). Text: the
//! levels in order, the capacity line, then the curve. JSON follows
//! docs/capacity.schema.json; Markdown headers and CSV columns of metrics
//! are the catalogue's labels and names (docs/columns.md).

use super::Format;
use crate::escape;
use shootout_capacity::{CapacityResult, LevelRecord, LevelVerdict, Phase, Verdict};
use shootout_study::Metric;
use std::fmt::Write;

/// The search in `format`.
pub fn render(r: &CapacityResult, format: Format) -> String {
    match format {
        Format::Text => text(r),
        Format::Json => super::pretty(r),
        Format::Markdown => markdown(r),
        Format::Csv => csv(r),
    }
}

/// The rules, as written: `p99<=10ms, error_rate<=0.1%`.
pub fn slo_text(r: &CapacityResult) -> String {
    let rules: Vec<&str> = r.slo.iter().map(|t| t.text()).collect();
    rules.join(", ")
}

fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Probe => "probe",
        Phase::Search => "search",
        Phase::Confirm => "confirm",
        Phase::Curve => "curve",
    }
}

fn verdict(v: LevelVerdict) -> &'static str {
    match v {
        LevelVerdict::Pass => "pass",
        LevelVerdict::Fail => "FAIL",
        LevelVerdict::GeneratorLimited => "generator-limited",
    }
}

/// The capacity line, in words.
pub fn conclusion(r: &CapacityResult) -> String {
    let slo = slo_text(r);
    let mut line = match (r.verdict, r.capacity_rps, r.lower_bound_rps) {
        (Verdict::Found, Some(c), _) => format!(
            "capacity: {c:.0} req/s under {slo} (confirmed; bracket within {}%)",
            r.search.precision * 100.0
        ),
        (Verdict::GeneratorLimited, _, Some(b)) => format!(
            "capacity: at least {b:.0} req/s under {slo}; the generator could not offer more"
        ),
        (Verdict::GeneratorLimited, _, None) => {
            "capacity: unknown; the generator could not keep any rate's schedule".to_string()
        }
        _ => format!("capacity: none; no rate tried met {slo}"),
    };
    if r.unstable {
        line.push_str(
            "\nunstable: a higher rate passed after a lower one failed; the lower is reported",
        );
    }
    line
}

/// Which levels found every connection busy at a send time, if any.
fn busy_note(r: &CapacityResult) -> Option<String> {
    let busy: Vec<String> = r
        .levels
        .iter()
        .chain(&r.curve)
        .enumerate()
        .filter(|(_, l)| l.all_busy > 0)
        .map(|(i, l)| format!("#{i} ({} requests)", l.all_busy))
        .collect();
    (!busy.is_empty()).then(|| {
        format!(
            "requests came due with every connection busy on levels {}: they waited for a connection, and the wait is in their latency",
            busy.join(", ")
        )
    })
}

const HEAD: &str =
    "  #  phase      target/s  achieved/s  conns   p50 ms    p99 ms  p99.9 ms  errors  verdict";

/// One level's cells, formatted once for the text and the Markdown table.
struct Cells {
    target: String,
    achieved: String,
    connections: String,
    p50: String,
    p99: String,
    p999: String,
    errors: String,
    verdict: &'static str,
}

impl Cells {
    fn of(l: &LevelRecord) -> Cells {
        Cells {
            target: format!("{:.1}", l.target_rps),
            achieved: format!("{:.1}", l.achieved_rps),
            connections: l.connections.to_string(),
            p50: format!("{:.2}", l.latency_ms.p50),
            p99: format!("{:.2}", l.latency_ms.p99),
            p999: format!("{:.2}", l.latency_ms.p999),
            errors: l.errors.total().to_string(),
            verdict: verdict(l.verdict),
        }
    }
}

/// The phase, or the fraction of the capacity for a curve level
/// (`curve_word` before it where one table holds both).
fn label(l: &LevelRecord, curve_word: &str) -> String {
    match l.fraction {
        Some(f) => format!("{curve_word}{:.0}%", f * 100.0),
        None => phase(l.phase).to_string(),
    }
}

fn row(o: &mut String, i: usize, l: &LevelRecord) {
    let c = Cells::of(l);
    let _ = writeln!(
        o,
        "{i:>3}  {:<8} {:>10} {:>11} {:>6} {:>8} {:>9} {:>9} {:>7}  {}: {}",
        label(l, ""),
        c.target,
        c.achieved,
        c.connections,
        c.p50,
        c.p99,
        c.p999,
        c.errors,
        c.verdict,
        l.reason
    );
}

fn text(r: &CapacityResult) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Capacity of {} {} under {}",
        r.method,
        r.url,
        slo_text(r)
    );
    let _ = writeln!(
        o,
        "levels: {:.1} s warm-up + {:.1} s measured each, {} thread{}; latency is corrected (from each intended send time)\n",
        r.search.warmup_s,
        r.search.step_s,
        r.search.threads,
        if r.search.threads == 1 { "" } else { "s" }
    );
    let _ = writeln!(o, "{HEAD}");
    for (i, l) in r.levels.iter().enumerate() {
        row(&mut o, i, l);
    }
    let _ = writeln!(o, "\n{}", conclusion(r));
    if !r.curve.is_empty() {
        let _ = writeln!(
            o,
            "\nLatency vs load\n{}",
            HEAD.replace("phase   ", "fraction")
        );
        for (i, l) in r.curve.iter().enumerate() {
            row(&mut o, r.levels.len() + i, l);
        }
    }
    if let Some(note) = busy_note(r) {
        let _ = writeln!(o, "\n{note}");
    }
    o
}

fn md_row(o: &mut String, i: usize, l: &LevelRecord) {
    let c = Cells::of(l);
    let cells = [
        i.to_string(),
        label(l, "curve "),
        c.target,
        c.achieved,
        c.connections,
        c.p50,
        c.p99,
        c.p999,
        c.errors,
        c.verdict.to_string(),
        escape::md(&l.reason),
    ];
    let _ = writeln!(o, "| {} |", cells.join(" | "));
}

fn markdown(r: &CapacityResult) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "**Capacity of {} under {}**\n",
        escape::md_code(&format!("{} {}", r.method, r.url)),
        escape::md_code(&slo_text(r))
    );
    let _ = writeln!(
        o,
        "| # | phase | target req/s | achieved req/s | conns | {} | {} | {} | {} | verdict | reason |",
        Metric::Median.label(),
        Metric::P99.label(),
        Metric::P999.label(),
        Metric::Errors.label(),
    );
    let _ = writeln!(o, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for (i, l) in r.levels.iter().chain(&r.curve).enumerate() {
        md_row(&mut o, i, l);
    }
    let lines: Vec<String> = conclusion(r).lines().map(escape::md).collect();
    let _ = writeln!(o, "\n{}", lines.join("  \n"));
    if let Some(note) = busy_note(r) {
        let _ = writeln!(o, "\n{}", escape::md(&note));
    }
    o
}

/// The CSV columns, in order; metrics under their catalogue names.
pub fn csv_columns() -> [&'static str; 22] {
    [
        "index",
        "phase",
        "fraction",
        "target_rps",
        "achieved_rps",
        "connections",
        Metric::Min.name(),
        Metric::Mean.name(),
        Metric::Median.name(),
        Metric::P90.name(),
        Metric::P99.name(),
        Metric::P999.name(),
        Metric::Max.name(),
        "sent",
        "completed",
        Metric::Errors.name(),
        "error_rate",
        "all_busy",
        "send_lag_p99_ms",
        "generator_cpu",
        "verdict",
        "reason",
    ]
}

/// One row per level (the curve's last); the capacity is in the JSON and text.
fn csv(r: &CapacityResult) -> String {
    let mut o = super::header(&csv_columns());
    o.push('\n');
    for (i, l) in r.levels.iter().chain(&r.curve).enumerate() {
        let m = &l.latency_ms;
        let _ = writeln!(
            o,
            "{i},{},{},{:.3},{:.3},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{:.6},{},{:.3},{:.4},{},{}",
            phase(l.phase),
            l.fraction.map(|f| f.to_string()).unwrap_or_default(),
            l.target_rps,
            l.achieved_rps,
            l.connections,
            m.min, m.mean, m.p50, m.p90, m.p99, m.p999, m.max,
            l.sent,
            l.completed,
            l.errors.total(),
            l.error_rate,
            l.all_busy,
            l.send_lag_p99_ms,
            l.generator_cpu,
            verdict(l.verdict).to_ascii_lowercase(),
            crate::csv::quoted(&l.reason)
        );
    }
    o
}

/// The progress line of a level starting: what it tries and the bracket.
pub fn level_starting(
    index: usize,
    p: Phase,
    target_rps: f64,
    bracket: (Option<f64>, Option<f64>),
) -> String {
    match p {
        Phase::Probe => format!("level {index} probe: closed loop, estimating the maximum rate"),
        _ => format!(
            "level {index} {}: {target_rps:.1} req/s  bracket {}",
            phase(p),
            bracket_text(bracket)
        ),
    }
}

/// The progress line of a level done: its verdict and why.
pub fn level_done(index: usize, l: &LevelRecord) -> String {
    format!(
        "level {index} {} {:.1} req/s: {} ({})",
        phase(l.phase),
        l.target_rps,
        verdict(l.verdict),
        l.reason
    )
}

fn bracket_text(b: (Option<f64>, Option<f64>)) -> String {
    let end = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.1}"));
    format!("[pass {}, fail {}]", end(b.0), end(b.1))
}
