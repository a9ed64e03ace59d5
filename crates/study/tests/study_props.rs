//! Property tests of the study parser: arbitrary text, and mutations of the
//! shipped studies (a value, a key or a line replaced, inserted or removed,
//! in the TOML tree or in the raw text), never panic; a study that is
//! refused gets an error that names the file, and a study that is accepted
//! can be run (every level makes a valid engine plan, durations within the
//! 30-day limit). Case counts are bounded so `cargo test` stays fast;
//! `PROPTEST_CASES` asks for a longer soak.

use proptest::prelude::*;
use proptest::test_runner::Config;
use shootout_engine::{units::MAX_DURATION, Endpoint, Plan, RequestSpec};
use shootout_study as study;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Beside the shipped studies, so that their mix files are found.
fn file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies/fuzzed.toml")
}

fn config(cases: u32) -> Config {
    let soak = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    Config {
        cases: soak.unwrap_or(cases),
        failure_persistence: None,
        ..Config::default()
    }
}

/// The shipped studies, as text: the seeds every mutation starts from.
fn seeds() -> &'static [String] {
    static SEEDS: OnceLock<Vec<String>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("studies/ is readable")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        let texts: Vec<String> = files
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("a study is readable"))
            .collect();
        assert!(
            texts.len() >= 3,
            "too few seed studies in {}",
            dir.display()
        );
        texts
    })
}

/// Parses and checks the outcome: refused names the file; accepted runs.
fn check(text: &str) -> Result<(), TestCaseError> {
    match study::parse(&file(), text) {
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(
                msg.starts_with(&*file().to_string_lossy()),
                "error does not name the file: {}",
                msg
            );
        }
        Ok(s) => check_runnable(&s)?,
    }
    Ok(())
}

/// An accepted study must not fail later, when it runs: each level makes a
/// valid engine plan (as `measure::plan_for` builds it) within the limits.
fn check_runnable(s: &study::Study) -> Result<(), TestCaseError> {
    for sc in &s.scenarios {
        prop_assert!(sc.warmup.expected() <= MAX_DURATION && sc.timeout <= MAX_DURATION);
        if let study::Warmup::Auto { window, max } = sc.warmup {
            prop_assert!(max <= MAX_DURATION && max >= window * study::STEADY_WINDOWS);
        }
        prop_assert!(sc.path.starts_with('/'), "accepted path {:?}", sc.path);
        let url = format!("http://127.0.0.1:1{}", sc.path);
        let endpoint = Endpoint::parse(&url)
            .map_err(|e| TestCaseError::fail(format!("accepted path {:?}: {e}", sc.path)))?;
        prop_assert!(
            !sc.levels.is_empty() || sc.capacity.is_some(),
            "scenario {:?} has no levels and no capacity search",
            sc.name
        );
        if let Some(c) = &sc.capacity {
            prop_assert!(c.step <= MAX_DURATION && c.warmup <= MAX_DURATION);
            prop_assert!(c.precision > 0.0 && c.precision <= 0.5 && !c.slo.is_empty());
        }
        // A capacity search builds its plan from its template level.
        let template = sc.capacity.as_ref().map(|c| c.template_level());
        for level in sc.levels.iter().chain(template.as_ref()) {
            // A staged level lasts as long as its stages, so this bounds
            // their sum too (two 720h stages once made a 60-day level).
            prop_assert!(level.stop().duration.is_none_or(|d| d <= MAX_DURATION));
            Plan::builder(endpoint.clone(), level.workload.clone())
                .request(RequestSpec {
                    method: sc.method.clone(),
                    headers: Vec::new(),
                    body: sc.body.clone(),
                })
                .warmup(sc.warmup.engine())
                .timeout(sc.timeout)
                .threads(s.threads.unwrap_or(1))
                .keepalive(level.keepalive)
                .build()
                .map_err(|e| {
                    TestCaseError::fail(format!(
                        "accepted level {:?} is not runnable: {e}",
                        level.label
                    ))
                })?;
        }
    }
    Ok(())
}

// ---- generators ----

