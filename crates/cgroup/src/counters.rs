//! The kernel's own counters of a group, exact and inclusive of every
//! process that ever ran in it (forked workers and exited children too):
//! CPU time, CFS throttling, memory now and at peak, OOM kills. Parsing is
//! pure over each file's text, so every parser is tested on malformed input.

use crate::error::{CgroupError, Result};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// One read of a group's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// CPU time used by the group (user + system).
    pub cpu: Duration,
    /// CFS periods in which the group had runnable work under a quota.
    pub periods: u64,
    /// Periods in which the quota ran out and the group was throttled.
    pub throttled_periods: u64,
    /// Total time the group's threads spent throttled.
    pub throttled: Duration,
    /// Memory charged to the group now, in bytes.
    pub memory_current: u64,
    /// The highest memory charge, in bytes (v2 kernels before 5.19 lack
    /// `memory.peak`: `None`, sample `memory_current` instead).
    pub memory_peak: Option<u64>,
    /// Processes the kernel's OOM killer killed in the group.
    pub oom_kills: u64,
}

/// What happened between two reads (a load level), see [`Counters::since`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Delta {
    pub cpu: Duration,
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled: Duration,
    pub oom_kills: u64,
    /// The later read's peak: a high-water mark does not subtract (reset it
    /// between levels with `Group::reset_peak` where the kernel allows).
    pub memory_peak: Option<u64>,
}

impl Counters {
    /// The change from `earlier` to `self`. Counters only grow; a smaller
    /// later value (never seen from the kernel) gives 0, not a wrap.
    pub fn since(&self, earlier: &Counters) -> Delta {
        Delta {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            periods: self.periods.saturating_sub(earlier.periods),
            throttled_periods: self
                .throttled_periods
                .saturating_sub(earlier.throttled_periods),
            throttled: self.throttled.saturating_sub(earlier.throttled),
            oom_kills: self.oom_kills.saturating_sub(earlier.oom_kills),
            memory_peak: self.memory_peak,
        }
    }
}

impl Delta {
    /// CPUs used on average over `wall` (1.0 = one CPU all the time).
    pub fn cpus_over(&self, wall: Duration) -> f64 {
        if wall.is_zero() {
            return 0.0;
        }
        self.cpu.as_secs_f64() / wall.as_secs_f64()
    }
}

fn malformed(path: &Path, detail: impl Into<String>) -> CgroupError {
    CgroupError::Malformed {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// A flat-keyed file (`cpu.stat`, `memory.events`, `memory.oom_control`):
/// one `key value` per line, the value a decimal counter.
pub(crate) fn keyed(text: &str, path: &Path) -> Result<HashMap<String, u64>> {
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut f = line.split_whitespace();
        let (Some(k), Some(v), None) = (f.next(), f.next(), f.next()) else {
            return Err(malformed(path, format!("line `{line}` is not `key value`")));
        };
        let v = v
            .parse()
            .map_err(|_| malformed(path, format!("`{k}` has a non-numeric value `{v}`")))?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// The value of `key` in a flat-keyed file, which must be there.
pub(crate) fn key(map: &HashMap<String, u64>, key: &str, path: &Path) -> Result<u64> {
    map.get(key)
        .copied()
        .ok_or_else(|| malformed(path, format!("no `{key}` line")))
}

/// A single-value file (`memory.current`, `cpuacct.usage`).
pub(crate) fn single(text: &str, path: &Path) -> Result<u64> {
    let t = text.trim();
    t.parse()
        .map_err(|_| malformed(path, format!("`{t}` is not a single decimal number")))
}

/// v2's `cpu.stat`: usage and throttling in microseconds.
pub(crate) fn v2_cpu(text: &str, path: &Path, throttling: bool, c: &mut Counters) -> Result<()> {
    let m = keyed(text, path)?;
    c.cpu = Duration::from_micros(key(&m, "usage_usec", path)?);
    // Without the cpu controller the kernel writes CPU time only.
    if !throttling {
        return Ok(());
    }
    c.periods = key(&m, "nr_periods", path)?;
    c.throttled_periods = key(&m, "nr_throttled", path)?;
    c.throttled = Duration::from_micros(key(&m, "throttled_usec", path)?);
    Ok(())
}

/// v1's `cpu.stat`: throttling, with `throttled_time` in nanoseconds.
pub(crate) fn v1_cpu_stat(text: &str, path: &Path, c: &mut Counters) -> Result<()> {
    let m = keyed(text, path)?;
    c.periods = key(&m, "nr_periods", path)?;
    c.throttled_periods = key(&m, "nr_throttled", path)?;
    c.throttled = Duration::from_nanos(key(&m, "throttled_time", path)?);
    Ok(())
}

/// The OOM-kill count: v2 `memory.events` and v1 `memory.oom_control` both
/// carry an `oom_kill` line.
pub(crate) fn oom_kills(text: &str, path: &Path) -> Result<u64> {
    key(&keyed(text, path)?, "oom_kill", path)
}

#[cfg(test)]
mod tests;
