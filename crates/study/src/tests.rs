//! Study parsing: the shipped studies load, bad files name file, key and line.

use super::*;
use shootout_engine::Load;

fn studies_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies")
}

fn parse_err(text: &str) -> StudyError {
    parse(Path::new("studies/bad.toml"), text).unwrap_err()
}

const MINIMAL: &str = r#"name = "tiny"
description = "d"
source = "s"
targets = ["a", "b"]

[[scenario]]
name = "json"
load = { connections = 2, duration = "1s" }
"#;

#[test]
fn shipped_studies_parse() {
    let all = discover(&studies_dir()).unwrap();
    let names: Vec<String> = all
        .iter()
        .map(|s| match s {
            Ok(s) => s.name.clone(),
            Err(e) => panic!("{e}"),
        })
        .collect();
    for want in [
        "default",
        "actix-vs-django",
        "go-rust-python",
        "rust-trio",
        "robyn-vs-fastapi",
        "fastapi-vs-falcon",
    ] {
        assert!(
            names.contains(&want.to_string()),
            "{want} missing from {names:?}"
        );
    }
    let avd = all
        .iter()
        .flatten()
        .find(|s| s.name == "actix-vs-django")
        .unwrap();
    let labels: Vec<&str> = avd.scenarios[0]
        .levels
        .iter()
        .map(|l| l.label.as_str())
        .collect();
    assert_eq!(labels, ["n=1000 c=10", "n=2000 c=50", "n=3000 c=100"]);
    let default = all.iter().flatten().find(|s| s.name == "default").unwrap();
    assert_eq!(
        default.scenarios[0].levels[0].label, "c=64 1.25s",
        "a label says the duration to the millisecond"
    );
    assert!(!avd.scenarios[0].levels[0].keepalive);
    assert_eq!(avd.published.len(), 6, "{:?}", avd.published);
    let grp = all
        .iter()
        .flatten()
        .find(|s| s.name == "go-rust-python")
        .unwrap();
    let level = &grp.scenarios[0].levels[0];
    assert_eq!(level.stop().duration, Some(Duration::from_secs(120)));
    assert!(matches!(
        level.load(),
        Load::Stages {
            connections: 100,
            ..
        }
    ));
    let trio = all
        .iter()
        .flatten()
        .find(|s| s.name == "rust-trio")
        .unwrap();
    assert_eq!(trio.scenarios[2].levels[0].stop().requests, Some(500));
    assert_eq!(trio.scenarios[2].method, "POST");
    assert_eq!(trio.scenarios[2].path, "/test/bcrypt");
    assert_eq!(trio.repetitions, 3);
}

#[test]
fn minimal_study_gets_defaults() {
    let s = parse(Path::new("x.toml"), MINIMAL).unwrap();
    assert_eq!(s.repetitions, 1);
    assert_eq!(s.order, Order::Rotate);
    assert_eq!(s.restart, Restart::PerScenario);
    assert_eq!(s.cpus, CpuSplit::Auto);
    assert_eq!(
        s.scenarios[0].warmup,
        Warmup::AUTO,
        "studies warm up until steady"
    );
    assert_eq!(s.scenarios[0].levels[0].label, "c=2 1s");
    assert!(s.scenarios[0].levels[0].keepalive);
    assert_eq!(s.text, MINIMAL);
}

#[test]
fn unknown_key_names_file_key_and_line() {
    let text = MINIMAL.replace("source = \"s\"", "source = \"s\"\nbogus = 3");
    let e = parse_err(&text);
    assert_eq!(e.key.as_deref(), Some("bogus"), "{e}");
    assert_eq!(e.line, Some(4), "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("studies/bad.toml:4: key `bogus`"),
        "{shown}"
    );
}

#[test]
fn unknown_key_in_a_load_is_an_error() {
    let text = MINIMAL.replace("duration = \"1s\"", "duration = \"1s\", conns = 3");
    let e = parse_err(&text);
    assert_eq!(e.line, Some(8), "{e}");
    assert!(e.to_string().contains("conns"), "{e}");
}

