//! The search against simulated servers: a function from (phase, rate) to a
//! level verdict stands in for running a level, so every path is checked
//! without sockets or timing.

use super::*;

/// Runs the search to the end against `server`; returns the outcome and
/// every level tried.
fn simulate(
    probe: f64,
    precision: f64,
    server: impl Fn(Phase, f64) -> LevelVerdict,
) -> (Outcome, Vec<Tried>) {
    let mut tried = Vec::new();
    loop {
        assert!(tried.len() < 60, "the search does not end: {tried:?}");
        match decide(&tried, probe, precision) {
            Action::Run { phase, rate, .. } => tried.push(Tried {
                phase,
                rate,
                verdict: server(phase, rate),
            }),
            Action::Done(outcome) => return (outcome, tried),
        }
    }
}

fn limit(capacity: f64) -> impl Fn(Phase, f64) -> LevelVerdict {
    move |_, rate| {
        if rate <= capacity {
            LevelVerdict::Pass
        } else {
            LevelVerdict::Fail
        }
    }
}

fn rates(tried: &[Tried], phase: Phase) -> Vec<f64> {
    tried
        .iter()
        .filter(|t| t.phase == phase)
        .map(|t| t.rate)
        .collect()
}

#[test]
fn bisection_converges_within_precision_then_draws_the_curve() {
    for (probe, capacity) in [(1200.0, 1000.0), (300.0, 1000.0), (50_000.0, 1000.0)] {
        let (out, tried) = simulate(probe, 0.02, limit(capacity));
        assert_eq!(out.verdict, Verdict::Found, "{probe}: {tried:?}");
        let found = out.capacity.unwrap();
        assert!(
            found <= capacity && found >= capacity / 1.02,
            "{probe}: found {found}"
        );
        assert!(!out.unstable);
        assert_eq!(rates(&tried, Phase::Confirm), vec![found]);
        let curve = rates(&tried, Phase::Curve);
        let want: Vec<f64> = CURVE.iter().map(|f| f * found).collect();
        assert_eq!(curve, want);
        assert!(rates(&tried, Phase::Search).len() <= 14, "{tried:?}");
    }
}

#[test]
fn precision_sets_how_close_the_bracket_gets() {
    let (coarse, _) = simulate(1200.0, 0.2, limit(1000.0));
    let (fine, _) = simulate(1200.0, 0.005, limit(1000.0));
    let (c, f) = (coarse.capacity.unwrap(), fine.capacity.unwrap());
    assert!((1000.0 / 1.005..=1000.0).contains(&f), "{f}");
    assert!(
        c < f,
        "a coarse search stops further from the limit: {c} vs {f}"
    );
}

