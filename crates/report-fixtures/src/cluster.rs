//! A deterministic run made on a two-node Kubernetes cluster (the layout
//! of `deploy/kubernetes/second-node.sh`: the client node 127.0.0.1, which
//! reports its CPU model, and the server node 127.0.0.2, which does not),
//! for the report's Cluster section: two targets, two scenarios, three
//! repetitions. go-nethttp's servers all ran on the server node;
//! rust-actix's first two repetitions did, its third json start ran on
//! the client node and its third plaintext start has no recorded node.

use crate::{measurement, new_run, target_record, Rng};
use shootout_store::{
    ClusterRecord, NodeRecord, Placement, RunStatus, Store, StoreError, TargetStatus,
};
use std::path::Path;

/// The study text of the run.
pub const STUDY_TEXT: &str = r#"name = "kube-duo"
description = "A synthetic run on a two-node Kubernetes cluster."
source = "a synthetic fixture"
targets = ["go-nethttp", "rust-actix"]
repetitions = 3

[[scenario]]
name = "plaintext"
load = { connections = 64, duration = "3s" }

[[scenario]]
name = "json"
load = { connections = 64, duration = "3s" }
"#;

/// The server node's name.
pub const SERVER_NODE: &str = "127.0.0.2";

/// The client node's name.
pub const CLIENT_NODE: &str = "127.0.0.1";

/// The cluster of the run.
pub fn cluster_record() -> ClusterRecord {
    let node = |name: &str, role: &str, cpu_model: Option<&str>| NodeRecord {
        name: name.into(),
        address: name.into(),
        roles: vec![role.into()],
        cpus: 2,
        cpu_model: cpu_model.map(str::to_string),
        kubelet_version: "v1.34.4".into(),
        os_image: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.18.44-fc-v782".into(),
        container_runtime: "containerd://1.6.20".into(),
    };
    ClusterRecord {
        server_version: "v1.34.4".into(),
        context: "shootout-local".into(),
        namespace: "shootout-run".into(),
        nodes: vec![
            node(CLIENT_NODE, "client", Some("AMD-EPYC")),
            node(SERVER_NODE, "server", None),
        ],
        generators: Vec::new(),
    }
}

/// (target, plaintext req/s).
const TARGETS: [(&str, f64); 2] = [("go-nethttp", 70_000.0), ("rust-actix", 90_000.0)];

/// The node that ran a start's server, None when it was not recorded.
fn node_of(target: &str, scenario: &str, rep: u32) -> Option<&'static str> {
    match (target, scenario, rep) {
        ("rust-actix", "json", 2) => Some(CLIENT_NODE),
        ("rust-actix", "plaintext", 2) => None,
        _ => Some(SERVER_NODE),
    }
}

/// Writes the run into the database at `path` and returns its id.
pub fn write_cluster_run(path: &Path) -> Result<i64, StoreError> {
    let store = Store::open(path)?;
    let mut header = new_run();
    header.study = "kube-duo".into();
    header.study_text = STUDY_TEXT.into();
    let id = store.begin_run(&header)?;
    store.record_cluster(id, &cluster_record())?;
    let mut rng = Rng(5050);
    for (target, base) in TARGETS {
        let framework = target.split('-').nth(1).unwrap_or(target);
        store.record_target(id, &target_record(target, framework, TargetStatus::Ok))?;
        for rep in 0..3 {
            for (scenario, share) in [("plaintext", 1.0), ("json", 0.8)] {
                let rps = base * share * (1.0 + 0.01 * rng.noise());
                let m = measurement(target, scenario, 0, "c=64 3s", rep, rps, false, &mut rng);
                store.record_measurement(id, &m)?;
                if let Some(node) = node_of(target, scenario, rep) {
                    store.record_placement(
                        id,
                        &Placement {
                            target: target.into(),
                            scenario: scenario.into(),
                            repetition: rep,
                            node: node.into(),
                        },
                    )?;
                }
            }
        }
    }
    store.finish_run(id, RunStatus::Complete)?;
    Ok(id)
}
