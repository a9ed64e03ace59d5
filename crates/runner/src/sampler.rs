//! A background thread that samples a server through its meter
//! (`place::Meter`) while a load runs: RSS every 50 ms (20 Hz),
//! PSS every 100 ms (10 Hz, smaps_rollup costs more). CPU seconds are
//! counted from the moment the engine starts
//! measuring, so they match the measured request count; peaks cover warm-up
//! and load. CPU is read with nanosecond resolution (schedstat) at the start
//! and end of the measured phase. The thread is pinned to the generator's CPUs.
//!
//! When the server has a cgroup, its CPU seconds are the delta of the
//! group's own counter over the measured phase instead: exact, and counting
//! forked workers and children that exited meanwhile, which a process-tree
//! sample misses. `/proc` stays the source only where no group exists.
//! The same delta gives the time and periods the server was throttled by
//! a CPU quota. Given the CPUs to watch, it also reads their per-CPU
//! counters over the same phase ([`crate::quiet`]). A figure the meter
//! cannot give is said in [`LoadUsage::unavailable`], never counted as 0.

use crate::place::local::TreeMeter;
use crate::place::{Figure, Meter, Source};
use crate::quiet::{CpuWindow, Mark};
use shootout_cgroup::{Counters, Delta};
use shootout_engine::Control;
use shootout_servers::CgroupReader;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const PERIOD: Duration = Duration::from_millis(50);

/// What the sampler saw during one load.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadUsage {
    pub rss_peak_bytes: u64,
    pub pss_peak_bytes: Option<u64>,
    /// Server CPU seconds during the measured phase.
    pub cpu_s: f64,
    /// Whether `cpu_s` is the cgroup's counter delta (else `/proc` samples).
    pub cpu_from_cgroup: bool,
    /// Where `cpu_s` came from (None: no measured phase, or unavailable).
    pub(crate) cpu_source: Option<Source>,
    /// Why the server's CPU time or memory could not be had where it runs
    /// (then `cpu_s` or `rss_peak_bytes` is no figure, and the level fails
    /// rather than record one).
    pub unavailable: Option<String>,
    /// The cgroup's memory high-water mark over the load (v1 resets it at
    /// the start; v2's is the group's lifetime peak).
    pub cgroup_memory_peak_bytes: Option<u64>,
    /// The cgroup's counters over the measured phase (CPU, throttling,
    /// OOM kills); None without a group.
    pub cgroup: Option<Delta>,
    /// The watched CPUs' counters over the measured phase; None when no
    /// CPUs were given to watch or `/proc/stat` was unreadable.
    pub cpus: Option<CpuWindow>,
    pub samples: usize,
}

/// The CPU baseline taken when the measured phase starts.
#[derive(Debug, Clone)]
struct Base {
    cpu: Figure<f64>,
    cgroup: Option<Counters>,
    cpus: Option<Mark>,
}

/// A running sampler; [`Sampler::finish`] stops it and returns the usage.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<LoadUsage>,
}

impl Sampler {
    /// Watches process group `pgid` (tree rooted at `root`) and, when
    /// given, its cgroup, pinned to `cpus`.
    pub fn start(
        pgid: i32,
        root: i32,
        control: Arc<Control>,
        cpus: Vec<usize>,
        cgroup: Option<CgroupReader>,
    ) -> Sampler {
        let meter = Arc::new(TreeMeter { pgid, root, cgroup });
        Sampler::watching(meter, control, cpus, Vec::new())
    }

    /// Watches what `meter` reads, pinned to `cpus`, and also the counters
    /// of `watch` (the server's and the generator's CPUs) over the
    /// measured phase.
    pub(crate) fn watching(
        meter: Arc<dyn Meter>,
        control: Arc<Control>,
        cpus: Vec<usize>,
        watch: Vec<usize>,
    ) -> Sampler {
        let measuring = move || control.is_measuring();
        Sampler::start_with(meter, measuring, cpus, watch)
    }

