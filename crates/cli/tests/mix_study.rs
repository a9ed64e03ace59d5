//! A study scenario with a mix, end to end against a real target and a real
//! PostgreSQL: `shootout run` loads the mix (beside the study file) with
//! Poisson arrivals in a level and in a capacity search judged per kind,
//! stores each kind's results (a level's in its summary, a search's at
//! every level), and the report shows each kind's p99 and which broke the
//! SLO first. A bad mix path is a study error naming file, line and key.

#![allow(clippy::unwrap_used)] // test helpers: a failed setup should panic

mod common;

use common::{repo, Tmp};
use shootout_store::{RunStatus, Store};
use std::path::{Path, PathBuf};
use std::process::Stdio;

const MIX: &str = r#"[[request]]
name = "db"
weight = 6
path = "/db"

[[request]]
name = "queries"
weight = 2
path = "/queries?queries={1..20}"

[[request]]
name = "json"
weight = 2
path = "/json"
"#;

/// A study of `scenarios` on `target`, with the mix beside it twice
/// (`svc` and `svc-capacity`: a scenario is named by its mix file's stem,
/// and a study may not name two scenarios alike).
fn study(tmp: &Path, target: &str, scenarios: &str) -> PathBuf {
    std::fs::create_dir_all(tmp.join("mixes")).unwrap();
    std::fs::write(tmp.join("mixes/svc.toml"), MIX).unwrap();
    std::fs::write(tmp.join("mixes/svc-capacity.toml"), MIX).unwrap();
    let text = format!(
        "name = \"mix-study\"\ndescription = \"test only\"\nsource = \"tests\"\n\
         targets = [\"{target}\"]\nwarmup = \"200ms\"\n\n{scenarios}"
    );
    let path = tmp.join("mix-study.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(tmp: &Path, study: &Path) -> std::process::Output {
    common::run_command(study, &tmp.join("t.db"), &repo().join("targets"))
        .stdout(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_study_with_a_mix_runs_levels_and_a_capacity_search_per_kind() {
    if shootout_servers::database::find_bin_dir().is_none() {
        shootout_testkit::missing("PostgreSQL is not installed");
        return;
    }
    if !shootout_testkit::tools(&["go"]) {
        return;
    }
    let tmp = Tmp::new("mix-study");
    let study = study(
        &tmp.0,
        "go-nethttp",
        r#"[[scenario]]
mix = "mixes/svc.toml"
arrival = "poisson"
seed = 5
load = { rate = 300, connections = 8, duration = "1s" }

[[scenario]]
mix = "mixes/svc-capacity.toml"
seed = 5
capacity = { slo = ["p99<=50ms", "db.p99<=50ms", "queries.p99<=50ms", "json.p99<=50ms"], step = "300ms", warmup = "100ms", precision = "20%", arrival = "poisson" }
"#,
    );
    let out = run(&tmp.0, &study);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{stdout}");
    let store = Store::open(tmp.0.join("t.db")).unwrap();
    let data = store.load_run(store.resolve("latest").unwrap()).unwrap();
    assert_eq!(data.run.status, RunStatus::Complete);

    // The level: one measurement of the mix, shown by the mix file's name,
    // each kind's counts adding up to the total, Poisson recorded.
    let [m] = data.measurements.as_slice() else {
        panic!("one measurement: {:?}", data.measurements.len());
    };
    assert_eq!(m.scenario, "svc");
    let s = &m.summary;
    assert_eq!(s.arrival.map(|a| a.as_str()), Some("poisson"));
    assert_eq!(s.seed, Some(5));
    let names: Vec<&str> = s.routes.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["db", "queries", "json"]);
    let sent: u64 = s.routes.iter().map(|r| r.requests.sent).sum();
    assert_eq!(sent, s.requests.sent);
    assert!(s.routes.iter().all(|r| r.requests.ok > 0), "{:?}", s.routes);
    assert_eq!(s.errors.total(), 0, "every kind answered as SPEC.md says");

    // The search: every level has each kind, and the report shows them.
    let [c] = data.capacity.as_slice() else {
        panic!("one search: {:?}", data.capacity.len());
    };
    assert_eq!(c.scenario, "svc-capacity");
    let levels: Vec<_> = c.result.levels.iter().chain(&c.result.curve).collect();
    assert!(levels.len() >= 3);
    for l in &levels {
        let kinds: Vec<&str> = l.routes.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(kinds, ["db", "queries", "json"], "{l:?}");
    }
    let md = std::fs::read_to_string(
        shootout_report::run_reports_dir(&tmp.0.join("t.db"), data.run.id).join("report.md"),
    )
    .unwrap();
    assert!(
        md.contains("| db p99 (ms) | queries p99 (ms) | json p99 (ms) | Broke first |"),
        "{md}"
    );
}

#[test]
fn a_mix_path_that_cannot_be_read_is_a_study_error_with_file_line_and_key() {
    let tmp = Tmp::new("mix-bad");
    let study = study(
        &tmp.0,
        "go-nethttp",
        "[[scenario]]\nmix = \"mixes/nope.toml\"\ncapacity = {}\n",
    );
    let out = run(&tmp.0, &study);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let at = format!("{}:8: key `mix`", study.display());
    assert!(stderr.contains(&at), "{at} not in {stderr}");
    assert!(stderr.contains("nope.toml"), "{stderr}");
}
