//! The validated description of one load run: where to send, what to send,
//! how fast, and when to stop. Everything here is checked before any thread
//! starts, so a bad value is reported by name and nothing is sent.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Errors in a plan, each naming the bad value.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("invalid URL '{0}': {1}")]
    Url(String, String),
    #[error("refusing to load '{0}': shootout only sends load to 127.0.0.1, localhost or [::1]")]
    NotLoopback(String),
    #[error("invalid value for {0}: {1}")]
    Value(&'static str, String),
}

/// The server to load: a loopback socket address plus the Host header and path.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub url: String,
    pub addr: SocketAddr,
    pub host_header: String,
    pub path: String,
}

impl Endpoint {
    /// Parses an `http://host[:port][/path]` URL. Only loopback hosts are accepted.
    pub fn parse(url: &str) -> Result<Endpoint, PlanError> {
        let bad = |why: &str| PlanError::Url(url.to_string(), why.to_string());
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(bad("https is not supported; use http://"));
        } else {
            return Err(bad("expected a URL starting with http://"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
            Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
            None => (rest, "/".to_string()),
        };
        if authority.is_empty() {
            return Err(bad("missing host"));
        }
        let (host, port) = split_host_port(authority).ok_or_else(|| bad("bad host or port"))?;
        let is_loopback_name = host.eq_ignore_ascii_case("localhost");
        let addrs: Vec<SocketAddr> = (host.trim_matches(['[', ']']), port)
            .to_socket_addrs()
            .map_err(|e| bad(&format!("cannot resolve host: {e}")))?
            .collect();
        // Prefer IPv4 for localhost, as most servers bind 127.0.0.1 only.
        let addr = addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or_else(|| addrs.first())
            .copied()
            .ok_or_else(|| bad("host resolves to no address"))?;
        if !(addr.ip().is_loopback()
            && (is_loopback_name || addrs.iter().all(|a| a.ip().is_loopback())))
        {
            return Err(PlanError::NotLoopback(url.to_string()));
        }
        Ok(Endpoint {
            url: url.to_string(),
            addr,
            host_header: authority.to_string(),
            path,
        })
    }
}

fn split_host_port(authority: &str) -> Option<(&str, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = &authority[..end + 2];
        let port = match &rest[end + 1..] {
            "" => 80,
            p => p.strip_prefix(':')?.parse().ok()?,
        };
        return Some((host, port));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) => Some((h, p.parse().ok()?)),
        None => Some((authority, 80)),
    }
}

/// What every request looks like. Encoded once into bytes before the run.
#[derive(Debug, Clone, Default)]
pub struct RequestSpec {
    pub method: String,
    /// Extra headers, in order. `Host`, `Content-Length` and `Connection`
    /// are added by the engine unless given here.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A unit of a ramp: what the stage's `target` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageUnit {
    Connections,
    /// Requests per second.
    Rate,
}

/// One leg of a piecewise-linear ramp: move from the previous level to
/// `to` over `duration`. The first stage starts from 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub to: f64,
}

/// How load is offered.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// `connections` connections; each sends its next request when the last answer arrives.
    Closed { connections: usize },
    /// A constant arrival rate (requests/s) spread over `connections`;
    /// latency is measured from each request's intended send time.
    Open { rate: f64, connections: usize },
    /// A piecewise-linear ramp of the connection count (closed loop, up to
    /// `connections`) or of the rate (open loop over `connections`).
    Stages {
        unit: StageUnit,
        stages: Vec<Stage>,
        connections: usize,
    },
}

impl Load {
    /// The largest number of connections this load may open.
    pub fn max_connections(&self) -> usize {
        match self {
            Load::Closed { connections }
            | Load::Open { connections, .. }
            | Load::Stages { connections, .. } => *connections,
        }
    }

    /// `"closed"`, `"open"` or `"stages"`.
    pub fn mode_name(&self) -> &'static str {
        match self {
            Load::Closed { .. } => "closed",
            Load::Open { .. } => "open",
            Load::Stages { .. } => "stages",
        }
    }

    /// True when latency is measured from intended send times.
    pub fn is_open_loop(&self) -> bool {
        matches!(
            self,
            Load::Open { .. }
                | Load::Stages {
                    unit: StageUnit::Rate,
                    ..
                }
        )
    }
}