const KEYS: &[&str] = &[
    "name",
    "description",
    "source",
    "targets",
    "repetitions",
    "order",
    "restart",
    "warmup",
    "timeout",
    "threads",
    "cpus",
    "metrics",
    "scenario",
    "published",
    "method",
    "path",
    "body",
    "keepalive",
    "load",
    "levels",
    "mode",
    "label",
    "connections",
    "requests",
    "duration",
    "rate",
    "unit",
    "stages",
    "to",
    "server",
    "generator",
    "json",
    "rps",
    "p99_ms",
];

const WORDS: &[&str] = &[
    "",
    "all",
    "closed",
    "open",
    "stages",
    "rate",
    "connections",
    "rotate",
    "fixed",
    "random",
    "per-repetition",
    "per-scenario",
    "per-level",
    "json",
    "plaintext",
    "simple",
    "file_read",
    "wait_time",
    "bcrypt",
    "-1s",
    "0s",
    "1e30",
    "1e30s",
    "31d",
    "720h",
    "721h",
    "2m",
    "NaN",
    "inf",
    "10k",
    "1.5",
    "/",
    "/json",
    "json",
    "//x",
    "/a b",
    "/\u{e9}",
    "http://x/",
    "GET",
    "POST",
    "get",
    "G E T",
    "\n",
    "0-1",
    "1-0",
    "0,1",
    "auto",
    "1024",
    "\u{0}",
];

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(String::from),
        1 => "[a-z_]{1,10}",
        1 => "\\PC{1,6}",
    ]
}

fn leaf() -> impl Strategy<Value = toml::Value> {
    use toml::Value;
    prop_oneof![
        any::<i64>().prop_map(Value::Integer),
        prop::sample::select(
            &[
                0i64,
                1,
                -1,
                2,
                100,
                1024,
                1 << 31,
                1 << 32,
                i64::MAX,
                i64::MIN
            ][..]
        )
        .prop_map(Value::Integer),
        any::<f64>().prop_map(Value::Float),
        prop::sample::select(&[0.0, -0.0, 0.5, -1.0, 1e30, 1e-300, f64::NAN, f64::INFINITY][..])
            .prop_map(Value::Float),
        any::<bool>().prop_map(Value::Boolean),
        prop::sample::select(WORDS).prop_map(|w| Value::String(w.to_string())),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = toml::Value> {
    leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(toml::Value::Array),
            prop::collection::vec((key(), inner), 0..4)
                .prop_map(|kv| toml::Value::Table(kv.into_iter().collect())),
        ]
    })
}

#[derive(Debug, Clone)]
enum Edit {
    /// Replace the value at a place in the tree.
    Replace(toml::Value),
    /// Add (or overwrite) a key in a table.
    Insert(String, toml::Value),
    /// Remove a key from a table, or an element from an array.
    Remove,
    /// Rename a key.
    Rename(String),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => value().prop_map(Edit::Replace),
        2 => (key(), value()).prop_map(|(k, v)| Edit::Insert(k, v)),
        1 => Just(Edit::Remove),
        1 => key().prop_map(Edit::Rename),
    ]
}

/// Counts the places in the tree (every value, root included).
fn places(v: &toml::Value) -> usize {
    1 + match v {
        toml::Value::Table(t) => t.values().map(places).sum(),
        toml::Value::Array(a) => a.iter().map(places).sum(),
        _ => 0,
    }
}

/// Applies `edit` at place number `at` (pre-order); returns false if `at`
/// is not in `v`.
fn apply(v: &mut toml::Value, at: &mut usize, edit: &Edit) -> bool {
    if *at == 0 {
        match (edit, &mut *v) {
            (Edit::Replace(new), _) => *v = new.clone(),
            (Edit::Insert(k, new), toml::Value::Table(t)) => {
                t.insert(k.clone(), new.clone());
            }
            (Edit::Remove, toml::Value::Table(t)) => {
                if let Some(k) = t.keys().next().cloned() {
                    t.remove(&k);
                }
            }
            (Edit::Remove, toml::Value::Array(a)) => {
                a.pop();
            }
            (Edit::Rename(new), toml::Value::Table(t)) => {
                if let Some(k) = t.keys().next_back().cloned() {
                    let old = t.remove(&k).expect("the key just listed");
                    t.insert(new.clone(), old);
                }
            }
            (_, other) => *other = toml::Value::String("replaced".into()),
        }
        return true;
    }
    *at -= 1;
    match v {
        toml::Value::Table(t) => t.iter_mut().any(|(_, c)| apply(c, at, edit)),
        toml::Value::Array(a) => a.iter_mut().any(|c| apply(c, at, edit)),
        _ => false,
    }
}