#[test]
fn bad_values_point_at_their_line() {
    let e = parse_err(&MINIMAL.replace("\"1s\"", "\"1 fortnight\""));
    assert_eq!(e.line, Some(8), "{e}");
    assert_eq!(e.key.as_deref(), Some("load.duration"), "{e}");

    let e = parse_err(&MINIMAL.replace("name = \"json\"", "name = \"xml\""));
    assert_eq!(e.line, Some(7), "{e}");
    assert_eq!(e.key.as_deref(), Some("name"), "{e}");

    let e = parse_err(&MINIMAL.replace("connections = 2, ", ""));
    assert_eq!(e.line, Some(8), "{e}");
    assert_eq!(e.key.as_deref(), Some("load.connections"), "{e}");

    let e = parse_err(&MINIMAL.replace("targets = [\"a\", \"b\"]", "targets = \"some\""));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(4), Some("targets")),
        "{e}"
    );

    let e = parse_err(&MINIMAL.replace("description = \"d\"\n", ""));
    assert!(e.to_string().contains("description"), "{e}");

    let e = parse_err(&format!("{MINIMAL}repetitions = 0\n"));
    assert!(e.to_string().contains("bad.toml"), "{e}");

    // A request target the engine would refuse at run time is refused here.
    for (path, why) in [
        ("/json x", "space"),
        ("/json\\r\\nX-Evil: 1", "CR"),
        ("/json#top", "fragment"),
    ] {
        let text = MINIMAL.replace(
            "name = \"json\"",
            &format!("name = \"json\"\npath = \"{path}\""),
        );
        let e = parse_err(&text);
        assert_eq!((e.line, e.key.as_deref()), (Some(8), Some("path")), "{e}");
        assert!(
            e.to_string().to_lowercase().contains(&why.to_lowercase()),
            "{why}: {e}"
        );
    }
}

