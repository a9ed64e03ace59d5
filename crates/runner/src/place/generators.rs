//! The load of a Kubernetes run, generated in pods on its client nodes
//! (`shootout run --kubernetes --shards N`): N generator pods, made once
//! when the run starts, each running `shootout agent` on its node's own
//! address (`hostNetwork`). Every load is sent to every agent over one TCP
//! connection each (a token first, drawn for the run and given to the pods
//! in their environment), as shard K of N: the plan the runner built for
//! the level, as one line of JSON (the very plan a local run hands its
//! engine), run by `shootout load --plan-stdin` in the pod. The shards
//! start on one clock (`--start-at`, [`LEAD`] ahead); their live counts
//! (progress lines) add up in the run's [`Control`], where the warm-up's
//! windows and the progress bar read them; when a shard ends its agent
//! sends its interval log and sidecar, which are merged exactly
//! (`shootout_shards::merge_accepting`, the merge `shootout merge` does):
//! a level's figures are the merged report's. A load cancelled here (a
//! warm-up judged steady, an interrupt) is cancelled in every pod by a
//! `cancel` line. No load passes through the API server, the kubelet or
//! the container runtime (a `kubectl exec` per load did, and cost those
//! daemons CPU on the machine being measured). A pod on the server's own
//! node (a one-node cluster) gets no CPUs of its own: it runs in the
//! node's shared pool, pinned to the CPUs a local run gives its generator.

use super::kubectl::{KubeError, Kubectl};
use super::pod::{self, PodState};
use super::Generator;
use crate::error::EngineRefusal;
use serde_json::{json, Value};
use shootout_engine::{Control, LoadReport, Plan};
use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The pod's own command: an agent on its node's address, any free port.
const AGENT: &str = "exec shootout agent --listen \"$HOST_IP:0\"";
/// The variable that hands the pod the run's token.
const TOKEN_ENV: &str = "SHOOTOUT_AGENT_TOKEN";
/// How long connecting to an agent may take.
const AGENT_WAIT: Duration = Duration::from_secs(30);
/// How far ahead of now several shards' shared start is set: time for
/// every agent to start its load process.
const LEAD: Duration = Duration::from_millis(500);
/// Memory each generator pod gets.
const MEMORY: u64 = 1 << 30;
/// How long the pods may take to run.
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a load may run past its planned end before it is abandoned.
const OVERRUN: Duration = Duration::from_secs(60);
/// The longest a load with no planned duration (a request count) runs.
const UNTIMED: Duration = Duration::from_secs(600);
/// The stderr lines of a failed shard kept for its error.
const TAIL: usize = 20;

/// Why the generator pods could not be made.
#[derive(Debug, thiserror::Error)]
pub enum GeneratorError {
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("generator pod {pod} on node {node}: {why}")]
    Pod {
        pod: String,
        node: String,
        why: String,
    },
    /// What this machine could not do for the pods (no pod concerned).
    #[error("generator pods: {0}")]
    Here(String),
}

/// Where one generator pod goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Spot {
    pub node: String,
    /// It shares the server's node: no CPUs of its own, pinned to these.
    pub shared_cpus: Option<Vec<usize>>,
}

/// What a generator pod is made of.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeneratorSpec<'a> {
    pub name: &'a str,
    pub run_id: i64,
    pub owner: &'a str,
    pub image: &'a str,
    pub node: &'a str,
    /// Whole CPUs of its own (Guaranteed); None: the node's shared pool.
    pub cpus: Option<usize>,
    /// What every connection to its agent opens with.
    pub token: &'a str,
}

/// A generator pod's manifest: `hostNetwork` (it sends from the node's own
/// network stack), on its node, its agent listening on the node's address.
pub(crate) fn manifest(g: &GeneratorSpec<'_>) -> Value {
    let mut resources = json!({"memory": MEMORY.to_string()});
    if let Some(cpus) = g.cpus {
        resources["cpu"] = json!(cpus.to_string());
    }
    let container = json!({
        "name": "load",
        "image": g.image,
        "imagePullPolicy": "IfNotPresent",
        "command": ["sh", "-c", AGENT],
        "env": [
            {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
            {"name": TOKEN_ENV, "value": g.token},
        ],
        "resources": {"requests": resources, "limits": resources},
    });
    let labels = pod::labels("generator", g.run_id, g.owner);
    pod::host_pod(g.name, labels, g.node, 1, container)
}

/// One shard's live counts, as its last progress line said them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub completed: u64,
    pub errors: u64,
    pub measuring: bool,
}

