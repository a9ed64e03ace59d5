//! Whether a measurement was taken on quiet CPUs. The kernel's per-CPU
//! counters (`shootout_servers::cpustat`) say how busy the server's and the
//! generator's CPUs were during the measured phase; what we know is ours
//! (the server's cgroup or tree, the generator process, PostgreSQL's tree)
//! is subtracted, and the rest is what other processes took. Together with
//! the steal time of a virtual machine it decides whether the measurement
//! was `disturbed` (docs/columns.md, "disturbed", says why these limits).

use shootout_servers::cpustat::{self, CpuTimes};
use std::time::{Duration, Instant};

pub use shootout_store::{OTHERS_CPU_LIMIT, STEAL_LIMIT};

/// The per-CPU counters of the watched CPUs over a measured phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuWindow {
    /// Busy and steal seconds summed over the watched CPUs.
    pub times: CpuTimes,
    pub wall_s: f64,
    /// How many CPUs were watched.
    pub cpus: usize,
}

/// A reading taken at the start of a window.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    at: Instant,
    times: CpuTimes,
}

impl Mark {
    /// Reads `cpus` now; None where `/proc/stat` is not readable or no CPU is given.
    pub fn now(cpus: &[usize]) -> Option<Mark> {
        if cpus.is_empty() {
            return None;
        }
        cpustat::read(cpus).map(|times| Mark {
            at: Instant::now(),
            times,
        })
    }

    /// The window from this mark to now.
    pub fn window(&self, cpus: &[usize]) -> Option<CpuWindow> {
        let end = cpustat::read(cpus)?;
        Some(CpuWindow {
            times: end - self.times,
            wall_s: self.at.elapsed().as_secs_f64(),
            cpus: cpus.len(),
        })
    }
}

/// What the other processes and the hypervisor took of a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Disturbance {
    pub others_cpu_share: f64,
    pub steal_share: f64,
}

impl Disturbance {
    /// `ours_s`: CPU seconds of everything we ran on the watched CPUs
    /// (server, generator, database) during the window.
    pub fn of(w: &CpuWindow, ours_s: f64) -> Option<Disturbance> {
        let capacity = w.wall_s * w.cpus as f64;
        if capacity <= 0.0 {
            return None;
        }
        Some(Disturbance {
            others_cpu_share: ((w.times.busy - ours_s) / capacity).clamp(0.0, 1.0),
            steal_share: (w.times.steal / capacity).clamp(0.0, 1.0),
        })
    }

    /// Whether either share is over its limit.
    pub fn disturbed(&self) -> bool {
        self.others_cpu_share > OTHERS_CPU_LIMIT || self.steal_share > STEAL_LIMIT
    }
}

/// The disturbance of a measured phase: the server sampler's `window` less
/// our own CPU seconds over the same phase (the server's, the generator's
/// and, for database scenarios, PostgreSQL's). None without a window.
pub fn assess(window: Option<&CpuWindow>, ours: Ours) -> Option<Disturbance> {
    let sum = ours.server_s + ours.generator_s + ours.database_s.unwrap_or(0.0);
    Disturbance::of(window?, sum)
}

/// The CPU seconds of our own processes over a measured phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ours {
    pub server_s: f64,
    pub generator_s: f64,
    pub database_s: Option<f64>,
}

/// The server's and the generator's CPUs, each once, in order.
pub fn watched_cpus(server: &[usize], generator: &[usize]) -> Vec<usize> {
    let mut all: Vec<usize> = server.iter().chain(generator).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// How disturbed `cpus` are over `probe` with nothing of ours running on
/// them (the shootout process idles while it waits).
pub fn probe(cpus: &[usize], probe: Duration) -> Option<Disturbance> {
    let mark = Mark::now(cpus)?;
    std::thread::sleep(probe);
    Disturbance::of(&mark.window(cpus)?, 0.0)
}

/// How long one `--wait-quiet` probe watches the CPUs.
pub const PROBE: Duration = Duration::from_secs(1);

/// How a wait for quiet CPUs ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waited {
    /// A probe saw them quiet after `waited_s` (0 when the first did).
    Quiet { waited_s: f64 },
    /// Still disturbed when the cap ran out.
    Capped { waited_s: f64 },
    /// The counters cannot be read here, or the wait was interrupted.
    Unknown,
}

