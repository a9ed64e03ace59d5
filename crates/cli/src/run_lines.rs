//! The words of `shootout run`'s progress: one line for each thing a run
//! tells its observer (a target prepared or built, a measurement or a
//! capacity search ended, a search level tried, the database started).
//! [`crate::run_view`] decides where and when they are shown.

use shootout_capacity::{CapacityResult, Event as SearchEvent, Phase as SearchPhase};
use shootout_report::traffic::Traffic;
use shootout_runner::event::{DatabaseEvent, Prepared};
use shootout_store::Measurement;

/// `12345 req/s, p99 1.23 ms, 0 errors, RSS 12.3 MiB` (a WebSocket level
/// in its own words, [`load_figures`]), with the flags:
/// wrong answers (responses that failed the SPEC.md check),
/// generator-bound, an auto warm-up's length and steadiness, and
/// disturbed (what other processes or the hypervisor took of its CPUs).
pub fn measurement_line(m: &Measurement) -> String {
    let s = &m.summary;
    let mut flags = String::new();
    if s.errors.mismatch > 0 {
        flags.push_str(&format!(" ({} wrong answers)", s.errors.mismatch));
    }
    if m.generator_bound {
        flags.push_str(" (generator-bound)");
    }
    let noise = m
        .warmup_cv
        .filter(|cv| shootout_steady::Rule::default().is_noisy(*cv))
        .map_or(String::new(), |cv| {
            format!(", noisy: windows varied {:.0}%", cv * 100.0)
        });
    match (m.steady, m.warmup_s) {
        (Some(true), Some(w)) => flags.push_str(&format!(" (steady after {w:.1} s{noise})")),
        (Some(false), Some(w)) => flags.push_str(&format!(" (not steady after {w:.1} s{noise})")),
        (Some(false), None) => flags.push_str(" (not steady)"),
        _ => {}
    }
    if m.disturbed {
        flags.push_str(&format!(
            " (disturbed: other processes {:.0}%, steal {:.0}% of its CPUs)",
            m.others_cpu_share.unwrap_or(0.0) * 100.0,
            m.steal_share.unwrap_or(0.0) * 100.0
        ));
    }
    format!(
        "{}, {} errors, RSS peak {:.1} MiB, CPU {:.2} s{flags}",
        load_figures(m),
        s.errors.total(),
        m.rss_peak_mib,
        m.server_cpu_s,
    )
}

/// What the load did, in its own words ([`Traffic`]): `12345 req/s, p99
/// 1.23 ms`, `28316 msg/s, p99 9.03 ms` for a WebSocket echo, and for a
/// hold the connections held of those asked, the memory each took and
/// the p99 of the opening handshakes (`1000/1000 held, 13.1 KiB each,
/// handshake p99 6423 ms`).
fn load_figures(m: &Measurement) -> String {
    let s = &m.summary;
    let traffic = Traffic::of_measurement(m);
    if !traffic.is_hold() {
        return format!(
            "{:.0} {}, p99 {:.2} ms",
            s.rps,
            traffic.rate(),
            s.latency_ms.p99
        );
    }
    let hold = m.parts.hold.as_ref();
    let held = hold
        .map(|h| h.connections)
        .or_else(|| s.websocket.as_ref().and_then(|w| w.held_open))
        .unwrap_or(0);
    let each = hold
        .and_then(|h| h.kib_per_connection)
        .map_or(String::new(), |k| format!(", {k:.1} KiB each"));
    format!(
        "{held}/{} held{each}, handshake p99 {:.0} ms",
        s.connections, s.latency_ms.p99
    )
}

/// `host: load 1.52 (1 min); over the last second other processes used 3%
/// of the measured CPUs, steal 0%`, with a warning above the limits.
pub fn host_state_line(s: &shootout_runner::host::HostState) -> String {
    let load = s.load_1m.map_or("load unknown".to_string(), |l| {
        format!("load {l:.2} (1 min)")
    });
    let (Some(others), Some(steal)) = (s.others_cpu_share, s.steal_share) else {
        return format!(
            "host: {load}; disturbance not checked (no pinned CPUs, or /proc/stat unreadable)"
        );
    };
    let busy = others > shootout_store::OTHERS_CPU_LIMIT || steal > shootout_store::STEAL_LIMIT;
    format!(
        "host: {load}; over the last second other processes used {:.0}% of the measured CPUs, \
         steal {:.0}%{}",
        others * 100.0,
        steal * 100.0,
        if busy {
            " (busy: measurements may come out disturbed)"
        } else {
            ""
        }
    )
}

