//! The cluster record read from kubectl's JSON (hand-written in the exact
//! shape Kubernetes v1.34 prints, `tests/kubectl/`), its errors, and its
//! storage: written, read back, and absent from local runs and from
//! databases of older schemas.

use super::*;
use crate::tests::{measurement, new_run, TempDb};
use crate::{schema, Store, StoreError, SCHEMA_VERSION};
use serde_json::json;

const VERSION: &str = include_str!("../tests/kubectl/version-v1.34.json");
const NODES: &str = include_str!("../tests/kubectl/nodes-v1.34.json");

fn parse(version: &str, nodes: &str) -> Result<ClusterRecord, ClusterParseError> {
    ClusterRecord::from_kubectl(version, nodes, "shootout-local", "shootout")
}

/// The nodes fixture with `edit` applied to its JSON.
fn nodes_with(edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(NODES).expect("fixture");
    edit(&mut v);
    v.to_string()
}

fn two_nodes() -> ClusterRecord {
    parse(VERSION, NODES).expect("the v1.34 fixture parses")
}

#[test]
fn reads_the_server_version_and_every_node_of_kubectl_v1_34() {
    let c = two_nodes();
    let node = |name: &str, address: &str, role: &str, model: Option<&str>| NodeRecord {
        name: name.into(),
        address: address.into(),
        roles: vec![role.into()],
        cpus: 2,
        cpu_model: model.map(str::to_string),
        kubelet_version: "v1.34.4".into(),
        os_image: "Debian GNU/Linux 12 (bookworm)".into(),
        kernel: "6.18.44-fc-v782".into(),
        container_runtime: "containerd://1.6.20".into(),
    };
    assert_eq!(
        c,
        ClusterRecord {
            server_version: "v1.34.4".into(),
            context: "shootout-local".into(),
            namespace: "shootout".into(),
            nodes: vec![
                node("127.0.0.1", "127.0.0.1", "client", Some("AMD-EPYC")),
                node("127.0.0.2", "127.0.0.2", "server", None),
            ],
            generators: Vec::new(),
        }
    );
    assert_eq!(
        c.node("127.0.0.2").map(|n| n.roles.clone()),
        Some(vec!["server".into()])
    );
    let servers: Vec<&str> = c.nodes_with("server").map(|n| n.name.as_str()).collect();
    assert_eq!(servers, ["127.0.0.2"]);
    // `kubectl get node NAME -o json` prints one node, not a list.
    let one = nodes_with(|v| *v = v["items"][1].clone());
    assert_eq!(parse(VERSION, &one).expect("one node").nodes, c.nodes[1..]);
}

