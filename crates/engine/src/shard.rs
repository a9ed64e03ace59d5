//! One load split over N generator processes, possibly on N machines: the
//! one place the split rule lives. Shard `I/N` (1-based) runs
//!
//! - an open loop at rate/N, its tickets falling in the `I`-th of every N
//!   slots of one generator's schedule (the pacer's [`Shard::phase`]), so the
//!   N schedules together are exactly one generator's;
//! - a rate ramp with every level divided by N, on the same phase;
//! - its share of the connections (as even as possible, the remainder to the
//!   lowest indices) and, for a connection ramp, levels scaled by that share;
//! - its exact share of a `-n` request budget, split the same way.
//!
//! The deadline and warm-up are not split: every shard runs them on the
//! shared clock (see `PlanBuilder::start_at`).

use crate::error::{PlanError, PlanField};
use crate::stop::StopRule;
use crate::workload::{Load, Stage, StageUnit, Stop, Workload};
use std::fmt;

/// A shard that does not exist or text that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("shard {index}/{count} does not exist: give I/N with 1 <= I <= N")]
    NoSuchShard { index: u32, count: u32 },
    #[error("'{0}' is not a shard: give I/N with 1 <= I <= N, e.g. 2/4")]
    NotAShard(String),
}

/// Which part of a sharded load this process runs: `index` of `count`, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    index: u32,
    count: u32,
}

impl Shard {
    /// The whole load: one shard of one.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Shard `index` of `count`; `1 <= index <= count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::NoSuchShard { index, count });
        }
        Ok(Shard { index, count })
    }

    /// Parses `I/N`, e.g. `2/4`.
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::NotAShard(s.to_string());
        let (i, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let i = i.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Shard::new(i, n)
    }

    /// 1-based.
    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// This shard's part of `total` things (connections, requests): the
    /// parts of all N shards add up to `total` exactly.
    pub fn share_of(&self, total: u64) -> u64 {
        StopRule::share(total, (self.index - 1) as usize, self.count as usize)
    }

    /// Where in one ticket slot this shard's open-loop tickets fall, in units
    /// of its own inter-arrival gap: ticket `m` of shard `I` is due when its
    /// cumulative count reaches `m + phase`, which is one generator's ticket
    /// `m*N + I-1` (due at count `j + 1/2`). The whole load has phase 1/2.
    pub fn phase(&self) -> f64 {
        (f64::from(self.index) - 0.5) / f64::from(self.count)
    }

    /// This shard's part of `whole`; the error names the field that cannot
    /// be split (fewer connections or requests than shards).
    pub fn split(&self, whole: &Workload) -> Result<Workload, PlanError> {
        if self.is_whole() {
            return Ok(whole.clone());
        }
        let n = f64::from(self.count);
        let total = whole.load().max_connections();
        let connections = self.share_of(total as u64) as usize;
        if connections == 0 {
            return Err(self.too_few(PlanField::Connections, total as u64, "connections"));
        }
        let load = match whole.load() {
            Load::Closed { .. } => Load::Closed { connections },
            Load::Open { rate, .. } => Load::Open {
                rate: rate / n,
                connections,
            },
            Load::Stages { unit, stages, .. } => {
                let scale = match unit {
                    StageUnit::Rate => 1.0 / n,
                    StageUnit::Connections => connections as f64 / total as f64,
                };
                Load::Stages {
                    unit: *unit,
                    stages: stages
                        .iter()
                        .map(|s| Stage {
                            duration: s.duration,
                            to: s.to * scale,
                        })
                        .collect(),
                    connections,
                }
            }
        };
        let requests = match whole.stop().requests.map(|r| (r, self.share_of(r))) {
            Some((r, 0)) => return Err(self.too_few(PlanField::Requests, r, "requests")),
            other => other.map(|(_, share)| share),
        };
        let stop = Stop {
            requests,
            duration: whole.stop().duration,
        };
        Workload::new(load, stop)
    }
}

impl Shard {
    fn too_few(&self, field: PlanField, total: u64, what: &str) -> PlanError {
        PlanError::invalid(
            field,
            format!(
                "{total} {what} cannot be split over {} shards: give at least one per shard",
                self.count
            ),
        )
    }
}

impl Default for Shard {
    fn default() -> Shard {
        Shard::WHOLE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn shards(n: u32) -> impl Iterator<Item = Shard> {
        (1..=n).map(move |i| Shard::new(i, n).unwrap())
    }

    fn stop(requests: Option<u64>) -> Stop {
        Stop {
            requests,
            duration: Some(Duration::from_secs(5)),
        }
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard::new(2, 4).unwrap());
        for bad in ["0/2", "3/2", "1/0", "1", "a/b", "1/2/3", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Shard::parse("1/1").unwrap(), Shard::WHOLE);
    }

    #[test]
    fn closed_loop_connections_and_requests_add_up_exactly() {
        let whole = Workload::new(Load::Closed { connections: 10 }, stop(Some(1001))).unwrap();
        let parts: Vec<_> = shards(3).map(|s| s.split(&whole).unwrap()).collect();
        let conns: Vec<_> = parts.iter().map(|w| w.load().max_connections()).collect();
        assert_eq!(conns, [4, 3, 3], "remainder to the lowest indices");
        let reqs: Vec<_> = parts.iter().map(|w| w.stop().requests.unwrap()).collect();
        assert_eq!(reqs, [334, 334, 333]);
        assert!(parts
            .iter()
            .all(|w| w.stop().duration == whole.stop().duration));
    }

    #[test]
    fn too_few_to_split_names_the_field() {
        let whole = Workload::new(Load::Closed { connections: 1 }, stop(None)).unwrap();
        let e = Shard::new(2, 2).unwrap().split(&whole).unwrap_err();
        assert_eq!(e.field(), PlanField::Connections);
        let whole = Workload::new(Load::Closed { connections: 4 }, stop(Some(1))).unwrap();
        let e = Shard::new(2, 2).unwrap().split(&whole).unwrap_err();
        assert_eq!(e.field(), PlanField::Requests);
    }

    #[test]
    fn open_loop_rates_and_stages_are_divided() {
        let whole = Workload::new(
            Load::Open {
                rate: 2000.0,
                connections: 8,
            },
            stop(None),
        )
        .unwrap();
        let part = Shard::new(2, 2).unwrap().split(&whole).unwrap();
        assert_eq!(
            part.load(),
            &Load::Open {
                rate: 1000.0,
                connections: 4
            }
        );
        let ramp = Load::Stages {
            unit: StageUnit::Rate,
            stages: vec![Stage {
                duration: Duration::from_secs(3),
                to: 900.0,
            }],
            connections: 9,
        };
        let part = Shard::new(1, 3)
            .unwrap()
            .split(&Workload::new(ramp, stop(None)).unwrap())
            .unwrap();
        let Load::Stages { stages, .. } = part.load() else {
            panic!("not stages")
        };
        assert_eq!(stages[0].to, 300.0);
    }

    #[test]
    fn phases_fill_one_generators_slots() {
        // Shard I's ticket m lands on one generator's ticket m*N + I-1.
        let n = 4;
        for s in shards(n) {
            for m in 0..5u32 {
                let count = f64::from(m) + s.phase();
                let whole_ticket = count * f64::from(n) - 0.5;
                assert_eq!(whole_ticket, f64::from(m * n + s.index() - 1));
            }
        }
        assert_eq!(Shard::WHOLE.phase(), 0.5);
    }
}
