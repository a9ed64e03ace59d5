//! The "Cluster" section of a run made on Kubernetes: the API server's
//! version, the context and namespace, a table of the nodes (address,
//! roles, CPUs, CPU model or "not reported", kubelet, OS, kernel,
//! container runtime), and which node ran each target's servers, one row
//! per target and node with the starts it ran there
//! (`shootout_store::ClusterRecord`, `Placement`). Markdown, HTML and JSON
//! all read these functions; a local run has no cluster and no
//! placements, gets nothing from here, and its reports are unchanged.

use serde_json::{json, Value};
use shootout_store::{ClusterRecord, Measurement, NodeRecord, RunData};
use std::collections::BTreeSet;

/// The nodes table's header.
pub const NODE_HEADER: [&str; 9] = [
    "Node",
    "Address",
    "Roles",
    "CPUs",
    "CPU model",
    "Kubelet",
    "OS",
    "Kernel",
    "Runtime",
];

/// The placement table's header.
pub const PLACEMENT_HEADER: [&str; 3] = ["Target", "Server node", "Starts"];

/// What a node without the CPU-model label shows.
pub const NOT_REPORTED: &str = "not reported";

/// What a start with no recorded node shows in the node column.
pub const NOT_RECORDED: &str = "not recorded";

/// Where a cluster run's server columns came from (the runner's
/// `place/kubelet.rs` says how they are read).
pub const SOURCES: &str = "On Kubernetes, the server columns RSS (idle, peak, after), \
Server CPU and Req per CPU-s come from each pod's cgroup as its node's kubelet reports them \
(its Summary API); PSS, the cgroup's memory high-water mark, CPU throttling and OOM kills are \
not available there and are left empty, never written as zero. Latency, throughput and errors \
are the generator's, as in a local run.";

/// Whether the run has anything for this section.
pub fn present(data: &RunData) -> bool {
    data.run.cluster.is_some() || !data.placements.is_empty()
}

/// `Kubernetes v1.34.4 · context kind-shootout · namespace shootout · 2
/// nodes · load from 2 generator pods on 127.0.0.1, 127.0.0.3`.
pub fn line(c: &ClusterRecord) -> String {
    format!(
        "Kubernetes {} · context {} · namespace {} · {} node{} · {}",
        c.server_version,
        c.context,
        c.namespace,
        c.nodes.len(),
        if c.nodes.len() == 1 { "" } else { "s" },
        load_line(c)
    )
}

/// Where the run's load was generated.
pub fn load_line(c: &ClusterRecord) -> String {
    match c.generators.as_slice() {
        [] => "load from the shootout process".into(),
        [one] => format!("load from 1 generator pod on {one}"),
        all => format!(
            "load from {} generator pods on {}",
            all.len(),
            all.join(", ")
        ),
    }
}

/// One row per node, in [`NODE_HEADER`]'s order.
pub fn node_rows(c: &ClusterRecord) -> Vec<[String; 9]> {
    c.nodes.iter().map(node_row).collect()
}

fn node_row(n: &NodeRecord) -> [String; 9] {
    [
        n.name.clone(),
        n.address.clone(),
        if n.roles.is_empty() {
            "none".into()
        } else {
            n.roles.join(", ")
        },
        n.cpus.to_string(),
        n.cpu_model.clone().unwrap_or_else(|| NOT_REPORTED.into()),
        n.kubelet_version.clone(),
        n.os_image.clone(),
        n.kernel.clone(),
        n.container_runtime.clone(),
    ]
}

/// A start: (scenario, 0-based repetition).
type Start<'a> = (&'a str, u32);