#[test]
fn published_must_match_a_scenario_and_metric() {
    let e = parse_err(&format!(
        "{MINIMAL}\n[published.plaintext]\nrps = {{ a = 1 }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("published.plaintext"), "{e}");
    let e = parse_err(&format!(
        "{MINIMAL}\n[published.json]\nspeed = {{ a = 1 }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("published.json.speed"), "{e}");
    assert_eq!(e.line, Some(11), "{e}");
    let e = parse_err(&format!(
        "{MINIMAL}\n[published.json]\nrps = {{ a = [1, 2] }}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("published.json.rps.a"), "{e}");
    let e = parse_err(&format!(
        "{MINIMAL}\n[published.json]\nrps = {{ a = \"fast\" }}\n"
    ));
    assert!(e.message.contains("number"), "{e}");
    let ok = parse(
        Path::new("x.toml"),
        &format!("{MINIMAL}\n[published]\nrss_peak_mib = {{ a = 7 }}\n[published.json]\nrps = {{ a = 1, b = [nan] }}\n"),
    )
    .unwrap();
    assert_eq!(ok.published.len(), 2, "{:?}", ok.published);
}

#[test]
fn shipped_published_figures_are_structured() {
    let all = discover(&studies_dir()).unwrap();
    let avd = all
        .iter()
        .flatten()
        .find(|s| s.name == "actix-vs-django")
        .unwrap();
    let l2 = avd
        .published
        .iter()
        .find(|p| p.metric == Metric::Mean && p.level == Some(2))
        .unwrap();
    assert_eq!(l2.values["python-django"], 86.184);
    let faf = all
        .iter()
        .flatten()
        .find(|s| s.name == "fastapi-vs-falcon")
        .unwrap();
    assert!(faf.published.iter().all(|p| p.level == Some(2)));
    let trio = all
        .iter()
        .flatten()
        .find(|s| s.name == "rust-trio")
        .unwrap();
    assert!(trio
        .published
        .iter()
        .any(|p| p.scenario.is_none() && p.metric == Metric::RssPeak));
}

#[test]
fn huge_or_negative_durations_name_file_line_and_key() {
    // Regression: `warmup = 1e30` used to panic in Duration::from_secs_f64.
    for (bad, line) in [
        ("warmup = 1e30\n", 5),
        ("warmup = \"1e30s\"\n", 5),
        ("warmup = -3\n", 5),
        ("timeout = \"9999999h\"\n", 5),
    ] {
        let text = MINIMAL.replace(
            "targets = [\"a\", \"b\"]\n",
            &format!("targets = [\"a\", \"b\"]\n{bad}"),
        );
        let e = parse_err(&text);
        assert_eq!(e.line, Some(line), "{bad}: {e}");
        assert!(
            matches!(e.key.as_deref(), Some("warmup" | "timeout")),
            "{bad}: {e}"
        );
    }
    let e = parse_err(&MINIMAL.replace("\"1s\"", "\"9999999h\""));
    assert!(e.to_string().contains("'9999999h' is longer"), "{e}");
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(8), Some("load.duration")),
        "{e}"
    );
}

#[test]
fn scaling_shrinks_with_floors() {
    let all = discover(&studies_dir()).unwrap();
    let trio = all
        .iter()
        .flatten()
        .find(|s| s.name == "rust-trio")
        .unwrap();
    let q = trio.scaled(0.1);
    assert_eq!(q.repetitions, 1);
    assert_eq!(q.scenarios[0].levels[0].stop().requests, Some(1000));
    assert_eq!(
        q.scenarios[2].levels[0].stop().requests,
        Some(100),
        "floor: 100 requests"
    );
    assert_eq!(
        q.scenarios[0].warmup,
        Warmup::Fixed(Duration::from_millis(250))
    );
    // Counted loads get a time cap when scaled.
    assert_eq!(
        q.scenarios[0].levels[0].stop().duration,
        Some(Duration::from_secs(6))
    );
    assert_eq!(trio.scaled(1.0), *trio);

    let grp = all
        .iter()
        .flatten()
        .find(|s| s.name == "go-rust-python")
        .unwrap();
    let q = grp.scaled(0.01);
    assert_eq!(
        q.scenarios[0].levels[0].stop().duration,
        Some(Duration::from_millis(1200))
    );
    // Every study's --quick run stays near a couple of minutes at most,
    // unless it has so many levels that the floors (1 s loads) alone take
    // longer: tfb's 108 loads; then every load is at its floor and the
    // overheads on top stay bounded (budget's 81 levels pay a settle and
    // a drain each: about 100 s at nine targets).
    for s in all.iter().flatten() {
        let n = match &s.targets {
            TargetSelection::All => 9,
            TargetSelection::List(l) => l.len(),
        };
        let f = quick_scale(s, n);
        let quick = s.scaled(f);
        let est = quick.estimate(n, f);
        let at_floors = quick
            .scenarios
            .iter()
            .flat_map(|sc| &sc.levels)
            .all(|l| l.stop().duration == Some(Duration::from_secs(1)));
        if !at_floors {
            assert!(est.total_s < 180.0, "{}: {est:?} at scale {f}", s.name);
            assert!(est.load_s < 60.0, "{}: {est:?} at scale {f}", s.name);
        }
        assert!(
            est.total_s - est.load_s < 120.0,
            "{}: {est:?} at scale {f}",
            s.name
        );
    }
}

#[test]
fn a_path_without_a_leading_slash_names_file_line_and_key() {
    let text = MINIMAL.replace("name = \"json\"", "name = \"json\"\npath = \"json\"");
    let e = parse_err(&text);
    assert_eq!((e.line, e.key.as_deref()), (Some(8), Some("path")), "{e}");
    assert!(e.to_string().starts_with("studies/bad.toml:8"), "{e}");
    assert!(e.message.contains("'json'"), "{e}");

    let ok = parse(
        Path::new("x.toml"),
        &MINIMAL.replace("name = \"json\"", "name = \"json\"\npath = \"/json?x=1\""),
    )
    .unwrap();
    assert_eq!(ok.scenarios[0].path, "/json?x=1");
}

#[test]
fn default_routes_come_from_the_spec() {
    let s = parse(
        Path::new("x.toml"),
        &MINIMAL.replace("name = \"json\"", "name = \"simple\""),
    )
    .unwrap();
    let route = shootout_contract::spec::ScenarioName::Simple.route();
    assert_eq!(s.scenarios[0].method, route.method.as_str());
    assert_eq!(s.scenarios[0].path, route.path);
    assert_eq!(s.scenarios[0].body, route.default_body());
}

#[test]
fn engine_rules_are_reported_by_study_key_and_line() {
    let load = |l: &str| {
        parse_err(&MINIMAL.replace(
            "load = { connections = 2, duration = \"1s\" }",
            &format!("load = {{ {l} }}"),
        ))
    };
    for (l, key) in [
        ("rate = -5.0, connections = 2, duration = \"1s\"", "rate"),
        ("rate = nan, connections = 2, duration = \"1s\"", "rate"),
        ("connections = 0, duration = \"1s\"", "connections"),
        ("connections = 2, requests = 0", "requests"),
        (
            "connections = 2, stages = [{ duration = \"1s\", to = 5 }]",
            "stages",
        ),
        ("stages = [{ duration = \"1s\", to = -1 }]", "stages"),
        ("stages = [{ duration = \"0s\", to = 1 }]", "stages"),
        (
            "connections = 2, duration = \"1s\", pipeline = 0",
            "pipeline",
        ),
        (
            "connections = 2, duration = \"1s\", pipeline = 1025",
            "pipeline",
        ),
        (
            "connections = 2, duration = \"1s\", pipeline = 4, keepalive = false",
            "pipeline",
        ),
    ] {
        let e = load(l);
        let key = format!("load.{key}");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(8), Some(key.as_str())),
            "{l}: {e}"
        );
    }
}

const DB_STUDY: &str = r#"name = "db"
description = "d"
source = "s"
targets = "all"
db_pool_size = 8

[[scenario]]
name = "queries"
levels = [
    { queries = 1, connections = 4, duration = "1s" },
    { queries = 20, connections = 4, duration = "1s" },
]

[[scenario]]
name = "json"
load = { connections = 2, duration = "1s" }
"#;

#[test]
fn query_counts_set_each_level_path_and_label() {
    let s = parse(Path::new("db.toml"), DB_STUDY).unwrap();
    assert_eq!(s.db_pool_size, Some(8));
    assert!(s.needs_database());
    let q = &s.scenarios[0];
    assert!(q.needs_database() && !s.scenarios[1].needs_database());
    let paths: Vec<String> = q.levels.iter().map(|l| q.path_for(l)).collect();
    assert_eq!(paths, ["/queries?queries=1", "/queries?queries=20"]);
    assert_eq!(q.levels[1].label, "q=20 c=4 1s");
    let half = s.scaled(0.5);
    assert_eq!(
        half.scenarios[0].levels[1].label, "q=20 c=4 1s",
        "the floor"
    );
    let double = s.scaled(2.0);
    assert_eq!(double.scenarios[0].levels[1].label, "q=20 c=4 2s");
    assert!(!parse(Path::new("m.toml"), MINIMAL)
        .unwrap()
        .needs_database());
}

#[test]
fn a_bad_query_count_names_its_line_and_key() {
    let cases = [
        (
            DB_STUDY.replace("queries = 20", "queries = 501"),
            "501 is outside 1..=500",
        ),
        (
            DB_STUDY.replace("queries = 20", "queries = 0"),
            "0 is outside",
        ),
        (
            DB_STUDY.replace("name = \"queries\"", "name = \"db\""),
            "takes no `queries`",
        ),
        (
            DB_STUDY.replace("name = \"queries\"", "name = \"queries\"\npath = \"/q\""),
            "not both",
        ),
    ];
    for (text, want) in cases {
        let e = parse_err(&text);
        assert_eq!(e.key.as_deref(), Some("levels.queries"), "{e}");
        assert!(e.line.is_some_and(|l| l >= 10), "{e}");
        assert!(e.to_string().contains(want), "{e}");
    }
    let e = parse_err(&DB_STUDY.replace("db_pool_size = 8", "db_pool_size = 0"));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("db_pool_size"), Some(5)),
        "{e}"
    );
}

