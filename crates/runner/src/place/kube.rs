//! The Kubernetes place: each start of a target is a Pod (`pod.rs`) on
//! the cluster's server node, made from the target's image, with
//! `hostNetwork`, Guaranteed QoS and as many whole CPUs as a local run
//! pins it to. It is ready when its contract's ready route answers on the
//! node's address, and stopped by deleting it, waited for (SIGTERM, then
//! SIGKILL after SPEC.md's 5 s, by the kubelet). Its CPU and memory are
//! its pod cgroup's as the kubelet reports them (`kubelet.rs`); what no
//! kubelet API gives (PSS, the cgroup's throttling and OOM counters) is
//! said to be unavailable, never zero. Whether it is frozen is read inside
//! the pod, before and after each level (`liveness_closely`).
//!
//! Nothing of a run is left behind: every object carries the run's and
//! its maker's labels; the run deletes what its label selects when it
//! ends by any path it survives, and a later run deletes what a maker on
//! this machine that no longer runs left (`sweep_orphans`).

use super::generators::{GeneratorError, PodGenerators, Spot};
use super::kubectl::{KubeError, KubeOptions, Kubectl};
use super::kubelet::{PodMeter, SummaryAt};
use super::pod::{self, PodSpec, PodState};
use super::{BudgetError, Contestant, Generator, Liveness, Meter, Place, StartSpec, Stopped};
use serde_json::Value;
use shootout_cgroup::Budget;
use shootout_servers::listener::ListenerError;
use shootout_servers::StartError;
use shootout_store::ClusterRecord;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a starting pod is looked at.
const POLL: Duration = Duration::from_millis(250);
/// How long a deletion is waited for before it is forced.
const DELETE_WAIT: Duration = Duration::from_secs(60);

/// Why the cluster cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("no node to run servers on")]
    NoServerNode(#[from] RoleError),
    #[error(transparent)]
    Record(#[from] shootout_store::ClusterParseError),
    #[error("{0} not run on Kubernetes yet; run this study without --kubernetes")]
    Unsupported(String),
    #[error("no node to run the load on")]
    NoClientNode(#[source] RoleError),
    #[error(transparent)]
    Generators(#[from] GeneratorError),
}

/// Refuses, before anything starts, what the Kubernetes place cannot run
/// yet: TLS levels (the run's certificates are files on this machine), a
/// study's `resources` budgets (a pod's are fixed when it starts), and
/// with generator pods, capacity searches and cost levels (their search
/// runs its own loads in this process).
pub(crate) fn supports(
    study: &shootout_study::Study,
    opts: &KubeOptions,
) -> Result<(), ClusterError> {
    let levels = || study.scenarios.iter().flat_map(|s| &s.levels);
    let mut not = Vec::new();
    if levels().any(|l| l.protocol.is_tls()) {
        not.push("TLS levels");
    }
    if levels().any(|l| l.resources.is_set()) {
        not.push("`resources` budgets");
    }
    let searched = |s: &shootout_study::Scenario| s.capacity.is_some() || s.cost.is_some();
    if opts.shards > 0 && study.scenarios.iter().any(searched) {
        not.push("capacity searches and cost levels with generator pods (--shards 0 runs them from this process)");
    }
    match not.split_last() {
        None => Ok(()),
        Some((last, [])) => Err(ClusterError::Unsupported(format!("{last} are"))),
        Some((last, rest)) => Err(ClusterError::Unsupported(format!(
            "{} and {last} are",
            rest.join(", ")
        ))),
    }
}

/// A node of the cluster as the place uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub name: String,
    pub address: IpAddr,
    pub roles: Vec<String>,
}

/// The nodes of the cluster's record (`shootout_store::ClusterRecord`, the
/// one reader of `kubectl get nodes`), with addresses that parse.
pub(crate) fn nodes(cluster: &ClusterRecord) -> Vec<Node> {
    cluster
        .nodes
        .iter()
        .filter_map(|n| {
            Some(Node {
                name: n.name.clone(),
                address: n.address.parse().ok()?,
                roles: n.roles.clone(),
            })
        })
        .collect()
}

/// Why no one node can take a role.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RoleError {
    #[error("none of the {count} nodes ({names}) is labeled {label}={role} (or {label}-{role})")]
    None {
        count: usize,
        names: String,
        label: &'static str,
        role: String,
    },
    #[error(
        "{count} nodes are labeled {label}={role} ({names}); shootout places each role on one"
    )]
    Several {
        count: usize,
        names: String,
        label: &'static str,
        role: String,
    },
}

