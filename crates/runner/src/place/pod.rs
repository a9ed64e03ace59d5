//! A contestant's Pod, as data: the manifest one start of a target gets
//! (its image, `hostNetwork`, Guaranteed QoS with whole CPUs, the node it
//! must run on, the labels a cleanup selects by) and what a Pod's status
//! says about the start (running, ended and how, or stuck and why), and
//! whether the processes inside it are all stopped ([`stopped`], from
//! their `/proc/PID/stat` lines). Pure functions over text, so every rule
//! here is tested without a cluster.

use serde_json::{json, Value};

/// Labels every object of shootout's carries, and what selects them.
pub(crate) const APP: &str = "app.kubernetes.io/name";
pub(crate) const COMPONENT: &str = "app.kubernetes.io/component";
pub(crate) const RUN: &str = "shootout.dev/run";
pub(crate) const TARGET: &str = "shootout.dev/target";
/// The machine and process that made it, so a later run can tell one
/// whose maker died (`<hostname>.<pid>`, cut to a label's 63 characters).
pub(crate) const OWNER: &str = "shootout.dev/owner";
/// The node label that places each role.
pub(crate) const ROLE: &str = "shootout.dev/role";
/// SPEC.md's grace between SIGTERM and SIGKILL.
pub(crate) const GRACE_S: u64 = 5;
/// Memory a contestant's pod gets when its study sets none.
pub(crate) const DEFAULT_MEMORY: u64 = 2 << 30;

/// What one start's Pod is made of.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PodSpec<'a> {
    pub name: &'a str,
    pub run_id: i64,
    pub owner: &'a str,
    pub target: &'a str,
    pub image: &'a str,
    /// The node it must run on (`kubernetes.io/hostname`).
    pub node: &'a str,
    /// Whole CPUs, requested and limited alike.
    pub cpus: usize,
    pub memory: u64,
    /// PORT, HOST, SERVER_CPUS and the rest, in order.
    pub env: &'a [(String, String)],
}

/// A label value from any text: letters, digits, `-`, `_` and `.`, at most
/// 63 characters, starting and ending with a letter or digit.
pub(crate) fn label_value(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    clean
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string()
}

/// A Pod name (a DNS label: lowercase letters, digits and `-`, at most 63)
/// for start `n` of `target` by `maker` (`p<pid>-r<run>`: two shootouts
/// on one cluster, each with its own results store and so perhaps the same
/// run number, never name a pod alike).
pub(crate) fn pod_name(maker: &str, target: &str, n: u64) -> String {
    let t: String = target
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let tail = format!("-{n}");
    let head = format!("shootout-{maker}-");
    let room = 63 - head.len() - tail.len();
    let t: String = t.chars().take(room).collect();
    format!("{head}{}{tail}", t.trim_matches('-'))
}

/// The labels of a run's object: shootout's, its `component`, its run and
/// its maker.
pub(crate) fn labels(component: &str, run_id: i64, owner: &str) -> Value {
    json!({
        APP: "shootout",
        COMPONENT: component,
        RUN: run_id.to_string(),
        OWNER: label_value(owner),
    })
}

/// A Pod of a run on `node`: the node's own network (`hostNetwork`, with
/// the cluster's DNS), no service account token or service links, never
/// restarted, `grace_s` between SIGTERM and SIGKILL, `container` its one
/// container.
pub(crate) fn host_pod(
    name: &str,
    labels: Value,
    node: &str,
    grace_s: u64,
    container: Value,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "hostNetwork": true,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "automountServiceAccountToken": false,
            "enableServiceLinks": false,
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": grace_s,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [container]
        }
    })
}

/// The Pod manifest of one start.
pub(crate) fn manifest(p: &PodSpec<'_>) -> Value {
    let env: Vec<Value> = p
        .env
        .iter()
        .map(|(k, v)| json!({"name": k, "value": v}))
        .collect();
    let resources = json!({"cpu": p.cpus.to_string(), "memory": p.memory.to_string()});
    let mut labels = labels("contestant", p.run_id, p.owner);
    labels[TARGET] = json!(label_value(p.target));
    let container = json!({
        "name": "server",
        "image": p.image,
        "imagePullPolicy": "IfNotPresent",
        "env": env,
        "resources": {"requests": resources, "limits": resources},
    });
    host_pod(p.name, labels, p.node, GRACE_S, container)
}