/// `warming up (window 3/60)`, then `warming up (window 7/60, cv 4.2%)`
/// once the steady-state rule has enough windows to judge.
pub fn warming_line(window: u32, cap: u32, cv: Option<f64>) -> String {
    match cv {
        Some(cv) => format!("warming up (window {window}/{cap}, cv {:.1}%)", cv * 100.0),
        None => format!("warming up (window {window}/{cap})"),
    }
}

/// `8000 req/s under p99<=10ms, error_rate<=0.1% (found, 15 levels)`.
pub fn capacity_line(r: &CapacityResult) -> String {
    let slo: Vec<&str> = r.slo.iter().map(|t| t.text()).collect();
    let verdict = r.verdict.as_str();
    format!(
        "{} under {} ({verdict}{}, {} levels)",
        match (r.capacity_rps, r.lower_bound_rps) {
            (Some(c), _) => format!("{c:.0} req/s"),
            (None, Some(b)) => format!("at least {b:.0} req/s"),
            (None, None) => "no rate".to_string(),
        },
        slo.join(", "),
        if r.unstable { ", unstable" } else { "" },
        r.levels.len() + r.curve.len()
    )
}

/// `go-nethttp: built in 12.3 s`, `go-nethttp: up to date`.
pub fn built_line(target: &str, build_s: Option<f64>) -> String {
    match build_s {
        Some(s) => format!("{target}: built in {s:.1} s"),
        None => format!("{target}: up to date"),
    }
}

/// `search 8000 req/s · bracket [6000, 9000)`: the level being tried.
pub fn search_line(e: &SearchEvent) -> String {
    let SearchEvent::LevelStarting {
        phase,
        target_rps: rate,
        bracket,
        ..
    } = e
    else {
        return String::new();
    };
    let bound = |b: &Option<f64>| b.map_or("?".to_string(), |v| format!("{v:.0}"));
    let phase = match phase {
        SearchPhase::Probe => "probe",
        SearchPhase::Search => "search",
        SearchPhase::Confirm => "confirm",
        SearchPhase::Curve => "curve",
    };
    format!(
        "{phase} {rate:.0} req/s · bracket [{}, {})",
        bound(&bracket.0),
        bound(&bracket.1)
    )
}

/// `PostgreSQL 15.14 ready: pinned to CPUs [0] (shared with the servers), DB_POOL_SIZE=4`.
pub fn database_line(e: DatabaseEvent<'_>) -> String {
    match e {
        DatabaseEvent::Starting => "starting PostgreSQL for the database scenarios".into(),
        DatabaseEvent::Started {
            version,
            cpus,
            pool_size,
            shares_server_cpus,
        } => format!(
            "PostgreSQL {version} ready: {}, DB_POOL_SIZE={pool_size}",
            match (cpus.is_empty(), shares_server_cpus) {
                (true, _) => "not pinned".to_string(),
                (false, true) => format!("on CPUs {cpus:?}, shared with the servers"),
                (false, false) => format!("on CPUs {cpus:?}"),
            }
        ),
        DatabaseEvent::Unavailable {
            reason,
            skipped_scenarios,
        } => format!("skipping {skipped_scenarios} database scenario(s): {reason}"),
    }
}

/// `go-nethttp: verified (built in 12.3 s)`, `x: build failed: ...`.
pub fn prepared_line(target: &str, outcome: Prepared<'_>) -> String {
    match outcome {
        Prepared::Unusable { status, reason } => format!("{target}: {status} ({reason})"),
        Prepared::Skipped { reason } => format!("{target}: skipped ({reason})"),
        Prepared::BuildFailed { reason } => format!("{target}: build failed: {reason}"),
        Prepared::Verified { build_s } => format!(
            "{target}: verified{}",
            build_s.map_or(String::new(), |s| format!(" (built in {s:.1} s)"))
        ),
        Prepared::Failed { status, reason } => format!("{target}: {status}: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::measurement_line;
    use shootout_report_fixtures::ws::sample;

    #[test]
    fn an_echo_counts_messages() {
        let line = measurement_line(&sample(None));
        assert!(line.starts_with("28000 msg/s, p99 "), "{line}");
    }

    #[test]
    fn a_hold_says_what_it_held_and_its_handshakes() {
        let mut m = sample(Some(950));
        m.summary.latency_ms.p99 = 6422.53;
        let line = measurement_line(&m);
        assert!(
            line.starts_with("950/1000 held, 13.0 KiB each, handshake p99 6423 ms, 0 errors"),
            "{line}"
        );
        assert!(!line.contains("req/s"), "{line}");
    }
}
