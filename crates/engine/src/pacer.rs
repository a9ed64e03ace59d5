//! The pacer decides *when* requests may start, and nothing else. A closed
//! loop allows a (possibly ramping) number of busy connections; an open loop
//! releases tickets, each with an intended send time, from a (possibly
//! ramping) arrival rate. Both are driven by one piecewise-linear [`Curve`].
//!
//! Open-loop tickets are never stored: ticket `k` of a thread is a pure
//! function of `k` (its intended time solves the curve's integral), so the
//! pacer keeps only how many are due, counted in closed form from the
//! integral. Memory is the same at 10 req/s and at 10^8 req/s, and a
//! backlog of tickets due but not yet sent is two counters, each ticket
//! keeping its intended time however late it is sent.
//!
//! Work is split over threads round-robin: global connection `j` and global
//! ticket `j` belong to thread `j % threads`, so the threads together offer
//! exactly the planned load. A shard of a load split over processes
//! (`crate::Shard`) runs its own curve with its tickets shifted by a phase,
//! so that the shards' schedules interleave into one generator's.
//!
//! Poisson arrivals (`crate::Arrival`) change only where on the count each
//! ticket falls (see `crate::arrival`): the curve, the threads' shares and
//! the intended times work alike.

use crate::arrival::Poisson;
use crate::workload::{Load, Stage, StageUnit};
use std::time::{Duration, Instant};

/// How often a ramping closed loop re-reads how many connections it may use.
const RAMP_TICK: Duration = Duration::from_millis(10);

/// One straight piece of a curve, `from` -> `to` over `len` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    len: f64,
    from: f64,
    to: f64,
}

/// A piecewise-linear level over time (seconds since the run started),
/// holding its last value after the final segment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Curve {
    segments: Vec<Segment>,
}

impl Curve {
    /// The run's curve: a flat warm-up at the first stage's level, then the stages.
    pub fn from_load(load: &Load, warmup: Duration) -> Curve {
        let stages: Vec<Stage> = match load {
            Load::Closed { connections } => vec![flat(*connections as f64)],
            Load::Open { rate, .. } => vec![flat(*rate)],
            Load::Stages { stages, .. } => stages.clone(),
        };
        let mut segments = Vec::with_capacity(stages.len() + 1);
        if !warmup.is_zero() {
            let level = stages.first().map_or(0.0, |s| s.to);
            segments.push(Segment {
                len: warmup.as_secs_f64(),
                from: level,
                to: level,
            });
        }
        let mut from = if matches!(load, Load::Stages { .. }) {
            0.0
        } else {
            stages[0].to
        };
        for s in &stages {
            segments.push(Segment {
                len: s.duration.as_secs_f64(),
                from,
                to: s.to,
            });
            from = s.to;
        }
        Curve { segments }
    }

    /// The level at `t` seconds.
    pub fn level(&self, t: f64) -> f64 {
        let mut start = 0.0;
        for s in &self.segments {
            if t < start + s.len {
                return s.from + (s.to - s.from) * (t - start) / s.len;
            }
            start += s.len;
        }
        self.segments.last().map_or(0.0, |s| s.to)
    }

    /// True while the level is changing at `t`.
    fn ramping_at(&self, t: f64) -> bool {
        let mut start = 0.0;
        for s in &self.segments {
            if t < start + s.len {
                return s.from != s.to;
            }
            start += s.len;
        }
        false
    }

    /// The integral of the level from 0 to `t` seconds (the number of
    /// tickets a rate curve has made due by `t`, before phase).
    pub fn count_at(&self, t: f64) -> f64 {
        let (mut start, mut acc) = (0.0, 0.0);
        for s in &self.segments {
            if t < start + s.len {
                let x = (t - start).max(0.0);
                return acc + s.from * x + (s.to - s.from) * x * x / (2.0 * s.len);
            }
            acc += (s.from + s.to) / 2.0 * s.len;
            start += s.len;
        }
        acc + self.segments.last().map_or(0.0, |s| s.to) * (t - start)
    }

    /// The time at which the integral of the level from 0 reaches `n`
    /// (the intended time of ticket `n` when the level is a rate).
    pub fn time_of_count(&self, n: f64) -> Option<f64> {
        let (mut start, mut acc) = (0.0, 0.0);
        for s in &self.segments {
            let area = (s.from + s.to) / 2.0 * s.len;
            if acc + area >= n && area > 0.0 {
                return Some(start + solve_in_segment(s, n - acc));
            }
            acc += area;
            start += s.len;
        }
        let last = self.segments.last()?.to;
        (last > 0.0).then(|| start + (n - acc) / last)
    }
}

fn flat(level: f64) -> Stage {
    Stage {
        duration: Duration::from_secs(u64::MAX / 4),
        to: level,
    }
}

