//! What a run that did not finish (interrupted, failed, or still marked
//! running) planned and never measured: every load level of its stored
//! study (scaled as it ran) that a target still standing has fewer starts
//! of than the study's repetitions. Capacity and cost scenarios, whose
//! levels the run derives as it goes, are named whole when nothing of them
//! was recorded. The Markdown and HTML headers read this one note.

use shootout_store::{RunData, RunStatus, TargetStatus};
use shootout_study::Study;

/// One level of the plan with starts missing.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmeasured {
    /// `plaintext (c=4 1s)`, or a capacity or cost scenario's name.
    pub level: String,
    /// Each target with starts missing, and how many of how many.
    pub targets: Vec<(String, u32, u32)>,
}

/// The planned levels `data` did not measure; empty for a complete run
/// or a study that no longer parses.
pub fn unmeasured(data: &RunData, study: &Study) -> Vec<Unmeasured> {
    if data.run.status == RunStatus::Complete {
        return Vec::new();
    }
    let study = study.scaled(data.run.scale);
    let reps = study.repetitions;
    let standing: Vec<&str> = data
        .targets
        .iter()
        .filter(|t| t.status == TargetStatus::Ok)
        .map(|t| t.target.as_str())
        .collect();
    let mut out = Vec::new();
    for sc in &study.scenarios {
        let name = sc.shown_name();
        if sc.capacity.is_some() || sc.cost.is_some() {
            let missing: Vec<(String, u32, u32)> = standing
                .iter()
                .filter(|t| !derived_recorded(data, name, t))
                .map(|t| ((*t).to_string(), reps, reps))
                .collect();
            if !missing.is_empty() {
                out.push(Unmeasured {
                    level: name.to_string(),
                    targets: missing,
                });
            }
            continue;
        }
        for (i, level) in sc.levels.iter().enumerate() {
            let missing: Vec<(String, u32, u32)> = standing
                .iter()
                .filter_map(|t| {
                    let done = (0..reps)
                        .filter(|&r| {
                            data.measurements.iter().any(|m| {
                                m.target == *t
                                    && m.scenario == name
                                    && m.level as usize == i
                                    && m.repetition == r
                            })
                        })
                        .count() as u32;
                    (done < reps).then(|| ((*t).to_string(), reps - done, reps))
                })
                .collect();
            if !missing.is_empty() {
                out.push(Unmeasured {
                    level: format!("{name} ({})", level.label),
                    targets: missing,
                });
            }
        }
    }
    out
}

/// Whether anything of a capacity or cost scenario was recorded for `target`.
fn derived_recorded(data: &RunData, scenario: &str, target: &str) -> bool {
    data.measurements
        .iter()
        .any(|m| m.target == target && m.scenario == scenario)
        || data
            .capacity
            .iter()
            .any(|c| c.target == target && c.scenario == scenario)
}

/// At most this many levels are named; the rest are counted.
const SHOWN: usize = 12;

/// One sentence for the report's header: `The run was interrupted before
/// these planned levels were measured: json (c=4 60s): go-nethttp (1 of 1
/// start); …`. None when nothing is missing.
pub fn note(data: &RunData, study: &Study) -> Option<String> {
    let missing = unmeasured(data, study);
    if missing.is_empty() {
        return None;
    }
    let why = match data.run.status {
        RunStatus::Interrupted => "The run was interrupted before",
        RunStatus::Failed => "The run failed before",
        _ => "The run has not finished (or its process died) before",
    };
    let mut items: Vec<String> = missing
        .iter()
        .take(SHOWN)
        .map(|u| {
            let targets: Vec<String> = u
                .targets
                .iter()
                .map(|(t, n, of)| {
                    format!("{t} ({n} of {of} start{})", if *of == 1 { "" } else { "s" })
                })
                .collect();
            format!("{}: {}", u.level, targets.join(", "))
        })
        .collect();
    if missing.len() > SHOWN {
        items.push(format!("and {} more", missing.len() - SHOWN));
    }
    Some(format!(
        "{why} these planned levels were measured: {}.",
        items.join("; ")
    ))
}
