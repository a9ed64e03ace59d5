//! The load of a Kubernetes run, generated in pods on its client nodes
//! (`shootout run --kubernetes --shards N`): N generator pods, made once
//! when the run starts and idle between loads, each running every load as
//! one shard of it, `shootout load --plan-stdin --shard K/N`, with the
//! plan the runner built for the level as one line of JSON on its stdin
//! (the very plan a local run hands its engine). The shards start on one
//! clock (`--start-at`, [`LEAD`] ahead); their live counts
//! (`--progress-lines` on stderr) add up in the run's [`Control`], where
//! the warm-up's windows and the progress bar read them; each writes an
//! interval log and its sidecar, which are fetched back and merged exactly
//! (`shootout_shards::merge_accepting`, the merge `shootout merge` does):
//! a level's figures are the merged report's. A load cancelled here (a
//! warm-up judged steady, an interrupt) is cancelled in every pod by
//! closing its stdin. A pod on the server's own node (a one-node cluster)
//! gets no CPUs of its own: it runs in the node's shared pool, pinned to
//! the CPUs a local run gives its generator.

use super::kubectl::{KubeError, Kubectl};
use super::pod::{self, PodState};
use super::Generator;
use crate::error::EngineRefusal;
use serde_json::{json, Value};
use shootout_engine::{Control, LoadReport, Plan};
use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

/// The pod's own command: idle until a load is run in it, gone at once
/// when it is deleted.
const IDLE: &str = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done";
/// How far ahead of now several shards' shared start is set: time for
/// every `kubectl exec` to reach its pod (0.1 to 0.3 s each, measured on
/// the local cluster).
const LEAD: Duration = Duration::from_millis(1500);
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
}

/// A generator pod's manifest: `hostNetwork` (it sends from the node's own
/// network stack), on its node, idle until a load is run in it.
pub(crate) fn manifest(g: &GeneratorSpec<'_>) -> Value {
    let mut resources = json!({"memory": MEMORY.to_string()});
    if let Some(cpus) = g.cpus {
        resources["cpu"] = json!(cpus.to_string());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": g.name,
            "labels": {
                pod::APP: "shootout",
                pod::COMPONENT: "generator",
                pod::RUN: g.run_id.to_string(),
                pod::OWNER: pod::label_value(g.owner),
            }
        },
        "spec": {
            "hostNetwork": true,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "automountServiceAccountToken": false,
            "enableServiceLinks": false,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "nodeSelector": {"kubernetes.io/hostname": g.node},
            "containers": [{
                "name": "load",
                "image": g.image,
                "imagePullPolicy": "IfNotPresent",
                "command": ["sh", "-c", IDLE],
                "resources": {"requests": resources, "limits": resources},
            }]
        }
    })
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
}

/// The run's generator pods.
#[derive(Debug)]
pub(crate) struct PodGenerators {
    kubectl: Kubectl,
    pods: Vec<Pod>,
    /// Where the shards' logs of the latest load are fetched to.
    dir: PathBuf,
    loads: AtomicU64,
}

impl PodGenerators {
    /// Makes one pod per spot (`maker` names them, `owner` labels them),
    /// and waits until every one runs.
    pub(crate) fn start(
        kubectl: &Kubectl,
        maker: &str,
        run_id: i64,
        owner: &str,
        image: &str,
        spots: &[Spot],
        cpus: usize,
    ) -> Result<PodGenerators, GeneratorError> {
        let mut pods = Vec::new();
        for (k, spot) in spots.iter().enumerate() {
            let name = pod::pod_name(maker, "generator", k as u64 + 1);
            let manifest = manifest(&GeneratorSpec {
                name: &name,
                run_id,
                owner,
                image,
                node: &spot.node,
                cpus: spot.shared_cpus.is_none().then_some(cpus.max(1)),
            });
            kubectl.run(&["create", "-f", "-"], Some(&manifest.to_string()))?;
            pods.push(Pod {
                name,
                node: spot.node.clone(),
                shared_cpus: spot.shared_cpus.clone(),
            });
        }
        let dir =
            std::env::temp_dir().join(format!("shootout-shards-{}-{run_id}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| GeneratorError::Pod {
            pod: pods.first().map(|p| p.name.clone()).unwrap_or_default(),
            node: String::new(),
            why: format!("cannot make {}: {e}", dir.display()),
        })?;
        let made = PodGenerators {
            kubectl: kubectl.clone(),
            pods,
            dir,
            loads: AtomicU64::new(0),
        };
        for p in &made.pods {
            made.wait_running(p)?;
        }
        Ok(made)
    }

