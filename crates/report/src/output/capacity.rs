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

/// The request kinds of a mix's search, in the mix's order (none without
/// a mix): each gets a p99 column beside the total at every level.
pub fn kind_names(r: &CapacityResult) -> Vec<&str> {
    r.levels
        .iter()
        .chain(&r.curve)
        .find(|l| !l.routes.is_empty())
        .map_or_else(Vec::new, |l| {
            l.routes.iter().map(|k| k.name.as_str()).collect()
        })
}

/// One kind's p99 at a level (ms), if the level has that kind.
pub fn kind_p99(l: &LevelRecord, name: &str) -> Option<f64> {
    l.routes
        .iter()
        .find(|k| k.name == name)
        .map(|k| k.latency_ms.p99)
}

/// `updates.p99 broke first: 81.2 ms at 420 req/s`, for a mix's search.
pub fn broke_first_line(r: &CapacityResult) -> Option<String> {
    r.broke_first.as_ref().map(|b| {
        format!(
            "broke the SLO first: {} (p99 {:.1} ms at {:.0} req/s)",
            b.kind, b.p99_ms, b.rate_rps
        )
    })
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
    if let Some(b) = broke_first_line(r) {
        line.push('\n');
        line.push_str(&b);
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

/// The heading with a p99 column per kind after the total's.
fn head(kinds: &[&str]) -> String {
    let cols: String = kinds.iter().map(|k| format!(" {:>9}", short(k))).collect();
    HEAD.replace("p99.9 ms", &format!("p99.9 ms{cols}"))
}

/// A kind's name cut to fit its column.
fn short(k: &str) -> String {
    k.chars().take(9).collect()
}

/// Each kind's p99 at `l`, in text columns.
fn kind_cells(l: &LevelRecord, kinds: &[&str]) -> String {
    kinds
        .iter()
        .map(|k| match kind_p99(l, k) {
            Some(v) => format!(" {v:>9.2}"),
            None => format!(" {:>9}", "-"),
        })
        .collect()
}

fn row(o: &mut String, i: usize, l: &LevelRecord, kinds: &[&str]) {
    let c = Cells::of(l);
    let _ = writeln!(
        o,
        "{i:>3}  {:<8} {:>10} {:>11} {:>6} {:>8} {:>9} {:>9}{} {:>7}  {}: {}",
        label(l, ""),
        c.target,
        c.achieved,
        c.connections,
        c.p50,
        c.p99,
        c.p999,
        kind_cells(l, kinds),
        c.errors,
        c.verdict,
        l.reason
    );
}

/// What the search spoke, when it was not cleartext HTTP/1.1: `HTTP/2
/// over TLS 1.3 with up to 16 streams per connection`, `mTLS 1.3`.
pub fn protocol_text(r: &CapacityResult) -> Option<String> {
    let p = &r.search.protocol;
    let tls = p.tls.as_deref().map(|v| {
        let word = if p.client_cert { "mTLS" } else { "TLS" };
        format!("{word} {v}")
    });
    let text = match (p.http.as_str(), tls) {
        ("1.1", None) => return None,
        ("1.1", Some(t)) => t,
        (http, Some(t)) => format!("HTTP/{http} over {t}"),
        (http, None) => format!("HTTP/{http} in cleartext (h2c)"),
    };
    Some(match r.search.streams {
        Some(n) => format!("{text} with up to {n} streams per connection"),
        None => text,
    })
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
    if let Some(p) = protocol_text(r) {
        let _ = writeln!(o, "protocol: {p}");
    }
    let _ = writeln!(
        o,
        "levels: {:.1} s warm-up + {:.1} s measured each, {} thread{}; latency is corrected (from each intended send time)\n",
        r.search.warmup_s,
        r.search.step_s,
        r.search.threads,
        if r.search.threads == 1 { "" } else { "s" }
    );
    let kinds = kind_names(r);
    if !kinds.is_empty() {
        let _ = writeln!(
            o,
            "request kinds ({}): each one's p99 (ms) beside the total's\n",
            kinds.join(", ")
        );
    }
    let _ = writeln!(o, "{}", head(&kinds));
    for (i, l) in r.levels.iter().enumerate() {
        row(&mut o, i, l, &kinds);
    }
    let _ = writeln!(o, "\n{}", conclusion(r));
    if !r.curve.is_empty() {
        let _ = writeln!(
            o,
            "\nLatency vs load\n{}",
            head(&kinds).replace("phase   ", "fraction")
        );
        for (i, l) in r.curve.iter().enumerate() {
            row(&mut o, r.levels.len() + i, l, &kinds);
        }
    }
    if let Some(note) = busy_note(r) {
        let _ = writeln!(o, "\n{note}");
    }
    o
}

fn md_row(o: &mut String, i: usize, l: &LevelRecord, kinds: &[&str]) {
    let c = Cells::of(l);
    let by_kind = kinds
        .iter()
        .map(|k| kind_p99(l, k).map_or("—".to_string(), |v| format!("{v:.2}")));
    let cells = [
        i.to_string(),
        label(l, "curve "),
        c.target,
        c.achieved,
        c.connections,
        c.p50,
        c.p99,
        c.p999,
    ]
    .into_iter()
    .chain(by_kind)
    .chain([c.errors, c.verdict.to_string(), escape::md(&l.reason)])
    .collect::<Vec<_>>();
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
    if let Some(p) = protocol_text(r) {
        let _ = writeln!(o, "Protocol: {}\n", escape::md(&p));
    }
    let kinds = kind_names(r);
    let kind_heads: String = kinds
        .iter()
        .map(|k| format!(" {} {} |", escape::md(k), Metric::P99.label()))
        .collect();
    let _ = writeln!(
        o,
        "| # | phase | target req/s | achieved req/s | conns | {} | {} | {} |{kind_heads} {} | verdict | reason |",
        Metric::Median.label(),
        Metric::P99.label(),
        Metric::P999.label(),
        Metric::Errors.label(),
    );
    let _ = writeln!(
        o,
        "|---:|---|---:|---:|---:|---:|---:|---:|{}---:|---|---|",
        "---:|".repeat(kinds.len())
    );
    for (i, l) in r.levels.iter().chain(&r.curve).enumerate() {
        md_row(&mut o, i, l, &kinds);
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

/// One row per level (the curve's last); the capacity is in the JSON and
/// text. A mix's search appends a `<kind>_p99_ms` column per kind.
fn csv(r: &CapacityResult) -> String {
    let kinds = kind_names(r);
    let kind_columns: Vec<String> = kinds.iter().map(|k| format!("{k}_p99_ms")).collect();
    let mut columns: Vec<&str> = csv_columns().to_vec();
    columns.extend(kind_columns.iter().map(String::as_str));
    let mut o = super::header(&columns);
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
        if !kinds.is_empty() {
            o.pop();
            for k in &kinds {
                let _ = write!(
                    o,
                    ",{}",
                    kind_p99(l, k).map_or(String::new(), |v| format!("{v:.3}"))
                );
            }
            o.push('\n');
        }
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
