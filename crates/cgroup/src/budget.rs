//! A budget: what a group may use, as a container runtime would set it
//! (`docker run --cpus --memory --cpuset-cpus`, Kubernetes
//! `resources.limits`). Every field is optional; an empty budget still makes
//! a group, for its counters.

use crate::error::{CgroupError, Result};

/// The CFS period: 100 ms, the kernel's and Docker's default. A quota of
/// `cpus` CPUs is `cpus × PERIOD_US` of CPU time per period.
pub const PERIOD_US: u64 = 100_000;

/// The kernel refuses quotas under 1 ms.
const MIN_QUOTA_US: u64 = 1_000;

/// What a group may use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    /// CPU quota in CPUs (0.5 = half of one CPU's time per period).
    pub cpus: Option<f64>,
    /// Hard memory limit in bytes (swap off for the group where possible).
    pub memory: Option<u64>,
    /// CPUs the group may run on, in the kernel's list syntax (`0-1,3`).
    pub cpuset: Option<String>,
}

impl Budget {
    /// Checks the values the kernel would refuse, with a reason in words.
    pub fn validate(&self) -> Result<()> {
        if let Some(c) = self.cpus {
            if !c.is_finite() || c <= 0.0 {
                return Err(CgroupError::Invalid(format!(
                    "cpus = {c}: a CPU quota must be a positive number"
                )));
            }
            if self.quota_us().unwrap_or(0) < MIN_QUOTA_US {
                return Err(CgroupError::Invalid(format!(
                    "cpus = {c}: under the kernel's minimum quota of 0.01 CPU"
                )));
            }
        }
        if let Some(m) = self.memory {
            if m < 4096 {
                return Err(CgroupError::Invalid(format!(
                    "memory = {m} bytes: a limit must be at least one page"
                )));
            }
        }
        if let Some(list) = &self.cpuset {
            parse_cpu_list(list)?;
        }
        Ok(())
    }

    /// The quota in microseconds per [`PERIOD_US`], if a CPU quota is set.
    pub fn quota_us(&self) -> Option<u64> {
        self.cpus.map(|c| (c * PERIOD_US as f64).round() as u64)
    }
}

/// The CPUs of a list such as `0-1,3`, checked: ascending ranges of
/// decimal numbers separated by commas.
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>> {
    let bad = |why: &str| CgroupError::Invalid(format!("cpuset `{list}`: {why}"));
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let lo: usize = lo.parse().map_err(|_| bad("not a CPU number"))?;
        let hi: usize = hi.parse().map_err(|_| bad("not a CPU number"))?;
        if hi < lo {
            return Err(bad("a range runs backwards"));
        }
        if hi >= 4096 {
            return Err(bad("CPU number out of range"));
        }
        cpus.extend(lo..=hi);
    }
    Ok(cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_is_cpus_times_the_period() {
        let b = Budget {
            cpus: Some(1.5),
            ..Budget::default()
        };
        assert_eq!(b.quota_us(), Some(150_000));
        b.validate().unwrap();
    }

    #[test]
    fn refuses_what_the_kernel_would() {
        for cpus in [0.0, -1.0, f64::NAN, f64::INFINITY, 0.004] {
            let b = Budget {
                cpus: Some(cpus),
                ..Budget::default()
            };
            assert!(b.validate().is_err(), "cpus = {cpus} accepted");
        }
        let b = Budget {
            memory: Some(100),
            ..Budget::default()
        };
        assert!(b.validate().is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-1,3").unwrap(), vec![0, 1, 3]);
        assert_eq!(parse_cpu_list("2").unwrap(), vec![2]);
        for bad in ["", "a", "3-1", "1,,2", "0-99999"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad} accepted");
        }
    }
}
