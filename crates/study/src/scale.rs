//! Shrinking a study (`--scale F`, `--quick`) and estimating how long it
//! takes. Scaling multiplies every duration and request count by F, with
//! floors that keep each load meaningful (1 s loads, 0.25 s fixed warm-ups,
//! 250 ms warm-up windows and a cap of five, at least five requests per
//! connection and 100 in all), rounds repetitions (never below the two
//! starts `precision` and `resolve` need for an interval), and caps
//! request-counted loads in time so that a slow server cannot stretch a
//! scaled run. `--quick` picks F so the study's load phases take about 25 s.
//! Capacity searches shrink their steps, warm-ups and precision
//! ([`crate::Capacity::scaled`]) and are estimated from their expected
//! number of levels.

use crate::level::Level;
use crate::model::Study;
use crate::raw::Restart;
use shootout_engine::{Load, Stop, Workload};
use std::time::Duration;

/// Seconds of load a `--quick` run aims for (overheads come on top).
const QUICK_LOAD_S: f64 = 25.0;
/// A request rate assumed for estimates when nothing else limits it.
const NOMINAL_RPS: f64 = 5_000.0;
/// Assumed seconds for a start (spawn to ready), a stop, and a verification.
pub const START_S: f64 = 1.5;
pub const STOP_S: f64 = 0.3;
/// Per target; verification runs three at a time (the default study's
/// thirteen took 33 s on two cores, 2026-11-27).
pub const VERIFY_S: f64 = 2.5;
/// Between two levels of one start, beyond the settle pause: waiting for
/// the server to drain, the liveness checks and the store's write (0.15 to
/// 0.35 s each in the default study, 2026-11-27).
pub const BETWEEN_LEVELS_S: f64 = 0.25;
/// Per target with a database: one at a time, plus the database checks
/// (6 s measured for the nine shipped targets, 5 to 13 s each).
pub const VERIFY_DB_S: f64 = 6.0;

/// How long a study is expected to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub measurements: usize,
    pub server_starts: usize,
    /// Warm-ups plus loads.
    pub load_s: f64,
    /// Everything: verification, starts, settles, warm-ups, loads, stops.
    pub total_s: f64,
}

/// The pause before idle memory is read, for a given scale (0.5 s at full
/// scale: a server that answers its ready check has allocated what it
/// holds idle, and the default study's 26 starts keep its 12-minute
/// budget).
pub fn settle_for(scale: f64) -> Duration {
    Duration::from_secs_f64((scale * 2.0).clamp(0.25, 0.5))
}

/// The pause after a load before the after-memory is read. Allocators
/// rarely hand memory back within a second, so a short pause reads the same
/// RSS as a long one, and `default` (104 loads) keeps its 12-minute budget.
pub fn settle_after_for(scale: f64) -> Duration {
    settle_for(scale) / 4
}

/// A target's declared `warmup_min` at scale `scale`: scaled like every
/// duration, so a `--quick` run owes its share of it.
pub fn scaled_min(min: Duration, scale: f64) -> Duration {
    min.mul_f64(scale)
}

/// The scale `--quick` uses for this study with `targets` targets.
pub fn quick_scale(study: &Study, targets: usize) -> f64 {
    let full = study.estimate(targets, 1.0).load_s;
    if full <= 0.0 {
        return 0.25;
    }
    round_sig((QUICK_LOAD_S / full).clamp(0.001, 0.25))
}

/// Rounds to two significant digits, so a scale reads as 0.041, not 0.04125....
fn round_sig(x: f64) -> f64 {
    let mag = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / mag).round() * mag
}

impl Study {
    /// A copy with every count and duration multiplied by `f` (see module docs).
    pub fn scaled(&self, f: f64) -> Study {
        let mut s = self.clone();
        if (f - 1.0).abs() < 1e-12 {
            return s;
        }
        // An interval from starts (precision, resolve) needs two of them.
        let least = if self.precision.is_some() || self.resolve.is_some() {
            2
        } else {
            1
        };
        s.repetitions = ((self.repetitions as f64 * f).round() as u32).max(least);
        if let Some(p) = &mut s.precision {
            p.max_repetitions = ((p.max_repetitions as f64 * f).round() as u32).max(s.repetitions);
        }
        if let Some(r) = &mut s.resolve {
            r.max_repetitions = ((r.max_repetitions as f64 * f).round() as u32).max(s.repetitions);
        }
        for sc in &mut s.scenarios {
            sc.warmup = sc.warmup.scaled(f);
            for level in &mut sc.levels {
                scale_level(level, f);
            }
            if let Some(c) = &mut sc.capacity {
                c.scaled(f);
            }
            if let Some(c) = &mut sc.cost {
                c.scaled(f);
            }
        }
        s
    }

    /// Expected seconds to verify one target for this study.
    pub fn verify_s(&self) -> f64 {
        if self.needs_database() {
            VERIFY_DB_S
        } else {
            VERIFY_S
        }
    }

