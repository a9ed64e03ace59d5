//! How load is offered ([`Load`]) and when its measured phase ends
//! ([`Stop`]), and the one place their rules are checked: a [`Workload`]
//! is a load and a stop that passed [`Workload::new`]. The CLI and the
//! study parser both build one (a study before it knows the server's port),
//! and a [`crate::Plan`] holds one, so every rule lives here once.

use crate::error::{PlanError, PlanField};
use crate::units::MAX_DURATION;
use std::time::Duration;

/// The highest arrival rate a plan may ask for (requests/s): tickets closer
/// than a nanosecond apart cannot be told apart by the clock that paces
/// them. Rates below it that one generator cannot send are allowed, but
/// said at the start ([`crate::Plan::rate_warning`]).
pub const MAX_RATE: f64 = 1e9;

/// A unit of a ramp: what a stage's `to` level counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageUnit {
    Connections,
    /// Requests per second.
    Rate,
}

/// One leg of a piecewise-linear ramp: move from the previous level to
/// `to` over `duration`. The first stage starts from 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration: Duration,
    pub to: f64,
}

/// How load is offered.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    /// `connections` connections; each sends its next request when the last answer arrives.
    Closed { connections: usize },
    /// A constant arrival rate (requests/s) spread over `connections`;
    /// latency is measured from each request's intended send time.
    Open { rate: f64, connections: usize },
    /// A piecewise-linear ramp of the connection count (closed loop, up to
    /// `connections`) or of the rate (open loop over `connections`).
    Stages {
        unit: StageUnit,
        stages: Vec<Stage>,
        connections: usize,
    },
}

impl Load {
    /// The largest number of connections this load may open.
    pub fn max_connections(&self) -> usize {
        match self {
            Load::Closed { connections }
            | Load::Open { connections, .. }
            | Load::Stages { connections, .. } => *connections,
        }
    }

    /// `"closed"`, `"open"` or `"stages"`.
    pub fn mode_name(&self) -> &'static str {
        match self {
            Load::Closed { .. } => "closed",
            Load::Open { .. } => "open",
            Load::Stages { .. } => "stages",
        }
    }

    /// True when latency is measured from intended send times.
    pub fn is_open_loop(&self) -> bool {
        matches!(
            self,
            Load::Open { .. }
                | Load::Stages {
                    unit: StageUnit::Rate,
                    ..
                }
        )
    }
}

/// When the measured phase ends: after `requests` requests in total, at the
/// `duration` deadline, whichever comes first. At least one is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stop {
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
}

/// A load and a stop rule that were checked together.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    load: Load,
    stop: Stop,
}

impl Workload {
    /// Checks every rule of a load and its stop; the error names the field.
    pub fn new(load: Load, stop: Stop) -> Result<Workload, PlanError> {
        fn bad(field: PlanField, reason: impl Into<String>) -> PlanError {
            PlanError::invalid(field, reason)
        }
        if load.max_connections() == 0 {
            return Err(bad(PlanField::Connections, "must be at least 1"));
        }
        match &load {
            Load::Closed { .. } => {}
            Load::Open { rate, .. } => {
                if !(rate.is_finite() && *rate > 0.0) {
                    return Err(bad(
                        PlanField::Rate,
                        format!("{rate} is not a positive rate"),
                    ));
                }
                if *rate > MAX_RATE {
                    return Err(bad(PlanField::Rate, beyond_clock(*rate)));
                }
            }
            Load::Stages {
                stages,
                unit,
                connections,
            } => {
                if stages.is_empty() {
                    return Err(bad(PlanField::Stages, "give at least one stage"));
                }
                for s in stages {
                    if !(s.to.is_finite() && s.to >= 0.0) {
                        return Err(bad(PlanField::Stages, format!("bad level {}", s.to)));
                    }
                    if *unit == StageUnit::Rate && s.to > MAX_RATE {
                        return Err(bad(PlanField::Stages, beyond_clock(s.to)));
                    }
                    if s.duration.is_zero() {
                        return Err(bad(PlanField::Stages, "a stage needs a duration above 0"));
                    }
                    if *unit == StageUnit::Connections && s.to > *connections as f64 {
                        return Err(bad(
                            PlanField::Stages,
                            format!("level {} exceeds {connections} connections", s.to),
                        ));
                    }
                }
                let total = stages
                    .iter()
                    .try_fold(Duration::ZERO, |t, s| t.checked_add(s.duration));
                if total.is_none_or(|t| t > MAX_DURATION) {
                    return Err(bad(
                        PlanField::Stages,
                        "the stages add up to more than the 30-day limit",
                    ));
                }
            }
        }
        if stop.duration.is_some_and(|d| d > MAX_DURATION) {
            return Err(bad(PlanField::Duration, "is longer than the 30-day limit"));
        }
        if stop.requests.is_none() && stop.duration.is_none() {
            return Err(bad(PlanField::Stop, "give a request count or a duration"));
        }
        if stop.requests == Some(0) {
            return Err(bad(PlanField::Requests, "must be at least 1"));
        }
        if stop.duration == Some(Duration::ZERO) {
            return Err(bad(PlanField::Duration, "must be more than 0"));
        }
        Ok(Workload { load, stop })
    }