/// What a Pod's status says about its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PodState {
    /// Not running yet, and nothing says it cannot.
    Pending(String),
    /// Its container runs.
    Running,
    /// Its container ended: "exit code 3 (Error)", "signal 9 (OOMKilled)".
    Ended(String),
    /// It will not run without a change: unschedulable, image not there,
    /// a bad configuration (the kubelet's or scheduler's own words).
    Stuck(String),
}

/// Waiting reasons that no wait cures.
const STUCK: [&str; 6] = [
    "ErrImagePull",
    "ImagePullBackOff",
    "ErrImageNeverPull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
];

/// Reads a Pod's status.
pub(crate) fn state(pod: &Value) -> PodState {
    let status = &pod["status"];
    let container = status["containerStatuses"]
        .as_array()
        .and_then(|c| c.first());
    if let Some(c) = container {
        let s = &c["state"];
        if s.get("running").is_some() {
            return PodState::Running;
        }
        if let Some(t) = s.get("terminated") {
            let reason = t["reason"].as_str().unwrap_or("");
            let how = match (t["signal"].as_i64(), t["exitCode"].as_i64()) {
                (Some(sig), _) if sig > 0 => format!("signal {sig}"),
                (_, Some(code)) if code > 128 => {
                    format!("exit code {code} (signal {})", code - 128)
                }
                (_, Some(code)) => format!("exit code {code}"),
                _ => "an unknown end".to_string(),
            };
            return PodState::Ended(if reason.is_empty() {
                how
            } else {
                format!("{how}, {reason}")
            });
        }
        if let Some(w) = s.get("waiting") {
            let reason = w["reason"].as_str().unwrap_or("waiting");
            let message = w["message"].as_str().unwrap_or("");
            let said = if message.is_empty() {
                reason.to_string()
            } else {
                format!("{reason}: {message}")
            };
            return if STUCK.contains(&reason) {
                PodState::Stuck(said)
            } else {
                PodState::Pending(said)
            };
        }
    }
    match status["phase"].as_str() {
        Some("Failed") | Some("Succeeded") => {
            return PodState::Ended(format!(
                "pod {}{}",
                status["phase"].as_str().unwrap_or(""),
                status["reason"]
                    .as_str()
                    .map(|r| format!(", {r}"))
                    .unwrap_or_default()
            ))
        }
        _ => {}
    }
    let unschedulable = status["conditions"].as_array().and_then(|cs| {
        cs.iter().find(|c| {
            c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable"
        })
    });
    if let Some(c) = unschedulable {
        return PodState::Stuck(format!(
            "not scheduled: {}",
            c["message"].as_str().unwrap_or("Unschedulable")
        ));
    }
    PodState::Pending(
        status["phase"]
            .as_str()
            .unwrap_or("no status yet")
            .to_string(),
    )
}

/// The shell a pod's processes are read with: its own pid, then every
/// process's `/proc/PID/stat` line (the pod's own PID namespace).
pub(crate) const PROCESSES: &str = "echo $$; cat /proc/[0-9]*/stat 2>/dev/null";