/// Solves `from*x + (to-from)*x^2/(2*len) = need` for x in [0, len].
fn solve_in_segment(s: &Segment, need: f64) -> f64 {
    let a = (s.to - s.from) / (2.0 * s.len);
    let x = if a.abs() < 1e-12 {
        need / s.from
    } else {
        (-s.from + (s.from * s.from + 4.0 * a * need).max(0.0).sqrt()) / (2.0 * a)
    };
    x.clamp(0.0, s.len)
}

/// One thread's pacer.
#[derive(Debug)]
pub(crate) enum Pacer {
    /// Closed loop: local connection `l` may be busy while its global index
    /// `l * threads + thread` is below the curve's level.
    Closed {
        curve: Curve,
        thread: usize,
        threads: usize,
        ramps: bool,
    },
    /// Open loop: this thread's tickets, the `k`th being global ticket
    /// `k * stride + thread`, become due as their intended times pass.
    Open {
        curve: Curve,
        t0: Instant,
        thread: u64,
        stride: u64,
        /// Global ticket `j` is due when the curve's count reaches `j + phase`.
        phase: f64,
        /// This thread's tickets due so far.
        due: u64,
        /// When ticket `due` falls due; `None` when no more ever will.
        next_at: Option<Instant>,
        /// Poisson arrivals: the tickets' positions on the count (the
        /// phase is then moot); `None` spaces them evenly.
        poisson: Option<Box<Poisson>>,
    },
}

impl Pacer {
    /// `phase` places the open-loop tickets: 1/2 for a whole load, see
    /// `Shard::phase` for a shard. `poisson` is the thread's arrival stream
    /// for Poisson arrivals; `None` spaces tickets evenly.
    pub fn new(
        load: &Load,
        warmup: Duration,
        t0: Instant,
        (thread, threads): (usize, usize),
        phase: f64,
        poisson: Option<fastrand::Rng>,
    ) -> Pacer {
        let curve = Curve::from_load(load, warmup);
        if load.is_open_loop() {
            let mut p = Pacer::Open {
                curve,
                t0,
                thread: thread as u64,
                stride: threads as u64,
                phase,
                due: 0,
                next_at: None,
                poisson: poisson.map(|rng| Box::new(Poisson::new(rng, threads as u64))),
            };
            p.release(t0);
            p
        } else {
            let ramps = matches!(
                load,
                Load::Stages {
                    unit: StageUnit::Connections,
                    ..
                }
            );
            Pacer::Closed {
                curve,
                thread,
                threads,
                ramps,
            }
        }
    }

    /// Whether local connection `local` may carry a request at `now`.
    pub fn allows_connection(&self, local: usize, t0: Instant, now: Instant) -> bool {
        match self {
            Pacer::Closed {
                curve,
                thread,
                threads,
                ..
            } => {
                let global = (local * threads + thread) as f64;
                global
                    < curve
                        .level(now.saturating_duration_since(t0).as_secs_f64())
                        .round()
            }
            Pacer::Open { .. } => true,
        }
    }

    /// Brings the count of this thread's due tickets up to `now` and returns
    /// it (always 0 in closed loop). O(segments), however many fell due
    /// (Poisson: one draw per block of them, see `crate::arrival`).
    pub fn release(&mut self, now: Instant) -> u64 {
        let Pacer::Open { t0, .. } = self else {
            return 0;
        };
        let t = now.saturating_duration_since(*t0).as_secs_f64();
        let counted = self.due_at_secs(t);
        let Pacer::Open { due, .. } = self else {
            return 0;
        };
        // The count never goes back, and a ticket the integral rounds
        // just short of is taken once its own time says it is due, so the
        // wake-up below is always in the future.
        *due = (*due).max(counted);
        for _ in 0..4 {
            let next = self.intended(self.due_count());
            if next.is_none_or(|at| at > now) {
                break;
            }
            if let Pacer::Open { due, .. } = self {
                *due += 1;
            }
        }
        let next = self.intended(self.due_count());
        if let Pacer::Open { next_at, due, .. } = self {
            *next_at = next;
            *due
        } else {
            0
        }
    }

    /// This thread's tickets due so far (as of the last `release`).
    pub fn due_count(&self) -> u64 {
        match self {
            Pacer::Open { due, .. } => *due,
            Pacer::Closed { .. } => 0,
        }
    }

    /// The intended time of this thread's ticket `k`; `None` in closed loop
    /// or when the curve never reaches it.
    pub fn intended(&mut self, k: u64) -> Option<Instant> {
        let Pacer::Open {
            curve,
            t0,
            thread,
            stride,
            phase,
            poisson,
            ..
        } = self
        else {
            return None;
        };
        // Ticket j is due when the cumulative count reaches j + phase; with
        // the whole load's 1/2 a rate of r spaces tickets 1/r apart
        // starting at 1/(2r).
        let position = match poisson {
            Some(p) => p.position(k),
            None => k.checked_mul(*stride)?.checked_add(*thread)? as f64 + *phase,
        };
        curve
            .time_of_count(position)
            .filter(|s| *s < 1e9)
            .map(|s| *t0 + Duration::from_secs_f64(s))
    }

