//! A [`Plan`] as one line of JSON, so that the plan a runner built reaches
//! a `shootout load` in another process (a generator pod) unchanged:
//! [`Plan::to_json`] writes every input of the plan, [`Plan::from_json`]
//! reads them back into a [`PlanBuilder`] whose `build` checks every rule
//! again and makes the derived parts (this shard's share, the TLS client,
//! the sessions' frames) anew, exactly as `to_builder().build()` does.
//!
//! The text goes through small raw structs, never the validated types
//! themselves: a workload is made by [`Workload::new`], a mix by
//! [`Mix::new`], its paths by [`Template::parse`], statuses and the media
//! type by their parsers and the shard by [`Shard::new`], so what is
//! refused from flags is refused from JSON, naming the same field. The
//! endpoint keeps the address it was resolved to where the plan was built
//! (nothing is resolved again; its reach was checked there). Rates and
//! levels travel as decimal strings, which parse back to the same `f64`
//! bit for bit; durations as serde's `{secs, nanos}`, byte strings (bodies)
//! as base64. A `format` names this layout, so a reader of another one
//! refuses it rather than guess.

use super::{Endpoint, Plan, PlanBuilder, WsOptions, FINEST_PROGRESS};
use crate::arrival::Arrival;
use crate::error::{PlanError, PlanField};
use crate::expect::{parse_media_type, BodyMatch, Expect, StatusMatch};
use crate::http_version::HttpVersion;
use crate::mix::{Mix, RequestKind};
use crate::request_spec::RequestSpec;
use crate::shard::Shard;
use crate::template::Template;
use crate::tls::{ClientCert, TlsOptions, Verify};
use crate::transport::Io;
use crate::workload::{Load, Stage, StageUnit, Stop, Workload};
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::{Duration, UNIX_EPOCH};

/// The layout [`Plan::to_json`] writes and [`Plan::from_json`] reads.
pub const FORMAT: &str = "shootout-plan/1";

impl Plan {
    /// Every input of this plan as one line of JSON (no newline in it):
    /// what [`Plan::from_json`] reads back. The derived parts are left
    /// out; `build` makes them again.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&PlanJson::of(self))
            .expect("a plan's JSON has no map keys and no value that fails to serialize")
    }

    /// The plan [`Plan::to_json`] wrote, as a builder: its `build` checks
    /// every rule again. A text that is not such JSON is refused naming
    /// [`PlanField::Json`]; a broken rule of a part names that part's
    /// field, as a builder's would.
    pub fn from_json(text: &str) -> Result<PlanBuilder, PlanError> {
        let raw: PlanJson = serde_json::from_str(text.trim())
            .map_err(|e| PlanError::invalid(PlanField::Json, e.to_string()))?;
        raw.into_builder()
    }
}