/// The node that runs `role`: the one labeled with it, or the only node
/// of a one-node cluster (it carries every role).
pub(crate) fn node_for(nodes: &[Node], role: &str) -> Result<Node, RoleError> {
    let labeled: Vec<&Node> = nodes
        .iter()
        .filter(|n| n.roles.iter().any(|r| r == role))
        .collect();
    match (labeled.as_slice(), nodes) {
        ([one], _) => Ok((*one).clone()),
        ([], [only]) => Ok(only.clone()),
        ([], _) => Err(RoleError::None {
            count: nodes.len(),
            names: names(nodes.iter()),
            label: pod::ROLE,
            role: role.into(),
        }),
        (many, _) => Err(RoleError::Several {
            count: many.len(),
            names: names(many.iter().copied()),
            label: pod::ROLE,
            role: role.into(),
        }),
    }
}

fn names<'a>(nodes: impl Iterator<Item = &'a Node>) -> String {
    nodes
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The nodes that run the load: every node labeled `client`, or the only
/// node of a one-node cluster (it carries every role).
pub(crate) fn client_nodes(nodes: &[Node]) -> Result<Vec<Node>, RoleError> {
    let labeled: Vec<Node> = nodes
        .iter()
        .filter(|n| n.roles.iter().any(|r| r == "client"))
        .cloned()
        .collect();
    match (labeled.is_empty(), nodes) {
        (false, _) => Ok(labeled),
        (true, [only]) => Ok(vec![only.clone()]),
        (true, _) => Err(RoleError::None {
            count: nodes.len(),
            names: names(nodes.iter()),
            label: pod::ROLE,
            role: "client".into(),
        }),
    }
}

/// Where `shards` generator pods go: round the client nodes, shard 1
/// first; one on the server's node shares its pool, pinned to
/// `shared_cpus` (a local run's generator CPUs).
pub(crate) fn spots(
    clients: &[Node],
    server: &Node,
    shards: usize,
    shared_cpus: &[usize],
) -> Vec<Spot> {
    (0..shards)
        .map(|k| {
            let node = &clients[k % clients.len()];
            Spot {
                node: node.name.clone(),
                shared_cpus: (node.name == server.name).then(|| shared_cpus.to_vec()),
            }
        })
        .collect()
}

/// This process as the owner label says it: `<hostname>.<pid>`.
pub(crate) fn owner() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    pod::label_value(&format!("{}.{}", host.trim(), std::process::id()))
}

/// Deletes every object this process made on the cluster, without waiting:
/// the last thing a run stopped twice does (the next run's sweep deletes
/// whatever this could not).
pub fn delete_all_of_this_process(opts: &KubeOptions) -> Result<(), KubeError> {
    Kubectl::for_options(opts)
        .run(
            &[
                "delete",
                "pods,jobs,persistentvolumeclaims",
                "-l",
                &format!("{}={}", pod::OWNER, owner()),
                "--ignore-not-found",
                "--wait=false",
            ],
            None,
        )
        .map(drop)
}

