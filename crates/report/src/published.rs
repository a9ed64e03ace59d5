//! Published figures from a study file, so that reports can put "published"
//! beside "measured". The canonical shape is
//!
//! ```toml
//! [published.plaintext]                       # a scenario
//! rps = { rust-actix = [10412, 10761, 10854] } # one number per level
//! mean_ms = { rust-actix = 0.856 }             # or one number
//! ```
//!
//! but any nesting of scenario, metric (see [`Metric::aliases`]) and target
//! (its name, its framework, or the last part of `lang-framework`) is read:
//! every numeric leaf under `[published]` is kept with the keys on its path,
//! and an array index on the path is the level.

use crate::metric::Metric;
use shootout_store::TargetRecord;

/// One number from the study's `[published]` table.
#[derive(Debug, Clone, PartialEq)]
struct Leaf {
    keys: Vec<String>,
    index: Option<u32>,
    value: f64,
}

/// Every published figure of a study.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    leaves: Vec<Leaf>,
    scenarios: Vec<String>,
}

impl Published {
    /// Reads `[published]` from a study's TOML text; empty when absent or unreadable.
    pub fn parse(study_text: &str, scenarios: &[&str]) -> Published {
        let Ok(doc) = study_text.parse::<toml::Table>() else {
            return Published::default();
        };
        let mut leaves = Vec::new();
        if let Some(p) = doc.get("published") {
            walk(p, &mut Vec::new(), None, &mut leaves);
        }
        let scenarios = scenarios.iter().map(|s| s.to_lowercase()).collect();
        Published { leaves, scenarios }
    }

    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// True when any figure could apply to this scenario × level.
    pub fn has_any(&self, scenario: &str, level: u32) -> bool {
        self.leaves
            .iter()
            .any(|l| self.fits_scenario(l, scenario, level))
    }

    /// The published value for a target, scenario, level and metric.
    pub fn get(&self, t: &TargetRecord, scenario: &str, level: u32, metric: Metric) -> Option<f64> {
        self.leaves
            .iter()
            .find(|l| {
                self.fits_scenario(l, scenario, level)
                    && l.keys
                        .iter()
                        .any(|k| metric.aliases().contains(&k.as_str()))
                    && l.keys.iter().any(|k| names_target(k, t))
            })
            .map(|l| l.value)
    }

    fn fits_scenario(&self, l: &Leaf, scenario: &str, level: u32) -> bool {
        let scenario = scenario.to_lowercase();
        let named = l.keys.iter().find(|k| self.scenarios.contains(k));
        named.is_none_or(|k| *k == scenario) && l.index.is_none_or(|i| i == level)
    }
}

fn names_target(key: &str, t: &TargetRecord) -> bool {
    let target = t.target.to_lowercase();
    key == target
        || key == t.framework.to_lowercase()
        || target.rsplit_once('-').is_some_and(|(_, last)| last == key)
}

fn walk(v: &toml::Value, keys: &mut Vec<String>, index: Option<u32>, out: &mut Vec<Leaf>) {
    match v {
        toml::Value::Integer(i) => push(keys, index, *i as f64, out),
        toml::Value::Float(f) => push(keys, index, *f, out),
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, keys, Some(i as u32), out);
            }
        }
        toml::Value::Table(t) => {
            for (k, item) in t {
                keys.push(k.to_lowercase());
                walk(item, keys, index, out);
                keys.pop();
            }
        }
        _ => {}
    }
}

/// Keeps finite numbers only: studies write `nan` for levels not published.
fn push(keys: &[String], index: Option<u32>, value: f64, out: &mut Vec<Leaf>) {
    if !value.is_finite() {
        return;
    }
    out.push(Leaf {
        keys: keys.to_vec(),
        index,
        value,
    });
}
