//! The order of a study's work. A session is one server start: a target, a
//! repetition, and the scenarios that server serves (one with
//! `restart = "per-scenario"`, all with `"per-repetition"`). With
//! `order = "rotate"` repetition `r` starts from target `r mod len`, so no
//! target is always first or last; with `order = "random"` every repetition
//! is a fresh permutation drawn from the run's seed (randomized multiple
//! interleaved trials, Abedi and Brecht, ICPE 2017: a drift of the machine
//! then falls on every target alike, and the same seed draws the same
//! order again). Also the ETA arithmetic for progress.

use shootout_study::{Order, Restart};

/// One server start and what it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub repetition: u32,
    /// Index into the measured targets.
    pub target: usize,
    /// Indices into the study's scenarios.
    pub scenarios: Vec<usize>,
}

/// The target order of repetition `rep` for `n` targets; `seed` is read
/// only by `Order::Random`.
pub fn target_order(n: usize, rep: u32, order: Order, seed: u64) -> Vec<usize> {
    let start = match order {
        Order::Rotate if n > 0 => rep as usize % n,
        _ => 0,
    };
    let mut out: Vec<usize> = (0..n).map(|i| (start + i) % n).collect();
    if order == Order::Random {
        // One stream per repetition, derived from the seed (Weyl step), so
        // repetition r's order does not depend on how many came before.
        let stream = seed ^ u64::from(rep).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        fastrand::Rng::with_seed(stream).shuffle(&mut out);
    }
    out
}

/// Every session of a study, in run order: repetition-major, then target.
pub fn sessions(
    targets: usize,
    repetitions: u32,
    scenarios: usize,
    order: Order,
    seed: u64,
    restart: Restart,
) -> Vec<Session> {
    let mut out = Vec::new();
    for rep in 0..repetitions {
        for t in target_order(targets, rep, order, seed) {
            match restart {
                Restart::PerScenario => out.extend((0..scenarios).map(|s| Session {
                    repetition: rep,
                    target: t,
                    scenarios: vec![s],
                })),
                Restart::PerRepetition => out.push(Session {
                    repetition: rep,
                    target: t,
                    scenarios: (0..scenarios).collect(),
                }),
            }
        }
    }
    out
}

/// Time left, from the estimated cost of each unit of work: the elapsed time
/// scaled by how far off the estimates have been so far.
pub fn eta_seconds(elapsed_s: f64, done_estimate_s: f64, remaining_estimate_s: f64) -> f64 {
    if remaining_estimate_s <= 0.0 {
        return 0.0;
    }
    if done_estimate_s <= 0.0 || elapsed_s <= 0.0 {
        return remaining_estimate_s;
    }
    // Trust the measured pace more as more work is done.
    let pace = elapsed_s / done_estimate_s;
    let weight = done_estimate_s / (done_estimate_s + remaining_estimate_s);
    remaining_estimate_s * (weight * pace + (1.0 - weight))
}

/// `1h02m`, `3m05s`, `42s`.
pub fn format_eta(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_starts_each_repetition_at_the_next_target() {
        assert_eq!(target_order(3, 0, Order::Rotate, 0), [0, 1, 2]);
        assert_eq!(target_order(3, 1, Order::Rotate, 0), [1, 2, 0]);
        assert_eq!(target_order(3, 2, Order::Rotate, 0), [2, 0, 1]);
        assert_eq!(target_order(3, 3, Order::Rotate, 0), [0, 1, 2]);
        assert_eq!(target_order(3, 1, Order::Fixed, 0), [0, 1, 2]);
        assert!(target_order(0, 1, Order::Rotate, 0).is_empty());
    }

    #[test]
    fn no_target_is_always_first_or_last() {
        let s = sessions(3, 3, 2, Order::Rotate, 0, Restart::PerScenario);
        assert_eq!(s.len(), 18);
        let firsts: Vec<usize> = (0..3).map(|r| s[r * 6].target).collect();
        let lasts: Vec<usize> = (0..3).map(|r| s[r * 6 + 5].target).collect();
        assert_eq!(firsts, [0, 1, 2]);
        assert_eq!(lasts, [2, 0, 1]);
        assert_eq!(s[1].scenarios, [1]);
        assert_eq!(s[1].target, 0, "a target's scenarios run back to back");
    }

    #[test]
    fn per_repetition_restart_serves_all_scenarios() {
        let s = sessions(2, 2, 3, Order::Rotate, 0, Restart::PerRepetition);
        assert_eq!(s.len(), 4);
        assert!(s.iter().all(|x| x.scenarios == [0, 1, 2]));
        assert_eq!(s.iter().map(|x| x.target).collect::<Vec<_>>(), [0, 1, 1, 0]);
    }

    #[test]
    fn random_order_is_a_seeded_permutation_per_repetition() {
        let a: Vec<Vec<usize>> = (0..6)
            .map(|r| target_order(8, r, Order::Random, 42))
            .collect();
        let b: Vec<Vec<usize>> = (0..6)
            .map(|r| target_order(8, r, Order::Random, 42))
            .collect();
        assert_eq!(a, b, "the same seed draws the same orders");
        for o in &a {
            let mut sorted = o.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "a permutation");
        }
        // Repetitions differ from each other and from another seed's.
        assert!(a.windows(2).any(|w| w[0] != w[1]));
        assert_ne!(a[0], target_order(8, 0, Order::Random, 43));
        // Over many repetitions every target is sometimes first.
        let firsts: std::collections::BTreeSet<usize> = (0..200)
            .map(|r| target_order(8, r, Order::Random, 7)[0])
            .collect();
        assert_eq!(firsts.len(), 8);
    }

    #[test]
    fn eta_follows_the_measured_pace() {
        assert_eq!(eta_seconds(0.0, 0.0, 100.0), 100.0);
        assert_eq!(eta_seconds(50.0, 50.0, 0.0), 0.0);
        // Half done, running twice as slow as estimated: 50 s left become
        // 50 * (0.5 * 2 + 0.5) = 75 s.
        assert!((eta_seconds(100.0, 50.0, 50.0) - 75.0).abs() < 1e-9);
        // Nearly done at the estimated pace: the estimate stands.
        assert!((eta_seconds(90.0, 90.0, 10.0) - 10.0).abs() < 1e-9);
        assert_eq!(format_eta(42.4), "42s");
        assert_eq!(format_eta(185.0), "3m05s");
        assert_eq!(format_eta(3720.0), "1h02m");
    }
}
