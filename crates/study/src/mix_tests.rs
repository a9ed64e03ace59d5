//! A scenario's `mix`, `arrival` and `seed`: the mix file is read relative
//! to the study, its kinds checked as their routes answer, the arrivals
//! and per-kind SLO rules checked, and every mistake named by file, line
//! and key (the study's, or the mix file's for the mix's own errors).

use super::*;
use shootout_engine::Arrival;

const MIX: &str = r#"[[request]]
name = "db"
weight = 3
path = "/db"

[[request]]
name = "queries"
weight = 1
path = "/queries?queries={1..20}"

[[request]]
name = "json"
weight = 1
path = "/json"
"#;

/// A folder holding `mixes/m.toml` (the text given) and a study file
/// whose scenario table ends with `scenario`.
struct Folder(PathBuf);

impl Folder {
    fn new(tag: &str, mix: &str) -> Folder {
        let dir =
            std::env::temp_dir().join(format!("shootout-study-mix-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("mixes")).unwrap();
        std::fs::write(dir.join("mixes/m.toml"), mix).unwrap();
        Folder(dir)
    }

    fn study(&self, scenario: &str) -> Result<Study, StudyError> {
        let text = format!(
            "name = \"svc\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"a\"]\n\n[[scenario]]\n{scenario}\n"
        );
        let path = self.0.join("svc.toml");
        std::fs::write(&path, &text).unwrap();
        load(&path)
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_mix_scenario_reads_its_file_beside_the_study() {
    let f = Folder::new("ok", MIX);
    let s = f
        .study(
            "mix = \"mixes/m.toml\"\narrival = \"poisson\"\nseed = 7\n\
             capacity = { slo = [\"p99<=50ms\", \"db.p99<=50ms\", \"queries.p99<=50ms\"] }",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let sc = &s.scenarios[0];
    let m = sc.mix.as_ref().expect("a mix");
    assert_eq!(m.file, f.0.join("mixes/m.toml"));
    assert_eq!(sc.shown_name(), "m");
    assert_eq!(sc.name.as_str(), "db", "the heaviest kind's route");
    assert_eq!((sc.arrival, sc.seed), (Arrival::Poisson, Some(7)));
    assert!(sc.needs_database() && s.needs_database());
    assert_eq!(
        sc.path_for(&sc.capacity.as_ref().unwrap().template_level()),
        "/"
    );
    let kinds = m.mix.kinds();
    assert_eq!(kinds.len(), 3);
    // Each kind is checked as SPEC.md says its route answers.
    let json = kinds[2].expect.as_ref().expect("json's answer is known");
    assert_eq!(json.media_type.as_deref(), Some("application/json"));
    assert!(kinds.iter().all(|k| k.expect.is_some()));
}

#[test]
fn a_mix_of_routes_without_the_database_needs_none() {
    let f = Folder::new(
        "nodb",
        "[[request]]\nname = \"j\"\nweight = 1\npath = \"/json\"\n",
    );
    let s = f
        .study("mix = \"mixes/m.toml\"\nload = { rate = 100, connections = 4, duration = \"1s\" }")
        .unwrap();
    assert!(!s.needs_database());
    assert_eq!(s.scenarios[0].arrival, Arrival::Uniform);
}

#[test]
fn a_mix_path_that_cannot_be_read_names_the_study_line_and_key() {
    let f = Folder::new("missing", MIX);
    let e = f
        .study("mix = \"mixes/absent.toml\"\ncapacity = { slo = [\"p99<=50ms\"] }")
        .unwrap_err();
    assert_eq!(e.file, f.0.join("svc.toml"));
    assert_eq!((e.line, e.key.as_deref()), (Some(7), Some("mix")));
    assert!(e.message.contains("absent.toml"), "{e}");
}

#[test]
fn a_broken_mix_file_is_named_by_the_mix_crate() {
    let f = Folder::new(
        "broken",
        "[[request]]\nname = \"db\"\nweight = 1\npath = \"/queries?queries={5..1}\"\n",
    );
    let e = f
        .study("mix = \"mixes/m.toml\"\ncapacity = {}")
        .unwrap_err();
    assert_eq!(e.file, f.0.join("mixes/m.toml"));
    assert_eq!((e.line, e.key.as_deref()), (Some(4), Some("path")));
}

#[test]
fn mix_scenario_mistakes_name_their_key() {
    let f = Folder::new("keys", MIX);
    let cases: [(&str, usize, &str, &str); 7] = [
        ("name = \"db\"\nmix = \"mixes/m.toml\"\ncapacity = {}", 7, "name", "remove `name`"),
        ("mix = \"mixes/m.toml\"\npath = \"/db\"\ncapacity = {}", 7, "path", "own requests"),
        (
            "mix = \"mixes/m.toml\"\narrival = \"bursty\"\ncapacity = {}",
            8,
            "arrival",
            "not an arrival process",
        ),
        (
            "mix = \"mixes/m.toml\"\narrival = \"poisson\"\nload = { connections = 2, duration = \"1s\" }",
            9,
            "arrival",
            "need an arrival rate",
        ),
        (
            "mix = \"mixes/m.toml\"\nload = { connections = 2, duration = \"1s\", pipeline = 4 }",
            8,
            "load.pipeline",
            "cannot be pipelined",
        ),
        (
            "mix = \"mixes/m.toml\"\ncapacity = { slo = [\"p99<=50ms\", \"updates.p99<=9ms\"] }",
            8,
            "capacity.slo",
            "no request named 'updates' (it has db, queries, json)",
        ),
        (
            "name = \"db\"\ncapacity = { slo = [\"db.p99<=9ms\"] }",
            8,
            "capacity.slo",
            "only a `mix` has kinds",
        ),
    ];
    for (scenario, line, key, says) in cases {
        let e = f.study(scenario).unwrap_err();
        assert_eq!(e.file, f.0.join("svc.toml"), "{scenario}");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(line), Some(key)),
            "{scenario}: {e}"
        );
        assert!(e.message.contains(says), "{scenario}: {e}");
    }
}

#[test]
fn a_capacity_tables_arrival_and_seed_win() {
    let f = Folder::new("cap", MIX);
    let s = f
        .study("mix = \"mixes/m.toml\"\nseed = 1\ncapacity = { arrival = \"poisson\", seed = 9 }")
        .unwrap();
    assert_eq!(
        (s.scenarios[0].arrival, s.scenarios[0].seed),
        (Arrival::Poisson, Some(9))
    );
}

#[test]
fn the_shipped_service_study_and_its_mix_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
    let s = load(&dir.join("service.toml")).unwrap_or_else(|e| panic!("{e}"));
    let sc = &s.scenarios[0];
    assert_eq!(sc.shown_name(), "service");
    assert_eq!(sc.arrival, Arrival::Poisson);
    let names: Vec<&str> = sc
        .mix
        .as_ref()
        .unwrap()
        .mix
        .kinds()
        .iter()
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(names, ["db", "queries", "fortunes", "updates", "json"]);
    let rules: Vec<&str> = sc
        .capacity
        .as_ref()
        .unwrap()
        .slo
        .iter()
        .map(|t| t.text())
        .collect();
    for kind in &names {
        assert!(
            rules.contains(&format!("{kind}.p99<=50ms").as_str()),
            "{rules:?}"
        );
    }
    assert!(rules.contains(&"p99<=50ms"));
}
