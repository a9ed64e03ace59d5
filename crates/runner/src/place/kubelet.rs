//! A pod's CPU and memory as its node's kubelet reports them: the Summary
//! API (`/stats/summary`, the figures `kubectl top` and metrics-server
//! read), which gives each pod's cgroup totals: CPU time used so far
//! (`usageCoreNanoSeconds`) and resident anonymous memory (`rssBytes`).
//! Through the API server it is `/api/v1/nodes/NODE/proxy/stats/summary`;
//! the API server will not proxy to a node whose address is loopback
//! ("address not allowed"), so a loopback node (deploy/kubernetes/
//! local-cluster.sh) is read on its read-only port, 10255, which that
//! script binds to 127.0.0.1 like everything else.
//!
//! How fresh a figure is depends on the kubelet. With its stats from the
//! container runtime (feature gate `PodAndContainerStatsFromCRI`, which
//! the local cluster turns on) each read is the cgroup's counter at that
//! moment. With cAdvisor's (the default) it is the copy of the last
//! housekeeping, 10 s old at worst by default (1.4 to 3 s apart here even
//! at `--housekeeping-interval=1s`): too coarse for a CPU time over a
//! level of a few seconds. So a CPU figure stamped more than [`STALE_S`]
//! before the read is unavailable, with that reason, never a guess. A
//! fresh one is carried forward at the kubelet's own rate
//! (`usageNanoCores`) from when this meter first saw it to the moment it
//! is asked (the stamp is to the second only).

use super::kubectl::{KubeError, Kubectl};
use super::{Figure, Memory, Meter, Source};
use serde_json::Value;
use shootout_cgroup::Counters;
use std::net::{IpAddr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The kubelet's read-only port.
pub(crate) const READ_ONLY_PORT: u16 = 10255;
/// How long one read of the Summary is used before the next.
const REFRESH: Duration = Duration::from_millis(200);
/// The oldest a CPU figure may be, in whole seconds of its stamp.
pub(crate) const STALE_S: i64 = 2;

/// Why the Summary could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SummaryError {
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("GET http://{at}/stats/summary: {source}")]
    Http {
        at: SocketAddr,
        source: std::io::Error,
    },
    #[error("GET http://{at}/stats/summary answered {status}")]
    Status { at: SocketAddr, status: u16 },
    #[error("the kubelet's summary is not JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Where a node's Summary is read.
#[derive(Debug, Clone)]
pub(crate) enum SummaryAt {
    /// Through the API server's node proxy.
    Proxy { kubectl: Kubectl, node: String },
    /// The kubelet's read-only port on a loopback node.
    ReadOnly(SocketAddr),
}

impl SummaryAt {
    /// The way to a node's Summary: its read-only port when its address is
    /// loopback (the API server refuses to proxy there), else the proxy.
    pub(crate) fn for_node(kubectl: &Kubectl, node: &str, address: IpAddr) -> SummaryAt {
        if address.is_loopback() {
            SummaryAt::ReadOnly(SocketAddr::new(address, READ_ONLY_PORT))
        } else {
            SummaryAt::Proxy {
                kubectl: kubectl.clone(),
                node: node.to_string(),
            }
        }
    }

    /// How the run says it.
    pub(crate) fn describe(&self) -> String {
        match self {
            SummaryAt::Proxy { node, .. } => {
                format!("the API server's proxy to node {node}'s kubelet")
            }
            SummaryAt::ReadOnly(at) => format!("the kubelet's read-only port at {at}"),
        }
    }

    pub(crate) fn fetch(&self) -> Result<Value, SummaryError> {
        match self {
            SummaryAt::Proxy { kubectl, node } => {
                let path = format!("/api/v1/nodes/{node}/proxy/stats/summary");
                let text = kubectl.run(&["get", "--raw", &path], None)?;
                Ok(serde_json::from_str(&text)?)
            }
            SummaryAt::ReadOnly(at) => {
                let req = shootout_servers::http::Request::get("/stats/summary");
                let r = shootout_servers::http::send(*at, &req, Duration::from_secs(5))
                    .map_err(|source| SummaryError::Http { at: *at, source })?;
                if r.status != 200 {
                    return Err(SummaryError::Status {
                        at: *at,
                        status: r.status,
                    });
                }
                Ok(serde_json::from_slice(&r.body)?)
            }
        }
    }
}

/// One pod's figures in a Summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PodStats {
    /// CPU seconds its cgroup used so far.
    pub cpu_s: Option<f64>,
    /// Its CPU rate over the kubelet's last interval, in CPUs.
    pub cpu_rate: Option<f64>,
    /// When the kubelet took the CPU figure (Unix seconds).
    pub cpu_time: Option<i64>,
    /// Its cgroup's resident anonymous memory, in bytes.
    pub rss: Option<u64>,
}

