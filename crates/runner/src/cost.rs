//! The levels a cost scenario derives on each start from its closed-loop
//! level's throughput (that start's capacity), and the server's standing
//! cost (`shootout_study::CostPlan`, docs/cost.md): open loops at each common
//! rate and at each fraction of the capacity, then for each overload
//! multiple a two-stage rate (the overload for `overload_for`, half the
//! capacity for `recover_for`). The probes (`probe.rs`) turn each into its
//! part of the measurement.

use crate::place::Meter;
use crate::procfs::MIB;
use shootout_engine::{Load, PlanError, Stage, StageUnit, Stop, Workload};
use shootout_store::parts::{Derived, Standing};
use shootout_study::cost::RECOVERY_FRACTION;
use shootout_study::{CostPlan, Level};
use std::time::{Duration, Instant};

/// A level derived from the capacity, with what its probes need.
#[derive(Debug, Clone)]
pub(crate) struct DerivedLevel {
    pub level: Level,
    pub derived: Derived,
    /// Overload levels: the multiple, the deadline and the phases.
    pub overload: Option<OverloadPlan>,
}

/// What the overload probe reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OverloadPlan {
    pub factor: f64,
    pub capacity_rps: f64,
    pub deadline: Duration,
    pub overload_for: Duration,
    pub recover_for: Duration,
}

/// The switch between two rates: short against any phase, so the rate is
/// a step, not a ramp.
const STEP: Duration = Duration::from_millis(1);

/// The levels `cost` derives from `capacity_rps` (the throughput of
/// `closed`, the scenario's closed-loop level, on this start). None of
/// them when the capacity is not a positive rate; the engine's refusal of
/// a derived load (a rate it cannot pace) is returned as such.
pub(crate) fn derived(
    closed: &Level,
    cost: &CostPlan,
    capacity_rps: f64,
) -> Result<Vec<DerivedLevel>, PlanError> {
    if !(capacity_rps.is_finite() && capacity_rps > 0.0) {
        return Ok(Vec::new());
    }
    let connections = closed.load().max_connections();
    let open = |rate: f64, label: String, fraction: Option<f64>| {
        Ok::<_, PlanError>(DerivedLevel {
            level: with_workload(
                closed,
                label,
                Load::Open { rate, connections },
                cost.duration,
            )?,
            derived: Derived {
                capacity_rps,
                fraction,
            },
            overload: None,
        })
    };
    let mut out = Vec::new();
    for &r in &cost.rates {
        out.push(open(r, format!("{} req/s", whole(r)), None)?);
    }
    for &f in &cost.fractions {
        let rate = f * capacity_rps;
        out.push(open(
            rate,
            format!("{}% of capacity ({} req/s)", whole(f * 100.0), whole(rate)),
            Some(f),
        )?);
    }
    for &factor in &cost.overload {
        let high = factor * capacity_rps;
        let low = RECOVERY_FRACTION * capacity_rps;
        let stages = vec![
            Stage {
                duration: STEP,
                to: high,
            },
            Stage {
                duration: cost.overload_for.saturating_sub(STEP),
                to: high,
            },
            Stage {
                duration: STEP,
                to: low,
            },
            Stage {
                duration: cost.recover_for.saturating_sub(STEP),
                to: low,
            },
        ];
        let load = Load::Stages {
            unit: StageUnit::Rate,
            stages,
            connections,
        };
        let total = cost.overload_for + cost.recover_for;
        out.push(DerivedLevel {
            level: with_workload(
                closed,
                format!("{}% overload, then 50%", whole(factor * 100.0)),
                load,
                total,
            )?,
            derived: Derived {
                capacity_rps,
                fraction: Some(factor),
            },
            overload: Some(OverloadPlan {
                factor,
                capacity_rps,
                deadline: cost.deadline,
                overload_for: cost.overload_for,
                recover_for: cost.recover_for,
            }),
        });
    }
    Ok(out)
}