/// How many of a pod's processes are stopped (SIGSTOP, a debugger: state
/// `T` or `t`), when every one is; None when one can run or none is left.
/// `text` is [`PROCESSES`]'s output: the reading shell and its children
/// (`cat`) are not the pod's.
pub(crate) fn stopped(text: &str) -> Option<usize> {
    let mut lines = text.lines();
    let reader: u64 = lines.next()?.trim().parse().ok()?;
    let mut count = 0;
    for line in lines {
        // `PID (COMM) STATE PPID ...`; COMM may hold spaces and parens.
        let Some((head, tail)) = line.rsplit_once(") ") else {
            continue;
        };
        let pid: u64 = head.split(' ').next()?.parse().ok()?;
        let mut rest = tail.split(' ');
        let (state, ppid) = (rest.next()?, rest.next()?.parse::<u64>().ok()?);
        if pid == reader || ppid == reader {
            continue;
        }
        if !matches!(state, "T" | "t") {
            return None;
        }
        count += 1;
    }
    (count > 0).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(env: &[(String, String)]) -> PodSpec<'_> {
        PodSpec {
            name: "shootout-r7-go-nethttp-1",
            run_id: 7,
            owner: "host/1.2345",
            target: "go-nethttp",
            image: "localhost/go-nethttp:e2e",
            node: "127.0.0.1",
            cpus: 1,
            memory: DEFAULT_MEMORY,
            env,
        }
    }

    /// Guaranteed QoS needs requests equal to limits for CPU and memory,
    /// and whole CPUs for the static CPU manager to give exclusive ones.
    #[test]
    fn a_start_is_a_guaranteed_host_network_pod_on_its_node() {
        let env = vec![("PORT".to_string(), "18080".to_string())];
        let m = manifest(&spec(&env));
        let s = &m["spec"];
        assert_eq!(s["hostNetwork"], true);
        assert_eq!(s["restartPolicy"], "Never");
        assert_eq!(s["terminationGracePeriodSeconds"], 5);
        assert_eq!(s["nodeSelector"]["kubernetes.io/hostname"], "127.0.0.1");
        let c = &s["containers"][0];
        assert_eq!(c["resources"]["requests"], c["resources"]["limits"]);
        assert_eq!(c["resources"]["limits"]["cpu"], "1");
        assert_eq!(c["resources"]["limits"]["memory"], "2147483648");
        assert_eq!(c["env"][0]["name"], "PORT");
        assert_eq!(c["env"][0]["value"], "18080");
        let l = &m["metadata"]["labels"];
        assert_eq!(l[RUN], "7");
        assert_eq!(l[OWNER], "host-1.2345");
        assert_eq!(l[COMPONENT], "contestant");
    }

    #[test]
    fn names_and_labels_are_what_the_api_accepts() {
        assert_eq!(
            pod_name("p77-r12", "Python_FastAPI", 3),
            "shootout-p77-r12-python-fastapi-3"
        );
        let long = pod_name("p77-r1", &"x".repeat(100), 10);
        assert_eq!(long.len(), 63, "{long}");
        assert!(long.ends_with("-10"));
        assert_eq!(label_value("--a b--"), "a-b");
        assert_eq!(label_value(&"y".repeat(80)).len(), 63);
    }

    fn pod(status: &str) -> Value {
        serde_json::from_str(&format!("{{\"status\": {status}}}")).unwrap()
    }

    #[test]
    fn a_pod_is_frozen_only_when_every_process_but_the_reader_is_stopped() {
        let reader = "12\n12 (sh) S 0 12 12\n13 (cat) R 12 12 12\n";
        let frozen = format!("{reader}1 (go-nethttp) T 0 1 1\n7 (a) b) t 1 1 1\n");
        assert_eq!(stopped(&frozen), Some(2));
        let one_runs = format!("{reader}1 (go-nethttp) T 0 1 1\n7 (worker) S 1 1 1\n");
        assert_eq!(stopped(&one_runs), None);
        assert_eq!(stopped(reader), None, "nothing but the reader: not frozen");
        assert_eq!(stopped(""), None);
    }

    #[test]
    fn a_status_says_running_ended_stuck_or_pending() {
        let running = pod(r#"{"phase":"Running","containerStatuses":[{"state":{"running":{}}}]}"#);
        assert_eq!(state(&running), PodState::Running);
        let ended = pod(
            r#"{"phase":"Failed","containerStatuses":[{"state":{"terminated":{"exitCode":3,"reason":"Error"}}}]}"#,
        );
        assert_eq!(state(&ended), PodState::Ended("exit code 3, Error".into()));
        let oom = pod(
            r#"{"containerStatuses":[{"state":{"terminated":{"exitCode":137,"reason":"OOMKilled"}}}]}"#,
        );
        assert_eq!(
            state(&oom),
            PodState::Ended("exit code 137 (signal 9), OOMKilled".into())
        );
        let image = pod(
            r#"{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ErrImageNeverPull","message":"image \"x\" is not present"}}}]}"#,
        );
        assert_eq!(
            state(&image),
            PodState::Stuck("ErrImageNeverPull: image \"x\" is not present".into())
        );
        let creating = pod(
            r#"{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ContainerCreating"}}}]}"#,
        );
        assert_eq!(
            state(&creating),
            PodState::Pending("ContainerCreating".into())
        );
        let unsched = pod(
            r#"{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes are available: 1 Insufficient cpu."}]}"#,
        );
        assert_eq!(
            state(&unsched),
            PodState::Stuck("not scheduled: 0/1 nodes are available: 1 Insufficient cpu.".into())
        );
        assert_eq!(state(&pod("{}")), PodState::Pending("no status yet".into()));
    }
}