/// The pod `namespace/name` in a Summary; None when it is not listed (not
/// yet, or no longer).
pub(crate) fn pod_stats(summary: &Value, namespace: &str, name: &str) -> Option<PodStats> {
    let pod = summary.get("pods")?.as_array()?.iter().find(|p| {
        let r = &p["podRef"];
        r["namespace"] == namespace && r["name"] == name
    })?;
    Some(PodStats {
        cpu_s: pod["cpu"]["usageCoreNanoSeconds"]
            .as_u64()
            .map(|n| n as f64 / 1e9),
        cpu_rate: pod["cpu"]["usageNanoCores"]
            .as_u64()
            .map(|n| n as f64 / 1e9),
        cpu_time: pod["cpu"]["time"]
            .as_str()
            .and_then(shootout_store::unix_from_rfc3339),
        rss: pod["memory"]["rssBytes"].as_u64(),
    })
}

/// A CPU figure and when this meter first saw it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    cpu_s: f64,
    rate: f64,
    at: Instant,
}

/// One read of the Summary for a pod: its figures, or why there are none
/// (the sentence a [`Figure::Unavailable`] carries).
#[derive(Debug, Clone)]
enum Read {
    Stats(PodStats),
    Missing(String),
}

/// What the meter last read.
#[derive(Debug, Default)]
struct State {
    read_at: Option<Instant>,
    last: Option<Read>,
    seen: Option<Seen>,
}

/// A pod's meter: its node's Summary, read at most every [`REFRESH`].
#[derive(Debug)]
pub(crate) struct PodMeter {
    pub at: SummaryAt,
    pub namespace: String,
    pub pod: String,
    state: Mutex<State>,
}

impl PodMeter {
    pub(crate) fn new(at: SummaryAt, namespace: &str, pod: &str) -> PodMeter {
        PodMeter {
            at,
            namespace: namespace.to_string(),
            pod: pod.to_string(),
            state: Mutex::new(State::default()),
        }
    }

    /// The latest figures (read again when [`REFRESH`] has passed), and
    /// the CPU figure as first seen.
    fn stats(&self) -> (Read, Option<Seen>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = st.read_at.is_some_and(|t| t.elapsed() < REFRESH);
        if let (true, Some(last)) = (fresh, &st.last) {
            return (last.clone(), st.seen);
        }
        let read = match self.at.fetch() {
            Ok(summary) => match pod_stats(&summary, &self.namespace, &self.pod) {
                Some(s) => Read::Stats(s),
                None => Read::Missing(format!(
                    "pod {}/{} is not in its kubelet's summary",
                    self.namespace, self.pod
                )),
            },
            Err(e) => Read::Missing(format!("{} ({})", e, self.at.describe())),
        };
        let now = Instant::now();
        if let Read::Stats(PodStats {
            cpu_s: Some(cpu_s),
            cpu_rate,
            ..
        }) = read
        {
            if st.seen.is_none_or(|s| s.cpu_s != cpu_s) {
                st.seen = Some(Seen {
                    cpu_s,
                    rate: cpu_rate.unwrap_or(0.0),
                    at: now,
                });
            }
        }
        st.read_at = Some(now);
        st.last = Some(read.clone());
        (read, st.seen)
    }
}

impl Meter for PodMeter {
    fn cpu(&self) -> Figure<f64> {
        match self.stats() {
            (Read::Stats(now), Some(seen)) => {
                if let Some(why) = stale(now.cpu_time, unix_now()) {
                    return Figure::Unavailable(why);
                }
                Figure::Had {
                    value: seen.cpu_s + seen.rate * seen.at.elapsed().as_secs_f64(),
                    from: Source::Kubelet,
                }
            }
            (Read::Stats(_), None) => {
                Figure::Unavailable("the kubelet's summary has no CPU time for it".into())
            }
            (Read::Missing(why), _) => Figure::Unavailable(why),
        }
    }

    fn memory(&self, _pss: bool) -> Memory {
        let rss = match self.stats().0 {
            Read::Stats(PodStats {
                rss: Some(value), ..
            }) => Figure::Had {
                value,
                from: Source::Kubelet,
            },
            Read::Stats(_) => Figure::Unavailable("the kubelet's summary has no RSS for it".into()),
            Read::Missing(why) => Figure::Unavailable(why),
        };
        // PSS needs the processes' smaps, which no kubelet API gives.
        Memory { rss, pss: None }
    }

