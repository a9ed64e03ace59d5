//! What a cell of `compare` is: the target, the scenario, the load (closed
//! or open loop, connections, pipelining, HTTP/2 streams, offered rate,
//! keep-alive, HTTP and TLS versions, client certificate) and the
//! resources (CPU quota, memory limit, how many CPUs the servers were
//! pinned to). Two runs' cells pair only when their keys are equal, so two
//! different workloads are never compared; the level's position in its
//! study and its length (duration or request count) are not part of it.

use shootout_store::{Measurement, Run};

/// The load of a cell as the generator ran it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Load {
    /// `closed` or `open`.
    pub mode: String,
    pub connections: usize,
    pub pipeline: usize,
    pub streams: Option<usize>,
    /// The offered rate in thousandths of a request per second (open loop).
    pub rate_milli: Option<u64>,
    pub keepalive: bool,
    /// `1.1` or `2`.
    pub http: String,
    /// The TLS version negotiated; None over cleartext.
    pub tls: Option<String>,
    pub client_cert: bool,
}

/// The resources a cell's server had.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Resources {
    /// `resources.cpus` in thousandths of a CPU; None: no quota.
    pub cpus_milli: Option<u64>,
    /// `resources.memory` in whole MiB; None: no limit.
    pub memory_mib: Option<u64>,
    /// How many CPUs the run pinned the servers to (0: not pinned).
    pub pinned_cpus: usize,
}

/// One cell: what two runs must share for their figures to be compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    pub target: String,
    pub scenario: String,
    pub load: Load,
    pub resources: Resources,
}

fn milli(v: f64) -> u64 {
    (v * 1000.0).round().max(0.0) as u64
}

impl CellKey {
    /// The key of a measurement of `run`.
    pub fn of(run: &Run, m: &Measurement) -> CellKey {
        let s = &m.summary;
        CellKey {
            target: m.target.clone(),
            scenario: m.scenario.clone(),
            load: Load {
                mode: s.mode.clone(),
                connections: s.connections,
                pipeline: s.pipeline,
                streams: s.streams,
                rate_milli: s.rate.map(milli),
                keepalive: s.keepalive,
                http: s.protocol.http.clone(),
                tls: s.protocol.tls.clone(),
                client_cert: s.protocol.client_cert,
            },
            resources: Resources {
                cpus_milli: m.resources_cpus.map(milli),
                memory_mib: m.resources_memory_mib.map(|v| v.round().max(0.0) as u64),
                pinned_cpus: run.pinning.server_cpus.len(),
            },
        }
    }

    /// The load and resources in words, e.g. `closed c=16, HTTP/1.1` or
    /// `open 2000 req/s c=64, HTTP/2 over TLS 1.3, 0.5 CPUs`.
    pub fn describe(&self) -> String {
        let l = &self.load;
        let mut s = l.mode.clone();
        if let Some(r) = l.rate_milli {
            s.push_str(&format!(" {} req/s", crate::metric::num(r as f64 / 1000.0)));
        }
        s.push_str(&format!(" c={}", l.connections));
        if l.pipeline > 1 {
            s.push_str(&format!(" pipeline={}", l.pipeline));
        }
        if let Some(n) = l.streams {
            s.push_str(&format!(" streams={n}"));
        }
        s.push_str(&format!(", HTTP/{}", l.http));
        match (&l.tls, l.client_cert) {
            (Some(v), false) => s.push_str(&format!(" over TLS {v}")),
            (Some(v), true) => s.push_str(&format!(" over mTLS {v}")),
            (None, _) => {}
        }
        if !l.keepalive {
            s.push_str(", new connections");
        }
        let r = &self.resources;
        if let Some(c) = r.cpus_milli {
            s.push_str(&format!(", {} CPUs", crate::metric::num(c as f64 / 1000.0)));
        }
        if let Some(m) = r.memory_mib {
            s.push_str(&format!(", {m} MiB"));
        }
        if r.pinned_cpus > 0 {
            s.push_str(&format!(", pinned to {} CPU(s)", r.pinned_cpus));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(connections: usize, rate: Option<u64>) -> CellKey {
        CellKey {
            target: "t".into(),
            scenario: "json".into(),
            load: Load {
                mode: if rate.is_some() { "open" } else { "closed" }.into(),
                connections,
                pipeline: 1,
                streams: None,
                rate_milli: rate,
                keepalive: true,
                http: "1.1".into(),
                tls: None,
                client_cert: false,
            },
            resources: Resources {
                cpus_milli: None,
                memory_mib: None,
                pinned_cpus: 1,
            },
        }
    }

    #[test]
    fn different_loads_are_different_cells() {
        assert_eq!(key(16, None), key(16, None));
        assert_ne!(key(16, None), key(32, None));
        assert_ne!(key(16, None), key(16, Some(2_000_000)));
        assert_eq!(
            key(32, Some(2_000_000)).describe(),
            "open 2000 req/s c=32, HTTP/1.1, pinned to 1 CPU(s)"
        );
    }
}