#[test]
fn a_level_may_pipeline() {
    let s = parse(
        Path::new("studies/p.toml"),
        &MINIMAL.replace(
            "load = { connections = 2, duration = \"1s\" }",
            "levels = [{ connections = 2, duration = \"1s\" }, { connections = 2, duration = \"1s\", pipeline = 16 }]",
        ),
    )
    .unwrap();
    let levels = &s.scenarios[0].levels;
    assert_eq!((levels[0].pipeline, levels[1].pipeline), (1, 16));
    assert_eq!(levels[0].label, "c=2 1s");
    assert_eq!(levels[1].label, "c=2 1s p=16");
}

#[test]
fn two_scenarios_of_one_name_are_refused_at_the_second() {
    let text = format!(
        "{MINIMAL}\n[[scenario]]\nname = \"plaintext\"\nload = {{ connections = 2, duration = \"1s\" }}\n\
         \n[[scenario]]\nname = \"json\"\nload = {{ connections = 4, duration = \"1s\" }}\n"
    );
    let e = parse_err(&text);
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("scenario"), Some(14)),
        "{e}"
    );
    assert!(
        e.to_string().contains("a second scenario named \"json\""),
        "{e}"
    );
}

#[test]
fn a_random_order_takes_a_seed_and_only_it_does() {
    let head = MINIMAL.replace(
        "targets = [\"a\", \"b\"]\n",
        "targets = [\"a\", \"b\"]\norder = \"random\"\nseed = 42\n",
    );
    let s = parse(Path::new("s.toml"), &head).expect("parses");
    assert_eq!((s.order, s.seed), (Order::Random, Some(42)));
    let s = parse(Path::new("s.toml"), &head.replace("seed = 42\n", "")).expect("parses");
    assert_eq!((s.order, s.seed), (Order::Random, None));

    let e = parse_err(&head.replace("order = \"random\"", "order = \"rotate\""));
    assert!(e.to_string().contains("seed"), "{e}");
    assert!(e.to_string().contains("order = \"random\""), "{e}");
    assert_eq!(e.line, Some(6), "the seed's line: {e}");
    let e = parse_err(&head.replace("seed = 42", "seed = 9007199254740992"));
    assert!(e.to_string().contains("below 2^53"), "{e}");
}