    fn wait_running(&self, p: &Pod) -> Result<(), GeneratorError> {
        let start = Instant::now();
        let fail = |why: String| GeneratorError::Pod {
            pod: p.name.clone(),
            node: p.node.clone(),
            why,
        };
        loop {
            let state = pod::state(&self.kubectl.json(&["get", "pod", &p.name])?);
            let last = match state {
                PodState::Running => return Ok(()),
                PodState::Stuck(why) => return Err(fail(why)),
                PodState::Ended(how) => return Err(fail(format!("it ended ({how})"))),
                PodState::Pending(what) => what,
            };
            if start.elapsed() >= READY_TIMEOUT {
                return Err(fail(format!(
                    "not running after {READY_TIMEOUT:.0?} ({last})"
                )));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Where each pod runs, shard 1 first.
    pub(crate) fn nodes(&self) -> Vec<String> {
        self.pods.iter().map(|p| p.node.clone()).collect()
    }

    /// `kubectl exec` of shard `k` of `n` of a load, its logs at `hlog`.
    fn exec_args(
        &self,
        k: usize,
        n: usize,
        start_at: Option<SystemTime>,
        hlog: &str,
    ) -> Vec<String> {
        let p = &self.pods[k];
        let mut args: Vec<String> = ["exec", "-i", &p.name, "-c", "load", "--"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(
            [
                "shootout",
                "load",
                "--plan-stdin",
                "--progress-lines",
                "--quiet",
                "--hdr-log",
                hlog,
                "-o",
                "json",
            ]
            .map(String::from),
        );
        if n > 1 {
            args.extend(["--shard".into(), format!("{}/{n}", k + 1)]);
        }
        if let Some(at) = start_at {
            let ms = at
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis();
            args.extend(["--start-at".into(), ms.to_string()]);
        }
        if let Some(cpus) = &p.shared_cpus {
            let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
            args.extend(["--cpus".into(), list.join(",")]);
        }
        args
    }

    fn fail(&self, k: usize, why: impl std::fmt::Display) -> EngineRefusal {
        let p = &self.pods[k];
        EngineRefusal::Generator(format!("pod {} on node {}: {why}", p.name, p.node))
    }

    /// Brings shard `k`'s interval log and sidecar here and reads them.
    fn fetch(&self, k: usize, hlog: &str) -> Result<shootout_shards::ShardLog, EngineRefusal> {
        let local = self.dir.join(format!("shard-{}.hlog", k + 1));
        for (from, to) in [
            (hlog.to_string(), local.clone()),
            (
                format!("{hlog}.json"),
                shootout_shards::sidecar_path(&local),
            ),
        ] {
            let text = self
                .kubectl
                .run(
                    &["exec", &self.pods[k].name, "-c", "load", "--", "cat", &from],
                    None,
                )
                .map_err(|e| self.fail(k, e))?;
            std::fs::write(&to, text)
                .map_err(|e| self.fail(k, format!("cannot write {}: {e}", to.display())))?;
        }
        shootout_shards::read(&local).map_err(|e| self.fail(k, e))
    }
}

/// A running shard: its `kubectl exec`, its stdin (closed to cancel) and
/// the thread reading its stderr.
struct Running<'s> {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    reader: std::thread::ScopedJoinHandle<'s, Vec<String>>,
}

/// How one shard's `kubectl exec` ended: its status and the last lines
/// it wrote to stderr that were not progress.
type Ended = (ExitStatus, Vec<String>);

impl PodGenerators {
    /// Starts shard `k` of `n` with `line` (the plan) on its stdin, and a
    /// thread adding its progress into `control`.
    fn spawn<'s>(
        &'s self,
        s: &'s std::thread::Scope<'s, '_>,
        k: usize,
        args: Vec<String>,
        line: &str,
        counts: &'s Mutex<Vec<Progress>>,
        control: &'s Control,
    ) -> Result<Running<'s>, EngineRefusal> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = self
            .kubectl
            .streaming(&args)
            .spawn()
            .map_err(|e| self.fail(k, self.kubectl.spawn_error(e)))?;
        let mut stdin = child.stdin.take();
        if let Some(i) = stdin.as_mut() {
            // A kubectl that ended at once closes its end; its exit and
            // stderr say why.
            let _ = i.write_all(line.as_bytes()).and_then(|()| i.flush());
        }
        let stderr = child.stderr.take();
        let reader = s.spawn(move || {
            let mut other = VecDeque::new();
            let Some(stderr) = stderr else {
                return Vec::new();
            };
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                match parse_progress(&line) {
                    Some(now) => count(counts, k, now, control),
                    None => {
                        other.push_back(line);
                        if other.len() > TAIL {
                            other.pop_front();
                        }
                    }
                }
            }
            other.into()
        });
        Ok(Running {
            child,
            stdin,
            reader,
        })
    }