/// A shipped study with 1 to 3 edits of its TOML tree, written back out.
fn tree_mutant() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec((any::<prop::sample::Index>(), edit()), 1..4),
    )
        .prop_map(|(seed, edits)| {
            let text = seed.get(seeds());
            let mut tree: toml::Value = toml::from_str(text).expect("a shipped study is TOML");
            for (at, e) in &edits {
                let mut at = at.index(places(&tree));
                apply(&mut tree, &mut at, e);
            }
            toml::to_string(&tree).unwrap_or_default()
        })
}

/// A shipped study with a line's value, key or whole text replaced, a line
/// removed or one inserted: often no longer TOML at all.
fn text_mutant() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0u8..5,
        prop_oneof![
            prop::sample::select(WORDS).prop_map(|w| format!("\"{w}\"")),
            "\\PC{0,16}",
            leaf().prop_map(|v| v.to_string()),
        ],
        key(),
    )
        .prop_map(|(seed, line, how, text, key)| {
            let mut lines: Vec<String> = seed.get(seeds()).lines().map(String::from).collect();
            let i = line.index(lines.len());
            match how {
                0 => {
                    if let Some((k, _)) = lines[i].split_once('=') {
                        lines[i] = format!("{k}= {text}");
                    }
                }
                1 => {
                    if let Some((_, v)) = lines[i].split_once('=') {
                        lines[i] = format!("{key} ={v}");
                    }
                }
                2 => lines[i] = text,
                3 => {
                    lines.remove(i);
                }
                _ => lines.insert(i, format!("{key} = {text}")),
            }
            lines.join("\n")
        })
}

/// A value for a load key: mostly the right type, often at an edge.
fn load_value(key: &'static str) -> BoxedStrategy<toml::Value> {
    use toml::Value;
    let right: BoxedStrategy<Value> = match key {
        "mode" => prop::sample::select(&["closed", "open", "stages", "ramp"][..])
            .prop_map(|m| Value::String(m.into()))
            .boxed(),
        "unit" => prop::sample::select(&["connections", "rate", "users"][..])
            .prop_map(|m| Value::String(m.into()))
            .boxed(),
        "duration" => prop::sample::select(&["0s", "1ms", "1s", "30d", "721h", "-1s", "1e30"][..])
            .prop_map(|d| Value::String(d.into()))
            .boxed(),
        "rate" | "to" => prop_oneof![
            prop::sample::select(
                &[0.0, -1.0, 1e-300, 0.5, 100.0, 1e12, f64::NAN, f64::INFINITY][..]
            )
            .prop_map(Value::Float),
            prop::sample::select(&[0i64, -5, 1, 100, 100_000][..]).prop_map(Value::Integer),
        ]
        .boxed(),
        "keepalive" => any::<bool>().prop_map(Value::Boolean).boxed(),
        "label" => "\\PC{0,8}".prop_map(Value::String).boxed(),
        "stages" => prop::collection::vec(
            (load_value("duration"), load_value("to")).prop_map(|(d, t)| {
                let mut m = toml::Table::new();
                m.insert("duration".into(), d);
                m.insert("to".into(), t);
                Value::Table(m)
            }),
            0..3,
        )
        .prop_map(Value::Array)
        .boxed(),
        // connections, requests
        _ => prop::sample::select(&[0i64, 1, 2, 64, 100_000, 1 << 40, -1][..])
            .prop_map(Value::Integer)
            .boxed(),
    };
    prop_oneof![9 => right, 1 => leaf()].boxed()
}

const LOAD_KEYS: &[&str] = &[
    "mode",
    "connections",
    "requests",
    "duration",
    "rate",
    "unit",
    "stages",
    "keepalive",
    "label",
];

