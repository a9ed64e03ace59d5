//! One load level of a scenario ([`Level`]), and the load tables of a study
//! turned into levels: the mode is inferred when not given (stages, then
//! rate, then closed), each mode's required keys are checked and named when
//! missing, and every level gets a label in the articles' style
//! (`n=1000 c=10`, `rate=100 c=10 30s`). A level may pipeline
//! (`pipeline = 16`, checked by the engine's rule).

use crate::locator::KeyError;
use crate::raw::{Mode, RawLoad, Unit};
use crate::resources::Resources;
use crate::secs::format_secs;
use crate::ws::WsLevel;
use serde::Serialize;
use shootout_contract::protocol::Protocol;
use shootout_engine::{
    check_pipeline, check_streams, HttpVersion, Load, PlanField, Stage, StageUnit, Stop, Workload,
};
use std::time::Duration;

/// One load level of a scenario, in the engine's terms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    /// e.g. `n=1000 c=10`.
    pub label: String,
    /// The load and its stop, checked by the engine's rules.
    #[serde(skip)]
    pub workload: Workload,
    pub keepalive: bool,
    /// Requests in flight per connection (HTTP/1.1 pipelining); 1 is none.
    pub pipeline: usize,
    /// `queries=Q` for the routes that take it (queries, updates).
    pub queries: Option<u32>,
    /// Cleartext, TLS, mutual TLS or HTTP/2 (over TLS, by ALPN).
    pub protocol: Protocol,
    /// HTTP/2 only: concurrent streams per connection (h2load's `-m`); 1
    /// for every other protocol.
    pub streams: usize,
    /// TLS without keep-alive only: each new connection resumes a session
    /// of an earlier one (tickets or IDs, as the server offers) instead of
    /// a full handshake (the engine's `--tls-resume`).
    pub tls_resume: bool,
    /// The level's budget, merged with its scenario's and study's
    /// ([`Resources::over`]).
    pub resources: Resources,
    /// WebSocket only (`protocol = "ws"`): what its messages are, or that
    /// it holds its connections idle.
    pub ws: Option<WsLevel>,
}

impl Level {
    pub fn load(&self) -> &Load {
        self.workload.load()
    }

    pub fn stop(&self) -> &Stop {
        self.workload.stop()
    }

    /// The label a level gets when the study gives none: its query count,
    /// if any, then its load, then its pipeline depth if it pipelines,
    /// then its protocol if it is not cleartext (with HTTP/2's streams per
    /// connection), and `resumed` when its handshakes resume (`q=20 c=64
    /// 4s`, `c=64 5s p=16`, `c=64 5s tls`, `c=4 5s h2 streams=16`, `c=16 5s
    /// tls resumed`); a WebSocket level its message (`c=64 5s ws 64B`), or
    /// its hold (`c=1000 hold 20s ws`).
    pub fn auto_label(&self) -> String {
        let mut label = match (self.ws, self.load(), self.stop().duration) {
            (Some(ws), Load::Closed { connections }, Some(d)) if ws.hold => {
                format!("c={connections} hold {}", format_secs(d.as_secs_f64()))
            }
            _ => auto_label(self.load(), self.stop()),
        };
        if let Some(q) = self.queries {
            label = format!("q={q} {label}");
        }
        if self.pipeline > 1 {
            label = format!("{label} p={}", self.pipeline);
        }
        if self.protocol.is_tls() {
            label = format!("{label} {}", self.protocol);
        }
        match self.protocol.version() {
            HttpVersion::Http1 | HttpVersion::WebSocket => {}
            HttpVersion::Http2 => label = format!("{label} streams={}", self.streams),
        }
        if self.tls_resume {
            label.push_str(" resumed");
        }
        if let Some(ws) = &self.ws {
            label.push_str(&ws.label_suffix());
        }
        label
    }
}

