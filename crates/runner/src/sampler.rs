//! A background thread that samples a server's process tree while a load
//! runs: RSS and CPU every 50 ms (20 Hz), PSS every 100 ms (10 Hz, smaps_rollup
//! costs more). CPU seconds are counted from the moment the engine starts
//! measuring, so they match the measured request count; peaks cover warm-up
//! and load. CPU is read with nanosecond resolution (schedstat) at the start
//! and end of the measured phase. The thread is pinned to the generator's CPUs.

use crate::procfs;
use shootout_engine::Control;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const PERIOD: Duration = Duration::from_millis(50);

/// What the sampler saw during one load.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadUsage {
    pub rss_peak_bytes: u64,
    pub pss_peak_bytes: Option<u64>,
    /// Server CPU seconds during the measured phase.
    pub cpu_s: f64,
    pub samples: usize,
}

/// A running sampler; [`Sampler::finish`] stops it and returns the usage.
#[derive(Debug)]
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<LoadUsage>,
}

impl Sampler {
    pub fn start(pgid: i32, root: i32, control: Arc<Control>, cpus: Vec<usize>) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let _ = shootout_engine::affinity::pin_current_thread(&cpus);
            let mut usage = LoadUsage::default();
            let mut base: Option<f64> = None;
            let mut tick = 0u64;
            loop {
                let done = flag.load(Ordering::Relaxed);
                let s = procfs::sample(pgid, root, tick & 1 == 0 || done);
                tick += 1;
                usage.samples += 1;
                usage.rss_peak_bytes = usage.rss_peak_bytes.max(s.rss_bytes);
                if let Some(p) = s.pss_bytes {
                    usage.pss_peak_bytes = Some(usage.pss_peak_bytes.unwrap_or(0).max(p));
                }
                if done {
                    break;
                }
                // Until the measured phase starts, watch for it closely so the
                // CPU baseline is taken within a few milliseconds of it.
                let next = std::time::Instant::now() + PERIOD;
                while base.is_none() && std::time::Instant::now() < next {
                    if control.is_measuring() || flag.load(Ordering::Relaxed) {
                        base = Some(procfs::cpu_seconds_precise(pgid, root));
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                let now = std::time::Instant::now();
                if now < next {
                    std::thread::sleep(next - now);
                }
            }
            let end = procfs::cpu_seconds_precise(pgid, root);
            usage.cpu_s = (end - base.unwrap_or(end)).max(0.0);
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