/// The cluster as `kubectl` finds it, its namespace made when it is not
/// there.
pub(crate) fn cluster_of(kubectl: &Kubectl) -> Result<ClusterRecord, ClusterError> {
    let version = kubectl.run(&["version", "-o", "json"], None)?;
    let node_list = kubectl.run(&["get", "nodes", "-o", "json"], None)?;
    let context = kubectl
        .run(&["config", "current-context"], None)
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|_| "(no current context)".into());
    let ns = &kubectl.namespace;
    let cluster = ClusterRecord::from_kubectl(&version, &node_list, &context, ns)?;
    if kubectl.run(&["get", "namespace", ns], None).is_err() {
        kubectl.run(&["create", "namespace", ns], None)?;
    }
    Ok(cluster)
}

/// Contestants as Pods on a cluster.
#[derive(Debug)]
pub(crate) struct KubePlace {
    kubectl: Kubectl,
    image: String,
    server: Node,
    run_id: i64,
    owner: String,
    starts: AtomicU64,
    /// The makers on this machine, gone, whose objects it deleted.
    swept: Vec<String>,
    /// The cluster as the run found it.
    cluster: ClusterRecord,
    /// Where the load is generated (None: this process).
    generators: Option<PodGenerators>,
}

impl KubePlace {
    /// Finds the cluster's server node, makes the namespace when it is not
    /// there, and deletes what dead runs of this machine left.
    /// With `opts.shards`, makes the generator pods on the client nodes.
    pub(crate) fn connect(
        opts: &KubeOptions,
        run_id: i64,
        generator_cpus: &[usize],
    ) -> Result<KubePlace, ClusterError> {
        let kubectl = Kubectl::for_options(opts);
        let cluster = cluster_of(&kubectl)?;
        let all = nodes(&cluster);
        let server = node_for(&all, "server")?;
        let clients = match opts.shards {
            0 => Vec::new(),
            _ => client_nodes(&all).map_err(ClusterError::NoClientNode)?,
        };
        let mut place = KubePlace {
            kubectl,
            image: opts.image.clone(),
            server,
            run_id,
            owner: owner(),
            starts: AtomicU64::new(0),
            swept: Vec::new(),
            cluster,
            generators: None,
        };
        place.swept = place.sweep_orphans()?;
        if opts.shards > 0 {
            let spots = spots(&clients, &place.server, opts.shards, generator_cpus);
            place.generators = Some(PodGenerators::start(
                &place.kubectl,
                &format!("p{}-r{run_id}", std::process::id()),
                run_id,
                &place.owner,
                &opts.generator_image,
                &spots,
                generator_cpus.len(),
            )?);
            place.cluster.generators = spots.into_iter().map(|s| s.node).collect();
        }
        Ok(place)
    }

    /// Where contestants run and where their figures come from, as the
    /// run says it.
    pub(crate) fn describe(&self) -> String {
        let at = SummaryAt::for_node(&self.kubectl, &self.server.name, self.server.address);
        let swept = if self.swept.is_empty() {
            String::new()
        } else {
            format!(
                "; deleted what shootout processes of this machine that died left ({})",
                self.swept.join(", ")
            )
        };
        let load = match &self.generators {
            None => "the load runs in this process".to_string(),
            Some(g) => format!(
                "the load runs in {} generator pod(s), on node(s) {}",
                g.nodes().len(),
                g.nodes().join(", ")
            ),
        };
        format!(
            "contestants run as pods in namespace {} on Kubernetes node {} ({}); their CPU and memory come from {}; {load}{swept}",
            self.kubectl.namespace,
            self.server.name,
            self.server.address,
            at.describe()
        )
    }

    /// Deletes every object of this run, waited for: its run number and
    /// its maker (another shootout's store may have a run of that number).
    pub(crate) fn clean_up(&self) -> Result<(), KubeError> {
        let selector = format!("{}={},{}={}", pod::RUN, self.run_id, pod::OWNER, self.owner);
        self.kubectl.delete_selected(&selector, DELETE_WAIT)
    }

