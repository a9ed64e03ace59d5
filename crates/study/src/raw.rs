//! The study file exactly as written: serde structures that reject unknown
//! keys, plus the small value types (durations, CPU lists)
//! whose own deserialisers reject bad values so that the TOML parser can
//! point at the offending line.

use crate::resources::RawResources;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use shootout_contract::spec::ScenarioName;
use shootout_engine::units;
use std::fmt;
use std::time::Duration;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStudy {
    pub name: Spanned<String>,
    pub description: String,
    pub source: String,
    pub targets: Spanned<RawTargets>,
    #[serde(default)]
    pub repetitions: Option<Spanned<u32>>,
    #[serde(default)]
    pub order: Option<Order>,
    #[serde(default)]
    pub seed: Option<Spanned<u64>>,
    #[serde(default)]
    pub precision: Option<Spanned<RawPrecision>>,
    #[serde(default)]
    pub margin: Option<Spanned<String>>,
    #[serde(default)]
    pub resolve: Option<Spanned<RawResolve>>,
    #[serde(default)]
    pub restart: Option<Restart>,
    #[serde(default)]
    pub warmup: Option<Spanned<RawWarmup>>,
    #[serde(default)]
    pub timeout: Option<Dur>,
    #[serde(default)]
    pub threads: Option<Spanned<usize>>,
    #[serde(default)]
    pub cpus: Option<Spanned<RawCpus>>,
    #[serde(default)]
    pub metrics: Vec<Spanned<String>>,
    #[serde(default)]
    pub db_pool_size: Option<Spanned<u32>>,
    #[serde(default)]
    pub resources: Option<Spanned<RawResources>>,
    pub scenario: Vec<Spanned<RawScenario>>,
    #[serde(default)]
    pub published: Option<toml::Table>,
}

/// `targets = "all"` or a list of target names.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawTargets {
    All(String),
    List(Vec<String>),
}

/// `cpus = "auto"` or `cpus = { server = [0], generator = [1] }`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawCpus {
    Auto(String),
    Split {
        server: Vec<usize>,
        generator: Vec<usize>,
    },
}

/// In which order targets are measured within a repetition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Repetition `r` starts from target `r mod len`.
    #[default]
    Rotate,
    /// Always the listed order.
    Fixed,
    /// A fresh random order of the targets in every repetition, drawn from
    /// the study's `seed` (or one the run picks and records): randomized
    /// multiple interleaved trials (Abedi and Brecht, ICPE 2017), so that a
    /// slow drift of the machine lands on no target more than another.
    Random,
}

/// How often a server is restarted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Restart {
    /// A fresh server for every scenario of every repetition (its levels share it).
    #[default]
    PerScenario,
    /// A fresh server for every repetition; all scenarios run on it.
    PerRepetition,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawScenario {
    /// A SPEC.md route; a scenario with a `mix` has none (its kinds say
    /// their routes).
    pub name: Option<Spanned<ScenarioName>>,
    /// A mix file (docs/mix.md), relative to the study file's folder.
    pub mix: Option<Spanned<String>>,
    /// A WebSocket scenario's name (`ws = "echo"`): its levels load the
    /// `/ws` echo of targets/SPEC.md (`ws.rs`).
    pub ws: Option<Spanned<String>>,
    /// `uniform` or `poisson`: how an open loop's requests arrive.
    pub arrival: Option<Spanned<String>>,
    /// The seed of the mix's and the arrivals' draws.
    pub seed: Option<Spanned<u64>>,
    pub method: Option<String>,
    pub path: Option<Spanned<String>>,
    pub body: Option<String>,
    pub keepalive: Option<bool>,
    /// The levels' transport unless a level gives its own: http/1.1, tls, mtls, h2.
    pub protocol: Option<Spanned<String>>,
    pub warmup: Option<Spanned<RawWarmup>>,
    pub timeout: Option<Dur>,
    pub load: Option<Spanned<RawLoad>>,
    pub levels: Option<Vec<Spanned<RawLoad>>>,
    pub capacity: Option<Spanned<RawCapacity>>,
    pub cost: Option<Spanned<RawCost>>,
    pub resources: Option<Spanned<RawResources>>,
}

/// `capacity = { slo = ["p99<=10ms"], step = "5s", ... }`: a capacity search
/// instead of load levels.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCapacity {
    pub slo: Option<Vec<Spanned<String>>>,
    pub step: Option<Spanned<Dur>>,
    pub warmup: Option<Spanned<Dur>>,
    pub precision: Option<Spanned<RawFraction>>,
    pub connections: Option<Spanned<usize>>,
    /// The search's arrival process (the scenario's unless given).
    pub arrival: Option<Spanned<String>>,
    pub seed: Option<Spanned<u64>>,
}

/// `cost = { rates = [500], fractions = ["25%"], ... }` as written (cost.rs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCost {
    #[serde(default)]
    pub rates: Vec<Spanned<f64>>,
    #[serde(default)]
    pub fractions: Vec<Spanned<String>>,
    #[serde(default)]
    pub overload: Vec<Spanned<String>>,
    pub deadline: Option<Spanned<Dur>>,
    pub duration: Option<Spanned<Dur>>,
    pub standing: Option<Spanned<Dur>>,
    pub overload_for: Option<Spanned<Dur>>,
    pub recover_for: Option<Spanned<Dur>>,
}

