//! Statistics checked against values computed independently with SciPy 1.17
//! (`scipy.stats.t.ppf`, `ttest_ind(equal_var=False)`, `mannwhitneyu`,
//! `scipy.special.betainc`/`gammaln`) and printed here to full precision.

use super::special::{beta_inc, ln_gamma, normal_cdf, t_cdf};
use super::*;

fn close(a: f64, b: f64, tol: f64) {
    assert!(
        (a - b).abs() <= tol * b.abs().max(1e-300),
        "{a} vs {b} (tol {tol})"
    );
}

#[test]
fn special_functions_match_scipy() {
    close(ln_gamma(0.5), 0.5723649429247, 1e-12);
    close(ln_gamma(10.0), 12.801827480081469, 1e-12);
    close(ln_gamma(100.5), 361.43554046777757, 1e-12);
    close(beta_inc(2.5, 0.5, 0.3), 0.018927124071945658, 1e-9);
    close(t_cdf(1.5, 3.0), 0.8847080673775886, 1e-9);
    close(t_cdf(-2.0, 7.0), 0.042809664281488025, 1e-9);
    close(normal_cdf(1.96), 0.9750021048517795, 1e-6);
    close(normal_cdf(-0.5), 0.3085375387259869, 1e-6);
}

#[test]
fn t_quantiles_match_tables() {
    let table = [
        (1.0, 12.706204736174694),
        (2.0, 4.302652729749462),
        (3.0, 3.1824463052837078),
        (4.0, 2.7764451051977934),
        (5.0, 2.5705818356363146),
        (10.0, 2.228138851986274),
        (30.0, 2.0422724563012378),
        (100.0, 1.9839715185235518),
    ];
    for (df, t) in table {
        close(t95(df), t, 1e-9);
    }
}

#[test]
fn descriptive_statistics() {
    let x: Vec<f64> = (1..=10).map(f64::from).collect();
    close(mean(&x), 5.5, 1e-15);
    close(median(&x), 5.5, 1e-15);
    close(stdev(&x), 3.0276503540974917, 1e-12);
    let (lo, hi) = ci95_mean(&x).unwrap();
    close(lo, 3.334149410331831, 1e-9);
    close(hi, 7.665850589668169, 1e-9);
    let rps = [12010.0, 12483.0, 7419.0];
    let s = Spread::of(&rps).unwrap();
    close(s.median, 12010.0, 1e-15);
    close(s.half_ci.unwrap(), 6948.566284306956, 1e-9);
    close(s.cv.unwrap(), 2797.1743480400596 / 10637.333333333334, 1e-9);
}

#[test]
fn small_and_empty_samples_do_not_panic() {
    assert!(mean(&[]).is_nan());
    assert!(median(&[]).is_nan());
    assert_eq!(half_ci95(&[1.0]), None);
    assert_eq!(Spread::of(&[]), None);
    let one = Spread::of(&[3.0]).unwrap();
    assert_eq!((one.median, one.half_ci, one.cv), (3.0, None, None));
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
}

#[test]
fn welch_matches_scipy() {
    let (t, df, p) = welch(&[12010.0, 12100.0, 11950.0], &[7419.0, 7500.0, 7380.0]).unwrap();
    close(t, 81.74146364223047, 1e-9);
    close(df, 3.8360538034712177, 1e-9);
    close(p, 2.3188416735258613e-07, 1e-6);
    let (t, df, p) = welch(
        &[10.1, 9.8, 10.3, 10.0, 9.9],
        &[10.2, 10.0, 9.7, 10.4, 10.1],
    )
    .unwrap();
    close(t, -0.416025147168925, 1e-9);
    close(df, 7.385455786958003, 1e-9);
    close(p, 0.6892157001144129, 1e-9);
    let a: Vec<f64> = (1..=10).map(f64::from).collect();
    let b: Vec<f64> = (4..=13).map(f64::from).collect();
    let (_, df, p) = welch(&a, &b).unwrap();
    close(df, 18.0, 1e-12);
    close(p, 0.03984500957602529, 1e-9);
    assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]), None);
    assert_eq!(welch(&[1.0], &[2.0, 3.0]), None);
}

#[test]
fn mann_whitney_matches_scipy() {
    let p = |a: &[f64], b: &[f64]| mann_whitney_p(a, b).unwrap();
    close(
        p(&[1., 2., 3., 4., 5.], &[6., 7., 8., 9., 10.]),
        0.007936507936507936,
        1e-12,
    );
    close(p(&[1., 2., 3.], &[4., 5., 6.]), 0.1, 1e-12);
    let a = [1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8];
    let b = [4.5, 6.1, 7.2, 8.9, 9.5, 9.9, 10.1, 12.0];
    close(p(&a, &b), 0.014763014763014764, 1e-12);
    let a: Vec<f64> = [1., 2., 2., 3., 3., 3.].repeat(4);
    let b: Vec<f64> = [2., 3., 3., 4., 4., 5.].repeat(4);
    close(p(&a, &b), 0.00014440723815526554, 1e-4);
    assert_eq!(mann_whitney_p(&[], &[1.0]), None);
}

#[test]
fn decisions() {
    let base = [12010.0, 12100.0, 11950.0];
    let slow = [7419.0, 7500.0, 7380.0];
    let v = decide(&base, &slow, true);
    assert_eq!((v.label, v.test), (Label::Slower, TestKind::Welch));
    close(v.change_pct, (7433.0 - 12020.0) / 12020.0 * 100.0, 1e-9);
    assert_eq!(decide(&slow, &base, true).label, Label::Faster);
    // Lower latency is better.
    assert_eq!(
        decide(&[9.0, 9.1, 9.2], &[4.0, 4.1, 4.0], false).label,
        Label::Faster
    );
    // Overlapping noise is a tie.
    let v = decide(
        &[10.1, 9.8, 10.3, 10.0, 9.9],
        &[10.2, 10.0, 9.7, 10.4, 10.1],
        true,
    );
    assert_eq!(v.label, Label::Tie);
    assert_eq!(v.label.as_str(), "tie (not significant)");
    // No spread at all: the rank test decides.
    let v = decide(&[5.0; 5], &[6.0; 5], true);
    assert_eq!((v.label, v.test), (Label::Faster, TestKind::MannWhitney));
    // Single values cannot be tested.
    let v = decide(&[5.0], &[9.0], true);
    assert_eq!(
        (v.label, v.test, v.p_value),
        (Label::Tie, TestKind::None, None)
    );
}