    /// Deletes the objects whose maker ran on this machine and is gone;
    /// returns those makers.
    fn sweep_orphans(&self) -> Result<Vec<String>, KubeError> {
        let pods = self.kubectl.json(&[
            "get",
            "pods,jobs,persistentvolumeclaims",
            "-l",
            &format!("{}=shootout", pod::APP),
        ])?;
        let host = self.owner.rsplit_once('.').map_or("", |(h, _)| h);
        let mut dead = std::collections::BTreeSet::new();
        for item in pods["items"].as_array().into_iter().flatten() {
            let Some(owner) = item["metadata"]["labels"][pod::OWNER].as_str() else {
                continue;
            };
            let Some((h, pid)) = owner.rsplit_once('.') else {
                continue;
            };
            let alive = pid
                .parse::<i32>()
                .is_ok_and(|p| Path::new(&format!("/proc/{p}")).exists());
            if h == host && !alive {
                dead.insert(owner.to_string());
            }
        }
        for owner in &dead {
            self.kubectl
                .delete_selected(&format!("{}={owner}", pod::OWNER), DELETE_WAIT)?;
        }
        Ok(dead.into_iter().collect())
    }
}

impl Drop for KubePlace {
    /// The run's end, by any path this process survives: nothing of the
    /// run is left in the namespace.
    fn drop(&mut self) {
        let _ = self.clean_up();
    }
}

impl Place for KubePlace {
    fn cluster(&self) -> Option<(&ClusterRecord, &str)> {
        Some((&self.cluster, &self.server.name))
    }

    /// The server node's address, as the cluster reports it, whatever it
    /// is: the user chose the cluster (`--kubernetes`).
    fn reach(&self) -> shootout_engine::Reach {
        shootout_engine::Reach::Remote
    }

    fn generator(&self) -> &dyn Generator {
        match &self.generators {
            Some(g) => g,
            None => &super::InProcess,
        }
    }

    fn free_ports(&self) -> std::io::Result<[u16; 3]> {
        // With hostNetwork the pod listens on the node: on a loopback node
        // that is this machine, whose free ports are known; elsewhere a
        // taken port ends the start with the server's own bind error.
        shootout_servers::free_ports::<3>()
    }

    fn start(&self, s: &StartSpec<'_>) -> Result<Box<dyn Contestant>, StartError> {
        let target = &s.target.name;
        let elsewhere = |detail: String| StartError::Elsewhere {
            target: target.clone(),
            place: format!("Kubernetes node {}", self.server.name),
            detail,
        };
        // A study with `resources` budgets never gets here (`supports`).
        let n = self.starts.fetch_add(1, Ordering::Relaxed) + 1;
        let maker = format!("p{}-r{}", std::process::id(), self.run_id);
        let name = pod::pod_name(&maker, target, n);
        let cpus = s.cpus.len().max(1);
        let mut env = vec![
            ("PORT".to_string(), s.port.to_string()),
            ("HOST".to_string(), self.server.address.to_string()),
            ("SERVER_CPUS".to_string(), cpus.to_string()),
        ];
        env.extend(s.env.iter().cloned());
        let image = self.image.replace("{target}", target);
        let manifest = pod::manifest(&PodSpec {
            name: &name,
            run_id: self.run_id,
            owner: &self.owner,
            target,
            image: &image,
            node: &self.server.name,
            cpus,
            memory: s.limits.budget.memory.unwrap_or(pod::DEFAULT_MEMORY),
            env: &env,
        });
        self.kubectl
            .run(&["create", "-f", "-"], Some(&manifest.to_string()))
            .map_err(|e| elsewhere(e.to_string()))?;
        let meter = Arc::new(PodMeter::new(
            SummaryAt::for_node(&self.kubectl, &self.server.name, self.server.address),
            &self.kubectl.namespace,
            &name,
        ));
        Ok(Box::new(PodContestant {
            kubectl: self.kubectl.clone(),
            name,
            target: target.clone(),
            node: self.server.name.clone(),
            host: self.server.address,
            port: s.port,
            ready: s.target.ready.clone(),
            log: s.log.to_path_buf(),
            meter,
        }))
    }
}