/// One row per target and node (targets in the report's order, nodes in
/// the order of their first start): [target, node, starts]. Starts
/// measured without a recorded node are a row of their own, with
/// [`NOT_RECORDED`] for the node.
pub fn placement_rows(data: &RunData) -> Vec<[String; 3]> {
    let mut rows = Vec::new();
    for target in crate::group::target_order(data) {
        let mut starts: BTreeSet<(u32, &str)> = data
            .measurements
            .iter()
            .filter(|m| m.target == target)
            .map(|m| (m.repetition, m.scenario.as_str()))
            .collect();
        starts.extend(
            data.placements
                .iter()
                .filter(|p| p.target == target)
                .map(|p| (p.repetition, p.scenario.as_str())),
        );
        let node_of = |(rep, scenario): (u32, &str)| {
            data.placements
                .iter()
                .find(|p| p.target == target && p.scenario == scenario && p.repetition == rep)
                .map_or(NOT_RECORDED, |p| p.node.as_str())
        };
        let scenarios: BTreeSet<&str> = starts.iter().map(|(_, s)| *s).collect();
        let mut nodes: Vec<(&str, Vec<Start<'_>>)> = Vec::new();
        for &(rep, scenario) in &starts {
            let node = node_of((rep, scenario));
            match nodes.iter_mut().find(|(n, _)| *n == node) {
                Some((_, s)) => s.push((scenario, rep)),
                None => nodes.push((node, vec![(scenario, rep)])),
            }
        }
        for (node, on) in nodes {
            rows.push([
                target.to_string(),
                node.to_string(),
                starts_text(&on, &scenarios),
            ]);
        }
    }
    rows
}

/// `repetitions 1–3` when the node ran every scenario of those
/// repetitions, else per scenario: `json: repetitions 1–2; plaintext:
/// repetition 3`.
fn starts_text(on: &[Start<'_>], scenarios: &BTreeSet<&str>) -> String {
    let reps: BTreeSet<u32> = on.iter().map(|(_, r)| *r).collect();
    if on.len() == reps.len() * scenarios.len() {
        return repetitions(&reps);
    }
    let mut by_scenario: Vec<(&str, BTreeSet<u32>)> = Vec::new();
    for &(s, r) in on {
        match by_scenario.iter_mut().find(|(n, _)| *n == s) {
            Some((_, reps)) => {
                reps.insert(r);
            }
            None => by_scenario.push((s, BTreeSet::from([r]))),
        }
    }
    by_scenario.sort_by(|a, b| a.0.cmp(b.0));
    by_scenario
        .iter()
        .map(|(s, reps)| format!("{s}: {}", repetitions(reps)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `repetition 2`, `repetitions 1–3`, `repetitions 1, 3–4` (1-based).
fn repetitions(reps: &BTreeSet<u32>) -> String {
    let mut spans: Vec<(u32, u32)> = Vec::new();
    for &r in reps {
        match spans.last_mut() {
            Some((_, end)) if *end + 1 == r => *end = r,
            _ => spans.push((r, r)),
        }
    }
    let text: Vec<String> = spans
        .iter()
        .map(|&(a, b)| {
            if a == b {
                (a + 1).to_string()
            } else {
                format!("{}–{}", a + 1, b + 1)
            }
        })
        .collect();
    let word = if reps.len() == 1 {
        "repetition"
    } else {
        "repetitions"
    };
    format!("{word} {}", text.join(", "))
}

/// The JSON report's `run.cluster`: the record as stored.
pub fn json(c: &ClusterRecord) -> Value {
    serde_json::to_value(c).unwrap_or(Value::Null)
}

/// A result's `placement`, for runs with this section: the node that ran
/// its start's server, or null when none was recorded.
pub fn result_json(data: &RunData, m: &Measurement) -> Value {
    data.placement(m).map_or(Value::Null, |n| json!(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_is_said_from_where_it_ran() {
        let mut c = shootout_report_fixtures::cluster::cluster_record();
        assert_eq!(load_line(&c), "load from the shootout process");
        c.generators = vec!["127.0.0.1".into()];
        assert_eq!(load_line(&c), "load from 1 generator pod on 127.0.0.1");
        c.generators.push("127.0.0.3".into());
        assert!(line(&c).ends_with("· load from 2 generator pods on 127.0.0.1, 127.0.0.3"));
    }

    #[test]
    fn repetitions_are_said_as_one_based_spans() {
        let said = |r: &[u32]| repetitions(&r.iter().copied().collect());
        assert_eq!(said(&[1]), "repetition 2");
        assert_eq!(said(&[0, 1, 2]), "repetitions 1–3");
        assert_eq!(said(&[0, 2, 3]), "repetitions 1, 3–4");
    }

    #[test]
    fn a_node_that_ran_some_scenarios_of_a_repetition_names_them() {
        let all = BTreeSet::from(["json", "plaintext"]);
        let whole = [("json", 0), ("plaintext", 0), ("json", 1), ("plaintext", 1)];
        assert_eq!(starts_text(&whole, &all), "repetitions 1–2");
        let part = [("json", 0), ("json", 1), ("plaintext", 2)];
        assert_eq!(
            starts_text(&part, &all),
            "json: repetitions 1–2; plaintext: repetition 3"
        );
    }
}
