//! The JSON report is checked against the committed `docs/report.schema.json`
//! by a small validator for the subset of JSON Schema the file uses (type,
//! enum, required, properties, additionalProperties, items, minimum). The
//! `jsonschema` crate would do it too, but it pulls in regex engines, URL
//! and HTTP resolution crates: too heavy for one test on a 2-core build.

mod common;

use serde_json::Value;
use shootout_report::fixture::FixtureOptions;

const SCHEMA: &str = include_str!("../../../docs/report.schema.json");

fn type_ok(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => false,
    }
}

fn validate(schema: &Value, v: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !types.iter().any(|t| type_ok(t, v)) {
            errors.push(format!("{path}: expected {types:?}, got {v}"));
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(v) {
            errors.push(format!("{path}: {v} not in {allowed:?}"));
        }
    }
    if let (Some(min), Some(x)) = (schema.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if x < min {
            errors.push(format!("{path}: {x} < {min}"));
        }
    }
    if let Value::Object(map) = v {
        object(schema, map, path, errors);
    }
    if let (Value::Array(items), Some(item_schema)) = (v, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            validate(item_schema, item, &format!("{path}[{i}]"), errors);
        }
    }
}

fn object(
    schema: &Value,
    map: &serde_json::Map<String, Value>,
    path: &str,
    errors: &mut Vec<String>,
) {
    for key in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = key.as_str().unwrap_or_default();
        if !map.contains_key(key) {
            errors.push(format!("{path}: missing {key}"));
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (k, val) in map {
        match props.and_then(|p| p.get(k)) {
            Some(s) => validate(s, val, &format!("{path}.{k}"), errors),
            None if closed => errors.push(format!("{path}: unexpected key {k}")),
            None => {}
        }
    }
}

fn errors_of(doc: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).expect("schema is JSON");
    let mut errors = Vec::new();
    validate(&schema, doc, "$", &mut errors);
    errors
}

fn fixture_json() -> Value {
    let (db, ids) = common::fixture_db("json", &[FixtureOptions::default()]);
    let data = common::load(&db, ids[0]);
    serde_json::from_str(&shootout_report::json(&data)).expect("report is JSON")
}

#[test]
fn json_report_matches_the_committed_schema() {
    let doc = fixture_json();
    assert_eq!(errors_of(&doc), Vec::<String>::new());
    assert_eq!(doc["results"].as_array().map(Vec::len), Some(27));
    assert_eq!(doc["summary"].as_array().map(Vec::len), Some(9));
    let s = &doc["summary"][0]["rps"];
    let (lo, med, hi) = (
        s["ci_low"].as_f64(),
        s["median"].as_f64(),
        s["ci_high"].as_f64(),
    );
    assert!(lo < med && med < hi, "{s}");
}

#[test]
fn the_validator_rejects_a_broken_report() {
    let mut doc = fixture_json();
    doc["results"][0]["rps"] = Value::String("fast".into());
    doc["run"].as_object_mut().expect("run").remove("study");
    doc["summary"][0]["extra"] = Value::Bool(true);
    let errors = errors_of(&doc);
    assert_eq!(errors.len(), 3, "{errors:?}");
}