/// Turns one load table into a level, or names the bad key. This decides
/// the mode and which keys it needs; the rules on their values are the
/// engine's ([`Workload::new`]), reported under the study's key names.
pub(crate) fn level_from(
    l: &RawLoad,
    keepalive: bool,
    protocol: Protocol,
    mixed: bool,
) -> Result<Level, KeyError> {
    let mode = l.mode.unwrap_or(if l.stages.is_some() {
        Mode::Stages
    } else if l.rate.is_some() {
        Mode::Open
    } else {
        Mode::Closed
    });
    let keepalive = l.keepalive.unwrap_or(keepalive);
    let protocol = match &l.protocol {
        None => protocol,
        Some(word) => protocol_from(word)?,
    };
    let ws = crate::ws::level(l, protocol)?;
    let (load, stop) = match (l.hold, mode) {
        (Some(hold), _) => crate::ws::hold_load(l, hold.0)?,
        (None, Mode::Closed) => closed(l)?,
        (None, Mode::Open) => open(l)?,
        (None, Mode::Stages) => stages(l)?,
    };
    let workload =
        Workload::new(load, stop).map_err(|e| KeyError::new(study_key(e.field()), e.reason()))?;
    let pipeline = l.pipeline.unwrap_or(1);
    check_pipeline(pipeline, keepalive)
        .map_err(|e| KeyError::new(study_key(e.field()), e.reason()))?;
    if ws.is_some() && !keepalive {
        return Err(KeyError::new(
            "keepalive",
            "a WebSocket level keeps its connections open: remove keepalive = false",
        ));
    }
    let tls_resume = l.tls_resume.unwrap_or(false);
    check_tls_resume(tls_resume, protocol, keepalive)?;
    let streams = streams(l.streams, protocol, pipeline, keepalive, mixed)?;
    let mut level = Level {
        label: String::new(),
        workload,
        keepalive,
        pipeline,
        queries: l.queries,
        protocol,
        streams,
        tls_resume,
        ws,
        // Filled in by the caller, which can locate errors in the table.
        resources: Resources::default(),
    };
    level.label = l.label.clone().unwrap_or_else(|| level.auto_label());
    Ok(level)
}

/// A `protocol` word, or the error that lists the known ones.
pub(crate) fn protocol_from(word: &str) -> Result<Protocol, KeyError> {
    match Protocol::parse(word) {
        Some(p) => Ok(p),
        None => Err(KeyError::new(
            "protocol",
            format!("unknown protocol '{word}'; known: {}", Protocol::known()),
        )),
    }
}

/// A level's streams per connection: `streams` only with `protocol =
/// "h2"` (1 when not given, as h2load's `-m`), under the engine's HTTP/2
/// rules ([`check_streams`]).
fn streams(
    given: Option<usize>,
    protocol: Protocol,
    pipeline: usize,
    keepalive: bool,
    mixed: bool,
) -> Result<usize, KeyError> {
    if protocol != Protocol::H2 {
        return match given {
            Some(_) => Err(KeyError::new(
                "streams",
                format!("counts HTTP/2 streams per connection, but this level's protocol is '{protocol}'; add protocol = \"h2\""),
            )),
            None => Ok(1),
        };
    }
    let streams = given.unwrap_or(1);
    check_streams(streams, pipeline, keepalive, mixed)
        .map_err(|e| KeyError::new(study_key(e.field()), e.reason()))?;
    Ok(streams)
}

/// `tls_resume = true` needs a TLS protocol (there is no session to
/// resume in cleartext) and `keepalive = false` (a kept-alive connection
/// shakes hands once, in the warm-up, so nothing would be resumed).
fn check_tls_resume(resume: bool, protocol: Protocol, keepalive: bool) -> Result<(), KeyError> {
    if !resume {
        return Ok(());
    }
    if !protocol.is_tls() {
        return Err(KeyError::new(
            "tls_resume",
            format!("resumes TLS sessions, but this level's protocol is '{protocol}'; add protocol = \"tls\" or \"mtls\""),
        ));
    }
    if keepalive {
        return Err(KeyError::new(
            "tls_resume",
            "needs keepalive = false: a kept-alive connection shakes hands once, before the measured phase, so nothing is resumed",
        ));
    }
    Ok(())
}

/// The study key that sets an engine field.
fn study_key(field: PlanField) -> &'static str {
    match field {
        PlanField::Stop => "requests",
        other => other.as_str(),
    }
}

