//! The Kubernetes cluster a run used ([`ClusterRecord`]: the API server's
//! version, the context and namespace, every node with its roles, CPUs and
//! CPU model) and which node ran the server of each start
//! ([`Placement`]). Read from `kubectl version -o json` and `kubectl get
//! nodes -o json` by [`ClusterRecord::from_kubectl`], a pure function, so
//! that the runner only runs kubectl and the parsing is tested on its
//! output. Stored as JSON in `runs.cluster` and rows of `placements`
//! (migration 13); a local run has neither.

use crate::error::Result;
use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The node label whose value names a node's roles (`server`, `client`,
/// `db`): one, or several joined by `_` or `.` (label values allow
/// neither a comma nor a space), e.g. `server_client_db` on a one-node
/// cluster.
pub const ROLE_LABEL: &str = "shootout.dev/role";

/// A label key `shootout.dev/role-<role>` (any value but `false`) also
/// gives its node the role, so that a node with several roles can be
/// chosen by a plain nodeSelector (`shootout.dev/role-server: "true"`).
pub const ROLE_LABEL_PREFIX: &str = "shootout.dev/role-";

/// The node label naming its CPU model, when the node reports one (label
/// values have no spaces: `AMD-EPYC-7B13`).
pub const CPU_MODEL_LABEL: &str = "shootout.dev/cpu-model";

/// The cluster a run used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterRecord {
    /// The API server's `gitVersion`, e.g. `v1.34.4`.
    pub server_version: String,
    /// The kubeconfig context, or the server URL, as the run used it.
    pub context: String,
    pub namespace: String,
    /// In `kubectl get nodes` order (by name).
    pub nodes: Vec<NodeRecord>,
    /// The node of each generator pod, shard 1 first; empty: the load
    /// ran in shootout's own process (and in every run recorded before
    /// generator pods).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<String>,
}

/// One node of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRecord {
    pub name: String,
    /// Its `InternalIP`.
    pub address: String,
    /// From [`ROLE_LABEL`] (and [`ROLE_LABEL_PREFIX`] keys): `server`,
    /// `client`, `db` first, in that order, then any other; empty when
    /// the node carries none.
    pub roles: Vec<String>,
    /// `status.capacity.cpu`.
    pub cpus: u32,
    /// From [`CPU_MODEL_LABEL`]; None: not reported by the node.
    pub cpu_model: Option<String>,
    pub kubelet_version: String,
    pub os_image: String,
    pub kernel: String,
    /// e.g. `containerd://1.6.20`.
    pub container_runtime: String,
}

/// Which node ran the server of one start: of `target` in `scenario`,
/// repetition `repetition` (a start serving several scenarios has one
/// placement per scenario, all naming its node). Every measurement and
/// capacity search of that target, scenario and repetition ran there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    pub target: String,
    pub scenario: String,
    /// 0-based, as [`crate::Measurement::repetition`].
    pub repetition: u32,
    /// The node's name, as in [`NodeRecord::name`].
    pub node: String,
}

