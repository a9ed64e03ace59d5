//! Mix files, good and bad: every refusal names its line and key.

use super::*;

const GOOD: &str = r#"
[[request]]
name = "db"
weight = 60
path = "/db"

[[request]]
name = "queries"
weight = 30
path = "/queries?queries={1..20}"

[[request]]
name = "update"
weight = 10
method = "post"
path = "/updates?queries=5"
headers = { "Content-Type" = "application/json" }
body = '{"x":1}'
"#;

fn refused(text: &str) -> FileError {
    parse(Path::new("m.toml"), text).expect_err("refused")
}

#[test]
fn a_good_file_gives_its_kinds_in_order() {
    let mix = parse(Path::new("m.toml"), GOOD).expect("parses");
    let names: Vec<&str> = mix.kinds().iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["db", "queries", "update"]);
    let update = &mix.kinds()[2];
    assert_eq!(
        (update.weight, update.request.method.as_str()),
        (10, "POST")
    );
    assert_eq!(update.request.body, br#"{"x":1}"#);
    assert_eq!(
        update.request.headers,
        [("Content-Type".to_string(), "application/json".to_string())]
    );
    assert_eq!(mix.kinds()[1].path.ranges().collect::<Vec<_>>(), [(1, 20)]);
    assert_eq!(mix.kinds()[0].request.method, "GET");
    assert_eq!(mix.kinds()[0].expect, None, "the run's checks apply");
}

#[test]
fn a_kind_may_have_its_own_checks() {
    let text = GOOD.replace(
        "path = \"/db\"",
        "path = \"/db\"\nexpect_status = [200, \"3xx\"]\nexpect_type = \"application/json\"\nexpect_body = \"{}\"",
    );
    let mix = parse(Path::new("m.toml"), &text).expect("parses");
    let e = mix.kinds()[0].expect.clone().expect("its own");
    assert_eq!(e.status, [StatusMatch::Code(200), StatusMatch::Class(3)]);
    assert_eq!(e.media_type.as_deref(), Some("application/json"));
    assert_eq!(e.body, Some(BodyMatch::Exact(b"{}".to_vec())));
    let e = refused(&GOOD.replace("path = \"/db\"", "path = \"/db\"\nexpect_status = [20]"));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(6), Some("expect_status")),
        "{e}"
    );
    let e = refused(&GOOD.replace("path = \"/db\"", "path = \"/db\"\nexpect_type = \"json\""));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(6), Some("expect_type")),
        "{e}"
    );
}

#[test]
fn bad_files_name_line_and_key() {
    let cases = [
        (
            GOOD.replace("weight = 30", "weight = 0"),
            9,
            "weight",
            "at least 1",
        ),
        (
            GOOD.replace("weight = 30", "weight = -3"),
            9,
            "weight",
            "whole number",
        ),
        (
            GOOD.replace("{1..20}", "{5..1}"),
            10,
            "path",
            "'{5..1}' is empty",
        ),
        (GOOD.replace("{1..20}", "{1..x}"), 10, "path", "not a range"),
        (
            GOOD.replace("path = \"/db\"", "path = \"db\""),
            5,
            "path",
            "start with '/'",
        ),
        (
            GOOD.replace("name = \"queries\"", "name = \"db\""),
            8,
            "name",
            "names two",
        ),
        (
            GOOD.replace("weight = 60", "wieght = 60"),
            4,
            "wieght",
            "unknown field",
        ),
        (
            GOOD.replace("method = \"post\"", "method = \"P0ST\""),
            15,
            "method",
            "not an HTTP",
        ),
        (
            GOOD.replace("body = '{\"x\":1}'", "body = 'a'\nbody_file = 'b.json'"),
            19,
            "body_file",
            "not both",
        ),
    ];
    for (text, line, key, says) in cases {
        let e = refused(&text);
        assert_eq!((e.line, e.key.as_deref()), (Some(line), Some(key)), "{e}");
        assert!(e.message.contains(says), "{e}");
        assert!(
            e.to_string()
                .starts_with(&format!("m.toml:{line}: key `{key}`")),
            "{e}"
        );
    }
    let e = refused("[[request]]\nname = \"a\"\nweight = 1\n");
    assert_eq!(e.key.as_deref(), Some("path"), "{e}");
    let e = refused("");
    assert_eq!(e.key.as_deref(), Some("request"), "{e}");
}

#[test]
fn a_body_file_is_read_beside_the_mix_file() {
    let dir = std::env::temp_dir().join(format!("shootout-mix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("body.json"), b"{\"y\":2}").expect("write");
    let text = GOOD.replace("body = '{\"x\":1}'", "body_file = 'body.json'");
    let mix = parse(&dir.join("m.toml"), &text);
    let missing = parse(&dir.join("m.toml"), &text.replace("body.json", "nope.json"));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(mix.expect("parses").kinds()[2].request.body, b"{\"y\":2}");
    let e = missing.expect_err("refused");
    assert_eq!((e.line, e.key.as_deref()), (Some(18), Some("body_file")));
}