    /// The first of this thread's tickets intended at or after `at`: those
    /// before it are warm-up.
    pub fn first_at_or_after(&mut self, at: Instant) -> u64 {
        let Pacer::Open {
            t0, poisson, curve, ..
        } = self
        else {
            return 0;
        };
        let t0 = *t0;
        if let Some(p) = poisson {
            // A walk of its own, so the pacer's counting is not moved ahead;
            // a block whose last ticket is early is passed whole.
            let mut walk = p.walk();
            let time = |position| {
                let s = curve.time_of_count(position).filter(|s| *s < 1e9)?;
                Some(t0 + Duration::from_secs_f64(s))
            };
            loop {
                if time(walk.block_end()).is_some_and(|t| t < at) {
                    walk.finish_block();
                } else if time(walk.position()).is_none_or(|t| t >= at) {
                    return walk.ticket();
                }
                walk.advance();
            }
        }
        let mut k = self.due_at_secs(at.saturating_duration_since(t0).as_secs_f64());
        // The integral and the times may round apart by a ticket.
        while k > 0 && self.intended(k - 1).is_some_and(|t| t >= at) {
            k -= 1;
        }
        while self.intended(k).is_some_and(|t| t < at) {
            k += 1;
        }
        k
    }

    /// How many of this thread's tickets the curve makes due by `t` seconds:
    /// global tickets `j` with `j + phase <= count`, those `== thread` mod `stride`.
    fn due_at_secs(&mut self, t: f64) -> u64 {
        let Pacer::Open {
            curve,
            thread,
            stride,
            phase,
            poisson,
            ..
        } = self
        else {
            return 0;
        };
        if let Some(p) = poisson {
            return p.due_by(curve.count_at(t));
        }
        let c = curve.count_at(t) - *phase;
        if c.is_nan() || c < 0.0 {
            return 0;
        }
        let global = (c.floor() as u64).saturating_add(1);
        if global <= *thread {
            return 0;
        }
        (global - *thread - 1) / *stride + 1
    }