/// Output of `kubectl version -o json` or `kubectl get nodes -o json`
/// that does not describe a cluster; the message names the command and,
/// for a node, the node and the field.
#[derive(Debug, thiserror::Error)]
pub enum ClusterParseError {
    #[error("the output of `{command}` is not JSON: {cause}")]
    Json {
        command: &'static str,
        cause: serde_json::Error,
    },
    #[error("the output of `{command}` has no {field}")]
    Missing {
        command: &'static str,
        field: &'static str,
    },
    #[error("`kubectl get nodes -o json` lists no node")]
    NoNodes,
    #[error("node {node}: {field} is missing from `kubectl get nodes -o json`")]
    NodeField { node: String, field: &'static str },
    #[error("node {node}: status.capacity.cpu is {value:?}, not a whole number of CPUs")]
    Cpus { node: String, value: String },
}

const VERSION_CMD: &str = "kubectl version -o json";
const NODES_CMD: &str = "kubectl get nodes -o json";

impl ClusterRecord {
    /// The cluster as `kubectl version -o json` (`version_json`) and
    /// `kubectl get nodes -o json` (`nodes_json`) describe it, with the
    /// `context` and `namespace` the run used. Every field a node record
    /// needs must be there, except the CPU model (a label a node may lack).
    pub fn from_kubectl(
        version_json: &str,
        nodes_json: &str,
        context: &str,
        namespace: &str,
    ) -> Result<ClusterRecord, ClusterParseError> {
        let version = parse(VERSION_CMD, version_json)?;
        let server_version = version
            .pointer("/serverVersion/gitVersion")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or(ClusterParseError::Missing {
                command: VERSION_CMD,
                field: "serverVersion.gitVersion (is the API server reachable?)",
            })?;
        let nodes = parse(NODES_CMD, nodes_json)?;
        // `kubectl get node NAME -o json` prints the node itself.
        let items: Vec<&Value> = if nodes.get("kind").and_then(Value::as_str) == Some("Node") {
            vec![&nodes]
        } else {
            nodes
                .get("items")
                .and_then(Value::as_array)
                .ok_or(ClusterParseError::Missing {
                    command: NODES_CMD,
                    field: "items",
                })?
                .iter()
                .collect()
        };
        if items.is_empty() {
            return Err(ClusterParseError::NoNodes);
        }
        let nodes = items
            .iter()
            .enumerate()
            .map(|(i, n)| node(i, n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ClusterRecord {
            server_version: server_version.to_string(),
            context: context.to_string(),
            namespace: namespace.to_string(),
            nodes,
            generators: Vec::new(),
        })
    }

    /// The node named `name`, if the cluster has it.
    pub fn node(&self, name: &str) -> Option<&NodeRecord> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The nodes carrying `role`, in the record's order.
    pub fn nodes_with(&self, role: &str) -> impl Iterator<Item = &NodeRecord> {
        let role = role.to_string();
        self.nodes.iter().filter(move |n| n.roles.contains(&role))
    }
}

fn parse(command: &'static str, text: &str) -> Result<Value, ClusterParseError> {
    serde_json::from_str(text).map_err(|cause| ClusterParseError::Json { command, cause })
}

/// One item of `kubectl get nodes -o json`, the `i`th (named by its index
/// when it has no name).
fn node(i: usize, n: &Value) -> Result<NodeRecord, ClusterParseError> {
    let name = n
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ClusterParseError::NodeField {
            node: format!("#{} of the list", i + 1),
            field: "metadata.name",
        })?;
    let missing = |field| ClusterParseError::NodeField {
        node: name.to_string(),
        field,
    };
    let text = |pointer: &str, field| {
        n.pointer(pointer)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| missing(field))
    };
    let address = n
        .pointer("/status/addresses")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .find(|a| a.get("type").and_then(Value::as_str) == Some("InternalIP"))
        })
        .and_then(|a| a.get("address").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("status.addresses[type=InternalIP]"))?;
    let cpu = text("/status/capacity/cpu", "status.capacity.cpu")?;
    let cpus = whole_cpus(&cpu).ok_or_else(|| ClusterParseError::Cpus {
        node: name.to_string(),
        value: cpu.clone(),
    })?;
    let labels = n.pointer("/metadata/labels").and_then(Value::as_object);
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    Ok(NodeRecord {
        name: name.to_string(),
        address: address.to_string(),
        roles: labels.map_or_else(Vec::new, roles),
        cpus,
        cpu_model: label(CPU_MODEL_LABEL)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        kubelet_version: text(
            "/status/nodeInfo/kubeletVersion",
            "status.nodeInfo.kubeletVersion",
        )?,
        os_image: text("/status/nodeInfo/osImage", "status.nodeInfo.osImage")?,
        kernel: text(
            "/status/nodeInfo/kernelVersion",
            "status.nodeInfo.kernelVersion",
        )?,
        container_runtime: text(
            "/status/nodeInfo/containerRuntimeVersion",
            "status.nodeInfo.containerRuntimeVersion",
        )?,
    })
}

/// A CPU quantity that is a whole number of CPUs (`4`, `4000m`).
fn whole_cpus(q: &str) -> Option<u32> {
    match q.strip_suffix('m') {
        Some(milli) => {
            let m: u64 = milli.parse().ok()?;
            (m % 1000 == 0).then(|| u32::try_from(m / 1000).ok())?
        }
        None => q.parse().ok(),
    }
}

/// A node's roles from its labels, `server`, `client`, `db` first.
fn roles(labels: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |r: &str| {
        let r = r.trim();
        if !r.is_empty() && !found.iter().any(|f| f == r) {
            found.push(r.to_string());
        }
    };
    if let Some(v) = labels.get(ROLE_LABEL).and_then(Value::as_str) {
        v.split(['_', '.', ',']).for_each(&mut add);
    }
    for (key, value) in labels {
        if let Some(role) = key.strip_prefix(ROLE_LABEL_PREFIX) {
            if value.as_str() != Some("false") {
                add(role);
            }
        }
    }
    let rank = |r: &String| {
        ["server", "client", "db"]
            .iter()
            .position(|k| k == r)
            .unwrap_or(3)
    };
    found.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    found
}

/// Records (or replaces) the cluster of run `run_id`.
pub(crate) fn record(conn: &Connection, run_id: i64, c: &ClusterRecord) -> Result<usize> {
    Ok(conn.execute(
        "UPDATE runs SET cluster = ?1 WHERE id = ?2",
        params![serde_json::to_string(c)?, run_id],
    )?)
}

/// Records (or replaces) where one start's server ran.
pub(crate) fn record_placement(conn: &Connection, run_id: i64, p: &Placement) -> Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO placements (run_id, target, scenario, repetition, node)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![run_id, p.target, p.scenario, p.repetition, p.node],
    )?;
    Ok(())
}

/// Run `run_id`'s placements, by target, scenario, repetition.
pub(crate) fn placements(conn: &Connection, run_id: i64) -> Result<Vec<Placement>> {
    let mut stmt = conn.prepare(
        "SELECT target, scenario, repetition, node FROM placements WHERE run_id = ?1
         ORDER BY target, scenario, repetition",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        Ok(Placement {
            target: r.get(0)?,
            scenario: r.get(1)?,
            repetition: r.get(2)?,
            node: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