#[test]
fn precision_asks_for_more_starts_within_a_cap() {
    let with = |p: &str| {
        MINIMAL.replace(
            "targets = [\"a\", \"b\"]\n",
            &format!("targets = [\"a\", \"b\"]\nrepetitions = 2\n{p}\n"),
        )
    };
    let s = parse(
        Path::new("s.toml"),
        &with("precision = { width = \"5%\", max_repetitions = 4 }"),
    )
    .expect("parses");
    let p = s.precision.expect("read");
    assert!((p.width - 0.05).abs() < 1e-12);
    assert_eq!(p.max_repetitions, 4);
    // --quick halves both, never below the two starts an interval needs.
    let q = s.scaled(0.5);
    assert_eq!(
        (q.repetitions, q.precision.unwrap().max_repetitions),
        (2, 2)
    );

    for (bad, says) in [
        ("width = \"5\"", "not a percentage"),
        ("width = \"0%\"", "not a percentage"),
        ("width = \"1500%\"", "not a percentage"),
        ("width = \"NaN%\"", "not a percentage"),
        (
            "width = \"5%\", max_repetitions = 1",
            "fewer than the study's repetitions (2)",
        ),
    ] {
        let text = if bad.contains("max_") {
            with(&format!("precision = {{ {bad} }}"))
        } else {
            with(&format!("precision = {{ {bad}, max_repetitions = 3 }}"))
        };
        let e = parse_err(&text);
        assert!(e.to_string().contains(says), "{bad}: {e}");
        assert_eq!(e.line, Some(6), "{bad}: the precision line: {e}");
        assert!(
            e.to_string().contains("precision"),
            "{bad}: names the key: {e}"
        );
    }
    let one = with("precision = { width = \"5%\", max_repetitions = 3 }")
        .replace("repetitions = 2\n", "");
    let e = parse_err(&one);
    assert!(
        e.to_string().contains("needs repetitions = 2 or more"),
        "{e}"
    );
}

#[test]
fn margin_and_resolve_are_read_and_bad_values_named() {
    let with = |p: &str| {
        MINIMAL.replace(
            "targets = [\"a\", \"b\"]\n",
            &format!("targets = [\"a\", \"b\"]\nrepetitions = 2\n{p}\n"),
        )
    };
    let s = parse(
        Path::new("s.toml"),
        &with("margin = \"3%\"\nresolve = { max_repetitions = 4 }"),
    )
    .expect("parses");
    assert!((s.margin.expect("margin") - 0.03).abs() < 1e-12);
    assert_eq!(s.resolve.expect("resolve").max_repetitions, 4);
    // --quick halves the cap, never below the two starts a pair needs.
    let q = s.scaled(0.5);
    assert_eq!((q.repetitions, q.resolve.unwrap().max_repetitions), (2, 2));
    let plain = parse(Path::new("s.toml"), &with("")).expect("parses");
    assert_eq!((plain.margin, plain.resolve), (None, None));

    for (bad, says, key, line) in [
        ("margin = \"5\"", "not a percentage", "margin", 6),
        ("margin = \"0%\"", "not a percentage", "margin", 6),
        ("margin = \"60%\"", "at most 50%", "margin", 6),
        ("margin = \"NaN%\"", "not a percentage", "margin", 6),
        (
            "resolve = { max_repetitions = 1 }",
            "fewer than the study's repetitions (2)",
            "resolve.max_repetitions",
            6,
        ),
        (
            "resolve = { max = 3 }",
            "unknown field `max`",
            "max_repetitions",
            6,
        ),
    ] {
        let e = parse_err(&with(bad));
        assert!(e.to_string().contains(says), "{bad}: {e}");
        assert_eq!(e.line, Some(line), "{bad}: {e}");
        assert!(e.to_string().contains(key), "{bad}: names {key}: {e}");
    }
    let one = with("resolve = { max_repetitions = 3 }").replace("repetitions = 2\n", "");
    let e = parse_err(&one);
    assert!(
        e.to_string().contains("needs repetitions = 2 or more"),
        "{e}"
    );
}