    /// Waits for every shard; cancels them all (a `cancel` line, then
    /// their stdin closed) once `control` is cancelled, and kills them
    /// past `deadline`.
    fn supervise(
        shards: Vec<Running<'_>>,
        control: &Control,
        deadline: Instant,
    ) -> Result<Vec<Ended>, EngineRefusal> {
        let mut shards = shards;
        let (mut cancelled, mut late) = (false, false);
        loop {
            let done = shards
                .iter_mut()
                .all(|r| matches!(r.child.try_wait(), Ok(Some(_)) | Err(_)));
            if done {
                break;
            }
            if control.is_cancelled() && !cancelled {
                for r in &mut shards {
                    if let Some(mut i) = r.stdin.take() {
                        let _ = i.write_all(b"cancel\n");
                    }
                }
                cancelled = true;
            }
            if Instant::now() > deadline && !late {
                for r in &mut shards {
                    let _ = r.child.kill();
                }
                late = true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut out = Vec::new();
        for mut r in shards {
            drop(r.stdin.take());
            let status = r
                .child
                .wait()
                .map_err(|e| EngineRefusal::Generator(e.to_string()))?;
            out.push((status, r.reader.join().unwrap_or_default()));
        }
        if late {
            return Err(EngineRefusal::Generator(format!(
                "the load ran {OVERRUN:.0?} past its planned end in its pods; stopped"
            )));
        }
        Ok(out)
    }

    /// Runs the load in every pod and waits for them all.
    fn run_shards(
        &self,
        plan: &Plan,
        control: &Control,
        hlog: &str,
    ) -> Result<Vec<Ended>, EngineRefusal> {
        let n = self.pods.len();
        let start_at = (n > 1).then(|| SystemTime::now() + LEAD);
        let line = plan.to_json() + "\n";
        let planned = match plan.workload().stop().duration {
            Some(d) => d + plan.warmup() + plan.timeout() + OVERRUN,
            None => UNTIMED,
        };
        let deadline = Instant::now() + LEAD + planned;
        let counts = Mutex::new(vec![Progress::default(); n]);
        std::thread::scope(|s| {
            let mut shards = Vec::new();
            for k in 0..n {
                let args = self.exec_args(k, n, start_at, hlog);
                match self.spawn(s, k, args, &line, &counts, control) {
                    Ok(r) => shards.push(r),
                    Err(e) => {
                        for mut r in shards {
                            let _ = r.child.kill();
                            let _ = r.child.wait();
                        }
                        return Err(e);
                    }
                }
            }
            Self::supervise(shards, control, deadline)
        })
    }
}

impl Generator for PodGenerators {
    fn run(&self, plan: &Plan, control: &Arc<Control>) -> Result<LoadReport, EngineRefusal> {
        let seq = self.loads.fetch_add(1, Ordering::Relaxed) + 1;
        let hlog = format!("/tmp/shootout-load-{seq}.hlog");
        let ended = self.run_shards(plan, control, &hlog)?;
        let cancelled = control.is_cancelled();
        for (k, (status, tail)) in ended.iter().enumerate() {
            if !status.success() && !cancelled {
                return Err(self.fail(
                    k,
                    format!("shootout load ended with {status}:\n{}", tail.join("\n")),
                ));
            }
        }
        let logs = (0..self.pods.len())
            .map(|k| self.fetch(k, &hlog))
            .collect::<Result<Vec<_>, _>>()?;
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
