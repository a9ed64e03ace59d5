//! The `[published]` table of a study: what the reproduced article reported,
//! parsed strictly here and nowhere else (the report reads [`Published`]):
//!
//! ```toml
//! [published]
//! rss_peak_mib = { "rust-axum" = 71 }              # study-wide figure
//! [published.plaintext]                            # a scenario of the study
//! rps = { "rust-actix" = [10412, 10761, 10854] }   # one number per level
//! mean_ms = { "rust-actix" = 0.856 }               # or one number
//! ```
//!
//! `nan` in a per-level list means "not published for that level". This
//! module validates the table strictly and flattens it into [`Published`].

use crate::locator::KeyError;
use crate::metric::MetricName;
use crate::model::{Published, Scenario};
use std::collections::BTreeMap;

/// Validates `[published]`; errors name the dotted key.
pub(super) fn parse(
    table: &toml::Table,
    scenarios: &[Scenario],
) -> Result<Vec<Published>, KeyError> {
    let mut out = Vec::new();
    for (key, value) in table {
        if let Some(sc) = scenarios.iter().find(|s| s.name.as_str() == key) {
            let toml::Value::Table(metrics) = value else {
                return Err(KeyError::new(
                    format!("published.{key}"),
                    "expected a table of metrics",
                ));
            };
            for (metric, values) in metrics {
                let path = format!("published.{key}.{metric}");
                metric_values(&path, metric, values, Some(sc), &mut out)?;
            }
        } else if MetricName::parse(key).is_some() {
            metric_values(&format!("published.{key}"), key, value, None, &mut out)?;
        } else {
            let names: Vec<&str> = scenarios.iter().map(|s| s.name.as_str()).collect();
            return Err(KeyError::new(
                format!("published.{key}"),
                format!(
                    "'{key}' is neither a scenario of this study ({}) nor a metric ({})",
                    names.join(", "),
                    MetricName::known()
                ),
            ));
        }
    }
    Ok(out)
}

fn metric_values(
    path: &str,
    metric: &str,
    values: &toml::Value,
    scenario: Option<&Scenario>,
    out: &mut Vec<Published>,
) -> Result<(), KeyError> {
    let Some(metric) = MetricName::parse(metric) else {
        return Err(KeyError::new(
            path.to_string(),
            format!("unknown metric '{metric}'; known: {}", MetricName::known()),
        ));
    };
    let toml::Value::Table(targets) = values else {
        return Err(KeyError::new(
            path.to_string(),
            "expected { \"target\" = number, ... }",
        ));
    };
    let levels = scenario.map_or(1, |s| s.levels.len());
    // (level, target) -> value, then grouped by level.
    let mut by_level: BTreeMap<Option<u32>, BTreeMap<String, f64>> = BTreeMap::new();
    for (target, v) in targets {
        let tpath = format!("{path}.{target}");
        match v {
            toml::Value::Array(items) => {
                if scenario.is_none() || items.len() != levels {
                    return Err(KeyError::new(
                        tpath,
                        format!("a list needs one number per level of the scenario ({levels})"),
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    let x = number(&tpath, item)?;
                    if !x.is_nan() {
                        by_level
                            .entry(Some(i as u32))
                            .or_default()
                            .insert(target.clone(), x);
                    }
                }
            }
            other => {
                let x = number(&tpath, other)?;
                by_level.entry(None).or_default().insert(target.clone(), x);
            }
        }
    }
    for (level, values) in by_level {
        out.push(Published {
            scenario: scenario.map(|s| s.name),
            level,
            metric,
            values,
        });
    }
    Ok(())
}

fn number(path: &str, v: &toml::Value) -> Result<f64, KeyError> {
    match v {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        other => Err(KeyError::new(
            path.to_string(),
            format!("expected a number, found {}", other.type_str()),
        )),
    }
}

/// Best guess at where a dotted `published...` key is written: the line of
/// `[published.<scenario>]` and then of the metric under it.
pub(super) fn locate(text: &str, path: &str) -> Option<usize> {
    let parts: Vec<&str> = path.split('.').collect();
    let header = |name: &str| {
        text.find(&format!("[{name}]"))
            .or_else(|| text.find(&format!("[ {name} ]")))
    };
    let scenario_header = parts.get(1).and_then(|p| header(&format!("published.{p}")));
    let (start, key) = match scenario_header {
        Some(at) => (at, parts.get(2)),
        None => (header("published")?, parts.get(1)),
    };
    let Some(key) = key else { return Some(start) };
    let mut offset = start;
    for line in text[start..].split_inclusive('\n') {
        let t = line.trim_start().trim_start_matches('"');
        if offset != start && t.starts_with('[') {
            break;
        }
        if t.starts_with(key) && t[key.len()..].trim_start().starts_with(['=', '"']) {
            return Some(offset);
        }
        offset += line.len();
    }
    Some(start)
}
