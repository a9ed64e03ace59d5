//! Whether a study's CPU quotas fit the machine and the CPUs its servers
//! run on. A `resources.cpus` above every CPU this process may use could
//! never be given (`cpus = 64` on a 2-CPU machine): refused with the file,
//! line and key. One above only the servers' own CPUs cannot bind there
//! (a server pinned to one CPU gets at most one CPU of time) and is
//! measured and recorded as those CPUs: said as a warning with the same
//! place, since a study such as `budget` asks for 2 CPUs on purpose and
//! binds on larger machines. Both depend on the machine (`cpus = "auto"`
//! halves the CPUs allowed), so the runner checks them before a run
//! starts, not the parser.

use crate::check::load_tables;
use crate::locator::{Locator, StudyError};
use crate::model::Study;
use crate::raw::RawStudy;

impl Study {
    /// Refuses the first `resources.cpus` (study, scenario or level) above
    /// `machine` CPUs, and names every one above `servers`, the CPUs the
    /// servers are pinned to (`which` shows them, e.g. `[0]`).
    pub fn quotas_fit(
        &self,
        machine: usize,
        servers: usize,
        which: &str,
    ) -> Result<Vec<StudyError>, StudyError> {
        let at = Locator {
            path: &self.file,
            text: &self.text,
        };
        let raw: RawStudy = toml::from_str(&self.text).map_err(|e| at.toml_error(&e))?;
        let mut tables = vec![raw.resources.as_ref()];
        for s in &raw.scenario {
            tables.push(s.get_ref().resources.as_ref());
            for l in load_tables(&at, s)? {
                tables.push(l.get_ref().resources.as_ref());
            }
        }
        let mut above_servers = Vec::new();
        for cpus in tables
            .into_iter()
            .flatten()
            .filter_map(|r| r.get_ref().cpus.as_ref())
        {
            let quota = *cpus.get_ref();
            if quota > machine as f64 {
                return Err(at.at(
                    cpus,
                    "resources.cpus",
                    format!(
                        "a quota of {quota} CPUs is more than the {machine} CPU(s) this \
                         machine gives shootout: no server could ever use it; lower it"
                    ),
                ));
            }
            if quota > servers as f64 {
                above_servers.push(at.at(
                    cpus,
                    "resources.cpus",
                    format!(
                        "a quota of {quota} CPUs is more than the {servers} CPU(s) the servers \
                         run on here ({which}): it cannot bind, and is measured and recorded \
                         as {servers} CPU(s)"
                    ),
                ));
            }
        }
        Ok(above_servers)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    const STUDY: &str = r#"name = "q"
description = "d"
source = "s"
targets = "all"
resources = { cpus = 1 }

[[scenario]]
name = "plaintext"
load = { connections = 4, duration = "1s" }

[[scenario]]
name = "json"
resources = { cpus = 0.5 }
levels = [
  { connections = 4, duration = "1s" },
  { connections = 8, duration = "1s", resources = { cpus = 3 } },
]
"#;

    #[test]
    fn a_quota_above_the_machine_is_refused_and_above_the_servers_named() {
        let study = crate::parse(Path::new("q.toml"), STUDY).unwrap();
        assert!(study.quotas_fit(4, 4, "[0, 1, 2, 3]").unwrap().is_empty());
        assert!(study.quotas_fit(3, 3, "[0, 1, 2]").unwrap().is_empty());
        // Above the servers' CPUs only: each named where it is written.
        let named = study.quotas_fit(4, 1, "[0]").unwrap();
        let places: Vec<_> = named.iter().map(|e| e.line).collect();
        assert_eq!(places, [Some(16)]);
        let text = named[0].to_string();
        assert!(
            text.starts_with("q.toml:16: key `resources.cpus`: "),
            "{text}"
        );
        assert!(
            text.contains("more than the 1 CPU(s) the servers run on here ([0])"),
            "{text}"
        );
        // Above the machine: refused at the first such place.
        let e = study.quotas_fit(2, 1, "[0]").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(16), Some("resources.cpus"))
        );
        assert!(
            e.to_string()
                .contains("3 CPUs is more than the 2 CPU(s) this machine"),
            "{e}"
        );
    }
}