fn json_error(reason: impl Into<String>) -> PlanError {
    PlanError::invalid(PlanField::Json, reason)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanJson {
    format: String,
    url: String,
    /// Where the URL's host was resolved to when the plan was built.
    addr: SocketAddr,
    request: RequestJson,
    /// The whole load, before the shard's split.
    workload: WorkloadJson,
    /// `I/N`.
    shard: String,
    /// Since the Unix epoch.
    start_at: Option<Duration>,
    interval_histograms: bool,
    progress_every: Duration,
    warmup: Duration,
    timeout: Duration,
    threads: usize,
    cpus: Vec<usize>,
    keepalive: bool,
    pipeline: usize,
    expect: ExpectJson,
    mix: Option<Vec<KindJson>>,
    seed: u64,
    arrival: Arrival,
    tls: TlsJson,
    /// `epoll` or `uring`; None: the default where the plan runs.
    io: Option<String>,
    /// The summary's label: `1.1`, `2` or `websocket`.
    version: String,
    streams: usize,
    ws: WsJson,
}

impl PlanJson {
    fn of(p: &Plan) -> PlanJson {
        PlanJson {
            format: FORMAT.to_string(),
            url: p.endpoint.url.clone(),
            addr: p.endpoint.addr,
            request: RequestJson::of(&p.request),
            workload: WorkloadJson::of(&p.workload),
            shard: p.shard.to_string(),
            start_at: p
                .start_at
                .map(|t| t.duration_since(UNIX_EPOCH).unwrap_or_default()),
            interval_histograms: p.interval_histograms,
            progress_every: p.progress_every,
            warmup: p.warmup,
            timeout: p.timeout,
            threads: p.threads,
            cpus: p.cpus.clone(),
            keepalive: p.keepalive,
            pipeline: p.pipeline,
            expect: ExpectJson::of(&p.expect),
            mix: p
                .mix
                .as_ref()
                .map(|m| m.kinds().iter().map(KindJson::of).collect()),
            seed: p.seed,
            arrival: p.arrival,
            tls: TlsJson::of(&p.tls),
            io: p.io.map(|io| io.name().to_string()),
            version: p.version.label().to_string(),
            streams: p.streams,
            ws: WsJson::of(&p.ws),
        }
    }

    fn into_builder(self) -> Result<PlanBuilder, PlanError> {
        if self.format != FORMAT {
            return Err(json_error(format!(
                "format '{}' is not {FORMAT}: written by another version of shootout?",
                self.format
            )));
        }
        let endpoint = Endpoint::at(&self.url, self.addr)?;
        let version = match HttpVersion::from_label(&self.version) {
            Some(HttpVersion::WebSocket) if !endpoint.websocket => {
                return Err(json_error("version websocket needs a ws:// or wss:// URL"))
            }
            Some(v) => v,
            None => return Err(json_error(format!("'{}' is no version", self.version))),
        };
        let io = match self.io.as_deref().map(str::parse::<Io>) {
            None => None,
            Some(Ok(io)) => Some(io),
            Some(Err(e)) => return Err(json_error(format!("io: {e}"))),
        };
        let shard = Shard::parse(&self.shard).map_err(|e| json_error(e.to_string()))?;
        let mix = match self.mix {
            None => None,
            Some(kinds) => Some(mix(kinds)?),
        };
        let mut b = Plan::builder(endpoint, self.workload.into_workload()?)
            .request(self.request.into_spec()?)
            .shard(shard)
            .start_at(self.start_at.map(|d| UNIX_EPOCH + d))
            .interval_histograms(self.interval_histograms)
            .warmup(self.warmup)
            .timeout(self.timeout)
            .threads(self.threads)
            .cpus(self.cpus)
            .keepalive(self.keepalive)
            .pipeline(self.pipeline)
            .expect(self.expect.into_expect()?)
            .mix(mix)
            .seed(self.seed)
            .arrival(self.arrival)
            .tls(self.tls.into_options())
            .io_if(io)
            .websocket(self.ws.into_options());
        b.0.progress_every = self.progress_every.max(FINEST_PROGRESS);
        b.0.version = version;
        b.0.streams = self.streams;
        Ok(b)
    }
}

/// An `f64` as the decimal string Rust writes for it (the shortest that
/// parses back to the same value), since a JSON number may not.
#[derive(Debug, Clone, Copy)]
struct Exact(f64);

impl Serialize for Exact {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Exact, D::Error> {
        let text = String::deserialize(d)?;
        text.parse()
            .map(Exact)
            .map_err(|_| serde::de::Error::custom(format!("'{text}' is not a number")))
    }
}

/// Bytes as standard base64.
mod base64_bytes {
    use base64::Engine as _;

    pub fn serialize<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text: String = serde::Deserialize::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| serde::de::Error::custom(format!("not base64: {e}")))
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestJson {
    method: String,
    headers: Vec<(String, String)>,
    #[serde(with = "base64_bytes")]
    body: Vec<u8>,
}

impl RequestJson {
    fn of(r: &RequestSpec) -> RequestJson {
        RequestJson {
            method: r.method.clone(),
            headers: r.headers.clone(),
            body: r.body.clone(),
        }
    }

    /// A request that cannot be written on the wire as given (a CR or LF
    /// would end a line early) is refused here, as the flags refuse it.
    fn into_spec(self) -> Result<RequestSpec, PlanError> {
        let breaks = |s: &str| s.contains(['\r', '\n']);
        if !self.method.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(json_error(format!(
                "'{}' is not an HTTP method",
                self.method
            )));
        }
        if let Some((k, v)) = self.headers.iter().find(|(k, v)| {
            k.is_empty() || k.contains(char::is_whitespace) || breaks(k) || breaks(v)
        }) {
            return Err(json_error(format!("'{k}: {v}' is not a header")));
        }
        Ok(RequestSpec {
            method: self.method,
            headers: self.headers,
            body: self.body,
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadJson {
    load: LoadJson,
    requests: Option<u64>,
    duration: Option<Duration>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
enum LoadJson {
    Closed {
        connections: usize,
    },
    Open {
        rate: Exact,
        connections: usize,
    },
    Stages {
        /// `connections` or `rate`.
        unit: UnitJson,
        stages: Vec<StageJson>,
        connections: usize,
    },
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum UnitJson {
    Connections,
    Rate,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StageJson {
    duration: Duration,
    to: Exact,
}

impl WorkloadJson {
    fn of(w: &Workload) -> WorkloadJson {
        let load = match w.load() {
            Load::Closed { connections } => LoadJson::Closed {
                connections: *connections,
            },
            Load::Open { rate, connections } => LoadJson::Open {
                rate: Exact(*rate),
                connections: *connections,
            },
            Load::Stages {
                unit,
                stages,
                connections,
            } => LoadJson::Stages {
                unit: match unit {
                    StageUnit::Connections => UnitJson::Connections,
                    StageUnit::Rate => UnitJson::Rate,
                },
                stages: stages
                    .iter()
                    .map(|s| StageJson {
                        duration: s.duration,
                        to: Exact(s.to),
                    })
                    .collect(),
                connections: *connections,
            },
        };
        WorkloadJson {
            load,
            requests: w.stop().requests,
            duration: w.stop().duration,
        }
    }

    /// Checked by [`Workload::new`], whose error names the field.
    fn into_workload(self) -> Result<Workload, PlanError> {
        let load = match self.load {
            LoadJson::Closed { connections } => Load::Closed { connections },
            LoadJson::Open { rate, connections } => Load::Open {
                rate: rate.0,
                connections,
            },
            LoadJson::Stages {
                unit,
                stages,
                connections,
            } => Load::Stages {
                unit: match unit {
                    UnitJson::Connections => StageUnit::Connections,
                    UnitJson::Rate => StageUnit::Rate,
                },
                stages: stages
                    .into_iter()
                    .map(|s| Stage {
                        duration: s.duration,
                        to: s.to.0,
                    })
                    .collect(),
                connections,
            },
        };
        let stop = Stop {
            requests: self.requests,
            duration: self.duration,
        };
        Workload::new(load, stop)
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectJson {
    /// `200` or `2xx`, as the flags write them.
    status: Vec<String>,
    media_type: Option<String>,
    body: Option<BodyJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum BodyJson {
    Exact(#[serde(with = "base64_bytes")] Vec<u8>),
    Shape {
        #[serde(with = "base64_bytes")]
        prefix: Vec<u8>,
        #[serde(with = "base64_bytes")]
        suffix: Vec<u8>,
    },
}

impl ExpectJson {
    fn of(e: &Expect) -> ExpectJson {
        ExpectJson {
            status: e.status.iter().map(StatusMatch::to_string).collect(),
            media_type: e.media_type.clone(),
            body: e.body.as_ref().map(|b| match b {
                BodyMatch::Exact(bytes) => BodyJson::Exact(bytes.clone()),
                BodyMatch::Shape { prefix, suffix } => BodyJson::Shape {
                    prefix: prefix.clone(),
                    suffix: suffix.clone(),
                },
            }),
        }
    }

    fn into_expect(self) -> Result<Expect, PlanError> {
        let status = self
            .status
            .iter()
            .map(|s| StatusMatch::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| json_error(format!("expect: {e}")))?;
        let media_type = self
            .media_type
            .map(|m| parse_media_type(&m))
            .transpose()
            .map_err(|e| json_error(format!("expect: {e}")))?;
        Ok(Expect {
            status,
            media_type,
            body: self.body.map(|b| match b {
                BodyJson::Exact(bytes) => BodyMatch::Exact(bytes),
                BodyJson::Shape { prefix, suffix } => BodyMatch::Shape { prefix, suffix },
            }),
        })
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KindJson {
    name: String,
    weight: u32,
    /// The template as written, `{a..b}` ranges and all.
    path: String,
    request: RequestJson,
    expect: Option<ExpectJson>,
}

impl KindJson {
    fn of(k: &RequestKind) -> KindJson {
        KindJson {
            name: k.name.clone(),
            weight: k.weight,
            path: k.path.as_str().to_string(),
            request: RequestJson::of(&k.request),
            expect: k.expect.as_ref().map(ExpectJson::of),
        }
    }
}

/// The kinds, each path parsed and the whole checked by [`Mix::new`]; the
/// error names [`PlanField::Mix`] and the kind.
fn mix(kinds: Vec<KindJson>) -> Result<Mix, PlanError> {
    let bad = |i: usize, why: String| {
        PlanError::invalid(PlanField::Mix, format!("request {}: {why}", i + 1))
    };
    let kinds = kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            Ok(RequestKind {
                path: Template::parse(&k.path).map_err(|e| bad(i, format!("path: {e}")))?,
                request: k.request.into_spec().map_err(|e| bad(i, e.reason()))?,
                expect: match k.expect {
                    None => None,
                    Some(e) => Some(e.into_expect().map_err(|e| bad(i, e.reason()))?),
                },
                name: k.name,
                weight: k.weight,
            })
        })
        .collect::<Result<Vec<_>, PlanError>>()?;
    Mix::new(kinds).map_err(|e| PlanError::invalid(PlanField::Mix, e.to_string()))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsJson {
    verify: VerifyJson,
    /// The PEM files' paths, read where the plan is built (`build`).
    client_cert: Option<ClientCertJson>,
    resume: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum VerifyJson {
    SystemRoots,
    CaFile(String),
    Insecure,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientCertJson {
    cert: String,
    key: String,
}

impl TlsJson {
    fn of(t: &TlsOptions) -> TlsJson {
        let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
        TlsJson {
            verify: match &t.verify {
                Verify::SystemRoots => VerifyJson::SystemRoots,
                Verify::CaFile(p) => VerifyJson::CaFile(path(p)),
                Verify::Insecure => VerifyJson::Insecure,
            },
            client_cert: t.client_cert.as_ref().map(|c| ClientCertJson {
                cert: path(&c.cert),
                key: path(&c.key),
            }),
            resume: t.resume,
        }
    }

    fn into_options(self) -> TlsOptions {
        TlsOptions {
            verify: match self.verify {
                VerifyJson::SystemRoots => Verify::SystemRoots,
                VerifyJson::CaFile(p) => Verify::CaFile(p.into()),
                VerifyJson::Insecure => Verify::Insecure,
            },
            client_cert: self.client_cert.map(|c| ClientCert {
                cert: c.cert.into(),
                key: c.key.into(),
            }),
            resume: self.resume,
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WsJson {
    message_size: usize,
    binary: bool,
    hold: bool,
    ping_every: Option<Duration>,
}

impl WsJson {
    fn of(w: &WsOptions) -> WsJson {
        WsJson {
            message_size: w.message_size,
            binary: w.binary,
            hold: w.hold,
            ping_every: w.ping_every,
        }
    }

    fn into_options(self) -> WsOptions {
        WsOptions {
            message_size: self.message_size,
            binary: self.binary,
            hold: self.hold,
            ping_every: self.ping_every,
        }
    }
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