/// Probes `cpus` for [`PROBE`] at a time until one probe is not
/// disturbed, for at most `cap`; `busy` hears of each disturbed probe and
/// `stopped` ends the wait early (Ctrl-C).
pub fn wait_quiet(
    cpus: &[usize],
    cap: Duration,
    stopped: &dyn Fn() -> bool,
    busy: &mut dyn FnMut(&Disturbance, f64),
) -> Waited {
    let start = Instant::now();
    loop {
        if stopped() {
            return Waited::Unknown;
        }
        let Some(seen) = probe(cpus, PROBE) else {
            return Waited::Unknown;
        };
        let waited_s = start.elapsed().as_secs_f64();
        if !seen.disturbed() {
            // The probe that found them quiet is not waiting.
            return Waited::Quiet {
                waited_s: (waited_s - PROBE.as_secs_f64()).max(0.0),
            };
        }
        if start.elapsed() >= cap {
            return Waited::Capped { waited_s };
        }
        busy(&seen, waited_s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(busy: f64, steal: f64) -> CpuWindow {
        CpuWindow {
            times: CpuTimes { busy, steal },
            wall_s: 4.0,
            cpus: 2,
        }
    }

    #[test]
    fn others_are_the_busy_time_we_cannot_account_for() {
        // 8 CPU-seconds of capacity; 5 busy, 4.2 of them ours.
        let d = Disturbance::of(&window(5.0, 0.0), 4.2).unwrap();
        assert!((d.others_cpu_share - 0.1).abs() < 1e-12, "{d:?}");
        assert!(!d.disturbed(), "exactly at the limit is not over it");
        let d = Disturbance::of(&window(5.0, 0.0), 4.1).unwrap();
        assert!(d.disturbed(), "{d:?}");
        // Ours counted by a finer clock than the kernel's ticks: never negative.
        let d = Disturbance::of(&window(1.0, 0.0), 1.3).unwrap();
        assert_eq!(d.others_cpu_share, 0.0);
    }

    #[test]
    fn steal_alone_disturbs() {
        let d = Disturbance::of(&window(1.0, 0.48), 1.0).unwrap();
        assert_eq!(d.others_cpu_share, 0.0);
        assert!((d.steal_share - 0.06).abs() < 1e-12, "{d:?}");
        assert!(d.disturbed());
        let d = Disturbance::of(&window(1.0, 0.4), 1.0).unwrap();
        assert!(!d.disturbed(), "{d:?}");
    }

    #[test]
    fn an_empty_window_says_nothing() {
        let mut w = window(1.0, 0.0);
        w.wall_s = 0.0;
        assert_eq!(Disturbance::of(&w, 0.0), None);
        assert!(Mark::now(&[]).is_none());
    }

    #[test]
    fn ours_is_the_server_the_generator_and_the_database() {
        let w = window(6.0, 0.0);
        let ours = |database_s| Ours {
            server_s: 3.0,
            generator_s: 1.2,
            database_s,
        };
        let d = assess(Some(&w), ours(Some(1.0))).unwrap();
        assert!((d.others_cpu_share - 0.1).abs() < 1e-12, "{d:?}");
        let d = assess(Some(&w), ours(None)).unwrap();
        assert!((d.others_cpu_share - 0.225).abs() < 1e-12, "{d:?}");
        assert_eq!(assess(None, ours(None)), None);
    }

    #[test]
    fn watched_cpus_are_the_union() {
        assert_eq!(watched_cpus(&[1, 0], &[1, 2]), vec![0, 1, 2]);
    }
}