#[test]
fn a_failed_confirm_steps_down_five_percent() {
    // Search levels pass up to 1000, but a second run holds only 930.
    let server = |phase, rate: f64| match phase {
        Phase::Confirm | Phase::Curve if rate > 930.0 => LevelVerdict::Fail,
        _ if rate <= 1000.0 => LevelVerdict::Pass,
        _ => LevelVerdict::Fail,
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    let confirms = rates(&tried, Phase::Confirm);
    assert_eq!(confirms.len(), 3, "{confirms:?}");
    for w in confirms.windows(2) {
        assert!((w[1] - w[0] * STEP_DOWN).abs() < 1e-9);
    }
    assert_eq!(out.verdict, Verdict::Found);
    assert_eq!(out.capacity, confirms.last().copied());
    assert!(out.capacity.unwrap() <= 930.0);
}

#[test]
fn confirms_are_bounded_and_end_in_none() {
    let server = |phase, rate: f64| match phase {
        Phase::Confirm => LevelVerdict::Fail,
        _ => limit(1000.0)(phase, rate),
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    assert_eq!(rates(&tried, Phase::Confirm).len(), MAX_CONFIRMS);
    assert_eq!((out.verdict, out.capacity), (Verdict::None, None));
    assert!(rates(&tried, Phase::Curve).is_empty());
}

#[test]
fn a_pass_above_a_fail_is_unstable_and_the_lower_is_reported() {
    // The server holds 1000, except for a hiccup at half of that.
    let server = |phase, rate: f64| match phase {
        Phase::Curve if (rate - 500.0).abs() < 30.0 => LevelVerdict::Fail,
        _ => limit(1000.0)(phase, rate),
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    assert!(out.unstable, "{tried:?}");
    assert_eq!(out.verdict, Verdict::Found);
    let curve = rates(&tried, Phase::Curve);
    // The highest pass below the failed 50% level: the 25% level.
    assert_eq!(out.capacity, Some(curve[0]));
}

#[test]
fn no_rate_passes_gives_none_after_a_bounded_descent() {
    let (out, tried) = simulate(200.0, 0.02, |_, _| LevelVerdict::Fail);
    assert_eq!((out.verdict, out.capacity), (Verdict::None, None));
    let search = rates(&tried, Phase::Search);
    assert_eq!(search, vec![100.0, 25.0, 6.25, 1.5625]);
    assert!(rates(&tried, Phase::Confirm).is_empty());
}

#[test]
fn generator_limited_levels_are_not_the_servers_limit() {
    // The server holds 1000 but the generator cannot offer more than 700.
    let server = |phase, rate: f64| {
        if rate > 700.0 {
            LevelVerdict::GeneratorLimited
        } else {
            limit(1000.0)(phase, rate)
        }
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    assert_eq!(out.verdict, Verdict::GeneratorLimited, "{tried:?}");
    let lower_bound = out.capacity.unwrap();
    assert!(
        (700.0 / 1.02..=700.0).contains(&lower_bound),
        "{lower_bound}"
    );
    // Never a fail recorded, never a confirm of an undecided limit.
    assert!(tried.iter().all(|t| t.verdict != LevelVerdict::Fail));
    assert!(rates(&tried, Phase::Confirm).is_empty());
}

#[test]
fn a_generator_limited_level_inside_the_bracket_does_not_end_a_decidable_search() {
    // One level near the limit misses the schedule; the rest decide.
    let server = |phase, rate: f64| {
        if (1100.0..1300.0).contains(&rate) {
            LevelVerdict::GeneratorLimited
        } else {
            limit(900.0)(phase, rate)
        }
    };
    let (out, _) = simulate(1200.0, 0.02, server);
    assert_eq!(out.verdict, Verdict::Found);
    let c = out.capacity.unwrap();
    assert!((900.0 / 1.02..=900.0).contains(&c), "{c}");
}

#[test]
fn a_generator_limited_start_is_generator_limited() {
    let (out, tried) = simulate(1200.0, 0.02, |_, _| LevelVerdict::GeneratorLimited);
    assert_eq!(
        (out.verdict, out.capacity),
        (Verdict::GeneratorLimited, None)
    );
    assert_eq!(
        rates(&tried, Phase::Search),
        vec![600.0, 600.0, 300.0, 300.0]
    );
}

#[test]
fn the_bracket_ignores_passes_above_the_lowest_fail() {
    let t = |rate, verdict| Tried {
        phase: Phase::Search,
        rate,
        verdict,
    };
    let tried = [
        t(500.0, LevelVerdict::Pass),
        t(800.0, LevelVerdict::Fail),
        t(900.0, LevelVerdict::Pass),
    ];
    assert_eq!(bracket(&tried), (Some(500.0), Some(800.0)));
    assert!(unstable(&tried));
}

#[test]
fn a_generator_limited_descent_is_retried_a_bounded_number_of_times() {
    // The first level fails; below it the generator never keeps the schedule.
    let server = |_, rate: f64| {
        if rate > 500.0 {
            LevelVerdict::Fail
        } else {
            LevelVerdict::GeneratorLimited
        }
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    assert_eq!(
        (out.verdict, out.capacity),
        (Verdict::GeneratorLimited, None)
    );
    assert_eq!(
        rates(&tried, Phase::Search),
        vec![600.0, 150.0, 150.0, 150.0]
    );
}

#[test]
fn a_rate_the_generator_missed_once_is_run_again_and_then_decides() {
    // The server holds 1000; the generator hiccups on the first try of each
    // rate between 1000 and 1100 (as on python-fastapi on a busy machine).
    let first = std::cell::RefCell::new(Vec::<f64>::new());
    let server = |phase, rate: f64| {
        if (1000.0..1100.0).contains(&rate) && !first.borrow().contains(&rate) {
            first.borrow_mut().push(rate);
            return LevelVerdict::GeneratorLimited;
        }
        limit(1000.0)(phase, rate)
    };
    let (out, tried) = simulate(1200.0, 0.02, server);
    assert_eq!(out.verdict, Verdict::Found, "{tried:?}");
    let c = out.capacity.unwrap();
    assert!((1000.0 / 1.02..=1000.0).contains(&c), "{c} {tried:?}");
    // Every missed rate was retried at once (and there was one).
    assert!(tried
        .iter()
        .any(|t| t.verdict == LevelVerdict::GeneratorLimited));
    for (i, t) in tried.iter().enumerate() {
        if t.verdict == LevelVerdict::GeneratorLimited {
            assert_eq!(tried[i + 1].rate, t.rate, "{tried:?}");
        }
    }
}