/// A `shootout load --progress-lines` line:
/// `shootout-progress completed=N errors=N measuring=0|1`.
pub(crate) fn parse_progress(line: &str) -> Option<Progress> {
    let rest = line.trim_end().strip_prefix("shootout-progress ")?;
    let mut p = Progress::default();
    let mut seen = 0;
    for field in rest.split(' ') {
        let (key, value) = field.split_once('=')?;
        match key {
            "completed" => p.completed = value.parse().ok()?,
            "errors" => p.errors = value.parse().ok()?,
            "measuring" => {
                p.measuring = match value {
                    "1" => true,
                    "0" => false,
                    _ => return None,
                }
            }
            _ => return None,
        }
        seen += 1;
    }
    (seen == 3).then_some(p)
}

/// Adds shard `k`'s new counts to `control`; marks it measuring once
/// every shard is.
fn count(all: &Mutex<Vec<Progress>>, k: usize, now: Progress, control: &Control) {
    let mut all = all.lock().unwrap_or_else(|e| e.into_inner());
    let before = all[k];
    control.add(
        now.completed.saturating_sub(before.completed),
        now.errors.saturating_sub(before.errors),
    );
    all[k] = now;
    if all.iter().all(|p| p.measuring) {
        control.set_measuring();
    }
}

/// One generator pod.
#[derive(Debug)]
struct Pod {
    name: String,
    node: String,
    shared_cpus: Option<Vec<usize>>,
    /// Where its agent listens.
    agent: SocketAddr,
}

/// The run's generator pods.
#[derive(Debug)]
pub(crate) struct PodGenerators {
    pods: Vec<Pod>,
    token: String,
    /// Where the shards' logs of the latest load are written to be read.
    dir: PathBuf,
}

/// A token no one guesses: 32 hex digits from the kernel's generator.
fn draw_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The address an agent's log says it listens on.
fn listening(log: &str) -> Option<SocketAddr> {
    log.lines()
        .find_map(|l| l.strip_prefix("listening on "))
        .and_then(|a| a.trim().parse().ok())
}

