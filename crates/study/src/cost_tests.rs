//! A cost table's values that could only fail at run time (after the
//! build, the verification and the first load) are refused by the parser,
//! with file, line and the key as written (issue 47, defect 4).

use super::*;

fn parse_err(text: &str) -> StudyError {
    parse(Path::new("studies/bad.toml"), text).unwrap_err()
}

/// A study whose scenario's closed level lasts `closed` and has `cost`.
fn with(closed: &str, cost: &str) -> String {
    format!(
        "name = \"tiny\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"a\"]\n\n\
         [[scenario]]\nname = \"json\"\nload = {{ connections = 2, {closed} }}\ncost = {{ {cost} }}\n"
    )
}

#[test]
fn cost_values_that_cannot_run_are_refused_with_their_key() {
    let max = shootout_engine::MAX_RATE;
    let over = format!("rates = [{:e}]", max * 2.0);
    for (cost, key, says) in [
        (
            over.as_str(),
            "cost.rates",
            "more than any generator can pace",
        ),
        (
            "rates = [100], overload = [\"200%\"], overload_for = \"1ms\"",
            "cost.overload_for",
            "at least 1s: goodput is counted per whole second",
        ),
        (
            "rates = [100], overload = [\"200%\"], recover_for = \"1ms\"",
            "cost.recover_for",
            "at least 3s: recovery is three good seconds in a row",
        ),
        (
            "rates = [100], overload = [\"200%\"], recover_for = \"2s\"",
            "cost.recover_for",
            "could never show one",
        ),
        (
            "rates = [100], duration = \"1ms\"",
            "cost.duration",
            "at least 1s",
        ),
        (
            "rates = [0.001]",
            "cost.rates",
            "at 0.001 req/s not one request is due in 2s (the closed level's duration",
        ),
        (
            "rates = [0.1], duration = \"5s\"",
            "cost.rates",
            "not one request is due in 5s (`cost.duration`)",
        ),
    ] {
        let e = parse_err(&with("duration = \"2s\"", cost));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(9), Some(key)),
            "{cost}: {e}"
        );
        assert!(e.to_string().contains(says), "{cost}: {e}");
    }
    // The engine's limit itself, and one request due, are accepted.
    let ok = format!("rates = [{max:e}, 0.5]");
    parse(Path::new("s.toml"), &with("duration = \"2s\"", &ok)).expect("at the limits");
    let edge = "rates = [1], overload = [\"200%\"], overload_for = \"1s\", recover_for = \"3s\"";
    parse(Path::new("s.toml"), &with("duration = \"2s\"", edge)).expect("the shortest phases");
}

#[test]
fn a_request_counted_closed_level_gives_a_two_second_cost_duration() {
    let s = parse(
        Path::new("s.toml"),
        &with("requests = 1000", "rates = [10]"),
    )
    .expect("parses");
    let c = s.scenarios[0].cost.clone().expect("a cost");
    assert_eq!(c.duration, crate::cost::DEFAULT_COUNTED_DURATION);
    assert_eq!(c.duration, std::time::Duration::from_secs(2));
}

#[test]
fn scaling_keeps_a_request_due_at_the_slowest_common_rate() {
    let s = parse(
        Path::new("s.toml"),
        &with("duration = \"10s\"", "rates = [0.25]"),
    )
    .expect("4 requests due in 10 s");
    let q = s.scaled(0.1).scenarios[0].cost.clone().expect("a cost");
    assert!(
        0.25 * q.duration.as_secs_f64() >= 1.0,
        "scaled to {:?}: no request due",
        q.duration
    );
    // Never longer than written.
    assert!(q.duration <= std::time::Duration::from_secs(10));
}
