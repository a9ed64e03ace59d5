//! What every renderer reads: the stored run plus what is derived from it
//! once (the study's published figures), and the environment description
//! shared by the Markdown header and the HTML environment table.

use crate::group::groups;
use crate::published::Published;
use shootout_store::{RunData, TargetRecord};

/// A run ready to be rendered.
#[derive(Debug)]
pub struct Context<'a> {
    pub data: &'a RunData,
    pub published: Published,
}

impl<'a> Context<'a> {
    pub fn new(data: &'a RunData) -> Context<'a> {
        let scenarios: Vec<&str> = groups(data).iter().map(|g| g.scenario).collect();
        let published = Published::parse(&data.run.study_text, &scenarios);
        Context { data, published }
    }

    /// The run's record of a target, if it has one.
    pub fn target(&self, name: &str) -> Option<&'a TargetRecord> {
        self.data.targets.iter().find(|t| t.target == name)
    }

    /// The environment as (label, value) pairs, in display order.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let r = &self.data.run;
        let h = &r.host;
        vec![
            ("Study", r.study.clone()),
            ("Run", r.id.to_string()),
            ("Status", r.status.to_string()),
            ("Started", r.started_at.clone()),
            (
                "Finished",
                r.finished_at.clone().unwrap_or_else(|| "—".into()),
            ),
            ("Host", h.hostname.clone()),
            ("CPU", format!("{} ({} cores)", h.cpu_model, h.cores)),
            ("Memory", format!("{} MiB", h.mem_total_mib)),
            ("Kernel", h.kernel.clone()),
            ("Server CPUs", cpu_list(&r.pinning.server_cpus)),
            ("Generator CPUs", cpu_list(&r.pinning.generator_cpus)),
            ("Scale", crate::metric::num(r.scale)),
            ("Tool version", r.tool_version.clone()),
            (
                "Git commit",
                r.git_commit.clone().unwrap_or_else(|| "—".into()),
            ),
        ]
    }

    /// One line for the Markdown header.
    pub fn environment_line(&self) -> String {
        let r = &self.data.run;
        let h = &r.host;
        format!(
            "Started {} · status {} · host {} ({}, {} cores, {} MiB, {}) · server CPUs {} · \
             generator CPUs {} · scale {} · shootout {}{}",
            r.started_at,
            r.status,
            h.hostname,
            h.cpu_model,
            h.cores,
            h.mem_total_mib,
            h.kernel,
            cpu_list(&r.pinning.server_cpus),
            cpu_list(&r.pinning.generator_cpus),
            crate::metric::num(r.scale),
            r.tool_version,
            r.git_commit
                .as_ref()
                .map_or(String::new(), |c| format!(" ({c})")),
        )
    }
}

/// `0,1` style CPU list, or "unpinned".
pub fn cpu_list(cpus: &[usize]) -> String {
    if cpus.is_empty() {
        return "unpinned".to_string();
    }
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}
