//! The steps of [`crate::parse`] after TOML: each turns one part of the raw
//! file into its validated form, or an error that names the file, the line
//! and the key ([`Locator`]). Load tables are handed to [`crate::level`],
//! which applies the engine's rules.

use crate::capacity;
use crate::level::{self, Level};
use crate::locator::{Locator, StudyError};
use crate::metric::Metric;
use crate::mix::{self, ScenarioMix};
use crate::model::{CpuSplit, Scenario, TargetSelection};
use crate::raw::{Order, RawCpus, RawLoad, RawScenario, RawTargets};
use crate::resources::{self, Resources};
use crate::warmup::{self, Warmup};
use shootout_contract::protocol::Protocol;
use shootout_contract::spec::{ScenarioName, MAX_QUERIES};
use shootout_engine::Arrival;
use std::time::Duration;
use toml::Spanned;

/// What a scenario inherits from the study when it does not say.
pub(crate) struct ScenarioDefaults {
    pub warmup: Warmup,
    pub timeout: Duration,
    pub resources: Resources,
}

pub(crate) fn name(at: &Locator<'_>, raw: &Spanned<String>) -> Result<String, StudyError> {
    let name = raw.get_ref().trim().to_string();
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok {
        return Err(at.at(
            raw,
            "name",
            format!("'{name}' must be non-empty letters, digits, '-' or '_'"),
        ));
    }
    Ok(name)
}

pub(crate) fn targets(
    at: &Locator<'_>,
    raw: &Spanned<RawTargets>,
) -> Result<TargetSelection, StudyError> {
    match raw.get_ref() {
        RawTargets::All(s) if s == "all" => Ok(TargetSelection::All),
        RawTargets::All(s) => Err(at.at(
            raw,
            "targets",
            format!("'{s}' is neither \"all\" nor a list of target names"),
        )),
        RawTargets::List(l) if l.is_empty() => Err(at.at(raw, "targets", "no targets listed")),
        RawTargets::List(l) => Ok(TargetSelection::List(l.clone())),
    }
}

/// An optional count that, when given, must be at least 1.
pub(crate) fn at_least_one<T>(
    at: &Locator<'_>,
    raw: Option<&Spanned<T>>,
    key: &str,
) -> Result<Option<T>, StudyError>
where
    T: Copy + PartialEq + From<u8>,
{
    match raw {
        Some(v) if *v.get_ref() == T::from(0) => Err(at.at(v, key, "must be at least 1")),
        v => Ok(v.map(|v| *v.get_ref())),
    }
}

/// `seed`: the random order's seed, read only with `order = "random"`, and
/// below 2^53 so that it reads back exactly from any JSON reader.
pub(crate) fn seed(
    at: &Locator<'_>,
    raw: Option<&Spanned<u64>>,
    order: Order,
) -> Result<Option<u64>, StudyError> {
    match raw {
        Some(v) if order != Order::Random => Err(at.at(
            v,
            "seed",
            "is read only with order = \"random\" (the order of targets it draws)",
        )),
        Some(v) if *v.get_ref() >= 1 << 53 => Err(at.at(v, "seed", "must be below 2^53")),
        v => Ok(v.map(|v| *v.get_ref())),
    }
}

pub(crate) fn cpus(
    at: &Locator<'_>,
    raw: Option<&Spanned<RawCpus>>,
) -> Result<CpuSplit, StudyError> {
    let Some(c) = raw else {
        return Ok(CpuSplit::Auto);
    };
    match c.get_ref() {
        RawCpus::Auto(s) if s == "auto" => Ok(CpuSplit::Auto),
        RawCpus::Auto(s) => Err(at.at(c, "cpus", format!("'{s}' is not \"auto\""))),
        RawCpus::Split { server, generator } if server.is_empty() || generator.is_empty() => {
            Err(at.at(c, "cpus", "server and generator each need at least one CPU"))
        }
        RawCpus::Split { server, generator } => Ok(CpuSplit::Explicit {
            server: server.clone(),
            generator: generator.clone(),
        }),
    }
}