    pub fn load(&self) -> &Load {
        &self.load
    }

    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// The load and stop, to change and check again with [`Workload::new`].
    pub fn into_parts(self) -> (Load, Stop) {
        (self.load, self.stop)
    }
}

/// Why a rate above [`MAX_RATE`] is refused.
fn beyond_clock(rate: f64) -> String {
    format!(
        "{rate} req/s is more than any generator can pace: its requests would be under \
         a nanosecond apart (at most {MAX_RATE} req/s)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by(n: u64) -> Stop {
        Stop {
            requests: Some(n),
            duration: None,
        }
    }

    fn field(load: Load, stop: Stop) -> PlanField {
        Workload::new(load, stop).unwrap_err().field()
    }

    #[test]
    fn a_level_may_not_outlast_the_30_day_limit() {
        // Regression (found by the study property test): each stage was
        // bounded but their sum was not, so two 720 h stages made 60 days.
        let day = Duration::from_secs(24 * 3600);
        let stage = Stage {
            duration: day * 20,
            to: 1.0,
        };
        let ramp = Load::Stages {
            unit: StageUnit::Connections,
            stages: vec![stage, stage],
            connections: 1,
        };
        assert_eq!(field(ramp, by(1)), PlanField::Stages);
        let long = Stop {
            requests: None,
            duration: Some(day * 31),
        };
        let closed = Load::Closed { connections: 1 };
        assert_eq!(field(closed, long), PlanField::Duration);
    }

    #[test]
    fn each_broken_rule_names_its_field() {
        let closed = |c| Load::Closed { connections: c };
        assert_eq!(field(closed(0), by(1)), PlanField::Connections);
        assert_eq!(field(closed(1), by(0)), PlanField::Requests);
        let none = Stop {
            requests: None,
            duration: None,
        };
        assert_eq!(field(closed(1), none), PlanField::Stop);
        let zero = Stop {
            requests: None,
            duration: Some(Duration::ZERO),
        };
        assert_eq!(field(closed(1), zero), PlanField::Duration);
        for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let open = Load::Open {
                rate,
                connections: 1,
            };
            assert_eq!(field(open, by(1)), PlanField::Rate, "{rate}");
        }
        let ramp = |unit, to: f64, secs| Load::Stages {
            unit,
            stages: vec![Stage {
                duration: Duration::from_secs(secs),
                to,
            }],
            connections: 4,
        };
        assert_eq!(
            field(ramp(StageUnit::Connections, 5.0, 1), by(1)),
            PlanField::Stages
        );
        assert_eq!(
            field(ramp(StageUnit::Rate, f64::NAN, 1), by(1)),
            PlanField::Stages
        );
        assert_eq!(
            field(ramp(StageUnit::Rate, 5.0, 0), by(1)),
            PlanField::Stages
        );
        let empty = Load::Stages {
            unit: StageUnit::Rate,
            stages: vec![],
            connections: 4,
        };
        assert_eq!(field(empty, by(1)), PlanField::Stages);
        let absurd = Load::Open {
            rate: 1e10,
            connections: 1,
        };
        assert_eq!(field(absurd, by(1)), PlanField::Rate);
        assert_eq!(
            field(ramp(StageUnit::Rate, 2e9, 1), by(1)),
            PlanField::Stages
        );
        let fast = Load::Open {
            rate: MAX_RATE,
            connections: 1,
        };
        assert!(
            Workload::new(fast, by(1)).is_ok(),
            "the limit itself is allowed"
        );
    }

    #[test]
    fn valid_workloads_keep_their_values() {
        let w = Workload::new(Load::Closed { connections: 3 }, by(9)).unwrap();
        assert_eq!(w.load().max_connections(), 3);
        assert_eq!(w.stop().requests, Some(9));
        let ramp = Load::Stages {
            unit: StageUnit::Rate,
            stages: vec![Stage {
                duration: Duration::from_secs(1),
                to: 500.0,
            }],
            connections: 4,
        };
        assert!(
            Workload::new(ramp, by(1)).is_ok(),
            "a rate ramp may exceed the connections"
        );
    }
}