/// `precision = { width = "5%", max_repetitions = 4 }` as written (precision.rs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPrecision {
    pub width: Spanned<String>,
    pub max_repetitions: Spanned<u32>,
}

/// `resolve = { max_repetitions = 4 }` as written (resolve.rs).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResolve {
    pub max_repetitions: Spanned<u32>,
}

/// `"25%"` as 0.25: a percentage above 0 (None otherwise).
pub(crate) fn percent(text: &str) -> Option<f64> {
    let v: f64 = text.trim().strip_suffix('%')?.trim().parse().ok()?;
    (v.is_finite() && v > 0.0).then_some(v / 100.0)
}

/// `"2%"` or `0.02`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum RawFraction {
    Text(String),
    Number(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Mode {
    Closed,
    Open,
    Stages,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Unit {
    Connections,
    Rate,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoad {
    pub mode: Option<Mode>,
    pub label: Option<String>,
    pub connections: Option<usize>,
    pub requests: Option<u64>,
    pub duration: Option<Dur>,
    pub rate: Option<f64>,
    pub keepalive: Option<bool>,
    /// HTTP/1.1 pipeline depth (requests in flight per connection).
    pub pipeline: Option<usize>,
    /// The transport: http/1.1, tls, mtls or h2.
    pub protocol: Option<String>,
    /// HTTP/2 streams per connection (`protocol = "h2"` only).
    pub streams: Option<usize>,
    /// TLS without keep-alive: reconnects resume the server's sessions.
    pub tls_resume: Option<bool>,
    pub queries: Option<u32>,
    /// WebSocket: the bytes of each message (64 when not given).
    pub message_size: Option<usize>,
    /// WebSocket: binary messages instead of text.
    pub binary: Option<bool>,
    /// WebSocket hold mode: the connections are opened and held idle for
    /// this long (no message sent).
    pub hold: Option<Dur>,
    /// WebSocket hold mode: a ping on every held connection this often.
    pub ping_every: Option<Dur>,
    pub unit: Option<Unit>,
    pub stages: Option<Vec<RawStage>>,
    pub resources: Option<Spanned<RawResources>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStage {
    pub duration: Dur,
    pub to: f64,
}

/// A duration written as `"5s"`, `"500ms"`, `"2m"` or `"1.5s"`: a number
/// needs its unit (`5` could be seconds or milliseconds), except 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Duration);

/// A number written as a duration without its unit: the message suggests
/// the number with a unit only where that is a duration the parser takes.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoUnit(String);

/// A bare number as a duration: 0, or refused for want of a unit.
fn unitless(v: f64, shown: &str) -> Result<Dur, NoUnit> {
    if v == 0.0 {
        return Ok(Dur(Duration::ZERO));
    }
    let fits: Vec<String> = ["s", "ms"]
        .iter()
        .map(|u| format!("{shown}{u}"))
        .filter(|t| units::parse_duration(t).is_ok())
        .map(|t| format!("\"{t}\""))
        .collect();
    Err(NoUnit(match (fits.as_slice(), units::seconds(v, shown)) {
        ([], Err(e)) => e.to_string(),
        ([], Ok(_)) => format!("'{shown}' needs a unit, e.g. \"5s\" or \"250ms\""),
        (some, _) => format!("'{shown}' needs a unit, e.g. {}", some.join(" or ")),
    }))
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as \"5s\", \"250ms\" or \"2m\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                if let Ok(n) = v.trim().replace('_', "").parse::<f64>() {
                    return unitless(n, v.trim()).map_err(E::custom);
                }
                units::parse_duration(v).map(Dur).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                unitless(v as f64, &v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Dur, E> {
                unitless(v as f64, &v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Dur, E> {
                // Show 1e30 as written, not as thirty-one digits.
                let shown = if v.abs() >= 1e9 {
                    format!("{v:e}")
                } else {
                    v.to_string()
                };
                unitless(v, &shown).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `warmup` as written: a duration, `"auto"`, or `{ window, max }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RawWarmup {
    Fixed(Duration),
    Auto {
        window: Option<Duration>,
        max: Option<Duration>,
    },
}

impl<'de> Deserialize<'de> for RawWarmup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawWarmup, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawWarmup;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a duration such as \"2s\", \"auto\", or { window = \"500ms\", max = \"30s\" }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawWarmup, E> {
                if v == "auto" {
                    return Ok(RawWarmup::Auto {
                        window: None,
                        max: None,
                    });
                }
                fixed(Dur::deserialize(de::value::StrDeserializer::<E>::new(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawWarmup, E> {
                fixed(Dur::deserialize(de::value::I64Deserializer::<E>::new(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawWarmup, E> {
                fixed(Dur::deserialize(de::value::U64Deserializer::<E>::new(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawWarmup, E> {
                fixed(Dur::deserialize(de::value::F64Deserializer::<E>::new(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawWarmup, A::Error> {
                let (mut window, mut max) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "window" => &mut window,
                        "max" => &mut max,
                        other => return Err(de::Error::unknown_field(other, &["window", "max"])),
                    };
                    *slot = Some(map.next_value::<Dur>()?.0);
                }
                Ok(RawWarmup::Auto { window, max })
            }
        }
        d.deserialize_any(V)
    }
}

fn fixed<E>(d: Result<Dur, E>) -> Result<RawWarmup, E> {
    d.map(|d| RawWarmup::Fixed(d.0))
}
