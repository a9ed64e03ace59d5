//! What the CPUs did, from the kernel's per-CPU counters in `/proc/stat`:
//! time busy running anything (user, nice, system, irq, softirq; guest
//! time is inside user) and time stolen by the hypervisor (steal: a
//! virtual CPU that wanted to run while the host ran someone else). The
//! verifier's CPU check and the runner's disturbance check subtract what
//! they know is theirs (a server's cgroup, the generator) to see what
//! everyone else used.

use std::ops::Sub;

/// Seconds of CPU time, summed over the CPUs read.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub busy: f64,
    pub steal: f64,
}

impl Sub for CpuTimes {
    type Output = CpuTimes;
    fn sub(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            busy: (self.busy - earlier.busy).max(0.0),
            steal: (self.steal - earlier.steal).max(0.0),
        }
    }
}

/// The counters of `cpus` so far; None where `/proc/stat` cannot be read.
pub fn read(cpus: &[usize]) -> Option<CpuTimes> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    Some(parse(&text, cpus, clock_ticks()))
}

/// Kernel clock ticks a second (`USER_HZ`), the unit of `/proc`'s CPU
/// times; 100 if it cannot be read.
pub fn clock_ticks() -> f64 {
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// The `cpuN` lines of `stat` for the CPUs in `cpus`, at `hz` ticks a second.
pub fn parse(stat: &str, cpus: &[usize], hz: f64) -> CpuTimes {
    // user nice system idle iowait irq softirq steal guest guest_nice
    const BUSY: [usize; 5] = [0, 1, 2, 5, 6];
    const STEAL: usize = 7;
    let mut ticks = (0u64, 0u64);
    for line in stat.lines() {
        let mut f = line.split_whitespace();
        let Some(n) = f
            .next()
            .and_then(|c| c.strip_prefix("cpu"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        if !cpus.contains(&n) {
            continue;
        }
        let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
        ticks.0 += BUSY.iter().filter_map(|&i| v.get(i)).sum::<u64>();
        ticks.1 += v.get(STEAL).copied().unwrap_or(0);
    }
    CpuTimes {
        busy: ticks.0 as f64 / hz,
        steal: ticks.1 as f64 / hz,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  900 0 900 9000 10 0 0 0 0 0
cpu0 100 5 200 4000 7 10 20 30 0 0
cpu1 800 0 700 5000 3 0 0 0 0 0
intr 12345
";

    #[test]
    fn busy_and_steal_of_the_given_cpus_only() {
        // cpu0: 100 + 5 + 200 + 10 + 20 busy, 30 stolen; idle and iowait left out.
        assert_eq!(
            parse(STAT, &[0], 100.0),
            CpuTimes {
                busy: 3.35,
                steal: 0.3
            }
        );
        assert_eq!(parse(STAT, &[0, 1], 100.0).busy, 3.35 + 15.0);
        assert_eq!(parse(STAT, &[2], 100.0), CpuTimes::default(), "no such CPU");
        assert_eq!(parse("cpu0 1 2\n", &[0], 100.0).busy, 0.03, "short line");
    }

    #[test]
    fn differences_never_go_negative() {
        let a = CpuTimes {
            busy: 2.0,
            steal: 1.0,
        };
        let b = CpuTimes {
            busy: 3.5,
            steal: 0.5,
        };
        assert_eq!(
            b - a,
            CpuTimes {
                busy: 1.5,
                steal: 0.0
            }
        );
    }
}