    fn counters(&self) -> Option<Counters> {
        None
    }

    fn reset_peak(&self) {}
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Why a CPU figure stamped `stamp` is too old at `now` (Unix seconds), or
/// None when it is fresh enough.
fn stale(stamp: Option<i64>, now: i64) -> Option<String> {
    let Some(stamp) = stamp else {
        return Some("the kubelet's CPU figure has no time stamp".into());
    };
    let age = now - stamp;
    (age > STALE_S).then(|| {
        format!(
            "the kubelet's CPU figure was {age} s old when read (its stats are cAdvisor's copy \
             from its last housekeeping): too coarse for a level's CPU time; give the kubelet \
             the feature gate PodAndContainerStatsFromCRI, as deploy/kubernetes/local-cluster.sh does"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape kubelet v1.34 prints (`/stats/summary`, trimmed).
    const SUMMARY: &str = r#"{
      "node": {"nodeName": "127.0.0.1", "cpu": {"usageCoreNanoSeconds": 1}},
      "pods": [
        {"podRef": {"name": "other", "namespace": "shootout", "uid": "u1"},
         "cpu": {"time": "2026-11-29T18:00:00Z", "usageCoreNanoSeconds": 5},
         "memory": {"time": "2026-11-29T18:00:00Z", "rssBytes": 7}},
        {"podRef": {"name": "go-nethttp-1", "namespace": "shootout", "uid": "u2"},
         "cpu": {"time": "2026-11-29T18:00:00Z", "usageNanoCores": 3,
                 "usageCoreNanoSeconds": 2500000000},
         "memory": {"time": "2026-11-29T18:00:00Z", "workingSetBytes": 9000000,
                    "rssBytes": 6291456}},
        {"podRef": {"name": "starting", "namespace": "shootout", "uid": "u3"}}
      ]
    }"#;

    #[test]
    fn a_pods_figures_are_found_by_namespace_and_name() {
        let s: Value = serde_json::from_str(SUMMARY).unwrap();
        assert_eq!(
            pod_stats(&s, "shootout", "go-nethttp-1"),
            Some(PodStats {
                cpu_s: Some(2.5),
                cpu_rate: Some(3e-9),
                cpu_time: shootout_store::unix_from_rfc3339("2026-11-29T18:00:00Z"),
                rss: Some(6_291_456)
            })
        );
        assert_eq!(pod_stats(&s, "elsewhere", "go-nethttp-1"), None);
        // Listed before its first housekeeping: no figures, never zeros.
        assert_eq!(
            pod_stats(&s, "shootout", "starting"),
            Some(PodStats {
                cpu_s: None,
                cpu_rate: None,
                cpu_time: None,
                rss: None
            })
        );
    }

    #[test]
    fn a_loopback_node_is_read_on_its_read_only_port() {
        let k = Kubectl::for_options(&crate::KubeOptions::default());
        match SummaryAt::for_node(&k, "n", "127.0.0.2".parse().unwrap()) {
            SummaryAt::ReadOnly(at) => assert_eq!(at.to_string(), "127.0.0.2:10255"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            SummaryAt::for_node(&k, "n", "10.0.0.5".parse().unwrap()),
            SummaryAt::Proxy { .. }
        ));
    }

    /// cAdvisor's copy, seconds old, is refused; the runtime's, fresh, kept.
    #[test]
    fn a_stale_cpu_figure_is_refused_with_its_age() {
        assert_eq!(stale(Some(100), 101), None);
        assert_eq!(stale(Some(100), 102), None);
        let why = stale(Some(100), 107).unwrap();
        assert!(
            why.starts_with("the kubelet's CPU figure was 7 s old"),
            "{why}"
        );
        assert!(why.contains("PodAndContainerStatsFromCRI"), "{why}");
        assert!(stale(None, 1).is_some());
    }

    /// No kubelet where one is looked for: the figure says why, never 0.
    #[test]
    fn no_kubelet_gives_a_reason_not_a_zero() {
        let port = shootout_servers::free_ports::<1>().unwrap()[0];
        let at = SummaryAt::ReadOnly(SocketAddr::new([127, 0, 0, 1].into(), port));
        let m = PodMeter::new(at, "shootout", "x");
        match m.cpu() {
            Figure::Unavailable(why) => {
                assert!(why.contains("/stats/summary"), "{why}");
                assert!(why.contains("read-only port"), "{why}");
            }
            had => panic!("{had:?}"),
        }
        assert!(matches!(m.memory(false).rss, Figure::Unavailable(_)));
    }
}