pub(crate) fn metrics(
    at: &Locator<'_>,
    raw: &[Spanned<String>],
) -> Result<Vec<Metric>, StudyError> {
    raw.iter()
        .map(|m| {
            Metric::parse(m.get_ref()).ok_or_else(|| {
                at.at(
                    m,
                    "metrics",
                    format!(
                        "unknown metric '{}'; known: {}",
                        m.get_ref(),
                        Metric::known()
                    ),
                )
            })
        })
        .collect()
}

pub(crate) fn scenarios(
    at: &Locator<'_>,
    raw: &[Spanned<RawScenario>],
    defaults: &ScenarioDefaults,
) -> Result<Vec<Scenario>, StudyError> {
    if raw.is_empty() {
        return Err(at.error(None, Some("scenario"), "no [[scenario]] given".into()));
    }
    let scenarios: Vec<Scenario> = raw
        .iter()
        .map(|s| scenario(at, s, defaults))
        .collect::<Result<_, _>>()?;
    one_kind_of_tls(at, raw, &scenarios)?;
    distinct_names(at, raw, &scenarios)?;
    Ok(scenarios)
}

/// Results are stored and shown by scenario name (a route, or a mix's
/// file stem), so two scenarios may not share one: give one scenario
/// several levels instead.
fn distinct_names(
    at: &Locator<'_>,
    raw: &[Spanned<RawScenario>],
    scenarios: &[Scenario],
) -> Result<(), StudyError> {
    for (i, (r, s)) in raw.iter().zip(scenarios).enumerate() {
        if scenarios[..i]
            .iter()
            .any(|o| o.shown_name() == s.shown_name())
        {
            let msg = format!(
                "a second scenario named {:?}: results are kept by scenario name, so put its loads \
                 in the first one's `levels`",
                s.shown_name()
            );
            return Err(at.at(r, "scenario", msg));
        }
    }
    Ok(())
}

