//! Examples of each verdict, and of each criterion deciding alone (so none
//! of them is a check that cannot fail).

use super::*;

fn rule() -> Rule {
    Rule::default()
}

#[test]
fn a_flat_series_is_steady_after_2k_windows() {
    let v = rule().run(&[1000.0; 12]).unwrap();
    assert!(matches!(v, Verdict::Steady { windows: 10, .. }), "{v:?}");
    let v = rule().judge(&[1000.0; 4]).unwrap();
    assert_eq!(v, Verdict::Warming(Unsteady::TooFew { have: 4, need: 10 }));
    let v = rule().judge(&[1000.0; 9]).unwrap();
    assert_eq!(v, Verdict::Warming(Unsteady::TooFew { have: 9, need: 10 }));
}

#[test]
fn a_jit_warm_up_is_waited_for() {
    // 3.4k req/s rising to 100k, then flat: steady once the last five
    // windows are on the plateau and most of the five before them.
    let mut s: Vec<f64> = (0..10).map(|i| 3_400.0 + 9_000.0 * i as f64).collect();
    for _ in 0..2 {
        s.extend([
            100_000.0, 99_500.0, 100_400.0, 100_100.0, 99_800.0, 100_200.0,
        ]);
    }
    let v = rule().run(&s).unwrap();
    let Verdict::Steady { windows, stats } = v else {
        panic!("{v:?}");
    };
    assert!(
        (15..=20).contains(&windows) && stats.mean > 99_000.0,
        "{v:?}"
    );
}

#[test]
fn noise_alone_does_not_hold_a_server_back_but_is_told() {
    // Windows 20% apart with no trend, as this shared VM gives a warm
    // rust-axum: steady, and noisy.
    let s: Vec<f64> = (0..10).map(|i| [90.0, 110.0][i % 2]).collect();
    let v = rule().judge(&s).unwrap();
    let Verdict::Steady { stats, .. } = v else {
        panic!("{v:?}");
    };
    assert!(rule().is_noisy(stats.cv) && stats.cv > 0.1, "{stats:?}");
    let v = rule().judge(&[1000.0; 10]).unwrap();
    let Verdict::Steady { stats, .. } = v else {
        panic!("{v:?}");
    };
    assert!(!rule().is_noisy(stats.cv), "{stats:?}");
}

#[test]
fn a_slow_monotone_rise_with_little_variation_is_a_drift() {
    // 0.5% a window: the last five vary under 1%, and each half is within
    // 3% of the other, but the trend is significant and fits a 4.4% rise.
    let s: Vec<f64> = (0..10).map(|i| 100.0 + 0.5 * i as f64).collect();
    let v = rule().judge(&s).unwrap();
    let Verdict::Warming(Unsteady::Drift(st)) = v else {
        panic!("{v:?}");
    };
    assert!(
        st.cv < 0.03 && st.step < 0.03 && st.drift > 0.03 && st.p_value < 0.05,
        "{st:?}"
    );
}

#[test]
fn a_significant_trend_too_small_to_matter_is_steady() {
    // 0.1% a window: monotone (p < 0.001), fitted 0.9% across ten.
    let s: Vec<f64> = (0..10).map(|i| 1000.0 + i as f64).collect();
    let v = rule().judge(&s).unwrap();
    let Verdict::Steady { stats, .. } = v else {
        panic!("{v:?}");
    };
    assert!(stats.p_value < 0.05 && stats.drift < 0.03, "{stats:?}");
}

#[test]
fn a_change_the_noise_hides_from_the_test_is_not_a_step() {
    // A 5% higher second half, not monotone enough to be significant.
    let s = [
        1000.0, 1040.0, 960.0, 1100.0, 900.0, 1150.0, 950.0, 1100.0, 1000.0, 1050.0,
    ];
    let v = rule().judge(&s).unwrap();
    let Verdict::Steady { stats, .. } = v else {
        panic!("{v:?}");
    };
    assert!(stats.p_value >= 0.05 && stats.step > 0.03, "{stats:?}");
}

#[test]
fn a_step_the_last_k_windows_cannot_see_is_waited_out() {
    // Five flat windows, then five flat windows 8% higher (a JIT tier
    // arriving): each five alone is steady, together they are not.
    let mut s = vec![1000.0, 1002.0, 998.0, 1001.0, 999.0];
    s.extend([1080.0, 1082.0, 1078.0, 1081.0, 1079.0]);
    let v = rule().judge(&s).unwrap();
    let Verdict::Warming(Unsteady::Step(st)) = v else {
        panic!("{v:?}");
    };
    assert!(
        st.cv < 0.03 && st.step_p_value < 0.05 && (st.step - 0.08).abs() < 0.001,
        "{st:?}"
    );
    s.extend([1080.0, 1079.0, 1081.0, 1080.0, 1078.0]);
    let v = rule().run(&s).unwrap();
    let Verdict::Steady { windows, stats } = v else {
        panic!("{v:?}");
    };
    assert!(windows > 10 && stats.mean > 1075.0, "{v:?}");
}

#[test]
fn the_java_spring_warm_up_seen_here_is_not_called_steady_early() {
    // java-spring's plaintext throughput in 500 ms windows on one CPU of
    // this machine (2026-11-25): a JIT still climbing slowly past 30 s.
    // Looking at five windows alone called it steady at window 23 (8.1k
    // req/s, 66% of the 12.3k measured by hand after 30 s).
    let s = [
        1136.0, 1316.0, 1320.0, 1582.0, 1668.0, 1706.0, 2100.0, 2196.0, 2126.0, 2570.0, 2920.0,
        3320.0, 4476.0, 5696.0, 7296.0, 7646.0, 6948.0, 7744.0, 7942.0, 8162.0, 8290.0, 8012.0,
        8176.0, 8354.0, 8332.0, 8380.0, 8716.0, 8842.0, 8720.0, 8684.0,
    ];
    let v = rule().run(&s).unwrap();
    assert!(!matches!(v, Verdict::Steady { .. }), "{v:?}");
}

#[test]
fn a_series_that_never_settles_is_capped() {
    let rising: Vec<f64> = (0..80).map(|i| 1000.0 * 1.02f64.powi(i)).collect();
    let v = rule().run(&rising).unwrap();
    assert!(matches!(v, Verdict::Capped { windows: 60, .. }), "{v:?}");
    let v = rule().run(&[0.0; 60]).unwrap();
    assert_eq!(
        v,
        Verdict::Capped {
            windows: 60,
            last: Unsteady::NoThroughput
        }
    );
}

#[test]
fn bad_samples_and_rules_are_refused() {
    for bad in [f64::NAN, f64::INFINITY, -1.0] {
        let e = rule().judge(&[1.0, bad, 1.0]).unwrap_err();
        assert!(matches!(e, SteadyError::Sample { index: 1, .. }), "{e}");
    }
    let bad_rules = [
        Rule {
            windows: 2,
            ..rule()
        },
        Rule {
            max_cv: 0.0,
            ..rule()
        },
        Rule {
            alpha: 1.0,
            ..rule()
        },
        Rule {
            max_drift: f64::NAN,
            ..rule()
        },
        Rule {
            max_step: 0.0,
            ..rule()
        },
        Rule { cap: 9, ..rule() },
    ];
    for r in bad_rules {
        assert!(r.judge(&[1.0; 10]).is_err(), "{r:?} accepted");
    }
    rule().validate().unwrap();
}
