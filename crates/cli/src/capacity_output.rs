//! Renders a capacity search for `shootout capacity -o text|json|markdown|csv`
//! and draws its progress line on stderr. Text: the levels in order, the
//! capacity line, then the curve. JSON follows docs/capacity.schema.json.

use shootout_capacity::{CapacityResult, Event, LevelRecord, LevelVerdict, Phase, Verdict};
use std::fmt::Write;
use std::io::Write as _;

use crate::load_output::Format;

pub fn render(r: &CapacityResult, format: Format) -> String {
    match format {
        Format::Text => text(r),
        Format::Json => {
            let mut out = serde_json::to_string_pretty(r).unwrap_or_default();
            out.push('\n');
            out
        }
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

fn row(o: &mut String, i: usize, l: &LevelRecord) {
    let label = match l.fraction {
        Some(f) => format!("{:.0}%", f * 100.0),
        None => phase(l.phase).to_string(),
    };
    let _ = writeln!(
        o,
        "{i:>3}  {label:<8} {:>10.1} {:>11.1} {:>6} {:>8.2} {:>9.2} {:>9.2} {:>7}  {}: {}",
        l.target_rps,
        l.achieved_rps,
        l.connections,
        l.latency_ms.p50,
        l.latency_ms.p99,
        l.latency_ms.p999,
        l.errors.total(),
        verdict(l.verdict),
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
    let label = match l.fraction {
        Some(f) => format!("curve {:.0}%", f * 100.0),
        None => phase(l.phase).to_string(),
    };
    let _ = writeln!(
        o,
        "| {i} | {label} | {:.1} | {:.1} | {} | {:.2} | {:.2} | {:.2} | {} | {} | {} |",
        l.target_rps,
        l.achieved_rps,
        l.connections,
        l.latency_ms.p50,
        l.latency_ms.p99,
        l.latency_ms.p999,
        l.errors.total(),
        verdict(l.verdict),
        l.reason.replace('|', "\\|")
    );
}

fn markdown(r: &CapacityResult) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "**Capacity of `{} {}` under `{}`**\n",
        r.method,
        r.url,
        slo_text(r)
    );
    let _ = writeln!(
        o,
        "| # | phase | target req/s | achieved req/s | conns | p50 ms | p99 ms | p99.9 ms | errors | verdict | reason |"
    );
    let _ = writeln!(o, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
    for (i, l) in r.levels.iter().chain(&r.curve).enumerate() {
        md_row(&mut o, i, l);
    }
    let _ = writeln!(o, "\n{}", conclusion(r).replace('\n', "  \n"));
    if let Some(note) = busy_note(r) {
        let _ = writeln!(o, "\n{note}");
    }
    o
}

const CSV_HEADER: &str =
    "index,phase,fraction,target_rps,achieved_rps,connections,lat_min_ms,lat_mean_ms,\
lat_p50_ms,lat_p90_ms,lat_p99_ms,lat_p999_ms,lat_max_ms,sent,completed,errors,error_rate,all_busy,\
send_lag_p99_ms,generator_cpu,verdict,reason";

/// One row per level (the curve's last); the capacity is in the JSON and text.
fn csv(r: &CapacityResult) -> String {
    let mut o = format!("{CSV_HEADER}\n");
    for (i, l) in r.levels.iter().chain(&r.curve).enumerate() {
        let m = &l.latency_ms;
        let _ = writeln!(
            o,
            "{i},{},{},{:.3},{:.3},{},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{:.3},{},{},{},{:.6},{},{:.3},{:.4},{},\"{}\"",
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
            l.reason.replace('"', "\"\"")
        );
    }
    o
}

/// The progress line on stderr: the level being tried and the bracket. On a
/// terminal with colour allowed the line is redrawn in place; otherwise
/// each level start and end is a plain line, with no escape codes.
#[derive(Debug)]
pub struct Progress {
    enabled: bool,
    redraw: bool,
}

impl Progress {
    pub fn new(enabled: bool) -> Progress {
        Progress {
            enabled,
            redraw: crate::term::color_enabled(),
        }
    }

    pub fn event(&mut self, e: &Event) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr().lock();
        let clear = if self.redraw { "\r\x1b[2K" } else { "" };
        let _ = match e {
            Event::LevelStarting {
                index,
                phase: p,
                target_rps,
                bracket,
            } => {
                let line = match p {
                    Phase::Probe => {
                        format!("level {index} probe: closed loop, estimating the maximum rate")
                    }
                    _ => format!(
                        "level {index} {}: {target_rps:.1} req/s  bracket {}",
                        phase(*p),
                        bracket_text(*bracket)
                    ),
                };
                if self.redraw {
                    write!(err, "{clear}{line}")
                } else {
                    writeln!(err, "{line}")
                }
            }
            Event::LevelDone { index, record: l } => writeln!(
                err,
                "{clear}level {index} {} {:.1} req/s: {} ({})",
                phase(l.phase),
                l.target_rps,
                verdict(l.verdict),
                l.reason
            ),
        };
        let _ = err.flush();
    }
}

fn bracket_text(b: (Option<f64>, Option<f64>)) -> String {
    let end = |v: Option<f64>| v.map_or("?".to_string(), |v| format!("{v:.1}"));
    format!("[pass {}, fail {}]", end(b.0), end(b.1))
}
