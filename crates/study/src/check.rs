//! The steps of [`crate::parse`] after TOML: each turns one part of the raw
//! file into its validated form, or an error that names the file, the line
//! and the key ([`Locator`]). Load tables are handed to [`crate::level`],
//! which applies the engine's rules.

use crate::capacity;
use crate::level::{self, Level};
use crate::locator::{Locator, StudyError};
use crate::metric::Metric;
use crate::model::{CpuSplit, Scenario, TargetSelection};
use crate::raw::{RawCpus, RawLoad, RawScenario, RawTargets};
use crate::resources::{self, Resources};
use crate::warmup::{self, Warmup};
use shootout_contract::protocol::Protocol;
use shootout_contract::spec::MAX_QUERIES;
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
    Ok(scenarios)
}

/// A study's servers start once with or without `TLS_CLIENT_CA`, so its
/// TLS levels either all present a client certificate or none does.
fn one_kind_of_tls(
    at: &Locator<'_>,
    raw: &[Spanned<RawScenario>],
    scenarios: &[Scenario],
) -> Result<(), StudyError> {
    let mut first: Option<Protocol> = None;
    for (r, s) in raw.iter().zip(scenarios) {
        for p in s.levels.iter().map(|l| l.protocol).filter(|p| p.is_tls()) {
            match first {
                None => first = Some(p),
                Some(f) if f != p => {
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
    let route = s.name.route();
    let keepalive = s.keepalive.unwrap_or(true);
    let protocol = match &s.protocol {
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
            let mut level = level::level_from(l.get_ref(), keepalive, protocol)
                .map_err(|e| at.error(Some(l.span()), Some(&e.key), e.message))?;
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
    let timeout = s.timeout.map_or(defaults.timeout, |d| d.0);
    if timeout.is_zero() {
        return Err(at.at(raw, "timeout", "must be more than 0"));
    }
    let path = match &s.path {
        None => route.path.to_string(),
        Some(p) if !p.get_ref().starts_with('/') => {
            return Err(at.at(p, "path", format!("'{}' must start with '/'", p.get_ref())))
        }
        // The engine's own rule for a request target, read where it is written.
        Some(p) => match shootout_engine::check_request_target(p.get_ref()) {
            Ok(()) => p.get_ref().clone(),
            Err(why) => return Err(at.at(p, "path", format!("{:?}: {why}", p.get_ref()))),
        },
    };
    Ok(Scenario {
        name: s.name,
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
        resources: budget,
    })
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
    let route = s.name.route();
    let tables = load_tables(at, raw)?;
    for (table, level) in tables.iter().zip(levels) {
        let Some(q) = level.queries else { continue };
        let problem = if !route.takes_queries() {
            Some(format!(
                "scenario '{}' takes no `queries` (only queries and updates do)",
                s.name
            ))
        } else if q == 0 || q as usize > MAX_QUERIES {
            Some(format!("{q} is outside 1..={MAX_QUERIES}"))
        } else if s.path.is_some() {
            Some("give either the scenario's `path` or `queries`, not both".to_string())
        } else {
            None
        };
        if let Some(msg) = problem {
            return Err(at.error(Some(table.span()), Some("queries"), msg));
        }
    }
    Ok(())
}

/// A scenario's load tables: its one `load` or its non-empty `levels`
/// (none for a capacity search).
fn load_tables<'r>(
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
                s.name
            ),
        )),
    }
}