/// When the measured phase ends: after `requests` requests in total, at the
/// `duration` deadline, whichever comes first. At least one is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
}

/// A complete, validated load run.
#[derive(Debug, Clone)]
pub struct Plan {
    pub endpoint: Endpoint,
    pub request: RequestSpec,
    pub load: Load,
    pub stop: Stop,
    pub warmup: Duration,
    pub timeout: Duration,
    pub threads: usize,
    /// CPUs to pin worker threads to (round-robin); empty means no pinning.
    pub cpus: Vec<usize>,
    pub keepalive: bool,
}

impl Plan {
    /// Checks cross-field rules. Called by [`crate::run`] too.
    pub fn validate(&self) -> Result<(), PlanError> {
        let conns = self.load.max_connections();
        if conns == 0 {
            return Err(PlanError::Value("connections", "must be at least 1".into()));
        }
        if self.threads == 0 {
            return Err(PlanError::Value("threads", "must be at least 1".into()));
        }
        if self.stop.requests.is_none() && self.stop.duration.is_none() {
            return Err(PlanError::Value(
                "stop",
                "give a request count or a duration".into(),
            ));
        }
        if self.stop.requests == Some(0) {
            return Err(PlanError::Value("requests", "must be at least 1".into()));
        }
        if self.stop.duration == Some(Duration::ZERO) {
            return Err(PlanError::Value("duration", "must be more than 0".into()));
        }
        let allowed = crate::affinity::allowed_cpus();
        if let Some(cpu) = self.cpus.iter().find(|c| !allowed.contains(c)) {
            return Err(PlanError::Value(
                "cpus",
                format!("CPU {cpu} is not available to this process (allowed: {allowed:?})"),
            ));
        }
        if self.timeout.is_zero() {
            return Err(PlanError::Value("timeout", "must be more than 0".into()));
        }
        match &self.load {
            Load::Open { rate, .. } if !(rate.is_finite() && *rate > 0.0) => {
                return Err(PlanError::Value(
                    "rate",
                    format!("{rate} is not a positive rate"),
                ));
            }
            Load::Stages {
                stages,
                unit,
                connections,
            } => {
                if stages.is_empty() {
                    return Err(PlanError::Value("stages", "no stages given".into()));
                }
                for s in stages {
                    if !(s.to.is_finite() && s.to >= 0.0) {
                        return Err(PlanError::Value("stages", format!("bad level {}", s.to)));
                    }
                    if *unit == StageUnit::Connections && s.to > *connections as f64 {
                        return Err(PlanError::Value(
                            "stages",
                            format!("level {} exceeds {} connections", s.to, connections),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The worker threads actually used: never more than the connections.
    pub fn effective_threads(&self) -> usize {
        self.threads.min(self.load.max_connections()).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_loopback_urls() {
        let t = Endpoint::parse("http://127.0.0.1:8080/json?x=1").unwrap();
        assert_eq!(t.addr.port(), 8080);
        assert_eq!(t.path, "/json?x=1");
        assert_eq!(t.host_header, "127.0.0.1:8080");
        let t = Endpoint::parse("http://localhost:9").unwrap();
        assert_eq!(t.path, "/");
        assert!(t.addr.ip().is_loopback());
        let t = Endpoint::parse("http://[::1]:81/").unwrap();
        assert!(t.addr.is_ipv6());
    }

    #[test]
    fn refuses_non_loopback_and_bad_urls() {
        assert!(matches!(
            Endpoint::parse("http://10.0.0.1:80/"),
            Err(PlanError::NotLoopback(_))
        ));
        assert!(Endpoint::parse("https://127.0.0.1/").is_err());
        assert!(Endpoint::parse("127.0.0.1:80").is_err());
        assert!(Endpoint::parse("http://127.0.0.1:notaport/").is_err());
    }
}
