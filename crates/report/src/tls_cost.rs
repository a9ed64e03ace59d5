//! The TLS cost of each target: where a scenario has the same load in
//! cleartext and over TLS (or mutual TLS), the target's rps over TLS
//! divided by its rps in cleartext (1.00× costs nothing, 0.50× halves it)
//! and its p99 over TLS divided by its p99 in cleartext, each with the 95%
//! interval of [`crate::ranking::ratio`] (the rule of every ratio in the
//! reports) when both sides have repetitions. Two levels carry "the same
//! load" when the stored study defines them alike but for the protocol
//! (and `tls_resume`): same workload, keep-alive, pipelining, queries and
//! budget. The Markdown and HTML reports show these rows as a table after
//! the findings, which name the largest and the smallest cost.

use crate::group::{Column, Group};
use crate::metric::Metric;
use crate::ranking::{ratio, Ratio};
use crate::stats::Spread;
use shootout_contract::protocol::Protocol;
use shootout_study::Level;

/// One target's cost at one TLS level.
#[derive(Debug, Clone)]
pub struct TlsCost {
    pub scenario: String,
    /// The TLS level's protocol label (`TLS 1.3`, `mTLS 1.3, new
    /// connections, full handshakes`).
    pub protocol: String,
    /// The cleartext level's label (`c=64 3s`): the load both carried.
    pub load: String,
    pub target: String,
    pub clear_rps: Spread,
    pub tls_rps: Spread,
    /// rps over TLS / rps in cleartext.
    pub rps: Ratio,
    pub clear_p99: Option<Spread>,
    pub tls_p99: Option<Spread>,
    /// p99 over TLS / p99 in cleartext; None where either has none.
    pub p99: Option<Ratio>,
}

/// Every target's cost at every TLS level that has a cleartext twin, in
/// the groups' order, targets in the run's order.
pub fn costs(groups: &[Group]) -> Vec<TlsCost> {
    let mut out = Vec::new();
    for tls in groups {
        let Some(clear) = twin(groups, tls) else {
            continue;
        };
        for t in &tls.columns {
            let Some(c) = clear.columns.iter().find(|c| c.target == t.target) else {
                continue;
            };
            out.extend(cost(clear, tls, c, t));
        }
    }
    out
}

/// The cleartext group of the same scenario and load as `tls`, if any.
fn twin<'g, 'a>(groups: &'g [Group<'a>], tls: &Group<'a>) -> Option<&'g Group<'a>> {
    let spec = tls.spec.as_ref().filter(|l| l.protocol.is_tls())?;
    groups.iter().find(|g| {
        g.scenario == tls.scenario
            && g.spec
                .as_ref()
                .is_some_and(|c| !c.protocol.is_tls() && same_load(c, spec))
    })
}

/// True when `clear` and `tls` differ in nothing but their transport.
fn same_load(clear: &Level, tls: &Level) -> bool {
    let as_clear = Level {
        label: clear.label.clone(),
        protocol: Protocol::Http1,
        tls_resume: false,
        ..tls.clone()
    };
    &as_clear == clear
}

fn cost(clear: &Group, tls: &Group, c: &Column, t: &Column) -> Option<TlsCost> {
    let (clear_rps, tls_rps) = (c.spread(Metric::Rps)?, t.spread(Metric::Rps)?);
    let (clear_p99, tls_p99) = (c.spread(Metric::P99), t.spread(Metric::P99));
    let p99 = match (&clear_p99, &tls_p99) {
        (Some(cp), Some(tp)) if cp.median > 0.0 => Some(ratio(cp, tp, false)),
        _ => None,
    };
    (clear_rps.median > 0.0).then(|| TlsCost {
        scenario: tls.scenario.to_string(),
        protocol: tls.protocol.clone().unwrap_or_else(|| "TLS".into()),
        load: clear.level_label.to_string(),
        target: t.target.to_string(),
        clear_rps,
        tls_rps,
        rps: ratio(&tls_rps, &clear_rps, true),
        clear_p99,
        tls_p99,
        p99,
    })
}

/// The findings' sentence: the largest and the smallest TLS cost (the
/// lowest and highest rps ratio); None without any.
pub fn finding(costs: &[TlsCost]) -> Option<String> {
    let by_ratio = |a: &&TlsCost, b: &&TlsCost| a.rps.value.total_cmp(&b.rps.value);
    let most = costs.iter().min_by(by_ratio)?;
    let least = costs.iter().max_by(by_ratio)?;
    let at = |c: &TlsCost| {
        format!(
            "{} in {} · {} ({} of its cleartext req/s)",
            c.target,
            c.scenario,
            c.protocol,
            crate::ranking::ratio_text(&c.rps)
        )
    };
    Some(if costs.len() == 1 {
        format!(
            "TLS cost (req/s over TLS ÷ req/s in cleartext, same load): {}.",
            at(most)
        )
    } else {
        format!(
            "TLS cost (req/s over TLS ÷ req/s in cleartext, same load): largest for {}; \
             smallest for {}.",
            at(most),
            at(least)
        )
    })
}

