//! Tests that a run reports through its observer: a study whose only target
//! does not exist runs to the end without any server, and every step the
//! user should hear about arrives as an event (and nothing is printed).

use crate::event::{Event, Observer, Prepared};
use crate::{run_study, Interrupt, RunConfig};
use shootout_store::{RunStatus, TargetStatus};
use std::sync::Mutex;

#[derive(Default)]
struct Collect(Mutex<Vec<String>>);

impl Observer for Collect {
    fn event(&self, e: &Event<'_>) {
        let line = match e {
            Event::RunStarted(r) => format!("started #{} {}", r.run_id, r.study),
            Event::Prepared {
                target,
                outcome: Prepared::Unusable { status, .. },
            } => format!("unusable {target} {status}"),
            Event::Skip { measurements, .. } => format!("skip {measurements}"),
            other => format!("{other:?}"),
        };
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }
}

#[test]
fn a_run_reports_its_steps_as_events() {
    let dir = std::env::temp_dir().join(format!("shootout-events-{}", std::process::id()));
    let targets = dir.join("targets");
    std::fs::create_dir_all(&targets).unwrap_or_else(|e| panic!("{e}"));
    let text = "name = \"ev\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"nope\"]\n\
                [[scenario]]\nname = \"plaintext\"\nload = { connections = 1, requests = 5 }\n";
    let study = shootout_study::parse(&dir.join("ev.toml"), text).unwrap_or_else(|e| panic!("{e}"));
    let cfg = RunConfig {
        study,
        scale: 1.0,
        targets_dir: targets,
        db: dir.join("ev.db"),
        only: None,
        repo_dir: dir.clone(),
        wait_quiet: None,
        build_cache: None,
        kubernetes: None,
    };
    let seen = Collect::default();
    let out = run_study(&cfg, &Interrupt::new(), &seen).unwrap_or_else(|e| panic!("{e}"));
    let seen = seen.0.into_inner().unwrap_or_else(|e| e.into_inner());
    assert_eq!(out.status, RunStatus::Complete);
    assert_eq!(out.skipped.len(), 1, "{out:?}");
    assert_eq!(out.skipped[0].target, "nope");
    assert_eq!(
        seen,
        [
            "started #1 ev".to_string(),
            "Phase(Building { target: \"nope\" })".into(),
            format!("unusable nope {}", TargetStatus::Skipped),
            format!(
                "Credit {{ estimate_s: {:?} }}",
                shootout_study::scale::VERIFY_S
            ),
            "Phase(Verifying { targets: 0 })".into(),
            "skip 1".into(),
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
