//! The database scenarios' PostgreSQL as a Pod (`shootout run --kubernetes`):
//! the image `deploy/kubernetes/images.py postgres` builds (this machine's
//! PostgreSQL from Debian, TechEmpower's seed, an entry point that applies
//! the settings it is given), on the node labeled for the `db` role (or the
//! only node), with `hostNetwork`. It gets the settings a local cluster
//! would (`shootout_servers::database::remote_settings`), a superuser
//! password drawn for the run, and is ready when that superuser can read
//! from it. On the server's own node it asks for no CPU (the node's whole
//! CPUs are the server's: it runs in the kubelet's shared pool, as a local
//! cluster shares the server's CPUs); on a node of its own it gets as many
//! whole CPUs as the server. Deleting the Pod deletes the database (its
//! data is an emptyDir). Its CPU and memory come from its kubelet, as a
//! contestant's do.

use super::kube::{cluster_of, node_for, nodes, owner, ClusterError, Node};
use super::kubectl::{KubeError, KubeOptions, Kubectl};
use super::kubelet::{PodMeter, SummaryAt};
use super::pod::{self, PodState};
use serde_json::json;
use shootout_servers::database::{
    describe_remote, remote_settings, ClusterOptions, DatabaseError, DatabaseInfo,
};
use shootout_servers::DatabaseAccess;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Its port on the node.
const PORT: u16 = 15432;
/// Memory requested and limited: above `shared_buffers` (at most 1 GiB,
/// `settings::chosen`) and a backend per connection.
const MEMORY: u64 = 3 << 30;
/// How long it may take to be ready (unpack, initdb, seed).
const READY: Duration = Duration::from_secs(180);

/// Why the database pod could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PodDatabaseError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("the PostgreSQL pod {pod} on node {node}: {detail}")]
    Start {
        pod: String,
        node: String,
        detail: String,
    },
    #[error("the PostgreSQL pod {pod} did not let its superuser in within {timeout:?}: {last}")]
    NotReady {
        pod: String,
        timeout: Duration,
        last: DatabaseError,
    },
}

/// A running PostgreSQL pod.
#[derive(Debug)]
pub struct PodDatabase {
    kubectl: Kubectl,
    name: String,
    node: Node,
    access: DatabaseAccess,
    info: DatabaseInfo,
    meter: Arc<PodMeter>,
}

impl PodDatabase {
    /// Starts it for servers that may open `opts.pool_size` connections,
    /// and waits until it is seeded and answers.
    pub fn start(
        kube: &KubeOptions,
        opts: &ClusterOptions,
        server_cpus: usize,
    ) -> Result<PodDatabase, PodDatabaseError> {
        let kubectl = Kubectl::for_options(kube);
        let cluster = cluster_of(&kubectl)?;
        let all = nodes(&cluster);
        let node = node_for(&all, "db").map_err(ClusterError::from)?;
        let server = node_for(&all, "server").map_err(ClusterError::from)?;
        let password = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let name = pod::pod_name(&format!("p{}", std::process::id()), "postgres", 1);
        let cpu = if node.name == server.name {
            None
        } else {
            Some(server_cpus.max(1).to_string())
        };
        let mut resources = json!({"memory": MEMORY.to_string()});
        if let Some(c) = &cpu {
            resources["cpu"] = json!(c);
        }
        let manifest = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "labels": {
                    pod::APP: "shootout",
                    pod::COMPONENT: "database",
                    pod::OWNER: owner(),
                }
            },
            "spec": {
                "hostNetwork": true,
                "automountServiceAccountToken": false,
                "enableServiceLinks": false,
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 30,
                "nodeSelector": {"kubernetes.io/hostname": node.name},
                "containers": [{
                    "name": "postgres",
                    "image": kube.image.replace("{target}", "postgres"),
                    "imagePullPolicy": "IfNotPresent",
                    "env": [
                        {"name": "PORT", "value": PORT.to_string()},
                        {"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
                        {"name": "PG_SUPERUSER_PASSWORD", "value": password},
                        {"name": "PG_SETTINGS", "value": remote_settings(opts, PORT)},
                    ],
                    "resources": {"requests": resources, "limits": resources},
                    "volumeMounts": [
                        {"name": "data", "mountPath": "/var/lib/postgresql"},
                        {"name": "shm", "mountPath": "/dev/shm"},
                    ],
                }],
                "volumes": [
                    {"name": "data", "emptyDir": {}},
                    {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Mi"}},
                ],
            }
        });
        kubectl.run(&["create", "-f", "-"], Some(&manifest.to_string()))?;
        let meter = Arc::new(PodMeter::new(
            SummaryAt::for_node(&kubectl, &node.name, node.address),
            &kubectl.namespace,
            &name,
        ));
        let access = DatabaseAccess::remote(node.address, PORT, &password, opts.pool_size);
        let mut db = PodDatabase {
            kubectl,
            name,
            node,
            access,
            info: DatabaseInfo {
                version: String::new(),
                settings: Vec::new(),
                cpus: Vec::new(),
            },
            meter,
        };
        // Dropped on an error: the pod is deleted.
        db.info = db.wait_ready()?;
        Ok(db)
    }

    fn wait_ready(&self) -> Result<DatabaseInfo, PodDatabaseError> {
        let start = Instant::now();
        let fail = |detail: String| PodDatabaseError::Start {
            pod: self.name.clone(),
            node: self.node.name.clone(),
            detail,
        };
        loop {
            let p = self.kubectl.json(&["get", "pod", &self.name])?;
            match pod::state(&p) {
                PodState::Ended(how) => {
                    let log = self
                        .kubectl
                        .run(&["logs", "--tail=20", &self.name], None)
                        .unwrap_or_default();
                    return Err(fail(format!("its container ended ({how}):\n{log}")));
                }
                PodState::Stuck(why) => return Err(fail(why)),
                PodState::Pending(_) => {}
                PodState::Running => match describe_remote(&self.access, Vec::new()) {
                    Ok(info) => return Ok(info),
                    Err(last) if start.elapsed() >= READY => {
                        return Err(PodDatabaseError::NotReady {
                            pod: self.name.clone(),
                            timeout: READY,
                            last,
                        })
                    }
                    Err(_) => {}
                },
            }
            if start.elapsed() >= READY {
                return Err(fail(format!("not running after {READY:?}")));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    pub fn access(&self) -> DatabaseAccess {
        self.access.clone()
    }

    pub fn info(&self) -> &DatabaseInfo {
        &self.info
    }

    pub(crate) fn meter(&self) -> Arc<PodMeter> {
        self.meter.clone()
    }

    /// "pod NAME on node NODE".
    pub fn describe(&self) -> String {
        format!("pod {} on node {}", self.name, self.node.name)
    }
}

impl Drop for PodDatabase {
    fn drop(&mut self) {
        let _ = self.kubectl.run(
            &[
                "delete",
                "pod",
                &self.name,
                "--ignore-not-found",
                "--wait=true",
                "--timeout=60s",
            ],
            None,
        );
    }
}
