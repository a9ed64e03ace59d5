//! Resource budgets: `resources = { cpus = 1.5, memory = "512MiB" }` on a
//! study, a scenario or one load level, as a container runtime would set
//! them (`docker run --cpus --memory`, Kubernetes `resources.limits`).
//! `cpus` is a CPU quota (CPU time per 100 ms period, independent of
//! pinning), `memory` a hard limit with swap off. Tables merge key by key:
//! each key comes from the innermost table that sets it (level, then
//! scenario, then study), so a study may set one memory limit and each
//! level its own quota. Values are checked here with file, line and key.

use crate::locator::{Locator, StudyError};
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The kernel refuses CPU quotas under 1 ms per 100 ms period.
pub const MIN_CPUS: f64 = 0.01;
/// The smallest memory limit: one page.
pub const MIN_MEMORY: u64 = 4096;

/// A budget as written: every key optional.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResources {
    pub cpus: Option<Spanned<f64>>,
    pub memory: Option<Spanned<String>>,
}

/// The budget of one load level (or scenario, or study) after merging;
/// None is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Resources {
    /// CPU quota in CPUs (0.5: half of one CPU's time).
    pub cpus: Option<f64>,
    /// Hard memory limit in bytes.
    pub memory: Option<u64>,
}

impl Resources {
    /// Whether anything is limited.
    pub fn is_set(&self) -> bool {
        self.cpus.is_some() || self.memory.is_some()
    }

    /// The memory limit in MiB, as reports show it.
    pub fn memory_mib(&self) -> Option<f64> {
        self.memory.map(|b| b as f64 / (1024.0 * 1024.0))
    }

    /// The CPUs the quota lets a server on `pinned` CPUs use: the quota,
    /// or those CPUs when fewer (a quota of 2 on one pinned CPU cannot
    /// bind: a budget of 1); None without a quota. Efficiency per CPU of
    /// quota divides by this, not by the asked quota.
    pub fn binding_cpus(&self, pinned: usize) -> Option<f64> {
        self.cpus
            .filter(|q| q.is_finite() && *q > 0.0)
            .map(|q| q.min(pinned.max(1) as f64))
    }

    /// `self`, with every key it leaves unset taken from `outer`.
    pub fn over(self, outer: Resources) -> Resources {
        Resources {
            cpus: self.cpus.or(outer.cpus),
            memory: self.memory.or(outer.memory),
        }
    }

    /// `cpus=0.5 mem=512MiB`, `-` when nothing is limited.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cpus {
            parts.push(format!("cpus={c}"));
        }
        if let Some(m) = self.memory_mib() {
            parts.push(format!("mem={}MiB", trim(m)));
        }
        if parts.is_empty() {
            "-".to_string()
        } else {
            parts.join(" ")
        }
    }
}

fn trim(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as u64)
    } else {
        format!("{x:.1}")
    }
}

/// Checks one `resources` table; None gives an empty budget.
pub(crate) fn check(
    at: &Locator<'_>,
    raw: Option<&Spanned<RawResources>>,
) -> Result<Resources, StudyError> {
    let Some(raw) = raw else {
        return Ok(Resources::default());
    };
    let r = raw.get_ref();
    let cpus = match &r.cpus {
        Some(c) => {
            let v = *c.get_ref();
            if !v.is_finite() || v < MIN_CPUS {
                return Err(at.at(
                    c,
                    "resources.cpus",
                    format!("{v} must be at least {MIN_CPUS} (a CPU quota in CPUs, like docker run --cpus)"),
                ));
            }
            Some(v)
        }
        None => None,
    };
    let memory = match &r.memory {
        Some(m) => {
            let bytes = parse_memory(m.get_ref())
                .map_err(|why| at.at(m, "resources.memory", why.to_string()))?;
            Some(bytes)
        }
        None => None,
    };
    Ok(Resources { cpus, memory })
}

/// `"512MiB"`, `"1.5GiB"`, `"65536KiB"` in bytes: a number and one of the
/// binary units, at least one page.
pub fn parse_memory(text: &str) -> Result<u64, MemoryError> {
    let t = text.trim();
    let units = [("KiB", 1u64 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)];
    let Some((number, scale)) = units
        .iter()
        .find_map(|(u, s)| t.strip_suffix(u).map(|n| (n.trim(), *s)))
    else {
        return Err(MemoryError::NoUnit(text.to_string()));
    };
    let n: f64 = number.parse().map_err(|_| MemoryError::NotANumber {
        text: text.to_string(),
        number: number.to_string(),
    })?;
    let bytes = n * scale as f64;
    // "inf" and "NaN" parse as floats but count no bytes.
    if !n.is_finite() {
        return Err(MemoryError::NotBytes(text.to_string()));
    }
    if bytes < MIN_MEMORY as f64 {
        return Err(MemoryError::UnderOnePage(text.to_string()));
    }
    if bytes > (1u64 << 50) as f64 {
        return Err(MemoryError::OverOnePib(text.to_string()));
    }
    Ok(bytes.round() as u64)
}

