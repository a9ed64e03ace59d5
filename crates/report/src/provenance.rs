//! The "Versions" table every report shows: per target, the framework's
//! and main libraries' versions its build resolved and the runtime's, as
//! the run recorded them (`shootout_store::Provenance`), and per run
//! shootout's version and commit and the database's. A version that could
//! not be read is shown as the sentence saying why, never as a blank; a
//! run recorded before provenance was says so. Markdown, HTML and JSON all
//! read these functions.

use serde_json::{json, Value};
use shootout_store::{Provenance, Recorded, Run, TargetRecord};

/// The table's header.
pub const HEADER: [&str; 3] = ["Target", "Framework versions", "Runtime"];

/// Why a target has no provenance: it was never built in the run, or the
/// run predates the record.
fn absent(t: &TargetRecord) -> String {
    if t.status.as_str() == "ok" {
        "not recorded: this run predates version records".into()
    } else {
        format!("not recorded: not built ({})", t.status)
    }
}

/// `actix-web 4.12.0, tokio 1.54.1`, each missing one as its sentence.
pub fn packages(p: &Provenance) -> String {
    if p.packages.is_empty() {
        return "none named (provenance = [])".into();
    }
    p.packages
        .iter()
        .map(|pkg| match &pkg.recorded {
            Recorded::Found { version, .. } => format!("{} {version}", pkg.name),
            Recorded::Missing { not_recorded } => format!("{}: {not_recorded}", pkg.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row per target: (target, framework versions, runtime).
pub fn rows(targets: &[TargetRecord]) -> Vec<[String; 3]> {
    targets
        .iter()
        .map(|t| match &t.provenance {
            Some(p) => [t.target.clone(), packages(p), p.runtime.text().to_string()],
            None => [t.target.clone(), absent(t), absent(t)],
        })
        .collect()
}

/// The run's own versions: `shootout 0.1.0 (abc1234) · PostgreSQL 16.4`.
pub fn run_line(run: &Run) -> String {
    let mut s = format!(
        "shootout {}{}",
        run.tool_version,
        run.git_commit
            .as_deref()
            .map_or(" (commit not recorded)".to_string(), |c| format!(" ({c})"))
    );
    if let Some(db) = &run.database {
        s.push_str(&format!(" · PostgreSQL {}", db.version));
    }
    s
}

/// The JSON of one target's provenance (schema `$defs/provenance`): every
/// package and the runtime with `version` (null when not recorded),
/// `source` and, when not recorded, `not_recorded`. A target with no
/// record gets the sentence for both.
pub fn json(t: &TargetRecord) -> Value {
    let recorded = |r: &Recorded| match r {
        Recorded::Found { version, source } => json!({ "version": version, "source": source }),
        Recorded::Missing { not_recorded } => {
            json!({ "version": null, "source": null, "not_recorded": not_recorded })
        }
    };
    match &t.provenance {
        Some(p) => json!({
            "packages": p.packages.iter().map(|pkg| {
                let mut v = recorded(&pkg.recorded);
                v["name"] = json!(pkg.name);
                v
            }).collect::<Vec<_>>(),
            "runtime": recorded(&p.runtime),
        }),
        None => {
            let why = absent(t);
            json!({
                "packages": [],
                "not_recorded": why,
                "runtime": { "version": null, "source": null, "not_recorded": why },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shootout_store::TargetStatus;

    fn record(status: TargetStatus, provenance: Option<Provenance>) -> TargetRecord {
        TargetRecord {
            target: "t".into(),
            language: "rust".into(),
            framework: "actix-web 4".into(),
            status,
            reason: None,
            log_tail: None,
            verify: None,
            footprint_bytes: None,
            build_s: None,
            description: None,
            run_command: None,
            provenance,
        }
    }

    #[test]
    fn a_missing_version_is_said_never_blank() {
        let p = shootout_report_fixtures::provenance("actix-web");
        let rows = rows(&[
            record(TargetStatus::Ok, Some(p)),
            record(TargetStatus::Ok, None),
            record(TargetStatus::BuildFailed, None),
        ]);
        assert_eq!(
            rows[0][1],
            "actix-web 1.2.3, tokio: not recorded: targets/Cargo.lock has no package \"tokio\""
        );
        assert_eq!(rows[0][2], "rustc 1.91.0");
        assert!(rows[1][1].contains("predates"), "{:?}", rows[1]);
        assert_eq!(rows[2][2], "not recorded: not built (build_failed)");
        assert!(rows.iter().flatten().all(|c| !c.trim().is_empty()));
    }
}