#[test]
fn a_cost_table_derives_from_its_last_closed_loop_and_names_bad_keys() {
    let with = |cost: &str| {
        MINIMAL.replace(
            "load = { connections = 2, duration = \"1s\" }\n",
            &format!("load = {{ connections = 2, duration = \"2s\" }}\ncost = {{ {cost} }}\n"),
        )
    };
    let s = parse(
        Path::new("s.toml"),
        &with("rates = [500], fractions = [\"25%\", \"50%\"], overload = [\"150%\"], standing = \"5s\""),
    )
    .expect("parses");
    let c = s.scenarios[0].cost.clone().expect("read");
    assert_eq!(c.rates, [500.0]);
    assert_eq!(c.fractions, [0.25, 0.5]);
    assert_eq!(c.overload, [1.5]);
    assert_eq!(
        c.duration,
        std::time::Duration::from_secs(2),
        "the closed loop's"
    );
    assert_eq!(c.standing, std::time::Duration::from_secs(5));
    // --quick keeps room for a recovery of three seconds in a row.
    let q = s.scaled(0.1).scenarios[0].cost.clone().unwrap();
    assert_eq!(q.recover_for, min_recover());
    assert!(
        s.estimate(1, 1.0).measurements >= 5,
        "the derived levels are counted"
    );

    for (bad, says) in [
        ("rates = [-5]", "not a positive rate"),
        ("fractions = [\"150%\"]", "at most 100%"),
        ("fractions = [\"half\"]", "not a percentage"),
        ("overload = [\"90%\"]", "more than 100% of the capacity"),
        ("rates = [1], deadline = \"0s\"", "must be more than 0"),
        ("", "at least one of `rates`, `fractions` or `overload`"),
        ("rates = [1], bogus = 1", "unknown field `bogus`"),
    ] {
        let e = parse_err(&with(bad));
        assert!(e.to_string().contains(says), "{bad}: {e}");
        assert_eq!(e.line, Some(9), "{bad}: the cost line: {e}");
    }
    let open = MINIMAL.replace(
        "load = { connections = 2, duration = \"1s\" }\n",
        "load = { rate = 100, connections = 2, duration = \"1s\" }\ncost = { rates = [50] }\n",
    );
    let e = parse_err(&open);
    assert!(e.to_string().contains("needs a closed-loop `load`"), "{e}");
    // A sweep before the capacity level (fastapi-vs-falcon) is measured as
    // written; a sweep whose last level is open is refused.
    let sweep = |last: &str| {
        MINIMAL.replace(
            "load = { connections = 2, duration = \"1s\" }\n",
            &format!(
                "levels = [{{ rate = 100, connections = 2, duration = \"1s\" }}, {last}]\n\
                 cost = {{ overload = [\"150%\"] }}\n"
            ),
        )
    };
    let s = parse(
        Path::new("s.toml"),
        &sweep("{ connections = 2, duration = \"3s\" }"),
    )
    .expect("parses");
    let c = s.scenarios[0].cost.clone().unwrap();
    assert_eq!(s.scenarios[0].levels.len(), 2);
    assert_eq!(
        c.duration,
        std::time::Duration::from_secs(3),
        "the last level's"
    );
    let e = parse_err(&sweep("{ rate = 200, connections = 2, duration = \"1s\" }"));
    assert!(e.to_string().contains("the last of `levels`"), "{e}");
}

fn min_recover() -> std::time::Duration {
    crate::cost::MIN_RECOVER
}