/// `closed`'s request, protocol and budget with another load and length.
fn with_workload(
    closed: &Level,
    label: String,
    load: Load,
    duration: Duration,
) -> Result<Level, PlanError> {
    let stop = Stop {
        requests: None,
        duration: Some(duration),
    };
    let mut level = closed.clone();
    level.workload = Workload::new(load, stop)?;
    level.label = label;
    Ok(level)
}

/// `2000`, `12.5`.
fn whole(x: f64) -> String {
    if (x - x.round()).abs() < 0.05 || x >= 100.0 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.1}")
    }
}

/// The server's CPU and memory over `seconds` of no load, as its meter
/// reads them (CPU from its cgroup's counter when it has one); which of
/// them its place cannot give, if one. None when not asked for or
/// interrupted.
pub(crate) fn standing(
    meter: &dyn Meter,
    seconds: Duration,
    interrupt: &crate::interrupt::Interrupt,
) -> Result<Option<Standing>, crate::place::Unavailable> {
    if seconds.is_zero() {
        return Ok(None);
    }
    let before = meter.cpu();
    let t0 = Instant::now();
    interrupt.sleep(seconds);
    if interrupt.is_stopped() {
        return Ok(None);
    }
    let cpu_s = meter.cpu().since(&before).required("standing CPU time")?;
    let rss = meter.memory(false).rss.required("standing memory (RSS)")?;
    Ok(Some(Standing {
        seconds: t0.elapsed().as_secs_f64(),
        cpu_s,
        rss_mib: rss as f64 / MIB,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(cost: &str) -> shootout_study::Scenario {
        let text = format!(
            "name = \"c\"\ndescription = \"d\"\nsource = \"s\"\ntargets = [\"t\"]\n\
             [[scenario]]\nname = \"json\"\n\
             load = {{ mode = \"closed\", connections = 8, duration = \"2s\" }}\ncost = {{ {cost} }}\n"
        );
        let s = shootout_study::parse(std::path::Path::new("c.toml"), &text)
            .unwrap_or_else(|e| panic!("{e}"));
        s.scenarios[0].clone()
    }

    #[test]
    fn levels_are_derived_from_this_starts_capacity() {
        let sc = scenario(
            "rates = [100], fractions = [\"50%\"], overload = [\"200%\"], \
             overload_for = \"3s\", recover_for = \"6s\"",
        );
        let cost = sc.cost.clone().unwrap_or_else(|| panic!("a cost table"));
        let d = derived(&sc.levels[0], &cost, 1000.0).unwrap_or_else(|e| panic!("{e}"));
        let labels: Vec<&str> = d.iter().map(|l| l.level.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "100 req/s",
                "50% of capacity (500 req/s)",
                "200% overload, then 50%"
            ]
        );
        assert_eq!(
            *d[1].level.load(),
            Load::Open {
                rate: 500.0,
                connections: 8
            }
        );
        assert_eq!(d[1].level.stop().duration, Some(Duration::from_secs(2)));
        let Load::Stages { stages, .. } = d[2].level.load() else {
            panic!("an overload is a two-stage rate")
        };
        let rates: Vec<f64> = stages.iter().map(|s| s.to).collect();
        assert_eq!(rates, [2000.0, 2000.0, 500.0, 500.0]);
        let total: Duration = stages.iter().map(|s| s.duration).sum();
        assert_eq!(total, Duration::from_secs(9));
        assert_eq!(d[2].level.stop().duration, Some(Duration::from_secs(9)));
        let o = d[2].overload.unwrap_or_else(|| panic!("its plan"));
        assert_eq!((o.factor, o.capacity_rps), (2.0, 1000.0));
        assert!(d[..2].iter().all(|l| l.overload.is_none()));
        // No capacity, nothing derived (a failed closed loop fails the
        // target before this).
        assert!(derived(&sc.levels[0], &cost, 0.0)
            .unwrap_or_default()
            .is_empty());
    }
}
