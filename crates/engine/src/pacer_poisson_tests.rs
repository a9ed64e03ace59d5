//! Poisson arrivals at the pacer, without a server: the gaps between the
//! intended times of every thread's tickets have the mean 1/rate and a
//! coefficient of variation near 1 (uniform: near 0), the same seed gives
//! the same schedule, and a shard's threads draw apart. At the highest rate
//! a plan accepts, a second's tickets are counted in one call and agree
//! with their own times.

use super::*;
use crate::seed::{rng, Stream};
use crate::Shard;

const RATE: f64 = 2000.0;
const SECS: u64 = 10;

/// Every thread's intended times over `SECS` seconds, merged and sorted.
fn schedule(poisson: bool, threads: usize, seed: u64) -> Vec<f64> {
    let load = Load::Open {
        rate: RATE,
        connections: 8,
    };
    let t0 = Instant::now();
    let mut all = Vec::new();
    for thread in 0..threads {
        let stream = poisson.then(|| rng(seed, Shard::WHOLE, thread, Stream::Arrivals));
        let mut p = Pacer::new(&load, Duration::ZERO, t0, (thread, threads), 0.5, stream);
        let due = p.release(t0 + Duration::from_secs(SECS));
        for k in 0..due {
            let at = p.intended(k).map(|t| t.duration_since(t0).as_secs_f64());
            all.push(at.unwrap_or(f64::NAN));
        }
        assert!(p
            .intended(due)
            .is_none_or(|t| t > t0 + Duration::from_secs(SECS)));
    }
    all.sort_by(f64::total_cmp);
    all
}

/// Mean and coefficient of variation of the gaps.
fn gaps(times: &[f64]) -> (f64, f64) {
    let g: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let n = g.len() as f64;
    let mean = g.iter().sum::<f64>() / n;
    let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt() / mean)
}

#[test]
fn poisson_gaps_are_exponential_and_uniform_ones_are_not() {
    for threads in [1, 3] {
        let times = schedule(true, threads, 11);
        let expected = RATE * SECS as f64;
        let n = times.len() as f64;
        // The count of a Poisson process: sd = sqrt(20000) = 141; 5 sd.
        assert!((n - expected).abs() < 5.0 * expected.sqrt(), "{n}");
        let (mean, cv) = gaps(&times);
        // The mean gap of ~20000 exponentials is within 4% of 1/rate (5 sd
        // of the mean is 3.5%), and so is their CV of 1.
        assert!((mean * RATE - 1.0).abs() < 0.04, "mean {mean}");
        assert!((cv - 1.0).abs() < 0.05, "cv {cv} with {threads} threads");
        let (mean, cv) = gaps(&schedule(false, threads, 11));
        assert!((mean * RATE - 1.0).abs() < 1e-3, "uniform mean {mean}");
        assert!(cv < 0.01, "uniform cv {cv}");
    }
}

#[test]
fn the_same_seed_gives_the_same_schedule() {
    let a = schedule(true, 2, 5);
    assert_eq!(a, schedule(true, 2, 5));
    assert_ne!(a, schedule(true, 2, 6));
}

#[test]
fn poisson_tickets_release_in_order_and_first_measured_is_exact() {
    let load = Load::Open {
        rate: 500.0,
        connections: 4,
    };
    let t0 = Instant::now();
    let warmup = Duration::from_millis(300);
    let stream = rng(1, Shard::WHOLE, 0, Stream::Arrivals);
    let mut p = Pacer::new(&load, warmup, t0, (0, 1), 0.5, Some(stream));
    let start = t0 + warmup;
    let first = p.first_at_or_after(start);
    assert!(first > 0 && p.intended(first - 1).is_some_and(|t| t < start));
    assert!(p.intended(first).is_some_and(|t| t >= start));
    for ms in (0..3000).step_by(7) {
        let now = t0 + Duration::from_millis(ms);
        let due = p.release(now);
        assert!(due == 0 || p.intended(due - 1).is_some_and(|t| t <= now));
        assert!(p.intended(due).is_none_or(|t| t > now), "{ms} ms");
    }
}

#[test]
fn at_the_highest_rate_a_second_is_counted_at_once_and_agrees_with_its_times() {
    let load = Load::Open {
        rate: crate::MAX_RATE,
        connections: 8,
    };
    let t0 = Instant::now();
    let mut total = 0;
    for thread in 0..2 {
        let stream = rng(39, Shard::WHOLE, thread, Stream::Arrivals);
        let mut p = Pacer::new(&load, Duration::ZERO, t0, (thread, 2), 0.5, Some(stream));
        for ms in [1, 2, 50, 300, 1000] {
            let now = t0 + Duration::from_millis(ms);
            let due = p.release(now);
            assert!(due == 0 || p.intended(due - 1).is_some_and(|t| t <= now));
            assert!(p.intended(due).is_none_or(|t| t > now), "{ms} ms");
        }
        // The worker takes them from the first, in order.
        let taken: Vec<Instant> = (0..100).map(|k| p.intended(k).unwrap()).collect();
        assert!(taken.windows(2).all(|w| w[0] <= w[1]));
        total += p.due_count();
    }
    // A Poisson count of mean 10^9: sd 31,623; 5 sd.
    let five_sd = 5.0 * 1e9f64.sqrt();
    assert!((total as f64 - 1e9).abs() < five_sd, "{total} due");
}