/// One start as a Pod.
#[derive(Debug)]
struct PodContestant {
    kubectl: Kubectl,
    name: String,
    target: String,
    node: String,
    host: IpAddr,
    port: u16,
    ready: String,
    log: PathBuf,
    meter: Arc<PodMeter>,
}

impl PodContestant {
    fn error(&self, detail: String) -> StartError {
        StartError::Elsewhere {
            target: self.target.clone(),
            place: format!("Kubernetes node {} (pod {})", self.node, self.name),
            detail,
        }
    }

    fn get(&self) -> Result<Option<Value>, KubeError> {
        match self.kubectl.json(&["get", "pod", &self.name]) {
            Ok(v) => Ok(Some(v)),
            Err(KubeError::Failed { stderr, .. }) if stderr.contains("NotFound") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Its log, kept in the run's log file (the pod's goes with it).
    fn save_log(&self) -> String {
        let text = self
            .kubectl
            .run(&["logs", &self.name], None)
            .unwrap_or_default();
        if !text.is_empty() {
            let _ = std::fs::write(&self.log, &text);
        }
        text
    }

    fn tail_of(text: &str, lines: usize) -> String {
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Contestant for PodContestant {
    fn host(&self) -> IpAddr {
        self.host
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<Duration, StartError> {
        let start = Instant::now();
        let request = shootout_servers::http::Request::get(&self.ready);
        let addr = std::net::SocketAddr::new(self.host, self.port);
        let mut last;
        loop {
            let pod = self.get().map_err(|e| self.error(e.to_string()))?;
            match pod.as_ref().map(pod::state) {
                None => return Err(self.error("its pod was deleted before it was ready".into())),
                Some(PodState::Ended(how)) => {
                    let log = self.save_log();
                    return Err(self.error(format!(
                        "its container ended ({how}) before it was ready; log {}:\n{}",
                        self.log.display(),
                        Self::tail_of(&log, 20)
                    )));
                }
                Some(PodState::Stuck(why)) => return Err(self.error(why)),
                Some(PodState::Pending(what)) => last = format!("pod {what}"),
                Some(PodState::Running) => {
                    match shootout_servers::http::send(addr, &request, Duration::from_secs(2)) {
                        Ok(r) if r.status == 200 => return Ok(start.elapsed()),
                        Ok(r) => last = format!("GET {} answered {}", self.ready, r.status),
                        Err(e) => last = format!("GET {}: {e}", self.ready),
                    }
                }
            }
            if start.elapsed() >= timeout {
                let log = self.save_log();
                return Err(self.error(format!(
                    "not ready after {timeout:.0?} ({last}); log {}:\n{}",
                    self.log.display(),
                    Self::tail_of(&log, 20)
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    fn liveness(&self) -> Liveness {
        match self.get() {
            Ok(None) => Liveness::Gone,
            Ok(Some(p)) => match pod::state(&p) {
                PodState::Ended(how) => Liveness::Exited {
                    how,
                    others_left: false,
                },
                // A kubelet does not say whether a container's processes
                // are stopped: a frozen pod reads as alive here.
                _ => Liveness::Alive,
            },
            // The API not answering says nothing about the server.
            Err(_) => Liveness::Alive,
        }
    }

    /// Its processes read inside its pod (`kubectl exec`, the image's
    /// busybox `sh` and `cat`): every one stopped is frozen. A pod that
    /// cannot be read so (no shell in its image) is taken as alive.
    fn liveness_closely(&self) -> Liveness {
        let quick = self.liveness();
        if quick != Liveness::Alive {
            return quick;
        }
        let read = self.kubectl.run(
            &["exec", &self.name, "--", "sh", "-c", pod::PROCESSES],
            None,
        );
        match read.ok().as_deref().and_then(pod::stopped) {
            Some(count) => Liveness::Frozen { count },
            None => Liveness::Alive,
        }
    }

    fn holds_port(&self, _port: u16) -> Result<(), ListenerError> {
        // Another node's listeners cannot be read from here.
        Ok(())
    }

    fn meter(&self) -> Arc<dyn Meter> {
        self.meter.clone()
    }

    fn budget(&self) -> Option<Budget> {
        // Started only without `resources` (see `start`).
        Some(Budget::default())
    }

    fn set_budget(&self, _budget: &Budget) -> Result<(), BudgetError> {
        Err(BudgetError::Fixed)
    }

    fn log_tail(&self, lines: usize) -> String {
        let tail = format!("--tail={lines}");
        self.kubectl
            .run(&["logs", &tail, &self.name], None)
            .unwrap_or_else(|e| format!("(no log: {e})"))
    }

    fn process_group(&self) -> Option<i32> {
        None
    }

    fn stop(self: Box<Self>) -> Stopped {
        self.save_log();
        let start = Instant::now();
        let wait = format!("--timeout={}s", DELETE_WAIT.as_secs());
        let deleted = self.kubectl.run(
            &[
                "delete",
                "pod",
                &self.name,
                "--ignore-not-found",
                "--wait=true",
                &wait,
            ],
            None,
        );
        let graceful = deleted.is_ok() && start.elapsed() < Duration::from_secs(pod::GRACE_S);
        let leftovers = deleted.is_err()
            && self
                .kubectl
                .run(
                    &[
                        "delete",
                        "pod",
                        &self.name,
                        "--ignore-not-found",
                        "--grace-period=0",
                        "--force",
                        &wait,
                    ],
                    None,
                )
                .is_err();
        Stopped {
            graceful,
            leftovers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, roles: &[&str]) -> Node {
        Node {
            name: name.into(),
            address: name.parse().unwrap(),
            roles: roles.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn shards_go_round_the_client_nodes_and_share_the_pool_only_beside_the_server() {
        let three = [
            node("127.0.0.1", &["client"]),
            node("127.0.0.2", &["server"]),
            node("127.0.0.3", &["client", "db"]),
        ];
        let clients = client_nodes(&three).unwrap();
        let spots = spots(&clients, &three[1], 3, &[1]);
        let on: Vec<&str> = spots.iter().map(|s| s.node.as_str()).collect();
        assert_eq!(on, ["127.0.0.1", "127.0.0.3", "127.0.0.1"]);
        assert!(spots.iter().all(|s| s.shared_cpus.is_none()));
        // One node: the generator shares it with the server, pinned.
        let one = &three[1..2];
        let spots = super::spots(&client_nodes(one).unwrap(), &one[0], 1, &[1]);
        assert_eq!(spots[0].shared_cpus, Some(vec![1]));
        let none = [node("127.0.0.1", &["db"]), node("127.0.0.2", &["server"])];
        let err = client_nodes(&none).unwrap_err().to_string();
        assert!(err.contains("shootout.dev/role=client"), "{err}");
    }

    #[test]
    fn each_role_goes_to_its_labeled_node_or_the_only_one() {
        let two = [
            node("127.0.0.1", &["client", "db"]),
            node("127.0.0.2", &["server"]),
        ];
        assert_eq!(node_for(&two, "server").unwrap().name, "127.0.0.2");
        assert_eq!(node_for(&two, "db").unwrap().name, "127.0.0.1");
        // One node carries every role, whatever its labels say.
        assert_eq!(node_for(&two[1..], "client").unwrap().name, "127.0.0.2");
        let bare = [node("127.0.0.1", &[]), node("127.0.0.2", &[])];
        let e = node_for(&bare, "db").unwrap_err().to_string();
        assert!(
            e.contains(
                "none of the 2 nodes (127.0.0.1, 127.0.0.2) is labeled shootout.dev/role=db"
            ),
            "{e}"
        );
        assert_eq!(
            node_for(&[node("10.1.2.3", &[])], "db").unwrap().name,
            "10.1.2.3"
        );
        let twins = [
            node("127.0.0.1", &["server"]),
            node("127.0.0.2", &["server"]),
        ];
        let e = node_for(&twins, "server").unwrap_err().to_string();
        assert!(e.contains("2 nodes are labeled"), "{e}");
    }
}
