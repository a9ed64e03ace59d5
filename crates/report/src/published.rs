//! Published figures beside measured ones. The study's `[published]` table
//! is parsed once, strictly, by `shootout_study` when the stored study text
//! is read (see [`crate::context::Context`]); this module only looks its
//! figures up: by scenario, level, metric ([`Metric::name`]) and target (the
//! key written in the study may be the target's name, its framework, or
//! the last part of `lang-framework`). How our order compares with the
//! article's is [`crate::agreement`].

use crate::metric::Metric;
use shootout_store::TargetRecord;
use shootout_study::Published as Figure;

/// Every published figure of a study.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Published {
    figures: Vec<Figure>,
}

impl From<Vec<Figure>> for Published {
    fn from(figures: Vec<Figure>) -> Published {
        Published { figures }
    }
}

impl Published {
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty()
    }

    /// True when any figure could apply to this scenario × level.
    pub fn has_any(&self, scenario: &str, level: u32) -> bool {
        self.figures.iter().any(|f| fits(f, scenario, level))
    }

    /// The published value for a target, scenario, level and metric.
    pub fn get(&self, t: &TargetRecord, scenario: &str, level: u32, metric: Metric) -> Option<f64> {
        self.figures
            .iter()
            .filter(|f| fits(f, scenario, level) && f.metric == metric)
            .find_map(|f| {
                f.values
                    .iter()
                    .find(|(k, _)| names_target(k, t))
                    .map(|(_, v)| *v)
            })
    }
}

/// A figure applies to its scenario (or every one) and level (or every one).
fn fits(f: &Figure, scenario: &str, level: u32) -> bool {
    f.scenario.is_none_or(|s| s.as_str() == scenario) && f.level.is_none_or(|l| l == level)
}

fn names_target(key: &str, t: &TargetRecord) -> bool {
    let key = key.to_lowercase();
    let target = t.target.to_lowercase();
    key == target
        || key == t.framework.to_lowercase()
        || target.rsplit_once('-').is_some_and(|(_, last)| last == key)
}
