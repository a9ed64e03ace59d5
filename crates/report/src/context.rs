//! What every renderer reads: the stored run plus what is derived from it
//! once (the stored study text, parsed by `shootout_study`, and its
//! published figures), and the environment description shared by the
//! Markdown header and the HTML environment table.

use crate::colour::Palette;
use crate::cpus::cpu_list;
use crate::published::Published;
use shootout_store::{RunData, TargetRecord};
use shootout_study::{Study, StudyError};

/// A run ready to be rendered.
#[derive(Debug)]
pub struct Context<'a> {
    pub data: &'a RunData,
    /// The study as stored with the run; an error when that text no longer
    /// parses (renderers then say so instead of showing published figures).
    pub study: Result<Study, StudyError>,
    pub published: Published,
    /// Every target's colour, the same in each chart of the page.
    pub colours: Palette,
}

impl<'a> Context<'a> {
    pub fn new(data: &'a RunData) -> Context<'a> {
        let study = crate::group::stored_study(data);
        let published = match &study {
            Ok(s) => Published::from(s.published.clone()),
            Err(_) => Published::default(),
        };
        Context {
            data,
            study,
            published,
            colours: palette(data),
        }
    }

    /// Why published figures are missing, when the stored study text could
    /// not be read; None when it was.
    /// A study without published figures misses nothing (a mix study
    /// whose mix file is not beside the stored text no longer parses, but
    /// has no figures to show), so it gets no note.
    pub fn study_note(&self) -> Option<String> {
        if !shootout_study::declares_published(&self.data.run.study_text) {
            return None;
        }
        self.study.as_ref().err().map(|e| {
            format!("Published figures are not shown: the stored study no longer parses ({e}).")
        })
    }

    /// The planned levels a run that did not finish never measured
    /// (`crate::planned`); None for a complete run.
    pub fn unmeasured_note(&self) -> Option<String> {
        crate::planned::note(self.data, self.study.as_ref().ok()?)
    }

    /// Which loads pipelined (HTTP/1.1: several requests in flight on each
    /// connection, answered in order), each scenario level once with its
    /// depth; None when none did.
    pub fn pipelining_line(&self) -> Option<String> {
        let levels: std::collections::BTreeSet<(&str, u32, &str, usize)> = self
            .data
            .measurements
            .iter()
            .filter(|m| m.summary.pipeline > 1)
            .map(|m| {
                let s = m.scenario.as_str();
                (s, m.level, m.level_label.as_str(), m.summary.pipeline)
            })
            .collect();
        let items: Vec<String> = levels
            .iter()
            .map(|(s, _, label, depth)| format!("{s} ({label}) at depth {depth}"))
            .collect();
        (!items.is_empty()).then(|| {
            format!(
                "HTTP/1.1 pipelining (requests in flight per connection, answered in order): {}",
                items.join(", ")
            )
        })
    }

    /// The run's record of a target, if it has one.
    pub fn target(&self, name: &str) -> Option<&'a TargetRecord> {
        self.data.targets.iter().find(|t| t.target == name)
    }

    /// The environment as (label, value) pairs, in display order; the
    /// database's (if any) right after the pinning it is compared with.
    pub fn environment(&self) -> Vec<(&'static str, String)> {
        let r = &self.data.run;
        let h = &r.host;
        let mut env = vec![
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
        ];
        env.extend(crate::database::facts(r));
        env.extend(vec![
            ("Scale", crate::metric::num(r.scale)),
            ("Tool version", r.tool_version.clone()),
            (
                "Git commit",
                r.git_commit.clone().unwrap_or_else(|| "—".into()),
            ),
        ]);
        env
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

/// The run's palette: targets in the run's order, each by its recorded
/// language (or its name's first part when it has no record).
pub fn palette(data: &RunData) -> Palette {
    let order = crate::group::target_order(data);
    let langs: Vec<(&str, &str)> = order
        .iter()
        .map(|&t| {
            let lang = data
                .targets
                .iter()
                .find(|r| r.target == t)
                .map_or_else(|| t.split('-').next().unwrap_or(t), |r| r.language.as_str());
            (t, lang)
        })
        .collect();
    Palette::new(&langs)
}

/// How the run ordered its server starts, e.g. `2 repetitions, each target
/// started anew in each; order random (seed 42), a fresh permutation per
/// repetition (randomized interleaved trials)`.
pub fn order_line(study: &shootout_study::Study, seed: Option<u64>) -> String {
    use shootout_study::Order;
    let order = match (study.order, seed) {
        (Order::Random, Some(s)) => format!(
            "order random (seed {s}): a fresh permutation of the targets in each repetition \
             (randomized interleaved trials)"
        ),
        (Order::Random, None) => "order random (seed not recorded)".to_string(),
        (Order::Rotate, _) => "order rotated: each repetition starts at the next target".into(),
        (Order::Fixed, _) => "order fixed: the listed order in each repetition".into(),
    };
    let n = study.repetitions;
    format!(
        "{n} repetition{}, each target started anew in each; {order}",
        if n == 1 { "" } else { "s" }
    )
}