/// Why a memory size (as written) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemoryError {
    #[error("'{0}' needs a unit: KiB, MiB or GiB (for example \"512MiB\")")]
    NoUnit(String),
    #[error("'{text}': '{number}' is not a number")]
    NotANumber { text: String, number: String },
    #[error("'{0}' is not a number of bytes")]
    NotBytes(String),
    #[error("'{0}' is under one page (4KiB)")]
    UnderOnePage(String),
    #[error("'{0}' is more than 1 PiB")]
    OverOnePib(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_units() {
        assert_eq!(parse_memory("512MiB"), Ok(512 << 20));
        assert_eq!(parse_memory("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_memory("4KiB"), Ok(4096));
        for bad in ["512", "512MB", "1KiB", "xMiB", "-1GiB", "", "1e20GiB"] {
            assert!(parse_memory(bad).is_err(), "{bad} accepted");
        }
        // Floats that are no number of bytes are not "under one page".
        for bad in ["inf GiB", "NaNMiB", "-infKiB", "infinityGiB"] {
            assert_eq!(
                parse_memory(bad),
                Err(MemoryError::NotBytes(bad.to_string())),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_quota_binds_up_to_the_pinned_cpus() {
        let quota = |c: f64| Resources {
            cpus: Some(c),
            memory: None,
        };
        assert_eq!(quota(1.5).binding_cpus(2), Some(1.5));
        assert_eq!(
            quota(2.0).binding_cpus(1),
            Some(1.0),
            "cannot bind above the pins"
        );
        assert_eq!(Resources::default().binding_cpus(2), None);
    }

    #[test]
    fn inner_keys_win_and_outer_fill_in() {
        let study = Resources {
            cpus: Some(2.0),
            memory: Some(1 << 29),
        };
        let level = Resources {
            cpus: Some(0.5),
            memory: None,
        };
        let got = level.over(Resources::default()).over(study);
        assert_eq!(got.cpus, Some(0.5));
        assert_eq!(got.memory, Some(1 << 29));
        assert_eq!(got.label(), "cpus=0.5 mem=512MiB");
        assert_eq!(Resources::default().label(), "-");
    }

    fn study(extra: &str, scenario: &str) -> Result<crate::Study, StudyError> {
        let text = format!(
            "name = \"b\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"t\"]\n{extra}\n\
             [[scenario]]\nname = \"plaintext\"\n{scenario}\n"
        );
        crate::parse(std::path::Path::new("b.toml"), &text)
    }

    #[test]
    fn study_scenario_and_level_tables_merge_key_by_key() {
        let s = study(
            "resources = { memory = \"512MiB\", cpus = 4 }",
            "resources = { cpus = 2 }\nlevels = [\n  { connections = 1, requests = 5, resources = { cpus = 0.5 } },\n  { connections = 1, requests = 5 },\n]",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let sc = &s.scenarios[0];
        assert_eq!(s.resources.cpus, Some(4.0));
        assert_eq!(sc.resources.cpus, Some(2.0));
        assert_eq!(sc.levels[0].resources.cpus, Some(0.5));
        assert_eq!(sc.levels[1].resources.cpus, Some(2.0));
        assert_eq!(sc.levels[0].label, "n=5 c=1 cpus=0.5 mem=512MiB");
        assert_eq!(sc.levels[1].label, "n=5 c=1", "no table of its own");
        for l in &sc.levels {
            assert_eq!(l.resources.memory, Some(512 << 20));
        }
        let none = study("", "load = { connections = 1, requests = 5 }").unwrap();
        assert!(!none.scenarios[0].levels[0].resources.is_set());
    }

    #[test]
    fn bad_budgets_name_the_line_and_key() {
        let cases = [
            ("resources = { cpus = 0.001 }", "resources.cpus", 5),
            ("resources = { cpus = -1 }", "resources.cpus", 5),
            ("resources = { memory = \"512MB\" }", "resources.memory", 5),
            ("resources = { memory = \"1KiB\" }", "resources.memory", 5),
            ("resources = { disk = 1 }", "resources.disk", 5),
        ];
        for (table, key, line) in cases {
            let e = study(table, "load = { connections = 1, requests = 5 }").unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{table}: {e}");
            assert_eq!(e.line, Some(line), "{table}: {e}");
        }
        for memory in ["inf GiB", "NaNMiB"] {
            let table = format!("resources = {{ memory = \"{memory}\" }}");
            let e = study(&table, "load = { connections = 1, requests = 5 }").unwrap_err();
            assert_eq!(
                (e.key.as_deref(), e.line),
                (Some("resources.memory"), Some(5)),
                "{e}"
            );
            assert!(
                e.to_string()
                    .contains(&format!("'{memory}' is not a number of bytes")),
                "{e}"
            );
            assert!(!e.to_string().contains("under one page"), "{e}");
        }
        let e = study(
            "",
            "load = { connections = 1, requests = 5, resources = { cpus = 0 } }",
        )
        .unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("resources.cpus"), Some(8)),
            "{e}"
        );
    }
}
