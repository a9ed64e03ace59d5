//! Properties of the rule over generated series: flat noise settles, a rise
//! or fall never does, a warm-up is waited out, units do not matter.

use super::*;
use proptest::prelude::*;

fn rule() -> Rule {
    Rule::default()
}

/// `n` windows around `base` with relative noise within ±`noise`.
fn noisy(base: f64, noise: &[f64]) -> Vec<f64> {
    noise.iter().map(|e| base * (1.0 + e)).collect()
}

proptest! {
    #[test]
    fn flat_noise_within_two_percent_settles(
        base in 100.0f64..1e6,
        noise in prop::collection::vec(-0.02f64..0.02, 30),
    ) {
        let v = rule().run(&noisy(base, &noise)).unwrap();
        prop_assert!(matches!(v, Verdict::Steady { .. }), "{:?}", v);
    }

    #[test]
    fn flat_noise_of_any_size_settles_before_the_cap(
        base in 100.0f64..1e6,
        noise in prop::collection::vec(-0.25f64..0.25, 60),
    ) {
        // A shared VM's windows vary by 10-25% around a warm server.
        let v = rule().run(&noisy(base, &noise)).unwrap();
        prop_assert!(matches!(v, Verdict::Steady { .. }), "{:?}", v);
    }

    #[test]
    fn a_steady_rise_or_fall_is_never_steady(
        base in 100.0f64..1e6,
        rate in 0.007f64..0.2,
        falling in any::<bool>(),
        jitter in prop::collection::vec(-0.4f64..0.4, 60),
    ) {
        // Each window moves by `rate` of the first (at least 6% across ten
        // windows); noise stays under half a step, so the series is
        // monotone. A fall is gentler so that 60 windows stay above zero.
        let step = if falling { -rate.min(0.015) } else { rate };
        let s: Vec<f64> = jitter.iter().enumerate()
            .map(|(i, j)| base * (1.0 + step * (i as f64 + j * 0.5)))
            .collect();
        for n in 1..=s.len() {
            let v = rule().judge(&s[..n]).unwrap();
            prop_assert!(!matches!(v, Verdict::Steady { .. }), "steady at {}: {:?}", n, v);
        }
        let end = rule().run(&s).unwrap();
        prop_assert!(matches!(end, Verdict::Capped { windows: 60, .. }), "{:?}", end);
    }

    #[test]
    fn a_rise_too_slow_for_the_variation_is_a_drift(
        base in 100.0f64..1e6,
        rate in 0.004f64..0.01,
    ) {
        let s: Vec<f64> = (0..20).map(|i| base * (1.0 + rate * i as f64)).collect();
        for n in 10..=s.len() {
            let v = rule().judge(&s[..n]).unwrap();
            let held = matches!(v, Verdict::Warming(Unsteady::Drift(st) | Unsteady::Step(st)) if st.cv <= 0.03);
            prop_assert!(held, "{:?}", v);
        }
    }

    #[test]
    fn a_warm_up_is_waited_out(
        plateau in 1000.0f64..1e6,
        start in 0.05f64..0.7,
        ramp in 1usize..15,
        noise in prop::collection::vec(-0.01f64..0.01, 40),
    ) {
        // A ramp ending 10% under the plateau, then the noisy plateau.
        let mut s: Vec<f64> = (0..ramp)
            .map(|i| plateau * (start + (0.9 - start) * i as f64 / ramp.max(2).saturating_sub(1) as f64).min(0.9))
            .collect();
        s.extend(noisy(plateau, &noise));
        let v = rule().run(&s).unwrap();
        let Verdict::Steady { windows, .. } = v else {
            return Err(TestCaseError::fail(format!("{v:?}")));
        };
        prop_assert!(windows >= ramp + 5, "steady at {} with the ramp ending at {}", windows, ramp);
    }

    #[test]
    fn units_do_not_matter(
        s in prop::collection::vec(1.0f64..1e6, 1..70),
        exp in -20i32..20,
    ) {
        // A power of two scales every value exactly.
        let scaled: Vec<f64> = s.iter().map(|v| v * 2f64.powi(exp)).collect();
        let (a, b) = (rule().run(&s).unwrap(), rule().run(&scaled).unwrap());
        let shape = |v: &Verdict| match v {
            Verdict::Steady { windows, .. } => (0, *windows),
            Verdict::Capped { windows, .. } => (1, *windows),
            Verdict::Warming(_) => (2, 0),
        };
        prop_assert_eq!(shape(&a), shape(&b));
    }

    #[test]
    fn capped_only_at_the_cap(
        s in prop::collection::vec(0.0f64..1e6, 0..80),
        cap in 10usize..70,
    ) {
        let r = Rule { cap, ..rule() };
        match r.judge(&s).unwrap() {
            Verdict::Capped { windows, .. } => prop_assert!(windows == s.len() && s.len() >= cap),
            Verdict::Warming(_) => prop_assert!(s.len() < cap),
            Verdict::Steady { windows, .. } => prop_assert_eq!(windows, s.len()),
        }
    }
}
