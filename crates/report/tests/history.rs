//! `shootout history`'s change points on a fixture history: twelve runs
//! of the rust trio, rust-axum 25% slower in runs 5 to 8 and restored in
//! 9 to 12. The change points are found there and nowhere else, the one
//! that a version change explains names it, and the one nothing explains
//! says so (the CLI prints "nothing recorded changed").

mod common;

use shootout_report::changes::{history, Query};
use shootout_report_fixtures::{provenance, write_twelve_runs};
use shootout_store::{Recorded, Store};

fn twelve_runs() -> Vec<shootout_store::RunData> {
    let db = common::temp_dir("history").join("shootout.db");
    write_twelve_runs(&db).expect("fixture runs");
    let store = Store::open_existing(&db).expect("store");
    let mut runs: Vec<_> = (1..=12)
        .map(|id| store.load_run(id).expect("run"))
        .collect();
    // axum's version as a build would record it: 0.8.4, then 0.8.1 from
    // run 5 on (the slower one), and 0.8.4 again from run 9. The other
    // targets keep the fixture's provenance, the same in every run.
    for r in &mut runs {
        let version = if (5..=8).contains(&r.run.id) {
            "0.8.1"
        } else {
            "0.8.4"
        };
        for t in r.targets.iter_mut().filter(|t| t.target == "rust-axum") {
            let p = t.provenance.get_or_insert_with(|| provenance("axum"));
            p.packages[0].recorded = Recorded::Found {
                version: version.into(),
                source: "targets/Cargo.lock".into(),
            };
        }
    }
    // Run 9's restore is left without provenance: nothing recorded explains it.
    for t in &mut runs[8].targets {
        t.provenance = None;
    }
    runs
}

#[test]
fn the_slower_runs_are_found_and_explained_where_they_can_be() {
    let runs = twelve_runs();
    let all = history(&runs, &Query::default());
    let axum: Vec<_> = all.iter().filter(|s| s.target == "rust-axum").collect();
    assert!(!axum.is_empty());
    for s in &axum {
        assert_eq!(s.rows.len(), 12, "{}", s.scenario);
        let at: Vec<i64> = s.changes.iter().map(|c| c.run).collect();
        assert_eq!(at, [5, 9], "{}: {:?}", s.scenario, s.changes);
        let down = &s.changes[0];
        assert!((down.ratio - 0.8).abs() < 0.02, "{down:?}");
        let (lo, hi) = down.interval.expect("interval");
        assert!(lo < 0.8 && 0.8 < hi, "{down:?}");
        assert_eq!(down.causes, ["axum 0.8.4 → 0.8.1"]);
        assert!(s.changes[1].causes.is_empty(), "{:?}", s.changes[1]);
    }
    // The unchanged targets have no change point.
    for s in all.iter().filter(|s| s.target != "rust-axum") {
        assert!(
            s.changes.is_empty(),
            "{} {}: {:?}",
            s.target,
            s.scenario,
            s.changes
        );
    }
    // Filters.
    let q = Query {
        target: Some("rust-actix".into()),
        scenario: Some("simple".into()),
        ..Query::default()
    };
    let only = history(&runs, &q);
    assert_eq!(only.len(), 1, "{only:?}");
    assert_eq!(only[0].target, "rust-actix");
}

#[test]
fn hosts_are_not_mixed_and_old_or_foreign_rows_are_stale() {
    let mut runs = twelve_runs();
    for r in &mut runs[6..] {
        r.run.host.hostname = "other-box".into();
    }
    let q = Query {
        target: Some("rust-actix".into()),
        scenario: Some("simple".into()),
        ..Query::default()
    };
    let split = history(&runs, &q);
    assert_eq!(split.len(), 2, "one series per host");
    assert_eq!((split[0].rows.len(), split[1].rows.len()), (6, 6));
    let mixed = history(
        &runs,
        &Query {
            all_hosts: true,
            here: Some(runs[0].run.host.clone()),
            max_age_days: Some(30),
            // 2026-03-01: the fixture's runs (2026-01-02) are 57 days old.
            now: shootout_store::unix_from_rfc3339("2026-03-01T00:00:00Z").unwrap(),
            ..q
        },
    );
    assert_eq!(mixed.len(), 1);
    let rows = &mixed[0].rows;
    assert!(
        rows[0].stale.iter().any(|w| w.contains("57 days old")),
        "{:?}",
        rows[0]
    );
    assert!(!rows[0].stale.iter().any(|w| w.contains("another host")));
    assert!(
        rows[7]
            .stale
            .iter()
            .any(|w| w.contains("another host: other-box")),
        "{:?}",
        rows[7]
    );
}

#[test]
fn a_change_of_the_targets_own_source_is_named_when_no_version_moved() {
    let mut runs = twelve_runs();
    // Run 9 keeps run 8's versions but was built from other sources.
    let eight = runs[7].targets.clone();
    runs[8].targets = eight;
    for (i, r) in runs.iter_mut().enumerate() {
        for t in &mut r.targets {
            if let Some(p) = &mut t.provenance {
                p.build = Some(
                    if i < 8 {
                        "aaaa00001111"
                    } else {
                        "bbbb00002222"
                    }
                    .into(),
                );
            }
        }
    }
    let q = Query {
        target: Some("rust-axum".into()),
        scenario: Some("simple".into()),
        ..Query::default()
    };
    let s = history(&runs, &q).remove(0);
    assert_eq!(s.changes.len(), 2, "{:?}", s.changes);
    // The version change explains run 5 on its own.
    assert_eq!(s.changes[0].causes, ["axum 0.8.4 → 0.8.1"]);
    assert_eq!(
        s.changes[1].causes,
        ["the target's build inputs (source) aaaa00001111 → bbbb00002222"]
    );
}