/// `connections` plus `requests` and/or `duration`.
fn closed(l: &RawLoad) -> Result<(Load, Stop), KeyError> {
    let connections = l.connections.ok_or_else(|| {
        KeyError::new("connections", "closed loop needs `connections`".to_string())
    })?;
    let duration = l.duration.map(|d| d.0);
    if l.requests.is_none() && duration.is_none() {
        return Err(KeyError::new(
            "requests",
            "closed loop needs `requests` or `duration`",
        ));
    }
    reject(l.rate.is_some(), "rate", "only open loops have a rate")?;
    reject(l.stages.is_some(), "stages", "use mode = \"stages\"")?;
    let stop = Stop {
        requests: l.requests,
        duration,
    };
    Ok((Load::Closed { connections }, stop))
}

/// `rate`, `connections` and `duration` (and optionally `requests`).
fn open(l: &RawLoad) -> Result<(Load, Stop), KeyError> {
    let rate = l
        .rate
        .ok_or_else(|| KeyError::new("rate", "open loop needs `rate` (requests/s)".to_string()))?;
    let connections = l
        .connections
        .ok_or_else(|| KeyError::new("connections", "open loop needs `connections`".to_string()))?;
    let duration = l
        .duration
        .ok_or_else(|| KeyError::new("duration", "open loop needs `duration`".to_string()))?;
    let stop = Stop {
        requests: l.requests,
        duration: Some(duration.0),
    };
    Ok((Load::Open { rate, connections }, stop))
}

/// A ramp of connections (the default unit) or of the rate; it lasts as
/// long as its stages, and a connection ramp opens as many as its peak.
fn stages(l: &RawLoad) -> Result<(Load, Stop), KeyError> {
    let raw_stages = l
        .stages
        .as_ref()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| KeyError::new("stages", "give at least one stage".to_string()))?;
    reject(
        l.duration.is_some(),
        "duration",
        "a staged load lasts as long as its stages",
    )?;
    let unit = match l.unit.unwrap_or(Unit::Connections) {
        Unit::Connections => StageUnit::Connections,
        Unit::Rate => StageUnit::Rate,
    };
    let stages: Vec<Stage> = raw_stages
        .iter()
        .map(|s| Stage {
            duration: s.duration.0,
            to: s.to,
        })
        .collect();
    let peak = stages.iter().map(|s| s.to).fold(0.0, f64::max);
    let connections = match (unit, l.connections) {
        (_, Some(c)) => c,
        (StageUnit::Connections, None) => (peak.ceil() as usize).max(1),
        (StageUnit::Rate, None) => {
            return Err(KeyError::new(
                "connections",
                "a rate ramp needs `connections`",
            ))
        }
    };
    // Each stage is at most 30 days, so the sum of a file's stages cannot
    // overflow; the engine checks the total against the limit.
    let total = stages.iter().map(|s| s.duration).sum();
    let stop = Stop {
        requests: l.requests,
        duration: Some(total),
    };
    let load = Load::Stages {
        unit,
        stages,
        connections,
    };
    Ok((load, stop))
}

fn reject(bad: bool, key: &'static str, why: &str) -> Result<(), KeyError> {
    if bad {
        Err(KeyError::new(key, why.to_string()))
    } else {
        Ok(())
    }
}

/// `n=1000 c=10`, `c=64 5s`, `rate=100 c=10 30s`, `c 0→100/60s →100/60s`.
pub fn auto_label(load: &Load, stop: &Stop) -> String {
    let secs = |d: Duration| format_secs(d.as_secs_f64());
    match load {
        Load::Closed { connections } => match (stop.requests, stop.duration) {
            (Some(n), None) => format!("n={n} c={connections}"),
            (None, Some(d)) => format!("c={connections} {}", secs(d)),
            (Some(n), Some(d)) => format!("n={n} c={connections} ≤{}", secs(d)),
            (None, None) => format!("c={connections}"),
        },
        Load::Open { rate, connections } => format!(
            "rate={} c={connections} {}",
            format_num(*rate),
            stop.duration.map(secs).unwrap_or_default()
        ),
        Load::Stages { unit, stages, .. } => {
            let prefix = if *unit == StageUnit::Rate {
                "rate"
            } else {
                "c"
            };
            let legs: Vec<String> = stages
                .iter()
                .map(|s| format!("→{}/{}", format_num(s.to), secs(s.duration)))
                .collect();
            format!("{prefix} 0{}", legs.join(" "))
        }
    }
}

fn format_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x}")
    }
}