/// Every field a node record needs, taken away in turn, is named with
/// its node in the error.
#[test]
fn a_missing_field_names_the_node_and_the_field() {
    for (path, field) in [
        (
            "/status/nodeInfo/kubeletVersion",
            "status.nodeInfo.kubeletVersion",
        ),
        ("/status/nodeInfo/osImage", "status.nodeInfo.osImage"),
        (
            "/status/nodeInfo/kernelVersion",
            "status.nodeInfo.kernelVersion",
        ),
        (
            "/status/nodeInfo/containerRuntimeVersion",
            "status.nodeInfo.containerRuntimeVersion",
        ),
        ("/status/capacity/cpu", "status.capacity.cpu"),
        ("/status/addresses", "status.addresses[type=InternalIP]"),
    ] {
        let (parent, key) = path.rsplit_once('/').expect("a path");
        let nodes = nodes_with(|v| {
            let obj = v["items"][1].pointer_mut(parent).expect(parent);
            obj.as_object_mut().expect("an object").remove(key);
        });
        let e = parse(VERSION, &nodes).expect_err(field);
        assert_eq!(
            e.to_string(),
            format!("node 127.0.0.2: {field} is missing from `kubectl get nodes -o json`")
        );
    }
    // Addresses without an InternalIP (a Hostname only).
    let nodes = nodes_with(|v| {
        v["items"][0]["status"]["addresses"] = json!([{"address": "n1", "type": "Hostname"}]);
    });
    let e = parse(VERSION, &nodes).expect_err("no InternalIP");
    assert!(
        e.to_string()
            .starts_with("node 127.0.0.1: status.addresses[type=InternalIP]"),
        "{e}"
    );
    let nodes = nodes_with(|v| {
        v["items"][1]["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("name");
    });
    let e = parse(VERSION, &nodes).expect_err("no name");
    assert!(
        e.to_string()
            .starts_with("node #2 of the list: metadata.name"),
        "{e}"
    );
}

#[test]
fn what_is_not_a_cluster_is_said_so() {
    // kubectl without a reachable server prints the client's version only.
    let client_only =
        r#"{"clientVersion": {"gitVersion": "v1.34.4"}, "kustomizeVersion": "v5.7.1"}"#;
    let e = parse(client_only, NODES).expect_err("no server");
    assert!(
        e.to_string()
            .starts_with("the output of `kubectl version -o json` has no serverVersion.gitVersion"),
        "{e}"
    );
    let e = parse(
        VERSION,
        "error: the server doesn't have a resource type \"nodes\"",
    )
    .expect_err("not JSON");
    assert!(
        e.to_string()
            .starts_with("the output of `kubectl get nodes -o json` is not JSON"),
        "{e}"
    );
    let empty =
        r#"{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}"#;
    assert_eq!(
        parse(VERSION, empty).expect_err("no node").to_string(),
        "`kubectl get nodes -o json` lists no node"
    );
    let e = parse(VERSION, r#"{"kind": "List"}"#).expect_err("no items");
    assert_eq!(
        e.to_string(),
        "the output of `kubectl get nodes -o json` has no items"
    );
}

/// A node carries several roles as one label value (`server_client_db`)
/// or as `shootout.dev/role-<role>` keys; either way `server`, `client`,
/// `db` come first, once each. A node without a role label has none.
#[test]
fn a_node_may_carry_several_roles() {
    let nodes = nodes_with(|v| {
        let labels = &mut v["items"][0]["metadata"]["labels"];
        labels[ROLE_LABEL] = json!("db_client.server");
        labels["shootout.dev/role-client"] = json!("true");
        labels["shootout.dev/role-gpu"] = json!("");
        labels["shootout.dev/role-spare"] = json!("false");
        let second = v["items"][1]["metadata"]["labels"]
            .as_object_mut()
            .expect("labels");
        second.remove(ROLE_LABEL);
        second.insert("shootout.dev/role-db".into(), json!("true"));
    });
    let c = parse(VERSION, &nodes).expect("parses");
    assert_eq!(c.nodes[0].roles, ["server", "client", "db", "gpu"]);
    assert_eq!(c.nodes[1].roles, ["db"]);
    let none = nodes_with(|v| {
        let labels = v["items"][1]["metadata"]["labels"]
            .as_object_mut()
            .expect("labels");
        labels.remove(ROLE_LABEL);
    });
    assert!(parse(VERSION, &none).expect("parses").nodes[1]
        .roles
        .is_empty());
}

#[test]
fn cpus_are_whole_cpus_in_either_notation() {
    let with_cpu = |q: &str| nodes_with(|v| v["items"][1]["status"]["capacity"]["cpu"] = json!(q));
    assert_eq!(
        parse(VERSION, &with_cpu("4000m")).expect("4000m").nodes[1].cpus,
        4
    );
    assert_eq!(
        parse(VERSION, &with_cpu("64")).expect("64").nodes[1].cpus,
        64
    );
    let e = parse(VERSION, &with_cpu("1500m")).expect_err("a fraction");
    assert_eq!(
        e.to_string(),
        "node 127.0.0.2: status.capacity.cpu is \"1500m\", not a whole number of CPUs"
    );
}

/// The cluster and the placements are written and read back; a local run
/// has neither, and its serialised record has no `cluster` key.
#[test]
fn a_runs_cluster_and_placements_round_trip() {
    let tmp = TempDb::new("cluster");
    let store = Store::open(tmp.path()).expect("open");
    let id = store.begin_run(&new_run()).expect("run");
    let local = store.begin_run(&new_run()).expect("local run");
    store.record_cluster(id, &two_nodes()).expect("cluster");
    for rep in 0..2 {
        let mut m = measurement("go-nethttp", rep, &[100]);
        store.record_measurement(id, &m).expect("measurement");
        m.scenario = "json".into();
        store.record_measurement(id, &m).expect("measurement");
    }
    let at = |scenario: &str, repetition, node: &str| Placement {
        target: "go-nethttp".into(),
        scenario: scenario.into(),
        repetition,
        node: node.into(),
    };
    store
        .record_placement(id, &at("plaintext", 0, "127.0.0.1"))
        .expect("placement");
    // Recorded again (a start retried): the last one stands.
    store
        .record_placement(id, &at("plaintext", 0, "127.0.0.2"))
        .expect("placement");
    store
        .record_placement(id, &at("json", 1, "127.0.0.2"))
        .expect("placement");
    let data = store.load_run(id).expect("load");
    assert_eq!(data.run.cluster, Some(two_nodes()));
    assert_eq!(
        data.placements,
        [at("json", 1, "127.0.0.2"), at("plaintext", 0, "127.0.0.2")]
    );
    let nodes: Vec<Option<&str>> = data
        .measurements
        .iter()
        .map(|m| data.placement(m))
        .collect();
    // Ordered by scenario then repetition: json 0, json 1, plaintext 0, plaintext 1.
    assert_eq!(nodes, [None, Some("127.0.0.2"), Some("127.0.0.2"), None]);
    assert_eq!(
        store.load_run_figures(id).expect("figures").placements,
        data.placements
    );
    let local = store.load_run(local).expect("local");
    assert_eq!(local.run.cluster, None);
    assert!(local.placements.is_empty());
    let json = serde_json::to_value(&local).expect("json");
    assert!(json["run"].get("cluster").is_none() && json.get("placements").is_none());
    let e = store
        .record_cluster(999, &two_nodes())
        .expect_err("no run 999");
    assert!(matches!(e, StoreError::NoSuchRun(_)), "{e}");
}

/// A database of schema 12 (before the cluster) migrates: its run reads
/// as a local one, and a new run keeps its cluster.
#[test]
fn migrates_a_version_12_database() {
    let tmp = TempDb::new("v12");
    std::fs::create_dir_all(tmp.path().parent().expect("parent")).expect("dir");
    {
        let conn = Connection::open(tmp.path()).expect("open");
        for (i, sql) in schema::MIGRATIONS[..12].iter().enumerate() {
            conn.execute_batch(sql).expect("migration");
            conn.execute(
                "INSERT INTO schema_version (version, applied_at) VALUES (?1, 'then')",
                [i as i64 + 1],
            )
            .expect("version");
        }
        conn.pragma_update(None, "user_version", 12)
            .expect("pragma");
        conn.execute(crate::tests::OLD_RUN, []).expect("run");
    }
    let store = Store::open_existing(tmp.path()).expect("migrated by a reader");
    assert_eq!(store.schema_version().expect("version"), SCHEMA_VERSION);
    let old = store.load_run(1).expect("old run");
    assert_eq!(old.run.cluster, None);
    assert!(old.placements.is_empty());
    drop(store);
    let store = Store::open(tmp.path()).expect("open");
    let id = store.begin_run(&new_run()).expect("new run");
    store.record_cluster(id, &two_nodes()).expect("cluster");
    assert_eq!(
        store.load_run(id).expect("load").run.cluster,
        Some(two_nodes())
    );
}

/// Output captured from the local cluster (`local-cluster.sh up`, API
/// server v1.34.4 built from source, kubectl 1.32) on 2026-11-29, its one
/// node labelled `shootout.dev/role-db=true` by `dbcheck.sh`.
#[test]
fn reads_the_output_of_the_local_cluster() {
    let c = ClusterRecord::from_kubectl(
        include_str!("../tests/kubectl/captured-version.json"),
        include_str!("../tests/kubectl/captured-nodes.json"),
        "local",
        "default",
    )
    .expect("parses");
    assert_eq!(c.server_version, "v1.34.4");
    assert_eq!(c.nodes.len(), 1);
    let n = &c.nodes[0];
    assert_eq!(
        (n.name.as_str(), n.address.as_str()),
        ("127.0.0.1", "127.0.0.1")
    );
    assert_eq!(
        (n.roles.clone(), n.cpus, n.cpu_model.clone()),
        (vec!["db".to_string()], 2, None)
    );
    assert_eq!(
        [
            &n.kubelet_version,
            &n.os_image,
            &n.kernel,
            &n.container_runtime
        ],
        [
            "v1.34.4",
            "Debian GNU/Linux 12 (bookworm)",
            "6.18.44-fc-v782",
            "containerd://1.6.20"
        ]
    );
}