/// A study's servers start once with or without `TLS_CLIENT_CA`, so its
/// TLS levels either all present a client certificate or none does (`tls`
/// and `h2` levels share a study; `mtls` stands alone).
fn one_kind_of_tls(
    at: &Locator<'_>,
    raw: &[Spanned<RawScenario>],
    scenarios: &[Scenario],
) -> Result<(), StudyError> {
    let mut first: Option<Protocol> = None;
    for (r, s) in raw.iter().zip(scenarios) {
        for p in s.tls_protocols() {
            match first {
                None => first = Some(p),
                Some(f) if f.client_cert() != p.client_cert() => {
                    return Err(at.at(
                        r,
                        "protocol",
                        format!(
                            "this study has both '{f}' and '{p}' levels; a server requires a client certificate on its TLS port or does not, so put them in two studies"
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

fn scenario(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
    defaults: &ScenarioDefaults,
) -> Result<Scenario, StudyError> {
    let s = raw.get_ref();
    let (name, mixed, ws) = kind(at, raw)?;
    let route = name.route();
    let keepalive = s.keepalive.unwrap_or(true);
    let protocol = match &s.protocol {
        None if ws.is_some() => Protocol::Ws,
        None => Protocol::default(),
        Some(p) => level::protocol_from(p.get_ref()).map_err(|e| at.at(p, &e.key, e.message))?,
    };
    let warmup = warmup::read(at, s.warmup.as_ref(), defaults.warmup)?;
    let capacity = match &s.capacity {
        Some(_) if s.load.is_some() || s.levels.is_some() => {
            return Err(at.at(
                raw,
                "capacity",
                "give either `load`/`levels` or `capacity`, not both",
            ))
        }
        // The engine's capacity search loads cleartext HTTP only, for now.
        Some(_) if protocol.is_tls() => {
            return Err(at.at(
                raw,
                "protocol",
                "a capacity search runs over cleartext HTTP; remove `protocol` or use `levels`",
            ))
        }
        Some(c) => Some(capacity::check(at, c, warmup.as_fixed(), keepalive)?),
        None => None,
    };
    let budget = resources::check(at, s.resources.as_ref())?.over(defaults.resources);
    let levels = load_tables(at, raw)?
        .into_iter()
        .map(|l| {
            let mut level = level::level_from(l.get_ref(), keepalive, protocol, mixed.is_some())
                .map_err(|e| at.error(Some(l.span()), Some(&load_key(s, &e.key)), e.message))?;
            ws_fits(at, s, l, &level, ws.is_some(), warmup)?;
            let own = resources::check(at, l.get_ref().resources.as_ref())?;
            level.resources = own.over(budget);
            // Levels that differ by budget say so in their generated label.
            if own.is_set() && l.get_ref().label.is_none() {
                level.label = format!("{} {}", level.label, level.resources.label());
            }
            Ok(level)
        })
        .collect::<Result<Vec<_>, StudyError>>()?;
    queries_fit(at, raw, &levels)?;
    let cost = s
        .cost
        .as_ref()
        .map(|c| crate::cost::check(at, c, &levels))
        .transpose()?;
    let (arrival, seed) = arrivals(at, raw, &levels)?;
    kind_rules(at, raw, mixed.as_ref())?;
    let timeout = s.timeout.map_or(defaults.timeout, |d| d.0);
    if timeout.is_zero() {
        return Err(at.at(raw, "timeout", "must be more than 0"));
    }
    let path = path_of(at, s.path.as_ref(), route.path, ws.is_some())?;
    Ok(Scenario {
        name,
        mix: mixed,
        ws,
        arrival,
        seed,
        method: s
            .method
            .clone()
            .unwrap_or_else(|| route.method.as_str().to_string()),
        path,
        body: match &s.body {
            Some(b) => b.clone().into_bytes(),
            None => route.default_body(),
        },
        warmup,
        timeout,
        levels,
        capacity,
        cost,
        resources: budget,
    })
}

/// A level fits its scenario's kind: `ws` levels in a WebSocket
/// scenario and only there, and a hold after no warm-up (it sends nothing
/// to warm up with and is measured from its first connection).
fn ws_fits(
    at: &Locator<'_>,
    s: &RawScenario,
    l: &Spanned<RawLoad>,
    level: &Level,
    ws: bool,
    warmup: Warmup,
) -> Result<(), StudyError> {
    if (level.protocol == Protocol::Ws) != ws {
        let why = if ws {
            format!(
                "a WebSocket scenario's levels speak \"ws\", not '{}'",
                level.protocol
            )
        } else {
            "a WebSocket level belongs to a scenario written ws = \"name\" (it loads /ws)"
                .to_string()
        };
        return Err(at.error(Some(l.span()), Some(&load_key(s, "protocol")), why));
    }
    if level.ws.is_some_and(|w| w.hold) && warmup != Warmup::Fixed(Duration::ZERO) {
        return Err(at.error(
            Some(l.span()),
            Some(&load_key(s, "hold")),
            "a hold sends nothing to warm up with and is measured from its first \
             connection: give its scenario warmup = \"0s\""
                .to_string(),
        ));
    }
    Ok(())
}

/// The scenario's `path`, or its route's; `/ws` for a WebSocket one.
fn path_of(
    at: &Locator<'_>,
    path: Option<&Spanned<String>>,
    route_path: &str,
    ws: bool,
) -> Result<String, StudyError> {
    match path {
        _ if ws => Ok(crate::ws::WS_PATH.to_string()),
        None => Ok(route_path.to_string()),
        Some(p) if !p.get_ref().starts_with('/') => {
            Err(at.at(p, "path", format!("'{}' must start with '/'", p.get_ref())))
        }
        // The engine's own rule for a request target, read where it is written.
        Some(p) => match shootout_engine::check_request_target(p.get_ref()) {
            Ok(()) => Ok(p.get_ref().clone()),
            Err(why) => Err(at.at(p, "path", format!("{:?}: {why}", p.get_ref()))),
        },
    }
}

/// `queries` only on the routes that take it, within what SPEC.md serves
/// (a larger count would be clamped by the server, measuring something else
/// than the study says), and not together with an explicit `path`.
fn queries_fit(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
    levels: &[Level],
) -> Result<(), StudyError> {
    let s = raw.get_ref();
    let name = match &s.name {
        Some(n) => *n.get_ref(),
        None => return Ok(()),
    };
    let route = name.route();
    let tables = load_tables(at, raw)?;
    for (table, level) in tables.iter().zip(levels) {
        let Some(q) = level.queries else { continue };
        let problem = if !route.takes_queries() {
            Some(format!(
                "scenario '{name}' takes no `queries` (only queries and updates do)"
            ))
        } else if q == 0 || q as usize > MAX_QUERIES {
            Some(format!("{q} is outside 1..={MAX_QUERIES}"))
        } else if s.path.is_some() {
            Some("give either the scenario's `path` or `queries`, not both".to_string())
        } else {
            None
        };
        if let Some(msg) = problem {
            return Err(at.error(Some(table.span()), Some(&load_key(s, "queries")), msg));
        }
    }
    Ok(())
}

/// A scenario's load tables: its one `load` or its non-empty `levels`
/// (none for a capacity search).
pub(crate) fn load_tables<'r>(
    at: &Locator<'_>,
    raw: &'r Spanned<RawScenario>,
) -> Result<Vec<&'r Spanned<RawLoad>>, StudyError> {
    let s = raw.get_ref();
    match (&s.load, &s.levels) {
        (None, None) if s.capacity.is_some() => Ok(Vec::new()),
        (Some(l), None) => Ok(vec![l]),
        (None, Some(ls)) if !ls.is_empty() => Ok(ls.iter().collect()),
        (Some(_), Some(_)) => Err(at.at(raw, "load", "give either `load` or `levels`, not both")),
        _ => Err(at.at(
            raw,
            "load",
            format!(
                "scenario '{}' needs a `load`, a non-empty `levels` or `capacity`",
                shown(s)
            ),
        )),
    }
}

/// A key of the scenario's load tables as written: `load.rate`, or
/// `levels.rate` (a key a level gives of its own, `resources.cpus`, as is).
fn load_key(s: &RawScenario, key: &str) -> String {
    let table = if s.levels.is_some() { "levels" } else { "load" };
    match key {
        k if k.starts_with("resources") => k.to_string(),
        k => format!("{table}.{k}"),
    }
}

/// What a scenario loads: a route, a mix, or the WebSocket echo (whose
/// route is not requested: plaintext's stands for it where a route is
/// read, the nominal service time of an estimate).
fn kind(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
) -> Result<(ScenarioName, Option<ScenarioMix>, Option<String>), StudyError> {
    match ws_name(at, raw)? {
        Some(ws) => Ok((ScenarioName::Plaintext, None, Some(ws))),
        None => name_and_mix(at, raw).map(|(name, mixed)| (name, mixed, None)),
    }
}

/// A WebSocket scenario's name (`ws = "echo"`), checked like a study's:
/// it loads `/ws`, so no route (`name`), `mix`, `method`, `path`, `body`
/// or capacity search beside it. None for an HTTP scenario.
fn ws_name(at: &Locator<'_>, raw: &Spanned<RawScenario>) -> Result<Option<String>, StudyError> {
    let s = raw.get_ref();
    let Some(key) = &s.ws else {
        return Ok(None);
    };
    let shown = name(at, key).map_err(|e| StudyError {
        key: Some("ws".to_string()),
        ..e
    })?;
    let other = [
        ("name", s.name.is_some()),
        ("mix", s.mix.is_some()),
        ("method", s.method.is_some()),
        ("path", s.path.is_some()),
        ("body", s.body.is_some()),
        ("capacity", s.capacity.is_some()),
    ];
    if let Some((k, _)) = other.iter().find(|(_, given)| *given) {
        return Err(at.at(
            key,
            k,
            format!("a WebSocket scenario (`ws`) loads the /ws echo: remove `{k}`"),
        ));
    }
    Ok(Some(shown))
}

/// How a scenario is named in messages before it is checked.
fn shown(s: &RawScenario) -> String {
    match (&s.name, &s.mix) {
        _ if s.ws.is_some() => {
            s.ws.as_ref()
                .map(|w| w.get_ref().clone())
                .unwrap_or_default()
        }
        (Some(n), _) => n.get_ref().to_string(),
        (None, Some(m)) => m.get_ref().clone(),
        (None, None) => "?".to_string(),
    }
}

/// A scenario's route (`name`) or its mix (`mix`, whose heaviest kind on
/// a SPEC.md route stands for it), never both; a mix sends its own
/// requests, so the scenario's `method`, `path` and `body` are refused.
fn name_and_mix(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
) -> Result<(ScenarioName, Option<ScenarioMix>), StudyError> {
    let s = raw.get_ref();
    let Some(key) = &s.mix else {
        return match &s.name {
            Some(n) => Ok((*n.get_ref(), None)),
            None => Err(at.at(
                raw,
                "name",
                "a scenario needs a `name` (a route) or a `mix`",
            )),
        };
    };
    if let Some(n) = &s.name {
        return Err(at.at(
            n,
            "name",
            "a scenario with a `mix` is named by its mix file: remove `name`",
        ));
    }
    let own = [
        ("method", s.method.is_some()),
        ("path", s.path.is_some()),
        ("body", s.body.is_some()),
    ];
    if let Some((k, _)) = own.iter().find(|(_, given)| *given) {
        return Err(at.at(
            key,
            k,
            format!("a mix's kinds give their own requests: remove `{k}`"),
        ));
    }
    let (mixed, name) = mix::read(at, key)?;
    Ok((name, Some(mixed)))
}

/// The scenario's arrival process and seed (its capacity table's, if it
/// gives them): Poisson arrivals need an open loop, and a mix cannot be
/// pipelined.
fn arrivals(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
    levels: &[Level],
) -> Result<(Arrival, Option<u64>), StudyError> {
    let s = raw.get_ref();
    let cap = s.capacity.as_ref().map(Spanned::get_ref);
    let (key, written) = match cap.and_then(|c| c.arrival.as_ref()) {
        Some(a) => ("capacity.arrival", Some(a)),
        None => ("arrival", s.arrival.as_ref()),
    };
    let arrival = match written {
        Some(a) => mix::arrival(at, key, a)?,
        None => Arrival::Uniform,
    };
    let seed = cap
        .and_then(|c| c.seed.as_ref())
        .or(s.seed.as_ref())
        .map(|n| *n.get_ref());
    let tables = load_tables(at, raw)?;
    for (table, level) in tables.iter().zip(levels) {
        if arrival == Arrival::Poisson && !level.load().is_open_loop() {
            return Err(at.error(
                Some(table.span()),
                Some("arrival"),
                "Poisson arrivals need an arrival rate: give this level a `rate` (an open loop)"
                    .to_string(),
            ));
        }
        if s.mix.is_some() && level.pipeline > 1 {
            return Err(at.error(
                Some(table.span()),
                Some(&load_key(s, "pipeline")),
                "a mix sends one request at a time on each connection: it cannot be pipelined"
                    .to_string(),
            ));
        }
        if s.mix.is_some() && level.queries.is_some() {
            return Err(at.error(
                Some(table.span()),
                Some(&load_key(s, "queries")),
                "a mix's kinds give their own paths (`/queries?queries={1..20}`)".to_string(),
            ));
        }
    }
    Ok((arrival, seed))
}

/// Every SLO rule that names a request kind (`db.p99<=20ms`) names one of
/// the scenario's mix, as `capacity --mix` requires.
fn kind_rules(
    at: &Locator<'_>,
    raw: &Spanned<RawScenario>,
    mixed: Option<&ScenarioMix>,
) -> Result<(), StudyError> {
    let rules = raw
        .get_ref()
        .capacity
        .as_ref()
        .and_then(|c| c.get_ref().slo.as_ref());
    for rule in rules.into_iter().flatten() {
        let Ok(t) = shootout_engine::Threshold::parse(rule.get_ref()) else {
            continue;
        };
        let Some(kind) = t.route() else { continue };
        let why = match mixed {
            None => format!(
                "'{}' names the request kind '{kind}', but only a `mix` has kinds",
                rule.get_ref()
            ),
            Some(m) if m.mix.position(kind).is_none() => {
                let names: Vec<&str> = m.mix.kinds().iter().map(|k| k.name.as_str()).collect();
                format!(
                    "the mix has no request named '{kind}' (it has {})",
                    names.join(", ")
                )
            }
            Some(_) => continue,
        };
        return Err(at.at(rule, "capacity.slo", why));
    }
    Ok(())
}