    fn start_with(
        meter: Arc<dyn Meter>,
        measuring: impl Fn() -> bool + Send + 'static,
        cpus: Vec<usize>,
        watch: Vec<usize>,
    ) -> Sampler {
        meter.reset_peak();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let _ = shootout_engine::affinity::pin_current_thread(&cpus);
            let mut usage = LoadUsage::default();
            let mut base: Option<Base> = None;
            let mut tick = 0u64;
            loop {
                let done = flag.load(Ordering::Relaxed);
                let m = meter.memory(tick & 1 == 0 || done);
                tick += 1;
                usage.samples += 1;
                match m.rss.required("memory (RSS)") {
                    Ok(rss) => usage.rss_peak_bytes = usage.rss_peak_bytes.max(rss),
                    Err(why) => usage.unavailable = Some(why.to_string()),
                }
                if let Some(p) = m.pss {
                    usage.pss_peak_bytes = Some(usage.pss_peak_bytes.unwrap_or(0).max(p));
                }
                if done {
                    break;
                }
                // Until the measured phase starts, watch for it closely so the
                // CPU baseline is taken within a few milliseconds of it.
                let next = std::time::Instant::now() + PERIOD;
                while base.is_none() && std::time::Instant::now() < next {
                    if measuring() || flag.load(Ordering::Relaxed) {
                        base = Some(Base {
                            cpu: meter.cpu(),
                            cgroup: meter.counters(),
                            cpus: Mark::now(&watch),
                        });
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                let now = std::time::Instant::now();
                if now < next {
                    std::thread::sleep(next - now);
                }
            }
            usage.cpus = base
                .as_ref()
                .and_then(|b| b.cpus)
                .and_then(|m| m.window(&watch));
            let end = meter.cpu();
            // No measured phase: no CPU spent in it.
            let cpu = base.as_ref().map_or(
                Figure::Had {
                    value: 0.0,
                    from: Source::Procfs,
                },
                |b| end.since(&b.cpu),
            );
            match cpu {
                Figure::Had { value, from } => {
                    usage.cpu_s = value;
                    usage.cpu_from_cgroup = from == Source::Cgroup;
                    usage.cpu_source = base.is_some().then_some(from);
                }
                Figure::Unavailable(why) => {
                    usage.unavailable = Some(format!("the server's CPU time cannot be had: {why}"))
                }
            }
            let group_end = meter.counters();
            if let (Some(before), Some(after)) = (base.and_then(|b| b.cgroup), group_end) {
                let delta = after.since(&before);
                usage.cgroup_memory_peak_bytes = delta.memory_peak;
                usage.cgroup = Some(delta);
            }
            usage
        });
        Sampler { stop, handle }
    }

    /// Takes a last sample, stops the thread and returns what it saw.
    pub fn finish(self) -> LoadUsage {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs;
    use shootout_servers::{Server, Target};
    use std::path::Path;
    use std::time::Instant;

    fn fake(dir: &Path, run: &str) -> Target {
        Target::command("busy", dir, run)
    }

    /// The user + system seconds a shell's `times` printed for itself
    /// (first line, like `0m0.52s 0m0.10s`).
    fn shell_times_s(text: &str) -> f64 {
        let line = text.lines().next().unwrap_or("");
        line.split_whitespace()
            .map(|t| {
                let (m, s) = t.trim_end_matches('s').split_once('m').unwrap();
                m.parse::<f64>().unwrap() * 60.0 + s.parse::<f64>().unwrap()
            })
            .sum()
    }

    /// A worker that burns CPU, is orphaned (its parent exits at once) and
    /// exits before the load ends: init reaps it, so no process of the
    /// server's tree holds its time any more and the `/proc` sample loses
    /// it; the group's counter keeps it.
    #[test]
    fn cpu_of_an_orphaned_exited_worker_comes_from_the_cgroup() {
        let dir = std::env::temp_dir().join(format!("shootout-sampler-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let times = dir.join("worker.times");
        let _ = std::fs::remove_file(&times);
        let run = format!(
            "(sh -c 'sleep 0.3; i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; times > \"{}\"' &); exec sleep 60",
            times.display()
        );
        let port = shootout_servers::free_port().unwrap();
        let mut server = Server::start(&fake(&dir, &run), port, &dir.join("s.log")).unwrap();
        let Some(reader) = server.cgroup_reader() else {
            let why = server.cgroup_unavailable().unwrap();
            assert!(why.is_unavailable(), "cgroups usable but failed: {why}");
            shootout_testkit::machine(why);
            return;
        };
        let (pgid, pid) = (server.pgid(), server.pid());
        let meter = Arc::new(TreeMeter {
            pgid,
            root: pid as i32,
            cgroup: Some(reader),
        });
        let sampler = Sampler::start_with(meter, || true, vec![], vec![]);
        let t0 = Instant::now();
        let text = loop {
            let text = std::fs::read_to_string(&times).unwrap_or_default();
            if text.lines().count() >= 2 || t0.elapsed() > Duration::from_secs(20) {
                break text;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        // `times` is its last command: the worker exits next, leaving the
        // server's own process alone in its tree.
        shootout_testkit::wait_until(
            "the orphaned worker gone from the server's tree",
            Duration::from_secs(5),
            || {
                procfs::members(pgid, pid as i32)
                    .iter()
                    .all(|&(p, _, _)| p == pid as i32)
            },
        );
        let usage = sampler.finish();
        server.stop();
        let _ = std::fs::remove_dir_all(&dir);
        let worker = shell_times_s(&text);
        assert!(worker > 0.1, "the worker never ran: {text:?}");
        assert!(usage.cpu_from_cgroup, "{usage:?}");
        // `times` has 10 ms resolution; the rest is the shells and sleeps.
        assert!(usage.cpu_s >= worker - 0.03, "{usage:?} < {worker} s");
        assert!(usage.cpu_s < worker + 0.5, "{usage:?} vs {worker} s");
        assert!(usage.cgroup_memory_peak_bytes.unwrap_or(0) > 0, "{usage:?}");
    }
}