impl PodGenerators {
    /// Makes one pod per spot (`maker` names them, `owner` labels them),
    /// and waits until every one's agent says where it listens.
    pub(crate) fn start(
        kubectl: &Kubectl,
        maker: &str,
        run_id: i64,
        owner: &str,
        image: &str,
        spots: &[Spot],
        cpus: usize,
    ) -> Result<PodGenerators, GeneratorError> {
        let token = draw_token().map_err(|e| {
            GeneratorError::Here(format!("cannot draw a token from /dev/urandom: {e}"))
        })?;
        let dir =
            std::env::temp_dir().join(format!("shootout-shards-{}-{run_id}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| GeneratorError::Here(format!("cannot make {}: {e}", dir.display())))?;
        let mut made = Vec::new();
        for (k, spot) in spots.iter().enumerate() {
            let name = pod::pod_name(maker, "generator", k as u64 + 1);
            let manifest = manifest(&GeneratorSpec {
                name: &name,
                run_id,
                owner,
                image,
                node: &spot.node,
                cpus: spot.shared_cpus.is_none().then_some(cpus.max(1)),
                token: &token,
            });
            kubectl.run(&["create", "-f", "-"], Some(&manifest.to_string()))?;
            made.push((name, spot));
        }
        let mut pods = Vec::new();
        for (name, spot) in made {
            let agent = wait_listening(kubectl, &name, &spot.node)?;
            pods.push(Pod {
                name,
                node: spot.node.clone(),
                shared_cpus: spot.shared_cpus.clone(),
                agent,
            });
        }
        Ok(PodGenerators { pods, token, dir })
    }

    /// Where each pod runs, shard 1 first.
    pub(crate) fn nodes(&self) -> Vec<String> {
        self.pods.iter().map(|p| p.node.clone()).collect()
    }

    fn fail(&self, k: usize, why: impl std::fmt::Display) -> EngineRefusal {
        let p = &self.pods[k];
        EngineRefusal::Generator(format!(
            "pod {} on node {} (agent {}): {why}",
            p.name, p.node, p.agent
        ))
    }

    /// The first line of shard `k`'s connection.
    fn header(&self, k: usize, start_at: Option<SystemTime>) -> String {
        let n = self.pods.len();
        let ms = start_at.map(|t| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64
        });
        json!({
            "token": self.token,
            "shard": (n > 1).then(|| format!("{}/{n}", k + 1)),
            "start_at_ms": ms,
            "cpus": self.pods[k].shared_cpus,
        })
        .to_string()
    }

    /// Writes shard `k`'s sidecar and log here and reads them.
    fn read_log(
        &self,
        k: usize,
        payload: &str,
    ) -> Result<shootout_shards::ShardLog, EngineRefusal> {
        let local = self.dir.join(format!("shard-{}.hlog", k + 1));
        let (sidecar, log) = shootout_shards::split_stream(payload)
            .ok_or_else(|| self.fail(k, "its load left no interval log"))?;
        for (to, text) in [
            (shootout_shards::sidecar_path(&local), sidecar),
            (local.clone(), log),
        ] {
            std::fs::write(&to, text)
                .map_err(|e| self.fail(k, format!("cannot write {}: {e}", to.display())))?;
        }
        shootout_shards::read(&local).map_err(|e| self.fail(k, e))
    }
}

/// Polls pod `name`'s log until its agent says where it listens.
fn wait_listening(kubectl: &Kubectl, name: &str, node: &str) -> Result<SocketAddr, GeneratorError> {
    let start = Instant::now();
    let fail = |why: String| GeneratorError::Pod {
        pod: name.to_string(),
        node: node.to_string(),
        why,
    };
    loop {
        let last = match pod::state(&kubectl.json(&["get", "pod", name])?) {
            PodState::Running => {
                let log = kubectl.run(&["logs", name], None).unwrap_or_default();
                if let Some(at) = listening(&log) {
                    return Ok(at);
                }
                format!(
                    "its agent has not said where it listens; its log: {}",
                    log.trim()
                )
            }
            PodState::Stuck(why) => return Err(fail(why)),
            PodState::Ended(how) => {
                let log = kubectl.run(&["logs", name], None).unwrap_or_default();
                return Err(fail(format!("it ended ({how}): {}", log.trim())));
            }
            PodState::Pending(what) => what,
        };
        if start.elapsed() >= READY_TIMEOUT {
            return Err(fail(format!(
                "not ready after {READY_TIMEOUT:.0?} ({last})"
            )));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// How one shard's connection ended: its load's exit code (None: the
/// agent never said), the last lines it sent that were not progress, and
/// what followed the exit line (sidecar and log).
#[derive(Debug, Default)]
struct Ended {
    code: Option<i32>,
    tail: Vec<String>,
    payload: String,
}

/// Reads one shard's connection to its end: progress into `control`,
/// then the exit line and the logs.
fn read_shard(
    conn: TcpStream,
    k: usize,
    counts: &Mutex<Vec<Progress>>,
    control: &Control,
) -> Ended {
    let mut ended = Ended::default();
    let mut r = BufReader::new(conn);
    let mut other = VecDeque::new();
    let mut line = String::new();
    loop {
        line.clear();
        match r.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(now) = parse_progress(&line) {
            count(counts, k, now, control);
            continue;
        }
        if let Some(code) = line.trim_end().strip_prefix("shootout-exit ") {
            ended.code = code.parse().ok();
            let _ = r.read_to_string(&mut ended.payload);
            break;
        }
        other.push_back(line.trim_end().to_string());
        if other.len() > TAIL {
            other.pop_front();
        }
    }
    ended.tail = other.into();
    ended
}

impl PodGenerators {
    /// Sends the load to every agent and waits for them all; cancels them
    /// all (a `cancel` line, then their end closed) once `control` is, and
    /// cuts them off past the load's planned end and [`OVERRUN`].
    fn run_shards(&self, plan: &Plan, control: &Control) -> Result<Vec<Ended>, EngineRefusal> {
        let n = self.pods.len();
        let start_at = (n > 1).then(|| SystemTime::now() + LEAD);
        let planned = match plan.workload().stop().duration {
            Some(d) => d + plan.warmup() + plan.timeout() + OVERRUN,
            None => UNTIMED,
        };
        let deadline = Instant::now() + LEAD + planned;
        let mut conns = Vec::new();
        for (k, p) in self.pods.iter().enumerate() {
            let mut c = TcpStream::connect_timeout(&p.agent, AGENT_WAIT)
                .map_err(|e| self.fail(k, format!("cannot connect: {e}")))?;
            let hello = format!("{}\n{}\n", self.header(k, start_at), plan.to_json());
            c.write_all(hello.as_bytes())
                .map_err(|e| self.fail(k, format!("cannot send the plan: {e}")))?;
            conns.push(c);
        }
        let counts = Mutex::new(vec![Progress::default(); n]);
        std::thread::scope(|s| {
            let readers: Vec<_> = conns
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let c = c.try_clone();
                    let counts = &counts;
                    s.spawn(move || c.map(|c| read_shard(c, k, counts, control)))
                })
                .collect();
            let (mut cancelled, mut late) = (false, false);
            while !readers.iter().all(|r| r.is_finished()) {
                if control.is_cancelled() && !cancelled {
                    for c in &mut conns {
                        let _ = c.write_all(b"cancel\n");
                        let _ = c.shutdown(Shutdown::Write);
                    }
                    cancelled = true;
                }
                if Instant::now() > deadline && !late {
                    for c in &conns {
                        let _ = c.shutdown(Shutdown::Both);
                    }
                    late = true;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let mut out = Vec::new();
            for (k, r) in readers.into_iter().enumerate() {
                match r.join() {
                    Ok(Ok(e)) => out.push(e),
                    Ok(Err(e)) => return Err(self.fail(k, e)),
                    Err(_) => return Err(self.fail(k, "its reader panicked")),
                }
            }
            if late {
                return Err(EngineRefusal::Generator(format!(
                    "the load ran {OVERRUN:.0?} past its planned end in its pods; cut off"
                )));
            }
            Ok(out)
        })
    }
}

impl Generator for PodGenerators {
    fn run(&self, plan: &Plan, control: &Arc<Control>) -> Result<LoadReport, EngineRefusal> {
        let ended = self.run_shards(plan, control)?;
        let cancelled = control.is_cancelled();
        // A load that ran left its logs, whatever `shootout load` then
        // judged of its figures (it exits 2 when the server answered
        // nothing, which is the runner's to judge, as in a local run);
        // one that left none failed to run.
        let mut logs = Vec::new();
        for (k, e) in ended.iter().enumerate() {
            if shootout_shards::split_stream(&e.payload).is_none() {
                let said = match e.code {
                    Some(code) => format!("shootout load exited with {code} and left no log"),
                    None => "the agent closed the connection before the load's end".into(),
                };
                return Err(self.fail(k, format!("{said}:\n{}", e.tail.join("\n"))));
            }
            logs.push(self.read_log(k, &e.payload)?);
        }
        let accept = shootout_shards::Accept {
            partial: cancelled,
            short_rates: true,
        };
        shootout_shards::merge_accepting(logs, accept)
            .map(|m| m.report)
            .map_err(|e| EngineRefusal::Generator(e.to_string()))
    }
}

impl Drop for PodGenerators {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_read_and_anything_else_is_not() {
        assert_eq!(
            parse_progress("shootout-progress completed=120 errors=3 measuring=1\n"),
            Some(Progress {
                completed: 120,
                errors: 3,
                measuring: true
            })
        );
        for bad in [
            "warning: started 3.2 ms after --start-at",
            "shootout-progress completed=1 errors=0",
            "shootout-progress completed=x errors=0 measuring=0",
            "shootout-progress completed=1 errors=0 measuring=2",
            "shootout-progress completed=1 errors=0 measuring=0 extra=1",
        ] {
            assert_eq!(parse_progress(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_agents_address_is_read_from_its_log_and_tokens_differ() {
        assert_eq!(
            listening("listening on 127.0.0.2:41234\n"),
            Some("127.0.0.2:41234".parse().unwrap())
        );
        assert_eq!(listening("error: cannot listen on 127.0.0.2:0\n"), None);
        let (a, b) = (draw_token().unwrap(), draw_token().unwrap());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }

    #[test]
    fn shards_counts_add_up_and_measuring_waits_for_every_shard() {
        let control = Control::new();
        let all = Mutex::new(vec![Progress::default(); 2]);
        let at = |completed, errors, measuring| Progress {
            completed,
            errors,
            measuring,
        };
        count(&all, 0, at(100, 1, true), &control);
        assert!(!control.is_measuring(), "shard 2 is not measuring yet");
        count(&all, 1, at(50, 0, true), &control);
        count(&all, 0, at(180, 1, true), &control);
        assert!(control.is_measuring());
        assert_eq!((control.completed(), control.errors()), (230, 1));
    }

    #[test]
    fn a_generator_pod_shares_the_pool_or_owns_whole_cpus() {
        let spec = |cpus| GeneratorSpec {
            name: "shootout-p1-r2-generator-1",
            run_id: 2,
            owner: "host.1",
            image: "localhost/shootout:e2e",
            node: "127.0.0.1",
            cpus,
            token: "0123456789abcdef0123456789abcdef",
        };
        let own = manifest(&spec(Some(2)));
        let limits = &own["spec"]["containers"][0]["resources"]["limits"];
        assert_eq!(limits["cpu"], "2");
        assert_eq!(
            own["spec"]["containers"][0]["resources"]["requests"],
            *limits
        );
        assert_eq!(own["spec"]["hostNetwork"], true);
        assert_eq!(own["metadata"]["labels"][pod::COMPONENT], "generator");
        assert_eq!(own["metadata"]["labels"][pod::RUN], "2");
        let shared = manifest(&spec(None));
        assert!(shared["spec"]["containers"][0]["resources"]["limits"]
            .get("cpu")
            .is_none());
        assert_eq!(
            shared["spec"]["nodeSelector"]["kubernetes.io/hostname"],
            "127.0.0.1"
        );
    }
}