    /// [`Study::estimate`] for targets that each declare a `warmup_min`
    /// (already scaled; zero for none): every start of a target owes its
    /// minimum before its first measurement, of which the first warm-up
    /// covers its own expected length. java-spring's 90 s made the default
    /// study's estimate three minutes short of the nine it took.
    pub fn estimate_for(&self, warmup_mins: &[Duration], scale: f64) -> Estimate {
        let mut e = self.estimate(warmup_mins.len(), scale);
        let starts_per_target = e.server_starts / warmup_mins.len().max(1);
        let first = self
            .scenarios
            .first()
            .filter(|sc| !sc.levels.is_empty())
            .map_or(Duration::ZERO, |sc| sc.warmup.expected());
        let owed: f64 = warmup_mins
            .iter()
            .map(|m| m.saturating_sub(first).as_secs_f64())
            .sum();
        let extra = owed * starts_per_target as f64;
        e.load_s += extra;
        e.total_s += extra;
        e
    }

    /// Expected duration with `targets` targets at scale `scale` (the study
    /// must already be scaled; `scale` only sets the settle pauses).
    pub fn estimate(&self, targets: usize, scale: f64) -> Estimate {
        let reps = self.repetitions as usize;
        let settle = settle_for(scale).as_secs_f64();
        let settle_after = settle_after_for(scale).as_secs_f64();
        let mut per_rep_load = 0.0;
        let mut measurements = 0;
        for sc in &self.scenarios {
            for level in &sc.levels {
                measurements += 1;
                per_rep_load += sc.warmup.expected().as_secs_f64()
                    + level_seconds(level, sc.name.nominal_service_s());
            }
            // A cost scenario's derived levels, on the same start.
            if let Some(c) = &sc.cost {
                let derived = c.rates.len() + c.fractions.len() + c.overload.len();
                measurements += derived;
                // Fixed-rate levels warm up briefly; an overload not at all.
                let fixed = c.rates.len() + c.fractions.len();
                per_rep_load +=
                    c.expected_seconds() + fixed as f64 * crate::cost::DERIVED_WARMUP.as_secs_f64();
            }
            // A search counts as one measurement; its levels run back to back.
            if let Some(c) = &sc.capacity {
                measurements += 1;
                per_rep_load += c.expected_seconds();
            }
        }
        let starts_per_rep = match self.restart {
            Restart::PerScenario => self.scenarios.len(),
            Restart::PerRepetition => 1,
        };
        let server_starts = targets * reps * starts_per_rep;
        let measurements = targets * reps * measurements;
        let load_s = per_rep_load * (targets * reps) as f64;
        let total_s = load_s
            + measurements as f64 * (settle_after + BETWEEN_LEVELS_S)
            + server_starts as f64 * (START_S + settle + STOP_S)
            + targets as f64 * self.verify_s();
        Estimate {
            measurements,
            server_starts,
            load_s,
            total_s,
        }
    }
}

/// Expected seconds of one level's measured phase.
pub fn level_seconds(level: &Level, service_s: f64) -> f64 {
    let conns = level.load().max_connections() as f64;
    let rps = match level.load() {
        Load::Open { rate, .. } => *rate,
        _ => (conns / service_s).min(NOMINAL_RPS),
    };
    // bcrypt and the like are CPU bound: a few hashes per core per second.
    let rps = if service_s > 0.05 && service_s < 0.5 {
        rps.min(1.0 / service_s)
    } else {
        rps
    };
    let by_count = level.stop().requests.map(|n| n as f64 / rps.max(1e-9));
    let by_time = level.stop().duration.map(|d| d.as_secs_f64());
    match (by_count, by_time) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => 0.0,
    }
}

fn scale_dur(d: Duration, f: f64, floor_s: f64) -> Duration {
    Duration::from_secs_f64((d.as_secs_f64() * f).max(floor_s.min(d.as_secs_f64())))
}

fn scale_level(level: &mut Level, f: f64) {
    let auto = level.label == level.auto_label();
    let conns = level.load().max_connections() as u64;
    let requests = level.stop().requests.map(|n| {
        ((n as f64 * f).round() as u64)
            .max((conns * 5).max(100))
            .min(n)
    });
    let mut duration = level.stop().duration.map(|d| scale_dur(d, f, 1.0));
    let (mut load, _) = level.workload.clone().into_parts();
    if let Load::Stages { stages, .. } = &mut load {
        for st in stages.iter_mut() {
            st.duration = scale_dur(st.duration, f, 0.5);
        }
        duration = Some(stages.iter().map(|s| s.duration).sum());
    }
    if f < 1.0 && requests.is_some() && duration.is_none() {
        // A scaled run must stay short even against a slow server.
        duration = Some(Duration::from_secs_f64((60.0 * f).max(2.0)));
    }
    // Scaling keeps every count and duration above 0, so this only fails
    // if that changes; the level is then left as written.
    if let Ok(w) = Workload::new(load, Stop { requests, duration }) {
        level.workload = w;
    }
    // A hold's pings shrink with it, never past it.
    if let (Some(ws), Some(d)) = (level.ws.as_mut(), duration) {
        ws.ping_every = ws.ping_every.map(|p| scale_dur(p, f, 0.5).min(d));
    }
    if auto {
        level.label = level.auto_label();
    }
}