/// A plausible value for a load key (edges included), sometimes a bad one.
fn plausible(key: &'static str) -> BoxedStrategy<toml::Value> {
    use toml::Value;
    let good: BoxedStrategy<Value> = match key {
        "duration" => prop::sample::select(&["1ms", "1s", "5s", "2m", "720h", "1.5h"][..])
            .prop_map(|d| Value::String(d.into()))
            .boxed(),
        "rate" | "to" => prop_oneof![
            prop::sample::select(&[1e-300, 0.5, 100.0, 2500.0, 1e12][..]).prop_map(Value::Float),
            (0i64..200).prop_map(Value::Integer),
        ]
        .boxed(),
        "unit" => prop::sample::select(&["connections", "rate"][..])
            .prop_map(|m| Value::String(m.into()))
            .boxed(),
        "stages" => prop::collection::vec(
            (plausible("duration"), plausible("to")).prop_map(|(d, t)| {
                let mut m = toml::Table::new();
                m.insert("duration".into(), d);
                m.insert("to".into(), t);
                Value::Table(m)
            }),
            1..4,
        )
        .prop_map(Value::Array)
        .boxed(),
        "connections" | "requests" => prop::sample::select(&[1i64, 2, 10, 64, 200, 100_000][..])
            .prop_map(Value::Integer)
            .boxed(),
        other => load_value(other),
    };
    prop_oneof![6 => good, 1 => load_value(key)].boxed()
}

/// A load table: a mode's keys with plausible values, sometimes one key
/// dropped (and the mode left implicit) or a stray key added.
fn load_table() -> impl Strategy<Value = toml::Value> {
    const MODES: &[(&str, &[&str])] = &[
        ("closed", &["connections", "requests", "duration"]),
        ("closed", &["connections", "duration"]),
        ("open", &["connections", "rate", "duration"]),
        ("stages", &["unit", "connections", "stages"]),
    ];
    let mode = prop::sample::select(MODES);
    (
        mode,
        prop::collection::vec(prop::sample::select(LOAD_KEYS), 0..2),
        any::<bool>(),
        prop::option::weighted(0.2, any::<prop::sample::Index>()),
    )
        .prop_flat_map(|((mode, keys), strays, explicit, drop)| {
            let mut keys: Vec<&'static str> = keys.to_vec();
            if let Some(i) = drop {
                keys.remove(i.index(keys.len()));
            }
            keys.extend(strays);
            let values: Vec<_> = keys
                .into_iter()
                .map(|k| plausible(k).prop_map(move |v| (k, v)))
                .collect();
            values.prop_map(move |kv| {
                let mut t: toml::Table = kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                if explicit {
                    t.insert("mode".into(), toml::Value::String(mode.into()));
                }
                toml::Value::Table(t)
            })
        })
}

/// A shipped study whose every scenario's load is replaced by generated
/// levels (as `load` or as `levels`): the level rules, aimed at directly.
fn load_mutant() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec(load_table(), 1..4),
        any::<bool>(),
        prop::option::weighted(0.2, load_value("duration")),
        prop::option::weighted(0.2, prop::sample::select(&[0i64, 1, 4, 1 << 40][..])),
    )
        .prop_map(|(seed, loads, as_levels, warmup, threads)| {
            let text: &String = seed.get(seeds());
            let mut tree: toml::Table = toml::from_str(text).expect("TOML");
            if let Some(w) = warmup {
                tree.insert("warmup".into(), w);
            }
            if let Some(t) = threads {
                tree.insert("threads".into(), toml::Value::Integer(t));
            }
            if let Some(toml::Value::Array(scenarios)) = tree.get_mut("scenario") {
                for sc in scenarios.iter_mut() {
                    if let toml::Value::Table(sc) = sc {
                        sc.remove("load");
                        sc.remove("levels");
                        if as_levels {
                            sc.insert("levels".into(), toml::Value::Array(loads.clone()));
                        } else {
                            sc.insert("load".into(), loads[0].clone());
                        }
                    }
                }
            }
            toml::to_string(&tree).unwrap_or_default()
        })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn generated_loads_are_refused_or_runnable(text in load_mutant()) {
        check(&text)?;
    }

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![any::<String>(), "[a-z\\[\\]={}\"., \n0-9]{0,200}"]) {
        check(&text)?;
    }

    #[test]
    fn mutated_tree_never_panics(text in tree_mutant()) {
        check(&text)?;
    }

    #[test]
    fn mutated_text_never_panics(text in text_mutant()) {
        check(&text)?;
    }
}

#[test]
fn the_seeds_are_accepted_and_runnable() {
    for text in seeds() {
        let s = study::parse(&file(), text).unwrap_or_else(|e| panic!("{e}"));
        check_runnable(&s).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
}