    /// When the pacer next needs attention, if it does at all.
    pub fn next_wakeup(&self, t0: Instant, now: Instant) -> Option<Instant> {
        match self {
            Pacer::Open { next_at, .. } => *next_at,
            Pacer::Closed {
                curve, ramps: true, ..
            } => {
                let t = now.saturating_duration_since(t0).as_secs_f64();
                curve.ramping_at(t).then(|| now + RAMP_TICK)
            }
            Pacer::Closed { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(spec: &[(u64, f64)], unit: StageUnit) -> Load {
        Load::Stages {
            unit,
            connections: 100,
            stages: spec
                .iter()
                .map(|&(s, t)| Stage {
                    duration: Duration::from_secs(s),
                    to: t,
                })
                .collect(),
        }
    }

    /// The intended times of every ticket due by `until`, as the worker
    /// would take them.
    fn due_times(p: &mut Pacer, until: Instant) -> Vec<Instant> {
        let due = p.release(until);
        (0..due).map(|k| p.intended(k).unwrap()).collect()
    }

    #[test]
    fn ramp_levels_are_piecewise_linear() {
        let c = Curve::from_load(
            &stages(&[(60, 100.0), (60, 100.0)], StageUnit::Connections),
            Duration::ZERO,
        );
        assert_eq!(c.level(0.0), 0.0);
        assert_eq!(c.level(30.0), 50.0);
        assert_eq!(c.level(90.0), 100.0);
        assert_eq!(c.level(500.0), 100.0);
    }

    #[test]
    fn open_rate_spaces_tickets_evenly_across_threads() {
        let load = Load::Open {
            rate: 100.0,
            connections: 10,
        };
        let t0 = Instant::now();
        let mut all = Vec::new();
        for thread in 0..2 {
            let mut p = Pacer::new(&load, Duration::ZERO, t0, (thread, 2), 0.5, None);
            let q = due_times(&mut p, t0 + Duration::from_secs(1));
            all.extend(q.iter().map(|t| t.duration_since(t0).as_secs_f64()));
        }
        all.sort_by(f64::total_cmp);
        assert_eq!(all.len(), 100);
        for w in all.windows(2) {
            assert!((w[1] - w[0] - 0.01).abs() < 1e-6);
        }
    }

    #[test]
    fn rate_ramp_sends_the_area_under_the_curve() {
        // 0 -> 100 r/s over 10 s is 500 requests.
        let c = Curve::from_load(&stages(&[(10, 100.0)], StageUnit::Rate), Duration::ZERO);
        let t = c.time_of_count(500.0).unwrap();
        assert!((t - 10.0).abs() < 1e-6, "{t}");
        let t = c.time_of_count(125.0).unwrap();
        assert!((t - 5.0).abs() < 1e-6, "{t}");
    }

    #[test]
    fn closed_ramp_allows_connections_round_robin() {
        let load = stages(&[(10, 100.0)], StageUnit::Connections);
        let t0 = Instant::now();
        let at5 = t0 + Duration::from_secs(5);
        let p0 = Pacer::new(&load, Duration::ZERO, t0, (0, 2), 0.5, None);
        let p1 = Pacer::new(&load, Duration::ZERO, t0, (1, 2), 0.5, None);
        let allowed: usize = (0..50)
            .map(|l| {
                p0.allows_connection(l, t0, at5) as usize
                    + p1.allows_connection(l, t0, at5) as usize
            })
            .sum();
        assert_eq!(allowed, 50);
    }

    #[test]
    fn shards_together_send_one_generators_schedule() {
        use crate::{Shard, Stop, Workload};
        let whole = Workload::new(
            Load::Open {
                rate: 300.0,
                connections: 6,
            },
            Stop {
                requests: None,
                duration: Some(Duration::from_secs(1)),
            },
        )
        .unwrap();
        let t0 = Instant::now();
        let end = t0 + Duration::from_secs(1);
        let due = |load: &Load, phase: f64, threads: usize| {
            let mut all = Vec::new();
            for thread in 0..threads {
                let mut p = Pacer::new(load, Duration::ZERO, t0, (thread, threads), phase, None);
                let q = due_times(&mut p, end);
                all.extend(q.iter().map(|t| t.duration_since(t0).as_nanos()));
            }
            all.sort_unstable();
            all
        };
        let one = due(whole.load(), 0.5, 1);
        let mut sharded = Vec::new();
        for i in 1..=3 {
            let shard = Shard::new(i, 3).unwrap();
            let part = shard.split(&whole).unwrap();
            sharded.extend(due(part.load(), shard.phase(), 2));
        }
        sharded.sort_unstable();
        assert_eq!(one.len(), 300);
        assert_eq!(sharded.len(), one.len());
        for (a, b) in one.iter().zip(&sharded) {
            assert!(a.abs_diff(*b) < 1_000, "{a} ns vs {b} ns");
        }
    }

    #[test]
    fn a_huge_backlog_is_a_count_not_a_list() {
        // An hour at 10^8/s falls due in one call, in constant memory.
        let load = Load::Open {
            rate: 1e8,
            connections: 10,
        };
        let t0 = Instant::now();
        let mut p = Pacer::new(&load, Duration::ZERO, t0, (1, 4), 0.5, None);
        let due = p.release(t0 + Duration::from_secs(3600));
        assert_eq!(due, 360_000_000_000 / 4);
        // The backlog's tickets keep their own intended times.
        let k = due / 2;
        let at = p.intended(k).unwrap().duration_since(t0).as_secs_f64();
        let want = ((k * 4 + 1) as f64 + 0.5) / 1e8;
        assert!((at - want).abs() < 1e-6, "{at} vs {want}");
        assert!(p.next_wakeup(t0, t0).unwrap() > t0 + Duration::from_secs(3600));
    }

    #[test]
    fn the_count_agrees_with_every_tickets_time() {
        // Ramps, warm-ups, shard phases and thread counts: the tickets due
        // at `now` are exactly those whose own time has come.
        let loads = [
            stages(&[(2, 900.0), (1, 300.0), (1, 0.0)], StageUnit::Rate),
            Load::Open {
                rate: 777.7,
                connections: 3,
            },
        ];
        let t0 = Instant::now();
        for load in &loads {
            for (threads, phase) in [(1, 0.5), (3, 0.5), (2, 1.0 / 6.0), (4, 5.0 / 6.0)] {
                for thread in 0..threads {
                    let warmup = Duration::from_millis(250);
                    let mut p = Pacer::new(load, warmup, t0, (thread, threads), phase, None);
                    for ms in (0..5000).step_by(37) {
                        let now = t0 + Duration::from_millis(ms);
                        let due = p.release(now);
                        let t = Duration::from_millis(ms).as_secs_f64();
                        assert!(due.abs_diff(p.due_at_secs(t)) <= 1, "the integral is off");
                        assert!(due == 0 || p.intended(due - 1).unwrap() <= now);
                        assert!(p.intended(due).is_none_or(|t| t > now), "{ms} ms");
                    }
                    let start = t0 + warmup;
                    let first = p.first_at_or_after(start);
                    assert!(first == 0 || p.intended(first - 1).unwrap() < start);
                    assert!(p.intended(first).unwrap() >= start);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "pacer_poisson_tests.rs"]
mod poisson_tests;