/// What the table's columns mean, said under it in both formats.
pub const NOTE: &str = "RPS ratio: the target's req/s over TLS divided by its req/s in \
    cleartext at the same load (1.00× costs nothing, 0.50× halves it); p99 ratio: its p99 \
    latency over TLS divided by its p99 in cleartext (above 1.00× is slower). Medians over \
    the repetitions; the 95% interval in brackets from two repetitions on.";

/// The table's header cells.
pub const HEADER: [&str; 9] = [
    "Scenario",
    "Protocol",
    "Load",
    "Target",
    "RPS cleartext (req/s)",
    "RPS over TLS (req/s)",
    "RPS ratio",
    "p99 cleartext → over TLS (ms)",
    "p99 ratio",
];

/// A row's cells, in [`HEADER`]'s order.
pub fn cells(c: &TlsCost) -> [String; 9] {
    use crate::metric::num;
    let p99 = match (&c.clear_p99, &c.tls_p99) {
        (Some(a), Some(b)) => format!("{} → {}", num(a.median), num(b.median)),
        _ => "—".into(),
    };
    [
        c.scenario.clone(),
        c.protocol.clone(),
        c.load.clone(),
        c.target.clone(),
        num(c.clear_rps.median),
        num(c.tls_rps.median),
        crate::ranking::ratio_text(&c.rps),
        p99,
        c.p99
            .as_ref()
            .map_or("—".into(), crate::ranking::ratio_text),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::groups;

    /// The tls-shaped fixture run in a folder of its own per test (`tag`),
    /// since tests run in parallel.
    fn tls_run(tag: &str) -> (shootout_store::RunData, std::path::PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("shootout-tls-cost-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let db = dir.join("t.db");
        let id =
            shootout_report_fixtures::tls::write_tls_run(&db).unwrap_or_else(|e| panic!("{e}"));
        let store = shootout_store::Store::open(&db).unwrap_or_else(|e| panic!("{e}"));
        (store.load_run(id).unwrap_or_else(|e| panic!("{e}")), dir)
    }

    #[test]
    fn every_tls_level_with_a_cleartext_twin_has_a_cost_per_target() {
        let (data, dir) = tls_run("every");
        let all = groups(&data);
        let costs = costs(&all);
        let _ = std::fs::remove_dir_all(dir);
        let keys: Vec<(&str, &str, &str)> = costs
            .iter()
            .map(|c| (c.scenario.as_str(), c.protocol.as_str(), c.target.as_str()))
            .collect();
        // plaintext: keep-alive TLS, then the two new-connection TLS levels
        // beside cleartext new connections; json: keep-alive TLS.
        assert_eq!(
            keys,
            [
                ("plaintext", "TLS 1.3", "go-nethttp"),
                ("plaintext", "TLS 1.3", "rust-axum"),
                (
                    "plaintext",
                    "TLS 1.3, new connections, full handshakes",
                    "go-nethttp"
                ),
                (
                    "plaintext",
                    "TLS 1.3, new connections, full handshakes",
                    "rust-axum"
                ),
                (
                    "plaintext",
                    "TLS 1.3, new connections, resumed",
                    "go-nethttp"
                ),
                (
                    "plaintext",
                    "TLS 1.3, new connections, resumed",
                    "rust-axum"
                ),
                ("json", "TLS 1.3", "go-nethttp"),
                ("json", "TLS 1.3", "rust-axum"),
            ]
        );
        assert_eq!(costs[0].load, "c=64 3s");
        assert_eq!(costs[2].load, "c=16 3s");
        for c in &costs {
            let kept = if c.target == "go-nethttp" { 0.60 } else { 0.85 };
            assert!((c.rps.value - kept).abs() < 0.05, "{c:?}");
            let (lo, hi) = c.rps.ci.expect("three repetitions give an interval");
            assert!(lo < c.rps.value && c.rps.value < hi, "{c:?}");
            assert!(c.p99.is_some(), "{c:?}");
        }
        let line = finding(&costs).expect("a finding");
        assert!(line.contains("largest for go-nethttp"), "{line}");
        assert!(line.contains("smallest for rust-axum"), "{line}");
    }

    #[test]
    fn a_level_with_another_load_or_no_study_has_no_twin() {
        let (data, dir) = tls_run("twin");
        let mut all = groups(&data);
        let _ = std::fs::remove_dir_all(dir);
        // The json cleartext level at another connection count: no twin.
        for g in all.iter_mut().filter(|g| g.scenario == "json") {
            if let Some(spec) = g.spec.as_mut().filter(|l| !l.protocol.is_tls()) {
                spec.keepalive = false;
            }
        }
        let costs_now = costs(&all);
        assert!(costs_now.iter().all(|c| c.scenario == "plaintext"));
        assert_eq!(costs_now.len(), 6);
        // Without the stored study nothing is paired.
        for g in &mut all {
            g.spec = None;
        }
        assert!(costs(&all).is_empty());
        assert_eq!(finding(&[]), None);
    }
}
